/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btscrash crash-recording policy (kernel/bts_crash.c): per-task branch
 * rings enabled by prctl or system-wide, charged to locked_vm, written into
 * core dumps as NT_BTSCRASH_THREAD notes.  Hooks called from fork, exec,
 * exit, free_task, commit_creds, prctl and the ELF core dumper, all in
 * process context, and
 * from __switch_to (IRQs off) for the context-switch markers.
 */
#ifndef _LINUX_BTS_CRASH_H
#define _LINUX_BTS_CRASH_H

#include <linux/errno.h>
#include <linux/jump_label.h>
#include <linux/types.h>

struct task_struct;
struct pt_regs;
struct coredump_params;

#include <uapi/linux/bts_crash.h>	/* PR_BTS_CRASH */

#ifdef CONFIG_BTS_CRASH
int bts_crash_fork(struct task_struct *child, unsigned long clone_flags);
void bts_crash_free(struct task_struct *tsk);
/* copy_process(), siglock held: a process-wide change awaits current */
bool bts_crash_fork_stale(struct task_struct *child);
/* do_exit(), after the core dump: the ring and its charge go */
void bts_crash_exit(struct task_struct *tsk);
void bts_crash_exec(struct pt_regs *regs);
/* begin_new_exec()/commit_creds(): current became non-dumpable */
void bts_crash_nondumpable(void);
/* handle_signal() set up the handler (handler: true); rt_sigreturn
 * restored the context (false)
 */
void bts_crash_signal(struct pt_regs *regs, bool handler);
/* uprobes: TF in task's registers is the emulation's, not the program's */
bool bts_crash_owns_tf(struct task_struct *task);
long bts_crash_prctl(unsigned long op, unsigned long arg);
int bts_crash_core_notes_size(void);
/* do_coredump(), once dumping is decided: the LBR source's snapshot */
void bts_crash_coredump_start(void);
/* x86 user fault/trap about to raise sig (before its printk) */
void bts_crash_user_fault(int sig);
int bts_crash_core_notes_write(struct coredump_params *cprm);

/*
 * Context switch (__switch_to, IRQs off): SWITCH_OUT/SWITCH_IN markers in
 * the rings of traced tasks.  The key is turned on by the first ring ever
 * attached and stays on; until then a switch costs one patched-out jump.
 */
DECLARE_STATIC_KEY_FALSE(bts_crash_switch_key);
void __bts_crash_switch(struct task_struct *prev, struct task_struct *next);
static __always_inline void bts_crash_switch(struct task_struct *prev,
					     struct task_struct *next)
{
	if (static_branch_unlikely(&bts_crash_switch_key))
		__bts_crash_switch(prev, next);
}

/*
 * The crash path: panic() and __crash_kexec() freeze every CPU's kernel
 * ring before anything else runs; panic() then prints this CPU's last
 * branches; crash_save_cpu() appends each CPU's NT_BTSCRASH_CPU note
 * (BTS_CRASH_CPU_NOTE_BYTES, linux/crash_core.h; 6.12: linux/vmcore_info.h) after its NT_PRSTATUS.
 */
void bts_crash_freeze(void);
void bts_crash_report(void);
/* oops_begin()/oops_end(): hold this CPU's ring while the oops is reported
 * (and for good when oops_end() goes on to panic: fatal)
 */
void bts_crash_oops_begin(void);
void bts_crash_oops_end(bool fatal);
u32 *bts_crash_cpu_note(u32 *buf, int cpu);
#else
static inline void bts_crash_freeze(void) { }
static inline void bts_crash_report(void) { }
static inline void bts_crash_oops_begin(void) { }
static inline void bts_crash_oops_end(bool fatal) { }
static inline u32 *bts_crash_cpu_note(u32 *buf, int cpu) { return buf; }
static inline int bts_crash_fork(struct task_struct *c, unsigned long f) { return 0; }
static inline void bts_crash_free(struct task_struct *tsk) { }
static inline void bts_crash_coredump_start(void) { }
static inline void bts_crash_user_fault(int sig) { }
static inline bool bts_crash_fork_stale(struct task_struct *c) { return false; }
static inline void bts_crash_exit(struct task_struct *tsk) { }
static inline void bts_crash_nondumpable(void) { }
static inline void bts_crash_exec(struct pt_regs *regs) { }
static inline void bts_crash_signal(struct pt_regs *regs, bool handler) { }
static inline bool bts_crash_owns_tf(struct task_struct *task) { return false; }
static inline long bts_crash_prctl(unsigned long op, unsigned long arg) { return -EINVAL; }
static inline int bts_crash_core_notes_size(void) { return 0; }
static inline int bts_crash_core_notes_write(struct coredump_params *c) { return 0; }
static inline void bts_crash_switch(struct task_struct *p, struct task_struct *n) { }
#endif

#endif /* _LINUX_BTS_CRASH_H */
