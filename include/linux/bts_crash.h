/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btscrash crash-recording policy (kernel/bts_crash.c): per-task branch
 * rings enabled by prctl or system-wide, charged to locked_vm, written into
 * core dumps as NT_BTSCRASH_THREAD notes.  Hooks called from fork, exec,
 * free_task, prctl and the ELF core dumper, all in process context.
 */
#ifndef _LINUX_BTS_CRASH_H
#define _LINUX_BTS_CRASH_H

#include <linux/errno.h>
#include <linux/types.h>

struct task_struct;
struct pt_regs;
struct coredump_params;

/* prctl(PR_BTS_CRASH, op, arg, 0, 0) */
#define PR_BTS_CRASH		0x42545343	/* "BTSC" */
#define PR_BTS_CRASH_ENABLE	1	/* arg = ring size in records */
#define PR_BTS_CRASH_DISABLE	2
#define PR_BTS_CRASH_GET	3	/* returns the ring size, 0 if off */

#ifdef CONFIG_BTS_CRASH
int bts_crash_fork(struct task_struct *child, unsigned long clone_flags);
void bts_crash_free(struct task_struct *tsk);
void bts_crash_exec(struct pt_regs *regs);
long bts_crash_prctl(unsigned long op, unsigned long arg);
int bts_crash_core_notes_size(void);
int bts_crash_core_notes_write(struct coredump_params *cprm);
#else
static inline int bts_crash_fork(struct task_struct *c, unsigned long f) { return 0; }
static inline void bts_crash_free(struct task_struct *tsk) { }
static inline void bts_crash_exec(struct pt_regs *regs) { }
static inline long bts_crash_prctl(unsigned long op, unsigned long arg) { return -EINVAL; }
#endif

#endif /* _LINUX_BTS_CRASH_H */
