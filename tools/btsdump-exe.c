// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EXECUTABLE argument of `btsdump CORE EXECUTABLE`, checked before it
 * is handed to libdwfl (which drops an unusable file without a word): it
 * must be a readable ELF file, and when it carries a build-id, that
 * build-id must be one the core's modules have (docs/btsdump.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "btsdec.h"
#include "btsdump.h"

struct build_id {
	const void *bits;
	int len;
	bool seen_known;	/* some module of the core has a build-id */
	bool found;		/* ... and one of them is this */
};

static int match_module(Dwfl_Module *m, void **user, const char *name,
			Dwarf_Addr start, void *arg)
{
	struct build_id *want = arg;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(m, &bits, &vaddr);

	if (n > 0) {
		want->seen_known = true;
		if (n == want->len && !memcmp(bits, want->bits, n)) {
			want->found = true;
			return DWARF_CB_ABORT;
		}
	}
	return DWARF_CB_OK;
}

/* Whether the core's modules, as libdwfl finds them in its memory, include
 * the build-id want: -ESTALE if they name build-ids and not this one. */
static int core_has_build_id(struct btsdec_core *core, struct build_id *want)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (!dwfl)
		return -ENOMEM;
	dwfl_report_begin(dwfl);
	if (dwfl_core_file_report(dwfl, btsdec_core_elf(core), NULL) >= 0) {
		dwfl_report_end(dwfl, NULL, NULL);
		dwfl_getmodules(dwfl, match_module, want, 0);
	}
	dwfl_end(dwfl);
	return want->seen_known && !want->found ? -ESTALE : 0;
}

/* An ELF file as EXECUTABLE: a program or a shared object (not a core, not
 * an object file) of the core's build; 0 or -errno, said. */
static int check_elf(struct btsdec_core *core, Elf *elf, const char *path)
{
	struct build_id want = { 0 };
	GElf_Ehdr eh, *h = gelf_getehdr(elf, &eh);

	if (!h || (h->e_type != ET_EXEC && h->e_type != ET_DYN)) {
		say("%s: EXECUTABLE not used: not an executable (%s)", path,
		    !h ? elf_errmsg(-1) : h->e_type == ET_CORE ? "a core" :
		    h->e_type == ET_REL ? "an object file" : "unknown ELF type");
		return -ENOEXEC;
	}
	want.len = dwelf_elf_gnu_build_id(elf, &want.bits);
	if (want.len > 0 && core_has_build_id(core, &want) == -ESTALE) {
		say("%s: EXECUTABLE not used: another build "
		    "(its build-id is not among the core's modules)", path);
		return -ESTALE;
	}
	return 0;
}

int btsdump_check_executable(struct btsdec_core *core, const char *path)
{
	struct stat st;
	Elf *elf = NULL;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		say("%s: EXECUTABLE not used: %m", path);
	} else if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		say("%s: EXECUTABLE not used: %s", path,
		    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	} else if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) ||
		   elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		say("%s: EXECUTABLE not used: not an ELF file", path);
	} else {
		ret = check_elf(core, elf, path);
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}
