// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lib/trail.c, the trail signature: synthetic trails of one
 * program loaded at two bases (ASLR) through a table symbolizer, where
 * the same bug reached through 3 or 300 loop iterations signs alike and
 * two bugs in one function do not; then the fixture cores through the
 * real symbolizer (btsdec_model_trail).
 */
#include <errno.h>

#include "btsdec.h"
#include "test.h"

#define FIX SOURCE_ROOT "/tests/fixtures/"

/* The program: functions at module offsets, 0x100 bytes each. */
enum { F_MAIN, F_SERVE, F_PARSE, F_CHECKSUM, F_DISPATCH, F_ADMIN, F__MAX };
static const char *const fn_name[F__MAX] = {
	"main", "serve", "parse_request", "checksum", "dispatch", "admin",
};
#define FN_OFF(f)	(0x1000 + 0x100 * (uint64_t)(f))

/* One load of it: the table symbolizer's state, and the trail built. */
struct layout {
	uint64_t base;
	struct btsdec_record rec[4096];
	size_t nr;
};

static void table_lookup(void *arg, uint64_t addr, struct btsdec_trail_fn *fn)
{
	const struct layout *l = arg;
	uint64_t off = addr - l->base;

	*fn = (struct btsdec_trail_fn){ 0 };
	if (addr < l->base || off < FN_OFF(0) || off >= FN_OFF(F__MAX))
		return;		/* unmapped */
	fn->module = "0123abcd";
	fn->func = fn_name[(off - FN_OFF(0)) / 0x100];
}

static uint64_t at(const struct layout *l, int f, uint64_t off)
{
	return l->base + FN_OFF(f) + off;
}

static void branch(struct layout *l, uint64_t from, uint64_t to)
{
	REQUIRE(l->nr < sizeof(l->rec) / sizeof(l->rec[0]));
	l->rec[l->nr++] = (struct btsdec_record){ .from = from, .to = to };
}

/* caller's call into callee, then its return */
static void call(struct layout *l, int caller, uint64_t site, int callee)
{
	branch(l, at(l, caller, site), at(l, callee, 0));
}

static void ret(struct layout *l, int callee, int caller, uint64_t site)
{
	branch(l, at(l, callee, 0x80), at(l, caller, site + 5));
}

/* main -> serve -> parse_request, which loops `loops` times over
 * checksum (itself looping), then calls dispatch. */
static void to_dispatch(struct layout *l, uint64_t base, int loops)
{
	l->base = base;
	l->nr = 0;
	call(l, F_MAIN, 0x10, F_SERVE);
	call(l, F_SERVE, 0x20, F_PARSE);
	for (int i = 0; i < loops; i++) {
		call(l, F_PARSE, 0x30, F_CHECKSUM);
		for (int j = 0; j <= i % 4; j++)	/* its own loop: no transition */
			branch(l, at(l, F_CHECKSUM, 0x40), at(l, F_CHECKSUM, 0x10));
		ret(l, F_CHECKSUM, F_PARSE, 0x30);
	}
	call(l, F_PARSE, 0x50, F_DISPATCH);
}

static void sign(struct layout *l, uint64_t pc, enum btsdec_fault_rel rel,
		 char hex[BTSDEC_TRAIL_HEX + 1])
{
	struct btsdec_trace t = { .nr = l->nr, .recs = l->rec };
	struct btsdec_trail_in in = {
		.program = "0123abcd", .signo = 11, .has_siginfo = true, .si_code = 1,
		.rel = rel, .pc = pc, .t = &t, .lookup = table_lookup, .arg = l,
	};

	CHECK_EQ(btsdec_trail_sign(&in, hex), 0);
	CHECK_EQ(strlen(hex), BTSDEC_TRAIL_HEX);
}

/* The call through NULL in dispatch: its call* to 0x0 faults there. */
static void null_call(struct layout *l, uint64_t base, int loops, char hex[])
{
	to_dispatch(l, base, loops);
	branch(l, at(l, F_DISPATCH, 0x20), 0);
	sign(l, 0, BTSDEC_FAULT_TARGET, hex);
}

static void test_loops_and_aslr_sign_alike(void)
{
	static struct layout a, b;
	char h3[BTSDEC_TRAIL_HEX + 1], h300[BTSDEC_TRAIL_HEX + 1];

	null_call(&a, 0x555555554000, 3, h3);
	null_call(&b, 0x7f12a0000000, 300, h300);
	CHECK(a.nr != b.nr);
	CHECK_STR(h3, h300);
	null_call(&b, 0x5600dead0000, 1, h300);	/* once: the collapsed form */
	CHECK_STR(h3, h300);
}

static void test_two_bugs_in_one_function_differ(void)
{
	static struct layout a, b;
	char call0[BTSDEC_TRAIL_HEX + 1], store0[BTSDEC_TRAIL_HEX + 1];
	char admin[BTSDEC_TRAIL_HEX + 1];

	null_call(&a, 0x555555554000, 3, call0);
	/* dispatch's other bug: a store through NULL, 0x30 into it */
	to_dispatch(&b, 0x555555554000, 3);
	sign(&b, at(&b, F_DISPATCH, 0x30), BTSDEC_FAULT_RUN, store0);
	CHECK(strcmp(call0, store0));
	/* the same call through NULL, reached from admin, not parse_request:
	 * another caller's table entry, another bug */
	to_dispatch(&b, 0x555555554000, 3);
	b.nr--;
	call(&b, F_SERVE, 0x60, F_ADMIN);
	call(&b, F_ADMIN, 0x10, F_DISPATCH);
	branch(&b, at(&b, F_DISPATCH, 0x20), 0);
	sign(&b, 0, BTSDEC_FAULT_TARGET, admin);
	CHECK(strcmp(call0, admin));
}

static void test_markers_and_empty(void)
{
	static struct layout a;
	char h[BTSDEC_TRAIL_HEX + 1], marked[BTSDEC_TRAIL_HEX + 1];

	null_call(&a, 0x555555554000, 3, h);
	/* a context-switch marker in the middle changes nothing */
	memmove(&a.rec[3], &a.rec[2], (a.nr - 2) * sizeof(a.rec[0]));
	a.rec[2] = (struct btsdec_record){ .from = BTS_MARKER(BTS_MARK_SWITCH_OUT, 0),
					   .to = 123456789 };
	a.nr++;
	sign(&a, 0, BTSDEC_FAULT_TARGET, marked);
	CHECK_STR(h, marked);
	a.nr = 0;		/* no branch: the fault alone still signs */
	sign(&a, 0, BTSDEC_FAULT_NO_TRAIL, marked);
	CHECK(strcmp(h, marked));
}

/* The real symbolizer on the fixture cores. */
static int core_trail(const char *core_path, char hex[BTSDEC_TRAIL_HEX + 1])
{
	struct btsdec_symopts so = { .executable = FIX "crasher" };
	struct btsdec_core *core;
	int r;

	if (btsdec_core_open(core_path, &core, NULL))
		return -EIO;
	r = btsdec_core_trail(core, &so, hex);
	btsdec_core_close(core);
	return r;
}

static void test_fixture_cores(void)
{
	char null[BTSDEC_TRAIL_HEX + 1], again[BTSDEC_TRAIL_HEX + 1];
	char abrt[BTSDEC_TRAIL_HEX + 1];

	REQUIRE(core_trail(FIX "crasher-null.core", null) == 0);
	REQUIRE(core_trail(FIX "crasher-null.core", again) == 0);
	CHECK_STR(null, again);
	REQUIRE(core_trail(FIX "crasher-abort.core", abrt) == 0);
	CHECK(strcmp(null, abrt));
	CHECK_EQ(core_trail(FIX "crasher-notrace.core", again), -ENODATA);
}

int main(void)
{
	static const struct test_case tests[] = {
		TEST_CASE(test_loops_and_aslr_sign_alike),
		TEST_CASE(test_two_bugs_in_one_function_differ),
		TEST_CASE(test_markers_and_empty),
		TEST_CASE(test_fixture_cores),
	};

	return RUN_TESTS(tests);
}
