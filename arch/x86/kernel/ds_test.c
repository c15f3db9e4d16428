// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of arch/x86/kernel/ds.c (included at its end): the exact
 * DEBUGCTL and DS-area programming of the BTS hardware backend against
 * mocked accessors, index recovery and wrap detection when a ring is
 * saved, the hand-over of the BTS half to perf and back with its GAP
 * marker, the emulation's taken-branch rule on decoded instructions and
 * its kernel function entries (ENDBR64 under IBT), the ring starting over
 * at execve, and stepping resumed at signal delivery;
 * the LBR source's own-entries rule, wrap, freeze at an oops and hand-over
 * to perf, on Intel's stack and on AMD's LbrExtV2 (the switch-in mark
 * found again by a scan).  No BTS or LBR hardware is touched: every MSR
 * access goes to the mock.
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

#define LBR_DEPTH	32
#define AMD_DEPTH	16

static struct {
	struct debug_store ds;	/* page aligned */
	u64 debugctl;
	/* the LBR stack (model-specific, Skylake format) */
	u64 lbr_from[LBR_DEPTH], lbr_to[LBR_DEPTH], lbr_info[LBR_DEPTH];
	u64 lbr_tos, lbr_select;
	/* AMD LbrExtV2: entry 0 the newest, raw LBR_FROM/LBR_TO values */
	u64 amd_from[AMD_DEPTH], amd_to[AMD_DEPTH];
	u64 dbg_extn_cfg, amd_select;
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
	else if (msr == MSR_LBR_TOS)
		v = ds_mock.lbr_tos;
	else if (msr == MSR_LBR_SELECT)
		v = ds_mock.lbr_select;
	else if (msr - MSR_LBR_NHM_FROM < LBR_DEPTH)
		v = ds_mock.lbr_from[msr - MSR_LBR_NHM_FROM];
	else if (msr - MSR_LBR_NHM_TO < LBR_DEPTH)
		v = ds_mock.lbr_to[msr - MSR_LBR_NHM_TO];
	else if (msr - MSR_LBR_INFO_0 < LBR_DEPTH)
		v = ds_mock.lbr_info[msr - MSR_LBR_INFO_0];
	else if (msr == MSR_AMD_DBG_EXTN_CFG)
		v = ds_mock.dbg_extn_cfg;
	else if (msr == MSR_AMD64_LBR_SELECT)
		v = ds_mock.amd_select;
	else if (msr - MSR_AMD_SAMP_BR_FROM < 2 * AMD_DEPTH)
		v = (msr - MSR_AMD_SAMP_BR_FROM) & 1 ?
		    ds_mock.amd_to[(msr - MSR_AMD_SAMP_BR_FROM) / 2] :
		    ds_mock.amd_from[(msr - MSR_AMD_SAMP_BR_FROM) / 2];
	ds_mock_log('r', msr, v);
	return v;
}

static void ds_mock_wrmsr(u32 msr, u64 v)
{
	ds_mock_log('w', msr, v);
	if (msr == MSR_IA32_DEBUGCTLMSR)
		ds_mock.debugctl = v;
	else if (msr == MSR_LBR_SELECT)
		ds_mock.lbr_select = v;
	else if (msr == MSR_AMD_DBG_EXTN_CFG)
		ds_mock.dbg_extn_cfg = v;
	else if (msr == MSR_AMD64_LBR_SELECT)
		ds_mock.amd_select = v;
}

/* The CPU takes a branch: pushed only while DEBUGCTL.LBR is set. */
static void ds_mock_lbr_push(u64 from, u64 to, bool mispred)
{
	if (!(ds_mock.debugctl & DEBUGCTLMSR_LBR))
		return;
	ds_mock.lbr_tos = (ds_mock.lbr_tos + 1) % LBR_DEPTH;
	ds_mock.lbr_from[ds_mock.lbr_tos] = from;
	ds_mock.lbr_to[ds_mock.lbr_tos] = to;
	ds_mock.lbr_info[ds_mock.lbr_tos] = mispred ? DS_LBR_INFO_MISPRED : 0;
}

/*
 * LbrExtV2 takes a branch while LBRV2EN is set (APM Vol. 2 13.1.1): the
 * entries shift down, entry 0 gets it, valid; addresses as the CPU keeps
 * them (bits 62:0 of FROM, 60:0 of TO).
 */
static void ds_mock_amd_push(u64 from, u64 to, bool mispred)
{
	if (!(ds_mock.dbg_extn_cfg & DBG_EXTN_CFG_LBRV2EN))
		return;
	memmove(&ds_mock.amd_from[1], &ds_mock.amd_from[0], 8 * (AMD_DEPTH - 1));
	memmove(&ds_mock.amd_to[1], &ds_mock.amd_to[0], 8 * (AMD_DEPTH - 1));
	ds_mock.amd_from[0] = (from & GENMASK_ULL(62, 0)) | (mispred ? DS_LBR_AMD_MISPRED : 0);
	ds_mock.amd_to[0] = (to & GENMASK_ULL(60, 0)) | DS_LBR_AMD_VALID;
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
	ds_pmu_reset(&ds_mock.ds, false);
	KUNIT_EXPECT_EQ(test, ds_mock.ds.bts_index, (u64)&recs[3]);
	ds_task_switch(&t, NULL, 2000, 1);
	KUNIT_EXPECT_EQ(test, t.ring.index, 4ULL);	/* + the switch-out marker */
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);

	ds_bts_request(DS_USER_INTEL_BTS);
	ds_mock.ds.bts_buffer_base = TEST_WIN;
	ds_mock.ds.bts_index = TEST_WIN + 48;
	ds_pmu_reset(&ds_mock.ds, false);
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
	unsigned long call = ftrace_location(fn);

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

/*
 * This CPU for a test of the LBR source in MODE: the hardware test setup
 * (mock MSRs, IRQs off) without the BTS backend, a clean ds_lbr_cpu, a depth of 32 and no
 * kernel ring; ds_test_lbr_end() puts back what the running kernel had.
 */
struct ds_test_lbr {
	struct ds_test_cpu cpu;
	struct ds_lbr_cpu saved;
	enum ds_lbr_mode mode;
	unsigned int depth;
	struct ds_trace *kernel_of;
};

/* the running kernel's LBR hardware while a test runs (they never nest) */
static const struct ds_lbr_ops *ds_test_lbr_hw;

static struct ds_lbr_cpu *ds_test_lbr_begin(struct ds_test_lbr *s, enum ds_lbr_mode mode)
{
	struct ds_lbr_cpu *m;

	ds_test_cpu_begin(&s->cpu);
	ds_hw_ok = false;	/* no BTS: ds_hw_stop_cpu() touches only the LBR */
	m = this_cpu_ptr(&ds_lbr_cpu);
	s->saved = *m;
	s->mode = ds_lbr_mode;
	s->depth = ds_lbr_depth;
	ds_test_lbr_hw = ds_lbr_hw;
	s->kernel_of = this_cpu_read(ds_kernel_of);
	memset(m, 0, sizeof(*m));
	this_cpu_write(ds_kernel_of, NULL);
	ds_lbr_mode = mode;
	ds_lbr_depth = LBR_DEPTH;
	ds_lbr_hw = &ds_lbr_intel;	/* ds_test_lbr_amd(): AMD's */
	return m;
}

static void ds_test_lbr_end(struct ds_test_lbr *s)
{
	ds_lbr_mode = s->mode;
	ds_lbr_depth = s->depth;
	ds_lbr_hw = ds_test_lbr_hw;
	this_cpu_write(ds_kernel_of, s->kernel_of);
	*this_cpu_ptr(&ds_lbr_cpu) = s->saved;
	ds_test_cpu_end(&s->cpu);
}

/* The kernel source on this CPU, t its kernel ring (32 records at recs),
 * recording: what an oops, a BUG trap or the crash path freezes.
 */
static void ds_test_lbr_kernel_begin(struct ds_test_lbr *s, struct ds_trace *t,
				     struct bts_record *recs)
{
	ds_ring_init(&t->ring, recs, LBR_DEPTH);
	ds_test_lbr_begin(s, DS_LBR_KERNEL);
	this_cpu_write(ds_kernel_of, t);
	ds_lbr_cpu_start();
}

static bool is_gap_perf(const struct bts_record *r)
{
	return r->from == BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF);
}

/*
 * User source: LBR_SELECT drops ring-0 endings; a task reads back only
 * what was pushed since its switch-in, oldest first, MISPRED as "not
 * predicted"; another task on the CPU reads nothing of it.
 */
static void ds_test_lbr_own_entries(struct kunit *test)
{
	struct bts_record out[LBR_DEPTH];
	struct ds_test_lbr saved;
	unsigned int n, i;
	bool wrapped;

	ds_test_lbr_begin(&saved, DS_LBR_USER);
	ds_lbr_cpu_start();
	KUNIT_EXPECT_EQ(test, ds_mock.lbr_select, DS_LBR_SEL_CPL_EQ_0);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	for (i = 0; i < 5; i++)		/* the task before */
		ds_mock_lbr_push(0x1000 + i, 0x2000 + i, false);
	ds_lbr_switch_in(current);
	ds_mock_lbr_push(0x401000, 0x401100, false);
	ds_mock_lbr_push(0x401200, 0x401300, true);
	ds_mock_lbr_push(0x401400, 0x401500, false);
	ds_mock.lbr_info[ds_mock.lbr_tos] |= 0x1234;	/* CYC_CNT */
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 3U);
	KUNIT_EXPECT_FALSE(test, wrapped);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, out[0].to, 0x401100ULL);
	KUNIT_EXPECT_EQ(test, out[0].flags, (u64)BTS_REC_F_PREDICTED);
	KUNIT_EXPECT_EQ(test, out[1].flags, 0ULL);	/* mispredicted, no count */
	KUNIT_EXPECT_EQ(test, out[2].from, 0x401400ULL);
	KUNIT_EXPECT_EQ(test, out[2].flags, BTS_REC_F_PREDICTED | BTS_REC_F_CYCLES |
			0x1234ULL << BTS_REC_CYCLES_SHIFT);
	ds_lbr_switch_in((struct task_struct *)&saved);	/* someone else */
	KUNIT_EXPECT_EQ(test, ds_lbr_read(out, &wrapped), 0U);
	ds_test_lbr_end(&saved);
}

/* More than 32 branches since the switch-in: the newest 32, wrapped. */
static void ds_test_lbr_wrap(struct kunit *test)
{
	struct bts_record out[LBR_DEPTH];
	struct ds_test_lbr saved;
	unsigned int n, i;
	bool wrapped;

	ds_test_lbr_begin(&saved, DS_LBR_USER);
	ds_lbr_cpu_start();
	ds_mock_lbr_push(0x1000, 0x2000, false);
	ds_lbr_switch_in(current);
	for (i = 0; i < 40; i++)
		ds_mock_lbr_push(0x400000 + i, 0x500000 + i, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, LBR_DEPTH);
	KUNIT_EXPECT_TRUE(test, wrapped);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x400000ULL + 8);
	KUNIT_EXPECT_EQ(test, out[LBR_DEPTH - 1].from, 0x400000ULL + 39);
	ds_test_lbr_end(&saved);
}

/*
 * Perf takes the stack (patch 0017): the recorder clears its filter and
 * DEBUGCTL.LBR and touches nothing until perf lets go (a #DB, a switch-in
 * included); reading meanwhile gives a GAP marker only; afterwards a GAP
 * marker, then the task's own entries, never perf's.
 */
static void ds_test_lbr_perf_handover(struct kunit *test)
{
	struct bts_record out[LBR_DEPTH];
	struct ds_test_lbr saved;
	struct ds_lbr_cpu *m;
	unsigned int n;
	bool wrapped;

	m = ds_test_lbr_begin(&saved, DS_LBR_USER);
	ds_lbr_cpu_start();
	ds_lbr_switch_in(current);
	ds_mock_lbr_push(0x401000, 0x401100, false);

	ds_lbr_request(DS_USER_LBR);
	KUNIT_EXPECT_TRUE(test, m->perf);
	KUNIT_EXPECT_EQ(test, ds_mock.lbr_select, 0ULL);
	KUNIT_EXPECT_FALSE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 1U);
	KUNIT_EXPECT_TRUE(test, is_gap_perf(&out[0]));

	/* perf programs and uses it; the recorder keeps off */
	ds_mock.lbr_select = 0x1c4;
	ds_mock.debugctl |= DEBUGCTLMSR_LBR;
	ds_mock_lbr_push(0xffffffff81000000ULL, 0xffffffff81000100ULL, false);
	ds_mock_lbr_push(0x7000, 0x7100, false);
	ds_lbr_notify(NULL, DIE_DEBUG, NULL);
	ds_lbr_switch_in(current);
	ds_lbr_request(DS_USER_LBR);
	KUNIT_EXPECT_EQ(test, ds_mock.lbr_select, 0x1c4ULL);

	ds_mock.debugctl &= ~DEBUGCTLMSR_LBR;	/* perf's last disable */
	ds_lbr_release(DS_USER_LBR);
	KUNIT_EXPECT_FALSE(test, m->perf);
	KUNIT_EXPECT_EQ(test, ds_mock.lbr_select, DS_LBR_SEL_CPL_EQ_0);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	ds_mock_lbr_push(0x402000, 0x402100, false);
	ds_mock_lbr_push(0x402200, 0x402300, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 3U);
	KUNIT_EXPECT_TRUE(test, is_gap_perf(&out[0]));
	KUNIT_EXPECT_GT(test, out[0].flags, 0ULL);	/* the gap's length */
	KUNIT_EXPECT_EQ(test, out[1].from, 0x402000ULL);
	KUNIT_EXPECT_EQ(test, out[2].from, 0x402200ULL);
	/* a release without a hold changes nothing */
	ds_lbr_release(DS_USER_LBR);
	KUNIT_EXPECT_FALSE(test, m->perf);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	/* the next switch-in starts clean: no gap */
	ds_lbr_switch_in(current);
	ds_mock_lbr_push(0x403000, 0x403100, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 1U);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x403000ULL);
	ds_test_lbr_end(&saved);
}

/*
 * Kernel source: LBR_SELECT drops endings above ring 0; an oops's hold
 * clears DEBUGCTL.LBR as its very first MSR access and fills the CPU's
 * kernel ring with the stack, oldest first; the panic after it keeps
 * that; once the oops is over it records again; a freeze while perf holds
 * the stack gives a GAP marker.
 */
static void ds_test_lbr_kernel_freeze(struct kunit *test)
{
	struct bts_record recs[LBR_DEPTH] = {};
	struct ds_test_lbr saved;
	struct ds_trace t = {};
	unsigned int i;

	ds_test_lbr_kernel_begin(&saved, &t, recs);
	KUNIT_EXPECT_EQ(test, ds_mock.lbr_select, DS_LBR_SEL_CPL_NEQ_0);
	for (i = 0; i < 40; i++)
		ds_mock_lbr_push(0xffffffff81000000ULL + i, 0xffffffff82000000ULL + i,
				 i == 39);
	ds_mock.nr = 0;
	ds_kernel_trace_hold(true);
	expect_op(test, 0, 'r', MSR_IA32_DEBUGCTLMSR, 0);
	expect_op(test, 1, 'w', MSR_IA32_DEBUGCTLMSR, 0);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), (u64)LBR_DEPTH);
	KUNIT_EXPECT_TRUE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 0)->from, 0xffffffff81000000ULL + 8);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 31)->to, 0xffffffff82000000ULL + 39);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 31)->flags, 0ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 30)->flags, (u64)BTS_REC_F_PREDICTED);

	/* the panic path stops the CPU again: what the oops found stays */
	ds_mock.debugctl |= DEBUGCTLMSR_LBR;
	ds_mock_lbr_push(0xffffffff83000000ULL, 0xffffffff83000100ULL, false);
	ds_hw_stop_cpu();
	KUNIT_EXPECT_FALSE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 31)->to, 0xffffffff82000000ULL + 39);

	/* the oops did not panic: recording goes on, its entries behind a mark */
	ds_kernel_trace_hold(false);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	ds_mock_lbr_push(0xffffffff84000000ULL, 0xffffffff84000100ULL, false);
	ds_mock_lbr_push(0xffffffff84000200ULL, 0xffffffff84000300ULL, false);
	ds_kernel_trace_hold(true);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 2ULL);
	KUNIT_EXPECT_FALSE(test, t.ring.wrapped);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 0)->from, 0xffffffff84000000ULL);

	ds_kernel_trace_hold(false);
	ds_lbr_request(DS_USER_LBR);
	ds_mock.debugctl |= DEBUGCTLMSR_LBR;	/* perf's */
	ds_kernel_trace_hold(true);
	KUNIT_EXPECT_FALSE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 1ULL);
	KUNIT_EXPECT_TRUE(test, is_gap_perf(ds_ring_get(&t.ring, 0)));

	/* a CPU without a ring (cpu_records=0): an oops stops the LBR, its
	 * end starts it again
	 */
	ds_lbr_release(DS_USER_LBR);
	ds_kernel_trace_hold(false);
	this_cpu_write(ds_kernel_of, NULL);
	ds_kernel_trace_hold(true);
	KUNIT_EXPECT_FALSE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	ds_kernel_trace_hold(false);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	ds_test_lbr_end(&saved);
}

/*
 * Kernel source, a BUG/WARN trap: the stack is copied at once and goes on
 * recording (report_bug()'s branches); the BUG's oops keeps the copy; a
 * WARN's copy is no claim on a later oops, which takes the stack fresh.
 */
static void ds_test_lbr_bug_trap(struct kunit *test)
{
	struct bts_record recs[LBR_DEPTH] = {};
	struct ds_test_lbr saved;
	struct ds_trace t = {};
	unsigned int i;

	ds_test_lbr_kernel_begin(&saved, &t, recs);
	ds_mock_lbr_push(0xffffffff81000000ULL, 0xffffffff81000100ULL, false);
	ds_mock_lbr_push(0xffffffff81000200ULL, 0xffffffff81000300ULL, false);
	ds_kernel_bug_trap();
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 2ULL);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	for (i = 0; i < 40; i++)	/* report_bug() */
		ds_mock_lbr_push(0xffffffff85000000ULL + i, 0xffffffff85000100ULL, false);
	ds_kernel_trace_hold(true);	/* die() -> oops_begin() */
	KUNIT_EXPECT_FALSE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 2ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 1)->from, 0xffffffff81000200ULL);
	ds_kernel_trace_hold(false);

	/* a WARN: copied, returns; the next oops is another story */
	ds_mock_lbr_push(0xffffffff86000000ULL, 0xffffffff86000100ULL, false);
	ds_kernel_bug_trap();
	ds_kernel_bug_done();
	ds_mock_lbr_push(0xffffffff87000000ULL, 0xffffffff87000100ULL, false);
	ds_kernel_trace_hold(true);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 1ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 0)->from, 0xffffffff87000000ULL);
	ds_test_lbr_end(&saved);
}

/*
 * perf's intel_pmu_reset() while the LBR source records: LBR freezing is
 * reset, DEBUGCTL.LBR stays (cleared, the kernel tail would stay empty
 * until the next oops); while perf's LBR users hold the stack, and with
 * the source off, it is perf's and goes off as upstream does.
 */
static void ds_test_pmu_reset_lbr(struct kunit *test)
{
	struct bts_record recs[LBR_DEPTH] = {};
	struct ds_test_lbr saved;
	struct ds_trace t = {};

	ds_test_lbr_kernel_begin(&saved, &t, recs);
	ds_mock.debugctl |= DEBUGCTLMSR_FREEZE_LBRS_ON_PMI;
	ds_pmu_reset(NULL, true);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, (u64)DEBUGCTLMSR_LBR);

	ds_lbr_request(DS_USER_LBR);
	ds_mock.debugctl |= DEBUGCTLMSR_LBR | DEBUGCTLMSR_FREEZE_LBRS_ON_PMI;
	ds_pmu_reset(NULL, true);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);
	ds_lbr_release(DS_USER_LBR);
	KUNIT_EXPECT_TRUE(test, ds_mock.debugctl & DEBUGCTLMSR_LBR);

	ds_lbr_mode = DS_LBR_OFF;
	ds_pmu_reset(NULL, true);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);
	ds_test_lbr_end(&saved);
}

/*
 * A CPU without the LBR among CPUs with it (ds_lbr_cpu_online()): no LBR
 * MSR of it is read or written, and a freeze there fills nothing.
 */
static void ds_test_lbr_absent_cpu(struct kunit *test)
{
	struct bts_record recs[LBR_DEPTH] = {};
	struct ds_test_lbr saved;
	struct ds_lbr_cpu *m;
	struct ds_trace t = {};
	int i;

	ds_ring_init(&t.ring, recs, LBR_DEPTH);
	m = ds_test_lbr_begin(&saved, DS_LBR_KERNEL);
	this_cpu_write(ds_kernel_of, &t);
	m->absent = true;
	ds_lbr_cpu_start();
	ds_lbr_request(DS_USER_LBR);
	ds_lbr_release(DS_USER_LBR);
	ds_kernel_trace_hold(true);
	ds_kernel_trace_hold(false);
	ds_hw_stop_cpu();
	for (i = 0; i < min(ds_mock.nr, DS_MOCK_LOG); i++)
		KUNIT_EXPECT_EQ(test, ds_mock.log[i].msr, (u32)MSR_IA32_DEBUGCTLMSR);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 0ULL);
	ds_test_lbr_end(&saved);
}

/* The same for AMD's LbrExtV2, 16 entries. */
static struct ds_lbr_cpu *ds_test_lbr_amd(struct ds_test_lbr *s, enum ds_lbr_mode mode)
{
	struct ds_lbr_cpu *m = ds_test_lbr_begin(s, mode);

	ds_lbr_hw = &ds_lbr_amd;
	ds_lbr_depth = AMD_DEPTH;
	return m;
}

/*
 * LbrExtV2, user source: LBR_SELECT drops ring-0 endings and LBRV2EN runs
 * the stack; a task reads back only what was pushed since its switch-in
 * (found by the scan for the entry noted then), oldest first, mispredict
 * as "not predicted"; another task on the CPU reads nothing of it.
 */
static void ds_test_lbr_amd_own_entries(struct kunit *test)
{
	struct bts_record out[AMD_DEPTH];
	struct ds_test_lbr saved;
	unsigned int n, i;
	bool wrapped;

	ds_test_lbr_amd(&saved, DS_LBR_USER);
	ds_lbr_cpu_start();
	KUNIT_EXPECT_EQ(test, ds_mock.amd_select, DS_LBR_SEL_CPL_EQ_0);
	KUNIT_EXPECT_EQ(test, ds_mock.dbg_extn_cfg, DBG_EXTN_CFG_LBRV2EN);
	KUNIT_EXPECT_EQ(test, ds_mock.debugctl, 0ULL);	/* AMD's older LBR: off */
	for (i = 0; i < 5; i++)		/* the task before */
		ds_mock_amd_push(0x1000 + i, 0x2000 + i, false);
	ds_lbr_switch_in(current);
	ds_mock_amd_push(0xffffffff81000000ULL, 0x401000, false);	/* sysret */
	ds_mock_amd_push(0x401200, 0x401300, true);
	ds_mock_amd_push(0x401400, 0x401500, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 3U);
	KUNIT_EXPECT_FALSE(test, wrapped);
	KUNIT_EXPECT_EQ(test, out[0].from, 0xffffffff81000000ULL);	/* sign-extended */
	KUNIT_EXPECT_EQ(test, out[0].to, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, out[0].flags, (u64)BTS_REC_F_PREDICTED);
	KUNIT_EXPECT_EQ(test, out[1].flags, 0ULL);	/* mispredicted */
	KUNIT_EXPECT_EQ(test, out[2].from, 0x401400ULL);
	KUNIT_EXPECT_EQ(test, out[2].to, 0x401500ULL);
	ds_lbr_switch_in((struct task_struct *)&saved);	/* someone else */
	KUNIT_EXPECT_EQ(test, ds_lbr_read(out, &wrapped), 0U);
	ds_test_lbr_end(&saved);
}

/*
 * LbrExtV2: 20 pushes since the switch-in: the mark fell off, all 16 are
 * the task's (wrapped); an empty or wrong-path entry is not kept; a branch
 * of the task equal to the mark ends its entries there (undercounted,
 * never the task before's).
 */
static void ds_test_lbr_amd_scan(struct kunit *test)
{
	struct bts_record out[AMD_DEPTH];
	struct ds_test_lbr saved;
	unsigned int n, i;
	bool wrapped;

	ds_test_lbr_amd(&saved, DS_LBR_USER);
	ds_lbr_cpu_start();
	ds_mock_amd_push(0x1000, 0x2000, false);
	ds_lbr_switch_in(current);
	for (i = 0; i < 20; i++)
		ds_mock_amd_push(0x400000 + i, 0x500000 + i, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, AMD_DEPTH);
	KUNIT_EXPECT_TRUE(test, wrapped);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x400000ULL + 4);
	KUNIT_EXPECT_EQ(test, out[AMD_DEPTH - 1].from, 0x400000ULL + 19);

	/* an empty stack is the mark (perf's reset): entries up to it */
	memset(ds_mock.amd_from, 0, sizeof(ds_mock.amd_from));
	memset(ds_mock.amd_to, 0, sizeof(ds_mock.amd_to));
	ds_lbr_switch_in(current);
	ds_mock_amd_push(0x403000, 0x403100, false);
	ds_mock_amd_push(0x403200, 0x403300, false);
	ds_mock.amd_to[1] &= ~DS_LBR_AMD_VALID;		/* wrong path: spec only */
	ds_mock.amd_to[1] |= BIT_ULL(62);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 1U);
	KUNIT_EXPECT_FALSE(test, wrapped);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x403200ULL);

	ds_mock_amd_push(0x1000, 0x2000, false);
	ds_lbr_switch_in(current);
	ds_mock_amd_push(0x404000, 0x404100, false);
	ds_mock_amd_push(0x1000, 0x2000, false);	/* equal to the mark */
	ds_mock_amd_push(0x404200, 0x404300, false);
	n = ds_lbr_read(out, &wrapped);
	KUNIT_ASSERT_EQ(test, n, 1U);
	KUNIT_EXPECT_EQ(test, out[0].from, 0x404200ULL);
	ds_test_lbr_end(&saved);
}

/*
 * LbrExtV2, kernel source and perf: the crash path clears LBRV2EN as its
 * first MSR access and fills the CPU's ring, oldest first; perf's first
 * LBR user (amd_pmu_lbr_add()) gets the stack with LBRV2EN and LBR_SELECT
 * clear, nothing of it is read back (a GAP marker), and the last one's
 * going gives it back.
 */
static void ds_test_lbr_amd_kernel(struct kunit *test)
{
	struct bts_record recs[AMD_DEPTH] = {};
	struct ds_test_lbr saved;
	struct ds_trace t = {};
	unsigned int i;

	ds_ring_init(&t.ring, recs, AMD_DEPTH);
	ds_test_lbr_amd(&saved, DS_LBR_KERNEL);
	this_cpu_write(ds_kernel_of, &t);
	ds_lbr_cpu_start();
	KUNIT_EXPECT_EQ(test, ds_mock.amd_select, DS_LBR_SEL_CPL_NEQ_0);
	for (i = 0; i < 20; i++)
		ds_mock_amd_push(0xffffffff81000000ULL + i, 0xffffffff82000000ULL + i, false);
	ds_mock.nr = 0;
	ds_hw_stop_cpu();
	expect_op(test, 0, 'r', MSR_AMD_DBG_EXTN_CFG, 0);
	expect_op(test, 1, 'w', MSR_AMD_DBG_EXTN_CFG, 0);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), (u64)AMD_DEPTH);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 0)->from, 0xffffffff81000000ULL + 4);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&t.ring, 15)->to, 0xffffffff82000000ULL + 19);

	ds_lbr_cpu_start();		/* online again */
	ds_lbr_request(DS_USER_LBR);
	KUNIT_EXPECT_EQ(test, ds_mock.dbg_extn_cfg, 0ULL);
	KUNIT_EXPECT_EQ(test, ds_mock.amd_select, 0ULL);
	ds_mock.dbg_extn_cfg = DBG_EXTN_CFG_LBRV2EN;	/* perf's */
	ds_mock_amd_push(0x7000, 0x7100, false);
	ds_kernel_trace_hold(true);
	KUNIT_EXPECT_EQ(test, ds_ring_count(&t.ring), 1ULL);
	KUNIT_EXPECT_TRUE(test, is_gap_perf(ds_ring_get(&t.ring, 0)));
	ds_kernel_trace_hold(false);
	ds_mock.dbg_extn_cfg = 0;	/* perf's last disable */
	ds_lbr_release(DS_USER_LBR);
	KUNIT_EXPECT_EQ(test, ds_mock.dbg_extn_cfg, DBG_EXTN_CFG_LBRV2EN);
	KUNIT_EXPECT_EQ(test, ds_mock.amd_select, DS_LBR_SEL_CPL_NEQ_0);
	ds_test_lbr_end(&saved);
}

static struct kunit_case ds_test_cases[] = {
	KUNIT_CASE(ds_test_lbr_bug_trap),
	KUNIT_CASE(ds_test_lbr_own_entries),
	KUNIT_CASE(ds_test_lbr_wrap),
	KUNIT_CASE(ds_test_lbr_perf_handover),
	KUNIT_CASE(ds_test_lbr_kernel_freeze),
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
	KUNIT_CASE(ds_test_pmu_reset_lbr),
	KUNIT_CASE(ds_test_lbr_absent_cpu),
	KUNIT_CASE(ds_test_lbr_amd_own_entries),
	KUNIT_CASE(ds_test_lbr_amd_scan),
	KUNIT_CASE(ds_test_lbr_amd_kernel),
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
