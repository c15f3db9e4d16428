// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The stub's replay mode (`btsdump gdbserver --replay`, lib/gdbstub.c
 * dispatches here): each thread's point along its recovered instruction
 * sequence (lib/recover.c, an engine opened when gdb first needs it),
 * moved by s, c, vCont, bs and bc as rr's gdbserver moves its replay;
 * registers and memory at that point, proven bytes only; breakpoints,
 * write and access watchpoints in both directions.  Process context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gdbstub-int.h"
#include "grow.h"

/* The most bytes a watchpoint covers (x86's debug registers: 8; gdb
 * splits a wider one). */
#define WATCH_MAX	64

/* Why a move stopped. */
enum stop {
	STOP_STEP,	/* one instruction done */
	STOP_BEGIN,	/* the oldest point: no more history */
	STOP_END,	/* the core's state: its signal */
	STOP_BREAK,	/* at a breakpoint's address */
	STOP_WATCH,	/* across an instruction proven to write a watched byte */
	STOP_AWATCH,	/* ... to read or write a byte of an access watchpoint */
	STOP_MAYBE,	/* across one that may have: unproven either way */
};

/* The x86-64 syscalls that may change a mapping's permissions or
 * contents (mmap, mprotect, munmap, mremap, madvise, shmat, shmdt,
 * execve, remap_file_pages, pkey_mprotect, process_madvise). */
static bool remaps(uint64_t nr)
{
	static const uint16_t calls[] = { 9, 10, 11, 25, 28, 30, 67, 59, 216, 329, 440 };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (nr == calls[i])
			return true;
	return false;
}

/* Whether instruction k may have changed a read-only mapping: a gap, or
 * a syscall that remaps, or whose number is not known (int 0x80 and
 * sysenter: any).  Code that cannot be read counts as one. */
static bool may_remap(struct btsdec_gdbstub *s, struct stub_thread *t, size_t k)
{
	struct btsdec_regs regs;
	uint64_t addr;
	uint8_t c[2];

	if (btsdec_recover_insn(t->rec, k, &addr) ||
	    btsdec_sym_read_code(s->sym, addr, c, sizeof(c)) != sizeof(c))
		return true;
	if ((c[0] == 0xcd && c[1] == 0x80) || (c[0] == 0x0f && c[1] == 0x34))
		return true;
	if (c[0] != 0x0f || c[1] != 0x05)
		return false;
	return btsdec_recover_regs_at(t->rec, k, &regs) ||
	       regs.known[BTSDEC_REG_RAX] != ~0ull || remaps(regs.val[BTSDEC_REG_RAX]);
}

/* The first point from which nothing before the end may have remapped:
 * a read-only mapping held then what the core holds (a single thread:
 * another could mprotect it at any time). */
static size_t read_only_from(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	size_t nr = btsdec_recover_nr(t->rec);

	if (s->nr > 1)
		return nr;
	for (size_t k = nr; k-- > 0;)
		if (may_remap(s, t, k))
			return k + 1;
	return 0;
}

/* Thread t's engine, opened the first time: NULL when the thread has no
 * trace or registers (its only point is the core's state). */
static struct btsdec_recover *engine(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	struct btsdec_err err;

	if (t->rec_tried)
		return t->rec;
	t->rec_tried = true;
	if (btsdec_recover_open(s->core, s->sym, s->cls, t->th, &t->rec, &err)) {
		t->rec = NULL;
		return NULL;
	}
	t->at = btsdec_recover_nr(t->rec);
	t->ro_from = read_only_from(s, t);
	return t->rec;
}

/* Not opening the engine: a thread is at the end until it first moves,
 * and gdb's register reads at the connection wait 2 s at most (its
 * `remote timeout`), where a resume's stop reply is waited for. */
bool stub_replay_before_end(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	return s->replay && t->rec && t->at < btsdec_recover_nr(t->rec);
}

size_t stub_replay_back(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	return s->replay && t->rec ? btsdec_recover_nr(t->rec) - t->at : 0;
}

void stub_replay_put_reg(struct btsdec_gdbstub *s, struct stub_thread *t,
			 size_t n, struct btsdec_rsp_buf *r)
{
	struct btsdec_regs regs;
	uint64_t pc;
	size_t size = stub_reg_size(n);

	/* only the engine's registers; the others are not followed */
	if (n >= BTSDEC_REG__MAX || !engine(s, t) ||
	    btsdec_recover_regs_at(t->rec, t->at, &regs)) {
		for (size_t i = 0; i < size; i++)
			btsdec_rsp_puts(r, "xx");
		return;
	}
	if (n == BTSDEC_REG_RIP && !btsdec_recover_insn(t->rec, t->at, &pc)) {
		regs.val[n] = pc;	/* the trace proves it */
		regs.known[n] = ~0ull;
	}
	for (size_t i = 0; i < size; i++) {
		uint8_t b = (uint8_t)(regs.val[n] >> 8 * i);

		if ((uint8_t)(regs.known[n] >> 8 * i) == 0xff)
			btsdec_rsp_put_hex(r, &b, 1);
		else
			btsdec_rsp_puts(r, "xx");
	}
}

size_t stub_replay_read_mem(struct btsdec_gdbstub *s, struct stub_thread *t,
			    uint64_t addr, uint8_t *buf, size_t len)
{
	struct btsdec_recover *rec = engine(s, t);
	bool *known = malloc(len ? len : 1);
	size_t n = 0;

	if (!rec || !known || btsdec_recover_mem_at(rec, t->at, addr, len, buf, known) < 0) {
		free(known);
		return 0;
	}
	for (; n < len && addr + n >= addr; n++) {
		if (known[n])
			continue;
		/* not followed by the engine, but never writable since */
		if (t->at < t->ro_from || !btsdec_core_read_only(s->core, addr + n, 1) ||
		    stub_read_mem(s, addr + n, buf + n, 1) != 1)
			break;
	}
	free(known);
	return n;
}

/* ---- Moving ---------------------------------------------------------------- */

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && (a - b < blen || b - a < alen);
}

/* Whether the watched bytes are proven the same at points i and j. */
static bool same_at(struct stub_thread *t, size_t i, size_t j, const struct stub_point *w)
{
	uint8_t a[WATCH_MAX], b[WATCH_MAX];
	bool ka[WATCH_MAX], kb[WATCH_MAX];

	if (btsdec_recover_mem_at(t->rec, i, w->addr, w->len, a, ka) != (ssize_t)w->len ||
	    btsdec_recover_mem_at(t->rec, j, w->addr, w->len, b, kb) != (ssize_t)w->len)
		return false;
	return !memcmp(a, b, w->len);
}

/* Whether one of instruction k's n accesses (n < 0: not known) touches
 * access watchpoint w: STOP_AWATCH (*hit set), STOP_MAYBE or STOP_STEP. */
static enum stop access_check(const uint64_t *addr, const size_t *len, int n,
			      const struct stub_point *w, uint64_t *hit)
{
	if (n < 0)
		return STOP_MAYBE;
	for (int j = 0; j < n; j++)
		if (overlaps(addr[j], len[j], w->addr, w->len)) {
			*hit = addr[j] > w->addr ? addr[j] : w->addr;
			return STOP_AWATCH;
		}
	return STOP_STEP;
}

/* Instruction k's effect on the watchpoints: STOP_STEP (none),
 * STOP_WATCH or STOP_AWATCH (*hit: the watched address it touches) or
 * STOP_MAYBE.  A write that cannot be placed is passed over only where
 * the watched bytes are proven the same across it. */
static enum stop watch_check(struct btsdec_gdbstub *s, struct stub_thread *t,
			     size_t k, uint64_t *hit)
{
	uint64_t addr, acc[BTSDEC_RECOVER_MAX_ACCESS];
	size_t len, acc_len[BTSDEC_RECOVER_MAX_ACCESS];
	int ret = btsdec_recover_store(t->rec, k, &addr, &len), n = -1;
	bool got = false;
	enum stop w;

	for (size_t i = 0; i < s->nr_pts; i++) {
		const struct stub_point *p = &s->pts[i];

		if (p->type == 4) {
			if (!got)
				n = btsdec_recover_access(t->rec, k, acc, acc_len);
			got = true;
			if ((w = access_check(acc, acc_len, n, p, hit)) != STOP_STEP)
				return w;
			continue;
		}
		if (p->type != 2)
			continue;
		if (!ret && overlaps(addr, len, p->addr, p->len)) {
			*hit = addr > p->addr ? addr : p->addr;
			return STOP_WATCH;
		}
		if (ret && !same_at(t, k, k + 1, p))
			return STOP_MAYBE;
	}
	return STOP_STEP;
}

static bool at_breakpoint(struct btsdec_gdbstub *s, struct stub_thread *t)
{
	uint64_t pc;

	if (btsdec_recover_insn(t->rec, t->at, &pc))
		return false;
	for (size_t i = 0; i < s->nr_pts; i++)
		if (s->pts[i].type < 2 && s->pts[i].addr == pc)
			return true;
	return false;
}

static bool is_gap(struct stub_thread *t, size_t k)
{
	uint64_t addr;

	return btsdec_recover_insn(t->rec, k, &addr) == -ENODATA;
}

/* One instruction back (a gap is crossed with the instruction before
 * it: a point before a gap has no pc). */
static enum stop back_one(struct btsdec_gdbstub *s, struct stub_thread *t, uint64_t *hit)
{
	size_t k = t->at;

	do {
		if (k == 0)
			return STOP_BEGIN;
		k--;
	} while (is_gap(t, k));
	for (size_t j = t->at; j-- > k;) {
		enum stop w = watch_check(s, t, j, hit);

		if (w != STOP_STEP) {
			t->at = k;
			return w;
		}
	}
	t->at = k;
	return STOP_STEP;
}

static enum stop forward_one(struct btsdec_gdbstub *s, struct stub_thread *t, uint64_t *hit)
{
	size_t nr = btsdec_recover_nr(t->rec), k = t->at + 1;
	enum stop w = STOP_STEP;

	if (t->at == nr)
		return STOP_END;
	while (k < nr && is_gap(t, k))
		k++;
	for (size_t j = t->at; j < k && w == STOP_STEP; j++)
		w = watch_check(s, t, j, hit);
	t->at = k;
	return w != STOP_STEP ? w : k == nr ? STOP_END : STOP_STEP;
}

static enum stop move(struct btsdec_gdbstub *s, struct stub_thread *t, bool back,
		      bool step, uint64_t *hit)
{
	for (;;) {
		enum stop why = back ? back_one(s, t, hit) : forward_one(s, t, hit);

		if (why != STOP_STEP || step)
			return why;
		if (at_breakpoint(s, t))
			return STOP_BREAK;
	}
}

int stub_replay_resume(struct btsdec_gdbstub *s, struct stub_thread *t, bool back,
		       bool step, struct btsdec_rsp_buf *r)
{
	enum stop why = STOP_END;
	uint64_t hit = 0;

	/* gdb takes the thread of a stop reply as the one Hg named since
	 * (remote.c's record_currthread), as gdbserver makes it */
	s->cur = (size_t)(t - s->t);
	if (engine(s, t))
		why = move(s, t, back, step, &hit);
	else if (back)
		why = STOP_BEGIN;
	if (why == STOP_END) {
		stub_put_stop(s, t, r);
		return 0;
	}
	btsdec_rsp_puts(r, "T05");
	if (why == STOP_BEGIN)
		btsdec_rsp_puts(r, "replaylog:begin;");
	else if (why == STOP_WATCH || why == STOP_AWATCH)
		btsdec_rsp_printf(r, "%s:%llx;", why == STOP_WATCH ? "watch" : "awatch",
				  (unsigned long long)hit);
	btsdec_rsp_puts(r, "thread:");
	stub_put_thread_id(s, r, t);
	btsdec_rsp_puts(r, ";");
	return 0;
}

/* ---- Breakpoints and watchpoints ------------------------------------------- */

/* "TYPE,ADDR,KIND": Z0 and Z1 break at ADDR, Z2 watches KIND bytes
 * written at ADDR, Z4 read or written.  Z3 (reads alone) is not served,
 * as x86's debug registers cannot: gdb makes rwatch of Z4. */
int stub_replay_point(struct btsdec_gdbstub *s, bool insert, const char *a,
		      struct btsdec_rsp_buf *r)
{
	struct stub_point p = { .type = (uint8_t)(a[0] - '0') };
	size_t i;

	if (a[0] < '0' || a[0] > '4' || a[0] == '3')
		return 0;	/* the empty reply: not supported */
	a++;
	if (*a++ != ',' || btsdec_rsp_hex_u64(&a, &p.addr) || *a++ != ',' ||
	    btsdec_rsp_hex_u64(&a, &p.len) || *a ||
	    (p.type >= 2 && (!p.len || p.len > WATCH_MAX))) {
		btsdec_rsp_puts(r, ERR_MALFORMED);
		return 0;
	}
	if (p.type < 2)
		p.len = 1;
	for (i = 0; i < s->nr_pts; i++)
		if (s->pts[i].type == p.type && s->pts[i].addr == p.addr &&
		    s->pts[i].len == p.len)
			break;
	if (!insert && i < s->nr_pts) {
		s->pts[i] = s->pts[--s->nr_pts];
	} else if (insert && i == s->nr_pts) {
		if (btsdec_grow(&s->pts, &s->cap_pts, s->nr_pts + 1))
			return -ENOMEM;
		s->pts[s->nr_pts++] = p;
	}
	btsdec_rsp_puts(r, "OK");
	return 0;
}

void stub_replay_free(struct btsdec_gdbstub *s)
{
	for (size_t i = 0; s->t && i < s->nr; i++)
		btsdec_recover_free(s->t[i].rec);
	free(s->pts);
}
