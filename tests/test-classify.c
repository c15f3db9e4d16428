// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of branch classification (lib/classify.c) on hand-assembled
 * x86-64 encodings (from the Intel SDM opcode tables), direct and indirect,
 * and where a call or jump goes (btsdec_branch_target).
 */
#include <errno.h>
#include <string.h>

#include "btsdec.h"
#include "test.h"

struct insn_case {
	const char *what;
	uint8_t bytes[8];
	size_t len;
	enum btsdec_kind kind;
	bool indirect;
};

static const struct insn_case cases[] = {
	{ "call rel32", { 0xe8, 1, 0, 0, 0 }, 5, BTSDEC_K_CALL, false },
	{ "call *%rax", { 0xff, 0xd0 }, 2, BTSDEC_K_CALL, true },
	{ "call *8(%rdx)", { 0xff, 0x52, 0x08 }, 3, BTSDEC_K_CALL, true },
	{ "ret", { 0xc3 }, 1, BTSDEC_K_RETURN, false },
	{ "ret $8", { 0xc2, 8, 0 }, 3, BTSDEC_K_RETURN, false },
	{ "jmp rel8", { 0xeb, 0x10 }, 2, BTSDEC_K_JUMP, false },
	{ "jmp *%rax", { 0xff, 0xe0 }, 2, BTSDEC_K_JUMP, true },
	{ "jmp *0x10(%rip)", { 0xff, 0x25, 0x10, 0, 0, 0 }, 6, BTSDEC_K_JUMP, true },
	{ "je rel8", { 0x74, 0x05 }, 2, BTSDEC_K_COND, false },
	{ "jne rel32", { 0x0f, 0x85, 1, 0, 0, 0 }, 6, BTSDEC_K_COND, false },
	{ "loop", { 0xe2, 0xfe }, 2, BTSDEC_K_COND, false },
	{ "jrcxz", { 0xe3, 0x02 }, 2, BTSDEC_K_COND, false },
	{ "syscall", { 0x0f, 0x05 }, 2, BTSDEC_K_SYSCALL, false },
	{ "int3", { 0xcc }, 1, BTSDEC_K_SYSCALL, false },
	{ "int $0x80", { 0xcd, 0x80 }, 2, BTSDEC_K_SYSCALL, false },
	{ "sysretq", { 0x48, 0x0f, 0x07 }, 3, BTSDEC_K_SYSRET, false },
	{ "iretq", { 0x48, 0xcf }, 2, BTSDEC_K_IRET, false },
	{ "mov (%rax),%rax (faulting load)", { 0x48, 0x8b, 0x00 }, 3,
	  BTSDEC_K_INTERRUPT, false },
	{ "ud2", { 0x0f, 0x0b }, 2, BTSDEC_K_INTERRUPT, false },
	{ "no bytes", { 0 }, 0, BTSDEC_K_UNKNOWN, false },
	{ "truncated call", { 0xe8, 1, 0 }, 3, BTSDEC_K_UNKNOWN, false },
};

static void test_encodings(void)
{
	struct btsdec_classifier *c;

	REQUIRE(btsdec_classifier_new(&c, NULL) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ind = !cases[i].indirect;
		enum btsdec_kind k = btsdec_classify(c, cases[i].bytes, cases[i].len,
						     0x401000, &ind);

		if (k != cases[i].kind || ind != cases[i].indirect) {
			fprintf(stderr, "%s: got %s%s, expected %s%s\n", cases[i].what,
				btsdec_kind_name(k), ind ? " indirect" : "",
				btsdec_kind_name(cases[i].kind),
				cases[i].indirect ? " indirect" : "");
			test_failures++;
		}
	}
	btsdec_classifier_free(c);
}

/* The length decode.c needs for a call's return address: every encoding
 * above is one whole instruction. */
static void test_sizes(void)
{
	struct btsdec_classifier *c;

	REQUIRE(btsdec_classifier_new(&c, NULL) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t size = 99;
		bool ind;

		btsdec_classify_insn(c, cases[i].bytes, cases[i].len, 0x401000, &ind, &size);
		if (size != (cases[i].kind == BTSDEC_K_UNKNOWN ? 0 : cases[i].len)) {
			fprintf(stderr, "%s: size %zu, expected %zu\n", cases[i].what, size,
				cases[i].kind == BTSDEC_K_UNKNOWN ? 0 : cases[i].len);
			test_failures++;
		}
	}
	btsdec_classifier_free(c);
}

/* Where a call or jump goes, its operand evaluated in registers and
 * memory (lib/infer.c's proof): memory is 0x600000..0x600040 holding
 * 0x600000 + its offset, and the qword at 0x401016. */
static size_t fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	uint64_t v = addr == 0x401016 ? 0xabcd : addr;

	if (len != 8 || (addr != 0x401016 && (addr < 0x600000 || addr > 0x600038)))
		return 0;
	memcpy(buf, &v, 8);
	return 8;
}

static void test_targets(void)
{
	static const struct {
		const char *what;
		uint8_t bytes[8];
		size_t len;
		int ret;
		uint64_t target;
	} t[] = {
		{ "call rel32", { 0xe8, 1, 0, 0, 0 }, 5, 0, 0x401006 },
		{ "call *%rax", { 0xff, 0xd0 }, 2, 0, 0x1111 },
		{ "jmp *%rax", { 0xff, 0xe0 }, 2, 0, 0x1111 },
		{ "call *8(%rdx)", { 0xff, 0x52, 0x08 }, 3, 0, 0x600008 },
		{ "call *(%rdx,%rcx,8)", { 0xff, 0x14, 0xca }, 3, 0, 0x600010 },
		{ "jmp *0x10(%rip)", { 0xff, 0x25, 0x10, 0, 0, 0 }, 6, 0, 0xabcd },
		{ "call *0x100(%rdx), unreadable", { 0xff, 0x92, 0, 1, 0, 0 }, 6, -ENOENT, 0 },
		{ "call *%fs:0x10", { 0x64, 0xff, 0x14, 0x25, 0x10, 0, 0, 0 }, 8, -ENOENT, 0 },
		{ "call *(%edx)", { 0x67, 0xff, 0x12 }, 3, -ENOENT, 0 },
		{ "ret", { 0xc3 }, 1, -EINVAL, 0 },
		{ "mov (%rax),%rax", { 0x48, 0x8b, 0x00 }, 3, -EINVAL, 0 },
	};
	struct btsdec_insn_env env = { .read = fake_read };
	struct btsdec_classifier *c;

	env.gpr[0] = 0x1111;		/* rax */
	env.gpr[1] = 2;			/* rcx */
	env.gpr[2] = 0x600000;		/* rdx */
	REQUIRE(btsdec_classifier_new(&c, NULL) == 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t target = 0;
		size_t size;
		int ret = btsdec_branch_target(c, t[i].bytes, t[i].len, 0x401000, &env,
					       &target, &size);

		if (ret != t[i].ret || (!ret && target != t[i].target)) {
			fprintf(stderr, "%s: %d 0x%llx, expected %d 0x%llx\n", t[i].what,
				ret, (unsigned long long)target, t[i].ret,
				(unsigned long long)t[i].target);
			test_failures++;
		}
	}
	btsdec_classifier_free(c);
}

static void test_names(void)
{
	CHECK_STR(btsdec_kind_name(BTSDEC_K_COND), "cond");
	CHECK_STR(btsdec_kind_name(BTSDEC_K_MARKER), "marker");
	CHECK_STR(btsdec_kind_name(BTSDEC_K__MAX), "invalid");
	for (int k = 0; k < BTSDEC_K__MAX; k++)
		CHECK(btsdec_kind_name(k) != NULL);
}

static const struct test_case tests[] = {
	TEST_CASE(test_encodings),
	TEST_CASE(test_sizes),
	TEST_CASE(test_names),
	TEST_CASE(test_targets),
};

int main(void)
{
	return RUN_TESTS(tests);
}
