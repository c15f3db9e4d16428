// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of where a value came from (lib/why.c) over every fixture
 * core: at every instruction of the faulting thread's trace, for every
 * register, each link of the chain names a defining instruction before
 * the point it explains, one the engine's own operand info says writes
 * the value (its write mask; a store at a byte of the memory), with no
 * write of it in between.  Reads the engine's private state
 * (recover-int.h) for that; tests/test-recover.c has the short chains.
 * And C expressions placed with the fixture's DWARF (lib/why-expr.c).
 */
#include <errno.h>

#include "btsdec.h"
#include "recover-int.h"
#include "test.h"

#define FIX SOURCE_ROOT "/tests/fixtures/"

/* A link's defining instruction comes before its point, writes the value
 * (the engine's write mask; a memory value: a store at a byte of it), and
 * no instruction between writes it (but a cmovcc that did not move). */
static void check_step(const struct btsdec_recover *r, const struct btsdec_why_step *s)
{
	uint64_t m, a;
	unsigned size;
	bool hit = false;

	if (s->from != BTSDEC_WHY_INSN && s->from != BTSDEC_WHY_SYSCALL &&
	    s->from != BTSDEC_WHY_GAP && s->from != BTSDEC_WHY_ALIAS)
		return;
	CHECK(s->insn < s->at);
	if (s->what.kind == BTSDEC_WHY_REG) {
		m = (s->what.size >= 8 ? ~0ull : (1ull << 8 * s->what.size) - 1) << s->what.shift;
		if (s->what.reg == RFL)
			m &= ~F_RF;
		CHECK(r->in[s->insn].wmask[s->what.reg] & m);
		for (size_t k = s->insn + 1; k < s->at; k++)
			CHECK(!(r->in[k].wmask[s->what.reg] & m) || rec_cmov_taken(r, k) == 0);
		return;
	}
	if (s->from != BTSDEC_WHY_INSN)
		return;
	REQUIRE(rec_store_at(r, s->insn, &a, &size) == ST_OP);
	for (unsigned k = 0; k < s->what.size; k++)
		hit |= s->what.addr + k - a < size;
	CHECK(hit);
}

static void test_why_fixtures(void)
{
	static const char *const cores[] = { "crasher-null.core", "crasher-smash.core",
					     "crasher-abort.core", "crasher-threads.core" };
	struct btsdec_symopts so = { .executable = FIX "crasher" };

	for (size_t c = 0; c < sizeof(cores) / sizeof(cores[0]); c++) {
		char path[4096];
		struct btsdec_core *core;
		struct btsdec_sym *sym;
		struct btsdec_classifier *cls;
		struct btsdec_recover *r;
		size_t checked = 0;

		snprintf(path, sizeof(path), FIX "%s", cores[c]);
		REQUIRE(btsdec_core_open(path, &core, NULL) == 0);
		REQUIRE(btsdec_sym_open_core(core, &so, &sym, NULL) == 0);
		REQUIRE(btsdec_classifier_new(&cls, NULL) == 0);
		REQUIRE(btsdec_recover_open(core, sym, cls, btsdec_core_thread(core, 0), &r,
					    NULL) == 0);
		for (size_t i = 0; i <= btsdec_recover_nr(r); i++)
			for (int k = 0; k < BTSDEC_REG__MAX; k++) {
				struct btsdec_why_value v = { .kind = BTSDEC_WHY_REG, .size = 8,
							      .reg = k };
				struct btsdec_why w;

				REQUIRE(btsdec_why_explain(r, &v, i, 3, 16, &w) == 0);
				for (size_t n = 0; n < w.nr; n++)
					check_step(r, &w.steps[n]);
				checked += w.nr;
				btsdec_why_fini(&w);
			}
		CHECK(checked > btsdec_recover_nr(r));
		printf("# %s: %zu links checked over %zu instructions\n", cores[c], checked,
		       btsdec_recover_nr(r));
		btsdec_recover_free(r);
		btsdec_classifier_free(cls);
		btsdec_sym_close(sym);
		btsdec_core_close(core);
	}
}

/* C expressions placed with the fixture's DWARF: a global's elements
 * 8 bytes apart, a local of the function the NULL call left (its CFA
 * from the CFI), and the refusals. */
static void test_why_eval(void)
{
	struct btsdec_symopts so = { .executable = FIX "crasher" };
	struct btsdec_core *core;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
	struct btsdec_recover *r;
	struct btsdec_why_value v0, v2, v;
	struct btsdec_err err;
	size_t nr, at;

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &core, NULL) == 0);
	REQUIRE(btsdec_sym_open_core(core, &so, &sym, NULL) == 0);
	REQUIRE(btsdec_classifier_new(&cls, NULL) == 0);
	REQUIRE(btsdec_recover_open(core, sym, cls, btsdec_core_thread(core, 0), &r, NULL) == 0);
	nr = btsdec_recover_nr(r);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers[0]", nr, &v0, &at, &err), 0);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers[2]", nr, &v2, &at, &err), 0);
	CHECK(v0.kind == BTSDEC_WHY_MEM && v0.size == 8 && v2.addr == v0.addr + 16);
	CHECK_EQ(at, nr);
	/* dispatch's int kind, on its frame: the stack, not the table */
	CHECK_EQ(btsdec_why_eval(r, sym, "kind", nr, &v, &at, &err), 0);
	CHECK(v.kind == BTSDEC_WHY_MEM && v.size == 4 && v.addr - state(r, nr)[RSP].v < 4096);
	CHECK_EQ(btsdec_why_eval(r, sym, "nosuch", nr, &v, &at, &err), -ENOENT);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers", nr, &v, &at, &err), -EINVAL);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers[", nr, &v, &at, &err), -EINVAL);
	CHECK_EQ(btsdec_why_eval(r, sym, "kind.x", nr, &v, &at, &err), -EINVAL);
	CHECK_EQ(btsdec_why_eval(r, sym, "9x", nr, &v, &at, &err), -EINVAL);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers[ -1]", nr, &v, &at, &err), -EINVAL);
	CHECK_EQ(btsdec_why_eval(r, sym, "handlers[0x1]", nr, &v, &at, &err), 0);
	CHECK_EQ(v.addr, v0.addr + 8);
	btsdec_recover_free(r);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
}

static const struct test_case tests[] = {
	TEST_CASE(test_why_fixtures),
	TEST_CASE(test_why_eval),
};

int main(void)
{
	return RUN_TESTS(tests);
}
