// SPDX-License-Identifier: GPL-2.0
/*
 * Debug Store owner for btscrash.  Owns the circular BTS ring logic (index
 * and wrap as the Intel SDM describes for BTINT clear), the BTS half of
 * each CPU's DS area (the crash recorder's while no perf user holds it),
 * and the two backends behind one interface:
 *  - hardware (default on a CPU with BTS; ds.hw=0 off): a traced task's
 *    ring is loaded into the DS area at switch-in (user branches) and saved
 *    at switch-out; otherwise the CPU's kernel ring, if one was asked for,
 *    is loaded (kernel branches); stopped on every CPU by the crash path
 *    (NMI included), kexec, reboot, suspend and offline.  Off under KPTI
 *    (nothing of a ring may be mapped in user page tables): traced tasks
 *    fall back to the emulation;
 *  - emulation (ds.emulate=1, any CPU): a traced task runs with EFLAGS.TF
 *    and the #DB notifier records each taken branch (IRQs off); kernel
 *    rings get function entries from ftrace.
 * With bts_crash.perf_rings=1 a traced task's ring is instead a kernel-owned
 * intel_bts event of perf's (ds_perf_ring_*): perf owns the hardware then.
 * Also the LBR source (bts_crash.source=lbr, lbr-kernel): a reader of
 * perf's LBR tail (arch/x86/events/lbr_tail.c), which keeps each CPU's
 * Last Branch Record stack recording while no perf event uses it; where
 * it stood is marked at every switch-in, so that a dumping task reads back
 * only its own entries, or frozen into the CPU's kernel ring at an oops
 * (ds_lbr_*, below).  ds.c touches no LBR MSR: perf owns them.
 * Runs on the BTS, LBR and AMD models of qemu/ in the VM suite.
 * SDM references are to Intel 64 and IA-32 SDM Vol. 3B, chapter "Debug,
 * Branch Profile, TSC, and Intel Resource Director Technology", section
 * "Branch Trace Store (BTS)" and its subsections, cited by title because
 * their numbers differ between editions (17.4.x / 18.4.x).
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/ftrace.h>
#include <linux/io.h>
#include <linux/kdebug.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/syscore_ops.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/version.h>
#include <asm/cpu_entry_area.h>
#include <asm/debugreg.h>
#include <asm/ds.h>
#include <asm/ibt.h>
#include <asm/insn.h>
#include <asm/intel_ds.h>
#include <asm/msr.h>
#include <asm/perf_event.h>
#include <asm/ptrace.h>
#include <asm/tlbflush.h>

static bool ds_emulate;
module_param_named(emulate, ds_emulate, bool, 0444);
MODULE_PARM_DESC(emulate, "record user branches by single-stepping (no BTS needed)");

/*
 * On wherever the CPU has BTS (ds.hw=0 turns it off), except under KPTI
 * (ds_hw_probe(): the emulation instead); ds.emulate=1 is an explicit
 * choice and wins.  Runs on the QEMU BTS model in every CI run
 * (qemu/); perf's Intel code asks for the BTS half (patch 0011).
 */
static bool ds_hw_param = true;
module_param_named(hw, ds_hw_param, bool, 0444);
MODULE_PARM_DESC(hw, "record user branches with Branch Trace Store hardware (default: where the CPU has it, not under page-table isolation)");
static bool ds_hw_ok;		/* ds.hw=1 and the CPU passed ds_hw_probe() */

static struct ds_trace *(*ds_emul_lookup)(struct task_struct *);

/* The LBR source's mode and depth (below, "the LBR source"). */
enum ds_lbr_mode {
	DS_LBR_OFF,	/* bts_crash.source is not lbr*, or no usable LBR */
	DS_LBR_USER,	/* user-ending branches, per task at a fatal fault */
	DS_LBR_KERNEL,	/* kernel-ending branches, per CPU at oops/panic */
};

static enum ds_lbr_mode ds_lbr_mode;
static unsigned int ds_lbr_depth;
static void ds_lbr_freeze(void);
static void ds_lbr_hold(bool hold);
static int ds_lbr_kernel_start(struct ds_trace *(*trace_of)(unsigned int cpu));

/*
 * This CPU's side of the LBR source: whose entries follow the tail's mark
 * (perf keeps the mark itself) and what the kernel source's freeze did.
 * Written on the CPU itself with IRQs off (context switch, exec, the
 * oops and crash paths), read by the same CPU.
 */
struct ds_lbr_cpu {
	struct task_struct *task;	/* DS_LBR_USER: current at the mark */
	bool frozen;			/* DS_LBR_KERNEL: stopped, entries copied */
	struct task_struct *bug;	/* DS_LBR_KERNEL: its BUG/WARN trap copied
					 * the stack; an oops of it keeps that
					 */
};

static DEFINE_PER_CPU(struct ds_lbr_cpu, ds_lbr_cpu);

void ds_ring_init(struct ds_ring *r, struct bts_record *base, u64 capacity)
{
	*r = (struct ds_ring){ .base = base, .capacity = capacity };
}

/*
 * Written by software (the emulation's records, every backend's markers),
 * possibly interrupted by the crash path's NMI on the same CPU, which then
 * reads the ring: `writing` names the slot being filled until index has
 * moved past it, and `wrapped` is set before index returns to 0, so the
 * reader never sees a wrapped ring as empty (ds_ring_repair()).
 */
void notrace ds_ring_write(struct ds_ring *r, u64 from, u64 to, u64 flags)
{
	u64 i = r->index;
	struct bts_record *rec = &r->base[i];

	if (READ_ONCE(r->frozen))
		return;
	WRITE_ONCE(r->writing, i + 1);
	barrier();
	rec->from = from;
	rec->to = to;
	rec->flags = flags;
	barrier();
	r->written++;
	if (ds_is_gap(from))
		r->gaps++;
	if (i + 1 == r->capacity) {	/* BTS index reached the maximum */
		WRITE_ONCE(r->wrapped, true);
		barrier();
		WRITE_ONCE(r->index, 0);
	} else {
		WRITE_ONCE(r->index, i + 1);
	}
	barrier();
	WRITE_ONCE(r->writing, 0);
}

u32 ds_count_gaps(const struct bts_record *rec, u64 n)
{
	u32 gaps = 0;

	while (n--)
		gaps += ds_is_gap(rec[n].from);
	return gaps;
}

void notrace ds_ring_repair(struct ds_ring *r, u64 now)
{
	u64 w = READ_ONCE(r->writing);

	if (!w || w - 1 != r->index)	/* nothing interrupted, or done */
		return;
	/* half-written: "records were lost here", the slot no longer torn */
	r->frozen = false;
	ds_ring_write(r, BTS_MARKER(BTS_MARK_GAP, BTS_GAP_UNKNOWN), now, 0);
	r->frozen = true;
}

/* notrace: the crash path reads rings with the emulation's ftrace on */
u64 notrace ds_ring_count(const struct ds_ring *r)
{
	return r->wrapped ? r->capacity : r->index;
}

const struct bts_record *notrace ds_ring_get(const struct ds_ring *r, u64 i)
{
	u64 first = r->wrapped ? r->index : 0;

	if (WARN_ON_ONCE(i >= ds_ring_count(r)))
		return &r->base[0];
	i += first;
	return &r->base[i >= r->capacity ? i - r->capacity : i];
}

enum ds_backend ds_backend(void)
{
	if (ds_hw_ok)
		return DS_BACKEND_HW;
	return ds_emulate ? DS_BACKEND_EMUL : DS_BACKEND_NONE;
}

/* Largest per-CPU kernel ring, in records. */
u64 ds_kernel_max_records(void)
{
	if (ds_lbr_mode == DS_LBR_KERNEL)
		return ds_lbr_depth;
	return ds_task_max_records();
}

/*
 * What a per-CPU kernel ring holds without bts_crash.cpu_records: the
 * LBR's depth, else nothing.  A BTS ring writes every kernel branch to
 * memory (docs/kernel.md "What each configuration costs"): opt-in only.
 */
u64 ds_kernel_default_records(void)
{
	return ds_lbr_mode == DS_LBR_KERNEL ? ds_lbr_depth : 0;
}

/* Where the per-CPU kernel rings' records come from (enum bts_crash_source). */
unsigned int ds_kernel_source(void)
{
	if (ds_lbr_mode == DS_LBR_KERNEL)
		return BTS_SOURCE_LBR;
	return ds_backend() == DS_BACKEND_HW ? BTS_SOURCE_HW : BTS_SOURCE_EMUL;
}

u64 ds_task_max_records(void)
{
	return U32_MAX;
}

/* ---- hardware backend: Intel BTS ---------------------------------------- */

#define DEBUGCTL_BTS_BITS	(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS | DEBUGCTLMSR_BTINT | \
				 DEBUGCTLMSR_BTS_OFF_OS | DEBUGCTLMSR_BTS_OFF_USR)

/*
 * What the BTS half of a CPU's DS area holds while the recorder owns it
 * (ds_hw_settle()): the ring of the traced task running there (user
 * branches), else the CPU's kernel ring (kernel branches), else nothing.
 */
struct ds_cpu {
	struct ds_trace *running;	/* armed trace of the task on this CPU */
	struct ds_trace *loaded;	/* trace the BTS half points at */
	struct ds_trace *kernel;	/* this CPU's kernel ring, if recording */
	bool held;			/* an oops reads the kernel ring: not loaded */
	bool stopped;			/* crash, kexec, offline: load nothing */
	bool absent;			/* no usable BTS on this CPU (ds_hw_cpu_has()):
					 * none of its MSRs is ever written
					 */
	unsigned long perf;		/* BIT(enum ds_user): perf's holders */
};

static DEFINE_PER_CPU(struct ds_cpu, ds_cpu);
/* Each CPU's kernel ring, set before any CPU loads it (ds_kernel_trace_start()). */
static DEFINE_PER_CPU(struct ds_trace *, ds_kernel_of);

static u64 ds_native_rdmsr(u32 msr)
{
	u64 v;

	rdmsrl(msr, v);
	return v;
}

static void ds_native_wrmsr(u32 msr, u64 v)
{
	wrmsrl(msr, v);
}

static struct debug_store *ds_native_area(void)
{
	return &get_cpu_entry_area(smp_processor_id())->cpu_debug_store;
}

/*
 * The CPU writes records through the page tables loaded while the code it
 * traces runs.  Without KPTI (the only case the hardware backend runs in,
 * ds_hw_probe()) the kernel's linear map is in every page table: the ring
 * is programmed at its own address and nothing is mapped or unmapped.
 */
static u64 ds_native_window(struct ds_ring *r)
{
	return (u64)r->base;
}

static void ds_native_unwindow(struct ds_ring *r)
{
}

static const struct ds_hw_ops ds_native_ops = {
	.read_msr = ds_native_rdmsr, .write_msr = ds_native_wrmsr,
	.area = ds_native_area, .window = ds_native_window,
	.unwindow = ds_native_unwindow,
};

static const struct ds_hw_ops *ds_hw = &ds_native_ops;

/*
 * SDM "Setting Up CPL-Qualified BTS", table "CPL-Qualified Branch Trace
 * Store Encodings": TR=0 turns branch trace messages off.  Returns DEBUGCTL
 * with every BTS control bit clear, the other bits (LBR, FREEZE_*) as the
 * kernel keeps them.
 */
static u64 ds_hw_stop(const struct ds_hw_ops *ops)
{
	u64 dbg = ops->read_msr(MSR_IA32_DEBUGCTLMSR);

	if (dbg & DEBUGCTL_BTS_BITS)
		ops->write_msr(MSR_IA32_DEBUGCTLMSR, dbg & ~DEBUGCTL_BTS_BITS);
	return dbg & ~DEBUGCTL_BTS_BITS;
}

void ds_hw_load(const struct ds_hw_ops *ops, struct ds_trace *t)
{
	struct debug_store *ds = ops->area();
	struct ds_ring *r = &t->ring;
	/* a kernel ring's address is set once (ds_hw_kernel_start()) */
	u64 dbg = ds_hw_stop(ops), base = t->kernel ? t->hw_base : ops->window(r);
	u64 max = base + r->capacity * BTS_RECORD_SIZE;

	/*
	 * SDM "64 Bit Format of the DS Save Area" (figure "IA-32e Mode DS Save
	 * Area"): 8-byte fields, 24-byte records.  SDM "Setting Up the BTS
	 * Buffer": the index is the address of the next record; the absolute
	 * maximum is one byte past the last whole record; with BTINT clear the
	 * buffer is circular, and the interrupt threshold must lie above the
	 * absolute maximum so that no interrupt is ever generated (clearing
	 * BTINT alone is not enough).
	 */
	t->hw_base = base;
	ds->bts_buffer_base = base;
	ds->bts_index = base + r->index * BTS_RECORD_SIZE;
	ds->bts_absolute_maximum = max;
	ds->bts_interrupt_threshold = max + BTS_RECORD_SIZE;
	/*
	 * TR=1 BTS=1 BTS_OFF_OS=1 BTS_OFF_USR=0 BTINT=0: "store BTMs with
	 * CPL > 0 in the BTS buffer", circular: a task ring takes user
	 * branches only (and the transitions from user mode into the kernel,
	 * which the core writer drops).  A kernel ring: BTS_OFF_OS=0
	 * BTS_OFF_USR=1, branches at CPL 0.  WRMSR serializes: the DS fields
	 * above are in place before the first record is written.
	 */
	ops->write_msr(MSR_IA32_DEBUGCTLMSR, dbg | DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS |
		   (t->kernel ? DEBUGCTLMSR_BTS_OFF_USR : DEBUGCTLMSR_BTS_OFF_OS));
}

bool ds_hw_save(const struct ds_hw_ops *ops, struct ds_trace *t)
{
	struct debug_store *ds = ops->area();
	struct ds_ring *r = &t->ring;
	const struct bts_record *slot;
	u64 off, idx;

	ds_hw_stop(ops);
	if (!t->kernel)
		ops->unwindow(r);
	off = ds->bts_index - t->hw_base;
	if (ds->bts_buffer_base != t->hw_base || ds->bts_index < t->hw_base ||
	    off % BTS_RECORD_SIZE || off / BTS_RECORD_SIZE > r->capacity)
		return false;	/* someone rewrote the BTS half: not our index */
	idx = off / BTS_RECORD_SIZE;
	if (idx == r->capacity)
		idx = 0;
	/*
	 * The hardware does not say whether it wrapped.  The ring starts
	 * zeroed and no user branch goes from address 0 to 0, so a written
	 * slot at the new index, or an index that went backwards, means it did.
	 */
	slot = &r->base[idx];
	if (idx < r->index || slot->from || slot->to)
		r->wrapped = true;
	r->index = idx;
	return true;
}

/*
 * The crash path and an oops stop the CPU's recording as their first act:
 * every branch taken on the way (calls into ds.c, the mockable accessors)
 * would be a record of the stopping itself, pushing the branches that led
 * to the crash out of the ring.  So DEBUGCTL's BTS bits go first, inline.
 */
static __always_inline void ds_hw_off_now(void)
{
	u64 dbg;

	rdmsrl(MSR_IA32_DEBUGCTLMSR, dbg);
	if (dbg & DEBUGCTL_BTS_BITS)
		wrmsrl(MSR_IA32_DEBUGCTLMSR, dbg & ~DEBUGCTL_BTS_BITS);
}

/* Loads t into the BTS half, first marking a suspension it went through. */
static void ds_hw_resume(struct ds_cpu *c, struct ds_trace *t, u64 now)
{
	if (t->gap_since) {
		ds_ring_write(&t->ring, BTS_MARKER(BTS_MARK_GAP, t->gap_reason), now,
			      now - t->gap_since);
		t->gap_since = 0;
	}
	ds_hw_load(ds_hw, t);
	c->loaded = t;
}

static void ds_gap_start(struct ds_trace *t, u64 now, enum bts_gap_reason why,
			 u32 tid);

static void ds_hw_unload(struct ds_cpu *c)
{
	if (c->loaded && !ds_hw_save(ds_hw, c->loaded))
		ds_gap_start(c->loaded, local_clock(), BTS_GAP_PERF, 0);
	c->loaded = NULL;
}

/*
 * Makes the BTS half hold what it should (struct ds_cpu), unless perf
 * holds it or the CPU stopped recording.  A switch between two untraced
 * tasks finds the kernel ring already loaded and costs nothing here.
 */
static void ds_hw_settle(struct ds_cpu *c, u64 now)
{
	struct ds_trace *want;

	if (c->perf || c->stopped || c->absent)
		return;
	want = c->running ?: (c->held ? NULL : c->kernel);
	if (c->loaded == want)
		return;
	ds_hw_unload(c);
	/* the kernel ring's hole while a traced task's ring holds BTS */
	if (c->running && !c->held)
		ds_gap_start(c->kernel, now, BTS_GAP_TASK, c->running->tid);
	if (want)
		ds_hw_resume(c, want, now);
}

/*
 * t stops recording at now, for why: its GAP marker goes in when it is
 * loaded again (ds_hw_resume()).  A kernel ring also gets a SUSPEND
 * marker now (format.md §1.1), so that whoever reads it before then (an
 * oops, a dump) sees that its newest branches are not the CPU's last.
 */
static void ds_gap_start(struct ds_trace *t, u64 now, enum bts_gap_reason why,
			 u32 tid)
{
	if (!t || t->gap_since)
		return;
	t->gap_since = now;
	t->gap_reason = why;
	if (t->kernel)
		ds_ring_write(&t->ring, BTS_MARKER(BTS_MARK_SUSPEND, why), now, tid);
}

/*
 * A CPU's set of perf users of one piece of the debug hardware (struct
 * ds_cpu's perf, struct ds_lbr_cpu's): who takes it twice, or gives back
 * what it did not take (a stop whose start failed), changes nothing.
 * True when the set goes from empty to one user (take) or back (give):
 * the recorder steps back at the first and resumes after the last.
 */
static bool ds_users_take(unsigned long *users, enum ds_user who)
{
	bool first = !*users;

	if (WARN_ON_ONCE(who >= DS_USERS) || *users & BIT(who))
		return false;
	*users |= BIT(who);
	return first;
}

static bool ds_users_give(unsigned long *users, enum ds_user who)
{
	if (who >= DS_USERS || !(*users & BIT(who)))
		return false;
	*users &= ~BIT(who);
	return !*users;
}

/*
 * The first perf user saves and stops the recorder's ring; a suspension
 * starts for it and for the kernel ring (the GAP marker, reason perf, goes
 * in when the last user gives back and the ring is loaded again).
 */
void ds_bts_request(enum ds_user who)
{
	struct ds_cpu *c = this_cpu_ptr(&ds_cpu);
	u64 now;

	lockdep_assert_irqs_disabled();
	if (!ds_users_take(&c->perf, who))
		return;
	now = local_clock();
	ds_hw_unload(c);
	ds_gap_start(c->running, now, BTS_GAP_PERF, 0);
	ds_gap_start(c->kernel, now, BTS_GAP_PERF, 0);
}

void ds_bts_release(enum ds_user who)
{
	struct ds_cpu *c = this_cpu_ptr(&ds_cpu);

	lockdep_assert_irqs_disabled();
	if (ds_users_give(&c->perf, who))
		ds_hw_settle(c, local_clock());
}

bool ds_bts_holds(enum ds_user who)
{
	return who < DS_USERS && this_cpu_read(ds_cpu.perf) & BIT(who);
}

bool ds_hw_active(void)
{
	return ds_hw_ok;
}

/*
 * perf's intel_pmu_reset() (a PMI storm: "irq loop stuck"), IRQs off: it
 * resets the BTS index on this CPU, and may only where it is perf's: while
 * a perf user holds the BTS half (or the recorder does not use BTS);
 * otherwise the index is the recorder's ring's, and reset under it the
 * next save would read a wrap that never happened.
 */
void ds_pmu_reset(struct debug_store *ds)
{
	lockdep_assert_irqs_disabled();
	if (ds && (!ds_hw_ok || this_cpu_read(ds_cpu.perf)))
		ds->bts_index = ds->bts_buffer_base;
}

/*
 * A core dump reads t now.  The ring's index is saved only when its task
 * is switched out, so for the dumping thread itself, still loaded, the
 * newest records (the faulting branch) would be missing: save the index
 * the CPU left and load the ring again.
 */
void ds_task_trace_sync(struct ds_trace *t)
{
	struct ds_cpu *c;
	unsigned long flags;

	if (ds_backend() != DS_BACKEND_HW)
		return;
	local_irq_save(flags);
	c = this_cpu_ptr(&ds_cpu);
	if (c->loaded == t) {
		ds_hw_unload(c);
		ds_hw_settle(c, local_clock());
	}
	local_irq_restore(flags);
}

/*
 * This CPU stops writing BTS records for good (until a task is loaded
 * again): DEBUGCTL's BTS bits cleared, the loaded ring's index saved so a
 * dump sees every record the CPU wrote; the LBR source's LBR stops too
 * (online and resume start it again).  The crash path on every CPU (the
 * kdump NMI included: MSRs and memory only, no lock), suspend, and a CPU
 * going offline: a capture kernel must never inherit a CPU still
 * recording for this kernel.  kexec, reboot and halt stop it in perf's
 * x86_perf_branch_recorders_off() (stop_this_cpu(),
 * native_machine_shutdown()), and cpu_init() there clears what an
 * earlier kernel left.
 */
void notrace ds_hw_stop_cpu(void)
{
	struct ds_cpu *c;

	if (ds_lbr_mode != DS_LBR_OFF)
		x86_perf_lbr_tail_stop_now();	/* before any call of ours is recorded */
	if (ds_lbr_mode == DS_LBR_KERNEL)
		ds_lbr_freeze();
	else if (ds_lbr_mode == DS_LBR_USER)
		x86_perf_lbr_tail_freeze();
	if (!ds_hw_ok || this_cpu_read(ds_cpu.absent))
		return;
	ds_hw_off_now();	/* nothing turns it on again: stopped */
	c = this_cpu_ptr(&ds_cpu);
	c->stopped = true;
	ds_hw_unload(c);
}

/* This CPU records again (resume, online): its kernel ring, or a task's. */
static void ds_hw_start_cpu(void)
{
	struct ds_cpu *c = this_cpu_ptr(&ds_cpu);

	c->stopped = false;
	/* the LBR source's freeze there was this stop, not a crash (perf's
	 * tail comes up again on its own)
	 */
	this_cpu_write(ds_lbr_cpu.frozen, false);
	ds_hw_settle(c, local_clock());
}

/*
 * An oops reports this CPU's last kernel branches: the kernel ring is
 * saved and left unloaded while the report reads it (hold), loaded again
 * after (unless the crash path stopped the CPU meanwhile).
 */
void notrace ds_kernel_trace_hold(bool hold)
{
	struct ds_cpu *c;
	unsigned long flags;

	if (ds_lbr_mode == DS_LBR_KERNEL) {
		if (hold)
			x86_perf_lbr_tail_stop_now();	/* before any call of ours is recorded */
		ds_lbr_hold(hold);
		return;
	}
	if (!ds_hw_ok || this_cpu_read(ds_cpu.absent))
		return;
	if (hold && this_cpu_read(ds_cpu.loaded) == this_cpu_read(ds_cpu.kernel))
		ds_hw_off_now();	/* saved below; nothing recorded since */
	local_irq_save(flags);
	c = this_cpu_ptr(&ds_cpu);
	c->held = hold;
	ds_hw_settle(c, local_clock());
	local_irq_restore(flags);
}

/*
 * SDM "Detection of the BTS Facilities": CPUID.1:EDX.DS[21] and
 * IA32_MISC_ENABLE.BTS_UNAVAILABLE[11] clear (the kernel folds both into
 * X86_FEATURE_BTS); SDM "64 Bit Format of the DS Save Area": DTES64;
 * CPL-qualified BTS (BTS_OFF_OS) needs CPUID.1:ECX.DS-CPL[4].
 *
 * Under KPTI the CPU writes the records of user code, and those of the
 * entry code (CPL 0 on the user page tables), through the user page
 * tables: a ring would have to be mapped there, and whatever the user page
 * tables map a Meltdown-style read from any process sees (upstream turned
 * intel_bts off under PTI for this, commit 99a9dc98ba52).  So no hardware
 * backend under KPTI: *pti_fallback says traced tasks get the emulation.
 */
static bool ds_hw_probe(bool *pti_fallback)
{
	if (!boot_cpu_has(X86_FEATURE_BTS) || !boot_cpu_has(X86_FEATURE_DTES64) ||
	    !boot_cpu_has(X86_FEATURE_DSCPL)) {
		pr_info("ds: no BTS with 64-bit DS and CPL qualification: hardware backend off\n");
		return false;
	}
	if (boot_cpu_has(X86_FEATURE_PTI)) {
		pr_info("ds: page-table isolation: BTS hardware backend off (its rings would be mapped in user page tables), traced tasks use the emulation\n");
		*pti_fallback = true;
		return false;
	}
	return true;
}

/*
 * ds_hw_probe() asked the boot CPU; each CPU answers for itself as it
 * comes online (its own CPUID and IA32_MISC_ENABLE, in cpu_data): a
 * hybrid or asymmetric part may lack BTS on some CPUs, and there
 * IA32_DS_AREA and DEBUGCTL's BTS bits would #GP.
 */
static bool ds_hw_cpu_has(void)
{
	return this_cpu_has(X86_FEATURE_BTS) && this_cpu_has(X86_FEATURE_DTES64) &&
	       this_cpu_has(X86_FEATURE_DSCPL);
}

/* IA32_DS_AREA holds the DS management area's linear address (SDM "DS
 * Save Area"); the cpu_entry_area copy is mapped under KPTI too.  Runs on
 * each CPU as it comes online, and on the boot CPU at resume (the MSR does
 * not survive suspend).  A CPU without BTS is left alone for good.
 */
static int ds_hw_cpu_online(unsigned int cpu)
{
	unsigned long flags;

	if (!ds_hw_cpu_has()) {
		this_cpu_write(ds_cpu.absent, true);
		pr_warn("ds: CPU %u has no BTS with 64-bit DS and CPL qualification: nothing recorded there (a traced task's ring has a gap while it runs on it)\n",
			cpu);
		return 0;
	}
	wrmsrl(MSR_IA32_DS_AREA, (u64)ds_native_area());
	local_irq_save(flags);
	this_cpu_write(ds_cpu.kernel, per_cpu(ds_kernel_of, cpu));
	ds_hw_start_cpu();
	local_irq_restore(flags);
	return 0;
}

/* On the CPU going down: it stops recording before it goes. */
static int ds_hw_cpu_offline(unsigned int cpu)
{
	unsigned long flags;

	local_irq_save(flags);
	ds_hw_stop_cpu();
	local_irq_restore(flags);
	return 0;
}

/*
 * syscore callbacks.  Version conditional: Debian's 6.12 has the struct
 * syscore API (callbacks get the registration's data pointer), 6.1 the
 * bare syscore_ops with their list node.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define DS_SYSCORE_ARG		void *data
#define ds_register_syscore(o)	do {					\
		static struct syscore s = { .ops = (o) };		\
		register_syscore(&s);					\
	} while (0)
#else
#define DS_SYSCORE_ARG		void
#define ds_register_syscore(o)	register_syscore_ops(o)
#endif

/* syscore: IRQs off, the last CPU (kexec, reboot, suspend) or the first. */
static int ds_hw_suspend(DS_SYSCORE_ARG)
{
	ds_hw_stop_cpu();
	return 0;
}

static void ds_hw_resume_cpu(DS_SYSCORE_ARG)
{
	wrmsrl(MSR_IA32_DS_AREA, (u64)ds_native_area());
	ds_hw_start_cpu();
}

static void ds_hw_shutdown(DS_SYSCORE_ARG)
{
	ds_hw_stop_cpu();
}

static struct syscore_ops ds_hw_syscore_ops = {
	.suspend = ds_hw_suspend,
	.resume = ds_hw_resume_cpu,
	.shutdown = ds_hw_shutdown,
};

void ds_emul_set_lookup(struct ds_trace *(*lookup)(struct task_struct *))
{
	ds_emul_lookup = lookup;
}

int ds_task_trace_start(struct task_struct *task, struct ds_trace *t)
{
	/* A switch must find t in task before t records (see the caller). */
	if (WARN_ON_ONCE(!ds_emul_lookup || ds_emul_lookup(task) != t))
		return -EINVAL;
	t->tid = task_pid_nr(task);
	switch (ds_backend()) {
	case DS_BACKEND_EMUL:
		t->have_prev = false;
		t->armed = true;
		task_pt_regs(task)->flags |= X86_EFLAGS_TF;
		return 0;
	case DS_BACKEND_HW:
		/*
		 * Recording starts at the task's next switch-in, or now.  The
		 * caller published t in the task first (a switch finds it
		 * there); armed and loaded in one IRQs-off section, so no
		 * switch sees t armed but not loaded on this CPU.
		 */
		if (task == current) {
			struct ds_cpu *c;
			unsigned long flags;

			local_irq_save(flags);
			c = this_cpu_ptr(&ds_cpu);
			t->armed = true;
			c->running = t;
			ds_hw_settle(c, local_clock());
			local_irq_restore(flags);
		} else {
			t->armed = true;
		}
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

void ds_task_trace_stop(struct task_struct *task, struct ds_trace *t)
{
	if (t->armed && ds_backend() == DS_BACKEND_EMUL)
		task_pt_regs(task)->flags &= ~X86_EFLAGS_TF;
	if (t->armed && ds_backend() == DS_BACKEND_HW && task == current) {
		struct ds_cpu *c;

		local_irq_disable();
		c = this_cpu_ptr(&ds_cpu);
		if (c->loaded == t)
			ds_hw_unload(c);
		if (c->running == t)
			c->running = NULL;
		ds_hw_settle(c, local_clock());
		local_irq_enable();
	}
	t->armed = false;
}

void ds_task_trace_drop(struct task_struct *child)
{
	if (ds_backend() == DS_BACKEND_EMUL)
		task_pt_regs(child)->flags &= ~X86_EFLAGS_TF;
}

/*
 * execve: the ring survives, its records do not.  They are the old
 * program's branches, and their addresses mean nothing in the new image:
 * symbolized against it they name the wrong functions, and a reader that
 * rebuilds the code between branches finds no path.  The ring starts over,
 * zeroed (ds_hw_save()'s wrap test relies on that), reloaded into the BTS
 * half if it was there.  It is zeroed with IRQs on (up to
 * ds_task_max_records(), 1.5 MiB by default: any user could make that an
 * IRQs-off stretch), disarmed meanwhile, so that no switch loads it or
 * writes a marker into it.  A suspension still pending (perf holds BTS)
 * gets its GAP marker in the new ring when it ends.
 */
void ds_task_trace_exec(struct pt_regs *regs, struct ds_trace *t)
{
	bool hw = ds_backend() == DS_BACKEND_HW, running = false;
	struct ds_cpu *c;
	unsigned long flags;

	if (!t->armed)
		return;
	local_irq_save(flags);
	if (hw) {
		c = this_cpu_ptr(&ds_cpu);
		running = c->running == t;
		if (c->loaded == t)
			ds_hw_unload(c);
		if (running)
			c->running = NULL;
	}
	t->armed = false;
	local_irq_restore(flags);

	memset(t->ring.base, 0, t->ring.capacity * BTS_RECORD_SIZE);
	t->ring.index = 0;
	t->ring.written = 0;
	t->ring.gaps = 0;
	t->ring.wrapped = false;

	local_irq_save(flags);
	t->armed = true;
	if (running) {		/* current's: on this CPU now, wherever it ran */
		c = this_cpu_ptr(&ds_cpu);
		c->running = t;
		ds_hw_settle(c, local_clock());
	}
	local_irq_restore(flags);
	if (ds_backend() != DS_BACKEND_EMUL)
		return;
	t->have_prev = false;
	regs->flags |= X86_EFLAGS_TF;
}

/*
 * Signal delivery (handle_signal(), which cleared TF for the handler) and
 * rt_sigreturn: the kernel moves the user ip, to the handler and back to
 * the interrupted instruction.  BTS records nothing for those transfers
 * (they come from CPL 0) and goes on recording in the handler.  The
 * emulation does the same: TF on again, stepping resumes at regs->ip with
 * no record for the way there (without this the handler ran untraced and
 * the step after sigreturn was judged from the sigreturn syscall).
 */
void ds_task_trace_resume_at(struct pt_regs *regs, struct ds_trace *t, bool handler)
{
	if (!t->armed || ds_backend() != DS_BACKEND_EMUL)
		return;
	/*
	 * The program's own TF: the CPU clears it for the handler (no traps
	 * there); sigreturn brings back what the frame says, which holds our
	 * TF as well, so the value at entry, unless the handler cleared it.
	 */
	if (handler) {
		t->user_tf_saved = t->user_tf;
		t->user_tf = false;
	} else {
		t->user_tf = t->user_tf_saved && (regs->flags & X86_EFLAGS_TF);
	}
	t->prev_ip = regs->ip;
	t->have_prev = true;
	regs->flags |= X86_EFLAGS_TF;
}

bool ds_emul_owns_tf(struct task_struct *task)
{
	struct ds_trace *t;

	if (ds_backend() != DS_BACKEND_EMUL || !ds_emul_lookup)
		return false;
	t = ds_emul_lookup(task);
	return t && t->armed && !t->user_tf;
}

/*
 * Emulation: the rings hold only user branches, so a marker goes in as it
 * comes; prev_ip stays valid across the switch (the task resumes at the
 * user ip it stopped at).  Hardware: prev's ring is saved before its
 * marker goes in at the index the CPU left, and next's is loaded after its
 * marker, unless perf holds BTS on this CPU (then next's suspension starts
 * and it gets a GAP marker when it is loaded again).  A task is always
 * its ring was loaded was switched out first: the ring is unloaded (and
 * unmapped) before it can be freed.
 */
void notrace ds_task_switch(struct ds_trace *prev, struct ds_trace *next,
			    u64 now, unsigned int cpu)
{
	bool hw = ds_backend() == DS_BACKEND_HW;
	struct ds_cpu *c = this_cpu_ptr(&ds_cpu);

	if (prev && prev->armed) {
		if (hw && c->loaded == prev)
			ds_hw_unload(c);
		ds_ring_write(&prev->ring, BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), now, cpu);
	}
	c->running = NULL;
	if (next && next->armed) {
		ds_ring_write(&next->ring, BTS_MARKER(BTS_MARK_SWITCH_IN, 0), now, cpu);
		if (hw) {
			c->running = next;
			if (c->perf)
				ds_gap_start(next, now, BTS_GAP_PERF, 0);
			else if (c->absent)	/* a CPU without BTS */
				ds_gap_start(next, now, BTS_GAP_UNKNOWN, 0);
		}
	}
	if (hw)
		ds_hw_settle(c, now);
}

/*
 * Decodes the user instruction at ip into insn; returns its length, 0 if it
 * cannot be read or decoded.  Only insn's decoded fields are used after.
 */
static int user_insn_decode(unsigned long ip, struct insn *insn, enum insn_mode mode)
{
	u8 buf[MAX_INSN_SIZE];
	int n = MAX_INSN_SIZE;

	/* IRQs are off here: no faulting in; the page just executed is there. */
	while (n > 0 && copy_from_user_nofault(buf, (void __user *)ip, n))
		n--;
	if (n <= 0 || insn_decode(insn, buf, n, mode) < 0)
		return 0;
	return insn->length;
}

/*
 * Instructions after which the next step trap comes one instruction late,
 * so that the step spans two instructions:
 * - the system calls (syscall, sysenter, int $0x80): they clear TF, the
 *   return brings it back and the trap follows the next instruction;
 * - loads of SS (mov to SS; pop ss, 32-bit only): they hold debug
 *   exceptions until the next instruction is done (SDM Vol. 3A 6.8.3,
 *   "Masking Exceptions and Interrupts When Switching Stacks").
 */
static bool ds_insn_delays_trap(const struct insn *insn, enum insn_mode mode)
{
	u8 b0 = insn->opcode.bytes[0], b1 = insn->opcode.bytes[1];

	if (b0 == 0x0f)
		return b1 == 0x05 || b1 == 0x34;
	if (b0 == 0xcd)
		return insn->immediate.bytes[0] == 0x80;
	if (b0 == 0x8e)
		return X86_MODRM_REG(insn->modrm.bytes[0]) == 2;
	return b0 == 0x17 && mode == INSN_MODE_32;
}

/*
 * Whether insn always transfers control (jmp, call, ret, iret, near and
 * far, direct and indirect), so that BTS records it even when it lands on
 * the next instruction (a jump table's first case, `call 1f; 1: pop`) or
 * on itself (`jmp .`).  Conditional jumps, loop and jrcxz are judged by
 * where they went.
 */
static bool ds_insn_always_branches(const struct insn *insn)
{
	switch (insn->opcode.bytes[0]) {
	case 0xe8:			/* call rel32 */
	case 0xe9: case 0xeb:		/* jmp rel32, rel8 */
	case 0xc2: case 0xc3:		/* ret */
	case 0xca: case 0xcb:		/* lret */
	case 0xcf:			/* iret */
	case 0x9a: case 0xea:		/* far call, far jmp (32-bit) */
		return true;
	case 0xff:			/* /2 /3 call, /4 /5 jmp, indirect */
		return X86_MODRM_REG(insn->modrm.bytes[0]) >= 2 &&
		       X86_MODRM_REG(insn->modrm.bytes[0]) <= 5;
	}
	return false;
}

/*
 * Whether one step from the instruction at from (insn, len bytes; len 0:
 * it did not decode) to ip took a branch.  A step that stays put is a rep
 * iteration, unless the instruction always branches.
 */
static bool ds_emul_taken(const struct insn *insn, int len, unsigned long from,
			  unsigned long ip)
{
	if (len && ds_insn_always_branches(insn))
		return true;
	return ip != from && (!len || ip != from + len);
}

/*
 * One single-step trap: the instruction at prev_ip has executed and the
 * next one is at regs->ip.  A syscall returns to the instruction after it
 * with TF set, so the trap comes one instruction later: judge that
 * instruction instead.
 */
static void ds_emul_step(struct ds_trace *t, struct pt_regs *regs, struct insn *insn,
			 int *len)
{
	enum insn_mode mode = user_64bit_mode(regs) ? INSN_MODE_64 : INSN_MODE_32;
	unsigned long ip = regs->ip, from = t->prev_ip;

	*len = 0;
	if (t->have_prev) {
		*len = user_insn_decode(from, insn, mode);
		if (*len && ds_insn_delays_trap(insn, mode) && ip != from) {
			from += *len;
			*len = user_insn_decode(from, insn, mode);
		}
		/*
		 * int3 at from: a breakpoint (uprobes', a debugger's) stood in
		 * for the instruction and was handled, perhaps emulated, in
		 * the kernel; the step is not judged.
		 */
		if (!(*len && insn->opcode.bytes[0] == 0xcc) &&
		    ds_emul_taken(insn, *len, from, ip))
			ds_ring_write(&t->ring, from, ip, 0);
	}
	t->prev_ip = ip;
	t->have_prev = true;
}

/*
 * The program's own TF (SDM Vol. 3B 17.3.1.4, "Single-Step Exception
 * Condition"), next to ours, judged from the instruction just executed:
 * PUSHF must not show our TF; POPF sets or clears the program's, and a TF
 * that POPF set traps only after the instruction that follows it, one
 * POPF cleared still traps after the POPF.  Our TF is set again whatever
 * POPF loaded.  Returns whether this trap is the program's.
 */
static bool ds_emul_user_tf(struct ds_trace *t, struct pt_regs *regs,
			    const struct insn *insn, int len)
{
	unsigned int size = !user_64bit_mode(regs) ? 4 : 8;
	bool theirs = t->user_tf;
	unsigned long v = 0;
	void __user *slot;

	if (!len || (insn->opcode.bytes[0] != 0x9c && insn->opcode.bytes[0] != 0x9d))
		return theirs;
	if (insn->opnd_bytes == 2)
		size = 2;
	slot = (void __user *)(regs->sp - (insn->opcode.bytes[0] == 0x9d ? size : 0));
	if (copy_from_user_nofault(&v, slot, size))
		return theirs;
	if (insn->opcode.bytes[0] == 0x9d) {		/* popf */
		t->user_tf = v & X86_EFLAGS_TF;
		regs->flags |= X86_EFLAGS_TF;
	} else if (!t->user_tf && (v & X86_EFLAGS_TF)) {	/* pushf */
		v &= ~X86_EFLAGS_TF;
		copy_to_user_nofault(slot, &v, size);
	}
	return theirs;
}

/* Breakpoint bits of DR6 that DR7 (the kernel's shadow) enables. */
static unsigned long enabled_trap_bits(void)
{
	unsigned long dr7 = this_cpu_read(cpu_dr7), bits = 0;
	int i;

	for (i = 0; i < 4; i++)
		if (dr7 & (3UL << (2 * i)))	/* L_i or G_i */
			bits |= DR_TRAP0 << i;
	return bits;
}

static int ds_emul_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	unsigned long *dr6 = (unsigned long *)args->err;
	struct ds_trace *t;
	struct insn insn;
	int len;

	if (val != DIE_DEBUG || !user_mode(args->regs) || !(*dr6 & DR_STEP) ||
	    !ds_emul_lookup)
		return NOTIFY_DONE;
	t = ds_emul_lookup(current);
	if (!t || !t->armed)
		return NOTIFY_DONE;
#ifdef CONFIG_UPROBES
	/*
	 * uprobes single-steps the probed instruction's copy out of line; its
	 * notifier (after this one) completes the step.  The step from the
	 * probe to the copy and back is not the program's: not judged, at
	 * the cost of a branch taken by the probed instruction or the next.
	 */
	if (current->utask && current->utask->state == UTASK_SSTEP) {
		t->have_prev = false;
		return NOTIFY_DONE;
	}
#endif
	ds_emul_step(t, args->regs, &insn, &len);
	/* the program's own TF, or a ptracer's single-step: their trap */
	if (ds_emul_user_tf(t, args->regs, &insn, len) || test_thread_flag(TIF_SINGLESTEP))
		return NOTIFY_DONE;
	/*
	 * SDM Vol. 3B 17.2.3: B0-B3 may be set for breakpoints DR7 does not
	 * enable; with DR0-DR3 at 0 they all "match" a step that lands at 0
	 * (a call through NULL).  Those bits are no reason for a SIGTRAP.
	 */
	*dr6 &= ~(DR_STEP | (DR_TRAP_BITS & ~enabled_trap_bits()));
	return (*dr6 & DR_TRAP_BITS) ? NOTIFY_DONE : NOTIFY_STOP;
}

static struct notifier_block ds_emul_nb = {
	.notifier_call = ds_emul_notify,
	.priority = INT_MAX,	/* before hw_breakpoint and uprobes look at DR_STEP */
};

/* ---- per-CPU kernel recording ------------------------------------------ */

/*
 * Hardware: each CPU's kernel ring is loaded whenever no traced task runs
 * there (ds_hw_settle()), recording branches at CPL 0 only, at the ring's
 * own address (never under KPTI: ds_hw_probe()).
 */
static void ds_hw_kernel_on(void *unused)
{
	struct ds_cpu *c = this_cpu_ptr(&ds_cpu);

	c->kernel = this_cpu_read(ds_kernel_of);
	ds_hw_settle(c, local_clock());
}

static int __init ds_hw_kernel_start(struct ds_trace *(*trace_of)(unsigned int cpu))
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ds_trace *t = trace_of(cpu);

		if (!t)
			continue;
		if (t->ring.capacity > ds_kernel_max_records())
			return -E2BIG;
		t->kernel = true;
		t->armed = true;
		t->hw_base = (u64)t->ring.base;
		per_cpu(ds_kernel_of, cpu) = t;
	}
	cpus_read_lock();
	on_each_cpu(ds_hw_kernel_on, NULL, 1);
	cpus_read_unlock();
	return 0;
}

/* Emulation: function entries, written by an ftrace callback. */
static DEFINE_PER_CPU(struct ds_ring *, ds_kring);

/*
 * The return address ftrace gives is just past the call: a direct call is
 * e8 rel32 (5 bytes); indirect calls are ff /2 with a register (2 bytes, 3
 * with a REX prefix), a disp8 (3) or a disp32 (6) memory operand.  The
 * direct form is tried first as it is by far the most common.
 */
unsigned long notrace ds_call_site(unsigned long ret)
{
	const u8 *p = (const u8 *)ret;

	if (p[-5] == 0xe8)
		return ret - 5;
	if (p[-2] == 0xff && (p[-1] & 0xf8) == 0xd0)
		return p[-3] == 0x41 ? ret - 3 : ret - 2;
	if (p[-3] == 0xff && (p[-2] & 0xf8) == 0x50)
		return ret - 3;
	if (p[-6] == 0xff && (p[-5] & 0xf8) == 0x90)
		return ret - 6;
	return ret;
}

/*
 * The function ftrace reports is the address of its __fentry__ call; with
 * kernel IBT (6.12's x86_64 default) that call follows the function's
 * ENDBR64, 4 bytes in, while the branch went to the ENDBR itself: step
 * back over it, as the kernel's own ftrace users do (is_endbr()).  A
 * function without ENDBR (not address-taken) starts at the call.
 */
unsigned long notrace ds_fn_entry(unsigned long ip)
{
	if (ENDBR_INSN_SIZE && is_endbr(*(const u32 *)(ip - ENDBR_INSN_SIZE)))
		return ip - ENDBR_INSN_SIZE;
	return ip;
}

#ifdef CONFIG_FUNCTION_TRACER
static void notrace ds_kernel_fn(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct ds_ring *r;
	unsigned long flags;
	int bit;

	if (in_nmi())
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	raw_local_irq_save(flags);
	r = this_cpu_read(ds_kring);
	if (r && parent_ip >= TASK_SIZE_MAX)
		ds_ring_write(r, ds_call_site(parent_ip), ds_fn_entry(ip), 0);
	raw_local_irq_restore(flags);
	ftrace_test_recursion_unlock(bit);
}

static struct ftrace_ops ds_kernel_ops = {
	.func = ds_kernel_fn,
};
#endif

int __init ds_kernel_trace_start(struct ds_trace *(*trace_of)(unsigned int cpu))
{
	unsigned int cpu;

	if (ds_lbr_mode == DS_LBR_KERNEL)
		return ds_lbr_kernel_start(trace_of);
	if (ds_backend() == DS_BACKEND_HW)
		return ds_hw_kernel_start(trace_of);
	if (ds_backend() != DS_BACKEND_EMUL || !IS_ENABLED(CONFIG_FUNCTION_TRACER))
		return -EOPNOTSUPP;
	for_each_possible_cpu(cpu)
		per_cpu(ds_kring, cpu) = trace_of(cpu) ? &trace_of(cpu)->ring : NULL;
#ifdef CONFIG_FUNCTION_TRACER
	return register_ftrace_function(&ds_kernel_ops);
#else
	return -EOPNOTSUPP;
#endif
}

/* ---- where the rings are written (debugfs) ------------------------------ */

/*
 * /sys/kernel/debug/ds/bts_buffers (root only): for each online CPU, the
 * linear range its DS area's BTS half points at now (with the hardware
 * backend; 0 0: none), and its kernel ring: the address the CPU writes it
 * at, when it does, and the ring's own (either backend).
 * tests/vm/check-vm.py checks that under KPTI the user page tables
 * (debugfs page_tables/current_user) map none of them.
 */
static int ds_buffers_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		struct debug_store *ds = &get_cpu_entry_area(cpu)->cpu_debug_store;
		struct ds_trace *k = per_cpu(ds_kernel_of, cpu);
		const struct ds_ring *r = k ? &k->ring : per_cpu(ds_kring, cpu);
		u64 bytes = r ? r->capacity * BTS_RECORD_SIZE : 0;

		seq_printf(m, "cpu %u", cpu);
		if (ds_hw_ok)	/* the DS area is mapped on Intel CPUs only */
			seq_printf(m, " bts 0x%llx 0x%llx", READ_ONCE(ds->bts_buffer_base),
				   READ_ONCE(ds->bts_absolute_maximum));
		if (k && k->hw_base)
			seq_printf(m, " kernel 0x%llx 0x%llx", k->hw_base, k->hw_base + bytes);
		if (r)
			seq_printf(m, " ring 0x%lx 0x%llx", (unsigned long)r->base,
				   (unsigned long)r->base + bytes);
		if (ds_hw_ok)	/* BIT(enum ds_user) of perf's users holding BTS */
			seq_printf(m, " perf 0x%lx", READ_ONCE(per_cpu(ds_cpu, cpu).perf));
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ds_buffers);

static int __init ds_debugfs_init(void)
{
	debugfs_create_file("bts_buffers", 0400, debugfs_create_dir("ds", NULL), NULL,
			    &ds_buffers_fops);
	return 0;
}
late_initcall(ds_debugfs_init);

/* ---- per-task rings on perf's intel_bts -------------------------------- */

/* perf has intel_bts here (not under page-table isolation, not on AMD). */
bool ds_perf_rings_ok(void)
{
	return x86_perf_bts_pmu_type() >= 0;
}

/*
 * The ring's own overflow handler: it marks the event as the kernel's for
 * intel_bts (its buffer is read by the kernel alone, which writes only
 * user addresses into a core); snapshot mode raises no overflow.
 */
static void ds_perf_ring_overflow(struct perf_event *event,
				  struct perf_sample_data *data, struct pt_regs *regs)
{
}

struct perf_event *ds_perf_ring_new(struct task_struct *task, u64 records,
				    struct ds_ring *ring)
{
	struct perf_event_attr attr = {
		.type = x86_perf_bts_pmu_type(), .size = sizeof(attr),
		.exclude_kernel = 1, .exclude_hv = 1, .disabled = 1,
	};
	unsigned long pages = DIV_ROUND_UP(records * BTS_RECORD_SIZE, PAGE_SIZE);
	struct perf_kernel_aux aux;
	struct perf_event *event;
	int ret;

	event = perf_event_create_kernel_counter(&attr, -1, task, ds_perf_ring_overflow, NULL);
	if (IS_ERR(event))
		return event;
	/* one run of pages: intel_bts's snapshot mode takes no other */
	ret = perf_event_kernel_aux_alloc(event, roundup_pow_of_two(pages), &aux);
	if (ret) {
		perf_event_release_kernel(event);
		/* past the memlock limits: ENOMEM, as the prctl says */
		return ERR_PTR(ret == -EPERM ? -ENOMEM : ret);
	}
	ds_ring_init(ring, aux.pages[0], (aux.nr_pages << PAGE_SHIFT) / BTS_RECORD_SIZE);
	return event;
}

/*
 * intel_bts's head is the next record's offset in the buffer; the CPU
 * starts over at its base when the record before the end was written
 * (BTINT clear: SDM "BTS Buffer Full"), so a record at the head is an
 * old one, and the buffer was zeroed at allocation.
 */
void ds_perf_ring_freeze(struct perf_event *event, struct ds_ring *ring)
{
	struct perf_kernel_aux aux;
	u64 index;

	if (perf_event_kernel_aux_stop(event, &aux))
		return;
	index = aux.head / BTS_RECORD_SIZE;
	if (index >= ring->capacity)
		index = 0;
	ring->index = index;
	ring->wrapped = ring->base[index].from || ring->base[index].to;
}

/* ---- the LBR source ------------------------------------------------------ */

/*
 * A reader of perf's LBR tail (arch/x86/events/lbr_tail.c), which keeps
 * each CPU's Last Branch Record stack recording while no perf event uses
 * it: Intel's model-specific LBR in the Skylake format (LBR_INFO), AMD's
 * LbrExtV2 (docs/kernel.md's table).  One stack per CPU with one CPL
 * filter, so one of two uses at a time (bts_crash.source=):
 *  - lbr: branches ending in user mode; each task's own entries since its
 *    switch-in (the tail marked then) go into its core (ds_lbr_read());
 *  - lbr-kernel: branches ending in ring 0; frozen by an oops and by the
 *    crash path as their first act and copied into the CPU's kernel ring
 *    (ds_lbr_freeze()), where CPU notes, VMCOREINFO and the oops report
 *    find them as they find BTS's.
 * perf's LBR users (perf record -b, LBR call stacks, KVM's guest LBR) take
 * the stack whenever they want it, and PT where it excludes the LBR: what
 * the recorder reads back then starts with a GAP marker (reason perf).
 */
#define DS_LBR_MAX_DEPTH	32	/* what a note and a CPU ring are sized for */

static void notrace ds_lbr_mark_now(struct ds_lbr_cpu *m, struct task_struct *task)
{
	x86_perf_lbr_tail_mark();
	m->task = task;
}

/*
 * Context switch (IRQs off): two MSR reads in perf's tail, nothing saved
 * or restored.  While perf holds the stack only who runs is noted; perf
 * marks when it lets go.
 */
void notrace ds_lbr_switch_in(struct task_struct *next)
{
	if (ds_lbr_mode == DS_LBR_USER)
		ds_lbr_mark_now(this_cpu_ptr(&ds_lbr_cpu), next);
}

/* execve: the old image's branches are not the new program's. */
void ds_lbr_exec(void)
{
	unsigned long flags;

	if (ds_lbr_mode != DS_LBR_USER)
		return;
	local_irq_save(flags);
	ds_lbr_switch_in(current);
	local_irq_restore(flags);
}

/* The user source's depth (0: off), what a thread note holds at most. */
unsigned int ds_lbr_capacity(void)
{
	return ds_lbr_mode == DS_LBR_USER ? ds_lbr_depth : 0;
}

/*
 * BTS's flags word (docs/format.md): bit 4 = predicted; the cycle count
 * CYC_CNT[15:0] in bits 47:32 with bit 5, when the CPU gave one (0 reads
 * as "none", as perf reads it).
 */
static u64 ds_lbr_flags(const struct x86_lbr_tail_entry *e)
{
	u64 flags = e->mispred ? 0 : BTS_REC_F_PREDICTED;

	if (e->cycles)
		flags |= BTS_REC_F_CYCLES | (u64)e->cycles << BTS_REC_CYCLES_SHIFT;
	return flags;
}

static struct bts_record ds_lbr_gap(u64 end, u64 len)
{
	return (struct bts_record){ .from = BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF),
				    .to = end, .flags = len };
}

/*
 * The entries pushed since the mark, oldest first, into out[max];
 * *wrapped when older ones were overwritten.  The stack is per CPU: an
 * entry from before the mark is another task's, perf's, or from before
 * the CPU's last oops, and is never returned.  A perf hold ending at the
 * mark, or going on now, is a GAP marker first.
 */
static unsigned int notrace ds_lbr_since_mark(struct bts_record *out, unsigned int max,
					      bool *wrapped)
{
	struct x86_lbr_tail_gap gap;
	struct x86_lbr_tail_entry e;
	unsigned int n, top, k = 0;

	*wrapped = false;
	if (!max)
		return 0;
	n = x86_perf_lbr_tail_since(&top, wrapped, &gap);
	if (gap.len)
		out[k++] = ds_lbr_gap(gap.end, gap.len);
	n = min(n, max - k);
	while (n--)		/* the oldest first: age n - 1 down to 0 */
		if (x86_perf_lbr_tail_entry(top, n, &e))
			out[k++] = (struct bts_record){ .from = e.from, .to = e.to,
							.flags = ds_lbr_flags(&e) };
	return k;
}

/* current's entries since its switch-in on this CPU (DS_LBR_USER). */
unsigned int ds_lbr_read(struct bts_record *out, bool *wrapped)
{
	unsigned int n = 0;
	unsigned long flags;

	*wrapped = false;
	if (ds_lbr_mode != DS_LBR_USER)
		return 0;
	local_irq_save(flags);
	if (this_cpu_read(ds_lbr_cpu.task) == current)
		n = ds_lbr_since_mark(out, ds_lbr_depth, wrapped);
	local_irq_restore(flags);
	return n;
}

/*
 * DS_LBR_KERNEL, an oops or the crash path on this CPU (NMI included:
 * MSRs and this CPU's memory only), as its first act: the stack stops,
 * and its entries since the mark become the CPU's kernel ring, oldest
 * first (written directly: the crash path may have frozen the ring for
 * writers already).  Once: a later freeze (the panic after an oops, the
 * kdump NMI) keeps what the first one found.
 */
static void notrace ds_lbr_freeze(void)
{
	struct ds_lbr_cpu *m;
	struct ds_trace *t;
	struct ds_ring *r;
	unsigned int n;
	bool wrapped;

	x86_perf_lbr_tail_freeze();	/* the callers stopped it already */
	m = this_cpu_ptr(&ds_lbr_cpu);
	if (m->frozen)
		return;
	m->frozen = true;	/* with a ring or not: the thaw starts it again */
	t = this_cpu_read(ds_kernel_of);
	if (!t)
		return;
	r = &t->ring;
	n = ds_lbr_since_mark(r->base, r->capacity, &wrapped);
	r->index = n % r->capacity;
	r->wrapped = n == r->capacity;
	r->written = n;
	r->gaps = ds_count_gaps(r->base, n);
}

/*
 * DS_LBR_KERNEL, a kernel ud2 (BUG, WARN, CFI) trapped, IRQs still off,
 * before report_bug() scans the bug table (thousands of branches, which
 * would leave nothing of the trail before the trap): the stack is copied
 * into the CPU's ring now and goes on recording.  A BUG goes on to die():
 * its oops keeps this copy (ds_kernel_trace_hold()); a WARN returns, and
 * the copy is only a later oops's to overwrite.  Not while frozen; while
 * perf holds the stack the copy is a GAP marker, and perf's use of it goes
 * on untouched.
 */
void notrace ds_kernel_bug_trap(void)
{
	struct ds_lbr_cpu *m;

	if (ds_lbr_mode != DS_LBR_KERNEL)
		return;
	x86_perf_lbr_tail_stop_now();
	m = this_cpu_ptr(&ds_lbr_cpu);
	if (m->frozen)
		return;
	ds_lbr_freeze();
	m->frozen = false;
	x86_perf_lbr_tail_thaw();
	m->bug = current;
}

/* The trap was a WARN: an oops of this task later is another one's. */
void ds_kernel_bug_done(void)
{
	if (ds_lbr_mode == DS_LBR_KERNEL)
		this_cpu_write(ds_lbr_cpu.bug, NULL);
}

/* DS_LBR_KERNEL, after an oops that did not panic: recording goes on. */
static void ds_lbr_thaw(void)
{
	struct ds_lbr_cpu *m = this_cpu_ptr(&ds_lbr_cpu);

	if (!m->frozen)
		return;
	m->frozen = false;
	x86_perf_lbr_tail_thaw();
}

/*
 * DS_LBR_KERNEL, an oops (ds_kernel_trace_hold()): frozen into the ring,
 * unless this task's BUG trap copied the stack already, before
 * report_bug() (ds_kernel_bug_trap()): that copy is the oops's; or, once
 * the oops is over, recording again.
 */
static void notrace ds_lbr_hold(bool hold)
{
	struct ds_lbr_cpu *m = this_cpu_ptr(&ds_lbr_cpu);

	if (!hold) {
		ds_lbr_thaw();
		return;
	}
	if (m->bug == current)
		m->frozen = true;
	m->bug = NULL;
	ds_lbr_freeze();
}

/* DS_LBR_KERNEL: each CPU's ring, which the freeze fills. */
static int __init ds_lbr_kernel_start(struct ds_trace *(*trace_of)(unsigned int cpu))
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ds_trace *t = trace_of(cpu);

		if (t && t->ring.capacity > ds_lbr_depth)
			return -E2BIG;
		per_cpu(ds_kernel_of, cpu) = t;
	}
	return 0;
}

/*
 * bts_crash.source=lbr (kernel false): every CPU records its tasks' user
 * branches; lbr-kernel (true): its own kernel branches, for the per-CPU
 * kernel rings (ds_kernel_trace_start() then takes them).  perf's tail
 * must drive the CPU's stack.
 */
int __init ds_lbr_start(bool kernel)
{
	const char *name = NULL;
	int depth = x86_perf_lbr_tail_start(kernel, &name);

	if (depth <= 0) {
		pr_info("ds: no model-specific LBR in the Skylake format or LbrExtV2 on this CPU: LBR source off\n");
		return -EOPNOTSUPP;
	}
	ds_lbr_depth = min_t(unsigned int, depth, DS_LBR_MAX_DEPTH);
	ds_lbr_mode = kernel ? DS_LBR_KERNEL : DS_LBR_USER;
	pr_info("ds: LBR source on: %u entries per CPU, %s (%s)\n", ds_lbr_depth,
		kernel ? "kernel branches, kept at oops and panic" :
			 "user branches of every task", name);
	return 0;
}

static int __init ds_init(void)
{
	bool pti_fallback = false;

	if (!ds_emulate && ds_hw_param && ds_hw_probe(&pti_fallback)) {
		int ret;

		ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "x86/ds:online",
					ds_hw_cpu_online, ds_hw_cpu_offline);
		if (ret < 0)
			return ret;
		ds_register_syscore(&ds_hw_syscore_ops);
		ds_hw_ok = true;
		pr_info("ds: BTS hardware backend on (circular: traced tasks' user branches; kernel branches only with bts_crash.cpu_records)\n");
		return 0;
	}
	ds_emulate |= pti_fallback;
	if (!ds_emulate)
		return 0;
	pr_info("ds: BTS emulation backend on: traced tasks are single-stepped\n");
	return register_die_notifier(&ds_emul_nb);
}
arch_initcall(ds_init);

#ifdef CONFIG_BTS_CRASH_KUNIT_TEST
#include "ds_test.c"
#endif
