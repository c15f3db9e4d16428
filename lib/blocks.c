// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A thread's trace as blocks of straight code, the way gdb's BTS reader
 * makes them (features/btrace.dtd), with gaps where the code between two
 * branches is not known.  The one model of a thread's instruction sequence:
 * the gdb stub serves it (lib/gdbxfer.c), the value-recovery engine walks
 * it (lib/recover.c).  Process context.
 */
#include <stdlib.h>

#include "btsdec.h"

void btsdec_blocks_init(struct btsdec_blocks *s, struct btsdec_sym *sym,
			struct btsdec_classifier *cls)
{
	*s = (struct btsdec_blocks){ .sym = sym, .cls = cls };
}

void btsdec_blocks_fini(struct btsdec_blocks *s)
{
	free(s->runs);
	s->runs = NULL;
	s->runs_cap = s->runs_nr = 0;
}

static bool runs_grow(struct btsdec_blocks *s)
{
	size_t cap = s->runs_cap ? 2 * s->runs_cap : 256;
	struct btsdec_run *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < s->runs_cap; i++) {
		struct btsdec_run *r = &s->runs[i];
		size_t h = (size_t)((r->to * 0x9e3779b97f4a7c15ull) ^ r->from);

		while (r->from && n[h & (cap - 1)].from)
			h++;
		if (r->from)
			n[h & (cap - 1)] = *r;
	}
	free(s->runs);
	s->runs = n;
	s->runs_cap = cap;
	return true;
}

/* Whether straight code leads from a branch's target `to` to the next
 * branch's source `from`, as gdb will walk it: not when a branch the
 * trace does not hold lies between (the kernel moved the thread at a
 * syscall: a signal handler, sigreturn), nor when `from` lies before
 * `to`.  Code that cannot be read is left to gdb.  Each pair is walked
 * once (a ring repeats its loops). */
static bool block_straight(struct btsdec_blocks *s, uint64_t to, uint64_t from)
{
	size_t h = (size_t)((to * 0x9e3779b97f4a7c15ull) ^ from);
	struct btsdec_run *r;

	if (!from || (2 * (s->runs_nr + 1) > s->runs_cap && !runs_grow(s)))
		return btsdec_run_relate(s->sym, s->cls, to, from) != BTSDEC_FAULT_UNRELATED;
	for (;; h++) {
		r = &s->runs[h & (s->runs_cap - 1)];
		if (!r->from)
			break;
		if (r->to == to && r->from == from)
			return r->straight;
	}
	*r = (struct btsdec_run){ to, from, btsdec_run_relate(s->sym, s->cls, to, from) !=
					  BTSDEC_FAULT_UNRELATED };
	s->runs_nr++;
	return r->straight;
}

/* A gdb gap in place of the block from a branch's target `to` to the
 * next branch's source `from`, newest first.  Between two branches (not
 * across a GAP marker), when straight code from `to` meets a syscall, the
 * kernel moved the thread there: the code up to the syscall and the next
 * branch's source are known, only the way between is not. */
static void put_gap(struct btsdec_blocks *s, btsdec_block_fn put, void *arg,
		    uint64_t to, uint64_t from, bool between)
{
	uint64_t sc = between ? btsdec_run_syscall(s->sym, s->cls, to) : 0;

	if (sc)
		put(arg, from, from);
	put(arg, to ? to : 1, 0);
	if (sc)
		put(arg, to, sc);
}

/* The blocks of a trace, newest first, as gdb's BTS reader makes them: the
 * newest runs from the last branch's target to the stop pc; each older one
 * from a branch's target to the next branch's source.  The code before
 * the oldest branch has no known start: left out, as gdbserver's BTS
 * reader prunes it on full reads (sent as begin 0, gdb decodes at 0 and
 * opens the history with a `??` and a decode error).  Where the code is
 * unknown a block ending before it begins (end 0) makes gdb record a gap,
 * never a straight line: across a GAP marker, after the newest branch
 * when straight code from its target does not reach the stop pc (a thread
 * whose recording stopped before it did), and between two branches
 * whose code is not straight (block_straight()).  Switch markers only say the
 * thread was off the CPU: its own code runs on, straight, across them. */
void btsdec_blocks_walk(struct btsdec_blocks *s, const struct btsdec_thread *th,
			size_t keep, btsdec_block_fn put, void *arg)
{
	const struct btsdec_trace *t = &th->trace;
	uint64_t next_from = th->pc;
	bool known = th->has_regs, newest = true, gap = false, marked = false;
	size_t stop = keep < t->nr ? t->nr - keep : 0;

	for (size_t i = t->nr; i-- > stop;) {
		struct btsdec_record r = btsdec_trace_at(t, i);
		enum btsdec_fault_rel rel;

		if (btsdec_is_marker(&r)) {
			gap |= BTS_MARKER_KIND(r.from) == BTS_MARK_GAP;
			marked = gap;
			continue;
		}
		if (newest && known && !gap) {
			rel = btsdec_run_relate(s->sym, s->cls, r.to, th->pc);
			gap = rel != BTSDEC_FAULT_TARGET && rel != BTSDEC_FAULT_RUN;
		} else if (known && !gap) {
			gap = !block_straight(s, r.to, next_from);
		}
		if (gap)
			put_gap(s, put, arg, r.to, next_from, known && !newest && !marked);
		else if (known)
			put(arg, r.to, next_from);
		next_from = r.from;
		known = true;
		newest = false;
		gap = marked = false;
	}
}

