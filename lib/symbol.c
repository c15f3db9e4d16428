// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbolization with libdwfl, the way eu-stack does it for cores:
 * dwfl_core_file_report finds the executable and shared libraries at their
 * load addresses (build-id lookup, separate debuginfo through the standard
 * paths or --debuginfo-path); a module whose file is not found still has its
 * NT_FILE name, load address and build-id.  Lookups are cached: a trace
 * repeats addresses.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

struct cache_ent {
	uint64_t addr;
	bool used;
	struct btsdec_loc loc;
};

struct name_pool {
	struct name_pool *next;
	char name[];
};

struct btsdec_sym {
	Dwfl *dwfl;
	struct name_pool *names;	/* synthesized names ("abort@plt") */
	struct btsdec_core *core;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct cache_ent *cache;
	size_t cache_cap, cache_used;
};

#define CACHE_MIN	1024

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

int btsdec_sym_open_core(struct btsdec_core *core,
			 const struct btsdec_symopts *opts,
			 struct btsdec_sym **out, struct btsdec_err *err)
{
	struct btsdec_sym *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	s->core = core;
	if (opts->debuginfo_path &&
	    !(s->debuginfo_path = strdup(opts->debuginfo_path))) {
		ret = btsdec_fail(err, -ENOMEM, "out of memory");
		goto err_free;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl) {
		ret = btsdec_fail(err, -ENOMEM, "dwfl_begin: %s", dwfl_errmsg(-1));
		goto err_free;
	}
	dwfl_report_begin(s->dwfl);
	if (dwfl_core_file_report(s->dwfl, btsdec_core_elf(core),
				  opts->executable) < 0) {
		ret = btsdec_fail(err, -EIO, "dwfl_core_file_report: %s",
				  dwfl_errmsg(-1));
		goto err_free;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	s->cache_cap = CACHE_MIN;
	s->cache = calloc(s->cache_cap, sizeof(*s->cache));
	if (!s->cache) {
		ret = btsdec_fail(err, -ENOMEM, "out of memory");
		goto err_free;
	}
	*out = s;
	return 0;
err_free:
	btsdec_sym_close(s);
	return ret;
}

void btsdec_sym_close(struct btsdec_sym *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	while (s->names) {
		struct name_pool *n = s->names->next;

		free(s->names);
		s->names = n;
	}
	free(s->cache);
	free(s->debuginfo_path);
	free(s);
}

static const char *pool_name(struct btsdec_sym *s, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	struct name_pool *n = malloc(sizeof(*n) + la + lb + 1);

	if (!n)
		return NULL;
	memcpy(n->name, a, la);
	memcpy(n->name + la, b, lb + 1);
	n->next = s->names;
	s->names = n;
	return n->name;
}

struct plt_scns {
	GElf_Shdr plt, plt_sec, rela;
	Elf_Scn *rela_scn;
};

static void find_plt(Elf *e, struct plt_scns *p)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	memset(p, 0, sizeof(*p));
	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".plt"))
			p->plt = sh;
		else if (!strcmp(name, ".plt.sec"))
			p->plt_sec = sh;
		else if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA) {
			p->rela = sh;
			p->rela_scn = scn;
		}
	}
}

static bool in_scn(const GElf_Shdr *sh, uint64_t a)
{
	return sh->sh_size && a >= sh->sh_addr && a - sh->sh_addr < sh->sh_size;
}

/* Names a lazy-binding PLT entry "func@plt" as gdb does: entry n of .plt
 * (after the resolver stub) or of .plt.sec jumps through .rela.plt[n]. */
static const char *plt_name(struct btsdec_sym *s, Dwfl_Module *m,
			    uint64_t addr, uint64_t *off)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m, &bias);
	struct plt_scns p;
	Elf_Data *data, *syms;
	GElf_Shdr symsh;
	GElf_Rela rela;
	GElf_Sym sym;
	const char *name;
	uint64_t rel, idx;

	if (!e)
		return NULL;
	find_plt(e, &p);
	rel = addr - bias;
	if (!p.rela_scn)
		return NULL;
	if (in_scn(&p.plt_sec, rel))
		idx = (rel - p.plt_sec.sh_addr) / 16;
	else if (in_scn(&p.plt, rel) && rel - p.plt.sh_addr >= 16 && !p.plt_sec.sh_size)
		idx = (rel - p.plt.sh_addr) / 16 - 1;
	else
		return NULL;
	*off = rel % 16;
	data = elf_getdata(p.rela_scn, NULL);
	if (!data || !gelf_getrela(data, idx, &rela) ||
	    !gelf_getshdr(elf_getscn(e, p.rela.sh_link), &symsh) ||
	    !(syms = elf_getdata(elf_getscn(e, p.rela.sh_link), NULL)) ||
	    !gelf_getsym(syms, GELF_R_SYM(rela.r_info), &sym) ||
	    !(name = elf_strptr(e, symsh.sh_link, sym.st_name)) || !*name)
		return NULL;
	return pool_name(s, name, "@plt");
}

/* The build-id of a module whose file was not found, as hex ("" when
 * unknown: the core lacks the page holding it); kept in the module's
 * userdata. */
static const char *missing_build_id(struct btsdec_sym *s, Dwfl_Module *m,
				    void **userdata)
{
	const unsigned char *bits;
	char hex[2 * 64 + 1] = "";
	GElf_Addr vaddr;
	int n;

	if (*userdata)
		return *userdata;
	n = dwfl_module_build_id(m, &bits, &vaddr);
	for (int i = 0; i < n && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	*userdata = (void *)pool_name(s, hex, "");
	return *userdata ? *userdata : "";
}

static void resolve(struct btsdec_sym *s, uint64_t addr, struct btsdec_loc *loc)
{
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
	const char *name, *src;
	void **userdata;
	Dwarf_Addr start;
	GElf_Addr bias;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *l;
	int line = 0;

	memset(loc, 0, sizeof(*loc));
	if (!m)
		return;
	loc->path = dwfl_module_info(m, &userdata, &start, NULL, NULL, NULL, NULL, NULL);
	loc->module = base_name(loc->path);
	loc->mod_off = addr - start;
	if (!dwfl_module_getelf(m, &bias)) {
		loc->missing = missing_build_id(s, m, userdata);
		return;
	}
	name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	if (!name || !*name)
		name = plt_name(s, m, addr, &off);
	if (name) {
		loc->func = name;
		loc->off = off;
	}
	l = dwfl_module_getsrc(m, addr);
	src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (src) {
		loc->file = base_name(src);
		loc->line = line;
	}
}

static size_t slot_of(uint64_t addr, size_t cap)
{
	addr ^= addr >> 29;
	addr *= 0xbf58476d1ce4e5b9ULL;
	addr ^= addr >> 32;
	return addr & (cap - 1);
}

static void cache_grow(struct btsdec_sym *s)
{
	size_t cap = s->cache_cap * 2;
	struct cache_ent *n = calloc(cap, sizeof(*n));

	if (!n)
		return;		/* keep the old table; lookups still work */
	for (size_t i = 0; i < s->cache_cap; i++) {
		size_t j;

		if (!s->cache[i].used)
			continue;
		for (j = slot_of(s->cache[i].addr, cap); n[j].used;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = s->cache[i];
	}
	free(s->cache);
	s->cache = n;
	s->cache_cap = cap;
}

void btsdec_sym_lookup(struct btsdec_sym *s, uint64_t addr,
		       struct btsdec_loc *loc)
{
	size_t i;

	if (s->cache_used * 2 >= s->cache_cap)
		cache_grow(s);
	for (i = slot_of(addr, s->cache_cap); s->cache[i].used;
	     i = (i + 1) & (s->cache_cap - 1)) {
		if (s->cache[i].addr == addr) {
			*loc = s->cache[i].loc;
			return;
		}
	}
	resolve(s, addr, loc);
	if (s->cache_used * 2 < s->cache_cap) {
		s->cache[i] = (struct cache_ent){ .addr = addr, .used = true,
						  .loc = *loc };
		s->cache_used++;
	}
}

static size_t read_module(Dwfl_Module *m, uint64_t addr, uint8_t *buf,
			  size_t len)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m, &bias);
	size_t nph, i, fsize;
	const char *raw;
	GElf_Phdr ph;

	if (!e || elf_getphdrnum(e, &nph) || !(raw = elf_rawfile(e, &fsize)))
		return 0;
	addr -= bias;
	for (i = 0; i < nph; i++) {
		uint64_t rel;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		rel = addr - ph.p_vaddr;
		if (ph.p_offset > fsize || rel >= fsize - ph.p_offset)
			return 0;
		if (len > ph.p_filesz - rel)
			len = ph.p_filesz - rel;
		if (len > fsize - ph.p_offset - rel)
			len = fsize - ph.p_offset - rel;
		memcpy(buf, raw + ph.p_offset + rel, len);
		return len;
	}
	return 0;
}

size_t btsdec_sym_read_code(struct btsdec_sym *s, uint64_t addr, uint8_t *buf,
			    size_t len)
{
	Dwfl_Module *m;
	size_t n = btsdec_core_read(s->core, addr, buf, len);

	if (n)
		return n;
	m = dwfl_addrmodule(s->dwfl, addr);
	return m ? read_module(m, addr, buf, len) : 0;
}

bool btsdec_sym_mapped(struct btsdec_sym *s, uint64_t addr)
{
	return btsdec_core_mapped(s->core, addr) || dwfl_addrmodule(s->dwfl, addr);
}

const char *btsdec_loc_format(const struct btsdec_loc *loc, uint64_t addr,
			      char *buf, size_t len)
{
	if (!loc || !loc->func)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (loc->off)
		snprintf(buf, len, "%s+0x%llx", loc->func,
			 (unsigned long long)loc->off);
	else
		snprintf(buf, len, "%s", loc->func);
	return buf;
}
