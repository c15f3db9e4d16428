// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding a trace: classifies and symbolizes each record, then builds the
 * call/return history (function segments with call depth, normalized so the
 * shallowest is 0) the way gdb's `record function-call-history` shows it,
 * flags returns that smashed the stack (ret_smashed), and relates the
 * fault's pc to the trail's newest branch (btsdec_fault_relate).
 * Process context; used by report.c, btsdumpd and the tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

#define MAX_INSN	16

static void decode_one(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		       bool symbols, const struct btsdec_record *r,
		       struct btsdec_branch *b)
{
	uint8_t code[MAX_INSN];
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	b->rec = *r;
	if (btsdec_is_marker(r)) {
		b->kind = BTSDEC_K_MARKER;
		return;
	}
	if (sym && symbols) {
		btsdec_sym_lookup(sym, r->from, &b->from_loc);
		btsdec_sym_lookup(sym, r->to, &b->to_loc);
	}
	if (sym)	/* the code comes from the core or the module file */
		n = btsdec_sym_read_code(sym, r->from, code, sizeof(code));
	if (cls) {
		size_t size;

		b->kind = btsdec_classify_insn(cls, code, n, r->from, &b->indirect, &size);
		b->size = size;
	}
}

/* ---- returns that go where no call came from ------------------------------ */

/* The return addresses of the calls seen so far: an open-addressing set. */
struct ret_set {
	uint64_t *slot;		/* 0 = empty (no call returns to 0) */
	size_t cap;		/* a power of two, more than twice the calls */
};

static size_t ret_slot(const struct ret_set *set, uint64_t a)
{
	size_t i = (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 20) & (set->cap - 1);

	while (set->slot[i] && set->slot[i] != a)
		i = (i + 1) & (set->cap - 1);
	return i;
}

/* Whether the instruction ending right before addr is a call: 1 yes, 0 no,
 * -1 the code there cannot be read.  x86 does not decode backwards, so
 * each length a call can have is tried. */
static int follows_call(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			uint64_t addr)
{
	uint8_t code[MAX_INSN];
	size_t k, size;
	bool ind;

	if (addr < MAX_INSN ||
	    btsdec_sym_read_code(sym, addr - MAX_INSN, code, MAX_INSN) < MAX_INSN)
		return -1;
	for (k = 2; k < MAX_INSN; k++)
		if (btsdec_classify_insn(cls, code + MAX_INSN - k, k, addr - k, &ind,
					 &size) == BTSDEC_K_CALL && size == k)
			return 1;
	return 0;
}

/*
 * The smashed-stack rule (docs/json.md `smashed_stack`, docs/btsdump.md):
 * a return is flagged when its target is not right after any call seen
 * earlier in the trail (that call's `from` plus its length), and not right
 * after a call instruction in the code either: the bytes before the target
 * (from the core or the module file) end in no call, or the target lies in
 * no mapping of the process at all (0x414141414141).  The second test
 * spares returns into frames entered before the trail began (a wrapped
 * ring); a target inside a mapping whose code cannot be read is not
 * flagged, since nothing there says it is wrong.
 */
static bool ret_smashed(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			const struct ret_set *calls, const struct btsdec_branch *b)
{
	uint64_t to = b->rec.to;
	int after;

	if (b->kind != BTSDEC_K_RETURN || !sym || !cls)
		return false;
	if (to && calls->slot[ret_slot(calls, to)] == to)
		return false;
	after = follows_call(sym, cls, to);
	return after < 0 ? !btsdec_sym_mapped(sym, to) : !after;
}

static int mark_smashed(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			struct btsdec_decoded *d)
{
	struct ret_set calls = { .cap = 16 };

	while (calls.cap < 2 * d->nr + 2)
		calls.cap *= 2;
	calls.slot = calloc(calls.cap, sizeof(*calls.slot));
	if (!calls.slot)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr; i++) {
		struct btsdec_branch *b = &d->br[i];
		uint64_t ret = b->rec.from + b->size;

		b->smashed = ret_smashed(sym, cls, &calls, b);
		if (b->kind == BTSDEC_K_CALL && b->size && ret)
			calls.slot[ret_slot(&calls, ret)] = ret;
	}
	free(calls.slot);
	return 0;
}

static bool same_func(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* How a branch changes the call depth: +1 calls, -1 returns, 0 others. */
static int depth_delta(enum btsdec_kind k)
{
	switch (k) {
	case BTSDEC_K_CALL: case BTSDEC_K_SYSCALL: case BTSDEC_K_INTERRUPT:
		return 1;
	case BTSDEC_K_RETURN: case BTSDEC_K_SYSRET: case BTSDEC_K_IRET:
		return -1;
	default:
		return 0;
	}
}

static void seg_add_line(struct btsdec_segment *s, const struct btsdec_loc *l)
{
	if (!l->file || !l->line)
		return;
	if (!s->file)
		s->file = l->file;
	if (strcmp(s->file, l->file))
		return;
	if (!s->line_lo || l->line < s->line_lo)
		s->line_lo = l->line;
	if (l->line > s->line_hi)
		s->line_hi = l->line;
}

static struct btsdec_segment *seg_new(struct btsdec_decoded *d, size_t i,
				      const struct btsdec_loc *at, uint64_t addr,
				      int depth)
{
	struct btsdec_segment *s = &d->seg[d->nr_seg++];

	*s = (struct btsdec_segment){ .func = at->func, .addr = addr,
				      .depth = depth, .first = i, .last = i };
	seg_add_line(s, at);
	return s;
}

static void build_history(struct btsdec_decoded *d)
{
	struct btsdec_segment *cur = NULL;
	int depth = 0, min = 0;
	size_t i;

	for (i = 0; i < d->nr; i++) {
		struct btsdec_branch *b = &d->br[i];
		int delta = depth_delta(b->kind);

		if (b->kind == BTSDEC_K_MARKER) {
			b->depth = depth;
			continue;
		}
		if (!cur)
			cur = seg_new(d, i, &b->from_loc, b->rec.from, 0);
		cur->last = i;
		seg_add_line(cur, &b->from_loc);
		depth += delta;
		if (depth < min)
			min = depth;
		b->depth = depth;
		if (delta || !same_func(cur->func, b->to_loc.func))
			cur = seg_new(d, i + 1, &b->to_loc, b->rec.to, depth);
	}
	for (i = 0; i < d->nr; i++)
		d->br[i].depth -= min;
	for (i = 0; i < d->nr_seg; i++)
		d->seg[i].depth -= min;
}

int btsdec_decode(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		  const struct btsdec_trace *t, struct btsdec_decoded *out,
		  struct btsdec_err *err)
{
	return btsdec_decode_symbols(sym, cls, t, true, out, err);
}

int btsdec_decode_symbols(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			  const struct btsdec_trace *t, bool symbols,
			  struct btsdec_decoded *out, struct btsdec_err *err)
{
	struct btsdec_decoded d = { .nr = t->nr };

	if (t->nr) {
		d.br = calloc(t->nr, sizeof(*d.br));
		/* at most one segment per branch, plus the first */
		d.seg = calloc(t->nr + 1, sizeof(*d.seg));
		if (!d.br || !d.seg) {
			btsdec_decoded_free(&d);
			return btsdec_fail(err, -ENOMEM, "out of memory decoding %zu records",
					   t->nr);
		}
	}
	for (size_t i = 0; i < t->nr; i++)
		decode_one(sym, cls, symbols, &t->recs[i], &d.br[i]);
	build_history(&d);
	if (mark_smashed(sym, cls, &d)) {
		btsdec_decoded_free(&d);
		return btsdec_fail(err, -ENOMEM, "out of memory decoding %zu records",
				   t->nr);
	}
	*out = d;
	return 0;
}

void btsdec_decoded_free(struct btsdec_decoded *d)
{
	free(d->br);
	free(d->seg);
	memset(d, 0, sizeof(*d));
}

/* ---- the fault tied to the trail ------------------------------------------ */

/* The longest straight-line run searched for pc after the newest branch. */
#define MAX_RUN		(64 * 1024)

static const char *const fault_rel_names[BTSDEC_FAULT__MAX] = {
	[BTSDEC_FAULT_NO_TRAIL] = "no_trail",
	[BTSDEC_FAULT_TARGET] = "target",
	[BTSDEC_FAULT_RUN] = "run",
	[BTSDEC_FAULT_UNRELATED] = "unrelated",
	[BTSDEC_FAULT_UNKNOWN] = "unknown",
};

const char *btsdec_fault_rel_name(enum btsdec_fault_rel r)
{
	return (unsigned int)r < BTSDEC_FAULT__MAX ? fault_rel_names[r] : "invalid";
}

/* Whether execution cannot fall through an instruction of this kind
 * without the trail recording it (a conditional jump falls through when
 * not taken, a syscall returns to the next instruction). */
static bool leaves_run(enum btsdec_kind k)
{
	return k == BTSDEC_K_CALL || k == BTSDEC_K_RETURN || k == BTSDEC_K_JUMP ||
	       k == BTSDEC_K_IRET || k == BTSDEC_K_SYSRET;
}

/* Walks the code from `from` towards pc, one instruction at a time. */
static enum btsdec_fault_rel walk_run(struct btsdec_sym *sym,
				      struct btsdec_classifier *cls,
				      uint64_t from, uint64_t pc)
{
	uint8_t code[MAX_INSN];
	uint64_t a = from;
	size_t n, size;
	bool ind;

	while (a != pc) {
		if (pc < a || pc - from > MAX_RUN)
			return BTSDEC_FAULT_UNRELATED;
		if (!sym || !cls)
			return BTSDEC_FAULT_UNKNOWN;
		n = btsdec_sym_read_code(sym, a, code, sizeof(code));
		if (leaves_run(btsdec_classify_insn(cls, code, n, a, &ind, &size)))
			return BTSDEC_FAULT_UNRELATED;
		if (!size)
			return BTSDEC_FAULT_UNKNOWN;
		a += size;
	}
	return BTSDEC_FAULT_RUN;
}

void btsdec_fault_relate(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 const struct btsdec_decoded *d, struct btsdec_fault *f)
{
	size_t i = d->nr;

	while (i && d->br[i - 1].kind == BTSDEC_K_MARKER)
		i--;
	f->run = 0;
	if (!i) {
		f->rel = BTSDEC_FAULT_NO_TRAIL;
		return;
	}
	f->branch = i - 1;
	if (f->pc == d->br[i - 1].rec.to) {
		f->rel = BTSDEC_FAULT_TARGET;
		return;
	}
	f->rel = walk_run(sym, cls, d->br[i - 1].rec.to, f->pc);
	if (f->rel == BTSDEC_FAULT_RUN)
		f->run = f->pc - d->br[i - 1].rec.to;
}
