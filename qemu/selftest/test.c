/*
 * Bare-metal self-test of the BTS and LBR models (qemu/patches):
 * CPUID, the MSRs, and the exact records of known branch sequences
 * (boot.S), checked in the guest's DS buffer and LBR MSRs; every expected
 * BTS record is also printed ("exp KIND FROM TO SLOT BASE"), every expected LBR
 * push too ("lexp TOS TYPE KIND SRC_CPL CPL FROM TO"), and the PMU's
 * overflows, PMIs and MSR accesses ("pexp ... COUNT CTR": counter CTR's
 * count in the entry; "mexp"), for the host to
 * compare with the oracle logs.
 * Multiboot command line: empty (the BTS tests, on a CPU without lbr=on),
 * "lbr" (the LBR tests, on a CPU with lbr=on), "pmu" (the PMU tests, on a
 * CPU with lbr=on,pmu=on), "amd" (LbrExtV2 and PerfMonV2 with six core
 * counters, on VM_AMD_CPU, a Zen 4), "zen5" (the same on VM_ZEN5_CPU, a
 * Zen 5), "archlbr" (Architectural LBR, arch-lbr.c, on VM_ARCH_LBR_CPU),
 * or one fatal mode, which
 * must make the model stop QEMU: fatal-mmio, fatal-btint, fatal-unmapped,
 * fatal-ro, fatal-ds-unmapped.
 * Exit via isa-debug-exit: 0x10 all passed (QEMU status 33), 0x11 failed.
 */
#include <stdint.h>

#define DEBUGCTL 0x1d9
#define DS_AREA 0x600
#define MISC_ENABLE 0x1a0
#define TR (1u << 6)
#define BTS (1u << 7)
#define BTINT (1u << 8)
#define OFF_OS (1u << 9)
#define OFF_USR (1u << 10)
#define LBR (1u << 0)
#define FREEZE_LBRS_ON_PMI (1u << 11)
#define PERF_CAPABILITIES 0x345
#define LBR_SELECT 0x1c8
#define LBR_TOS 0x1c9
#define LBR_FROM 0x680
#define LBR_TO 0x6c0
#define LBR_INFO 0xdc0
#define LBR_DEPTH 32
/* LBR_SELECT bits; the branch types are the numbers of their bits */
#define CPL_EQ_0 (1u << 0)
#define CPL_NEQ_0 (1u << 1)
enum { JCC = 2, REL_CALL, IND_CALL, RET, IND_JMP, REL_JMP, FAR };

extern char b_j1[], b_t1[], b_jz[], b_t2[], b_call[], b_fn[], b_ret_to[],
	b_loop[], b_jecxz[], b_t4[], b_jind[], b_t5[], b_cind[], b_ret2_to[],
	b_int[], isr30[], isr30_iret[], b_after_int[], b_ud[], isr6[],
	isr6_iret[], b_after_ud[], b_ljmp[], b_t6[], b_lcall[], b_farfn[],
	b_lret[], b_after_lcall[];
extern char c_j1[], c_j2[], c_j3[], c_j4[], c_j5[], c_j6[], c_end[];
extern char d_iret[], d_user[], d_uj[], d_u1[], d_int[], isr80[], d_kj[],
	d_k1[];
extern char t_j[], t_end[];
extern char w_start[], w_end[], e_j[], e_1[], isr1[];
extern char isr13[], isr_unexpected[];
extern volatile uint32_t ud_count, gp_count, db_count, e_debugctl;
extern volatile uint32_t nmi_count, nmi_eip;
extern char isr2[];
void pmu_seq(uint32_t global_ctrl_lo, uint32_t global_ctrl_hi);
void load_segments(void);
void seq_b(uint32_t debugctl);
void seq_c(uint32_t debugctl);
void seq_d(uint32_t debugctl);
void touch(uint32_t debugctl);
void seq_w(uint32_t debugctl);
void seq_e(uint32_t debugctl);
void cs_seq(uint32_t debugctl);
void cs_empty(uint32_t debugctl);
extern char cs_c1[], cs_f1[], cs_c2[], cs_f2[], cs_c4[], cs_f4[], cs_f4r[],
	cs_c3[], cs_f3[];

uint32_t tss[26];
static uint64_t gdt[6];
static uint64_t idt[256];
static uint32_t pd[1024] __attribute__((aligned(4096)));
static uint8_t ds_area[64] __attribute__((aligned(64)));
static uint8_t buffer[64 * 24] __attribute__((aligned(4096)));
static int failures, ntest, rec_size;

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static void putc_(char c) { outb(0x3f8, c); }
static void puts_(const char *s) { while (*s) putc_(*s++); }
static void puthex(uint64_t v)
{
	puts_("0x");
	for (int i = 60; i >= 0; i -= 4)
		putc_("0123456789abcdef"[(v >> i) & 15]);
}

static void quit(int code)
{
	outb(0xf4, code);
	for (;;)
		asm volatile("hlt");
}

static void ok(int cond, const char *what)
{
	ntest++;
	if (!cond) {
		failures++;
		puts_("not ");
	}
	puts_("ok - ");
	puts_(what);
	putc_('\n');
}

static uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

/* -1 if WRMSR raised #GP (isr13 skips the instruction) */
static int wrmsr_safe(uint32_t msr, uint64_t v)
{
	uint32_t before = gp_count;

	asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
		     "d"((uint32_t)(v >> 32)) : "memory");
	return gp_count != before ? -1 : 0;
}

static void cpuid(uint32_t leaf, uint32_t r[4])
{
	asm volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		     : "a"(leaf), "c"(0));
}

static uint64_t seg(uint32_t base, uint32_t limit, uint32_t type_dpl_flags)
{
	return (limit & 0xffff) | (uint64_t)(base & 0xffffff) << 16 |
	       (uint64_t)type_dpl_flags << 40 |
	       (uint64_t)((limit >> 16) & 15) << 48 |
	       (uint64_t)(base >> 24) << 56;
}

static void gate(int vec, void *fn, int dpl)
{
	uint32_t off = (uint32_t)fn;

	idt[vec] = (off & 0xffff) | (uint64_t)0x08 << 16 |
		   (uint64_t)(0x8e | dpl << 5) << 40 |
		   (uint64_t)(off >> 16) << 48;
}

static void setup_cpu(void)
{
	struct { uint16_t limit; uint32_t base; } __attribute__((packed)) d;

	gdt[1] = seg(0, 0xfffff, 0xc09a);	/* 0x08 kernel code */
	gdt[2] = seg(0, 0xfffff, 0xc092);	/* 0x10 kernel data */
	gdt[3] = seg(0, 0xfffff, 0xc0fa);	/* 0x1b user code */
	gdt[4] = seg(0, 0xfffff, 0xc0f2);	/* 0x23 user data */
	gdt[5] = seg((uint32_t)tss, sizeof(tss) - 1, 0x0089);	/* 0x28 TSS */
	tss[2] = 0x10;				/* ss0 */
	d.limit = sizeof(gdt) - 1;
	d.base = (uint32_t)gdt;
	asm volatile("lgdt %0" : : "m"(d));
	load_segments();
	asm volatile("ltr %w0" : : "r"(0x28));
	for (int i = 0; i < 256; i++)
		gate(i, isr_unexpected, 0);
	gate(1, isr1, 0);
	gate(2, isr2, 0);
	gate(6, isr6, 0);
	gate(13, isr13, 0);
	gate(0x30, isr30, 0);
	gate(0x80, isr80, 3);
	d.limit = sizeof(idt) - 1;
	d.base = (uint32_t)idt;
	asm volatile("lidt %0" : : "m"(d));
}

/* DS area: buffer base, index, absolute maximum (64-bit or 32-bit words) */
static void ds_setup(uint32_t base, uint32_t nrec)
{
	int w = rec_size / 3;

	for (unsigned i = 0; i < sizeof(ds_area); i++)
		ds_area[i] = 0;
	*(uint32_t *)(ds_area + 0 * w) = base;
	*(uint32_t *)(ds_area + 1 * w) = base;
	*(uint32_t *)(ds_area + 2 * w) = base + nrec * rec_size;
	*(uint32_t *)(ds_area + 3 * w) = base + nrec * rec_size;
}

static uint32_t ds_index(void)
{
	return *(uint32_t *)(ds_area + rec_size / 3);
}

static uint64_t word(const uint8_t *p)
{
	return rec_size == 24 ? *(const uint64_t *)p : *(const uint32_t *)p;
}

struct rec { int kind; void *from, *to; };

/*
 * Compares the buffer with the records EXP written in order into NSLOTS
 * slots (wrapping), prints each as "exp" for the host, returns 1 if equal.
 */
static int check_records(const struct rec *exp, int n, int nslots)
{
	int good = ds_index() == (uint32_t)buffer + (n % nslots) * rec_size;

	for (int i = 0; i < n; i++) {
		uint8_t *slot = buffer + (i % nslots) * rec_size;

		puts_("exp ");
		putc_('0' + exp[i].kind);
		putc_(' ');
		puthex((uint32_t)exp[i].from);
		putc_(' ');
		puthex((uint32_t)exp[i].to);
		putc_(' ');
		puthex((uint32_t)slot);
		putc_(' ');
		puthex((uint32_t)buffer);
		putc_('\n');
		if (i + nslots < n)
			continue;	/* overwritten */
		if (word(slot) != (uint32_t)exp[i].from ||
		    word(slot + rec_size / 3) != (uint32_t)exp[i].to ||
		    word(slot + 2 * rec_size / 3) != 0) {
			puts_("# slot ");
			puthex(i % nslots);
			puts_(" has ");
			puthex(word(slot));
			putc_(' ');
			puthex(word(slot + rec_size / 3));
			putc_('\n');
			good = 0;
		}
	}
	if (!good) {
		puts_("# index ");
		puthex(ds_index());
		putc_('\n');
	}
	return good;
}

static void clear_buffer(void)
{
	for (unsigned i = 0; i < sizeof(buffer); i++)
		buffer[i] = 0xee;
}

static void test_msrs(void)
{
	uint32_t r[4];
	uint64_t v;

	cpuid(1, r);
	ok(r[3] & (1u << 21), "CPUID.1:EDX.DS");
	ok(r[2] & (1u << 4), "CPUID.1:ECX.DS-CPL");
	v = rdmsr(MISC_ENABLE);
	ok(!(v & (1u << 11)), "IA32_MISC_ENABLE.BTS_UNAVAILABLE clear");
	ok(v & (1u << 12), "IA32_MISC_ENABLE.PEBS_UNAVAILABLE set");

	ok(wrmsr_safe(DEBUGCTL, 0x5f43) == 0 && rdmsr(DEBUGCTL) == 0x5f43,
	   "DEBUGCTL 0x5f43 (all but BTS) reads back");
	ok(wrmsr_safe(DEBUGCTL, 0x5f83) == 0 && rdmsr(DEBUGCTL) == 0x5f83,
	   "DEBUGCTL 0x5f83 (all but TR) reads back");
	ok(wrmsr_safe(DEBUGCTL, 1u << 2) == -1, "DEBUGCTL bit 2 is #GP");
	ok(wrmsr_safe(DEBUGCTL, 1u << 13) == -1, "DEBUGCTL bit 13 is #GP");
	ok(wrmsr_safe(DEBUGCTL, 1u << 15) == -1, "DEBUGCTL bit 15 is #GP");
	ok(wrmsr_safe(DEBUGCTL, 1ull << 63) == -1, "DEBUGCTL bit 63 is #GP");
	ok(rdmsr(DEBUGCTL) == 0x5f83, "DEBUGCTL unchanged by a #GP");
	ok(wrmsr_safe(DEBUGCTL, 0) == 0 && rdmsr(DEBUGCTL) == 0, "DEBUGCTL 0");

	ok(wrmsr_safe(DS_AREA, 0xffff800000001000ull) == 0 &&
	   rdmsr(DS_AREA) == 0xffff800000001000ull, "DS_AREA canonical");
	ok(wrmsr_safe(DS_AREA, 0x0100000000000000ull) == -1 &&
	   wrmsr_safe(DS_AREA, 0x8000000000001000ull) == -1,
	   "DS_AREA non-canonical is #GP");
	ok(rdmsr(DS_AREA) == 0xffff800000001000ull, "DS_AREA unchanged by #GP");

	/* without lbr=on: no LBR model, nothing changed for the CPU */
	ok(!(r[2] & (1u << 15)), "no lbr=on: CPUID.1:ECX.PDCM clear");
	ok(rdmsr(PERF_CAPABILITIES) == 0, "no lbr=on: PERF_CAPABILITIES 0");
	ok(wrmsr_safe(LBR_SELECT, 5) == 0 && rdmsr(LBR_SELECT) == 0 &&
	   wrmsr_safe(LBR_TOS, 3) == 0 && rdmsr(LBR_TOS) == 0 &&
	   wrmsr_safe(LBR_FROM, 0x1234) == 0 && rdmsr(LBR_FROM) == 0,
	   "no lbr=on: LBR MSRs ignore writes, read 0");
}

static void test_branches(void)
{
	static const struct rec exp[] = {
		{ 0, b_j1, b_t1 }, { 0, b_jz, b_t2 }, { 0, b_call, b_fn },
		{ 0, b_fn, b_ret_to }, { 0, b_loop, b_loop },
		{ 0, b_loop, b_loop }, { 0, b_jecxz, b_t4 },
		{ 0, b_jind, b_t5 }, { 0, b_cind, b_fn },
		{ 0, b_fn, b_ret2_to }, { 2, b_int, isr30 },
		{ 1, isr30_iret, b_after_int }, { 2, b_ud, isr6 },
		{ 1, isr6_iret, b_after_ud }, { 1, b_ljmp, b_t6 },
		{ 1, b_lcall, b_farfn }, { 1, b_lret, b_after_lcall },
	};
	uint32_t ud = ud_count;

	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	wrmsr_safe(DS_AREA, (uint32_t)ds_area);
	seq_b(TR | BTS);
	ok(ud_count == ud + 1, "ud2 was delivered");
	ok(check_records(exp, sizeof(exp) / sizeof(exp[0]), 64),
	   "each branch kind: one record, from and to exact");

	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_b(TR);
	seq_b(BTS);
	ok(ds_index() == (uint32_t)buffer && buffer[0] == 0xee,
	   "TR or BTS alone: no record");
}

static void test_wrap(void)
{
	static const struct rec exp[] = {
		{ 0, c_j1, c_j2 }, { 0, c_j2, c_j3 }, { 0, c_j3, c_j4 },
		{ 0, c_j4, c_j5 }, { 0, c_j5, c_j6 }, { 0, c_j6, c_end },
	};

	clear_buffer();
	ds_setup((uint32_t)buffer, 4);
	seq_c(TR | BTS);
	ok(check_records(exp, 6, 4), "circular: wraps to the base at the "
	   "absolute maximum");
}

static void test_cpl(void)
{
	static const struct rec all[] = {
		{ 1, d_iret, d_user }, { 0, d_uj, d_u1 }, { 2, d_int, isr80 },
		{ 0, d_kj, d_k1 },
	};
	static const struct rec user_only[] = {
		{ 0, d_uj, d_u1 }, { 2, d_int, isr80 },
	};
	static const struct rec os_only[] = {
		{ 1, d_iret, d_user }, { 0, d_kj, d_k1 },
	};

	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_d(TR | BTS);
	ok(check_records(all, 4, 64), "CPL filter off: all four");
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_d(TR | BTS | OFF_OS);
	ok(check_records(user_only, 2, 64), "BTS_OFF_OS: user sources "
	   "only, the int from user to kernel included");
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_d(TR | BTS | OFF_USR);
	ok(check_records(os_only, 2, 64), "BTS_OFF_USR: kernel sources "
	   "only, the iret to user included");
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_d(TR | BTS | OFF_OS | OFF_USR);
	ok(ds_index() == (uint32_t)buffer, "both: none");
}

/*
 * The LBR model (lbr=on).  An expected push: its MSR_LBR_SELECT type, its
 * kind in the oracle log (0 near, 1 far, 2 interrupt), the CPL of its
 * source and the one it ends in, from and to.
 */
struct lrec { int type, kind, src_cpl, cpl; void *from, *to; };

static uint64_t lbr_from(int i) { return rdmsr(LBR_FROM + i); }
static uint64_t lbr_to(int i) { return rdmsr(LBR_TO + i); }
static uint64_t lbr_info(int i) { return rdmsr(LBR_INFO + i); }

/* What perf does to reset the LBRs: zeros everywhere, TOS 0 */
static void lbr_reset(void)
{
	for (int i = 0; i < LBR_DEPTH; i++) {
		wrmsr_safe(LBR_FROM + i, 0);
		wrmsr_safe(LBR_TO + i, 0);
		wrmsr_safe(LBR_INFO + i, 0);
	}
	wrmsr_safe(LBR_TOS, 0);
}

static int lbr_all_zero(void)
{
	for (int i = 0; i < LBR_DEPTH; i++)
		if (lbr_from(i) || lbr_to(i) || lbr_info(i))
			return 0;
	return rdmsr(LBR_TOS) == 0;
}

static void put_lexp(int tos, const struct lrec *e)
{
	puts_("lexp ");
	puthex(tos);
	putc_(' ');
	putc_('0' + e->type);
	putc_(' ');
	putc_('0' + e->kind);
	putc_(' ');
	putc_('0' + e->src_cpl);
	putc_(' ');
	putc_('0' + e->cpl);
	putc_(' ');
	puthex((uint32_t)e->from);
	putc_(' ');
	puthex((uint32_t)e->to);
	putc_('\n');
}

/*
 * After lbr_reset() and N pushes EXP: push i went to index (i + 1) % 32
 * (TOS is incremented, then written), the newest 32 are in the stack,
 * INFO is 0 (MISPRED clear, no cycle count), untouched entries are still
 * 0, TOS is N % 32.  Prints each push as "lexp" for the host.
 */
static int check_lbr(const struct lrec *exp, int n)
{
	int good = rdmsr(LBR_TOS) == (uint64_t)(n % LBR_DEPTH);

	for (int i = 0; i < n; i++) {
		int idx = (i + 1) % LBR_DEPTH;

		put_lexp(idx, &exp[i]);
		if (i + LBR_DEPTH < n)
			continue;	/* overwritten */
		if (lbr_from(idx) != (uint32_t)exp[i].from ||
		    lbr_to(idx) != (uint32_t)exp[i].to || lbr_info(idx) != 0) {
			puts_("# entry ");
			puthex(idx);
			puts_(" has ");
			puthex(lbr_from(idx));
			putc_(' ');
			puthex(lbr_to(idx));
			putc_(' ');
			puthex(lbr_info(idx));
			putc_('\n');
			good = 0;
		}
	}
	for (int i = n + 1; i <= LBR_DEPTH; i++)
		if (lbr_from(i % LBR_DEPTH) || lbr_to(i % LBR_DEPTH))
			good = 0;	/* nothing beyond the N pushes */
	if (!good) {
		puts_("# TOS ");
		puthex(rdmsr(LBR_TOS));
		putc_('\n');
	}
	return good;
}

/*
 * MSR = V, read back, MSR = 0, with no branch in between (an LBR on would
 * push it, and the oracle log would have it)
 */
static uint32_t msr_roundtrip(uint32_t msr, uint32_t v)
{
	uint32_t got;

	asm volatile("xor %%edx, %%edx; wrmsr; rdmsr; mov %%eax, %0;"
		     "xor %%eax, %%eax; xor %%edx, %%edx; wrmsr"
		     : "=&r"(got), "+a"(v) : "c"(msr) : "edx", "memory");
	return got;
}

static void test_lbr_msrs(void)
{
	uint32_t r[4];
	int rw = 1, zero;

	cpuid(1, r);
	ok(r[2] & (1u << 15), "lbr=on: CPUID.1:ECX.PDCM");
	ok((rdmsr(PERF_CAPABILITIES) & 0x3f) == 5,
	   "lbr=on: PERF_CAPABILITIES.LBR_FMT = 5 (LBR_INFO)");
	ok(msr_roundtrip(DEBUGCTL, LBR | FREEZE_LBRS_ON_PMI) ==
	   (LBR | FREEZE_LBRS_ON_PMI) && rdmsr(DEBUGCTL) == 0,
	   "DEBUGCTL LBR | FREEZE_LBRS_ON_PMI reads back");
	ok(wrmsr_safe(DEBUGCTL, 1u << 2) == -1 &&
	   wrmsr_safe(DEBUGCTL, 1u << 13) == -1 &&
	   wrmsr_safe(DEBUGCTL, 1ull << 63) == -1 && rdmsr(DEBUGCTL) == 0,
	   "DEBUGCTL bits 2, 13, 63 are still #GP");
	ok(wrmsr_safe(LBR_SELECT, 0x1ff) == 0 && rdmsr(LBR_SELECT) == 0x1ff,
	   "LBR_SELECT 0x1ff reads back");
	ok(wrmsr_safe(LBR_SELECT, 0x3ff) == 0 && rdmsr(LBR_SELECT) == 0x3ff &&
	   wrmsr_safe(LBR_SELECT, 1u << 10) == -1 &&
	   rdmsr(LBR_SELECT) == 0x3ff,
	   "LBR_SELECT EN_CALLSTACK reads back, bit 10 is #GP");
	wrmsr_safe(LBR_SELECT, 0);
	ok(wrmsr_safe(LBR_TOS, 31) == 0 && rdmsr(LBR_TOS) == 31 &&
	   wrmsr_safe(LBR_TOS, 32) == -1 && rdmsr(LBR_TOS) == 31,
	   "TOS 31 reads back, 32 is #GP");
	for (int i = 0; i < LBR_DEPTH; i++) {
		uint64_t f = 0xffff800000000000ull | (i << 12 | 1);
		uint64_t t = 0x00007fff00000000ull | (i << 12 | 2);
		uint64_t inf = (1ull << 63) | (1ull << 62) | (1ull << 61) | i;

		if (wrmsr_safe(LBR_FROM + i, f) || wrmsr_safe(LBR_TO + i, t) ||
		    wrmsr_safe(LBR_INFO + i, inf) || lbr_from(i) != f ||
		    lbr_to(i) != t || lbr_info(i) != inf)
			rw = 0;
	}
	ok(rw, "32 FROM_IP, TO_IP, LBR_INFO read back what was written");
	ok(wrmsr_safe(LBR_FROM + 3, 0x0100000000000000ull) == -1 &&
	   wrmsr_safe(LBR_TO + 4, 0x8000000000001000ull) == -1 &&
	   wrmsr_safe(LBR_INFO + 5, 1ull << 60) == -1 &&
	   wrmsr_safe(LBR_INFO + 5, 1ull << 16) == -1 &&
	   lbr_from(3) == (0xffff800000000000ull | (3 << 12 | 1)) &&
	   lbr_info(5) == ((7ull << 61) | 5),
	   "non-canonical FROM/TO and reserved INFO bits are #GP, unchanged");
	lbr_reset();
	zero = lbr_all_zero();
	ok(zero, "writing 0 to every entry and TOS clears the stack");
}

/* seq_b's branches, as LBR entries: all at CPL 0 */
static const struct lrec lbr_b[] = {
	{ REL_JMP, 0, 0, 0, b_j1, b_t1 }, { JCC, 0, 0, 0, b_jz, b_t2 },
	{ REL_CALL, 0, 0, 0, b_call, b_fn }, { RET, 0, 0, 0, b_fn, b_ret_to },
	{ JCC, 0, 0, 0, b_loop, b_loop }, { JCC, 0, 0, 0, b_loop, b_loop },
	{ JCC, 0, 0, 0, b_jecxz, b_t4 }, { IND_JMP, 0, 0, 0, b_jind, b_t5 },
	{ IND_CALL, 0, 0, 0, b_cind, b_fn }, { RET, 0, 0, 0, b_fn, b_ret2_to },
	{ FAR, 2, 0, 0, b_int, isr30 }, { FAR, 1, 0, 0, isr30_iret, b_after_int },
	{ FAR, 2, 0, 0, b_ud, isr6 }, { FAR, 1, 0, 0, isr6_iret, b_after_ud },
	{ FAR, 1, 0, 0, b_ljmp, b_t6 }, { FAR, 1, 0, 0, b_lcall, b_farfn },
	{ FAR, 1, 0, 0, b_lret, b_after_lcall },
};
#define NB (int)(sizeof(lbr_b) / sizeof(lbr_b[0]))

/* the same as BTS records (kind, from, to) */
static const struct rec bts_b[] = {
	{ 0, b_j1, b_t1 }, { 0, b_jz, b_t2 }, { 0, b_call, b_fn },
	{ 0, b_fn, b_ret_to }, { 0, b_loop, b_loop }, { 0, b_loop, b_loop },
	{ 0, b_jecxz, b_t4 }, { 0, b_jind, b_t5 }, { 0, b_cind, b_fn },
	{ 0, b_fn, b_ret2_to }, { 2, b_int, isr30 },
	{ 1, isr30_iret, b_after_int }, { 2, b_ud, isr6 },
	{ 1, isr6_iret, b_after_ud }, { 1, b_ljmp, b_t6 },
	{ 1, b_lcall, b_farfn }, { 1, b_lret, b_after_lcall },
};

/*
 * One LBR stack as the tests below drive it: Intel's model-specific one
 * (lbr_intel) or AMD's LbrExtV2 (lbr_amd): how to clear it, to check it
 * after N pushes, its LBR_SELECT, and what turns it on in trace_msr.
 */
struct lbr_kind {
	void (*reset)(void);
	int (*check)(const struct lrec *exp, int n);
	uint32_t select, on;
};

static const struct lbr_kind lbr_intel = {
	lbr_reset, check_lbr, LBR_SELECT, LBR
};

/* each branch-type filter of LBR_SELECT suppresses its kind only */
static void test_lbr_types(const struct lbr_kind *k)
{
	static const char *const name[] = {
		[JCC] = "JCC", [REL_CALL] = "NEAR_REL_CALL",
		[IND_CALL] = "NEAR_IND_CALL", [RET] = "NEAR_RET",
		[IND_JMP] = "NEAR_IND_JMP", [REL_JMP] = "NEAR_REL_JMP",
		[FAR] = "FAR_BRANCH",
	};
	struct lrec exp[NB];
	int n, good;

	for (int type = JCC; type <= FAR; type++) {
		n = 0;
		for (int i = 0; i < NB; i++)
			if (lbr_b[i].type != type)
				exp[n++] = lbr_b[i];
		k->reset();
		wrmsr_safe(k->select, 1u << type);
		seq_b(k->on);
		wrmsr_safe(k->select, 0);
		good = n < NB && k->check(exp, n);
		puts_("# LBR_SELECT ");
		puts_(name[type]);
		putc_('\n');
		ok(good, "LBR_SELECT: one branch type suppressed, the rest kept");
	}
}

static void test_lbr_branches(void)
{
	lbr_reset();
	seq_b(LBR);
	ok(check_lbr(lbr_b, NB), "LBR: each branch kind, one entry, from and "
	   "to exact, TOS incremented before the write");
	test_lbr_types(&lbr_intel);

	/* BTS on, LBR off: records, no push; then all off: neither */
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	wrmsr_safe(DS_AREA, (uint32_t)ds_area);
	lbr_reset();
	seq_b(TR | BTS);
	ok(check_records(bts_b, NB, 64) && lbr_all_zero(),
	   "DEBUGCTL.LBR clear, BTS on: BTS records, no LBR push");
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	seq_b(0);
	ok(ds_index() == (uint32_t)buffer && lbr_all_zero(),
	   "DEBUGCTL 0: no record, no push");

	/* BTS and LBR together: the same branches in both */
	clear_buffer();
	ds_setup((uint32_t)buffer, 64);
	lbr_reset();
	seq_b(TR | BTS | LBR);
	ok(check_records(bts_b, NB, 64) && check_lbr(lbr_b, NB),
	   "BTS and LBR together: the same branches in both");
}

static void test_lbr_wrap(void)
{
	struct lrec exp[40];

	for (int i = 0; i < 40; i++) {
		exp[i] = (struct lrec){ REL_JMP, 0, 0, 0, w_start + 2 * i,
					 w_start + 2 * i + 2 };
	}
	ok(w_end == w_start + 80, "seq_w: 40 two-byte jumps");
	lbr_reset();
	seq_w(LBR);
	ok(check_lbr(exp, 40), "40 pushes: TOS wraps mod 32, the newest 32 "
	   "kept, the oldest 8 overwritten");
	lbr_reset();
	seq_w(LBR | FREEZE_LBRS_ON_PMI);
	ok(check_lbr(exp, 40), "FREEZE_LBRS_ON_PMI: no effect (no PMI)");
}

/*
 * LBR_SELECT's CPL filters (the CPL the branch ended in) through the ring
 * 0 -> 3 -> 0 round trip of seq_d
 */
static void test_lbr_cpl(const struct lbr_kind *k)
{
	/* iret 0->3, user jmp 3->3, int 3->0, kernel jmp 0->0 */
	static const struct lrec all[] = {
		{ FAR, 1, 0, 3, d_iret, d_user }, { REL_JMP, 0, 3, 3, d_uj, d_u1 },
		{ FAR, 2, 3, 0, d_int, isr80 }, { REL_JMP, 0, 0, 0, d_kj, d_k1 },
	};
	static const struct lrec not_ring0[] = { all[0], all[1] };
	static const struct lrec ring0[] = { all[2], all[3] };

	k->reset();
	seq_d(k->on);
	ok(k->check(all, 4), "LBR_SELECT CPL filters off: all four");
	k->reset();
	wrmsr_safe(k->select, CPL_EQ_0);
	seq_d(k->on);
	ok(k->check(not_ring0, 2), "CPL_EQ_0: branches ending in ring 0 "
	   "suppressed: the iret to user kept, the int from user not");
	k->reset();
	wrmsr_safe(k->select, CPL_NEQ_0);
	seq_d(k->on);
	ok(k->check(ring0, 2), "CPL_NEQ_0: branches ending in ring > 0 "
	   "suppressed: the int from user kept, the iret to user not");
	k->reset();
	wrmsr_safe(k->select, CPL_EQ_0 | CPL_NEQ_0);
	seq_d(k->on);
	ok(k->check(0, 0), "CPL_EQ_0 | CPL_NEQ_0: none");
	wrmsr_safe(k->select, 0);
}

static void test_lbr_debug(void)
{
	static const struct lrec exp[] = { { REL_JMP, 0, 0, 0, e_j, e_1 } };
	uint32_t db = db_count;

	lbr_reset();
	seq_e(LBR);
	ok(db_count == db + 1, "single-step #DB delivered");
	ok(e_debugctl == 0, "#DB clears DEBUGCTL.LBR");
	ok(check_lbr(exp, 1), "#DB not recorded; nothing after it either; the "
	   "stack is kept");
}

/*
 * Call-stack mode (LBR_SELECT.EN_CALLSTACK, every type but near calls and
 * returns suppressed, as Linux's --call-graph lbr): over cs_seq the RET of
 * cs_f4 pops its call (the entry cleared, TOS back), the three open calls
 * stay at TOS, TOS - 1, TOS - 2; a RET on an empty stack pops nothing.
 */
static void test_lbr_call_stack(void)
{
	static const struct lrec c1 = { REL_CALL, 0, 0, 0, cs_c1, cs_f1 },
		c2 = { REL_CALL, 0, 0, 0, cs_c2, cs_f2 },
		c4 = { REL_CALL, 0, 0, 0, cs_c4, cs_f4 },
		c3 = { REL_CALL, 0, 0, 0, cs_c3, cs_f3 };
	uint32_t sel = (1u << 9) | (0x1ff & ~(1u << REL_CALL | 1u << IND_CALL |
					      1u << RET | CPL_EQ_0 | CPL_NEQ_0));
	int good;

	lbr_reset();
	wrmsr_safe(LBR_SELECT, sel);
	cs_seq(LBR);
	put_lexp(1, &c1), put_lexp(2, &c2), put_lexp(3, &c4);
	puts_("lexp 2 5 0 0 0 "), puthex((uint32_t)cs_f4r), putc_(' ');
	puthex((uint32_t)cs_c3), puts_(" 5 0\n");	/* the pop, format 5 */
	put_lexp(3, &c3);
	good = rdmsr(LBR_TOS) == 3 && lbr_from(3) == (uint32_t)cs_c3 &&
	       lbr_from(2) == (uint32_t)cs_c2 && lbr_from(1) == (uint32_t)cs_c1 &&
	       lbr_to(1) == (uint32_t)cs_f1 && lbr_from(4) == 0 &&
	       lbr_from(0) == 0;
	ok(good, "EN_CALLSTACK: the return popped its call; the three open "
	   "calls at TOS 3, 2, 1, nothing above");
	lbr_reset();
	cs_empty(LBR);
	ok(lbr_all_zero(), "EN_CALLSTACK: a return on an empty stack: nothing");
	wrmsr_safe(LBR_SELECT, 0);
}

static void test_lbr(void)
{
	test_lbr_msrs();
	test_lbr_branches();
	test_lbr_wrap();
	test_lbr_cpl(&lbr_intel);
	test_lbr_debug();
	test_lbr_call_stack();
}

/* The PMU model (pmu=on): MSRs, APIC registers, the sequence's counts */
#define EVTSEL0 0x186
#define PMC0 0xc1
#define A_PMC0 0x4c1
#define FIXED_CTR0 0x309
#define FIXED_CTR_CTRL 0x38d
#define GLOBAL_STATUS 0x38e
#define GLOBAL_CTRL 0x38f
#define GLOBAL_OVF_CTRL 0x390
#define GLOBAL_STATUS_SET 0x391
#define GLOBAL_INUSE 0x392
#define FREEZE_PERFMON_ON_PMI (1u << 12)
#define EV_USR (1u << 16)
#define EV_OS (1u << 17)
#define EV_INT (1u << 20)
#define EV_EN (1u << 22)
#define LBR_FRZ (1ull << 58)
#define CTR_FRZ (1ull << 59)
#define CTR_MAX ((1ull << 48) - 1)
#define ALL_CTRS 0xfu, 0x7u		/* GLOBAL_CTRL: 4 GP, 3 fixed */
#define SEQ_INSNS 13
#define SEQ_BRANCHES 6
#define SEQ_TAKEN 5
#define APIC_SVR ((volatile uint32_t *)0xfee000f0)
#define APIC_LVTPC ((volatile uint32_t *)0xfee00340)
#define LVT_NMI 0x400u
#define LVT_MASKED 0x10000u

/*
 * What the pmu-log must hold (check-pmu-log.py): "pexp KIND VALUE MSR
 * FLAGS STATUS PMC0" for each overflow and PMI, in order; "mexp KIND MSR
 * VALUE" for each MSR access between the two PMU_LOG_MARK writes.
 */
#define PMU_LOG_MARK 0xbad	/* no such MSR: WRMSR ignored, logged */
enum { PLOG_WRMSR, PLOG_WRMSR_GP, PLOG_RDMSR, PLOG_OVERFLOW, PLOG_PMI };

static void pexp_ctr(int kind, uint64_t value, uint32_t msr, uint32_t flags,
		     uint64_t status, uint64_t count, int ctr)
{
	puts_(kind == PLOG_PMI ? "pexp 4 " : "pexp 3 ");
	puthex(value), putc_(' '), puthex(msr), putc_(' '), puthex(flags);
	putc_(' '), puthex(status), putc_(' '), puthex(count), putc_(' ');
	putc_('0' + ctr), putc_('\n');
}

static void pexp(int kind, uint64_t value, uint32_t msr, uint32_t flags,
		 uint64_t status, uint64_t pmc0)
{
	pexp_ctr(kind, value, msr, flags, status, pmc0, 0);
}

static void mexp(int kind, uint32_t msr, uint64_t value)
{
	puts_("mexp "), putc_('0' + kind), putc_(' ');
	puthex(msr), putc_(' '), puthex(value), putc_('\n');
}

/* -1 if RDPMC raised #GP (isr13 skips the instruction) */
static int rdpmc_safe(uint32_t ecx, uint64_t *v)
{
	uint32_t before = gp_count, lo = 0, hi = 0;

	asm volatile("rdpmc" : "+a"(lo), "+d"(hi) : "c"(ecx) : "memory");
	*v = (uint64_t)hi << 32 | lo;
	return gp_count != before ? -1 : 0;
}

static void pmu_clear(void)
{
	wrmsr_safe(GLOBAL_CTRL, 0);
	for (int i = 0; i < 4; i++) {
		wrmsr_safe(EVTSEL0 + i, 0);
		wrmsr_safe(A_PMC0 + i, 0);
	}
	wrmsr_safe(FIXED_CTR_CTRL, 0);
	for (int i = 0; i < 3; i++)
		wrmsr_safe(FIXED_CTR0 + i, 0);
	wrmsr_safe(GLOBAL_OVF_CTRL, rdmsr(GLOBAL_STATUS));
}

/* CPUID leaf 0xA, PERF_CAPABILITIES, reset values, read-back, #GP */
static void test_pmu_msrs(void)
{
	uint32_t r[4];
	uint64_t v;

	cpuid(0xa, r);
	ok(r[0] == 0x07300404 && r[1] == 0x18 && r[3] == 0x603,
	   "CPUID.0AH: version 4, 4 GP counters and 3 fixed of 48 bits, "
	   "7 events, LLC reference/miss unavailable");
	ok(rdmsr(PERF_CAPABILITIES) == 0x2005,
	   "PERF_CAPABILITIES: LBR format 5 and full-width writes");
	ok(rdmsr(GLOBAL_CTRL) == 0x70000000full,
	   "GLOBAL_CTRL: every counter's enable bit set at reset");
	ok(wrmsr_safe(EVTSEL0 + 3, 0x4301c4 | EV_USR | EV_INT) == 0 &&
	   rdmsr(EVTSEL0 + 3) == (0x4301c4 | EV_USR | EV_INT),
	   "PERFEVTSEL3 reads back");
	ok(wrmsr_safe(EVTSEL0, 1u << 18) && wrmsr_safe(EVTSEL0, 1u << 19) &&
	   wrmsr_safe(EVTSEL0, 1u << 21) && wrmsr_safe(EVTSEL0, 1u << 23) &&
	   wrmsr_safe(EVTSEL0, 1u << 24) && wrmsr_safe(EVTSEL0, 1ull << 32) &&
	   rdmsr(EVTSEL0) == 0,
	   "PERFEVTSEL: E, PC, AnyThread, INV, CMASK, bit 32 are #GP");
	ok(wrmsr_safe(FIXED_CTR_CTRL, 0xbbb) == 0 &&
	   rdmsr(FIXED_CTR_CTRL) == 0xbbb && wrmsr_safe(FIXED_CTR_CTRL, 4) &&
	   wrmsr_safe(FIXED_CTR_CTRL, 0x1000) && rdmsr(FIXED_CTR_CTRL) == 0xbbb,
	   "FIXED_CTR_CTRL reads back; AnyThread and bit 12 are #GP");
	ok(rdmsr(GLOBAL_INUSE) == (0x8000000700000008ull),
	   "GLOBAL_INUSE: PERFEVTSEL3, the 3 fixed counters, PMI");
	wrmsr_safe(EVTSEL0 + 3, 0);
	wrmsr_safe(FIXED_CTR_CTRL, 0);
	ok(wrmsr_safe(GLOBAL_CTRL, 0x10) && wrmsr_safe(GLOBAL_CTRL, 1ull << 35)
	   && rdmsr(GLOBAL_CTRL) == 0x70000000full,
	   "GLOBAL_CTRL: bits 4 and 35 are #GP");
	ok(wrmsr_safe(GLOBAL_STATUS, 0) && wrmsr_safe(GLOBAL_INUSE, 0) &&
	   wrmsr_safe(GLOBAL_OVF_CTRL, 0x10) &&
	   wrmsr_safe(GLOBAL_STATUS_SET, 1ull << 63),
	   "GLOBAL_STATUS, INUSE read-only; OVF_CTRL bit 4, STATUS_SET "
	   "bit 63 #GP");
	ok(wrmsr_safe(GLOBAL_STATUS_SET, 0x700000005ull | LBR_FRZ) == 0 &&
	   rdmsr(GLOBAL_STATUS) == (0x700000005ull | LBR_FRZ) &&
	   wrmsr_safe(GLOBAL_OVF_CTRL, 0x700000004ull) == 0 &&
	   rdmsr(GLOBAL_STATUS) == (1 | LBR_FRZ),
	   "STATUS_SET sets, OVF_CTRL (STATUS_RESET) clears status bits");
	wrmsr_safe(GLOBAL_OVF_CTRL, 1 | LBR_FRZ);
	ok(wrmsr_safe(A_PMC0, CTR_MAX) == 0 && rdmsr(PMC0) == CTR_MAX &&
	   wrmsr_safe(A_PMC0, 1ull << 48) && wrmsr_safe(FIXED_CTR0, 1ull << 48),
	   "A_PMC0 full-width write; bit 48 is #GP there and in FIXED_CTR0");
	ok(wrmsr_safe(PMC0, 0x80000000u) == 0 && rdmsr(A_PMC0) == 0xffff80000000ull,
	   "legacy PMC0 write: bits 31:0 sign-extended to 48 bits");
	ok(rdpmc_safe(0, &v) == 0 && v == 0xffff80000000ull &&
	   rdpmc_safe(4, &v) == -1 && rdpmc_safe((1u << 30) | 3, &v) == -1,
	   "RDPMC reads PMC0; GP counter 4 and fixed counter 3 are #GP");
	pmu_clear();
}

/* the counts of pmu_seq: fixed counters, architectural events, USR/OS */
static void test_pmu_count(void)
{
	uint64_t v;

	pmu_clear();
	wrmsr_safe(EVTSEL0 + 0, EV_EN | EV_OS | 0x00c4);	/* branches */
	wrmsr_safe(EVTSEL0 + 1, EV_EN | EV_OS | 0x20c4);	/* near taken */
	wrmsr_safe(EVTSEL0 + 2, EV_EN | EV_OS | 0x00c0);	/* insns */
	wrmsr_safe(EVTSEL0 + 3, EV_EN | EV_USR | 0x00c0);	/* user insns */
	wrmsr_safe(FIXED_CTR_CTRL, 0x111);
	pmu_seq(ALL_CTRS);
	ok(rdmsr(FIXED_CTR0) == SEQ_INSNS && rdmsr(FIXED_CTR0 + 1) == SEQ_INSNS
	   && rdmsr(FIXED_CTR0 + 2) == SEQ_INSNS,
	   "fixed counters: instructions, core and reference cycles = 13");
	ok(rdmsr(PMC0) == SEQ_BRANCHES, "branch instructions retired = 6");
	ok(rdmsr(PMC0 + 1) == SEQ_TAKEN, "taken near branches = 5");
	ok(rdmsr(PMC0 + 2) == SEQ_INSNS, "instructions retired (OS) = 13");
	ok(rdmsr(PMC0 + 3) == 0, "instructions retired (USR only): 0 in ring 0");
	ok(rdpmc_safe((1u << 30) | 0, &v) == 0 && v == SEQ_INSNS,
	   "RDPMC fixed counter 0 = 13");
	ok(rdmsr(GLOBAL_STATUS) == 0, "no overflow");
	pmu_clear();
	wrmsr_safe(EVTSEL0 + 0, EV_EN | EV_OS | 0x4f2e);	/* LLC reference */
	wrmsr_safe(EVTSEL0 + 1, EV_EN | EV_OS | 0x003c);	/* core cycles */
	wrmsr_safe(EVTSEL0 + 2, EV_EN | EV_OS | EV_USR | 0x013c);
	wrmsr_safe(EVTSEL0 + 3, EV_EN | EV_OS | EV_USR | 0x00c0);
	pmu_seq(0x7, 0);		/* not PMC3 */
	ok(rdmsr(PMC0) == 0 && rdmsr(PMC0 + 1) == SEQ_INSNS &&
	   rdmsr(PMC0 + 2) == SEQ_INSNS && rdmsr(PMC0 + 3) == 0,
	   "unmodeled event 0; cycles = instructions; GLOBAL_CTRL gates");
	pmu_clear();
}

/*
 * Overflow: PMC0 counts instructions from 2^48 - 5, so the 5th of pmu_seq
 * overflows it.  Masked LVTPC: status only, counting goes on.  NMI with
 * both freeze bits: one PMI, counters and LBR frozen, LVTPC masked again.
 */
static void test_pmu_overflow(void)
{
	uint32_t tos;

	*APIC_SVR = 0x1ff;
	pmu_clear();
	*APIC_LVTPC = LVT_NMI | LVT_MASKED;
	wrmsr_safe(EVTSEL0, EV_EN | EV_OS | EV_INT | 0x00c0);
	wrmsr_safe(A_PMC0, CTR_MAX - 4);
	nmi_count = 0;
	pmu_seq(1, 0);
	ok(nmi_count == 0 && rdmsr(GLOBAL_STATUS) == 1 &&
	   rdmsr(PMC0) == SEQ_INSNS - 5,
	   "overflow, LVTPC masked: status bit 0, no PMI, counting goes on");
	pexp(PLOG_OVERFLOW, 1, 0, 0, 1, 0);
	pexp(PLOG_PMI, LVT_NMI | LVT_MASKED, 0, 0, 1, 0);	/* not delivered */
	pmu_clear();
	*APIC_LVTPC = LVT_NMI;
	wrmsr_safe(EVTSEL0, EV_EN | EV_OS | EV_INT | 0x00c0);
	wrmsr_safe(A_PMC0, CTR_MAX - 4);
	lbr_reset();
	wrmsr_safe(DEBUGCTL, LBR | FREEZE_LBRS_ON_PMI | FREEZE_PERFMON_ON_PMI);
	pmu_seq(1, 0);
	tos = rdmsr(LBR_TOS);
	wrmsr_safe(DEBUGCTL, LBR | FREEZE_LBRS_ON_PMI | FREEZE_PERFMON_ON_PMI);
	asm volatile("jmp 1f; 1:");
	wrmsr_safe(DEBUGCTL, 0);
	ok(nmi_count == 1, "one PMI, delivered as NMI through LVTPC");
	pexp(PLOG_OVERFLOW, 1, 0, 0, 1, 0);
	pexp(PLOG_PMI, LVT_NMI, 0, 1, 1 | CTR_FRZ | LBR_FRZ, 0);
	ok(rdmsr(GLOBAL_STATUS) == (1 | CTR_FRZ | LBR_FRZ),
	   "GLOBAL_STATUS: PMC0 overflow, CTR_Frz, LBR_Frz");
	ok(rdmsr(PMC0) == 0, "FREEZE_PERFMON_ON_PMI: PMC0 stopped at 0");
	ok(rdmsr(LBR_TOS) == tos && tos != 0,
	   "FREEZE_LBRS_ON_PMI: no push while LBR_Frz is set");
	ok(*APIC_LVTPC == (LVT_NMI | LVT_MASKED),
	   "LVTPC masked by the delivery");
	wrmsr_safe(GLOBAL_OVF_CTRL, 1 | CTR_FRZ | LBR_FRZ);
	wrmsr_safe(GLOBAL_CTRL, 1);
	asm volatile("nop; nop");
	wrmsr_safe(GLOBAL_CTRL, 0);
	ok(rdmsr(GLOBAL_STATUS) == 0 && rdmsr(PMC0) > 2,
	   "STATUS_RESET clears the freeze: counting resumes");
	pmu_clear();
}

/*
 * BTINT with the PMU: 40 jumps into a 32-record buffer whose interrupt
 * threshold is record 16: one PMI (an NMI, itself recorded, and its IRET)
 * when the 16th record is written, the buffer not circular: full at 32.
 */
static void test_pmu_btint(void)
{
	uint32_t w = rec_size / 3, base = (uint32_t)buffer;

	*APIC_LVTPC = LVT_NMI;
	nmi_count = 0;
	clear_buffer();
	ds_setup(base, 32);
	*(uint32_t *)(ds_area + 3 * w) = base + 16 * rec_size;
	wrmsr_safe(DS_AREA, (uint32_t)ds_area);
	seq_w(TR | BTS | BTINT);
	ok(nmi_count == 1, "BTINT: one PMI at the interrupt threshold");
	pexp(PLOG_PMI, LVT_NMI, 1, 1, 0, 0);	/* reason 1: BTINT */
	ok(ds_index() == base + 32 * rec_size,
	   "BTINT: not circular, the index stops at the absolute maximum");
	ok(word(buffer + 15 * rec_size) == (uint32_t)(w_start + 30) &&
	   word(buffer + 16 * rec_size + w) == (uint32_t)isr2,
	   "BTINT: the 16th record is jump 16, the 17th the NMI");
	wrmsr_safe(DS_AREA, 0);
}

/*
 * The pmu-log's MSR entries: between two writes of PMU_LOG_MARK, each
 * WRMSR (value, or #GP), each RDMSR with the value the guest read, and
 * the log's counters equal to that value at the read of FIXED_CTR0.
 */
static void test_pmu_log(void)
{
	uint64_t count, caps;
	int gp;

	pmu_clear();
	wrmsr_safe(PMU_LOG_MARK, 1);
	wrmsr_safe(FIXED_CTR_CTRL, 1);
	gp = wrmsr_safe(GLOBAL_CTRL, 1ull << 35);
	wrmsr_safe(GLOBAL_CTRL, 1ull << 32);
	asm volatile("nop; nop; nop");
	count = rdmsr(FIXED_CTR0);
	wrmsr_safe(GLOBAL_CTRL, 0);
	caps = rdmsr(PERF_CAPABILITIES);
	wrmsr_safe(PMU_LOG_MARK, 2);
	ok(gp == -1, "GLOBAL_CTRL bit 35 #GP");
	ok(count > 3 && count < 40,
	   "FIXED_CTR0 counts the instructions since enabled");
	mexp(PLOG_WRMSR, PMU_LOG_MARK, 1);
	mexp(PLOG_WRMSR, FIXED_CTR_CTRL, 1);
	mexp(PLOG_WRMSR_GP, GLOBAL_CTRL, 1ull << 35);
	mexp(PLOG_WRMSR, GLOBAL_CTRL, 1ull << 32);
	mexp(PLOG_RDMSR, FIXED_CTR0, count);
	mexp(PLOG_WRMSR, GLOBAL_CTRL, 0);
	mexp(PLOG_RDMSR, PERF_CAPABILITIES, caps);
	mexp(PLOG_WRMSR, PMU_LOG_MARK, 2);
	pmu_clear();
}

static void test_pmu(void)
{
	test_pmu_msrs();
	test_pmu_count();
	test_pmu_overflow();
	test_pmu_btint();
	test_pmu_log();
}

/*
 * AMD's side (lbr=on,pmu=on on an AuthenticAMD CPU: VM_AMD_CPU, Zen 4,
 * and VM_ZEN5_CPU, Zen 5): the family and model, CPUID Fn8000_0022,
 * PerfMonV2's six counters' MSRs and counts, LbrExtV2's MSRs, its pushes
 * (entry 0 newest, the rest shifted down), LBR_SELECT filters, and the
 * freeze on PMI.  The sequences turn the stack on through DBG_EXTN_CFG
 * (trace_msr), count through PerfCntrGlobalCtl (pmu_ctrl_msr).
 */
#define AMD_LBR_SELECT 0xc000010e
#define DBG_EXTN_CFG 0xc000010f
#define LBRV2EN (1u << 6)
#define AMD_LBR_FROM 0xc0010300		/* FROM n: +2n, TO n: +2n + 1 */
#define AMD_LBR_DEPTH 16
#define TO_VALID (1ull << 63)
#define PERF_CTL0 0xc0010200		/* CTL n: +2n, CTR n: +2n + 1 */
#define K7_EVNTSEL0 0xc0010000
#define K7_PERFCTR0 0xc0010004
#define AMD_STATUS 0xc0000300
#define AMD_CTL 0xc0000301
#define AMD_STATUS_CLR 0xc0000302
#define AMD_STATUS_SET 0xc0000303
#define LBR_FROZEN (1ull << 58)
extern uint32_t trace_msr, pmu_ctrl_msr;

static uint64_t amd_from(int i) { return rdmsr(AMD_LBR_FROM + 2 * i); }
static uint64_t amd_to(int i) { return rdmsr(AMD_LBR_FROM + 2 * i + 1); }
static uint64_t amd_ctr(int i) { return rdmsr(PERF_CTL0 + 2 * i + 1); }

/* What Linux's amd_pmu_lbr_reset() does: zeros in every FROM and TO */
static void amd_lbr_reset(void)
{
	for (int i = 0; i < AMD_LBR_DEPTH; i++) {
		wrmsr_safe(AMD_LBR_FROM + 2 * i, 0);
		wrmsr_safe(AMD_LBR_FROM + 2 * i + 1, 0);
	}
}

/*
 * After amd_lbr_reset() and N pushes EXP: entry i holds push N - 1 - i
 * (0 the newest): LBR_FROM the source (mispredict clear), LBR_TO the
 * target with valid set, spec clear; entries beyond N still 0.  Prints
 * each push as "lexp 0 ..." (the index written is always 0).
 */
static int check_amd_lbr(const struct lrec *exp, int n)
{
	int good = 1;

	for (int i = 0; i < n; i++)
		put_lexp(0, &exp[i]);
	for (int i = 0; i < AMD_LBR_DEPTH; i++) {
		uint64_t f = 0, t = 0;

		if (i < n) {
			f = (uint32_t)exp[n - 1 - i].from;
			t = (uint32_t)exp[n - 1 - i].to | TO_VALID;
		}
		if (amd_from(i) != f || amd_to(i) != t) {
			puts_("# entry "), puthex(i), puts_(" has ");
			puthex(amd_from(i)), putc_(' '), puthex(amd_to(i));
			putc_('\n');
			good = 0;
		}
	}
	return good;
}

static int amd_lbr_zero(void)
{
	return check_amd_lbr(0, 0);
}

/* The AMD CPUs the tests boot (tests/vm/vm-lib.sh): the "amd" and "zen5" runs */
struct amd_cpu { uint32_t family, model; const char *what; };
static const struct amd_cpu zen4 = {
	0x19, 0x11, "CPUID 1: family 0x19 model 0x11 (VM_AMD_CPU, Zen 4)"
};
static const struct amd_cpu zen5 = {
	0x1a, 0x02, "CPUID 1: family 0x1a model 0x02 (VM_ZEN5_CPU, Zen 5)"
};

/*
 * CPUID Fn0000_0001 EAX (AMD APM Vol. 3, Appendix E): Family = BaseFamily
 * (11:8) + ExtFamily (27:20) when BaseFamily is 0xf; Model = ExtModel
 * (19:16) << 4 | BaseModel (7:4)
 */
static void test_amd_cpuid(const struct amd_cpu *cpu)
{
	uint32_t r[4];

	cpuid(1, r);
	ok(((r[0] >> 8) & 0xf) == 0xf &&
	   0xf + ((r[0] >> 20) & 0xff) == cpu->family &&
	   (((r[0] >> 12) & 0xf0) | ((r[0] >> 4) & 0xf)) == cpu->model,
	   cpu->what);
	cpuid(0x80000000, r);
	ok(r[0] >= 0x80000022, "CPUID: extended leaves up to 0x80000022");
	cpuid(0x80000022, r);
	ok(r[0] == 3 && r[1] == (6 | 16 << 4),
	   "CPUID Fn8000_0022: PerfMonV2, LbrExtV2, 6 core counters, 16 LBRs");
	cpuid(0x80000001, r);
	ok(r[2] & (1u << 23), "CPUID Fn8000_0001 ECX: PerfCtrExtCore");
	cpuid(1, r);
	ok(!(r[2] & (1u << 15)) && rdmsr(PERF_CAPABILITIES) == 0,
	   "no Intel PDCM or PERF_CAPABILITIES on AMD");
	cpuid(0xa, r);
	ok(!r[0] && !r[1] && !r[3], "no Intel CPUID leaf 0xA on AMD");
}

static void test_amd_lbr_msrs(void)
{
	int rw = 1;

	ok(msr_roundtrip(DBG_EXTN_CFG, LBRV2EN) == LBRV2EN &&
	   rdmsr(DBG_EXTN_CFG) == 0, "DBG_EXTN_CFG.LBRV2EN reads back");
	ok(wrmsr_safe(DBG_EXTN_CFG, 1) == -1 &&
	   wrmsr_safe(DBG_EXTN_CFG, 1u << 7) == -1 &&
	   wrmsr_safe(DBG_EXTN_CFG, 1ull << 63) == -1 &&
	   rdmsr(DBG_EXTN_CFG) == 0, "DBG_EXTN_CFG bits 0, 7, 63 are #GP");
	ok(wrmsr_safe(AMD_LBR_SELECT, 0x1ff) == 0 &&
	   rdmsr(AMD_LBR_SELECT) == 0x1ff &&
	   wrmsr_safe(AMD_LBR_SELECT, 1u << 9) == -1 &&
	   rdmsr(AMD_LBR_SELECT) == 0x1ff,
	   "LBR_SELECT 0x1ff reads back, bit 9 is #GP");
	wrmsr_safe(AMD_LBR_SELECT, 0);
	for (int i = 0; i < AMD_LBR_DEPTH; i++) {
		uint64_t f = (1ull << 63) | 0x7fff800000000000ull | (i << 12 | 1);
		uint64_t t = (3ull << 62) | 0x1fff800000000000ull | (i << 12 | 2);

		if (wrmsr_safe(AMD_LBR_FROM + 2 * i, f) ||
		    wrmsr_safe(AMD_LBR_FROM + 2 * i + 1, t) ||
		    amd_from(i) != f || amd_to(i) != t)
			rw = 0;
	}
	ok(rw, "16 LBR_FROM (mispredict) and LBR_TO (valid, spec) read back");
	ok(wrmsr_safe(AMD_LBR_FROM + 1, 1ull << 61) == -1 &&
	   wrmsr_safe(AMD_LBR_FROM, 0x0100000000000000ull) == -1 &&
	   wrmsr_safe(AMD_LBR_FROM + 3, 0x0100000000000000ull) == -1 &&
	   amd_to(0) == ((3ull << 62) | 0x1fff800000000000ull | 2),
	   "LBR_TO reserved bit 61 and non-canonical addresses are #GP");
	amd_lbr_reset();
	ok(amd_lbr_zero(), "writing 0 to every LBR_FROM/LBR_TO clears them");
}

static void test_amd_pmu_msrs(void)
{
	uint64_t v, ctl = 0x30f004300c0ull;	/* Host/GuestOnly, event 0xfc0 */

	ok(rdmsr(AMD_CTL) == 0x3f, "PerfCntrGlobalCtl: all 6 counters at reset");
	ok(wrmsr_safe(PERF_CTL0 + 6, ctl) == 0 && rdmsr(PERF_CTL0 + 6) == ctl &&
	   rdmsr(K7_EVNTSEL0 + 3) == ctl,
	   "PERF_CTL3 reads back, also through its legacy alias");
	ok(wrmsr_safe(PERF_CTL0, 1u << 18) && wrmsr_safe(PERF_CTL0, 1u << 23) &&
	   wrmsr_safe(PERF_CTL0, 1u << 24) && wrmsr_safe(PERF_CTL0, 1ull << 36)
	   && wrmsr_safe(PERF_CTL0, 1ull << 42) && rdmsr(PERF_CTL0) == 0,
	   "PERF_CTL: Edge, Inv, CntMask, bits 36 and 42 are #GP");
	wrmsr_safe(PERF_CTL0 + 6, 0);
	ok(wrmsr_safe(PERF_CTL0 + 10, ctl) == 0 &&
	   rdmsr(PERF_CTL0 + 10) == ctl && wrmsr_safe(PERF_CTL0 + 10, 0) == 0 &&
	   wrmsr_safe(PERF_CTL0 + 11, CTR_MAX) == 0 && amd_ctr(5) == CTR_MAX &&
	   wrmsr_safe(PERF_CTL0 + 11, 1ull << 48) == -1,
	   "PERF_CTL5/PERF_CTR5 (PerfCtrExtCore's sixth) read back, 48 bits");
	ok(wrmsr_safe(PERF_CTL0 + 12, ctl) == 0 && rdmsr(PERF_CTL0 + 12) == 0 &&
	   rdmsr(PERF_CTL0 + 13) == 0,
	   "no seventh counter: 0xc001020c/d are unknown MSRs (ignored, 0)");
	ok(wrmsr_safe(K7_PERFCTR0 + 1, CTR_MAX) == 0 && amd_ctr(1) == CTR_MAX &&
	   wrmsr_safe(PERF_CTL0 + 3, 1ull << 48) == -1 && amd_ctr(1) == CTR_MAX,
	   "PERF_CTR1 takes 48 bits (legacy alias too), bit 48 is #GP");
	ok(rdpmc_safe(1, &v) == 0 && v == CTR_MAX && rdpmc_safe(5, &v) == 0 &&
	   v == CTR_MAX && rdpmc_safe(6, &v) == -1 &&
	   rdpmc_safe(1u << 30, &v) == -1,
	   "RDPMC 1 and 5 read PERF_CTR1, 5; counter 6 and Intel's fixed "
	   "ones #GP");
	wrmsr_safe(PERF_CTL0 + 3, 0);
	wrmsr_safe(PERF_CTL0 + 11, 0);
	ok(wrmsr_safe(AMD_CTL, 0x40) && wrmsr_safe(AMD_CTL, 1ull << 32) &&
	   wrmsr_safe(AMD_STATUS, 0) && rdmsr(AMD_CTL) == 0x3f,
	   "GlobalCtl bits 6 and 32 are #GP; Status is read-only");
	ok(wrmsr_safe(AMD_STATUS_SET, 5 | LBR_FROZEN) == 0 &&
	   rdmsr(AMD_STATUS) == (5 | LBR_FROZEN) &&
	   wrmsr_safe(AMD_STATUS_CLR, 4) == 0 &&
	   rdmsr(AMD_STATUS) == (1 | LBR_FROZEN),
	   "StatusSet sets, StatusClr clears counter bits and LbrFrozen");
	ok(wrmsr_safe(AMD_STATUS_SET, ~0ull) == 0 &&
	   rdmsr(AMD_STATUS) == (0x3f | LBR_FROZEN) &&
	   wrmsr_safe(AMD_STATUS_CLR, ~2ull) == 0 && rdmsr(AMD_STATUS) == 2,
	   "StatusSet/Clr ignore reserved bits (Linux acks with ~pending)");
	wrmsr_safe(AMD_STATUS_CLR, ~0ull);	/* whatever the checks above left */
	ok(rdmsr(GLOBAL_CTRL) == 0 && wrmsr_safe(EVTSEL0, EV_EN) == 0 &&
	   rdmsr(EVTSEL0) == 0, "Intel's PMU MSRs are unknown on AMD");
}

/*
 * pmu_seq's counts with AMD's events (PMCx0C0, 076, 0C2, 0C4) on the six
 * counters, the last two counting taken branches and user instructions
 */
static void test_amd_count(void)
{
	static const uint32_t ev[] = {
		EV_OS | 0xc0, EV_OS | 0x76, EV_OS | 0xc2, EV_OS | 0xc4,
		EV_OS | 0xc4, EV_USR | 0xc0
	};
	int good = 1;

	pmu_ctrl_msr = AMD_CTL;
	wrmsr_safe(AMD_CTL, 0);
	for (int i = 0; i < 6; i++) {
		wrmsr_safe(PERF_CTL0 + 2 * i + 1, 0);
		wrmsr_safe(PERF_CTL0 + 2 * i, EV_EN | ev[i]);
	}
	pmu_seq(0x3f, 0);
	ok(amd_ctr(0) == SEQ_INSNS && amd_ctr(1) == SEQ_INSNS &&
	   amd_ctr(2) == SEQ_BRANCHES && amd_ctr(3) == SEQ_TAKEN &&
	   amd_ctr(4) == SEQ_TAKEN && amd_ctr(5) == 0,
	   "retired instructions = cycles = 13, branches 6, taken 5 (on "
	   "PERF_CTR3 and 4), user-only 0 in ring 0 (PERF_CTR5)");
	wrmsr_safe(AMD_CTL, 0);
	for (int i = 0; i < 6; i++) {
		wrmsr_safe(PERF_CTL0 + 2 * i + 1, 0);
		wrmsr_safe(PERF_CTL0 + 2 * i, EV_EN | EV_OS |
			   (i ? (1ull << 32) | 0xc0 : 0x1c0));
	}
	pmu_seq(0x3, 0);
	for (int i = 0; i < 6; i++)
		good &= amd_ctr(i) == 0;
	ok(good, "unit mask or EventSelect[11:8] set: not counted; GlobalCtl "
	   "gates");
	for (int i = 0; i < 6; i++)
		wrmsr_safe(PERF_CTL0 + 2 * i, 0);
	wrmsr_safe(AMD_CTL, 0x3f);
}

static const struct lbr_kind lbr_amd = {
	amd_lbr_reset, check_amd_lbr, AMD_LBR_SELECT, LBRV2EN
};

static void test_amd_branches(void)
{
	trace_msr = DBG_EXTN_CFG;
	amd_lbr_reset();
	seq_b(LBRV2EN);
	ok(check_amd_lbr(lbr_b, NB), "LbrExtV2: 17 branches, the newest 16 "
	   "kept, entry 0 the newest, from and to exact, valid set");
	test_lbr_types(&lbr_amd);
	amd_lbr_reset();
	seq_b(0);
	ok(amd_lbr_zero(), "DBG_EXTN_CFG 0: no push");
	trace_msr = DEBUGCTL;
	seq_b(LBR);
	ok(amd_lbr_zero(), "DEBUGCTL.LBR (AMD's older LBR) pushes nothing here");
	trace_msr = DBG_EXTN_CFG;
}

/*
 * A PMI freezes the stack: PERF_CTR5 (the sixth counter, PerfCtrExtCore)
 * counts instructions from 2^48 - 20,
 * overflows inside seq_w's 40 jumps; the NMI and its IRET are not pushed,
 * PerfCntrGlobalStatus has LbrFrozen, LVTPC stays unmasked (AMD's APIC);
 * StatusClr unfreezes.
 */
static void test_amd_freeze(void)
{
	struct lrec exp[40];
	int k = 0;

	for (int i = 0; i < 40; i++)
		exp[i] = (struct lrec){ REL_JMP, 0, 0, 0, w_start + 2 * i,
					 w_start + 2 * i + 2 };
	*APIC_SVR = 0x1ff;
	*APIC_LVTPC = LVT_NMI;
	amd_lbr_reset();
	nmi_count = 0;
	wrmsr_safe(PERF_CTL0 + 11, CTR_MAX - 19);
	wrmsr_safe(PERF_CTL0 + 10, EV_EN | EV_OS | EV_INT | 0xc0);
	seq_w(LBRV2EN);
	wrmsr_safe(PERF_CTL0 + 10, 0);
	while (k < AMD_LBR_DEPTH && amd_to(k))
		k++;
	pexp_ctr(PLOG_OVERFLOW, 0x20, 0, 0, 0x20, 0, 5);
	pexp_ctr(PLOG_PMI, LVT_NMI, 0, 1, 0x20 | LBR_FROZEN, 0, 5);
	ok(nmi_count == 1 && rdmsr(AMD_STATUS) == (0x20 | LBR_FROZEN),
	   "overflow of PERF_CTR5: one PMI (NMI), PerfCntrGlobalStatus bit 5 | "
	   "LbrFrozen");
	ok(k > 0 && k < AMD_LBR_DEPTH && check_amd_lbr(exp, k),
	   "LbrFrozen: the jumps before the PMI, then nothing (not the NMI)");
	ok(*APIC_LVTPC == LVT_NMI, "LVTPC not masked by the delivery (AMD)");
	wrmsr_safe(AMD_STATUS_CLR, 0x20 | LBR_FROZEN);
	amd_lbr_reset();
	seq_w(LBRV2EN);
	ok(rdmsr(AMD_STATUS) == 0 && check_amd_lbr(exp, 40),
	   "StatusClr clears LbrFrozen: 40 pushes, the newest 16 kept");
}

static void test_amd(const struct amd_cpu *cpu)
{
	test_amd_cpuid(cpu);
	test_amd_lbr_msrs();
	test_amd_pmu_msrs();
	test_amd_count();
	test_amd_branches();
	test_lbr_cpl(&lbr_amd);
	test_amd_freeze();
}

#include "arch-lbr.c"	/* Architectural LBR: its own file, these helpers */

/*
 * 4 MiB pages: 0-8 MiB read-write, 8-12 MiB read-only, the local APIC's
 * 4 MiB, nothing else
 */
static void paging_on(void)
{
	pd[0] = 0x000000 | 0x83;
	pd[1] = 0x400000 | 0x83;
	pd[2] = 0x800000 | 0x81;
	pd[0xfee00000 >> 22] = 0xfec00000 | 0x83;	/* the local APIC */
	asm volatile("mov %0, %%cr3" : : "r"(pd));
	asm volatile("mov %%cr4, %%eax; or $0x10, %%eax; mov %%eax, %%cr4"
		     : : : "eax");
	asm volatile("mov %%cr0, %%eax; or $0x80010000, %%eax; mov %%eax, %%cr0"
		     : : : "eax");
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void fatal_mode(const char *mode)
{
	uint32_t base = (uint32_t)buffer, ds = (uint32_t)ds_area;
	uint32_t dbg = TR | BTS;

	paging_on();
	if (streq(mode, "fatal-mmio"))
		ds = 0xfee00000;		/* the local APIC */
	else if (streq(mode, "fatal-btint"))
		dbg |= BTINT;
	else if (streq(mode, "fatal-unmapped"))
		base = 0x4000000;
	else if (streq(mode, "fatal-ro"))
		base = 0x800000;
	else if (streq(mode, "fatal-ds-unmapped"))
		ds = 0x4000000;
	else {
		puts_("unknown mode\n");
		quit(0x11);
	}
	ds_setup(base, 4);
	wrmsr_safe(DS_AREA, ds);
	puts_("fatal mode: the model must stop the VM now\n");
	touch(dbg);
	puts_("still running: the model did not stop\n");
	quit(0x11);
}

/*
 * CMPXCHG8B/CMPXCHG16B (Intel SDM Vol. 2A, "CMPXCHG8B/CMPXCHG16B--Compare
 * and Exchange Bytes", Flags Affected): ZF is set if the operands were
 * equal and cleared otherwise; CF, PF, AF, SF and OF are unaffected.
 * cx8_flags (boot.S) runs one in a translation block entered with
 * CC_OP_EFLAGS after an ADD whose source, 0xc1206f80, is an address, not
 * flags: QEMU 7.2 took that address as EFLAGS (the series' patch 0018),
 * and with ZF the guest got 0xc1206fc2 - TF, DF, IOPL, NT and reserved
 * bits set, what Debian's 6.12 showed in its #DB at SLUB's CMPXCHG16B.
 * Expected: the XOR's flags (ZF, PF; AF is undefined after it), ZF then
 * as the compare says.
 */
uint32_t cx8_flags(uint32_t val, uint32_t equal);

static void test_cmpxchg_flags(void)
{
	uint32_t eq = cx8_flags(0xc1206f80, 1), ne = cx8_flags(0xc1206f80, 0);

	puts_("# EFLAGS after CMPXCHG8B: equal ");
	puthex(eq);
	puts_(", not equal ");
	puthex(ne);
	putc_('\n');
	ok((eq & ~0x10u) == 0x46, "CMPXCHG8B equal: ZF set, PF kept, nothing "
	   "of the ADD's source in EFLAGS");
	ok((ne & ~0x10u) == 0x06, "CMPXCHG8B not equal: ZF cleared, PF kept, "
	   "nothing of the ADD's source in EFLAGS");
}

int main(uint32_t *mbi)
{
	const char *cmdline = (mbi[0] & 4) ? (const char *)mbi[4] : "";
	uint32_t r[4];

	/* QEMU's multiboot command line is "KERNEL ARGS": the ARGS */
	while (*cmdline && *cmdline != ' ')
		cmdline++;
	while (*cmdline == ' ')
		cmdline++;
	setup_cpu();
	cpuid(1, r);
	rec_size = (r[2] & (1u << 2)) ? 24 : 12;	/* DTES64 */
	puts_(rec_size == 24 ? "# 64-bit DS format\n" : "# 32-bit DS format\n");
	if (streq(cmdline, "lbr")) {
		test_lbr();
	} else if (streq(cmdline, "pmu")) {
		test_pmu();
	} else if (streq(cmdline, "amd")) {
		test_amd(&zen4);
	} else if (streq(cmdline, "zen5")) {
		test_amd(&zen5);
	} else if (streq(cmdline, "archlbr")) {
		test_arch_lbr();
	} else if (streq(cmdline, "cmpxchg-flags")) {
		test_cmpxchg_flags();
	} else if (*cmdline) {
		fatal_mode(cmdline);
	} else {
		test_msrs();
		test_branches();
		test_wrap();
		test_cpl();
	}
	puts_(failures ? "FAIL\n" : "PASS\n");
	quit(failures ? 0x11 : 0x10);
	return 0;
}
