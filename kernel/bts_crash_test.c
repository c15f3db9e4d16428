// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of btscrash: ring index and wrap math (ds.c), kernel-address
 * filtering, note sizing and the notes' budget (bts_crash.c), argument
 * limits, what a ring is charged to.  Included at
 * the end of kernel/bts_crash.c to reach its static helpers; runs at boot.
 */
#include <kunit/test.h>
#include <linux/kthread.h>

static struct bts_record test_slots[4];

static void fill_ring(struct ds_ring *r, unsigned int n)
{
	memset(test_slots, 0, sizeof(test_slots));
	ds_ring_init(r, test_slots, ARRAY_SIZE(test_slots));
	for (unsigned int i = 1; i <= n; i++)
		ds_ring_write(r, 0x400000 + i, 0x500000 + i, 0);
}

static void bts_ring_partial(struct kunit *test)
{
	struct ds_ring r;

	fill_ring(&r, 3);
	KUNIT_EXPECT_EQ(test, r.index, 3ULL);
	KUNIT_EXPECT_FALSE(test, r.wrapped);
	KUNIT_ASSERT_EQ(test, ds_ring_count(&r), 3ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 0)->from, 0x400001ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 2)->to, 0x500003ULL);
}

static void bts_ring_exactly_full(struct kunit *test)
{
	struct ds_ring r;

	fill_ring(&r, 4);
	KUNIT_EXPECT_EQ(test, r.index, 0ULL);	/* the index wrapped to the base */
	KUNIT_EXPECT_TRUE(test, r.wrapped);
	KUNIT_ASSERT_EQ(test, ds_ring_count(&r), 4ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 0)->from, 0x400001ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 3)->from, 0x400004ULL);
}

static void bts_ring_wrapped(struct kunit *test)
{
	struct ds_ring r;

	fill_ring(&r, 6);
	KUNIT_EXPECT_EQ(test, r.index, 2ULL);
	KUNIT_EXPECT_EQ(test, r.written, 6ULL);
	KUNIT_ASSERT_EQ(test, ds_ring_count(&r), 4ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 0)->from, 0x400003ULL);	/* oldest kept */
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 3)->from, 0x400006ULL);	/* newest */
}

/*
 * The crash path's NMI interrupted ds_ring_write() on its CPU: a slot
 * half-written (index not moved yet) becomes a GAP marker, the ring moves
 * on (wrapping as it would); a write that got as far as moving the index
 * is complete and left alone.
 */
static void bts_ring_repair_torn(struct kunit *test)
{
	struct ds_ring r;

	fill_ring(&r, 3);
	r.writing = 3 + 1;			/* slot 3, the last: from only */
	test_slots[3].from = 0x400009;
	r.frozen = true;
	ds_ring_repair(&r, 777);
	KUNIT_EXPECT_TRUE(test, r.frozen);
	KUNIT_EXPECT_EQ(test, r.writing, 0ULL);
	KUNIT_EXPECT_EQ(test, r.index, 0ULL);
	KUNIT_EXPECT_TRUE(test, r.wrapped);
	KUNIT_ASSERT_EQ(test, ds_ring_count(&r), 4ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 3)->from, BTS_MARKER(BTS_MARK_GAP, BTS_GAP_UNKNOWN));
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 3)->to, 777ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 2)->from, 0x400003ULL);

	/* index already past the slot: the record is whole, nothing to do */
	fill_ring(&r, 2);
	r.writing = 1 + 1;
	r.frozen = true;
	ds_ring_repair(&r, 777);
	KUNIT_EXPECT_EQ(test, r.index, 2ULL);
	KUNIT_EXPECT_EQ(test, ds_ring_get(&r, 1)->from, 0x400002ULL);
}

/*
 * nr_gaps (the note header's, the ring descriptor's) counts every GAP
 * marker written, the ones the ring has since overwritten too; other
 * markers are not gaps.
 */
static void bts_ring_counts_gaps(struct kunit *test)
{
	struct bts_crash_ring d = { .flags = 0 };
	struct ds_ring r;

	fill_ring(&r, 1);
	ds_ring_write(&r, BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF), 100, 5);
	ds_ring_write(&r, BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_TASK), 110, 7);
	ds_ring_write(&r, BTS_MARKER(BTS_MARK_GAP, BTS_GAP_TASK), 120, 5);
	KUNIT_EXPECT_EQ(test, r.gaps, 2U);
	KUNIT_EXPECT_EQ(test, ds_count_gaps(test_slots, 4), 2U);
	ds_ring_write(&r, 0x400010, 0x500010, 0);
	ds_ring_write(&r, 0x400011, 0x500011, 0);	/* the first GAP overwritten */
	KUNIT_EXPECT_EQ(test, ds_count_gaps(test_slots, 4), 1U);
	desc_sync(&d, &r);
	KUNIT_EXPECT_EQ(test, d.nr_gaps, 2U);
	r.writing = r.index + 1;		/* torn: repaired into a GAP */
	r.frozen = true;
	ds_ring_repair(&r, 130);
	KUNIT_EXPECT_EQ(test, r.gaps, 3U);
}

static void bts_filter_kernel_addresses(struct kunit *test)
{
	struct bts_record user = { 0x401000, 0x402000, 0 };
	struct bts_record kfrom = { 0xffffffff81000000ULL, 0x401000, 0 };
	struct bts_record kto = { 0x401000, 0xffffffff81000000ULL, 0 };
	struct bts_record edge = { TASK_SIZE_MAX, 0x401000, 0 };
	struct bts_record mark = { BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), 12345, 1 };
	struct bts_crash_task bt = { };
	struct ds_ring *r = &bt.trace.ring;

	KUNIT_EXPECT_TRUE(test, rec_is_user(&user));
	KUNIT_EXPECT_FALSE(test, rec_is_user(&kfrom));
	KUNIT_EXPECT_FALSE(test, rec_is_user(&kto));
	KUNIT_EXPECT_FALSE(test, rec_is_user(&edge));
	KUNIT_EXPECT_TRUE(test, rec_is_user(&mark));
	memset(test_slots, 0, sizeof(test_slots));
	ds_ring_init(r, test_slots, ARRAY_SIZE(test_slots));
	ds_ring_write(r, user.from, user.to, 0);
	ds_ring_write(r, kfrom.from, kfrom.to, 0);
	ds_ring_write(r, kto.from, kto.to, 0);
	ds_ring_write(r, mark.from, mark.to, mark.flags);
	snapshot(&bt);
	KUNIT_EXPECT_EQ(test, bt.snap_count, 4ULL);
	KUNIT_EXPECT_EQ(test, bt.snap_user, 2ULL);
}

/* Sizing a dump freezes the ring: later writes cannot change the note. */
static void bts_snapshot_freezes(struct kunit *test)
{
	struct bts_crash_task bt = { };
	struct ds_ring *r = &bt.trace.ring;
	u64 i;

	memset(test_slots, 0, sizeof(test_slots));
	ds_ring_init(r, test_slots, ARRAY_SIZE(test_slots));
	for (i = 0; i < ARRAY_SIZE(test_slots) + 3; i++)	/* wraps */
		ds_ring_write(r, 0x401000 + i, 0x402000, 0);
	snapshot(&bt);
	KUNIT_EXPECT_EQ(test, bt.snap_count, (u64)ARRAY_SIZE(test_slots));
	KUNIT_EXPECT_EQ(test, snap_get(&bt, 0)->from, 0x401003ULL);	/* oldest */
	ds_ring_write(r, BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), 1, 0);
	KUNIT_EXPECT_EQ(test, r->index, 3ULL);
	KUNIT_EXPECT_EQ(test, snap_get(&bt, bt.snap_count - 1)->from,
			0x401000ULL + ARRAY_SIZE(test_slots) + 2);
	KUNIT_EXPECT_EQ(test, note_size(&bt),
			(size_t)(88 + ARRAY_SIZE(test_slots) * 24));
}

static void bts_note_size(struct kunit *test)
{
	struct bts_crash_task bt = { };

	memset(test_slots, 0, sizeof(test_slots));
	ds_ring_init(&bt.trace.ring, test_slots, ARRAY_SIZE(test_slots));
	/* header 12 + "BTSCRASH\0" padded to 12 + 64-byte descriptor header */
	snapshot(&bt);
	KUNIT_EXPECT_EQ(test, note_size(&bt), (size_t)88);
	bt.trace.ring.frozen = false;
	ds_ring_write(&bt.trace.ring, 0x401000, 0x401100, 0);
	ds_ring_write(&bt.trace.ring, 0x401105, 0x401000, 0);
	snapshot(&bt);
	KUNIT_EXPECT_EQ(test, note_size(&bt), (size_t)(88 + 2 * 24));
	KUNIT_EXPECT_EQ(test, note_size(&bt) % 4, (size_t)0);
	KUNIT_EXPECT_EQ(test, sizeof(struct bts_crash_note_hdr), (size_t)BTS_CRASH_NOTE_HDR_SIZE);
	KUNIT_EXPECT_EQ(test, sizeof(BTS_CRASH_NOTE_NAME), (size_t)BTS_CRASH_NOTE_NAMESZ);
}

static void bts_attach_limits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, bts_crash_attach(current, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_attach(current, BTS_CRASH_MAX_TASK_RECORDS + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(99, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 1UL << 40), -EINVAL);
	/* unused arguments must be 0, as with other prctls */
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_DISABLE, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 1), -EINVAL);
}

/*
 * The notes of one core stay within BTS_CRASH_CORE_NOTES_MAX (an int for
 * the ELF writer): a thread past the budget keeps its newest records that
 * fit, marked TRUNCATED; once nothing fits, threads get no note.
 */
static void bts_notes_budget(struct kunit *test)
{
	struct bts_crash_task bt = { };
	struct ds_ring *r = &bt.trace.ring;
	const size_t max = BTS_CRASH_CORE_NOTES_MAX;
	size_t used;
	u64 i;

	memset(test_slots, 0, sizeof(test_slots));
	ds_ring_init(r, test_slots, ARRAY_SIZE(test_slots));
	for (i = 0; i < ARRAY_SIZE(test_slots) + 2; i++)	/* wraps */
		ds_ring_write(r, 0x401000 + i, 0x402000, 0);
	KUNIT_EXPECT_EQ(test, plan_note(&bt, 0), note_bytes(4));
	KUNIT_EXPECT_FALSE(test, bt.snap_truncated);

	/* room for 2 of 4: the newest two, oldest of them first */
	bt.trace.ring.frozen = false;
	used = plan_note(&bt, max - note_bytes(2) - 5);
	KUNIT_EXPECT_EQ(test, used, max - 5);
	KUNIT_EXPECT_TRUE(test, bt.snap_truncated);
	KUNIT_ASSERT_EQ(test, bt.snap_user, 2ULL);
	KUNIT_EXPECT_EQ(test, snap_get(&bt, 0)->from, 0x401004ULL);
	KUNIT_EXPECT_EQ(test, snap_get(&bt, 1)->from, 0x401005ULL);

	/* spent: no note, the total does not move, even past the budget */
	bt.trace.ring.frozen = false;
	KUNIT_EXPECT_EQ(test, plan_note(&bt, max - 1), max - 1);
	KUNIT_EXPECT_TRUE(test, bt.snap_skip);
	KUNIT_EXPECT_EQ(test, note_size(&bt), (size_t)0);
	bt.trace.ring.frozen = false;
	KUNIT_EXPECT_EQ(test, plan_note(&bt, (size_t)INT_MAX + 100), (size_t)INT_MAX + 100);
	KUNIT_EXPECT_LE(test, max, (size_t)INT_MAX);
}

/*
 * pinned_vm: a ring shows in VmPin, and mlock()ed pages count against the
 * same RLIMIT_MEMLOCK (a process cannot hold its limit twice).
 */
static void bts_charge_pinned(struct kunit *test)
{
	struct user_struct *user = current_user();
	struct rlimit *rl = &current->signal->rlim[RLIMIT_MEMLOCK];
	unsigned long saved = rl->rlim_cur;
	long before = atomic_long_read(&user->locked_vm);
	struct mm_struct *mm = mm_alloc();
	const struct cred *old;
	struct cred *cred;

	KUNIT_ASSERT_NOT_NULL(test, mm);
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	rl->rlim_cur = (before + 24) << PAGE_SHIFT;

	KUNIT_EXPECT_EQ(test, bts_crash_charge(user, mm, 8), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), 8LL);
	mm->locked_vm = 16;		/* mlock()ed: 16 + 8 = the limit */
	KUNIT_EXPECT_EQ(test, bts_crash_charge(user, mm, 1), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), 8LL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), before + 8);
	mm->locked_vm = 0;
	atomic_long_sub(8, &user->locked_vm);
	atomic64_sub(8, &mm->pinned_vm);

	rl->rlim_cur = saved;
	revert_creds(old);
	put_cred(cred);
	mmput(mm);
}

/*
 * A charge the limit refuses never shows in user->locked_vm, so a charge
 * that fits, made meanwhile on another CPU, is never refused for it.  The
 * racer asks for more than any limit, without CAP_IPC_LOCK; the charge
 * that added before it checked was refused here in most rounds.
 */
struct bts_charge_racer {
	struct user_struct *user;
	unsigned long tries;
};

static int bts_charge_racer_fn(void *arg)
{
	struct bts_charge_racer *c = arg;
	struct cred *cred = prepare_creds();
	const struct cred *old;

	if (!cred)
		return -ENOMEM;
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	while (!kthread_should_stop()) {
		if (!bts_crash_charge(c->user, NULL, 1UL << 40))	/* never fits */
			atomic_long_sub(1UL << 40, &c->user->locked_vm);
		WRITE_ONCE(c->tries, c->tries + 1);
		cond_resched();
	}
	revert_creds(old);
	put_cred(cred);
	return 0;
}

static void bts_charge_race(struct kunit *test)
{
	struct bts_charge_racer c = { .user = current_user() };
	struct rlimit *rl = &current->signal->rlim[RLIMIT_MEMLOCK];
	unsigned long saved = rl->rlim_cur, i, refused = 0;
	long before = atomic_long_read(&c.user->locked_vm);
	struct task_struct *racer;
	const struct cred *old;
	struct cred *cred;
	int cpu;

	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "one CPU online");
	racer = kthread_create_on_cpu(bts_charge_racer_fn, &c, cpu, "bts_charge_racer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(racer));
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	rl->rlim_cur = (before + 24) << PAGE_SHIFT;	/* room for 24 pages */

	wake_up_process(racer);
	while (!READ_ONCE(c.tries))
		cond_resched();
	for (i = 0; i < 20000; i++) {
		if (bts_crash_charge(c.user, NULL, 1))
			refused++;
		else
			atomic_long_sub(1, &c.user->locked_vm);
		cond_resched();
	}
	kthread_stop(racer);
	KUNIT_EXPECT_EQ_MSG(test, refused, 0UL,
			    "%lu of %lu fitting charges refused, beside %lu refused ones",
			    refused, i, c.tries);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&c.user->locked_vm), before);

	rl->rlim_cur = saved;
	revert_creds(old);
	put_cred(cred);
}

/* ENABLE validates and allocates first: a refused size keeps the ring. */
static void bts_enable_keeps_ring(struct kunit *test)
{
	if (ds_backend() == DS_BACKEND_NONE)
		kunit_skip(test, "no backend");
	KUNIT_ASSERT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 16), 0L);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE,
					      BTS_CRASH_MAX_TASK_RECORDS + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 16L);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 32), 0L);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 32L);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_DISABLE, 0), 0L);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 0L);
}

/* The CPU note: newest 32 records, TRUNCATED, name NUL-padded, exact size. */
static void bts_cpu_note_layout(struct kunit *test)
{
	static struct bts_record slots[40];
	static u32 buf[BTS_CRASH_CPU_NOTE_BYTES / 4 + 4];
	const struct bts_crash_note_hdr *h;
	const struct elf_note *en = (void *)buf;
	const struct bts_record *rec;
	static struct bts_crash_cpu c = {
		.desc = { .flags = BTS_RING_F_LOST_EXACT, .source = BTS_SOURCE_EMUL },
	};
	struct ds_ring *r = &c.trace.ring;
	u32 *end;
	int i;

	ds_ring_init(r, slots, ARRAY_SIZE(slots));
	for (i = 0; i < 45; i++)	/* wraps: 5 lost */
		ds_ring_write(r, 0xffffffff81000000ULL + i, 0xffffffff82000000ULL + i, 0);
	memset(buf, 0xa5, sizeof(buf));
	end = write_cpu_note(buf, &c, 3);
	KUNIT_EXPECT_EQ(test, (size_t)((u8 *)end - (u8 *)buf), (size_t)BTS_CRASH_CPU_NOTE_BYTES);
	KUNIT_EXPECT_EQ(test, en->n_namesz, (u32)BTS_CRASH_NOTE_NAMESZ);
	KUNIT_EXPECT_EQ(test, en->n_type, (u32)NT_BTSCRASH_CPU);
	KUNIT_EXPECT_EQ(test, en->n_descsz, (u32)(64 + 32 * 24));
	KUNIT_EXPECT_EQ(test, memcmp(en + 1, "BTSCRASH\0\0\0\0", 12), 0);
	h = (void *)((u8 *)(en + 1) + 12);
	KUNIT_EXPECT_EQ(test, h->magic, (u32)BTS_CRASH_NOTE_MAGIC);
	KUNIT_EXPECT_EQ(test, h->id, 3ULL);
	KUNIT_EXPECT_EQ(test, h->nr_records, 32ULL);
	KUNIT_EXPECT_EQ(test, h->capacity, 40ULL);
	KUNIT_EXPECT_EQ(test, h->lost, 5ULL);
	KUNIT_EXPECT_EQ(test, h->flags, BTS_NOTE_F_WRAPPED | BTS_NOTE_F_TRUNCATED |
			BTS_NOTE_F_LOST_EXACT);
	KUNIT_EXPECT_FALSE(test, h->flags & BTS_NOTE_F_USER_ONLY);
	rec = (void *)((u8 *)h + h->hdr_size);
	KUNIT_EXPECT_EQ(test, rec[0].from, 0xffffffff81000000ULL + 13);	/* oldest kept */
	KUNIT_EXPECT_EQ(test, rec[31].from, 0xffffffff81000000ULL + 44);	/* newest */
	KUNIT_EXPECT_EQ(test, buf[BTS_CRASH_CPU_NOTE_BYTES / 4], 0xa5a5a5a5U);	/* no overrun */

	/* a short ring: all records, not truncated, shorter note */
	ds_ring_init(r, slots, ARRAY_SIZE(slots));
	ds_ring_write(r, 1, 2, 0);
	end = write_cpu_note(buf, &c, 0);
	KUNIT_EXPECT_EQ(test, en->n_descsz, (u32)(64 + 24));
	KUNIT_EXPECT_EQ(test, (size_t)((u8 *)end - (u8 *)buf), (size_t)(12 + 12 + 64 + 24));
	KUNIT_EXPECT_EQ(test, h->flags, BTS_NOTE_F_LOST_EXACT);
	KUNIT_EXPECT_EQ(test, h->source, (u16)BTS_SOURCE_EMUL);

	/* the hardware's ring: its source, and no exact loss count */
	c.desc.flags = 0;
	c.desc.source = BTS_SOURCE_HW;
	end = write_cpu_note(buf, &c, 0);
	KUNIT_EXPECT_EQ(test, h->flags, 0U);
	KUNIT_EXPECT_EQ(test, h->lost, 0ULL);
	KUNIT_EXPECT_EQ(test, h->source, (u16)BTS_SOURCE_HW);
}

/*
 * RLIMIT_MEMLOCK accounting, as a user without CAP_IPC_LOCK: charges up to
 * the limit succeed, one page more is refused, a refused or released ring
 * leaves locked_vm as it was.
 */
static void bts_charge_limit(struct kunit *test)
{
	struct user_struct *user = current_user();
	struct rlimit *rl = &current->signal->rlim[RLIMIT_MEMLOCK];
	unsigned long saved = rl->rlim_cur;
	long before = atomic_long_read(&user->locked_vm);
	const struct cred *old;
	struct cred *cred;

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	rl->rlim_cur = (before + 24) << PAGE_SHIFT;	/* room for 24 pages */

	KUNIT_EXPECT_EQ(test, bts_crash_charge(user, NULL, 24), 0);
	KUNIT_EXPECT_EQ(test, bts_crash_charge(user, NULL, 1), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), before + 24);
	atomic_long_sub(24, &user->locked_vm);

	/* 4096 records = 96 KiB = 24 pages fits; 4097 (32 pages) does not;
	 * without a backend (an LBR-only CPU's default) prctl refuses first;
	 * rings on perf are perf's to charge (bts_charge_perf)
	 */
	if (bts_crash_perf_rings())
		goto out;
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 4097),
			ds_backend() == DS_BACKEND_NONE ? -EOPNOTSUPP : -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), before);
	if (bts_crash_prctl(PR_BTS_CRASH_ENABLE_BYTES, 4096 * BTS_RECORD_SIZE) == 0) {
		KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 4096L);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), before + 24);
		bts_crash_prctl(PR_BTS_CRASH_DISABLE, 0);
	}
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), before);
out:
	rl->rlim_cur = saved;
	revert_creds(old);
	put_cred(cred);
}

/*
 * bts_crash.perf_rings: a ring is an intel_bts event's AUX buffer (a
 * power of two of pages, and perf's user page), charged by perf to the
 * user's perf_mlock: perf_event_mlock_kb per online CPU, beyond it only
 * within RLIMIT_MEMLOCK (ENOMEM past it, as for ds.c's rings); nothing
 * to locked_vm.  All of it goes with
 * DISABLE, and a refused ENABLE leaves no charge.
 */
static void bts_charge_perf(struct kunit *test)
{
	struct user_struct *user = current_user();
	struct rlimit *rl = &current->signal->rlim[RLIMIT_MEMLOCK];
	unsigned long saved = rl->rlim_cur;
	long before = atomic_long_read(&user->perf_mlock);
	long locked = atomic_long_read(&user->locked_vm);
	const struct cred *old;
	struct cred *cred;

	if (!bts_crash_perf_rings())
		kunit_skip(test, "no bts_crash.perf_rings=1 (or no intel_bts)");
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	rl->rlim_cur = 0;

	/* 4096 records = 96 KiB: 32 pages and the user page */
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 4096), 0);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 4096L);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->perf_mlock), before + 33);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->locked_vm), locked);
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_DISABLE, 0), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&user->perf_mlock), before);
	/* 65536 records: 512 pages, past perf's allowance on 2 CPUs */
	if (num_online_cpus() * (sysctl_perf_event_mlock >> (PAGE_SHIFT - 10)) < 513) {
		KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_ENABLE, 65536), -ENOMEM);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&user->perf_mlock), before);
	}
	KUNIT_EXPECT_EQ(test, bts_crash_prctl(PR_BTS_CRASH_GET, 0), 0L);

	rl->rlim_cur = saved;
	revert_creds(old);
	put_cred(cred);
}

/* User workers (vhost's, io_uring's: PF_USER_WORKER) and kernel threads
 * never take a ring by inheritance; a plain thread does.
 */
static void bts_workers_not_traced(struct kunit *test)
{
	struct task_struct *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_EXPECT_TRUE(test, bts_crash_inherits(t));
	t->flags = PF_USER_WORKER;
	KUNIT_EXPECT_FALSE(test, bts_crash_inherits(t));
	t->flags = PF_IO_WORKER | PF_USER_WORKER;
	KUNIT_EXPECT_FALSE(test, bts_crash_inherits(t));
	t->flags = PF_KTHREAD;
	KUNIT_EXPECT_FALSE(test, bts_crash_inherits(t));
}

/* kernel.bts_crash_task_records was registered at boot (6.6+ refuses a
 * table with a { } sentinel, and nothing else would say so).
 */
static void bts_sysctl_registered(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_SYSCTL))
		kunit_skip(test, "no CONFIG_SYSCTL");
	KUNIT_EXPECT_NOT_NULL(test, bts_crash_sysctl_hdr);
}

static struct kunit_case bts_crash_cases[] = {
	KUNIT_CASE(bts_workers_not_traced),
	KUNIT_CASE(bts_sysctl_registered),
	KUNIT_CASE(bts_charge_limit),
	KUNIT_CASE(bts_charge_perf),
	KUNIT_CASE(bts_cpu_note_layout),
	KUNIT_CASE(bts_ring_partial),
	KUNIT_CASE(bts_ring_exactly_full),
	KUNIT_CASE(bts_ring_wrapped),
	KUNIT_CASE(bts_ring_repair_torn),
	KUNIT_CASE(bts_ring_counts_gaps),
	KUNIT_CASE(bts_filter_kernel_addresses),
	KUNIT_CASE(bts_snapshot_freezes),
	KUNIT_CASE(bts_note_size),
	KUNIT_CASE(bts_attach_limits),
	KUNIT_CASE(bts_notes_budget),
	KUNIT_CASE(bts_charge_pinned),
	KUNIT_CASE(bts_charge_race),
	KUNIT_CASE(bts_enable_keeps_ring),
	{}
};

static struct kunit_suite bts_crash_suite = {
	.name = "bts_crash",
	.test_cases = bts_crash_cases,
};

kunit_test_suite(bts_crash_suite);
