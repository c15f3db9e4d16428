// SPDX-License-Identifier: GPL-2.0
/*
 * btscrash policy: who is traced, who pays, what lands in core dumps.
 * Per-task rings (prctl, inherited by threads and children and across exec,
 * or a system-wide default) charged to the user's locked_vm against
 * RLIMIT_MEMLOCK like perf's mlock accounting; one NT_BTSCRASH_THREAD note
 * per traced thread in ELF cores (docs/format.md).  Knows no MSR: the
 * recording is arch/x86/kernel/ds.c's.  Process context throughout.
 */
#include <linux/bts_crash.h>
#include <linux/capability.h>
#include <linux/coredump.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <asm/ds.h>
#include <asm/io.h>

#define BTS_CRASH_MAX_TASK_RECORDS	(1U << 16)	/* 1.5 MiB per thread */

struct bts_crash_task {
	struct ds_trace trace;
	struct bts_crash_ring desc;	/* for dump readers (format.md §4.3) */
	struct page *pages;
	unsigned int order;
	unsigned long charged;		/* pages charged to user->locked_vm */
	struct user_struct *user;
	/* What a core dump writes, fixed when it sized its notes. */
	u64 snap_first, snap_count, snap_user;
};

DEFINE_STATIC_KEY_FALSE(bts_crash_switch_key);

/* System-wide default ring size for new programs (0 = off). */
static unsigned int bts_crash_task_records;
module_param_named(task_records, bts_crash_task_records, uint, 0644);

static struct ds_trace *bts_crash_lookup(struct task_struct *t)
{
	return t->bts_crash ? &t->bts_crash->trace : NULL;
}

static int bts_crash_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long locked = atomic_long_add_return(pages, &user->locked_vm);

	if (locked > limit && !capable(CAP_IPC_LOCK)) {
		atomic_long_sub(pages, &user->locked_vm);
		return -ENOMEM;
	}
	return 0;
}

static struct bts_crash_task *bts_crash_alloc(unsigned int records)
{
	size_t bytes = (size_t)records * BTS_RECORD_SIZE;
	struct bts_crash_task *bt;
	int ret;

	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt)
		return ERR_PTR(-ENOMEM);
	bt->order = get_order(bytes);
	bt->user = get_current_user();
	bt->charged = 1UL << bt->order;
	ret = bts_crash_charge(bt->user, bt->charged);
	if (ret)
		goto err_user;
	bt->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, bt->order);
	if (!bt->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ds_ring_init(&bt->trace.ring, page_address(bt->pages), records);
	bt->desc = (struct bts_crash_ring){
		.magic = BTS_CRASH_RING_MAGIC, .version = BTS_CRASH_RING_VERSION,
		.hdr_size = sizeof(bt->desc), .record_size = BTS_RECORD_SIZE,
		.capacity = records, .records_pa = page_to_phys(bt->pages),
	};
	/* Only the emulation sees every record go in; BTS hardware does not
	 * say how often it wrapped. */
	if (ds_backend() == DS_BACKEND_HW) {
		bt->desc.source = BTS_SOURCE_HW;
	} else {
		bt->desc.source = BTS_SOURCE_EMUL;
		bt->desc.flags = BTS_RING_F_LOST_EXACT;
	}
	return bt;
err_uncharge:
	atomic_long_sub(bt->charged, &bt->user->locked_vm);
err_user:
	free_uid(bt->user);
	kfree(bt);
	return ERR_PTR(ret);
}

static void bts_crash_release(struct bts_crash_task *bt)
{
	__free_pages(bt->pages, bt->order);
	atomic_long_sub(bt->charged, &bt->user->locked_vm);
	free_uid(bt->user);
	kfree(bt);
}

/* Starts tracing task (current, or a child not yet running). */
static int bts_crash_attach(struct task_struct *task, unsigned int records)
{
	struct bts_crash_task *bt;
	int ret;

	if (!records || records > BTS_CRASH_MAX_TASK_RECORDS ||
	    records > ds_task_max_records())
		return -EINVAL;
	bt = bts_crash_alloc(records);
	if (IS_ERR(bt))
		return PTR_ERR(bt);
	bt->desc.id = task_pid_nr(task);
	ret = ds_task_trace_start(task, &bt->trace);
	if (ret) {
		bts_crash_release(bt);
		return ret;
	}
	/* Sleeps (text patching): process context here, never in free_task. */
	if (!static_key_enabled(&bts_crash_switch_key))
		static_branch_enable(&bts_crash_switch_key);
	WRITE_ONCE(task->bts_crash, bt);
	return 0;
}

static void bts_crash_detach(struct task_struct *task)
{
	struct bts_crash_task *bt = task->bts_crash;

	if (!bt)
		return;
	ds_task_trace_stop(task, &bt->trace);
	/* task is current: a switch away from it runs on this CPU, in order */
	WRITE_ONCE(task->bts_crash, NULL);
	barrier();
	bts_crash_release(bt);
}

void notrace __bts_crash_switch(struct task_struct *prev, struct task_struct *next)
{
	struct bts_crash_task *p = READ_ONCE(prev->bts_crash);
	struct bts_crash_task *n = READ_ONCE(next->bts_crash);

	if (p || n)
		ds_task_switch(p ? &p->trace : NULL, n ? &n->trace : NULL,
			       local_clock(), smp_processor_id());
}

int bts_crash_fork(struct task_struct *child, unsigned long clone_flags)
{
	struct bts_crash_task *parent = current->bts_crash;
	int ret;

	child->bts_crash = NULL;
	if (!parent || (child->flags & PF_KTHREAD))
		return 0;
	ret = bts_crash_attach(child, parent->trace.ring.capacity);
	if (ret) {
		/* the child runs untraced; it is never harmed */
		ds_task_trace_drop(child);
		pr_warn_ratelimited("bts_crash: %s[%d]: child not traced: %d (RLIMIT_MEMLOCK?)\n",
				    current->comm, task_pid_nr(current), ret);
	}
	return 0;
}

void bts_crash_free(struct task_struct *tsk)
{
	if (tsk->bts_crash) {
		bts_crash_release(tsk->bts_crash);
		tsk->bts_crash = NULL;
	}
}

void bts_crash_exec(struct pt_regs *regs)
{
	unsigned int def = READ_ONCE(bts_crash_task_records);
	int ret;

	if (current->bts_crash) {
		ds_task_trace_exec(regs, &current->bts_crash->trace);
		return;
	}
	if (!def || (current->flags & PF_KTHREAD))
		return;
	ret = bts_crash_attach(current, def);
	if (ret)
		pr_warn_ratelimited("bts_crash: %s[%d]: not traced: %d\n",
				    current->comm, task_pid_nr(current), ret);
	else
		ds_task_trace_exec(regs, &current->bts_crash->trace);
}

long bts_crash_prctl(unsigned long op, unsigned long arg)
{
	switch (op) {
	case PR_BTS_CRASH_ENABLE:
		if (arg > UINT_MAX)
			return -EINVAL;
		bts_crash_detach(current);
		return bts_crash_attach(current, arg);
	case PR_BTS_CRASH_DISABLE:
		bts_crash_detach(current);
		return 0;
	case PR_BTS_CRASH_GET:
		return current->bts_crash ? current->bts_crash->trace.ring.capacity : 0;
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

	WRITE_ONCE(ring->frozen, true);
	smp_mb();	/* a writer that missed the flag is done before we look */
	bt->snap_count = ds_ring_count(ring);
	bt->snap_first = ring->wrapped ? ring->index : 0;
	bt->snap_user = 0;
	for (i = 0; i < bt->snap_count; i++)
		bt->snap_user += rec_is_user(snap_get(bt, i));
}

static size_t note_size(const struct bts_crash_task *bt)
{
	return sizeof(struct elf_note) + NOTE_NAME_PADDED +
	       sizeof(struct bts_crash_note_hdr) + bt->snap_user * BTS_RECORD_SIZE;
}

#define for_each_dumped_thread(ct) \
	for (ct = &current->signal->core_state->dumper; ct; ct = ct->next)

int bts_crash_core_notes_size(void)
{
	struct core_thread *ct;
	size_t sz = 0;

	for_each_dumped_thread(ct) {
		if (!ct->task->bts_crash)
			continue;
		snapshot(ct->task->bts_crash);
		sz += note_size(ct->task->bts_crash);
	}
	return sz;
}

static int write_note(struct coredump_params *cprm, struct task_struct *t)
{
	const struct bts_crash_task *bt = t->bts_crash;
	const struct ds_ring *ring = &bt->trace.ring;
	char name[NOTE_NAME_PADDED] = BTS_CRASH_NOTE_NAME;
	u64 i, n = 0;
	struct bts_crash_note_hdr h = {
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = sizeof(h), .record_size = BTS_RECORD_SIZE,
		.flags = BTS_NOTE_F_USER_ONLY |
			 (ring->wrapped ? BTS_NOTE_F_WRAPPED : 0),
		.id = task_pid_vnr(t), .capacity = ring->capacity,
		.nr_records = bt->snap_user, .source = bt->desc.source,
	};
	struct elf_note en = {
		.n_namesz = BTS_CRASH_NOTE_NAMESZ,
		.n_descsz = sizeof(h) + bt->snap_user * BTS_RECORD_SIZE,
		.n_type = NT_BTSCRASH_THREAD,
	};
	/* stands in for a record a racing writer replaced: "lost here" */
	const struct bts_record filler = { .from = BTS_MARKER(BTS_MARK_GAP, BTS_GAP_UNKNOWN) };

	if (bt->desc.flags & BTS_RING_F_LOST_EXACT) {
		h.flags |= BTS_NOTE_F_LOST_EXACT;
		h.lost = ring->written - bt->snap_count;
	}
	if (!dump_emit(cprm, &en, sizeof(en)) || !dump_emit(cprm, name, sizeof(name)) ||
	    !dump_emit(cprm, &h, sizeof(h)))
		return -EIO;
	for (i = 0; i < bt->snap_count && n < bt->snap_user; i++) {
		const struct bts_record *r = snap_get(bt, i);

		if (!rec_is_user(r))
			continue;
		if (!dump_emit(cprm, r, sizeof(*r)))
			return -EIO;
		n++;
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
		if (!ct->task->bts_crash)
			continue;
		ret = write_note(cprm, ct->task);
		if (ret)
			return ret;
	}
	return 0;
}

static struct ctl_table bts_crash_sysctls[] = {
	{
		.procname = "bts_crash_task_records",
		.data = &bts_crash_task_records,
		.maxlen = sizeof(unsigned int),
		.mode = 0644,
		.proc_handler = proc_douintvec,
	},
	{ }
};

static int __init bts_crash_init(void)
{
	ds_emul_set_lookup(bts_crash_lookup);
	register_sysctl("kernel", bts_crash_sysctls);
	return 0;
}
late_initcall(bts_crash_init);

#ifdef CONFIG_BTS_CRASH_KUNIT_TEST
#include "bts_crash_test.c"
#endif
