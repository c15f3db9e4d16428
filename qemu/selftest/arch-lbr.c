/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The self-test's Architectural LBR cases (qemu patch 0015; command line
 * "archlbr", on VM_ARCH_LBR_CPU with lbr-log and lbr-log-nmi): CPUID leaf
 * 0x1C, IA32_LBR_CTL/DEPTH/x_FROM_IP/TO_IP/INFO and their #GPs, the
 * pushes (entry 0 newest, shifting, BR_TYPE), each branch-type and CPL
 * filter, the depth, call-stack mode, #DB, the freeze on PMI.  Included
 * by test.c (it uses its helpers and boot.S's sequences); every push,
 * pop and NMI snapshot the oracle log must hold is printed as an "lexp"
 * line with its format and INFO (check-lbr-log.py).
 */

#define ARCH_LBR_CTL 0x14ce
#define ARCH_LBR_DEPTH 0x14cf
#define ARCH_FROM 0x1500
#define ARCH_TO 0x1600
#define ARCH_INFO 0x1200
#define LBREN (1u << 0)
#define CTL_OS (1u << 1)
#define CTL_USR (1u << 2)
#define CALL_STACK (1u << 3)
#define CTL_TYPES 0x7f0000u		/* the seven branch-type enables */
#define CTL_ALL (LBREN | CTL_OS | CTL_USR | CTL_TYPES)
#define ARCH_DEPTH 32
/* the oracle log's formats: push, call-stack pop, NMI snapshot */
enum { FMT_ARCH = 2, FMT_POP = 3, FMT_NMI = 4 };

/* per LBR_SELECT type: its IA32_LBR_CTL enable bit and INFO.BR_TYPE */
static const uint8_t ctl_bit[] = {
	[JCC] = 16, [REL_JMP] = 17, [IND_JMP] = 18, [REL_CALL] = 19,
	[IND_CALL] = 20, [RET] = 21, [FAR] = 22,
};
static const uint8_t br_type[] = {
	[JCC] = 0, [REL_JMP] = 2, [IND_JMP] = 1, [REL_CALL] = 4,
	[IND_CALL] = 3, [RET] = 5, [FAR] = 8,
};

static uint64_t arch_info(const struct lrec *e)
{
	return (uint64_t)br_type[e->type] << 56;
}

/* -1 if RDMSR raised #GP (isr13 skips the instruction) */
static int rdmsr_safe(uint32_t msr, uint64_t *v)
{
	uint32_t before = gp_count, lo = 0, hi = 0;

	asm volatile("rdmsr" : "+a"(lo), "+d"(hi) : "c"(msr) : "memory");
	*v = (uint64_t)hi << 32 | lo;
	return gp_count != before ? -1 : 0;
}

static uint64_t a_from(int i) { return rdmsr(ARCH_FROM + i); }
static uint64_t a_to(int i) { return rdmsr(ARCH_TO + i); }
static uint64_t a_info(int i) { return rdmsr(ARCH_INFO + i); }

/* "lexp TOS TYPE KIND SRC CPL FROM TO FORMAT INFO" */
static void put_aexp(int tos, const struct lrec *e, int fmt, uint64_t info)
{
	puts_("lexp "), puthex(tos), putc_(' '), putc_('0' + e->type);
	putc_(' '), putc_('0' + e->kind), putc_(' '), putc_('0' + e->src_cpl);
	putc_(' '), putc_('0' + e->cpl), putc_(' '), puthex((uint32_t)e->from);
	putc_(' '), puthex((uint32_t)e->to), putc_(' '), putc_('0' + fmt);
	putc_(' '), puthex(info), putc_('\n');
}

/*
 * The stack holds STACK[0..n-1] (entry 0 newest) and zeros beyond, up to
 * DEPTH; with PUSHED, prints each of STACK's entries as a push, oldest
 * first (what the log must hold).
 */
static int check_arch(const struct lrec *stack, int n, int depth, int pushed)
{
	int good = 1;

	for (int i = n - 1; pushed && i >= 0; i--)
		put_aexp(0, &stack[i], FMT_ARCH, arch_info(&stack[i]));
	for (int i = 0; i < depth; i++) {
		uint64_t f = i < n ? (uint32_t)stack[i].from : 0;
		uint64_t t = i < n ? (uint32_t)stack[i].to : 0;
		uint64_t inf = i < n ? arch_info(&stack[i]) : 0;

		if (a_from(i) != f || a_to(i) != t || a_info(i) != inf) {
			puts_("# entry "), puthex(i), puts_(" has ");
			puthex(a_from(i)), putc_(' '), puthex(a_to(i));
			putc_(' '), puthex(a_info(i)), putc_('\n');
			good = 0;
		}
	}
	return good;
}

/* N pushes EXP, oldest first: the stack holds the newest DEPTH, reversed */
static int check_pushes(const struct lrec *exp, int n, int depth)
{
	struct lrec st[ARCH_DEPTH];
	int k = n < depth ? n : depth;

	for (int i = 0; i < n - k; i++)	/* the overwritten ones: log only */
		put_aexp(0, &exp[i], FMT_ARCH, arch_info(&exp[i]));
	for (int i = 0; i < k; i++)
		st[i] = exp[n - 1 - i];
	return check_arch(st, k, depth, 1);
}

/* Linux's intel_pmu_arch_lbr_reset(): one write of the depth */
static void arch_reset(void)
{
	wrmsr_safe(ARCH_LBR_DEPTH, ARCH_DEPTH);
}

static void test_arch_cpuid(void)
{
	uint32_t r[4];

	cpuid(7, r);
	ok(r[3] & (1u << 19), "CPUID.(7,0):EDX[19] Arch LBR");
	cpuid(0, r);
	ok(r[0] >= 0x1c, "CPUID level reaches 0x1C");
	cpuid(0x1c, r);
	ok(r[0] == 0x8000000fu && r[1] == 7 && r[2] == 4 && r[3] == 0,
	   "CPUID 0x1C: depths 8-32, LIP; CPL, filter, call stack; BR_TYPE");
	ok((rdmsr(PERF_CAPABILITIES) & 0x3f) == 0x3f,
	   "PERF_CAPABILITIES.LBR_FMT 0x3f (Arch LBR)");
	ok(wrmsr_safe(LBR_SELECT, 0x1ff) == 0 && rdmsr(LBR_SELECT) == 0 &&
	   rdmsr(LBR_TOS) == 0, "model-specific LBR MSRs absent (ignored)");
}

static void test_arch_msrs(void)
{
	uint64_t v;

	ok(rdmsr(ARCH_LBR_DEPTH) == 32 && rdmsr(ARCH_LBR_CTL) == 0,
	   "reset: DEPTH 32, LBR_CTL 0");
	ok(wrmsr_safe(ARCH_LBR_CTL, CTL_ALL & ~LBREN) == 0 &&
	   rdmsr(ARCH_LBR_CTL) == (CTL_ALL & ~LBREN),
	   "LBR_CTL: OS, USR, the type enables read back");
	ok(wrmsr_safe(ARCH_LBR_CTL, 1u << 4) && wrmsr_safe(ARCH_LBR_CTL, 1u << 15)
	   && wrmsr_safe(ARCH_LBR_CTL, 1u << 23) &&
	   wrmsr_safe(ARCH_LBR_CTL, 1ull << 63) &&
	   rdmsr(ARCH_LBR_CTL) == (CTL_ALL & ~LBREN),
	   "LBR_CTL: bits 4, 15, 23, 63 #GP, value kept");
	wrmsr_safe(ARCH_LBR_CTL, 0);
	ok(wrmsr_safe(ARCH_LBR_DEPTH, 0) && wrmsr_safe(ARCH_LBR_DEPTH, 7) &&
	   wrmsr_safe(ARCH_LBR_DEPTH, 40) && wrmsr_safe(ARCH_LBR_DEPTH, 64) &&
	   rdmsr(ARCH_LBR_DEPTH) == 32, "DEPTH: 0, 7, 40, 64 #GP");
	ok(wrmsr_safe(ARCH_FROM + 31, 0xfffff000u) == 0 &&
	   wrmsr_safe(ARCH_TO + 31, 0x1234) == 0 &&
	   wrmsr_safe(ARCH_INFO + 31, 0xff0000000000ffffull) == 0 &&
	   a_from(31) == 0xfffff000u && a_to(31) == 0x1234 &&
	   a_info(31) == 0xff0000000000ffffull,
	   "entry 31: FROM, TO, INFO read back");
	ok(wrmsr_safe(ARCH_FROM, 1ull << 60) &&
	   wrmsr_safe(ARCH_TO, 1ull << 60) &&
	   wrmsr_safe(ARCH_INFO, 1u << 16) && wrmsr_safe(ARCH_INFO, 1ull << 55),
	   "non-canonical FROM/TO, INFO bits 16 and 55 #GP");
	ok(wrmsr_safe(ARCH_LBR_DEPTH, 8) == 0 && rdmsr(ARCH_LBR_DEPTH) == 8 &&
	   a_from(7) == 0 && wrmsr_safe(ARCH_FROM + 8, 0) &&
	   rdmsr_safe(ARCH_TO + 8, &v) && rdmsr_safe(ARCH_INFO + 31, &v) &&
	   rdmsr_safe(ARCH_FROM + 7, &v) == 0,
	   "DEPTH 8: reads back; entries 8 and up #GP, 7 does not");
	wrmsr_safe(ARCH_LBR_DEPTH, 32);
	ok(a_from(31) == 0 && a_to(31) == 0 && a_info(31) == 0,
	   "a DEPTH write resets every entry");
}

static void test_arch_pushes(void)
{
	struct lrec exp[NB], w[40];
	int n, good;

	trace_msr = ARCH_LBR_CTL;
	arch_reset();
	seq_b(CTL_ALL);
	ok(check_pushes(lbr_b, NB, 32), "17 branches: entry 0 the newest, "
	   "from and to exact, INFO.BR_TYPE of each kind");
	for (int type = JCC; type <= FAR; type++) {
		n = 0;
		for (int i = 0; i < NB; i++)
			if (lbr_b[i].type != type)
				exp[n++] = lbr_b[i];
		arch_reset();
		seq_b(CTL_ALL & ~(1u << ctl_bit[type]));
		good = n < NB && check_pushes(exp, n, 32);
		ok(good, "LBR_CTL: one branch type disabled, the rest kept");
	}
	arch_reset();
	seq_b(CTL_ALL & ~LBREN);
	ok(check_arch(0, 0, 32, 0), "LBREN clear: no push");
	trace_msr = DEBUGCTL;
	seq_b(LBR);
	ok(check_arch(0, 0, 32, 0), "DEBUGCTL.LBR pushes nothing here");
	trace_msr = ARCH_LBR_CTL;
	for (int i = 0; i < 40; i++)
		w[i] = (struct lrec){ REL_JMP, 0, 0, 0, w_start + 2 * i,
				      w_start + 2 * i + 2 };
	arch_reset();
	seq_w(CTL_ALL);
	ok(check_pushes(w, 40, 32), "40 jumps: the newest 32, shifted");
	wrmsr_safe(ARCH_LBR_DEPTH, 8);
	seq_b(CTL_ALL);
	ok(check_pushes(lbr_b, NB, 8), "DEPTH 8: the newest 8 of 17");
	arch_reset();
}

static void test_arch_cpl(void)
{
	static const struct lrec all[] = {
		{ FAR, 1, 0, 3, d_iret, d_user }, { REL_JMP, 0, 3, 3, d_uj, d_u1 },
		{ FAR, 2, 3, 0, d_int, isr80 }, { REL_JMP, 0, 0, 0, d_kj, d_k1 },
	};
	static const struct lrec user[] = { all[0], all[1] };
	static const struct lrec kernel[] = { all[2], all[3] };

	arch_reset();
	seq_d(CTL_ALL);
	ok(check_pushes(all, 4, 32), "OS | USR: all four");
	arch_reset();
	seq_d(CTL_ALL & ~CTL_OS);
	ok(check_pushes(user, 2, 32), "USR only: the branches ending in ring "
	   "3 (the iret to user, the user jmp)");
	arch_reset();
	seq_d(CTL_ALL & ~CTL_USR);
	ok(check_pushes(kernel, 2, 32), "OS only: the int from user, the "
	   "kernel jmp");
	arch_reset();
	seq_d(CTL_ALL & ~(CTL_OS | CTL_USR));
	ok(check_arch(0, 0, 32, 0), "neither: none");
}

/*
 * Call-stack mode, as Linux programs it (CALL_STACK, near calls and
 * returns), over boot.S's cs_seq and cs_empty.
 */
static void test_arch_call_stack(void)
{
	static const struct lrec c1 = { REL_CALL, 0, 0, 0, cs_c1, cs_f1 },
		c2 = { REL_CALL, 0, 0, 0, cs_c2, cs_f2 },
		c4 = { REL_CALL, 0, 0, 0, cs_c4, cs_f4 },
		r4 = { RET, 0, 0, 0, cs_f4r, cs_c3 },
		c3 = { REL_CALL, 0, 0, 0, cs_c3, cs_f3 };
	const struct lrec stack[] = { c3, c2, c1 };
	uint32_t ctl = LBREN | CTL_OS | CALL_STACK | (1u << 19) | (1u << 20) |
		       (1u << 21);

	arch_reset();
	trace_msr = ARCH_LBR_CTL;
	cs_seq(ctl);
	put_aexp(0, &c1, FMT_ARCH, arch_info(&c1));
	put_aexp(0, &c2, FMT_ARCH, arch_info(&c2));
	put_aexp(0, &c4, FMT_ARCH, arch_info(&c4));
	put_aexp(0, &r4, FMT_POP, 0);
	put_aexp(0, &c3, FMT_ARCH, arch_info(&c3));
	ok(check_arch(stack, 3, 32, 0), "call-stack mode: the return popped "
	   "its call; the three open calls, innermost first");
	ok(rdmsr(ARCH_LBR_CTL) == 0, "LBR_CTL written to 0 inside");
	arch_reset();
	seq_b(ctl);
	for (int i = 0; i < NB; i++) {		/* its two calls and returns */
		if (lbr_b[i].type == RET)
			put_aexp(0, &lbr_b[i], FMT_POP, 0);
		else if (lbr_b[i].type == REL_CALL || lbr_b[i].type == IND_CALL)
			put_aexp(0, &lbr_b[i], FMT_ARCH, arch_info(&lbr_b[i]));
	}
	ok(check_arch(0, 0, 32, 0), "call-stack mode over seq_b: each call "
	   "popped by its return, jumps and far branches not recorded");
	arch_reset();
	cs_empty(ctl);
	ok(check_arch(0, 0, 32, 0), "a return on an empty stack: nothing");
}

/* single-step #DB: not recorded, LBR_CTL.LBREN cleared, stack kept */
static void test_arch_debug(void)
{
	static const struct lrec exp[] = { { REL_JMP, 0, 0, 0, e_j, e_1 } };
	uint32_t db = db_count;

	arch_reset();
	seq_e(CTL_ALL);
	ok(db_count == db + 1, "single-step #DB delivered");
	ok(e_debugctl == (CTL_ALL & ~LBREN), "#DB clears LBR_CTL.LBREN only");
	ok(check_pushes(exp, 1, 32), "#DB not recorded; the stack is kept");
}

/*
 * DEBUGCTL.FREEZE_LBRS_ON_PMI: PMC0 counts instructions from 2^48 - 20 and
 * overflows inside seq_w's 40 jumps: one NMI, LBR_Frz, the jumps before
 * it and not the NMI; the log's NMI snapshot is that stack.  STATUS_RESET
 * unfreezes.
 */
static void test_arch_freeze(void)
{
	struct lrec w[40], st[ARCH_DEPTH];
	int k = 0;

	for (int i = 0; i < 40; i++)
		w[i] = (struct lrec){ REL_JMP, 0, 0, 0, w_start + 2 * i,
				      w_start + 2 * i + 2 };
	*APIC_SVR = 0x1ff;
	*APIC_LVTPC = LVT_NMI;
	pmu_clear();
	arch_reset();
	nmi_count = 0;
	wrmsr_safe(DEBUGCTL, FREEZE_LBRS_ON_PMI);
	wrmsr_safe(EVTSEL0, EV_EN | EV_OS | EV_INT | 0x00c0);
	wrmsr_safe(A_PMC0, CTR_MAX - 19);
	wrmsr_safe(GLOBAL_CTRL, 1);
	seq_w(CTL_ALL);
	wrmsr_safe(GLOBAL_CTRL, 0);
	while (k < ARCH_DEPTH && a_from(k))
		k++;
	ok(nmi_count == 1 && (rdmsr(GLOBAL_STATUS) & LBR_FRZ),
	   "overflow: one PMI (NMI), LBR_Frz set");
	ok(k > 0 && k < 40 && check_pushes(w, k, 32),
	   "frozen: the jumps before the PMI, entry 0 the last; not the NMI");
	for (int i = 0; i < ARCH_DEPTH; i++) {
		st[i] = i < k ? w[k - 1 - i] : (struct lrec){ 0 };
		st[i].type = FMT_ARCH;	/* a snapshot's type: its stack's format */
		put_aexp(i, &st[i], FMT_NMI, i < k ? (2ull << 56) : 0);
	}
	wrmsr_safe(GLOBAL_OVF_CTRL, 1 | LBR_FRZ);
	wrmsr_safe(DEBUGCTL, 0);
	arch_reset();
	seq_w(CTL_ALL);
	ok(check_pushes(w, 40, 32), "STATUS_RESET clears LBR_Frz: pushes again");
	pmu_clear();
}

static void test_arch_lbr(void)
{
	test_arch_cpuid();
	test_arch_msrs();
	test_arch_pushes();
	test_arch_cpl();
	test_arch_call_stack();
	test_arch_debug();
	test_arch_freeze();
	trace_msr = DEBUGCTL;
}
