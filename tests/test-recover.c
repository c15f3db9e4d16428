// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the value-recovery engine (lib/recover.c) on short
 * instruction sequences, their bytes assembled by GNU as (Intel syntax,
 * shown beside them): exact values recovered backward and forward, and
 * values no one can prove left unknown (a load through an unknown pointer,
 * a store that may alias, flags not known, an instruction not modelled, a
 * gap).  Where a value came from (lib/why.c): a short chain exactly
 * (over the fixture cores: tests/test-why.c).  The real-program check is
 * tests/test-recover.py.
 */
#include <errno.h>

#include "btsdec.h"
#include "test.h"

enum { RAX = BTSDEC_REG_RAX, RBX = BTSDEC_REG_RBX, RCX = BTSDEC_REG_RCX,
       RDX = BTSDEC_REG_RDX, RSI = BTSDEC_REG_RSI, RDI = BTSDEC_REG_RDI,
       RBP = BTSDEC_REG_RBP, RSP = BTSDEC_REG_RSP, R8 = BTSDEC_REG_R8,
       RIP = BTSDEC_REG_RIP, RFL = BTSDEC_REG_RFLAGS };

#define BASE 0x401000ull
#define STACK 0x7ffd0000ull

/* The final memory image: 64 bytes at image_addr. */
static uint64_t image_addr;
static uint8_t image[64];
static bool image_on;

static size_t read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	size_t n = 0;

	if (!image_on)
		return 0;
	while (n < len && addr + n - image_addr < sizeof(image)) {
		((uint8_t *)buf)[n] = image[addr + n - image_addr];
		n++;
	}
	return n;
}

static void set_image(uint64_t addr, uint64_t off, uint64_t v)
{
	image_on = true;
	image_addr = addr;
	memcpy(image + off, &v, 8);
}

static struct btsdec_regs final;

static void reg(int r, uint64_t v)
{
	final.val[r] = v;
	final.known[r] = ~0ull;
}

static struct btsdec_recover *engine(void)
{
	struct btsdec_recover *r;
	struct btsdec_err err;

	if (btsdec_recover_new(&final, read_image, NULL, &r, &err))
		return NULL;
	return r;
}

/* Appends the straight code (len bytes at addr) one instruction at a time. */
static uint64_t add_code(struct btsdec_recover *r, uint64_t addr, const char *code,
			 size_t len)
{
	for (size_t off = 0; off < len;) {
		int n = btsdec_recover_add(r, addr, (const uint8_t *)code + off, len - off);

		if (n <= 0)
			return 0;
		off += n;
		addr += n;
	}
	return addr;
}

#define ADD(r, addr, s) add_code(r, addr, s, sizeof(s) - 1)

/* An engine over `final` and the image, with code at BASE, run. */
static struct btsdec_recover *run_code(const char *code, size_t len)
{
	struct btsdec_recover *r = engine();

	if (r && (!add_code(r, BASE, code, len) || btsdec_recover_run(r))) {
		btsdec_recover_free(r);
		r = NULL;
	}
	return r;
}

#define RUN(s) run_code(s, sizeof(s) - 1)

static void start(void)
{
	memset(&final, 0, sizeof(final));
	memset(image, 0, sizeof(image));
	image_on = false;
}

/* Register reg before instruction i: known and equal to v. */
#define CHECK_REG(r, i, reg, v) do { struct btsdec_regs _s; \
	CHECK_EQ(btsdec_recover_regs_at(r, i, &_s), 0); \
	CHECK_EQ(_s.known[reg], ~0ull); CHECK_EQ(_s.val[reg], (uint64_t)(v)); } while (0)
/* Register reg before instruction i: known bits mask (== m). */
#define CHECK_KNOWN(r, i, reg, m) do { struct btsdec_regs _s; \
	CHECK_EQ(btsdec_recover_regs_at(r, i, &_s), 0); \
	CHECK_EQ(_s.known[reg], (uint64_t)(m)); } while (0)

static bool mem64(struct btsdec_recover *r, size_t i, uint64_t addr, uint64_t *v)
{
	uint8_t buf[8];
	bool known[8];

	if (btsdec_recover_mem_at(r, i, addr, 8, buf, known) != 8)
		return false;
	memcpy(v, buf, 8);
	return true;
}

static void test_inverse(void)
{
	static const char code[] =
		"\x48\x89\xc1"		/* mov rcx,rax */
		"\x48\x8d\x51\x10"	/* lea rdx,[rcx+0x10] */
		"\x48\x01\xda"		/* add rdx,rbx */
		"\x48\x83\xea\x03"	/* sub rdx,0x3 */
		"\x48\x31\xda"		/* xor rdx,rbx */
		"\x48\xff\xc2"		/* inc rdx */
		"\x48\xf7\xda"		/* neg rdx */
		"\x48\xf7\xd2"		/* not rdx */
		"\xb8\x05\x00\x00\x00";	/* mov eax,0x5 */
	uint64_t a = 0x4000, b = 0x100, d = ~(-((((a + 0x10 + b) - 3) ^ b) + 1));
	struct btsdec_recover *r;

	start();
	reg(RAX, 5);
	reg(RBX, b);
	reg(RDX, d);		/* rcx unknown at the end */
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, code));
	REQUIRE(btsdec_recover_nr(r) == 9);
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 0, RAX, a);	/* back through not, neg, inc, xor, sub, add, lea, mov */
	CHECK_KNOWN(r, 0, RCX, 0);	/* overwritten by mov, never seen before */
	CHECK_REG(r, 1, RCX, a);
	CHECK_REG(r, 2, RDX, a + 0x10);
	CHECK_REG(r, 9, RCX, a);	/* forward to the end */
	CHECK_REG(r, 8, RAX, a);
	CHECK_REG(r, 0, RIP, BASE);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

static void test_stack(void)
{
	static const char code[] =
		"\x53"		/* push rbx */
		"\x6a\x07"	/* push 0x7 */
		"\x59"		/* pop rcx */
		"\x58";		/* pop rax */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	reg(RAX, 0x55);
	reg(RCX, 7);		/* rbx unknown at the end */
	r = RUN(code);
	REQUIRE(r);
	CHECK_REG(r, 0, RSP, STACK);
	CHECK_REG(r, 1, RSP, STACK - 8);
	CHECK_REG(r, 2, RSP, STACK - 16);
	CHECK_REG(r, 0, RBX, 0x55);	/* pushed, popped into rax */
	CHECK_REG(r, 4, RBX, 0x55);
	CHECK(mem64(r, 2, STACK - 16, &v) && v == 7);
	CHECK(!mem64(r, 0, STACK - 8, &v));	/* before the push: unknown */
	CHECK(mem64(r, 4, STACK - 8, &v) && v == 0x55);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

static void test_call_ret(void)
{
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	reg(RIP, BASE + 6);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\xe8\x0b\x00\x00\x00"));	/* call BASE+0x10 */
	REQUIRE(ADD(r, BASE + 0x10, "\xc3"));		/* ret */
	REQUIRE(ADD(r, BASE + 5, "\x90"));		/* nop */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 0, RSP, STACK);
	CHECK_REG(r, 1, RSP, STACK - 8);
	CHECK(mem64(r, 1, STACK - 8, &v) && v == BASE + 5);	/* the return address */
	CHECK(!mem64(r, 0, STACK - 8, &v));
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A load through an unknown pointer: what it overwrote stays as proven
 * before, what it loaded is known only from later, never guessed. */
static void test_unknown_load(void)
{
	static const char code[] =
		"\xb8\x07\x00\x00\x00"	/* mov eax,0x7 */
		"\x48\x8b\x03"		/* mov rax,QWORD PTR [rbx] */
		"\x48\x89\xc1";		/* mov rcx,rax */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RCX, 42);		/* rax, rbx unknown at the end */
	r = RUN(code);
	REQUIRE(r);
	CHECK_KNOWN(r, 0, RAX, 0);
	CHECK_REG(r, 1, RAX, 7);
	CHECK_REG(r, 2, RAX, 42);	/* from rcx */
	CHECK_REG(r, 3, RAX, 42);
	CHECK_KNOWN(r, 1, RBX, 0);	/* so the loaded slot is nowhere known */
	CHECK(!mem64(r, 1, 0, &v));
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A store through an unknown address may alias anything: older memory is
 * known only from before it, the final image only after it. */
static void test_unknown_store(void)
{
	static const char code[] =
		"\x48\xc7\x04\x24\x05\x00\x00\x00"	/* mov QWORD PTR [rsp],0x5 */
		"\x48\x89\x0b"				/* mov QWORD PTR [rbx],rcx */
		"\x48\x8b\x14\x24";			/* mov rdx,QWORD PTR [rsp] */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	reg(RCX, 0x77);		/* rbx, rdx unknown at the end */
	set_image(STACK, 0, 9);
	set_image(STACK, 32, 0x33);
	r = RUN(code);
	REQUIRE(r);
	CHECK(!mem64(r, 0, STACK, &v));			/* overwritten at 0 */
	CHECK(mem64(r, 1, STACK, &v) && v == 5);	/* stored at 0 */
	CHECK(mem64(r, 2, STACK, &v) && v == 9);	/* the image, after the alias */
	CHECK_REG(r, 3, RDX, 9);
	CHECK_KNOWN(r, 2, RDX, 0);
	CHECK(!mem64(r, 0, STACK + 32, &v));		/* the alias may have hit it */
	CHECK(!mem64(r, 1, STACK + 32, &v));
	CHECK(mem64(r, 2, STACK + 32, &v) && v == 0x33);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A counter in memory, incremented: inverted back from the image. */
static void test_rmw(void)
{
	static const char code[] =
		"\x8b\x04\x24"		/* mov eax,DWORD PTR [rsp] */
		"\x83\x04\x24\x01"	/* add DWORD PTR [rsp],0x1 */
		"\x83\x04\x24\x01";	/* add DWORD PTR [rsp],0x1 */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	set_image(STACK, 0, 7);
	r = RUN(code);
	REQUIRE(r);
	CHECK(mem64(r, 2, STACK, &v) && v == 6);
	CHECK(mem64(r, 1, STACK, &v) && v == 5);
	CHECK_REG(r, 1, RAX, 5);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* Memory outside the range followed is never known (several threads). */
static void test_limit_mem(void)
{
	static const char code[] =
		"\x48\xc7\x04\x24\x05\x00\x00\x00"	/* mov QWORD PTR [rsp],0x5 */
		"\x48\x8b\x14\x24";			/* mov rdx,QWORD PTR [rsp] */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	set_image(STACK, 0, 5);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, code));
	btsdec_recover_limit_mem(r, STACK + 8, STACK + 4096);
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK(!mem64(r, 1, STACK, &v));
	CHECK(!mem64(r, 2, STACK, &v));
	CHECK_KNOWN(r, 2, RDX, 0);	/* stored 5, but another thread may have written */
	btsdec_recover_free(r);
}

/* An instruction not modelled that stores 32 bytes (capstone 4 calls its
 * memory operand read): all of them unknown before it, the image proves
 * them only after the last. */
static void test_wide_store(void)
{
	static const char code[] =
		"\xc5\xfe\x7f\x04\x24"	/* vmovdqu YMMWORD PTR [rsp],ymm0 */
		"\x48\x8b\x44\x24\x18";	/* mov rax,QWORD PTR [rsp+0x18] */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	set_image(STACK, 24, 0x1234);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, code));
	REQUIRE(ADD(r, BASE + 10, code));	/* and again, newer */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK(!mem64(r, 0, STACK + 24, &v));
	CHECK(!mem64(r, 1, STACK + 24, &v));	/* stored over again at 2 */
	CHECK(!mem64(r, 2, STACK + 16, &v));	/* its bytes 16-23: never seen */
	CHECK(mem64(r, 3, STACK + 24, &v) && v == 0x1234);
	CHECK_KNOWN(r, 2, RAX, 0);
	CHECK_REG(r, 4, RAX, 0x1234);
	btsdec_recover_free(r);
}

/* rep stos and rep movs: rcx elements at rdi, when the direction flag
 * is known clear; stos's value is known, movs's only as the image has it. */
static void test_string(void)
{
	static const char stos[] =
		"\xb9\x04\x00\x00\x00"	/* mov ecx,0x4 */
		"\xb8\x41\x00\x00\x00"	/* mov eax,0x41 */
		"\xf3\x48\xab";		/* rep stos QWORD PTR es:[rdi],rax */
	static const char movs[] =
		"\xb9\x02\x00\x00\x00"	/* mov ecx,0x2 */
		"\xf3\xa4";			/* rep movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi] */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RDI, STACK + 32);
	reg(RFL, 0x202);
	set_image(STACK, 8, 0x99);
	set_image(STACK, 40, 0x98);
	r = RUN(stos);
	REQUIRE(r);
	CHECK_REG(r, 2, RDI, STACK);
	CHECK_REG(r, 2, RCX, 4);
	CHECK_REG(r, 3, RCX, 0);
	CHECK(!mem64(r, 2, STACK + 8, &v));		/* stored over */
	CHECK(mem64(r, 3, STACK + 8, &v) && v == 0x41);	/* stored */
	CHECK(mem64(r, 2, STACK + 40, &v) && v == 0x98);	/* past its end */
	btsdec_recover_free(r);

	start();
	reg(RSI, STACK + 2);
	reg(RDI, STACK + 34);
	reg(RFL, 0x202);
	set_image(STACK, 32, 0x1111);
	r = RUN(movs);
	REQUIRE(r);
	CHECK_REG(r, 1, RSI, STACK);
	CHECK_REG(r, 1, RDI, STACK + 32);
	CHECK(!mem64(r, 1, STACK + 32, &v));		/* copied over */
	CHECK(mem64(r, 2, STACK + 32, &v) && v == 0x1111);
	btsdec_recover_free(r);

	start();			/* the direction unknown: anywhere */
	reg(RSI, STACK + 2);
	set_image(STACK, 32, 0x1111);
	r = RUN(movs);
	REQUIRE(r);
	CHECK(!mem64(r, 1, STACK + 48, &v));
	btsdec_recover_free(r);
}

/* bts with a register's bit offset writes outside its operand. */
static void test_bit_string(void)
{
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	set_image(STACK, 32, 0x33);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\x0f\xab\x04\x24"));	/* bts DWORD PTR [rsp],eax */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK(!mem64(r, 0, STACK + 32, &v));
	CHECK(mem64(r, 1, STACK + 32, &v) && v == 0x33);
	btsdec_recover_free(r);
}

/* A fault part-way through rep stos: the final rcx and rdi are its, the
 * state before it is not the final one. */
static void test_partial_fault(void)
{
	struct btsdec_recover *r;

	start();
	reg(RCX, 2);
	reg(RDI, STACK + 3);
	reg(RBX, 7);
	reg(RIP, BASE + 10);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\xb9\x05\x00\x00\x00\xbb\x07\x00\x00\x00"));
	CHECK_EQ(btsdec_recover_add_fault(r, BASE + 10, (const uint8_t *)"\x48\x89\xc1", 3), 0);
	CHECK_EQ(btsdec_recover_add_fault(r, BASE + 10, (const uint8_t *)"\xf3\xaa", 2), 1);
	CHECK_EQ(btsdec_recover_run(r), 0);		/* rep stos BYTE PTR es:[rdi],al */
	CHECK_REG(r, 2, RCX, 5);
	CHECK_KNOWN(r, 2, RDI, 0);
	CHECK_REG(r, 2, RBX, 7);
	CHECK_REG(r, 3, RCX, 2);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A syscall writes memory only as its number says: getpid nothing, read
 * its buffer (anything, for the engine). */
static void test_syscall(void)
{
	struct btsdec_recover *r;
	uint64_t v;

	for (int nr = 39; nr >= 0; nr -= 39) {	/* getpid, then read */
		char code[] = "\xb8\x00\x00\x00\x00"	/* mov eax,NR */
			      "\x0f\x05";		/* syscall */

		code[1] = (char)nr;
		start();
		reg(RSP, STACK);
		set_image(STACK, 0, 9);
		r = engine();
		REQUIRE(r);
		REQUIRE(ADD(r, BASE, code));
		CHECK_EQ(btsdec_recover_run(r), 0);
		CHECK_EQ(mem64(r, 0, STACK, &v) && v == 9, nr == 39);
		CHECK_KNOWN(r, 2, RAX, 0);	/* the kernel's result */
		CHECK_REG(r, 2, RSP, STACK);
		btsdec_recover_free(r);
	}
}

#define F_CF 0x001
#define F_PF 0x004
#define F_AF 0x010
#define F_ZF 0x040
#define F_SF 0x080
#define F_OF 0x800
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)

static void test_flags(void)
{
	static const char code[] =
		"\xb8\xff\x00\x00\x00"		/* mov eax,0xff */
		"\xbb\x01\x00\x00\x00"		/* mov ebx,0x1 */
		"\x00\xd8"			/* add al,bl */
		"\x0f\x94\xc1"			/* sete cl */
		"\x48\x3d\x00\x01\x00\x00"	/* cmp rax,0x100 */
		"\x48\x0f\x45\xd6"		/* cmovne rdx,rsi */
		"\x48\x0f\x44\xf7";		/* cmove rsi,rdi */
	struct btsdec_recover *r;
	struct btsdec_regs s;

	start();
	reg(RSI, 0x11);
	reg(RDI, 0x22);		/* everything else unknown at the end */
	r = RUN(code);
	REQUIRE(r);
	CHECK_EQ(btsdec_recover_regs_at(r, 3, &s), 0);
	CHECK_EQ(s.known[RFL] & F_ARITH, F_ARITH);	/* 0xff + 1 in 8 bits */
	CHECK_EQ(s.val[RFL] & F_ARITH, F_CF | F_PF | F_AF | F_ZF);
	CHECK_REG(r, 3, RAX, 0);
	CHECK_KNOWN(r, 4, RCX, 0xff);
	CHECK_EQ(btsdec_recover_regs_at(r, 4, &s), 0);
	CHECK_EQ(s.val[RCX] & 0xff, 1);
	CHECK_REG(r, 6, RDX, 0x11);		/* cmovne moved */
	CHECK_KNOWN(r, 0, RDX, 0);
	CHECK_REG(r, 0, RSI, 0x11);		/* cmove did not */
	CHECK_REG(r, 7, RSI, 0x11);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* Flags no one knows: setcc and cmov on them are unknown. */
static void test_flags_unknown(void)
{
	static const char code[] =
		"\x48\x39\xd8"		/* cmp rax,rbx */
		"\x0f\x94\xc1"		/* sete cl */
		"\x48\x0f\x45\xd6";	/* cmovne rdx,rsi */
	struct btsdec_recover *r;

	start();
	reg(RSI, 0x11);
	reg(RDX, 0x22);		/* rax, rbx, rcx, eflags unknown */
	r = RUN(code);
	REQUIRE(r);
	CHECK_KNOWN(r, 2, RCX, 0);
	CHECK_KNOWN(r, 2, RFL, 0);
	CHECK_KNOWN(r, 2, RDX, 0);	/* moved or not: 0x11 or unknown */
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A conditional jump's outcome, from the trace, proves the flag it tests. */
static void test_jcc(void)
{
	struct btsdec_recover *r;
	struct btsdec_regs s;

	start();
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\x48\x85\xc0\x74\x0e"));	/* test rax,rax; je BASE+0x13 */
	REQUIRE(ADD(r, BASE + 0x13, "\x90"));		/* nop */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_EQ(btsdec_recover_regs_at(r, 1, &s), 0);
	CHECK(s.known[RFL] & F_ZF);
	CHECK(s.val[RFL] & F_ZF);
	CHECK_EQ(btsdec_recover_regs_at(r, 0, &s), 0);
	CHECK(!(s.known[RFL] & F_ZF));		/* test wrote it */
	btsdec_recover_free(r);
}

/* Instructions not modelled make what they write unknown, nothing else. */
static void test_unmodelled(void)
{
	static const char code[] =
		"\xb8\x01\x00\x00\x00"		/* mov eax,0x1 */
		"\xba\x02\x00\x00\x00"		/* mov edx,0x2 */
		"\xbb\x03\x00\x00\x00"		/* mov ebx,0x3 */
		"\x0f\x31"			/* rdtsc */
		"\x66\x48\x0f\x7e\xc1";		/* movq rcx,xmm0 */
	struct btsdec_recover *r;

	start();
	r = RUN(code);
	REQUIRE(r);
	CHECK_REG(r, 3, RAX, 1);
	CHECK_REG(r, 3, RDX, 2);
	CHECK_KNOWN(r, 4, RAX, 0);
	CHECK_KNOWN(r, 4, RDX, 0);
	CHECK_REG(r, 5, RBX, 3);
	CHECK_KNOWN(r, 5, RCX, 0);
	btsdec_recover_free(r);

	start();		/* ld.so's lazy binding: state saves write memory only */
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\xb9\x05\x00\x00\x00"	/* mov ecx,5 */
		    "\x0f\xc7\x24\x24"			/* xsavec [rsp] */
		    "\x0f\xae\x2c\x24"));		/* xrstor [rsp] */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 2, RCX, 5);
	CHECK_REG(r, 3, RCX, 5);
	btsdec_recover_free(r);

	start();		/* loop decrements rcx, no operand says so */
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\xb9\x05\x00\x00\x00\xe2\x00"));	/* mov ecx,5; loop +0 */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 1, RCX, 5);
	CHECK_KNOWN(r, 2, RCX, 0);
	btsdec_recover_free(r);
}

/* AVX-512 forms capstone 4 cannot decode (glibc's strcmp-evex and
 * memmove-evex run them on every AVX-512 CPU) come from Zydis: no gap;
 * a mask compare writes no general register, vpextrd writes eax, a
 * compress store makes the 32 bytes at rdi unknown before it. */
static void test_avx512(void)
{
	static const char code[] =
		"\xb9\x02\x00\x00\x00"		/* mov ecx,0x2 */
		"\x62\xb2\x75\x20\x26\xd1"	/* vptestmb k2,ymm17,ymm17 */
		"\x62\xe3\x7d\x08\x16\xc0\x01"	/* vpextrd eax,xmm16,0x1 */
		"\x62\xe2\x7d\x29\x63\x0f";	/* vpcompressb [rdi]{k1},ymm17 */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RAX, 7);
	reg(RDI, STACK);
	set_image(STACK, 0, 0x1122334455667788ull);
	set_image(STACK, 32, 0x99);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, code) == BASE + sizeof(code) - 1);
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 2, RCX, 2);		/* across vptestmb */
	CHECK_REG(r, 3, RAX, 7);		/* vpextrd's result, the final one */
	CHECK_KNOWN(r, 2, RAX, 0);		/* before it: nothing says */
	CHECK_REG(r, 1, RDI, STACK);		/* written by none */
	CHECK(mem64(r, 4, STACK, &v) && v == 0x1122334455667788ull);
	CHECK(!mem64(r, 3, STACK, &v));		/* the store's bytes, before it */
	CHECK(mem64(r, 3, STACK + 32, &v) && v == 0x99);	/* past its 32 */
	btsdec_recover_free(r);
}

/* Nothing crosses a gap in either direction. */
static void test_gap(void)
{
	struct btsdec_recover *r;

	start();
	reg(RAX, 9);
	reg(RBX, 2);
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, "\xb8\x01\x00\x00\x00"));	/* mov eax,0x1 */
	REQUIRE(btsdec_recover_add_gap(r) == 0);
	REQUIRE(ADD(r, BASE + 0x20, "\xbb\x02\x00\x00\x00"));	/* mov ebx,0x2 */
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 1, RAX, 1);
	CHECK_KNOWN(r, 1, RBX, 0);
	CHECK_REG(r, 2, RAX, 9);
	CHECK_KNOWN(r, 0, RBX, 0);
	CHECK_EQ(btsdec_recover_insn(r, 1, &(uint64_t){ 0 }), -ENODATA);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	/* where rax and memory came from: the gap, not the mov before it */
	{
		struct btsdec_why_value v = { .kind = BTSDEC_WHY_MEM, .size = 8,
					      .addr_known = true, .addr = STACK };
		struct btsdec_why_step s;

		REQUIRE(btsdec_why_step(r, &v, 3, &s) == 0);
		CHECK(s.from == BTSDEC_WHY_GAP && s.insn == 1 && !s.nr_ops);
		REQUIRE(btsdec_why_parse("rax", &v) == 0);
		REQUIRE(btsdec_why_step(r, &v, 3, &s) == 0);
		CHECK(s.from == BTSDEC_WHY_GAP && s.insn == 1 && s.what.val == 9);
	}
	btsdec_recover_free(r);
}

static void test_shift_extend(void)
{
	static const char code[] =
		"\xb8\x81\x00\x00\x00"	/* mov eax,0x81 */
		"\xc1\xe0\x04"		/* shl eax,0x4 */
		"\xb9\x03\x00\x00\x00"	/* mov ecx,0x3 */
		"\x48\xd3\xeb"		/* shr rbx,cl */
		"\xd1\xfa"		/* sar edx,1 */
		"\x6b\xf0\x03"		/* imul esi,eax,0x3 */
		"\x0f\xb6\xf8"		/* movzx edi,al */
		"\x4c\x0f\xbe\xc0"	/* movsx r8,al */
		"\x48\x98";		/* cdqe */
	struct btsdec_recover *r;

	start();
	r = RUN(code);
	REQUIRE(r);
	CHECK_REG(r, 2, RAX, 0x810);
	CHECK_KNOWN(r, 4, RBX, 0xe000000000000000ull);	/* shifted in: zeros */
	CHECK_KNOWN(r, 5, RDX, 0xffffffff00000000ull);	/* a 32-bit write */
	CHECK_REG(r, 9, RSI, 0x1830);
	CHECK_REG(r, 9, RDI, 0x10);
	CHECK_REG(r, 9, R8, 0x10);
	CHECK_REG(r, 9, RAX, 0x810);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

/* A frame: push rbp ... leave, ret: the stack pointer, the frame pointer
 * and a spilled argument recovered backward through memory. */
static void test_frame(void)
{
	static const char code[] =
		"\x55"			/* push rbp */
		"\x48\x89\xe5"		/* mov rbp,rsp */
		"\x48\x83\xec\x20"	/* sub rsp,0x20 */
		"\x48\x89\x7d\xf8"	/* mov QWORD PTR [rbp-0x8],rdi */
		"\x48\x8b\x45\xf8"	/* mov rax,QWORD PTR [rbp-0x8] */
		"\xc9"			/* leave */
		"\xc3";			/* ret */
	struct btsdec_recover *r;
	uint64_t v;

	start();
	reg(RSP, STACK);
	reg(RAX, 0x99);
	reg(RBP, 0x7777);
	reg(RIP, 0x500001);		/* rdi unknown at the end */
	r = engine();
	REQUIRE(r);
	REQUIRE(ADD(r, BASE, code));
	REQUIRE(ADD(r, 0x500000, "\x90"));
	CHECK_EQ(btsdec_recover_run(r), 0);
	CHECK_REG(r, 0, RSP, STACK - 8);
	CHECK_REG(r, 0, RBP, 0x7777);
	CHECK_REG(r, 3, RSP, STACK - 16 - 0x20);
	CHECK_REG(r, 3, RDI, 0x99);
	CHECK_REG(r, 8, RDI, 0x99);
	CHECK(mem64(r, 6, STACK - 8, &v) && v == 0x500000);
	CHECK_EQ(btsdec_recover_conflicts(r), 0);
	btsdec_recover_free(r);
}

static void test_why_chain(void)
{
	static const char code[] =
		"\xb8\x05\x00\x00\x00"		/* mov eax,0x5 */
		"\x83\xc0\x03"			/* add eax,0x3 */
		"\x31\xc9"			/* xor ecx,ecx */
		"\x48\x89\x44\x24\xf8"		/* mov [rsp-0x8],rax */
		"\x48\x8b\x54\x24\xf8";		/* mov rdx,[rsp-0x8] */
	struct btsdec_why_value v;
	struct btsdec_why_step s;
	struct btsdec_why w;
	struct btsdec_recover *r;

	start();
	reg(RSP, STACK);
	reg(RDX, 8);
	reg(RIP, BASE + 20);
	r = RUN(code);
	REQUIRE(r);
	REQUIRE(btsdec_why_parse("$rdx", &v) == 0);
	REQUIRE(btsdec_why_explain(r, &v, 5, 8, 16, &w) == 0);
	REQUIRE(w.nr == 4);	/* immediates end a chain: no link of their own */
	/* rdx <- the load at 4 from [rsp-8] */
	CHECK_EQ(w.steps[0].from, BTSDEC_WHY_INSN);
	CHECK_EQ(w.steps[0].insn, 4);
	CHECK_EQ(w.steps[0].what.val, 8);
	CHECK_EQ(w.steps[0].ops[0].kind, BTSDEC_WHY_MEM);
	CHECK_EQ(w.steps[0].ops[0].addr, STACK - 8);
	CHECK_EQ(w.steps[0].ops[0].val, 8);
	/* [rsp-8] <- the store at 3, of rax */
	CHECK_EQ(w.steps[1].insn, 3);
	CHECK_EQ(w.steps[1].parent, 0);
	CHECK_EQ(w.steps[1].ops[0].reg, RAX);
	/* rax <- add eax,3 at 1: eax = 5, 3 */
	CHECK_EQ(w.steps[2].insn, 1);
	CHECK_EQ(w.steps[2].ops[0].val, 5);
	CHECK_EQ(w.steps[2].ops[1].kind, BTSDEC_WHY_IMM);
	CHECK_EQ(w.steps[2].ops[1].val, 3);
	/* eax <- mov eax,5 at 0: a constant, the chain ends */
	CHECK_EQ(w.steps[3].insn, 0);
	CHECK_EQ(w.steps[3].ops[0].val, 5);
	CHECK(!w.steps[3].source[0]);
	btsdec_why_fini(&w);
	/* rcx: zeroed, from nothing; rbx: never written; depth 0: one link */
	REQUIRE(btsdec_why_parse("ecx", &v) == 0);
	REQUIRE(btsdec_why_step(r, &v, 5, &s) == 0);
	CHECK_EQ(s.insn, 2);
	CHECK(!s.source[0] && !s.source[1]);
	REQUIRE(btsdec_why_parse("rbx", &v) == 0);
	REQUIRE(btsdec_why_step(r, &v, 5, &s) == 0);
	CHECK_EQ(s.from, BTSDEC_WHY_BEFORE);
	CHECK_EQ(s.what.known, 0);	/* and unknown: never guessed */
	REQUIRE(btsdec_why_explain(r, &v, 5, 0, 16, &w) == 0);
	CHECK_EQ(w.nr, 1);
	btsdec_why_fini(&w);
	CHECK_EQ(btsdec_why_step(r, &v, 6, &s), -ERANGE);
	btsdec_recover_free(r);
}

static void test_why_maybe(void)
{
	static const char code[] =
		"\xb8\x05\x00\x00\x00"		/* mov eax,0x5 */
		"\x0f\xba\xe0\x03"		/* bt eax,0x3: not modelled */
		"\xbb\x07\x00\x00\x00"		/* mov ebx,0x7 */
		"\x0f\x44\xcb"			/* cmove ecx,ebx: ZF not known */
		"\x48\x89\x44\x24\xf8"		/* mov [rsp-0x8],rax */
		"\x0f\xba\x64\x24\xf8\x01";	/* bt dword [rsp-0x8],1 */
	struct btsdec_why_value v;
	struct btsdec_why_step s;
	struct btsdec_recover *r;

	start();
	reg(RSP, STACK);
	r = RUN(code);
	REQUIRE(r);
	REQUIRE(btsdec_why_parse("eax", &v) == 0);
	REQUIRE(btsdec_why_step(r, &v, 6, &s) == 0);
	CHECK(s.from == BTSDEC_WHY_INSN && s.insn == 1 && s.maybe);	/* not "bt wrote it" */
	REQUIRE(btsdec_why_parse("ecx", &v) == 0);
	REQUIRE(btsdec_why_step(r, &v, 6, &s) == 0);
	CHECK(s.insn == 3 && s.maybe);
	v = (struct btsdec_why_value){ .kind = BTSDEC_WHY_MEM, .size = 4, .addr_known = true,
				       .addr = STACK - 8 };
	REQUIRE(btsdec_why_step(r, &v, 6, &s) == 0);
	CHECK(s.from == BTSDEC_WHY_ALIAS && s.insn == 5);	/* may, not did */
	REQUIRE(btsdec_why_step(r, &v, 5, &s) == 0);
	CHECK(s.from == BTSDEC_WHY_INSN && s.insn == 4 && !s.maybe);
	btsdec_recover_free(r);
}

static void test_why_parse(void)
{
	struct btsdec_why_value v;

	CHECK_EQ(btsdec_why_parse("dh", &v), 0);
	CHECK(v.reg == RDX && v.size == 1 && v.shift == 8);
	CHECK_EQ(btsdec_why_parse("r9d", &v), 0);
	CHECK(v.reg == BTSDEC_REG_R9 && v.size == 4);
	CHECK_EQ(btsdec_why_parse("r10b", &v), 0);
	CHECK_STR(btsdec_why_reg_name(&v), "r10l");
	CHECK_EQ(btsdec_why_parse("$pc", &v), 0);
	CHECK_EQ(v.reg, RIP);
	CHECK_EQ(btsdec_why_parse("*0x1000,4", &v), 0);
	CHECK(v.kind == BTSDEC_WHY_MEM && v.addr == 0x1000 && v.size == 4);
	CHECK_EQ(btsdec_why_parse("0x1000,2", &v), 0);
	CHECK_EQ(btsdec_why_parse("*0x1000", &v), 0);
	CHECK_EQ(v.size, 8);
	CHECK_EQ(btsdec_why_parse("xmm0", &v), -EINVAL);
	CHECK_EQ(btsdec_why_parse("*0x1000,3", &v), -EINVAL);
	CHECK_EQ(btsdec_why_parse("*-1", &v), -EINVAL);
	CHECK_EQ(btsdec_why_parse("*", &v), -EINVAL);
	CHECK_EQ(btsdec_why_parse("", &v), -EINVAL);
}

static const struct test_case tests[] = {
	TEST_CASE(test_inverse),
	TEST_CASE(test_stack),
	TEST_CASE(test_call_ret),
	TEST_CASE(test_unknown_load),
	TEST_CASE(test_unknown_store),
	TEST_CASE(test_rmw),
	TEST_CASE(test_limit_mem),
	TEST_CASE(test_wide_store),
	TEST_CASE(test_bit_string),
	TEST_CASE(test_partial_fault),
	TEST_CASE(test_syscall),
	TEST_CASE(test_string),
	TEST_CASE(test_flags),
	TEST_CASE(test_flags_unknown),
	TEST_CASE(test_jcc),
	TEST_CASE(test_unmodelled),
	TEST_CASE(test_avx512),
	TEST_CASE(test_gap),
	TEST_CASE(test_shift_extend),
	TEST_CASE(test_frame),
	TEST_CASE(test_why_chain),
	TEST_CASE(test_why_maybe),
	TEST_CASE(test_why_parse),
};

int main(void)
{
	return RUN_TESTS(tests);
}
