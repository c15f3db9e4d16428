// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The handler's side of the stock-kernel collector: the snapshot the
 * collector (lbr-collector.c) kept for the core's faulting thread, checked
 * against the core (each `from` decoded as btsdump decodes a BTS record's:
 * a branch instruction) and written into the spooled core as an
 * NT_BTSCRASH_THREAD note, source lbr (docs/btsdumpd.md "Stock kernels").
 * Process context, in the collection pipeline (collect.c).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "btsdec.h"
#include "btsdumpd.h"
#include "lbr-snapshot.h"

/* The collector holds a snapshot until its CPU's checks vouch for it
 * (about 500 ms); the handler waits until the collector's progress passes
 * the crash (lbr-collector.c), at most this long (a collector stopped by
 * SIGSTOP, or one starved of CPU for that long). */
#define SNAP_WAIT_MS	30000
#define INSN_MAX	15	/* the longest x86 instruction */
#define NSEC		1000000000ULL
/* the signal came at most this long before the dump (the kernel's %t:
 * whole seconds, and a multi-threaded process's other threads to stop) */
#define SNAP_BEFORE_NS	(10 * NSEC)
#define SNAP_AFTER_NS	(2 * NSEC)	/* %t's truncation, the clocks' reading */
#define SNAP_AGE_MAX_NS	(60 * NSEC)	/* without the crash's time */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* When this crash's snapshot can have been taken (CLOCK_MONOTONIC). */
struct snap_window {
	uint64_t oldest, newest;
};

/* The window around crash_time (seconds since the epoch: when the dump
 * began, the kernel's %t), however long ago that was (a handler starved
 * in a crash storm comes minutes later); without a plausible crash_time,
 * the last minute. */
static struct snap_window snapshot_window(uint64_t crash_time)
{
	uint64_t now = monotonic_ns(), real = clock_ns(CLOCK_REALTIME);
	uint64_t ago = real - crash_time * NSEC;	/* checked below */
	struct snap_window w = { now > SNAP_AGE_MAX_NS ? now - SNAP_AGE_MAX_NS : 0, now };

	if (!crash_time || crash_time * NSEC > real || ago > now)
		return w;
	w.oldest = now - ago > SNAP_BEFORE_NS ? now - ago - SNAP_BEFORE_NS : 0;
	w.newest = now - ago + SNAP_AFTER_NS;
	return w;
}

/* The collector's snapshot file for tid if it holds one taken within w:
 * 0, else -ENOENT. */
static int snapshot_file(const char *path, pid_t tid, const struct snap_window *w,
			 struct btsdumpd_lbr_snap *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -ENOENT;
	n = read(fd, s, sizeof(*s));
	close(fd);
	return n == sizeof(*s) && s->magic == BTSDUMPD_LBR_MAGIC && s->tid == (__u32)tid &&
	       s->time_ns >= w->oldest && s->time_ns <= w->newest ? 0 : -ENOENT;
}

/* The time before which the collector settled every snapshot (its
 * DIR/progress), 0 when unknown. */
static uint64_t collector_progress(const char *dir)
{
	char path[256];
	uint64_t p = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/progress", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		if (read(fd, &p, sizeof(p)) != sizeof(p))
			p = 0;
		close(fd);
	}
	return p;
}

/* The collector's snapshot for tid, whose signal was raised before
 * bound: 0, or -ENOENT once the collector settled every snapshot up to
 * bound without one for tid (a signal it does not take: sent by another
 * process), -ETIMEDOUT when it did not within SNAP_WAIT_MS. */
static int snapshot_read(const char *dir, pid_t tid, uint64_t bound,
			 const struct snap_window *w, struct btsdumpd_lbr_snap *s)
{
	char path[256];
	int waited;

	snprintf(path, sizeof(path), "%s/%d", dir, (int)tid);
	for (waited = 0; waited <= SNAP_WAIT_MS; waited += 50) {
		if (!snapshot_file(path, tid, w, s))
			return 0;
		if (collector_progress(dir) >= bound)	/* written just before? */
			return snapshot_file(path, tid, w, s);
		usleep(50 * 1000);
	}
	return -ETIMEDOUT;
}

/* Whether a collector runs: DIR/armed exists and is locked (by the
 * collector for as long as it runs, killed or not). */
static bool collector_alive(const char *dir)
{
	char path[256];
	bool alive;
	int fd;

	snprintf(path, sizeof(path), "%s/armed", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	alive = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return alive;
}

/* The executable PT_LOAD holding addr: its index, or -1. */
static int exec_segment(Elf *elf, uint64_t addr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_memsz)
			return (int)i;
	return -1;
}

/* The code of the crashing process, to decode each entry's from: the
 * core's bytes, else the process's files (the handler's descriptors of
 * them, else the files the core names); either may be NULL. */
struct lbr_code {
	Elf *elf;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
};

/* Whether from lies in an executable mapping of the core and the
 * instruction there is one a user LBR entry starts at (call, return,
 * jump, conditional jump), classified as btsdump classifies a BTS
 * record's from.  Code the core lacks and no file gives cannot be judged:
 * the mapping suffices then. */
static bool branch_at(const struct lbr_code *lc, uint64_t from)
{
	uint8_t code[INSN_MAX];
	enum btsdec_kind k;
	bool indirect;
	size_t n;

	if (exec_segment(lc->elf, from) < 0)
		return false;
	if (!lc->sym || !lc->cls)
		return true;
	n = btsdec_sym_read_code(lc->sym, from, code, sizeof(code));
	if (!n)
		return true;
	k = btsdec_classify(lc->cls, code, n, from, &indirect);
	return k == BTSDEC_K_CALL || k == BTSDEC_K_RETURN || k == BTSDEC_K_JUMP ||
	       k == BTSDEC_K_COND;
}

/* Whether an entry is one of the thread's user branches: not an empty
 * slot (the LBR not filled since perf's reset at switch-in, or an entry
 * perf's filter discarded: from = 0) nor a return from the kernel to user
 * mode (sysret, iret: from the kernel half). */
static bool user_branch(const struct btsdumpd_lbr_entry *e)
{
	return e->from && (int64_t)e->from >= 0;
}

/* The CPU's LBR depth, as the collector found it (Intel 32, AMD 16). */
static int depth(const struct btsdumpd_lbr_snap *s)
{
	return s->depth && s->depth <= BTSDUMPD_LBR_MAX ? (int)s->depth : BTSDUMPD_LBR_MAX;
}

/* The snapshot's slots: what the helper copied. */
static int slots(const struct btsdumpd_lbr_snap *s)
{
	return s->nr > depth(s) ? depth(s) : s->nr;
}

/* How many of the snapshot's n slots perf's read filled.  The helper
 * copies all the CPU's slots (cpu_hw_events.lbr_entries: 32 on Intel, 16
 * on AMD), the read fills the first lbr_stack.nr of them (kept, which the
 * BPF program reads): Architectural LBR's stops at the first empty entry
 * (intel_pmu_store_lbr), and perf's filter (intel_pmu_lbr_filter) drops
 * the entries it rejects (returns from the kernel, a branch to 0) by
 * moving the newer ones down.  The slots beyond hold the copies that
 * leaves, or what an older read left there, maybe another task's.
 * Without kept, the copies at the oldest end go (the oldest iterations
 * of a loop that ended the stack can go with them). */
static int filled(const struct btsdumpd_lbr_snap *s, int n)
{
	if (s->kept >= 0)
		return s->kept < n ? s->kept : n;
	while (n > 1 && s->e[n - 1].from == s->e[n - 2].from &&
	       s->e[n - 1].to == s->e[n - 2].to)
		n--;
	return n;
}

/* Whether no slot was left empty since the switch-in (older entries went
 * round, docs/format.md, source 3): the last slot holds this read's entry,
 * all kept or the oldest kept one's copy that perf's filter left there. */
static bool wrapped(const struct btsdumpd_lbr_snap *s)
{
	const struct btsdumpd_lbr_entry *last = &s->e[depth(s) - 1];
	int k = s->kept;

	if (slots(s) < depth(s) || !last->from)
		return false;
	if (k < 0 || k >= depth(s))
		return true;
	return k > 0 && last->from == s->e[k - 1].from && last->to == s->e[k - 1].to;
}

/* The snapshot's user entries, oldest first, kept back to the newest
 * break in the chain: each entry's from a branch instruction in an
 * executable mapping of the core (branch_at); the code from one entry's
 * to runs straight (forward, in one mapping) to the next's from.  Returns
 * how many were dropped before the break. */
static int lbr_validate(const struct lbr_code *lc, const struct btsdumpd_lbr_snap *s,
			struct btsdec_record *out, size_t *nr)
{
	Elf *elf = lc->elf;
	int n = filled(s, slots(s)), i;
	size_t k = 0, first = 0;

	for (i = n - 1; i >= 0; i--) {	/* newest first in the snapshot */
		const struct btsdumpd_lbr_entry *e = &s->e[i];

		if (!user_branch(e))
			continue;
		out[k] = (struct btsdec_record){ e->from, e->to, 0 };
		if (!branch_at(lc, e->from))
			first = k + 1;
		else if (k > first && (exec_segment(elf, out[k - 1].to) !=
				       exec_segment(elf, e->from) ||
				       out[k - 1].to > e->from))
			first = k;
		k++;
	}
	memmove(out, out + first, (k - first) * sizeof(*out));
	*nr = k - first;
	return (int)first;
}

/* What a snapshot with none of the thread's branches held, for the
 * journal: its slots, perf's kept count, the user entries among them
 * (none: perf reset the LBR at a switch-in after the thread's last
 * branch, or its event was not on; some: none of them in the core's
 * code, another task's). */
static void no_branches(const struct btsdumpd_lbr_snap *s)
{
	int n = filled(s, slots(s)), i, user = 0;

	for (i = 0; i < n; i++)
		user += user_branch(&s->e[i]);
	btsdumpd_log(LOG_INFO, "LBR snapshot of thread %u on CPU %u: %d slots, perf's read "
		     "kept %d, %d user entries, none a branch of the core's code",
		     s->tid, s->cpu, slots(s), s->kept, user);
}

/* The note for t's thread from snapshot s, framed, appended to the core at
 * path; the framed note handed back in *note (the caller frees it). */
static int write_note(const char *path, const struct lbr_code *lc,
		      const struct btsdumpd_lbr_snap *s, struct btsdumpd_lbr_framed *note)
{
	struct btsdec_record recs[BTSDUMPD_LBR_MAX + 1];
	struct btsdec_trace t = { .type = NT_BTSCRASH_THREAD, .id = s->tid,
				  .capacity = (uint64_t)depth(s),
				  .flags = BTS_NOTE_F_USER_ONLY,
				  .source = BTS_SOURCE_LBR, .recs = recs + 1 };
	struct btsdec_err err;
	int dropped = lbr_validate(lc, s, recs + 1, &t.nr), ret;
	ssize_t w;

	if (dropped) {		/* the gap where the chain broke */
		recs[0] = (struct btsdec_record){ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_UNKNOWN),
						  s->time_ns, 0 };
		t.recs = recs;
		t.nr++;
		t.nr_gaps = 1;
		t.lost = dropped;
	}
	if (wrapped(s))
		t.flags |= BTS_NOTE_F_WRAPPED;
	if (!t.nr) {
		no_branches(s);
		return -ENODATA;
	}
	note->len = btsdec_note_size(t.nr);
	note->data = note->len ? malloc(note->len) : NULL;
	if (!note->data)
		return -ENOMEM;
	w = btsdec_note_write(note->data, note->len, &t, &err);
	ret = w < 0 ? (int)w : btsdec_core_append_notes(path, path, note->data, w, &err);
	if (ret) {
		btsdumpd_log(LOG_WARNING, "LBR note: %s", err.msg);
		free(note->data);
		*note = (struct btsdumpd_lbr_framed){ 0 };
	} else {
		note->len = w;
	}
	return ret;
}

/* The snapshot s checked against core and written into it at path. */
static int note_from(struct btsdec_core *core, const struct btsdumpd_mapped *mapped,
		     const char *path, const struct btsdumpd_lbr_snap *s,
		     struct btsdumpd_lbr_framed *note)
{
	struct btsdec_symopts so = { .elf_fds = mapped ? mapped->fd : NULL,
				     .nr_elf_fds = mapped ? mapped->nr : 0 };
	struct lbr_code lc = { .elf = btsdec_core_elf(core) };
	struct btsdec_err err;
	int ret;

	/* without them, only the mapping is checked (branch_at) */
	if (btsdec_sym_open_core(core, &so, &lc.sym, &err))
		lc.sym = NULL;
	if (btsdec_classifier_new(&lc.cls, &err))
		lc.cls = NULL;
	ret = write_note(path, &lc, s, note);
	btsdec_classifier_free(lc.cls);
	btsdec_sym_close(lc.sym);
	return ret;
}

/* The collector's note into the spooled core at path (a file of the
 * entry): 0 when written, -EEXIST when the core already has a trace note
 * (a patched kernel's, never replaced), -ENOENT without a snapshot; the
 * note as written in *note (companion.c keeps it in its entry). */
int btsdumpd_lbr_note(const char *dir, const char *path, uint64_t crash_time,
		      const struct btsdumpd_mapped *mapped, struct btsdumpd_lbr_framed *note)
{
	uint64_t bound = monotonic_ns();	/* the signal came before the handler */
	struct snap_window w = snapshot_window(crash_time);
	struct btsdumpd_lbr_snap s;
	struct btsdec_core *core;
	struct btsdec_err err;
	const struct btsdec_thread *th;
	int ret;

	if (!collector_alive(dir))
		return -ENOENT;	/* no collector runs: nothing to wait for */
	ret = btsdec_core_open(path, &core, &err);
	if (ret)
		return ret;
	th = btsdec_core_nr_threads(core) ? btsdec_core_thread(core, 0) : NULL;
	if (btsdec_core_nr_traces(core))
		ret = -EEXIST;
	else if (!th)
		ret = -ESRCH;
	else
		ret = snapshot_read(dir, th->tid, bound, &w, &s);
	if (!ret && s.nr < 0)
		ret = s.nr;
	if (!ret)
		ret = note_from(core, mapped, path, &s, note);
	btsdec_core_close(core);
	return ret;
}
