// SPDX-License-Identifier: GPL-2.0
/*
 * btscrash policy: who is traced, who pays, what lands in core dumps.
 * Per-task rings (prctl, inherited by threads and children and across exec,
 * or a system-wide default; dropped at a secure exec and at exit) charged
 * to the user's locked_vm and the process's pinned_vm against
 * RLIMIT_MEMLOCK; one NT_BTSCRASH_THREAD note per traced thread in ELF
 * cores, bounded in total (docs/format.md); per-CPU kernel rings,
 * stopped and written into the crash notes by the crash path (NMI
 * included); with bts_crash.source=lbr, the last user branches of every
 * dumping thread without a ring, from the CPU's LBR stack; with
 * lbr-kernel (the default where the CPU has that LBR), the per-CPU rings
 * hold each CPU's LBR, frozen at an oops or by the crash path; a per-CPU
 * BTS ring only with bts_crash.cpu_records.  Knows no MSR:
 * the recording is arch/x86/kernel/ds.c's.
 * Process context, except the switch hook (IRQs off) and the crash path.
 */
#include <linux/bts_crash.h>
#include <linux/capability.h>
#include <linux/coredump.h>
#include <linux/crash_core.h>
#if __has_include(<linux/vmcore_info.h>)
/* 6.9+: VMCOREINFO and the note sizes left crash_core.h (CONFIG_VMCORE_INFO) */
#include <linux/vmcore_info.h>
#define BTS_CRASH_VMCOREINFO	IS_ENABLED(CONFIG_VMCORE_INFO)
#else
#define BTS_CRASH_VMCOREINFO	IS_ENABLED(CONFIG_CRASH_CORE)
#endif
#include <linux/crash_dump.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/kdebug.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/sysctl.h>
#include <linux/task_work.h>
#include <asm/ds.h>

/* 6.8 renamed MAX_ORDER (one past the largest order) to MAX_PAGE_ORDER */
#ifndef MAX_PAGE_ORDER
#define MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif
/*
 * Threads that run kernel code on a process's behalf and never get a ring:
 * kernel threads, and user workers (io_uring's, vhost's: 6.4+ marks both
 * PF_USER_WORKER; 6.1 has only io_uring's PF_IO_WORKER).
 */
#ifndef PF_USER_WORKER
#define PF_USER_WORKER	PF_IO_WORKER
#endif
#define BTS_CRASH_NO_RING	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER)

#define BTS_CRASH_MAX_TASK_RECORDS	BIT(16)	/* 1.5 MiB per thread */

struct bts_crash_task {
	/* First: task_struct.bts_crash points at it (format.md §4.3). */
	struct bts_crash_ring desc;
	struct ds_trace trace;
	void *mem;			/* the records, physically contiguous */
	unsigned int records;		/* the size asked for */
	bool perf;			/* a ring on perf (event, once made) */
	struct perf_event *event;	/* bts_crash.perf_rings: the ring is its AUX
					 * buffer, perf charges it
					 */
	size_t bytes;			/* page-aligned size of mem */
	unsigned long charged;		/* pages charged to user->locked_vm
					 * and to mm->pinned_vm
					 */
	struct user_struct *user;
	struct mm_struct *mm;		/* mmgrab()'ed; NULL for a kthread */
	/* What a core dump writes, fixed when it sized its notes. */
	u64 snap_first, snap_count, snap_user;
	bool snap_truncated;		/* older user records left out (budget) */
	bool snap_skip;			/* no note at all (budget spent) */
};

DEFINE_STATIC_KEY_FALSE(bts_crash_switch_key);

/*
 * bts_crash.perf_rings=1: a task's ring is a kernel-owned intel_bts event
 * of perf's in snapshot mode, its AUX buffer charged by perf (ds.c,
 * ds_perf_ring_new()); no markers yet.  Where perf has no intel_bts
 * (page-table isolation, AMD) rings are ds.c's as without it.
 */
static bool bts_crash_perf_rings_param;
module_param_named(perf_rings, bts_crash_perf_rings_param, bool, 0444);
MODULE_PARM_DESC(perf_rings, "per-task rings are perf intel_bts events in snapshot mode, where perf has intel_bts");

static bool bts_crash_perf_rings(void)
{
	return bts_crash_perf_rings_param && ds_perf_rings_ok();
}

/*
 * System-wide default ring size for new programs (0 = off): the sysctl
 * kernel.bts_crash_task_records, its one knob; at boot the kernel's
 * sysctl.kernel.bts_crash_task_records=N sets it before init runs.
 */
static unsigned int bts_crash_task_records;

static struct ds_trace *bts_crash_lookup(struct task_struct *t)
{
	return t->bts_crash ? &t->bts_crash->trace : NULL;
}

/*
 * Rings are pinned kernel memory on the user's behalf, charged as io_uring
 * charges its buffers (user->locked_vm, all of the user's processes
 * together) and as perf charges its ring buffers (mm->pinned_vm: VmPin in
 * /proc/PID/status).  Without CAP_IPC_LOCK both must stay within
 * RLIMIT_MEMLOCK, the process's share together with what it mlock()ed
 * (mm->locked_vm): the limit is not paid twice.
 */

/*
 * Adds pages to *v unless that takes it and extra past limit: checked
 * before the counter moves (io_uring's __io_account_mem()), so a charge
 * that fails never shows in the counter and cannot fail a concurrent one
 * that fits.  CAP_IPC_LOCK passes the limit, asked only when it is needed
 * (as perf_mmap() asks); *cap caches the answer, -1 until asked.
 */
static bool bts_crash_add_within(atomic64_t *v, s64 pages, s64 extra, s64 limit,
				 int *cap)
{
	s64 cur = atomic64_read(v);

	do {
		if (cur + pages + extra > limit) {
			if (*cap < 0)
				*cap = capable(CAP_IPC_LOCK);
			if (!*cap)
				return false;
			atomic64_add(pages, v);
			return true;
		}
	} while (!atomic64_try_cmpxchg(v, &cur, cur + pages));
	return true;
}

static int bts_crash_charge(struct user_struct *user, struct mm_struct *mm,
			    unsigned long pages)
{
	s64 limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	int cap = -1;

	/*
	 * The process's share first: undone if the user's fails, it shows
	 * for that moment to the process's own threads only.  atomic_long_t
	 * is atomic64_t (BTS_CRASH depends on X86_64).
	 */
	if (mm && !bts_crash_add_within(&mm->pinned_vm, pages,
					READ_ONCE(mm->locked_vm), limit, &cap))
		return -ENOMEM;
	if (!bts_crash_add_within(&user->locked_vm, pages, 0, limit, &cap)) {
		if (mm)
			atomic64_sub(pages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static void bts_crash_uncharge(struct bts_crash_task *bt)
{
	atomic_long_sub(bt->charged, &bt->user->locked_vm);
	if (bt->mm)
		atomic64_sub(bt->charged, &bt->mm->pinned_vm);
}

/* execve: the ring survives, the process's share moves to the new mm. */
static void bts_crash_recharge_mm(struct bts_crash_task *bt, struct mm_struct *mm)
{
	if (bt->mm == mm)
		return;
	if (bt->mm) {
		atomic64_sub(bt->charged, &bt->mm->pinned_vm);
		mmdrop(bt->mm);
	}
	bt->mm = mm;
	if (mm) {
		mmgrab(mm);
		atomic64_add(bt->charged, &mm->pinned_vm);
	}
}

/* The ring's description, which the core note and crash's `bts` read. */
static void bts_crash_desc_init(struct bts_crash_task *bt, unsigned int capacity,
				void *records, u16 source, u32 flags)
{
	bt->desc = (struct bts_crash_ring){
		.magic = BTS_CRASH_RING_MAGIC, .version = BTS_CRASH_RING_VERSION,
		.hdr_size = sizeof(bt->desc), .record_size = BTS_RECORD_SIZE,
		.capacity = capacity, .records_pa = virt_to_phys(records),
		.source = source, .flags = flags,
	};
}

/*
 * A ring on perf: task's intel_bts event (perf has one per task, so a
 * ring handed over to another thread gets it there, when installed).
 */
static int bts_crash_perf_ring(struct bts_crash_task *bt, struct task_struct *task)
{
	struct perf_event *event = ds_perf_ring_new(task, bt->records, &bt->trace.ring);

	if (IS_ERR(event))
		return PTR_ERR(event);
	bt->event = event;
	bts_crash_desc_init(bt, bt->trace.ring.capacity, bt->trace.ring.base,
			    BTS_SOURCE_HW, 0);
	return 0;
}

/*
 * A ring for task (current, or a child of current not yet running; NULL:
 * a hand-over to another thread, whose ring on perf is made there).
 */
static struct bts_crash_task *bts_crash_alloc(struct task_struct *task,
					      unsigned int records)
{
	size_t bytes = (size_t)records * BTS_RECORD_SIZE;
	struct bts_crash_task *bt;
	int ret;

	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt)
		return ERR_PTR(-ENOMEM);
	bt->records = records;
	if (bts_crash_perf_rings()) {
		bt->perf = true;
		bt->user = get_current_user();
		ret = task ? bts_crash_perf_ring(bt, task) : 0;
		if (ret)
			goto err_user;
		return bt;
	}
	/* exact pages (not a power of two): what is charged is what is kept */
	bt->bytes = PAGE_ALIGN(bytes);
	bt->user = get_current_user();
	bt->charged = bt->bytes >> PAGE_SHIFT;
	ret = bts_crash_charge(bt->user, task->mm, bt->charged);
	if (ret)
		goto err_user;
	bt->mm = task->mm;
	if (bt->mm)
		mmgrab(bt->mm);
	/*
	 * Up to order 9 (BTS_CRASH_MAX_TASK_RECORDS), asked for by an
	 * unprivileged prctl() or exec: no allocation-failure splat, no
	 * retrying into compaction stalls; the caller gets -ENOMEM.  Zeroed
	 * here once (a fresh ring's slots must read 0: ds_hw_save()).
	 */
	bt->mem = alloc_pages_exact(bt->bytes, GFP_KERNEL | __GFP_ZERO |
				    __GFP_NOWARN | __GFP_NORETRY);
	if (!bt->mem) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ds_ring_init(&bt->trace.ring, bt->mem, records);
	/* Only the emulation sees every record go in; BTS hardware does not
	 * say how often it wrapped.
	 */
	if (ds_backend() == DS_BACKEND_HW)
		bts_crash_desc_init(bt, records, bt->mem, BTS_SOURCE_HW, 0);
	else
		bts_crash_desc_init(bt, records, bt->mem, BTS_SOURCE_EMUL,
				    BTS_RING_F_LOST_EXACT);
	return bt;
err_uncharge:
	bts_crash_uncharge(bt);
	if (bt->mm)
		mmdrop(bt->mm);
err_user:
	free_uid(bt->user);
	kfree(bt);
	return ERR_PTR(ret);
}

/*
 * Task context only: the last mmdrop() of a ring's mm frees its page
 * tables under pgd_lock, which is not IRQ-safe (a failed fork's child
 * is freed here from the fork's error path, not from the RCU callback
 * that frees its task_struct: fork.c's own comment on mmdrop there).
 */
static void bts_crash_release(struct bts_crash_task *bt)
{
	WARN_ON_ONCE(!in_task());
	if (bt->event)
		perf_event_release_kernel(bt->event);
	else if (!bt->perf)
		free_pages_exact(bt->mem, bt->bytes);
	bts_crash_uncharge(bt);
	if (bt->mm)
		mmdrop(bt->mm);
	free_uid(bt->user);
	kfree(bt);
}

static int bts_crash_check_size(unsigned long records)
{
	if (!records || records > BTS_CRASH_MAX_TASK_RECORDS ||
	    records > ds_task_max_records())
		return -EINVAL;
	if (ds_backend() == DS_BACKEND_NONE)
		return -EOPNOTSUPP;
	return 0;
}

/* Starts tracing task (current, or a child not yet running) into bt. */
static int bts_crash_install(struct task_struct *task, struct bts_crash_task *bt)
{
	int ret;

	if (bt->perf) {		/* perf schedules it with task from now on */
		ret = bt->event ? 0 : bts_crash_perf_ring(bt, task);
		if (ret) {
			bts_crash_release(bt);
			return ret;
		}
		bt->desc.id = task_pid_nr(task);
		WRITE_ONCE(task->bts_crash, bt);
		perf_event_enable(bt->event);
		return 0;
	}
	bt->desc.id = task_pid_nr(task);
	/*
	 * Sleeps (text patching), so before anything records: once the ring
	 * is loaded, every switch must run the hook that saves it.
	 */
	if (!static_key_enabled(&bts_crash_switch_key))
		static_branch_enable(&bts_crash_switch_key);
	/*
	 * Published before it is loaded: a switch away from task then finds
	 * the ring and saves it (the hardware would otherwise go on writing
	 * the next task's branches into it, or into freed pages after a
	 * migration and exit).  Not armed yet, a switch leaves it alone.
	 */
	WRITE_ONCE(task->bts_crash, bt);
	ret = ds_task_trace_start(task, &bt->trace);
	if (ret) {
		WRITE_ONCE(task->bts_crash, NULL);
		barrier();	/* task is current or not running yet */
		bts_crash_release(bt);
		return ret;
	}
	return 0;
}

static int bts_crash_attach(struct task_struct *task, unsigned long records)
{
	struct bts_crash_task *bt;
	int ret = bts_crash_check_size(records);

	if (ret)
		return ret;
	bt = bts_crash_alloc(task, records);
	if (IS_ERR(bt))
		return PTR_ERR(bt);
	return bts_crash_install(task, bt);
}

static void bts_crash_detach(struct task_struct *task)
{
	struct bts_crash_task *bt = task->bts_crash;

	if (!bt)
		return;
	if (!bt->perf)
		ds_task_trace_stop(task, &bt->trace);
	/* task is current: a switch away from it runs on this CPU, in order */
	WRITE_ONCE(task->bts_crash, NULL);
	barrier();
	bts_crash_release(bt);
}

/* What a dump reader needs of a ring's state, kept in its descriptor. */
static void notrace desc_sync(struct bts_crash_ring *d, const struct ds_ring *r)
{
	d->index = r->index;
	d->nr_gaps = r->gaps;
	if (r->wrapped)
		d->flags |= BTS_RING_F_WRAPPED;
	if (d->flags & BTS_RING_F_LOST_EXACT)
		d->lost = r->written - ds_ring_count(r);
}

void notrace __bts_crash_switch(struct task_struct *prev, struct task_struct *next)
{
	struct bts_crash_task *p = READ_ONCE(prev->bts_crash);
	struct bts_crash_task *n = READ_ONCE(next->bts_crash);

	if (p || n)
		ds_task_switch(p ? &p->trace : NULL, n ? &n->trace : NULL,
			       local_clock(), smp_processor_id());
	if (p)
		desc_sync(&p->desc, &p->trace.ring);
	ds_lbr_switch_in(next);
}

/* A new thread of a traced process gets a ring: not a kernel or user worker. */
static bool bts_crash_inherits(const struct task_struct *child)
{
	return !(child->flags & BTS_CRASH_NO_RING);
}

int bts_crash_fork(struct task_struct *child, unsigned long clone_flags)
{
	struct bts_crash_task *parent = current->bts_crash;
	int ret;

	child->bts_crash = NULL;
	if (!parent || !bts_crash_inherits(child))
		return 0;
	ret = bts_crash_attach(child, parent->records);
	if (ret) {
		/* the child runs untraced; it is never harmed */
		ds_task_trace_drop(child);
		pr_warn_ratelimited("bts_crash: %s[%d]: child not traced: %d (RLIMIT_MEMLOCK?)\n",
				    current->comm, task_pid_nr(current), ret);
	}
	return 0;
}

/* A child whose fork failed after bts_crash_fork(): it never ran. */
void bts_crash_free(struct task_struct *tsk)
{
	if (tsk->bts_crash) {
		bts_crash_release(tsk->bts_crash);
		tsk->bts_crash = NULL;
	}
}

/* ---- process-wide ENABLE and DISABLE ---------------------------------- */

/*
 * ENABLE and DISABLE act on every thread of the calling process, as
 * seccomp's TSYNC does: the caller allocates and charges a ring for every
 * other thread first (any failure leaves the process as it was), then,
 * under sighand->siglock, leaves each thread its new ring (or
 * &bts_crash_off) in ->bts_crash_next and queues bts_crash_work on it.
 * The thread installs it itself, before it runs user code again: only a
 * task itself (or a child not yet running) may load or unload its ring.
 * A later change replaces a hand-over not yet taken; the work is queued
 * once.  A fork in flight restarts (bts_crash_fork_stale()), so a thread
 * created meanwhile cannot keep the old setting.
 */
static struct bts_crash_task bts_crash_off;	/* hand-over: no ring */

static void bts_crash_work_fn(struct callback_head *head);

/*
 * current's hand-over, if any, taken out of its queued work: under
 * siglock, ->bts_crash_next is set if and only if the work is queued (or
 * running, before it took it), so a later hand-over queues it again only
 * once it is off the list.
 */
static struct bts_crash_task *bts_crash_take_next(void)
{
	struct bts_crash_task *next;

	if (!READ_ONCE(current->bts_crash_next))
		return NULL;
	spin_lock_irq(&current->sighand->siglock);
	next = current->bts_crash_next;
	if (next) {
		current->bts_crash_next = NULL;
		task_work_cancel(current, &current->bts_crash_work);
	}
	spin_unlock_irq(&current->sighand->siglock);
	return next;
}

static void bts_crash_put_next(struct bts_crash_task *next)
{
	if (next && next != &bts_crash_off)
		bts_crash_release(next);
}

/* Exit, or tracing ended for good (non-dumpable): a hand-over is void. */
static void bts_crash_drop_next(void)
{
	bts_crash_put_next(bts_crash_take_next());
}

static int bts_crash_install(struct task_struct *task, struct bts_crash_task *bt);
static void bts_crash_detach(struct task_struct *task);

/* current applies what a process-wide ENABLE/DISABLE left it. */
static void bts_crash_apply_next(void)
{
	struct bts_crash_task *next = bts_crash_take_next();

	if (!next)
		return;
	if (current->flags & PF_EXITING) {	/* exit_task_work() */
		bts_crash_put_next(next);
		return;
	}
	bts_crash_detach(current);
	if (next != &bts_crash_off)
		bts_crash_install(current, next);	/* on error, untraced */
}

static void bts_crash_work_fn(struct callback_head *head)
{
	bts_crash_apply_next();
}

/*
 * copy_process() under siglock: current has a hand-over to take first
 * (io_uring retries its workers' creation; they never get a ring anyway).
 */
bool bts_crash_fork_stale(struct task_struct *child)
{
	return current->bts_crash_next && bts_crash_inherits(child);
}

static bool bts_crash_handover_target(struct task_struct *t)
{
	return t != current && !(t->flags & PF_EXITING) && bts_crash_inherits(t);
}

/*
 * Leaves next[0..) to the other threads (siglock held); what a hand-over
 * replaces, and what could not be handed over, stays in next[] for the
 * caller to free.  -EAGAIN, with *need, when n slots are too few now.
 */
static int bts_crash_handover(struct bts_crash_task **next, unsigned int n,
			      unsigned int *need)
{
	struct task_struct *t;
	unsigned int i = 0;

	lockdep_assert_held(&current->sighand->siglock);
	for_each_thread(current, t)
		i += bts_crash_handover_target(t);
	if (i > n) {
		*need = i;
		return -EAGAIN;
	}
	i = 0;
	for_each_thread(current, t) {
		struct bts_crash_task *old;

		if (!bts_crash_handover_target(t))
			continue;
		old = t->bts_crash_next;
		t->bts_crash_next = next[i];
		if (old) {
			next[i] = old;		/* its work is still queued */
			i++;
			continue;
		}
		init_task_work(&t->bts_crash_work, bts_crash_work_fn);
		if (task_work_add(t, &t->bts_crash_work, TWA_SIGNAL_NO_IPI)) {
			t->bts_crash_next = NULL;	/* past exit_task_work() */
		} else {
			next[i] = NULL;
			/* a thread in user mode takes it at once, a sleeping
			 * one when it wakes (no spurious wake-up)
			 */
			kick_process(t);
		}
		i++;
	}
	return 0;
}

/*
 * Every thread but current gets a ring of `records` (0: none), allocated
 * and charged here first: on any error nothing has changed.
 */
static int bts_crash_set_others(unsigned long records)
{
	struct bts_crash_task **next = NULL;
	unsigned int n = 0, need = READ_ONCE(current->signal->nr_threads) - 1;
	int ret;

	for (;;) {
		if (need > n) {
			struct bts_crash_task **grown;

			grown = krealloc_array(next, need, sizeof(*next),
					       GFP_KERNEL | __GFP_ZERO);
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			next = grown;
			for (; n < need; n++) {
				next[n] = !records ? &bts_crash_off :
					  bts_crash_alloc(bts_crash_perf_rings() ? NULL : current,
							  records);
				if (IS_ERR(next[n])) {
					ret = PTR_ERR(next[n]);
					next[n] = NULL;
					goto out;
				}
			}
		}
		spin_lock_irq(&current->sighand->siglock);
		ret = bts_crash_handover(next, n, &need);
		spin_unlock_irq(&current->sighand->siglock);
		if (ret != -EAGAIN)
			break;
		if (fatal_signal_pending(current)) {	/* threads keep coming */
			ret = -EINTR;
			break;
		}
	}
out:
	while (n)
		bts_crash_put_next(next[--n]);
	kfree(next);
	return ret;
}

/*
 * do_exit(), after the core dump (coredump_task_exit()): the ring and its
 * charge go now, not when the last reference to the task_struct does
 * (procfs, perf and pidfd users can hold that for as long as they like).
 */
void bts_crash_exit(struct task_struct *tsk)
{
	bts_crash_drop_next();	/* tsk is current */
	bts_crash_detach(tsk);
	kfree(tsk->bts_crash_lbr);	/* a dump that did not write it */
	tsk->bts_crash_lbr = NULL;
}

/*
 * The task became non-dumpable: a secure exec (setuid, setgid, file
 * capabilities), an unreadable executable, or a credential change under
 * fs.suid_dumpable != 1.  Whoever enabled the ring could read the branch
 * trail of a program they may not ptrace (and, with the emulation, time
 * every instruction of it): the ring goes.  At exec the system-wide
 * default then applies as to any new program (bts_crash_exec()).
 */
void bts_crash_nondumpable(void)
{
	bts_crash_drop_next();
	bts_crash_detach(current);
}

void bts_crash_exec(struct pt_regs *regs)
{
	unsigned int def = READ_ONCE(bts_crash_task_records);
	int ret;

	ds_lbr_exec();
	if (current->bts_crash && current->bts_crash->perf) {
		/* the old image's branches go with its ring: a new one */
		def = current->bts_crash->records;
		bts_crash_detach(current);
	} else if (current->bts_crash) {
		bts_crash_recharge_mm(current->bts_crash, current->mm);
		ds_task_trace_exec(regs, &current->bts_crash->trace);
		return;
	}
	if (!def || (current->flags & PF_KTHREAD))
		return;
	/* a new ring: zeroed at allocation, armed by ds_task_trace_start() */
	ret = bts_crash_attach(current, def);
	if (ret)
		pr_warn_ratelimited("bts_crash: %s[%d]: not traced: %d\n",
				    current->comm, task_pid_nr(current), ret);
}

void bts_crash_signal(struct pt_regs *regs, bool handler)
{
	if (current->bts_crash)
		ds_task_trace_resume_at(regs, &current->bts_crash->trace, handler);
}

bool bts_crash_owns_tf(struct task_struct *task)
{
	return task->bts_crash && ds_emul_owns_tf(task);
}

/*
 * ENABLE: the new ring is checked, allocated and charged while the old one
 * still records; only then does it replace it.  Any error leaves the
 * caller as it was (replacing needs room for both for that moment).
 */
static int bts_crash_enable(unsigned long records)
{
	struct bts_crash_task *bt;
	int ret = bts_crash_check_size(records);

	if (ret)
		return ret;
	/*
	 * perf takes one intel_bts event per task: the old one goes first
	 * (other threads make theirs when they take the hand-over).
	 */
	if (bts_crash_perf_rings())
		bts_crash_detach(current);
	bt = bts_crash_alloc(current, records);
	if (IS_ERR(bt))
		return PTR_ERR(bt);
	ret = bts_crash_set_others(records);
	if (ret) {
		bts_crash_release(bt);
		return ret;
	}
	bts_crash_detach(current);
	return bts_crash_install(current, bt);
}

static int bts_crash_disable(void)
{
	int ret = bts_crash_set_others(0);

	if (ret)
		return ret;
	bts_crash_detach(current);
	return 0;
}

long bts_crash_prctl(unsigned long op, unsigned long arg)
{
	/* a hand-over from another thread's ENABLE/DISABLE comes first */
	bts_crash_apply_next();
	switch (op) {
	case PR_BTS_CRASH_ENABLE:
		return bts_crash_enable(arg);
	case PR_BTS_CRASH_ENABLE_BYTES:
		return bts_crash_enable(arg / BTS_RECORD_SIZE);
	case PR_BTS_CRASH_DISABLE:
		if (arg)
			return -EINVAL;
		return bts_crash_disable();
	case PR_BTS_CRASH_GET:
		if (arg)
			return -EINVAL;
		return current->bts_crash ? current->bts_crash->records : 0;
	}
	return -EINVAL;
}

/* ---- core dump notes ---------------------------------------------------- */

#define NOTE_NAME_PADDED	12

static bool rec_is_user(const struct bts_record *r)
{
	if ((r->from & BTS_MARKER_TAG_MASK) == BTS_MARKER_TAG)
		return true;
	return r->from < TASK_SIZE_MAX && r->to < TASK_SIZE_MAX;
}

/* Record i (0 = oldest) of the snapshot taken when the dump was sized. */
static const struct bts_record *snap_get(const struct bts_crash_task *bt, u64 i)
{
	const struct ds_ring *ring = &bt->trace.ring;

	i += bt->snap_first;
	return &ring->base[i >= ring->capacity ? i - ring->capacity : i];
}

/*
 * The dumping thread keeps running (and being switched) after its notes
 * were sized, other threads may still be switching out: freeze the ring
 * first, so that the size and what is written agree.
 */
static void snapshot(struct bts_crash_task *bt)
{
	struct ds_ring *ring = &bt->trace.ring;
	u64 i;

	/* the dumping thread's ring is still loaded: its newest records */
	if (bt->perf)
		ds_perf_ring_freeze(bt->event, ring);
	else
		ds_task_trace_sync(&bt->trace);
	WRITE_ONCE(ring->frozen, true);
	smp_mb();	/* a writer that missed the flag is done before we look */
	bt->snap_count = ds_ring_count(ring);
	bt->snap_first = ring->wrapped ? ring->index : 0;
	bt->snap_user = 0;
	bt->snap_truncated = false;
	bt->snap_skip = false;
	for (i = 0; i < bt->snap_count; i++)
		bt->snap_user += rec_is_user(snap_get(bt, i));
}

static size_t note_bytes(u64 records)
{
	return sizeof(struct elf_note) + NOTE_NAME_PADDED +
	       sizeof(struct bts_crash_note_hdr) + records * BTS_RECORD_SIZE;
}

static size_t note_size(const struct bts_crash_task *bt)
{
	return bt->snap_skip ? 0 : note_bytes(bt->snap_user);
}

/*
 * All trace notes of one core together: the ELF writer sizes extra notes
 * as an int, and they come before the memory an RLIMIT_CORE-limited core
 * can hold.  A thousand threads with the largest rings would pass 1 GiB.
 */
#define BTS_CRASH_CORE_NOTES_MAX	SZ_256M

/* Keeps only the newest `keep` user records of the snapshot. */
static void snap_keep_newest(struct bts_crash_task *bt, u64 keep)
{
	u64 start = bt->snap_count, user = 0;

	while (start && user < keep)
		user += rec_is_user(snap_get(bt, --start));
	bt->snap_first = (bt->snap_first + start) % bt->trace.ring.capacity;
	bt->snap_count -= start;
	bt->snap_user = user;
	bt->snap_truncated = true;
}

/* Snapshots bt and fits its note into the budget; returns the new total. */
static size_t plan_note(struct bts_crash_task *bt, size_t used)
{
	size_t left = used < BTS_CRASH_CORE_NOTES_MAX ? BTS_CRASH_CORE_NOTES_MAX - used : 0;

	snapshot(bt);
	if (left < note_bytes(1)) {
		bt->snap_skip = true;
		return used;
	}
	if (note_bytes(bt->snap_user) > left)
		snap_keep_newest(bt, (left - note_bytes(0)) / BTS_RECORD_SIZE);
	return used + note_size(bt);
}

#define for_each_dumped_thread(ct) \
	for (ct = &current->signal->core_state->dumper; ct; ct = ct->next)

/* ---- the LBR source -------------------------------------------------------- */

/*
 * bts_crash.source=lbr: every task's user branches go into its CPU's LBR
 * stack (arch/x86/kernel/ds.c, no memory per task, two MSR reads per
 * context switch).  A thread that dumps core without a ring of its own
 * gets a thread note of its last user branches since its switch-in,
 * snapshot at the fault (bts_crash_user_fault()) or else first thing in
 * do_coredump() (source BTS_SOURCE_LBR, capacity the stack's depth).
 * Only the dumping thread: the other threads' entries went with their
 * last switch-out.
 */
static char bts_crash_source[16] = "auto";
module_param_string(source, bts_crash_source, sizeof(bts_crash_source), 0444);
MODULE_PARM_DESC(source, "lbr: the last user branches of every dumping thread from the LBR stack (Intel's Skylake format, AMD's LbrExtV2); lbr-kernel: each CPU's last kernel branches from it, kept at oops and panic (the per-CPU kernel rings); bts: rings of traced tasks only; auto (default): lbr-kernel where the CPU has that LBR and cpu_records is not given, else bts");

/*
 * -1: ds_kernel_default_records() (lbr-kernel: the LBR's depth; else off).
 * A per-CPU BTS ring (every kernel branch to memory) only when asked.
 */
static int bts_crash_cpu_records = -1;
module_param_named(cpu_records, bts_crash_cpu_records, int, 0444);
MODULE_PARM_DESC(cpu_records, "per-CPU kernel ring size in records (0 = off; default the LBR's depth with source=lbr-kernel or auto on a CPU with that LBR, else off; N with BTS hardware: every kernel branch, a real cost)");

struct bts_crash_lbr {
	unsigned int n;			/* user records in rec[] */
	bool wrapped;
	struct bts_record rec[];
};

static void lbr_snapshot(gfp_t gfp)
{
	unsigned int depth = ds_lbr_capacity(), n, i, user = 0;
	struct bts_crash_lbr *l;

	if (!depth || current->bts_crash || current->bts_crash_lbr)
		return;
	l = kmalloc(struct_size(l, rec, depth), gfp);
	if (!l)
		return;
	n = ds_lbr_read(l->rec, &l->wrapped);
	/* the returns to user mode start in the kernel: never in a user core */
	for (i = 0; i < n; i++)
		if (rec_is_user(&l->rec[i]))
			l->rec[user++] = l->rec[i];
	l->n = user;
	current->bts_crash_lbr = l;
}

/*
 * A user fault or trap about to raise sig (x86 fault.c, traps.c), before
 * its "segfault at" printk, which may let another task run on this CPU:
 * when the signal will dump core, the stack is read now.  Programs that
 * handle the signal (a JIT's null checks) pay nothing.
 */
void bts_crash_user_fault(int sig)
{
	if (ds_lbr_capacity() && sig_kernel_coredump(sig) && unhandled_signal(current, sig))
		lbr_snapshot(GFP_NOWAIT | __GFP_NOWARN);
}

/* do_coredump(): abort() and other signals sent, not raised by a fault. */
void bts_crash_coredump_start(void)
{
	lbr_snapshot(GFP_KERNEL);
}

static size_t lbr_note_size(struct task_struct *t)
{
	return t == current && t->bts_crash_lbr ? note_bytes(t->bts_crash_lbr->n) : 0;
}

/*
 * A thread note's ELF note header, owner name and trace header (its
 * nr_records records follow): the part both thread notes share.
 */
static int emit_thread_note_head(struct coredump_params *cprm,
				 const struct bts_crash_note_hdr *h)
{
	char name[NOTE_NAME_PADDED] = BTS_CRASH_NOTE_NAME;
	struct elf_note en = {
		.n_namesz = BTS_CRASH_NOTE_NAMESZ,
		.n_descsz = sizeof(*h) + h->nr_records * BTS_RECORD_SIZE,
		.n_type = NT_BTSCRASH_THREAD,
	};

	if (!dump_emit(cprm, &en, sizeof(en)) || !dump_emit(cprm, name, sizeof(name)) ||
	    !dump_emit(cprm, h, sizeof(*h)))
		return -EIO;
	return 0;
}

static int write_lbr_note(struct coredump_params *cprm)
{
	struct bts_crash_lbr *l = current->bts_crash_lbr;
	struct bts_crash_note_hdr h = {
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = sizeof(h), .record_size = BTS_RECORD_SIZE,
		.flags = BTS_NOTE_F_USER_ONLY | (l->wrapped ? BTS_NOTE_F_WRAPPED : 0),
		.id = task_pid_vnr(current), .capacity = ds_lbr_capacity(),
		.nr_records = l->n, .nr_gaps = ds_count_gaps(l->rec, l->n),
		.source = BTS_SOURCE_LBR,
	};

	if (emit_thread_note_head(cprm, &h) ||
	    !dump_emit(cprm, l->rec, l->n * sizeof(l->rec[0])))
		return -EIO;
	return 0;
}

/*
 * Before the per-CPU rings are sized: lbr-kernel sizes them.  auto (the
 * default) is lbr-kernel unless cpu_records asks for a ring of its own
 * (BTS or the emulation's); a CPU without that LBR then has no kernel tail.
 * In a kdump capture kernel auto records nothing: its one job is to save
 * the dump, whose rings were frozen and noted before it booted.
 */
static int __init bts_crash_lbr_init(void)
{
	bool kernel = !strcmp(bts_crash_source, "lbr-kernel");

	if (!strcmp(bts_crash_source, "auto")) {
		if (is_kdump_kernel())
			return 0;
		kernel = bts_crash_cpu_records < 0;
	}
	if (!kernel && strcmp(bts_crash_source, "lbr"))
		return 0;
	if (ds_lbr_start(kernel))
		return -EOPNOTSUPP;
	if (!kernel)	/* the TOS noted at each switch-in */
		static_branch_enable(&bts_crash_switch_key);
	return 0;
}

int bts_crash_core_notes_size(void)
{
	struct core_thread *ct;
	size_t sz = 0;

	BUILD_BUG_ON(BTS_CRASH_CORE_NOTES_MAX > INT_MAX);
	for_each_dumped_thread(ct)
		if (ct->task->bts_crash)
			sz = plan_note(ct->task->bts_crash, sz);
		else
			sz += lbr_note_size(ct->task);	/* at most 1 KiB */
	return sz;
}

static int write_note(struct coredump_params *cprm, struct task_struct *t)
{
	const struct bts_crash_task *bt = t->bts_crash;
	const struct ds_ring *ring = &bt->trace.ring;
	u64 i, n = 0;
	struct bts_crash_note_hdr h = {
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = sizeof(h), .record_size = BTS_RECORD_SIZE,
		.flags = BTS_NOTE_F_USER_ONLY |
			 (ring->wrapped ? BTS_NOTE_F_WRAPPED : 0) |
			 (bt->snap_truncated ? BTS_NOTE_F_TRUNCATED : 0),
		.id = task_pid_vnr(t), .capacity = ring->capacity,
		.nr_records = bt->snap_user, .nr_gaps = ring->gaps,
		.source = bt->desc.source,
	};
	/* stands in for a record a racing writer replaced: "lost here" */
	const struct bts_record filler = { .from = BTS_MARKER(BTS_MARK_GAP, BTS_GAP_UNKNOWN) };

	if (bt->desc.flags & BTS_RING_F_LOST_EXACT) {
		h.flags |= BTS_NOTE_F_LOST_EXACT;
		h.lost = ring->written - ds_ring_count(ring);
	}
	if (emit_thread_note_head(cprm, &h))
		return -EIO;
	/* Runs of user records contiguous in memory go out in one write. */
	for (i = 0; i < bt->snap_count && n < bt->snap_user; ) {
		const struct bts_record *r = snap_get(bt, i);
		u64 run = 0;

		while (i + run < bt->snap_count && n + run < bt->snap_user &&
		       snap_get(bt, i + run) == r + run && rec_is_user(r + run))
			run++;
		if (run && !dump_emit(cprm, r, run * sizeof(*r)))
			return -EIO;
		n += run;
		i += run ? run : 1;
	}
	for (; n < bt->snap_user; n++)
		if (!dump_emit(cprm, &filler, sizeof(filler)))
			return -EIO;
	return 0;
}

int bts_crash_core_notes_write(struct coredump_params *cprm)
{
	struct core_thread *ct;
	int ret;

	for_each_dumped_thread(ct) {
		if (!ct->task->bts_crash && lbr_note_size(ct->task)) {
			ret = write_lbr_note(cprm);
			if (ret)
				return ret;
		}
		if (!ct->task->bts_crash || ct->task->bts_crash->snap_skip)
			continue;
		ret = write_note(cprm, ct->task);
		if (ret)
			return ret;
	}
	return 0;
}

static const unsigned int bts_crash_max_task_records = BTS_CRASH_MAX_TASK_RECORDS;

static struct ctl_table bts_crash_sysctls[] = {
	{
		.procname = "bts_crash_task_records",
		.data = &bts_crash_task_records,
		.maxlen = sizeof(unsigned int),
		.mode = 0644,
		/* 0 (off) up to the largest ring ENABLE accepts */
		.proc_handler = proc_douintvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = (void *)&bts_crash_max_task_records,
	},
	/*
	 * 6.6+ register_sysctl() is a macro that passes ARRAY_SIZE(): a { }
	 * sentinel there fails registration ("procname is null"); 6.1's
	 * function needs one.
	 */
#ifndef register_sysctl
	{ }
#endif
};

static struct ctl_table_header *bts_crash_sysctl_hdr;

/* ---- per-CPU kernel rings, frozen at a crash -------------------------- */

struct bts_crash_cpu {
	struct bts_crash_ring desc;	/* first: the table points at it */
	struct ds_trace trace;		/* its ring: what ds.c records into */
};

static unsigned int bts_crash_print_records = 16;
module_param_named(print_records, bts_crash_print_records, uint, 0644);
MODULE_PARM_DESC(print_records, "kernel branches printed in oops and panic reports");

static const char *const kernel_ring_what[] = {
	[BTS_SOURCE_HW] = "BTS: kernel branches",
	[BTS_SOURCE_EMUL] = "emulation: kernel function entries",
	[BTS_SOURCE_LBR] = "LBR: the last kernel branches, kept at oops and panic",
};

static struct bts_crash_cpu **bts_cpu;		/* [nr_cpu_ids] */
static struct bts_crash_table *bts_crash_table;
static atomic_t bts_crash_frozen = ATOMIC_INIT(0);

static notrace struct ds_trace *bts_cpu_trace(unsigned int cpu)
{
	return bts_cpu && bts_cpu[cpu] ? &bts_cpu[cpu]->trace : NULL;
}

static notrace struct ds_ring *bts_cpu_ring(unsigned int cpu)
{
	struct ds_trace *t = bts_cpu_trace(cpu);

	return t ? &t->ring : NULL;
}

/*
 * The crash path's clock: local_clock() itself, out of line and traced on
 * 6.12 (an inline of this on 6.1), would be the emulation's last entry in
 * the ring being frozen.
 */
static notrace u64 bts_crash_now(void)
{
	return sched_clock_cpu(raw_smp_processor_id());
}

/*
 * The crash path on this CPU (kdump NMI, or the panicking CPU): BTS stops
 * writing, and the ring of the task it was recording gets the index the
 * CPU left, in its descriptor too, where a vmcore reader finds it.  A
 * record this CPU was writing when the NMI came becomes a GAP marker.
 */
static void notrace bts_crash_stop_this_cpu(void)
{
	struct bts_crash_task *bt;
	unsigned int cpu;
	u64 now;

	ds_hw_stop_cpu();	/* first: what follows would be recorded */
	bt = READ_ONCE(current->bts_crash);
	cpu = raw_smp_processor_id();
	now = bts_crash_now();
	if (bt) {
		WRITE_ONCE(bt->trace.ring.frozen, true);
		ds_ring_repair(&bt->trace.ring, now);
		desc_sync(&bt->desc, &bt->trace.ring);
	}
	if (bts_cpu && bts_cpu[cpu]) {
		WRITE_ONCE(bts_cpu[cpu]->trace.ring.frozen, true);
		ds_ring_repair(&bts_cpu[cpu]->trace.ring, now);
		desc_sync(&bts_cpu[cpu]->desc, &bts_cpu[cpu]->trace.ring);
	}
}

/* Stops every CPU's recording for good: the crash path is about to run. */
void notrace bts_crash_freeze(void)
{
	unsigned int cpu;
	u64 now;

	bts_crash_stop_this_cpu();	/* first; the others: in their crash NMI */
	now = bts_crash_now();
	if (!bts_cpu || !bts_crash_table || atomic_xchg(&bts_crash_frozen, 1))
		return;
	for_each_possible_cpu(cpu)
		if (bts_cpu[cpu])
			WRITE_ONCE(bts_cpu[cpu]->trace.ring.frozen, true);
	smp_mb();	/* writers that missed the flag are done (IRQs off, one record) */
	for_each_possible_cpu(cpu) {
		struct bts_crash_cpu *c = bts_cpu[cpu];

		if (!c)
			continue;
		desc_sync(&c->desc, &c->trace.ring);
		c->desc.flags |= BTS_RING_F_FROZEN;
		c->desc.freeze_ts = now;
	}
	bts_crash_table->panic_cpu = raw_smp_processor_id();
}

/*
 * A ring that ends in a SUSPEND marker was not recording when the oops or
 * panic came (a traced task's ring held BTS, or perf did): its branches
 * are older than the crash and are not printed as its last ones.
 */
static bool print_suspended(const struct bts_record *rec, unsigned int cpu)
{
	u64 us = rec->to / NSEC_PER_USEC;

	if (rec->from == BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_TASK))
		pr_emerg("bts_crash: CPU %u not recording kernel branches since %llu.%06llu (task %llu's ring holds BTS)\n",
			 cpu, us / USEC_PER_SEC, us % USEC_PER_SEC, rec->flags);
	else if (rec->from == BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_PERF))
		pr_emerg("bts_crash: CPU %u not recording kernel branches since %llu.%06llu (perf holds BTS)\n",
			 cpu, us / USEC_PER_SEC, us % USEC_PER_SEC);
	else
		return false;
	return true;
}

static const char *const bts_gap_reason_names[] = {
	[BTS_GAP_UNKNOWN] = "unknown", [BTS_GAP_PERF] = "perf",
	[BTS_GAP_DISABLED] = "disabled", [BTS_GAP_OVERFLOW] = "overflow",
	[BTS_GAP_TASK] = "task",
};

/*
 * One record of an oops or panic report, age = its place from the newest
 * (1): a branch, or a marker (a kernel ring's SUSPEND and GAP around a
 * traced task's or perf's hold) said in the words the readers use for it
 * (docs/format.md, lib/format.c btsdec_marker_describe()), never printed
 * as a branch from its tag.
 */
static void print_record(const struct bts_record *rec, u64 age)
{
	unsigned int kind = BTS_MARKER_KIND(rec->from), sub = BTS_MARKER_SUB(rec->from);
	const char *why = sub <= BTS_GAP_MAX ? bts_gap_reason_names[sub] : "invalid";
	u64 us = rec->to / NSEC_PER_USEC, s = us / USEC_PER_SEC;

	if ((rec->from & BTS_MARKER_TAG_MASK) != BTS_MARKER_TAG)
		pr_emerg(" [%3llu] %pS -> %pS\n", age, (void *)rec->from, (void *)rec->to);
	else if (kind == BTS_MARK_GAP)
		pr_emerg(" [%3llu] gap (%s), resumed at %llu.%06llus after %llu ns\n",
			 age, why, s, us % USEC_PER_SEC, rec->flags);
	else if (kind == BTS_MARK_SUSPEND && sub == BTS_GAP_TASK)
		pr_emerg(" [%3llu] suspended at %llu.%06llus: task %llu's ring took BTS\n",
			 age, s, us % USEC_PER_SEC, rec->flags);
	else if (kind == BTS_MARK_SUSPEND)
		pr_emerg(" [%3llu] suspended (%s) at %llu.%06llus\n", age, why, s,
			 us % USEC_PER_SEC);
	else
		pr_emerg(" [%3llu] marker 0x%016llx\n", age, rec->from);
}

/* The last n records of ring, oldest first, as an oops report prints them. */
static void print_ring(const struct ds_ring *r, unsigned int cpu, unsigned int n)
{
	u64 nr = ds_ring_count(r), i;

	if (!n || !nr || print_suspended(ds_ring_get(r, nr - 1), cpu))
		return;
	i = nr > n ? nr - n : 0;
	if (ds_kernel_source() != BTS_SOURCE_EMUL)
		pr_emerg("bts_crash: last %llu kernel branches on CPU %u (%s), oldest first:\n",
			 nr - i, cpu, ds_kernel_source() == BTS_SOURCE_LBR ? "LBR" : "BTS");
	else	/* ds.c's ftrace callback: entry <- reconstructed call site */
		pr_emerg("bts_crash: last %llu kernel function entries on CPU %u (emulation: ftrace, call sites reconstructed), oldest first:\n",
			 nr - i, cpu);
	for (; i < nr; i++)
		print_record(ds_ring_get(r, i), nr - i);
}

/* panic(): after the "Kernel panic" line, this CPU's last branches. */
void bts_crash_report(void)
{
	unsigned int cpu = raw_smp_processor_id();
	struct ds_ring *r = bts_cpu_ring(cpu);

	if (r && atomic_read(&bts_crash_frozen))
		print_ring(r, cpu, READ_ONCE(bts_crash_print_records));
}

/*
 * An oops: oops_begin() freezes this CPU's ring (nesting counted), the
 * DIE_OOPS notifier prints it, oops_end() lets it record again unless the
 * oops is fatal (panic_on_oops, or in interrupt) or the crash path has
 * frozen everything meanwhile.  Both run with IRQs off (patch 0010): on a
 * preemptible kernel the count, the hold and its end must stay on one CPU,
 * or a CPU's ring stays held for good.
 */
static DEFINE_PER_CPU(unsigned int, bts_oops_depth);

/*
 * The hooks' rule, said in the log when broken: a line, not WARN_ON_ONCE(),
 * which prints nothing on a kernel without CONFIG_BUG (tinyconfig's) and
 * is a ud2 trap of its own, report_bug() and a second report, inside the
 * oops's.  The VM test kernels have CONFIG_BUG; the oops-hole tests check
 * for this line and for any WARNING (tests/vm/kwarn.py).
 */
static void notrace bts_oops_irqs_off(const char *hook)
{
	if (!irqs_disabled())
		pr_warn_once("bts_crash: %s() called with IRQs on\n", hook);
}

void notrace bts_crash_oops_begin(void)
{
	struct ds_ring *r;

	if (this_cpu_inc_return(bts_oops_depth) != 1)
		return;
	ds_kernel_trace_hold(true);	/* hardware: stopped first, saved */
	bts_oops_irqs_off(__func__);	/* after the hold: no branch of its own before */
	r = bts_cpu_ring(raw_smp_processor_id());
	if (r)
		WRITE_ONCE(r->frozen, true);
}

/* fatal: oops_end() is about to panic; the ring stays held for its report */
void bts_crash_oops_end(bool fatal)
{
	struct ds_ring *r;

	bts_oops_irqs_off(__func__);
	if (this_cpu_dec_return(bts_oops_depth) != 0 || fatal ||
	    atomic_read(&bts_crash_frozen))
		return;
	r = bts_cpu_ring(raw_smp_processor_id());
	if (r)
		WRITE_ONCE(r->frozen, false);
	ds_kernel_trace_hold(false);
}

static int bts_crash_oops(struct notifier_block *nb, unsigned long val, void *data)
{
	unsigned int cpu = raw_smp_processor_id();
	struct ds_ring *r = bts_cpu_ring(cpu);

	if (val == DIE_OOPS && r)
		print_ring(r, cpu, READ_ONCE(bts_crash_print_records));
	return NOTIFY_DONE;
}

static struct notifier_block bts_crash_oops_nb = {
	.notifier_call = bts_crash_oops,
};

/*
 * crash_save_cpu() (kexec_core.c), after NT_PRSTATUS, for every CPU in the
 * crash path: this CPU's newest records as an NT_BTSCRASH_CPU note, so they
 * reach /proc/vmcore and makedumpfile's output even if the ring's pages are
 * filtered (format.md §3).  Returns where the next note goes.
 */
static u32 *write_cpu_note(u32 *buf, const struct bts_crash_cpu *c, int cpu)
{
	const struct ds_ring *r = &c->trace.ring;
	struct bts_crash_note_hdr h = {
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = sizeof(h), .record_size = BTS_RECORD_SIZE, .id = cpu,
		.nr_gaps = c->trace.ring.gaps, .source = c->desc.source,
	};
	struct elf_note *en = (struct elf_note *)buf;
	u8 *p = (u8 *)(en + 1);
	u64 nr = ds_ring_count(r), first, i;

	first = nr > BTS_CRASH_CPU_NOTE_RECORDS ? nr - BTS_CRASH_CPU_NOTE_RECORDS : 0;
	h.capacity = r->capacity;
	h.nr_records = nr - first;
	h.flags = (r->wrapped ? BTS_NOTE_F_WRAPPED : 0) |
		  (first ? BTS_NOTE_F_TRUNCATED : 0);
	if (c->desc.flags & BTS_RING_F_LOST_EXACT) {	/* emulation counts */
		h.flags |= BTS_NOTE_F_LOST_EXACT;
		h.lost = r->written - nr;
	}
	en->n_namesz = BTS_CRASH_NOTE_NAMESZ;
	en->n_descsz = sizeof(h) + h.nr_records * BTS_RECORD_SIZE;
	en->n_type = NT_BTSCRASH_CPU;
	memset(p, 0, NOTE_NAME_PADDED);
	memcpy(p, BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ);
	p += NOTE_NAME_PADDED;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (i = first; i < nr; i++, p += BTS_RECORD_SIZE)
		memcpy(p, ds_ring_get(r, i), BTS_RECORD_SIZE);
	return (u32 *)p;
}

u32 *bts_crash_cpu_note(u32 *buf, int cpu)
{
	BUILD_BUG_ON(sizeof(struct elf_note) + NOTE_NAME_PADDED +
		     sizeof(struct bts_crash_note_hdr) +
		     BTS_CRASH_CPU_NOTE_RECORDS * BTS_RECORD_SIZE != BTS_CRASH_CPU_NOTE_BYTES);
	/*
	 * This CPU stops first (with or without rings: the capture kernel
	 * must not inherit a recording CPU); the rings were frozen by the
	 * crash path already, which makes the rest cheap.
	 */
	bts_crash_freeze();
	if (!bts_cpu_ring(cpu))
		return buf;
	return write_cpu_note(buf, bts_cpu[cpu], cpu);
}

/*
 * Whenever the recorder is built in, per-CPU rings or not: per-task rings
 * are found through task_struct.bts_crash alone.  The table's keys only
 * when there is a table.
 */
static void __init bts_crash_vmcoreinfo(void)
{
	/* A kexec kernel always has VMCOREINFO: if not, the guard above is
	 * wrong for this kernel version, and kdump would lose the rings.
	 */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_KEXEC_CORE) && IS_ENABLED(CONFIG_CRASH_DUMP) &&
		     !BTS_CRASH_VMCOREINFO);
	if (!BTS_CRASH_VMCOREINFO)
		return;
	vmcoreinfo_append_str("BTS_CRASH=1\n");
	if (bts_crash_table && bts_crash_table->magic == BTS_CRASH_TABLE_MAGIC) {
		vmcoreinfo_append_str("BTS_CRASH_TABLE_PA=%llx\n",
				      (u64)__pa(bts_crash_table));
		vmcoreinfo_append_str("SYMBOL(bts_crash_table)=%lx\n",
				      (unsigned long)bts_crash_table);
	}
	VMCOREINFO_STRUCT_SIZE(bts_crash_ring);
	VMCOREINFO_OFFSET(bts_crash_ring, flags);
	VMCOREINFO_OFFSET(bts_crash_ring, id);
	VMCOREINFO_OFFSET(bts_crash_ring, capacity);
	VMCOREINFO_OFFSET(bts_crash_ring, index);
	VMCOREINFO_OFFSET(bts_crash_ring, records_pa);
	VMCOREINFO_OFFSET(bts_crash_ring, lost);
	VMCOREINFO_OFFSET(bts_crash_ring, nr_gaps);
	VMCOREINFO_OFFSET(bts_crash_ring, source);
	VMCOREINFO_OFFSET(bts_crash_ring, freeze_ts);
	VMCOREINFO_STRUCT_SIZE(bts_record);
	VMCOREINFO_OFFSET(task_struct, bts_crash);
}

/* One CPU's ring of records, zeroed (ds_hw_save()'s wrap test needs it). */
static struct bts_crash_cpu * __init bts_crash_cpu_alloc(unsigned int cpu,
							 unsigned int records)
{
	unsigned int order = get_order((size_t)records * BTS_RECORD_SIZE);
	struct bts_crash_cpu *c = kzalloc_node(sizeof(*c), GFP_KERNEL, cpu_to_node(cpu));
	struct page *pg = alloc_pages_node(cpu_to_node(cpu), GFP_KERNEL | __GFP_ZERO,
					   order);
	unsigned int source = ds_kernel_source();

	if (!c || !pg) {
		kfree(c);
		if (pg)
			__free_pages(pg, order);
		return NULL;
	}
	ds_ring_init(&c->trace.ring, page_address(pg), records);
	c->desc = (struct bts_crash_ring){
		.magic = BTS_CRASH_RING_MAGIC, .version = BTS_CRASH_RING_VERSION,
		.hdr_size = sizeof(c->desc), .record_size = BTS_RECORD_SIZE,
		/* only the emulation sees every record go in */
		.flags = source == BTS_SOURCE_EMUL ? BTS_RING_F_LOST_EXACT : 0,
		.id = cpu, .capacity = records, .records_pa = page_to_phys(pg),
		.source = source,
	};
	return c;
}

/*
 * Boot-time rings for every possible CPU; the admin's memory, not a
 * user's.  Clamped before anything is sized: the largest allocation
 * (MAX_PAGE_ORDER) and the LBR's depth (lbr-kernel).
 */
static unsigned int __init bts_crash_cpu_records_wanted(void)
{
	u64 records = bts_crash_cpu_records;

	if (bts_crash_cpu_records < 0)
		records = ds_kernel_default_records();
	records = min3(records, (u64)(PAGE_SIZE << MAX_PAGE_ORDER) / BTS_RECORD_SIZE,
		       ds_kernel_max_records());
	return records;
}

static int __init bts_crash_cpu_init(void)
{
	unsigned int records = bts_crash_cpu_records_wanted(), cpu;
	int ret;

	if (!records)
		return 0;
	bts_crash_table = kzalloc(struct_size(bts_crash_table, entries, nr_cpu_ids),
				  GFP_KERNEL);
	bts_cpu = kcalloc(nr_cpu_ids, sizeof(*bts_cpu), GFP_KERNEL);
	if (!bts_crash_table || !bts_cpu)
		goto nomem;
	for_each_possible_cpu(cpu) {
		bts_cpu[cpu] = bts_crash_cpu_alloc(cpu, records);
		if (!bts_cpu[cpu])
			goto nomem;
		bts_crash_table->entries[cpu] = __pa(bts_cpu[cpu]);
	}
	bts_crash_table->magic = BTS_CRASH_TABLE_MAGIC;
	bts_crash_table->version = BTS_CRASH_RING_VERSION;
	bts_crash_table->hdr_size = sizeof(*bts_crash_table);
	bts_crash_table->nr_entries = nr_cpu_ids;
	bts_crash_table->entry_size = sizeof(u64);
	bts_crash_table->panic_cpu = ~0ULL;
	ret = ds_kernel_trace_start(bts_cpu_trace);
	if (ret) {
		pr_warn("bts_crash: per-CPU kernel rings not recording: %d (needs BTS, or ds.emulate=1 and FUNCTION_TRACER)\n",
			ret);
		return 0;	/* the table stays: readers see empty rings */
	}
	register_die_notifier(&bts_crash_oops_nb);
	pr_info("bts_crash: per-CPU kernel rings of %u records on %u CPUs (%s)\n",
		records, num_possible_cpus(), kernel_ring_what[ds_kernel_source()]);
	return 0;
nomem:
	pr_warn("bts_crash: no memory for per-CPU rings of %u records\n", records);
	return -ENOMEM;	/* what was allocated stays for readers of a dump */
}

static int __init bts_crash_init(void)
{
	int ret;

	ds_emul_set_lookup(bts_crash_lookup);
	bts_crash_sysctl_hdr = register_sysctl("kernel", bts_crash_sysctls);
	if (!bts_crash_sysctl_hdr && IS_ENABLED(CONFIG_SYSCTL))
		pr_err("bts_crash: kernel.bts_crash_task_records not registered: no system-wide default\n");
	bts_crash_lbr_init();
	ret = bts_crash_cpu_init();
	bts_crash_vmcoreinfo();
	return ret;
}
late_initcall(bts_crash_init);

#ifdef CONFIG_BTS_CRASH_KUNIT_TEST
#include "bts_crash_test.c"
#endif
