// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the per-address structures of issue 16: the sorted symbol
 * index (lib/symbol.c; for every byte of the fixture executable's code
 * sections and a sample of glibc's .text, btsdec_sym_addrsym names the same
 * symbol at the same offset as libdwfl's dwfl_module_addrinfo on the same
 * core), and the address caches of the symbolizer and the JSON renderer
 * growing past their first size while a report is written; a module's
 * file found through a descriptor with its build-id, never through one
 * with another.
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "test.h"

#define FIX SOURCE_ROOT "/tests/fixtures/"

struct ref {
	int fd;
	Elf *elf;
	Dwfl *dwfl;
	Dwfl_Callbacks cb;
	struct btsdec_core *core;
	struct btsdec_sym *sym;
	size_t checked, named;
};

static int ref_open(struct ref *r, const char *core, const char *exe)
{
	struct btsdec_symopts so = { .executable = exe };

	memset(r, 0, sizeof(*r));
	r->cb.find_elf = dwfl_build_id_find_elf;
	r->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	elf_version(EV_CURRENT);
	r->fd = open(core, O_RDONLY);
	r->elf = r->fd < 0 ? NULL : elf_begin(r->fd, ELF_C_READ_MMAP, NULL);
	r->dwfl = dwfl_begin(&r->cb);
	if (!r->elf || !r->dwfl)
		return -1;
	dwfl_report_begin(r->dwfl);
	if (dwfl_core_file_report(r->dwfl, r->elf, exe) < 0)
		return -1;
	dwfl_report_end(r->dwfl, NULL, NULL);
	if (btsdec_core_open(core, &r->core, NULL) ||
	    btsdec_sym_open_core(r->core, &so, &r->sym, NULL))
		return -1;
	return 0;
}

static void ref_close(struct ref *r)
{
	btsdec_sym_close(r->sym);
	btsdec_core_close(r->core);
	if (r->dwfl)
		dwfl_end(r->dwfl);
	if (r->elf)
		elf_end(r->elf);
	if (r->fd >= 0)
		close(r->fd);
}

/* Compares the index with libdwfl at addr; false on the first mismatch. */
static bool same_at(struct ref *r, uint64_t addr)
{
	Dwfl_Module *m = dwfl_addrmodule(r->dwfl, addr);
	const char *want = NULL, *got;
	GElf_Off woff = 0;
	uint64_t goff = 0;
	GElf_Sym sym;

	if (m)
		want = dwfl_module_addrinfo(m, addr, &woff, &sym, NULL, NULL, NULL);
	got = btsdec_sym_addrsym(r->sym, addr, &goff);
	r->checked++;
	r->named += want != NULL;
	if (want ? got && !strcmp(want, got) && woff == goff : !got)
		return true;
	fprintf(stderr, "  0x%llx: libdwfl %s+0x%llx, index %s+0x%llx\n",
		(unsigned long long)addr, want ? want : "(none)", (unsigned long long)woff,
		got ? got : "(none)", (unsigned long long)goff);
	return false;
}

struct find_mod {
	const char *base;
	Dwfl_Module *m;
};

static int find_cb(Dwfl_Module *mod, void **user, const char *name,
		   Dwarf_Addr start, void *arg)
{
	struct find_mod *f = arg;
	const char *slash = name ? strrchr(name, '/') : NULL;

	(void)user;
	(void)start;
	if (name && !strncmp(slash ? slash + 1 : name, f->base, strlen(f->base))) {
		f->m = mod;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* Every step-th address of the module's executable sections; 0 if the
 * module is not in the core, else the number of mismatches. */
static size_t check_module(struct ref *r, const char *base, uint64_t step)
{
	struct find_mod f = { .base = base };
	Elf_Scn *scn = NULL;
	size_t bad = 0, scns = 0;
	GElf_Addr bias;
	GElf_Shdr sh;
	Elf *e;

	dwfl_getmodules(r->dwfl, find_cb, &f, 0);
	if (!f.m || !(e = dwfl_module_getelf(f.m, &bias)))
		return 0;
	while ((scn = elf_nextscn(e, scn)) && bad < 10) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS)
			continue;
		scns++;
		for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size && bad < 10; a += step)
			bad += !same_at(r, a + bias);
	}
	CHECK(scns > 0);
	return bad;
}

static void test_index_matches_libdwfl(void)
{
	struct ref r;

	if (ref_open(&r, FIX "crasher-abort.core", FIX "crasher")) {
		ref_close(&r);
		REQUIRE(!"opening crasher-abort.core");
	}
	/* the fixture executable, every byte of .init, .plt, .text, .fini */
	CHECK_EQ(check_module(&r, "crasher", 1), 0);
	CHECK(r.named > 100);
	/* glibc, if its file is the one the core mapped: a sample */
	CHECK_EQ(check_module(&r, "libc.so", 97), 0);
	printf("  %zu addresses compared, %zu named\n", r.checked, r.named);
	ref_close(&r);
}

#define MANY	3000	/* records, with 4500 distinct addresses */

/* A trace of MANY branches between distinct addresses, written into a copy
 * of crasher-notrace.core and reported as JSON: every cache grows several
 * times while the branches are written (run it under ASan). */
static void test_many_addresses(void)
{
	static struct btsdec_record recs[MANY];
	struct btsdec_trace t = { .type = NT_BTSCRASH_THREAD, .capacity = MANY,
				  .flags = BTS_NOTE_F_USER_ONLY,
				  .source = BTS_SOURCE_EMUL, .nr = MANY, .recs = recs };
	struct btsdec_symopts so = { .executable = FIX "crasher" };
	struct btsdec_report_opts ro = { .json = true };
	char path[] = "/tmp/btsdec-many.XXXXXX", *buf = NULL, want[32];
	struct btsdec_classifier *cls;
	struct btsdec_core *c;
	struct btsdec_sym *sym;
	struct btsdec_err err;
	size_t len = 0;
	FILE *f;
	int fd;

	for (size_t i = 0; i < MANY; i++)
		/* pairs share a 'from': the caches grow at 'from' and at 'to' */
		recs[i] = (struct btsdec_record){ 0x10000000 + 32 * (i / 2),
						  0x18000000 + 32 * i, 0 };
	REQUIRE(btsdec_core_open(FIX "crasher-notrace.core", &c, NULL) == 0);
	t.id = btsdec_core_thread(c, 0)->tid;
	btsdec_core_close(c);
	REQUIRE((fd = mkstemp(path)) >= 0);
	close(fd);
	REQUIRE(btsdec_core_add_notes(FIX "crasher-notrace.core", path, &t, 1, &err) == 0);
	REQUIRE(btsdec_core_open(path, &c, &err) == 0);
	REQUIRE(btsdec_sym_open_core(c, &so, &sym, &err) == 0);
	REQUIRE(btsdec_classifier_new(&cls, &err) == 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ(btsdec_report(f, c, sym, cls, &ro, &err), 0);
	fclose(f);
	snprintf(want, sizeof(want), "\"number\":%d,", MANY);
	CHECK_CONTAINS(buf, want);
	CHECK_CONTAINS(buf, "\"from_symbol\":\"0x10000000\",\"to_symbol\":\"0x18000000\"");
	free(buf);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	btsdec_core_close(c);
	unlink(path);
}

/* dispatch+0x10 in the fixture core: crasher's load address (its NT_FILE
 * entry at offset 0) plus the symbol's value */
#define DISPATCH_AT	(0x555857174000ULL + 0x11d9 + 0x10)

/* The fixture core's executable is named by a path that does not exist
 * here; the symbolizer given no executable finds it through a descriptor
 * (btsdec_symopts.elf_fds) whose build-id is the core's, and never through
 * one whose build-id differs (this test's own binary). */
static void lookup_by_fd(const char *file, struct btsdec_loc *loc, char *func, size_t len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct btsdec_symopts so = { .elf_fds = &fd, .nr_elf_fds = 1 };
	struct btsdec_core *c;
	struct btsdec_sym *sym;

	REQUIRE(fd >= 0);
	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	REQUIRE(btsdec_sym_open_core(c, &so, &sym, NULL) == 0);
	btsdec_sym_lookup(sym, DISPATCH_AT, loc);
	snprintf(func, len, "%s+%llu %s", loc->func ? loc->func : "-",
		 (unsigned long long)loc->off, loc->missing ? "missing" : "found");
	btsdec_sym_close(sym);
	btsdec_core_close(c);
	close(fd);
}

static void test_elf_by_descriptor(void)
{
	struct btsdec_loc loc;
	char got[128];

	lookup_by_fd(FIX "crasher", &loc, got, sizeof(got));
	CHECK_STR(got, "dispatch+16 found");
	lookup_by_fd("/proc/self/exe", &loc, got, sizeof(got));
	CHECK_STR(got, "-+0 missing");
}

static const struct test_case tests[] = {
	TEST_CASE(test_index_matches_libdwfl),
	TEST_CASE(test_many_addresses),
	TEST_CASE(test_elf_by_descriptor),
};

int main(void)
{
	return RUN_TESTS(tests);
}
