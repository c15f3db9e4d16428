/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug Store owner, the small API of arch/x86/kernel/ds.c: circular BTS
 * rings written exactly as the hardware writes them, and per-task tracing
 * through the emulation backend.  Callers: kernel/bts_crash.c (process
 * context; the ring write also from the #DB notifier, IRQs off).
 */
#ifndef _ASM_X86_DS_H
#define _ASM_X86_DS_H

#include <linux/types.h>
#include <uapi/linux/bts_crash.h>

struct task_struct;
struct pt_regs;

/* A circular ring of BTS records (SDM Vol. 3B 18.4.8.3, BTINT clear). */
struct ds_ring {
	struct bts_record *base;
	u64 capacity;		/* slots */
	u64 index;		/* next slot written */
	u64 written;		/* records ever written (emulation counts) */
	bool wrapped;
};

/* Per-task trace state of the emulation backend. */
struct ds_trace {
	struct ds_ring ring;
	unsigned long prev_ip;	/* user ip at the previous single-step trap */
	bool have_prev;
	bool armed;		/* TF is ours in this task's user flags */
};

void ds_ring_init(struct ds_ring *r, struct bts_record *base, u64 capacity);
/* Writes one record at index and advances, wrapping at capacity. */
void ds_ring_write(struct ds_ring *r, u64 from, u64 to, u64 flags);
/* Record i in time order (0 = oldest); nr = ds_ring_count(). */
u64 ds_ring_count(const struct ds_ring *r);
const struct bts_record *ds_ring_get(const struct ds_ring *r, u64 i);

/* Which backend records per-task user branches. */
enum ds_backend {
	DS_BACKEND_NONE,	/* neither BTS hardware nor emulation enabled */
	DS_BACKEND_HW,		/* BTS via DEBUGCTL (not yet: issue 3) */
	DS_BACKEND_EMUL,	/* single-step emulation (ds_emulate=1) */
};
enum ds_backend ds_backend(void);

/* Starts/stops recording a task's user branches into t (the task is
 * current, or a child not yet running). */
int ds_task_trace_start(struct task_struct *task, struct ds_trace *t);
void ds_task_trace_stop(struct task_struct *task, struct ds_trace *t);
/* A new child inherited a traced parent's user flags but gets no ring. */
void ds_task_trace_drop(struct task_struct *child);
/* After exec set up fresh user registers: keep recording. */
void ds_task_trace_exec(struct pt_regs *regs, struct ds_trace *t);
/* How the emulation finds the current task's trace (bts_crash owns it). */
void ds_emul_set_lookup(struct ds_trace *(*lookup)(struct task_struct *));

#endif /* _ASM_X86_DS_H */
