// SPDX-License-Identifier: GPL-2.0
/*
 * Debug Store owner for btscrash.  Owns the circular BTS ring logic (index
 * and wrap exactly as SDM Vol. 3B 18.4.8.3 describes for BTINT clear) and,
 * for CPUs without BTS, the emulation backend: a traced task runs with
 * EFLAGS.TF and the #DB notifier records each taken branch (IRQs off).
 * The hardware backend (DS area, DEBUGCTL) is not written yet.
 */
#include <linux/kdebug.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/debugreg.h>
#include <asm/ds.h>
#include <asm/insn.h>
#include <asm/ptrace.h>

static bool ds_emulate;
module_param_named(emulate, ds_emulate, bool, 0444);
MODULE_PARM_DESC(emulate, "record user branches by single-stepping (no BTS needed)");

static struct ds_trace *(*ds_emul_lookup)(struct task_struct *);

void ds_ring_init(struct ds_ring *r, struct bts_record *base, u64 capacity)
{
	*r = (struct ds_ring){ .base = base, .capacity = capacity };
}

void ds_ring_write(struct ds_ring *r, u64 from, u64 to, u64 flags)
{
	struct bts_record *rec = &r->base[r->index];

	rec->from = from;
	rec->to = to;
	rec->flags = flags;
	r->written++;
	if (++r->index == r->capacity) {	/* BTS index reached the maximum */
		r->index = 0;
		r->wrapped = true;
	}
}

u64 ds_ring_count(const struct ds_ring *r)
{
	return r->wrapped ? r->capacity : r->index;
}

const struct bts_record *ds_ring_get(const struct ds_ring *r, u64 i)
{
	u64 first = r->wrapped ? r->index : 0;

	if (WARN_ON_ONCE(i >= ds_ring_count(r)))
		return &r->base[0];
	i += first;
	return &r->base[i >= r->capacity ? i - r->capacity : i];
}

enum ds_backend ds_backend(void)
{
	return ds_emulate ? DS_BACKEND_EMUL : DS_BACKEND_NONE;
}

void ds_emul_set_lookup(struct ds_trace *(*lookup)(struct task_struct *))
{
	ds_emul_lookup = lookup;
}

int ds_task_trace_start(struct task_struct *task, struct ds_trace *t)
{
	if (ds_backend() != DS_BACKEND_EMUL)
		return -EOPNOTSUPP;
	t->have_prev = false;
	t->armed = true;
	task_pt_regs(task)->flags |= X86_EFLAGS_TF;
	return 0;
}

void ds_task_trace_stop(struct task_struct *task, struct ds_trace *t)
{
	if (t->armed)
		task_pt_regs(task)->flags &= ~X86_EFLAGS_TF;
	t->armed = false;
}

void ds_task_trace_drop(struct task_struct *child)
{
	task_pt_regs(child)->flags &= ~X86_EFLAGS_TF;
}

void ds_task_trace_exec(struct pt_regs *regs, struct ds_trace *t)
{
	if (!t->armed)
		return;
	t->have_prev = false;
	regs->flags |= X86_EFLAGS_TF;
}

/* Length of the user instruction at ip, 0 if it cannot be read/decoded. */
static int user_insn_len(unsigned long ip, bool *is_syscall)
{
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int n = MAX_INSN_SIZE;

	/* IRQs are off here: no faulting in; the page just executed is there. */
	while (n > 0 && copy_from_user_nofault(buf, (void __user *)ip, n))
		n--;
	if (n <= 0 || insn_decode(&insn, buf, n, INSN_MODE_64) < 0)
		return 0;
	*is_syscall = insn.opcode.bytes[0] == 0x0f && insn.opcode.bytes[1] == 0x05;
	return insn.length;
}

/*
 * One single-step trap: the instruction at prev_ip has executed and the
 * next one is at regs->ip.  It was a taken branch unless ip is the next
 * instruction.  A syscall returns to the instruction after it with TF set,
 * so the trap comes one instruction later: judge that instruction instead.
 */
static void ds_emul_step(struct ds_trace *t, struct pt_regs *regs)
{
	unsigned long ip = regs->ip, from = t->prev_ip;
	bool sc = false;
	int len;

	if (t->have_prev && ip != from) {
		len = user_insn_len(from, &sc);
		if (sc) {
			from += len;
			sc = false;
			len = user_insn_len(from, &sc);
		}
		if (!len || ip != from + len)
			ds_ring_write(&t->ring, from, ip, 0);
	}
	t->prev_ip = ip;
	t->have_prev = true;
}

static int ds_emul_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	unsigned long *dr6 = (unsigned long *)args->err;
	struct ds_trace *t;

	if (val != DIE_DEBUG || !user_mode(args->regs) || !(*dr6 & DR_STEP) ||
	    !ds_emul_lookup)
		return NOTIFY_DONE;
	t = ds_emul_lookup(current);
	if (!t || !t->armed)
		return NOTIFY_DONE;
	ds_emul_step(t, args->regs);
	if (test_thread_flag(TIF_SINGLESTEP))	/* a ptracer steps too: its trap */
		return NOTIFY_DONE;
	*dr6 &= ~DR_STEP;
	return (*dr6 & DR_TRAP_BITS) ? NOTIFY_DONE : NOTIFY_STOP;
}

static struct notifier_block ds_emul_nb = {
	.notifier_call = ds_emul_notify,
	.priority = INT_MAX,	/* before hw_breakpoint and uprobes look at DR_STEP */
};

static int __init ds_init(void)
{
	if (!ds_emulate)
		return 0;
	pr_info("ds: BTS emulation backend on: traced tasks are single-stepped\n");
	return register_die_notifier(&ds_emul_nb);
}
arch_initcall(ds_init);
