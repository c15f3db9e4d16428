/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug Store owner, the small API of arch/x86/kernel/ds.c: circular BTS
 * rings written exactly as the hardware writes them, and per-task tracing
 * through the emulation backend.  Callers: kernel/bts_crash.c (process
 * context; the ring write also from the #DB notifier, IRQs off).
 */
#ifndef _ASM_X86_DS_H
#define _ASM_X86_DS_H
/* Also included by perf's Intel code (arch/x86/events/intel/). */

#include <linux/types.h>
#include <uapi/linux/bts_crash.h>
#include <asm/debugreg.h>
#include <asm/intel_ds.h>

struct task_struct;
struct pt_regs;

/* A circular ring of BTS records (SDM Vol. 3B 18.4.8.3, BTINT clear). */
struct ds_ring {
	struct bts_record *base;
	u64 capacity;		/* slots */
	u64 index;		/* next slot written */
	u64 written;		/* records ever written (emulation counts) */
	u32 gaps;		/* GAP markers ever written (nr_gaps) */
	bool wrapped;
	bool frozen;		/* a dump is reading it: writes are dropped */
	u64 writing;		/* slot + 1 while ds_ring_write() fills it, else 0 */
};

/* Per-task trace state. */
struct ds_trace {
	struct ds_ring ring;
	unsigned long prev_ip;	/* emulation: user ip at the previous trap */
	bool have_prev;		/* emulation: prev_ip is valid */
	bool user_tf;		/* emulation: the program's own TF is set
				 * (its traps are delivered to it)
				 */
	bool user_tf_saved;	/* emulation: user_tf when the running
				 * signal handler was entered
				 */
	bool armed;		/* recording: TF is ours (emulation), or the
				 * ring is loaded at switch-in (hardware)
				 */
	u64 hw_base;		/* hardware: linear address the CPU writes the
				 * ring through while it is loaded
				 */
	u64 gap_since;		/* hardware: local_clock() when recording was
				 * suspended (perf took BTS), 0 if it was not
				 */
	u8 gap_reason;		/* hardware: enum bts_gap_reason of that */
	u32 tid;		/* a task's ring: its global thread id */
	bool kernel;		/* hardware: a CPU's kernel ring (CPL 0
				 * branches), mapped for good at hw_base
				 */
};

void ds_ring_init(struct ds_ring *r, struct bts_record *base, u64 capacity);
/* Writes one record at index and advances, wrapping at capacity; does
 * nothing once the ring is frozen.
 */
void ds_ring_write(struct ds_ring *r, u64 from, u64 to, u64 flags);
/* The crash path, on the CPU that writes r (NMI, or the panicking CPU):
 * a record it interrupted half-written becomes a GAP marker.
 */
void ds_ring_repair(struct ds_ring *r, u64 now);
/* A GAP marker (docs/format.md): recording stopped, then went on. */
static __always_inline bool ds_is_gap(u64 from)
{
	return (from & (BTS_MARKER_TAG_MASK | 0xffff)) == (BTS_MARKER_TAG | BTS_MARK_GAP);
}

/* GAP markers among rec[0..n) */
u32 ds_count_gaps(const struct bts_record *rec, u64 n);

/* Record i in time order (0 = oldest); nr = ds_ring_count(). */
u64 ds_ring_count(const struct ds_ring *r);
const struct bts_record *ds_ring_get(const struct ds_ring *r, u64 i);

/* Which backend records per-task user branches. */
enum ds_backend {
	DS_BACKEND_NONE,	/* neither BTS hardware nor emulation enabled */
	DS_BACKEND_HW,		/* BTS via the DS area and DEBUGCTL */
	DS_BACKEND_EMUL,	/* single-step emulation (ds.emulate=1) */
};

enum ds_backend ds_backend(void);
/* Largest per-task ring the backend can record into, in records. */
u64 ds_task_max_records(void);
/* Largest per-CPU kernel ring, in records. */
u64 ds_kernel_max_records(void);
/* Per-CPU kernel ring size by default: the LBR's depth (lbr-kernel), else
 * 0 (off: a BTS ring is opt-in, bts_crash.cpu_records).
 */
u64 ds_kernel_default_records(void);
/* Where the kernel rings' records come from: enum bts_crash_source. */
unsigned int ds_kernel_source(void);

/*
 * Perf's users of the BTS half of the CPU's DS area, each running at most
 * once per CPU (one intel_bts and one PT context, one BTS counter).  Each
 * takes it from the crash recorder (ds_bts_request()) and gives it back
 * (ds_bts_release()), IRQs off, on the CPU concerned.  (The LBR is perf's
 * alone: the recorder reads perf's LBR tail, asm/perf_event.h.)  ds.c
 * keeps the set of users per CPU: the recorder resumes, behind a GAP
 * marker, only when the last one has gone; taking twice, or giving back
 * what was not taken (a stop whose start failed), changes nothing.
 */
enum ds_user {
	DS_USER_INTEL_BTS,	/* intel_bts: bts_event_start() .. _stop() */
	DS_USER_BTS_EVENT,	/* the BTS sampling event: pmu::add .. ::del */
	DS_USER_PT,		/* intel_pt (excludes BTS unless lbr_pt_coexist) */
	DS_USERS
};

#ifdef CONFIG_BTS_CRASH
void ds_bts_request(enum ds_user who);
void ds_bts_release(enum ds_user who);
/* who holds the BTS half on this CPU (took it and has not given it back) */
bool ds_bts_holds(enum ds_user who);
/* ds.c records with BTS: it owns IA32_DS_AREA and the BTS half's fields. */
bool ds_hw_active(void);
/*
 * perf's intel_pmu_reset() (a PMI storm), IRQs off: the BTS index resets
 * only where it is perf's, never under the recorder.
 */
void ds_pmu_reset(struct debug_store *ds);
/* traps.c's handle_bug(), IRQs off: a kernel ud2 trapped (lbr-kernel
 * copies the stack before report_bug()); it was a WARN and returns.
 */
void ds_kernel_bug_trap(void);
void ds_kernel_bug_done(void);
/*
 * This CPU stops writing BTS records (the crash path, NMI-safe; a CPU
 * going offline or to suspend); its LBR stops too, and with lbr-kernel
 * fills its kernel ring (once).  kexec, reboot and halt are perf's:
 * x86_perf_branch_recorders_off().
 */
void ds_hw_stop_cpu(void);
#else	/* perf's and traps.c's hooks compile away */
static inline void ds_kernel_bug_trap(void) { }
static inline void ds_kernel_bug_done(void) { }
static inline void ds_bts_request(enum ds_user who) { }
static inline void ds_bts_release(enum ds_user who) { }
static inline bool ds_bts_holds(enum ds_user who) { return true; } /* perf's alone */
static inline bool ds_hw_active(void) { return false; }
/* perf's intel_pmu_reset() as upstream has it: all of it is perf's */
static inline void ds_pmu_reset(struct debug_store *ds)
{
	if (ds)
		ds->bts_index = ds->bts_buffer_base;
}
#endif

/*
 * What the hardware backend does to the CPU, so KUnit can check the exact
 * programming sequence against mocks (arch/x86/kernel/ds_test.c).
 */
struct debug_store;
struct ds_hw_ops {
	u64 (*read_msr)(u32 msr);
	void (*write_msr)(u32 msr, u64 val);
	/* This CPU's DS area (the one IA32_DS_AREA points at). */
	struct debug_store *(*area)(void);
	/* Makes r writable by the CPU at any privilege level; returns the
	 * linear address to program (the ring's own: no backend under KPTI).
	 */
	u64 (*window)(struct ds_ring *r);
	/* Undoes window() once the ring is saved. */
	void (*unwindow)(struct ds_ring *r);
};

void ds_hw_load(const struct ds_hw_ops *ops, struct ds_trace *t);
bool ds_hw_save(const struct ds_hw_ops *ops, struct ds_trace *t);

/* A core dump reads t now: its index as the CPU left it (t is current's). */
void ds_task_trace_sync(struct ds_trace *t);

/*
 * Per-task rings on perf (bts_crash.perf_rings=1, where perf has intel_bts): a
 * kernel-owned intel_bts event of the task's user branches in snapshot
 * mode, its AUX buffer the ring (perf_event_kernel_aux_alloc()), created
 * disabled for task (current, another thread of current's, or a child
 * not yet running) and charged to current's user by perf.  ring
 * describes the buffer (capacity: whole records in it, at least records).
 * perf schedules it with the task; ds.c loads nothing for it.
 */
struct perf_event;
bool ds_perf_rings_ok(void);
struct perf_event *ds_perf_ring_new(struct task_struct *task, u64 records,
				    struct ds_ring *ring);
/* A core dump: the event stops for good, ring's index and wrap from it. */
void ds_perf_ring_freeze(struct perf_event *event, struct ds_ring *ring);

/* Starts/stops recording a task's user branches into t (the task is
 * current, or a child not yet running; published where a context switch
 * finds it before this is called).
 */
int ds_task_trace_start(struct task_struct *task, struct ds_trace *t);
void ds_task_trace_stop(struct task_struct *task, struct ds_trace *t);
/* A new child inherited a traced parent's user flags but gets no ring. */
void ds_task_trace_drop(struct task_struct *child);
/* After exec set up fresh user registers: keep recording. */
void ds_task_trace_exec(struct pt_regs *regs, struct ds_trace *t);
/* Signal delivery set up regs for the handler; rt_sigreturn restored the
 * interrupted context: the emulation steps on from regs->ip, no record.
 */
/* handle_signal() (handler: true) and rt_sigreturn (false) moved the user ip */
void ds_task_trace_resume_at(struct pt_regs *regs, struct ds_trace *t, bool handler);
/* TF in task's registers is the emulation's alone, not the program's
 * (uprobes must leave it set, and send no SIGTRAP for it).
 */
bool ds_emul_owns_tf(struct task_struct *task);
/* Context switch, IRQs off: marks prev's departure and next's arrival
 * (either may be NULL) with timestamp now (local_clock() ns) and cpu.
 */
void ds_task_switch(struct ds_trace *prev, struct ds_trace *next, u64 now,
		    unsigned int cpu);
/*
 * Per-CPU kernel recording, one trace per CPU given by trace_of (NULL: that
 * CPU has none).  Hardware: the CPU writes its kernel branches (CPL 0) into
 * it whenever no traced task runs there; ds_hw_stop_cpu() ends that (crash
 * path).  Emulation (ds.emulate=1 with FUNCTION_TRACER): every traceable
 * kernel function entry is written as a record call site -> function, IRQs
 * off, never from NMI; a frozen ring takes no more writes.
 */
int ds_kernel_trace_start(struct ds_trace *(*trace_of)(unsigned int cpu));
/* An oops reads this CPU's kernel ring: hold it still (hardware; LBR:
 * frozen into the ring), or not.
 */
void ds_kernel_trace_hold(bool hold);
/* Address of the call instruction that returns to ret (kernel text), or
 * ret itself if the bytes before it are no call: best effort.
 */
unsigned long ds_call_site(unsigned long ret);
/* The function whose ftrace call site is ip: ip, or the ENDBR64 before it
 * (kernel IBT).
 */
unsigned long ds_fn_entry(unsigned long ip);

/*
 * The LBR source: bts_crash.source=lbr (kernel false), user branches of
 * every task, read by the dumping thread; lbr-kernel (true), each CPU's
 * kernel branches, frozen into its kernel ring by an oops or the crash
 * path (ds_kernel_trace_hold(), ds_hw_stop_cpu()).
 */
int ds_lbr_start(bool kernel);
unsigned int ds_lbr_capacity(void);		/* user source's depth; 0: off */
void ds_lbr_switch_in(struct task_struct *next);
void ds_lbr_exec(void);
unsigned int ds_lbr_read(struct bts_record *out, bool *wrapped);

/* How the emulation finds the current task's trace (bts_crash owns it). */
void ds_emul_set_lookup(struct ds_trace *(*lookup)(struct task_struct *));

#endif /* _ASM_X86_DS_H */
