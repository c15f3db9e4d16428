/*
 * Bare-metal self-test of the BTS model (tests/qemu/patches): CPUID, the
 * MSRs, and the exact records of known branch sequences (boot.S), checked
 * in the guest's DS buffer; every expected record is also printed
 * ("exp KIND FROM TO SLOT") for the host to compare with the oracle log.
 * Multiboot command line: empty (the tests), or one fatal mode, which must
 * make the model stop QEMU: fatal-mmio, fatal-btint, fatal-unmapped,
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

extern char b_j1[], b_t1[], b_jz[], b_t2[], b_call[], b_fn[], b_ret_to[],
	b_loop[], b_jecxz[], b_t4[], b_jind[], b_t5[], b_cind[], b_ret2_to[],
	b_int[], isr30[], isr30_iret[], b_after_int[], b_ud[], isr6[],
	isr6_iret[], b_after_ud[], b_ljmp[], b_t6[], b_lcall[], b_farfn[],
	b_lret[], b_after_lcall[];
extern char c_j1[], c_j2[], c_j3[], c_j4[], c_j5[], c_j6[], c_end[];
extern char d_iret[], d_user[], d_uj[], d_u1[], d_int[], isr80[], d_kj[],
	d_k1[];
extern char t_j[], t_end[];
extern char isr13[], isr_unexpected[];
extern volatile uint32_t ud_count, gp_count;
void load_segments(void);
void seq_b(uint32_t debugctl);
void seq_c(uint32_t debugctl);
void seq_d(uint32_t debugctl);
void touch(uint32_t debugctl);

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
	if (*cmdline)
		fatal_mode(cmdline);
	test_msrs();
	test_branches();
	test_wrap();
	test_cpl();
	puts_(failures ? "FAIL\n" : "PASS\n");
	quit(failures ? 0x11 : 0x10);
	return 0;
}
