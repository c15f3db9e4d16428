// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of arch/x86/kernel/ds.c (included at its end): the exact
 * DEBUGCTL and DS-area programming of the BTS hardware backend against
 * mocked accessors, index recovery and wrap detection when a ring is
 * saved, the hand-over of the BTS half to perf and back with its GAP
 * marker, the emulation's taken-branch rule on decoded instructions and
 * its kernel function entries (ENDBR64 under IBT), the ring starting over
 * at execve, and stepping resumed at signal delivery.  (The LBR source
 * reads perf's LBR tail, arch/x86/events/lbr_tail.c, and is tested on the
 * QEMU models: tests/vm/.)  No BTS hardware is touched: every MSR access
 * goes to the mock.
 */
#include <kunit/test.h>

#define DS_MOCK_LOG	16
#define BTS_ON		(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS | DEBUGCTLMSR_BTS_OFF_OS)
#define TEST_WIN	0xfffffe0000200000ULL

struct ds_mock_op {
	char op;		/* 'r' or 'w' */
	u32 msr;
	u64 val;
};

static struct {
	struct debug_store ds;	/* page aligned */
	u64 debugctl;
	u64 win;		/* what window() returns; 0: the ring itself */
	int windows, unwindows, nr;
	struct ds_mock_op log[DS_MOCK_LOG];
} ds_mock;

static void ds_mock_log(char op, u32 msr, u64 val)
{
	if (ds_mock.nr < DS_MOCK_LOG)
		ds_mock.log[ds_mock.nr] = (struct ds_mock_op){ op, msr, val };
	ds_mock.nr++;
}

static u64 ds_mock_rdmsr(u32 msr)
{
	u64 v = 0;

	if (msr == MSR_IA32_DEBUGCTLMSR)
		v = ds_mock.debugctl;
	ds_mock_log('r', msr, v);
	return v;
}

static void ds_mock_wrmsr(u32 msr, u64 v)
{
	ds_mock_log('w', msr, v);
	if (msr == MSR_IA32_DEBUGCTLMSR)
		ds_mock.debugctl = v;
}

static struct debug_store *ds_mock_area(void)
{
	return &ds_mock.ds;
}

static u64 ds_mock_window(struct ds_ring *r)
{
	ds_mock.windows++;
	return ds_mock.win ?: (u64)r->base;
}

static void ds_mock_unwindow(struct ds_ring *r)
{
	ds_mock.unwindows++;
}

static const struct ds_hw_ops ds_mock_ops = {
	.read_msr = ds_mock_rdmsr, .write_msr = ds_mock_wrmsr, .area = ds_mock_area,
	.window = ds_mock_window, .unwindow = ds_mock_unwindow,
};

static void ds_mock_reset(u64 debugctl)
{
	memset(&ds_mock, 0, sizeof(ds_mock));
	ds_mock.debugctl = debugctl;
}

static void expect_op(struct kunit *test, int i, char op, u32 msr, u64 val)
{
	KUNIT_ASSERT_LT(test, i, ds_mock.nr);
	KUNIT_EXPECT_EQ(test, ds_mock.log[i].op, op);
	KUNIT_EXPECT_EQ(test, ds_mock.log[i].msr, msr);
	if (op == 'w')
		KUNIT_EXPECT_EQ(test, ds_mock.log[i].val, val);
}

/* Loading over stale BTS bits: stop first, then fields, then TR|BTS|OFF_OS. */
static void ds_test_load_sequence(struct kunit *test)
{
	struct bts_record recs[8] = {};
	struct ds_trace t = {};

	ds_ring_init(&t.ring, recs, 8);
	t.ring.index = 3;
	ds_mock_reset(DEBUGCTLMSR_LBR | DEBUGCTLMSR_BTINT | DEBUGCTLMSR_BTS_OFF_USR);
	ds_mock.win = TEST_WIN;
	ds_hw_load(&ds_mock_ops, &t);

	KUNIT_EXPECT_EQ(test, ds_mock.nr, 3);
	expect_op(test, 0, 'r', MSR_IA32_DEBUGCTLMSR, 0);
	expect_op(test, 1, 'w', MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR);
	expect_op(test, 2, 'w', MSR_IA32_DEBUGCTLMSR, DEBUGCTLMSR_LBR | BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_buffer_base, TEST_WIN);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, TEST_WIN + 3 * 24);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_absolute_maximum, TEST_WIN + 8 * 24);
	/* above the maximum: circular, never an interrupt */
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_interrupt_threshold, TEST_WIN + 9 * 24);
	KUNIT_EXPECT_EQ(test, t.hw_base, TEST_WIN);
	KUNIT_EXPECT_EQ(test, ds_mock.windows, 1);
	/* PEBS half untouched */
	KUNIT_EXPECT_EQ(test, ds_mock.ds.pebs_buffer_base, 0ULL);
}

/* From a clean DEBUGCTL there is nothing to stop: one read, one write. */
static void ds_test_load_clean(struct kunit *test)
{
	struct bts_record recs[4] = {};
	struct ds_trace t = {};

	ds_ring_init(&t.ring, recs, 4);
	ds_mock_reset(0);
	ds_hw_load(&ds_mock_ops, &t);
	KUNIT_EXPECT_EQ(test, ds_mock.nr, 2);
	expect_op(test, 0, 'r', MSR_IA32_DEBUGCTLMSR, 0);
	expect_op(test, 1, 'w', MSR_IA32_DEBUGCTLMSR, BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)recs);
}

/* What the CPU would do: write n records at the index, wrapping. */
static void fake_hw_records(struct ds_trace *t, int n)
{
	struct debug_store *ds = &ds_mock.ds;
	int i;

	for (i = 0; i < n; i++) {
		struct bts_record *r = (void *)(unsigned long)ds->bts_index;

		r->from = 0x401000 + i;
		r->to = 0x402000 + i;
		ds->bts_index += sizeof(*r);
		if (ds->bts_index >= ds->bts_absolute_maximum)
			ds->bts_index = ds->bts_buffer_base;
	}
}

static void ds_test_save_index(struct kunit *test)
{
	struct bts_record recs[8] = {};
	struct ds_trace t = {};

	ds_ring_init(&t.ring, recs, 8);
	ds_mock_reset(0);
	ds_hw_load(&ds_mock_ops, &t);
	fake_hw_records(&t, 3);
	ds_mock.nr = 0;
	KUNIT_EXPECT_TRUE(test, ds_hw_save(&ds_mock_ops, &t));
	expect_op(test, 0, 'r', MSR_IA32_DEBUGCTLMSR, 0);
	expect_op(test, 1, 'w', MSR_IA32_DEBUGCTLMSR, 0);	/* stopped */
	KUNIT_EXPECT_EQ(test, ds_mock.unwindows, 1);
	KUNIT_EXPECT_EQ(test, t.ring.index, 3ULL);
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 3ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 2)->from, 0x401002ULL);
}

static void ds_test_save_wrap(struct kunit *test)
{
	struct bts_record recs[4] = {};
	struct ds_trace t = {};

	/* index went backwards: 2 -> 1 after 3 records */
	ds_ring_init(&t.ring, recs, 4);
	t.ring.index = 2;
	ds_mock_reset(0);
	ds_hw_load(&ds_mock_ops, &t);
	fake_hw_records(&t, 3);
	KUNIT_EXPECT_TRUE(test, ds_hw_save(&ds_mock_ops, &t));
	KUNIT_EXPECT_EQ(test, t.ring.index, 1ULL);
	KUNIT_EXPECT_TRUE(test, t.ring.wrapped);

	/* exactly one lap: same index, but the slot there is written */
	memset(recs, 0, sizeof(recs));
	ds_ring_init(&t.ring, recs, 4);
	ds_hw_load(&ds_mock_ops, &t);
	fake_hw_records(&t, 4);
	KUNIT_EXPECT_TRUE(test, ds_hw_save(&ds_mock_ops, &t));
	KUNIT_EXPECT_EQ(test, t.ring.index, 0ULL);
	KUNIT_EXPECT_TRUE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 4ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 0)->from, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 3)->from, 0x401003ULL);
}

/* A DS area someone else rewrote is not read as our index. */
static void ds_test_save_foreign(struct kunit *test)
{
	struct bts_record recs[4] = {};
	struct ds_trace t = {};

	ds_ring_init(&t.ring, recs, 4);
	ds_mock_reset(0);
	ds_hw_load(&ds_mock_ops, &t);
	ds_mock.ds.bts_index += 5;			/* not a record boundary */
	KUNIT_EXPECT_FALSE(test, ds_hw_save(&ds_mock_ops, &t));
	ds_hw_load(&ds_mock_ops, &t);
	ds_mock.ds.bts_buffer_base = TEST_WIN;		/* perf's buffer */
	ds_mock.ds.bts_index = TEST_WIN;
	KUNIT_EXPECT_FALSE(test, ds_hw_save(&ds_mock_ops, &t));
	ds_hw_load(&ds_mock_ops, &t);
	ds_mock.ds.bts_index = ds_mock.ds.bts_absolute_maximum + 24;
	KUNIT_EXPECT_FALSE(test, ds_hw_save(&ds_mock_ops, &t));
	KUNIT_EXPECT_EQ(test, t.ring.index, 0ULL);
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);
}

static u32 last_marker(const struct ds_trace *t)
{
	const struct bts_record *r = ds_ring_get(&t->ring, ds_ring_count(&t->ring) - 1);

	if ((r->from & BTS_MARKER_TAG_MASK) != BTS_MARKER_TAG)
		return 0;
	return BTS_MARKER_KIND(r->from) | BTS_MARKER_SUB(r->from) << 16;
}

/*
 * This CPU for a test of the hardware backend: IRQs off, a clean ds_cpu,
 * the mock's MSRs and DS area.  ds_test_cpu_end() puts all of it back.
 */
struct ds_test_cpu {
	struct ds_cpu saved;
	bool hw_ok;
};

static struct ds_cpu *ds_test_cpu_begin(struct ds_test_cpu *s)
{
	struct ds_cpu *c;

	ds_mock_reset(0);
	local_irq_disable();
	c = this_cpu_ptr(&ds_cpu);
	s->saved = *c;
	s->hw_ok = ds_hw_ok;
	memset(c, 0, sizeof(*c));
	ds_hw = &ds_mock_ops;
	ds_hw_ok = true;
	return c;
}

static void ds_test_cpu_end(struct ds_test_cpu *s)
{
	ds_hw_ok = s->hw_ok;
	ds_hw = &ds_native_ops;
	*this_cpu_ptr(&ds_cpu) = s->saved;
	local_irq_enable();
}

/* ds_test_cpu_begin(), and a traced task with ring recs[n] switched in. */
static struct ds_cpu *ds_test_traced_in(struct ds_test_cpu *s, struct ds_trace *t,
					struct bts_record *recs, u64 n)
{
	struct ds_cpu *c;

	ds_ring_init(&t->ring, recs, n);
	t->armed = true;
	c = ds_test_cpu_begin(s);
	ds_task_switch(NULL, t, 1000, 1);
	return c;
}

/* Switch in, perf takes BTS, perf lets go, switch out. */
static void ds_test_perf_handover(struct kunit *test)
{
	struct bts_record recs[16] = {};
	struct ds_trace t = {};
	struct ds_test_cpu saved;
	struct ds_cpu *c = ds_test_traced_in(&saved, &t, recs, 16);

	KUNIT_EXPECT_EQ(test, last_marker(&t), (u32)BTS_MARK_SWITCH_IN);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_FALSE(test, ds_bts_holds(DS_USER_INTEL_BTS));
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[1]);
	fake_hw_records(&t, 2);

	ds_bts_request(DS_USER_INTEL_BTS);
	KUNIT_EXPECT_TRUE(test, ds_bts_holds(DS_USER_INTEL_BTS));
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);
	KUNIT_EXPECT_EQ(test, t.ring.index, 3ULL);
	KUNIT_EXPECT_NE(test, t.gap_since, 0ULL);

	ds_bts_release(DS_USER_INTEL_BTS);
	KUNIT_EXPECT_FALSE(test, ds_bts_holds(DS_USER_INTEL_BTS));
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_EQ(test, last_marker(&t), (u32)(BTS_MARK_GAP | BTS_GAP_PERF << 16));
	KUNIT_EXPECT_EQ(test, t.gap_since, 0ULL);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[4]);

	/* while perf holds BTS a switch-in only starts the gap */
	ds_task_switch(&t, NULL, 3000, 1);
	KUNIT_EXPECT_EQ(test, last_marker(&t), (u32)BTS_MARK_SWITCH_OUT);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);
	ds_bts_request(DS_USER_BTS_EVENT);
	ds_task_switch(NULL, &t, 4000, 1);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, t.gap_since, 4000ULL);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);
	ds_task_switch(&t, NULL, 5000, 1);
	ds_bts_release(DS_USER_BTS_EVENT);
	KUNIT_EXPECT_FALSE(test, ds_bts_holds(DS_USER_BTS_EVENT));
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, ds_mock.windows, ds_mock.unwindows);

	ds_test_cpu_end(&saved);
}

/*
 * The kernel ring's hole: while a traced task's ring holds BTS the CPU's
 * kernel ring records nothing.  It gets a SUSPEND marker with the task's
 * id when the task's ring goes in, and a GAP (reason task) with the hole's
 * length when it is loaded again (format.md §1.1).
 */
static void ds_test_kernel_hole(struct kunit *test)
{
	struct bts_record recs[8] = {}, krecs[8] = {};
	struct ds_trace t = { .tid = 77 }, k = { .kernel = true };
	const struct bts_record *r;
	struct ds_test_cpu saved;
	struct ds_cpu *c;

	ds_ring_init(&t.ring, recs, 8);
	t.armed = true;
	ds_ring_init(&k.ring, krecs, 8);
	k.hw_base = (u64)krecs;
	c = ds_test_cpu_begin(&saved);
	c->kernel = &k;
	ds_hw_settle(c, 500);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &k);
	fake_hw_records(&k, 2);

	ds_task_switch(NULL, &t, 1000, 1);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_EQ(test, last_marker(&k), (u32)(BTS_MARK_SUSPEND | BTS_GAP_TASK << 16));
	r = ds_ring_get(&k.ring, ds_ring_count(&k.ring) - 1);
	KUNIT_EXPECT_EQ(test, r->to, 1000ULL);
	KUNIT_EXPECT_EQ(test, r->flags, 77ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&k.ring), 3ULL);

	ds_task_switch(&t, NULL, 3000, 1);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &k);
	KUNIT_EXPECT_EQ(test, last_marker(&k), (u32)(BTS_MARK_GAP | BTS_GAP_TASK << 16));
	r = ds_ring_get(&k.ring, ds_ring_count(&k.ring) - 1);
	KUNIT_EXPECT_EQ(test, r->to, 3000ULL);
	KUNIT_EXPECT_EQ(test, r->flags, 2000ULL);
	KUNIT_EXPECT_EQ(test, k.gap_since, 0ULL);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&krecs[4]);
	KUNIT_EXPECT_EQ(test, ds_mock.windows, ds_mock.unwindows);
	ds_test_cpu_end(&saved);
}

/*
 * Two perf users overlap on one CPU: intel_bts runs, then PT starts (where
 * lbr_pt_coexist lets the two run together) and stops.  The recorder must
 * wait for the last one: reloading its ring when PT stops would put it
 * under intel_bts (perf's index reset, perf's TR cleared later while the
 * recorder thinks its ring loaded).  A second release, or a stop whose
 * start failed (never taken), gives back nothing.
 */
static void ds_test_perf_two_users(struct kunit *test)
{
	struct bts_record recs[16] = {};
	struct ds_trace t = {};
	struct ds_test_cpu saved;
	struct ds_cpu *c = ds_test_traced_in(&saved, &t, recs, 16);

	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);

	ds_bts_request(DS_USER_INTEL_BTS);
	/* intel_bts programs its buffer and starts */
	ds_mock.ds.bts_buffer_base = TEST_WIN;
	ds_mock.ds.bts_index = TEST_WIN + 48;
	ds_mock.debugctl = DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS;
	ds_bts_request(DS_USER_PT);
	ds_bts_release(DS_USER_PT);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_buffer_base, TEST_WIN);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, TEST_WIN + 48);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS));
	/* PT's stop again, and a BTS event's stop whose start failed */
	ds_bts_release(DS_USER_PT);
	ds_bts_release(DS_USER_BTS_EVENT);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, (struct ds_trace *)NULL);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, TEST_WIN + 48);

	/* the last one lets go: the ring again, behind a GAP marker */
	ds_mock.debugctl = 0;
	ds_bts_release(DS_USER_INTEL_BTS);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_EQ(test, last_marker(&t), (u32)(BTS_MARK_GAP | BTS_GAP_PERF << 16));
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[2]);
	/* given back twice, or by one that never took it: still the recorder's */
	ds_bts_release(DS_USER_INTEL_BTS);
	ds_bts_release(DS_USER_PT);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)BTS_ON);

	ds_task_switch(&t, NULL, 2000, 1);
	KUNIT_EXPECT_EQ(test, ds_mock.windows, ds_mock.unwindows);
	ds_test_cpu_end(&saved);
}

/*
 * perf's intel_pmu_reset() (a PMI storm) while the recorder's ring holds
 * the BTS half: the index stays (reset under the ring, the next save read
 * a wrap that never happened and the ring restarted at slot 0); while a
 * perf user holds the half, perf's index is reset as upstream does.
 */
static void ds_test_pmu_reset_bts(struct kunit *test)
{
	struct bts_record recs[16] = {};
	struct ds_trace t = {};
	struct ds_test_cpu saved;

	ds_test_traced_in(&saved, &t, recs, 16);
	fake_hw_records(&t, 2);
	ds_pmu_reset(&ds_mock.ds);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[3]);
	ds_task_switch(&t, NULL, 2000, 1);
	KUNIT_EXPECT_EQ(test, t.ring.index, 4ULL);	/* + the switch-out marker */
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);

	ds_bts_request(DS_USER_INTEL_BTS);
	ds_mock.ds.bts_buffer_base = TEST_WIN;
	ds_mock.ds.bts_index = TEST_WIN + 48;
	ds_pmu_reset(&ds_mock.ds);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, TEST_WIN);
	ds_bts_release(DS_USER_INTEL_BTS);
	ds_test_cpu_end(&saved);
}

/*
 * execve: the old program's records go, the ring starts over zeroed and,
 * when it was loaded, is reloaded at its start (hardware); the emulation
 * restarts stepping from the new entry point.
 */
static void ds_test_exec_restart(struct kunit *test)
{
	struct bts_record recs[4] = {}, zero[4] = {};
	struct ds_trace t = {};
	struct pt_regs regs = {};
	struct ds_test_cpu saved;
	struct ds_cpu *c;

	ds_ring_init(&t.ring, recs, 4);
	t.armed = true;
	c = ds_test_cpu_begin(&saved);

	ds_task_switch(NULL, &t, 1000, 1);
	fake_hw_records(&t, 6);			/* wraps the 4-slot ring */
	ds_task_trace_exec(&regs, &t);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 0ULL);
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, memcmp(recs, zero, sizeof(recs)), 0);
	KUNIT_EXPECT_PTR_EQ(test, c->loaded, &t);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)BTS_ON);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[0]);
	KUNIT_EXPECT_EQ(test, regs.flags & X86_EFLAGS_TF, 0UL);
	/* the new program's first records: not taken for a wrap */
	fake_hw_records(&t, 2);
	ds_task_switch(&t, NULL, 2000, 1);
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, t.ring.index, 3ULL);	/* 2 + SWITCH_OUT */
	KUNIT_EXPECT_EQ(test, ds_mock.windows, ds_mock.unwindows);

	ds_hw_ok = false;
	ds_ring_write(&t.ring, 0x401000, 0x402000, 0);
	t.have_prev = true;
	ds_task_trace_exec(&regs, &t);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 0ULL);
	KUNIT_EXPECT_EQ(test, memcmp(recs, zero, sizeof(recs)), 0);
	if (ds_emulate) {
		KUNIT_EXPECT_FALSE(test, t.have_prev);
		KUNIT_EXPECT_NE(test, regs.flags & X86_EFLAGS_TF, 0UL);
	}

	ds_test_cpu_end(&saved);
}

/*
 * Signal delivery and rt_sigreturn: with the emulation, stepping resumes at
 * the new ip with TF on and nothing recorded; otherwise nothing changes.
 */
static void ds_test_resume_at(struct kunit *test)
{
	bool saved_ok = ds_hw_ok;
	struct bts_record recs[4] = {};
	struct ds_trace t = {};
	struct pt_regs regs = { .ip = 0x401960 };

	ds_ring_init(&t.ring, recs, 4);
	t.armed = true;
	t.prev_ip = 0x413b99;		/* the syscall the signal came at */
	t.have_prev = true;
	ds_hw_ok = false;
	t.user_tf = true;		/* the program's TF: none in its handler */
	ds_task_trace_resume_at(&regs, &t, true);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 0ULL);
	if (ds_emulate) {
		KUNIT_EXPECT_EQ(test, t.prev_ip, 0x401960UL);
		KUNIT_EXPECT_NE(test, regs.flags & X86_EFLAGS_TF, 0UL);
		KUNIT_EXPECT_FALSE(test, t.user_tf);
		/* sigreturn with TF in the frame: the program's comes back */
		ds_task_trace_resume_at(&regs, &t, false);
		KUNIT_EXPECT_TRUE(test, t.user_tf);
		/* the handler cleared it in the frame: it stays off */
		ds_task_trace_resume_at(&regs, &t, true);
		regs.flags &= ~X86_EFLAGS_TF;
		ds_task_trace_resume_at(&regs, &t, false);
		KUNIT_EXPECT_FALSE(test, t.user_tf);
		KUNIT_EXPECT_NE(test, regs.flags & X86_EFLAGS_TF, 0UL);	/* ours */
	} else {
		KUNIT_EXPECT_EQ(test, t.prev_ip, 0x413b99UL);
		KUNIT_EXPECT_EQ(test, regs.flags & X86_EFLAGS_TF, 0UL);
	}
	t.armed = false;		/* an unarmed trace is left alone */
	regs.flags = 0;
	regs.ip = 0x408a60;
	ds_task_trace_resume_at(&regs, &t, true);
	KUNIT_EXPECT_EQ(test, regs.flags & X86_EFLAGS_TF, 0UL);
	KUNIT_EXPECT_NE(test, t.prev_ip, 0x408a60UL);
	ds_hw_ok = saved_ok;
}

/*
 * Steps that span two instructions: after a system call and after a load
 * of SS (SDM Vol. 3A 6.8.3), decoded in the task's mode.
 */
static void ds_test_delays_trap(struct kunit *test)
{
	static const struct {
		u8 bytes[3];
		int len;
		enum insn_mode mode;
		bool delays;
	} cases[] = {
		{ { 0x0f, 0x05 }, 2, INSN_MODE_64, true },	/* syscall */
		{ { 0x0f, 0x34 }, 2, INSN_MODE_32, true },	/* sysenter */
		{ { 0xcd, 0x80 }, 2, INSN_MODE_64, true },	/* int $0x80 */
		{ { 0xcd, 0x03 }, 2, INSN_MODE_64, false },	/* int $3 */
		{ { 0x8e, 0xd0 }, 2, INSN_MODE_64, true },	/* mov %eax,%ss */
		{ { 0x8e, 0xd8 }, 2, INSN_MODE_64, false },	/* mov %eax,%ds */
		{ { 0x17 }, 1, INSN_MODE_32, true },		/* pop %ss */
		{ { 0x90 }, 1, INSN_MODE_64, false },		/* nop */
	};
	struct insn insn;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_ASSERT_EQ(test, insn_decode(&insn, cases[i].bytes, cases[i].len,
						  cases[i].mode), 0);
		KUNIT_EXPECT_EQ_MSG(test, ds_insn_delays_trap(&insn, cases[i].mode),
				    cases[i].delays, "case %d", i);
	}
}

/* The call instruction before a return address, for each call form. */
static void ds_test_call_site(struct kunit *test)
{
	static const struct { u8 code[8]; int len; } calls[] = {
		{ { 0x90, 0x90, 0x90, 0xe8, 0x10, 0x20, 0x30, 0x40 }, 5 },	/* call rel32 */
		{ { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0 }, 2 },	/* call *%rax */
		{ { 0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xff, 0xd3 }, 3 },	/* call *%r11 */
		{ { 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0x50, 0x08 }, 3 },	/* call *8(%rax) */
		{ { 0x90, 0x90, 0xff, 0x90, 0x00, 0x01, 0x00, 0x00 }, 6 }, /* call *0x100(%rax) */
		{ { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 }, 0 },	/* no call */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		unsigned long ret = (unsigned long)&calls[i].code[8];

		KUNIT_EXPECT_EQ_MSG(test, ds_call_site(ret), ret - calls[i].len, "case %d", i);
	}
}

/* A traced function whose address is taken: it starts with ENDBR64 (IBT). */
static noinline void ds_test_traced(void)
{
	barrier();
}

/*
 * The function entry for ftrace's call site: the ENDBR64 before the
 * __fentry__ call with kernel IBT, the call itself without (or where the
 * bytes before it are no ENDBR); a real traced function, then bytes.
 */
static void ds_test_fn_entry(struct kunit *test)
{
	static const u8 endbr[8] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0x10, 0x20, 0x30 };
	static const u8 nops[8] = { 0x90, 0x90, 0x90, 0x90, 0xe8, 0x10, 0x20, 0x30 };
	unsigned long fn = (unsigned long)ds_test_traced;
	unsigned long call;

	/* no relocation to fn + 4, which objtool flags under IBT (!ENDBR) */
	OPTIMIZER_HIDE_VAR(fn);
	call = ftrace_location(fn);

	KUNIT_ASSERT_NE_MSG(test, call, 0UL, "no ftrace call site in %ps", ds_test_traced);
	KUNIT_EXPECT_EQ(test, call - fn, (unsigned long)ENDBR_INSN_SIZE);
	KUNIT_EXPECT_EQ(test, ds_fn_entry(call), fn);
	KUNIT_EXPECT_EQ(test, ds_fn_entry((unsigned long)&endbr[4]),
			(unsigned long)&endbr[4 - ENDBR_INSN_SIZE]);
	KUNIT_EXPECT_EQ(test, ds_fn_entry((unsigned long)&nops[4]), (unsigned long)&nops[4]);
}

/*
 * The emulation's taken-branch rule, on decoded instructions: a transfer
 * that always branches is recorded even onto the next instruction or
 * itself; other steps only when they left the straight path.
 */
static void ds_test_emul_taken(struct kunit *test)
{
	static const struct {
		u8 code[MAX_INSN_SIZE];
		long to;	/* ip after the step, relative to from */
		bool taken;
		const char *what;
	} steps[] = {
		{ { 0xe8, 0, 0, 0, 0 }, 5, true, "call to the next instruction" },
		{ { 0xff, 0xe0 }, 2, true, "jmp *%rax to the next (jump table)" },
		{ { 0x3e, 0xff, 0xe0 }, 3, true, "notrack jmp *%rax to the next" },
		{ { 0x41, 0xff, 0xd3 }, 3, true, "call *%r11 to the next" },
		{ { 0xeb, 0xfe }, 0, true, "jmp . (onto itself)" },
		{ { 0xc3 }, 1, true, "ret to the next" },
		{ { 0xe9, 0x10, 0, 0, 0 }, 0x15, true, "jmp rel32" },
		{ { 0x74, 0x05 }, 7, true, "je, taken" },
		{ { 0x74, 0x05 }, 2, false, "je, not taken" },
		{ { 0x90 }, 1, false, "nop" },
		{ { 0xf3, 0xa4 }, 0, false, "rep movsb, one iteration" },
		{ { 0xf3, 0xa4 }, 2, false, "rep movsb, done" },
		{ { 0xff, 0x30 }, 2, false, "push (%rax): ff /6 is no branch" },
		{ { 0x0f, 0x0b }, 0x40, true, "ud2, then elsewhere (a signal)" },
	};
	const unsigned long from = 0x401000;
	int i;

	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		struct insn insn;
		int len = insn_decode(&insn, steps[i].code, MAX_INSN_SIZE,
				      INSN_MODE_64) < 0 ? 0 : insn.length;

		KUNIT_EXPECT_GT_MSG(test, len, 0, "%s decodes", steps[i].what);
		KUNIT_EXPECT_EQ_MSG(test, ds_emul_taken(&insn, len, from,
							from + steps[i].to),
				    steps[i].taken, "%s", steps[i].what);
	}
	KUNIT_EXPECT_TRUE_MSG(test, ds_emul_taken(NULL, 0, from, from + 9),
			      "an undecodable instruction that moved on");
	KUNIT_EXPECT_FALSE_MSG(test, ds_emul_taken(NULL, 0, from, from),
			       "an undecodable instruction that stayed");
}

/*
 * Under KPTI the CPU would write records through the user page tables, so
 * a ring would have to be mapped there, readable by a Meltdown-style read
 * from any process: the hardware backend stays off (traced tasks get the
 * emulation).  Runs with PTI on (vm-pti, and vm-hw-pti on the BTS model).
 */
static void ds_test_no_hw_under_pti(struct kunit *test)
{
	if (!boot_cpu_has(X86_FEATURE_PTI))
		kunit_skip(test, "needs PTI");
	KUNIT_EXPECT_FALSE(test, ds_hw_ok);
	KUNIT_EXPECT_NE(test, ds_backend(), DS_BACKEND_HW);
}

static struct kunit_case ds_test_cases[] = {
	KUNIT_CASE(ds_test_call_site),
	KUNIT_CASE(ds_test_fn_entry),
	KUNIT_CASE(ds_test_emul_taken),
	KUNIT_CASE(ds_test_load_sequence),
	KUNIT_CASE(ds_test_load_clean),
	KUNIT_CASE(ds_test_save_index),
	KUNIT_CASE(ds_test_save_wrap),
	KUNIT_CASE(ds_test_save_foreign),
	KUNIT_CASE(ds_test_perf_handover),
	KUNIT_CASE(ds_test_perf_two_users),
	KUNIT_CASE(ds_test_pmu_reset_bts),
	KUNIT_CASE(ds_test_kernel_hole),
	KUNIT_CASE(ds_test_exec_restart),
	KUNIT_CASE(ds_test_resume_at),
	KUNIT_CASE(ds_test_delays_trap),
	KUNIT_CASE(ds_test_no_hw_under_pti),
	{}
};

static struct kunit_suite ds_test_suite = {
	.name = "x86_ds",
	.test_cases = ds_test_cases,
};

kunit_test_suite(ds_test_suite);
