// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbolization with libdwfl, the way eu-stack does it for cores:
 * dwfl_core_file_report finds the executable and shared libraries at their
 * load addresses (build-id lookup, separate debuginfo through the standard
 * paths or --debuginfo-path); a module whose file is not found still has its
 * NT_FILE name, load address and build-id.  Lookups are cached: a trace
 * repeats addresses.  Function names come from a sorted index of each
 * module's symbol table, read once on the module's first lookup and
 * binary-searched (libdwfl's dwfl_module_addrinfo scans the whole table on
 * every call), with elfutils' choice rules; addresses no sized symbol
 * covers (PLT entries, assembly labels) still go to dwfl_module_addrinfo.
 * A caller holding descriptors of the files the process mapped (btsdumpd)
 * has a module's file taken from the one whose build-id is the module's.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#ifdef BTSDEC_DEMANGLE
#include <libiberty/demangle.h>
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrindex.h"
#include "btsdec.h"

/* The lookup cache: entries packed in the order they were resolved, found
 * through a table of 4-byte slots (entry index + 1; 0 = free) kept at most
 * half full: about 80 bytes a distinct address in all. */
struct cache_ent {
	uint64_t addr;
	struct btsdec_loc loc;
};
_Static_assert(offsetof(struct cache_ent, addr) == 0, "addr_index_build(): address first");

struct name_pool {
	struct name_pool *next;
	char name[];
};

/* A sized symbol of a module, at its load address. */
struct sym_ent {
	uint64_t start, end;	/* [start, end) */
	uint64_t max_end;	/* the largest end of this and every earlier entry */
	const char *name;	/* in libdwfl's string table */
	uint32_t rank;		/* binding: global 3, weak 2, local 1 */
	uint32_t order;		/* symbol table index */
};

/* Entries by start; libdwfl searches the global part of the table first
 * and the locals only when it found nothing there, hence two tables. */
struct sym_table {
	size_t nr;
	struct sym_ent *ent;
};

struct sym_index {
	struct sym_index *next;
	Dwfl_Module *mod;
	struct sym_table glob, loc;
	size_t nr_labels;
	uint64_t *labels;	/* sorted addresses of global sizeless symbols */
};

/* A descriptor the caller gave (btsdec_symopts.elf_fds) and its file's
 * GNU build-id, read on the first module lookup (len -1: none). */
struct elf_fd {
	int fd;
	int len;
	unsigned char *id;
};

/* Every module's userdata: the symbolizer, for find_elf, and the
 * build-id of a module whose file was not found. */
struct mod_data {
	struct mod_data *next;
	struct btsdec_sym *s;
	const char *build_id;	/* module_build_id's hex, once asked */
};

struct btsdec_sym {
	Dwfl *dwfl;
	struct mod_data *mods;
	struct elf_fd *fds;
	size_t nr_fds;
	bool fds_read;
	struct sym_index *indexes;	/* one per module looked up so far */
	struct name_pool *names;	/* synthesized names ("abort@plt") */
	struct btsdec_core *core;
	uint64_t slide;			/* a kernel's KASLR offset: run-time
					 * addresses minus slide are vmlinux's */
	char *debuginfo_path;
	bool no_demangle;		/* btsdec_symopts.no_demangle */
	Dwfl_Callbacks cb;
	struct cache_ent *cache;	/* packed */
	size_t cache_used, cache_room;
	uint32_t *slots;
	size_t cache_cap;		/* slots, a power of two */
};

#define CACHE_MIN	1024

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

/* ---- files by descriptor ------------------------------------------------- */

/* Reads the GNU build-id of every descriptor once. */
static void fds_read(struct btsdec_sym *s)
{
	for (size_t i = 0; i < s->nr_fds && !s->fds_read; i++) {
		struct elf_fd *f = &s->fds[i];
		Elf *e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
		const void *id;
		ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;

		if (n > 0 && (f->id = malloc((size_t)n))) {
			memcpy(f->id, id, (size_t)n);
			f->len = (int)n;
		}
		if (e)
			elf_end(e);
	}
	s->fds_read = true;
}

/* libdwfl's find_elf: a copy of the descriptor whose build-id is the
 * module's in the core (none without one: nothing to check it against),
 * else libdwfl's own search (build-id paths, the executable, the name). */
static int find_elf(Dwfl_Module *m, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct mod_data *d = *userdata;
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = d && d->s->nr_fds ? dwfl_module_build_id(m, &id, &vaddr) : 0;

	if (n > 0 && !d->s->fds_read)
		fds_read(d->s);
	for (size_t i = 0; n > 0 && i < d->s->nr_fds; i++) {
		const struct elf_fd *f = &d->s->fds[i];
		int fd;

		if (f->len != n || memcmp(f->id, id, (size_t)n))
			continue;
		fd = dup(f->fd);
		*file_name = fd < 0 ? NULL : strdup(modname);
		if (*file_name)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return dwfl_build_id_find_elf(m, userdata, modname, base, file_name, elfp);
}

/* A symbolizer with its libdwfl session begun and its cache, no module yet. */
static int sym_new(const struct btsdec_symopts *opts, struct btsdec_sym **out,
		   struct btsdec_err *err)
{
	struct btsdec_sym *s = calloc(1, sizeof(*s));

	if (!s)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	*out = s;
	s->no_demangle = opts && opts->no_demangle;
	if (opts && opts->debuginfo_path &&
	    !(s->debuginfo_path = strdup(opts->debuginfo_path)))
		return btsdec_fail(err, -ENOMEM, "out of memory");
	if (opts && opts->nr_elf_fds) {
		s->fds = calloc(opts->nr_elf_fds, sizeof(*s->fds));
		if (!s->fds)
			return btsdec_fail(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < opts->nr_elf_fds; i++)
			s->fds[i] = (struct elf_fd){ .fd = opts->elf_fds[i], .len = -1 };
		s->nr_fds = opts->nr_elf_fds;
	}
	s->cb.find_elf = find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl)
		return btsdec_fail(err, -ENOMEM, "dwfl_begin: %s", dwfl_errmsg(-1));
	s->cache_cap = CACHE_MIN;
	s->slots = calloc(s->cache_cap, sizeof(*s->slots));
	if (!s->slots)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	dwfl_report_begin(s->dwfl);
	return 0;
}

static int attach_module(Dwfl_Module *m, void **userdata, const char *name,
			 Dwarf_Addr start, void *arg)
{
	struct btsdec_sym *s = arg;
	struct mod_data *d = calloc(1, sizeof(*d));

	(void)m, (void)name, (void)start;
	if (!d)
		return DWARF_CB_ABORT;
	*d = (struct mod_data){ .next = s->mods, .s = s };
	s->mods = d;
	*userdata = d;
	return DWARF_CB_OK;
}

/* Ends sym_new's reporting: the symbolizer to *out, or closed on ret. */
static int sym_done(struct btsdec_sym *s, int ret, struct btsdec_sym **out,
		    struct btsdec_err *err)
{
	if (!ret && (dwfl_report_end(s->dwfl, NULL, NULL) ||
		     dwfl_getmodules(s->dwfl, attach_module, s, 0) != 0))
		ret = btsdec_fail(err, -ENOMEM, "out of memory");
	if (ret) {
		btsdec_sym_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

int btsdec_sym_open_core(struct btsdec_core *core,
			 const struct btsdec_symopts *opts,
			 struct btsdec_sym **out, struct btsdec_err *err)
{
	struct btsdec_sym *s = NULL;
	int ret = sym_new(opts, &s, err);

	if (!ret) {
		s->core = core;
		if (dwfl_core_file_report(s->dwfl, btsdec_core_elf(core),
					  opts->executable) < 0)
			ret = btsdec_fail(err, -EIO, "dwfl_core_file_report: %s",
					  dwfl_errmsg(-1));
	}
	return sym_done(s, ret, out, err);
}

int btsdec_sym_open_kernel(const char *vmlinux, uint64_t kaslr,
			   const struct btsdec_symopts *opts,
			   struct btsdec_sym **out, struct btsdec_err *err)
{
	struct btsdec_sym *s = NULL;
	int ret = sym_new(opts, &s, err);

	/* an ET_EXEC vmlinux stays at its link address in libdwfl (which
	 * ignores a base for ET_EXEC): addresses are slid back by KASLR's
	 * offset on the way in.  Its code is read from the file (.text is
	 * never changed at run time but for alternatives and static keys,
	 * which patch in place instructions of the same length and kind) */
	if (!ret) {
		s->slide = kaslr;
		if (!dwfl_report_elf(s->dwfl, "vmlinux", vmlinux, -1, 0, false))
			ret = btsdec_fail(err, -ENOEXEC, "%s: %s", vmlinux, dwfl_errmsg(-1));
	}
	return sym_done(s, ret, out, err);
}

void btsdec_sym_close(struct btsdec_sym *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	while (s->mods) {
		struct mod_data *d = s->mods->next;

		free(s->mods);
		s->mods = d;
	}
	for (size_t i = 0; i < s->nr_fds; i++)
		free(s->fds[i].id);
	free(s->fds);
	while (s->names) {
		struct name_pool *n = s->names->next;

		free(s->names);
		s->names = n;
	}
	while (s->indexes) {
		struct sym_index *x = s->indexes->next;

		free(s->indexes->glob.ent);
		free(s->indexes->loc.ent);
		free(s->indexes->labels);
		free(s->indexes);
		s->indexes = x;
	}
	free(s->cache);
	free(s->slots);
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

/* The build-id of a module as hex ("" when unknown: no file, and the
 * core lacks the page holding it); kept in the module's userdata. */
static const char *module_build_id(struct btsdec_sym *s, Dwfl_Module *m,
				   struct mod_data *d)
{
	const unsigned char *bits;
	char hex[2 * 64 + 1] = "";
	GElf_Addr vaddr;
	const char *p;
	int n;

	if (d && d->build_id)
		return d->build_id;
	n = dwfl_module_build_id(m, &bits, &vaddr);
	for (int i = 0; i < n && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	p = pool_name(s, hex, "");
	if (d)
		d->build_id = p;
	return p ? p : "";
}

struct Dwfl *btsdec_sym_dwfl(struct btsdec_sym *sym)
{
	return sym->dwfl;
}

const char *btsdec_sym_build_id(struct btsdec_sym *s, uint64_t addr)
{
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr - s->slide);
	void **userdata;

	if (!m)
		return NULL;
	dwfl_module_info(m, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return module_build_id(s, m, *userdata);
}

/* A C++ or Rust name as people read it ("ns::f(int)", libiberty's
 * cplus_demangle: Itanium C++, Rust legacy and v0), pooled; name itself
 * when it is not mangled, cannot be demangled, or s->no_demangle. */
static const char *demangled(struct btsdec_sym *s, const char *name)
{
#ifdef BTSDEC_DEMANGLE
	const char *p = name;
	char *d;

	if (s->no_demangle || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (d)
		p = pool_name(s, d, "");
	free(d);
	return p ? p : name;
#else
	return name;
#endif
}

/* ---- the sorted symbol index ------------------------------------------------ */

static uint32_t bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:	return 3;
	case STB_WEAK:		return 2;
	case STB_LOCAL:		return 1;
	default:		return 0;
	}
}

static int ent_cmp(const void *a, const void *b)
{
	const struct sym_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The symbols dwfl_module_addrinfo considers: named, defined, not a
 * section, file or TLS symbol. */
static bool candidate(const char *name, const GElf_Sym *sym)
{
	int t = GELF_ST_TYPE(sym->st_info);

	return name && *name && sym->st_shndx != SHN_UNDEF &&
	       t != STT_SECTION && t != STT_FILE && t != STT_TLS;
}

static void table_finish(struct sym_table *t)
{
	uint64_t max_end = 0;

	qsort(t->ent, t->nr, sizeof(*t->ent), ent_cmp);
	for (size_t i = 0; i < t->nr; i++) {
		if (t->ent[i].end > max_end)
			max_end = t->ent[i].end;
		t->ent[i].max_end = max_end;
	}
}

static struct sym_index *index_build(Dwfl_Module *m)
{
	struct sym_index *x = calloc(1, sizeof(*x));
	int n = dwfl_module_getsymtab(m), first_global;

	first_global = dwfl_module_getsymtab_first_global(m);
	if (!x || n < 1 || first_global < 0)
		return x;	/* no symbols: every lookup falls back */
	x->mod = m;
	x->glob.ent = calloc((size_t)n, sizeof(*x->glob.ent));
	x->loc.ent = calloc((size_t)n, sizeof(*x->loc.ent));
	x->labels = calloc((size_t)n, sizeof(*x->labels));
	if (!x->glob.ent || !x->loc.ent || !x->labels) {
		free(x->glob.ent);
		free(x->loc.ent);
		free(x->labels);
		free(x);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		bool global = i >= first_global;
		struct sym_table *t = global ? &x->glob : &x->loc;
		GElf_Sym sym;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(m, i, &sym, &a, NULL, NULL, NULL);

		if (!candidate(name, &sym))
			continue;
		if (!sym.st_size && global)
			x->labels[x->nr_labels++] = a;
		else if (sym.st_size)
			t->ent[t->nr++] = (struct sym_ent){
				.start = a, .end = a + sym.st_size, .name = name,
				.rank = bind_rank(&sym), .order = (uint32_t)i };
	}
	table_finish(&x->glob);
	table_finish(&x->loc);
	qsort(x->labels, x->nr_labels, sizeof(*x->labels), u64_cmp);
	return x;
}

static struct sym_index *index_of(struct btsdec_sym *s, Dwfl_Module *m)
{
	struct sym_index *x;

	for (x = s->indexes; x; x = x->next)
		if (x->mod == m)
			return x;
	x = index_build(m);
	if (x) {
		x->mod = m;
		x->next = s->indexes;
		s->indexes = x;
	}
	return x;
}

#define MAX_NESTED	16	/* symbols holding one address; more: fall back */

/* The sized symbol of t holding addr that libdwfl's scan would keep:
 * in table order, a candidate replaces the kept one when it starts later
 * or binds better.  *many: too many candidates to say (ask libdwfl). */
static const struct sym_ent *table_find(const struct sym_table *t, uint64_t addr,
					bool *many)
{
	const struct sym_ent *c[MAX_NESTED], *best = NULL;
	size_t lo = 0, hi = t->nr, n = 0;

	while (lo < hi) {	/* hi: the first entry starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->ent[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (hi-- > 0 && t->ent[hi].max_end > addr) {
		if (addr >= t->ent[hi].end)
			continue;
		if (n == MAX_NESTED) {
			*many = true;
			return NULL;
		}
		c[n++] = &t->ent[hi];
	}
	for (size_t i = 0; i < n; i++) {	/* in table order */
		const struct sym_ent *e = NULL;

		for (size_t j = 0; j < n; j++)
			if (c[j] && (!e || c[j]->order < e->order))
				e = c[j];
		for (size_t j = 0; j < n; j++)
			if (c[j] == e)
				c[j] = NULL;
		if (!best || best->start < e->start || best->rank < e->rank)
			best = e;
	}
	return best;
}

static bool is_label(const struct sym_index *x, uint64_t addr)
{
	return x->nr_labels && bsearch(&addr, x->labels, x->nr_labels,
				       sizeof(*x->labels), u64_cmp);
}

const char *btsdec_sym_addrsym(struct btsdec_sym *s, uint64_t addr, uint64_t *off)
{
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
	struct sym_index *x = m ? index_of(s, m) : NULL;
	const struct sym_ent *e = NULL;
	bool many = false;
	GElf_Off o = 0;
	GElf_Sym sym;
	const char *name;

	if (x && x->glob.ent) {
		e = table_find(&x->glob, addr, &many);
		if (!e && !many && !is_label(x, addr))
			e = table_find(&x->loc, addr, &many);
	}
	if (e) {
		*off = addr - e->start;
		return e->name;
	}
	if (!m)
		return NULL;
	/* no sized symbol: sizeless labels, by libdwfl's own rules */
	name = dwfl_module_addrinfo(m, addr, &o, &sym, NULL, NULL, NULL);
	*off = o;
	return name;
}

static void resolve(struct btsdec_sym *s, uint64_t addr, struct btsdec_loc *loc)
{
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
	const char *name, *src;
	void **userdata;
	Dwarf_Addr start;
	GElf_Addr bias;
	uint64_t off = 0;
	Dwfl_Line *l;
	int line = 0;

	memset(loc, 0, sizeof(*loc));
	if (!m)
		return;
	loc->path = dwfl_module_info(m, &userdata, &start, NULL, NULL, NULL, NULL, NULL);
	loc->module = base_name(loc->path);
	loc->mod_off = addr - start;
	if (!dwfl_module_getelf(m, &bias)) {
		loc->missing = module_build_id(s, m, *userdata);
		return;
	}
	name = btsdec_sym_addrsym(s, addr, &off);
	if (!name || !*name)
		name = plt_name(s, m, addr, &off);
	if (name) {
		loc->func = demangled(s, name);
		loc->off = off;
	}
	l = dwfl_module_getsrc(m, addr);
	src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (src) {
		loc->file = base_name(src);
		loc->line = line;
	}
}

static void cache_grow(struct btsdec_sym *s)
{
	size_t cap = s->cache_cap * 2;
	uint32_t *n = addr_index_build(s->cache, s->cache_used, sizeof(*s->cache), cap);

	if (!n)
		return;		/* keep the old table; lookups still work */
	free(s->slots);
	s->slots = n;
	s->cache_cap = cap;
}

/* Keeps addr's location in the cache, if there is room (else the next
 * lookup resolves it again). */
static void cache_add(struct btsdec_sym *s, size_t slot, uint64_t addr,
		      const struct btsdec_loc *loc)
{
	if (s->cache_used * 2 >= s->cache_cap || s->cache_used >= UINT32_MAX - 1)
		return;
	if (btsdec_grow(&s->cache, &s->cache_room, s->cache_used + 1))
		return;
	s->cache[s->cache_used] = (struct cache_ent){ .addr = addr, .loc = *loc };
	s->slots[slot] = (uint32_t)++s->cache_used;
}

void btsdec_sym_lookup(struct btsdec_sym *s, uint64_t addr,
		       struct btsdec_loc *loc)
{
	size_t i;

	if (s->cache_used * 2 >= s->cache_cap)
		cache_grow(s);
	for (i = addr_slot(addr, s->cache_cap); s->slots[i];
	     i = (i + 1) & (s->cache_cap - 1)) {
		const struct cache_ent *e = &s->cache[s->slots[i] - 1];

		if (e->addr == addr) {
			*loc = e->loc;
			return;
		}
	}
	resolve(s, addr - s->slide, loc);
	cache_add(s, i, addr, loc);
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
	size_t n = s->core ? btsdec_core_read(s->core, addr, buf, len) : 0;

	if (n)
		return n;
	addr -= s->slide;
	m = dwfl_addrmodule(s->dwfl, addr);
	return m ? read_module(m, addr, buf, len) : 0;
}

bool btsdec_sym_mapped(struct btsdec_sym *s, uint64_t addr)
{
	return (s->core && btsdec_core_mapped(s->core, addr)) ||
	       dwfl_addrmodule(s->dwfl, addr - s->slide);
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
