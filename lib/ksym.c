// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kernel symbols for vmcore reports without a debugger: System.map lines
 * ("ADDR TYPE NAME", text symbols only) or the .symtab of a vmlinux (FUNC
 * symbols), sorted, moved by the dump's KASLR offset (VMCOREINFO
 * KERNELOFFSET), looked up by binary search.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct btsdec_ksyms {
	struct ksym *v;
	size_t n, cap;
	bool vmlinux;		/* read from an ELF file's .symtab */
};

static int add(struct btsdec_ksyms *ks, uint64_t addr, const char *name)
{
	if (btsdec_grow(&ks->v, &ks->cap, ks->n + 1))
		return -ENOMEM;
	ks->v[ks->n].name = strdup(name);
	if (!ks->v[ks->n].name)
		return -ENOMEM;
	ks->v[ks->n++].addr = addr;
	return 0;
}

/* By address, aliases by name: System.map's (`nm -n`) order, whichever
 * the symbols came from, so a lookup names the same alias every time. */
static int cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return strcmp(x->name, y->name);
}

static int from_elf(struct btsdec_ksyms *ks, int fd, uint64_t off, struct btsdec_err *err)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	int ret = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return btsdec_fail(err, -EINVAL, "vmlinux: %s", elf_errmsg(-1));
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && !ret && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && *name)
				ret = add(ks, sym.st_value + off, name);
		}
	}
	elf_end(elf);
	return ret;
}

static int from_map(struct btsdec_ksyms *ks, int fd, uint64_t off)
{
	FILE *f = fdopen(dup(fd), "r");
	char line[512], name[256], type;
	unsigned long long addr;
	int ret = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    strchr("TtWw", type))
			ret = add(ks, addr + off, name);
	fclose(f);
	return ret;
}

int btsdec_ksyms_open(const char *path, uint64_t kaslr_offset,
		      struct btsdec_ksyms **out, struct btsdec_err *err)
{
	struct btsdec_ksyms *ks = calloc(1, sizeof(*ks));
	unsigned char magic[4] = { 0 };
	int fd, ret;

	if (!ks)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(ks);
		return btsdec_fail(err, -errno, "%s: %s", path, strerror(errno));
	}
	ks->vmlinux = pread(fd, magic, 4, 0) == 4 && !memcmp(magic, ELFMAG, SELFMAG);
	if (ks->vmlinux)
		ret = from_elf(ks, fd, kaslr_offset, err);
	else
		ret = from_map(ks, fd, kaslr_offset);
	close(fd);
	if (!ret && !ks->n)
		ret = btsdec_fail(err, -EINVAL, "%s: no kernel text symbols (not a vmlinux "
				  "or System.map)", path);
	if (ret) {
		btsdec_ksyms_close(ks);
		return ret;
	}
	qsort(ks->v, ks->n, sizeof(*ks->v), cmp);
	*out = ks;
	return 0;
}

void btsdec_ksyms_close(struct btsdec_ksyms *ks)
{
	size_t i;

	if (!ks)
		return;
	for (i = 0; i < ks->n; i++)
		free(ks->v[i].name);
	free(ks->v);
	free(ks);
}

const char *btsdec_ksyms_lookup(const struct btsdec_ksyms *ks, uint64_t addr,
				uint64_t *off)
{
	size_t lo = 0, hi;

	if (!ks || !ks->n || addr < ks->v[0].addr)
		return NULL;
	hi = ks->n;
	while (hi - lo > 1) {	/* last symbol at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (ks->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - ks->v[lo].addr > (1 << 20))	/* past the end of the text */
		return NULL;
	while (lo && ks->v[lo - 1].addr == ks->v[lo].addr)
		lo--;	/* of aliases, the first in System.map, as crash names it */
	*off = addr - ks->v[lo].addr;
	return ks->v[lo].name;
}

bool btsdec_ksyms_from_vmlinux(const struct btsdec_ksyms *ks)
{
	return ks && ks->vmlinux;
}
