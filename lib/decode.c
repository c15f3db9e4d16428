// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding a trace: classifies and symbolizes each record, then builds the
 * call/return history (function segments with call depth, normalized so the
 * shallowest is 0) the way gdb's `record function-call-history` shows it.
 * Memory stays bounded (issue 16): per record one byte of kind and a depth
 * checkpoint every DEPTH_STRIDE records, beside the trace's own records,
 * which are borrowed; symbols are per distinct address in the symbolizer,
 * classification per distinct `from` address here.  Branches and segments
 * are made on demand (btsdec_decoded_branch, btsdec_decoded_segments).
 * Process context; used by model.c, report.c, btsdumpd and the tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

#define MAX_INSN	16
#define INFO_INDIRECT	0x80	/* info byte: kind | INFO_INDIRECT */
#define INFO_KIND	0x7f
#define DEPTH_STRIDE	64	/* records per depth checkpoint */

/* ---- classification, once per distinct `from` ---------------------------- */

struct cls_ent {
	uint64_t addr;
	uint8_t info;
	bool used;
};

struct cls_cache {
	struct cls_ent *ent;
	size_t cap, used;
};

static size_t cls_slot(uint64_t addr, size_t cap)
{
	addr ^= addr >> 29;
	addr *= 0xbf58476d1ce4e5b9ULL;
	addr ^= addr >> 32;
	return addr & (cap - 1);
}

static int cls_grow(struct cls_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024;
	struct cls_ent *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->ent[i].used)
			continue;
		for (j = cls_slot(c->ent[i].addr, cap); n[j].used; j = (j + 1) & (cap - 1))
			;
		n[j] = c->ent[i];
	}
	free(c->ent);
	c->ent = n;
	c->cap = cap;
	return 0;
}

static uint8_t classify_at(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			   uint64_t from)
{
	uint8_t code[MAX_INSN];
	size_t n = 0;
	bool indirect = false;
	enum btsdec_kind k;

	if (sym)	/* the code comes from the core or the module file */
		n = btsdec_sym_read_code(sym, from, code, sizeof(code));
	k = cls ? btsdec_classify(cls, code, n, from, &indirect) : BTSDEC_K_UNKNOWN;
	return (uint8_t)k | (indirect ? INFO_INDIRECT : 0);
}

/* The info byte of a branch from `from`, classified on first sight. */
static int cls_lookup(struct cls_cache *c, struct btsdec_sym *sym,
		      struct btsdec_classifier *cls, uint64_t from, uint8_t *info)
{
	size_t i;

	if (c->used * 2 >= c->cap && cls_grow(c))
		return -ENOMEM;
	for (i = cls_slot(from, c->cap); c->ent[i].used; i = (i + 1) & (c->cap - 1)) {
		if (c->ent[i].addr == from) {
			*info = c->ent[i].info;
			return 0;
		}
	}
	*info = classify_at(sym, cls, from);
	c->ent[i] = (struct cls_ent){ .addr = from, .info = *info, .used = true };
	c->used++;
	return 0;
}

/* ---- call depth and segments ------------------------------------------------ */

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

static void get_loc(const struct btsdec_decoded *d, uint64_t addr, struct btsdec_loc *l)
{
	if (d->sym && d->symbols)
		btsdec_sym_lookup(d->sym, addr, l);
	else
		memset(l, 0, sizeof(*l));
}

void btsdec_decoded_branch(const struct btsdec_decoded *d, size_t i,
			   struct btsdec_branch *b)
{
	int depth = d->depth_at[i / DEPTH_STRIDE];

	memset(b, 0, sizeof(*b));
	b->rec = d->recs[i];
	b->kind = d->info[i] & INFO_KIND;
	b->indirect = d->info[i] & INFO_INDIRECT;
	for (size_t j = i - i % DEPTH_STRIDE; j <= i; j++)
		depth += depth_delta(d->info[j] & INFO_KIND);
	b->depth = depth;
	if (b->kind == BTSDEC_K_MARKER)
		return;
	get_loc(d, b->rec.from, &b->from_loc);
	get_loc(d, b->rec.to, &b->to_loc);
}

static bool same_func(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
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

static void seg_start(struct btsdec_segment *s, size_t i, const struct btsdec_loc *at,
		      uint64_t addr, int depth)
{
	*s = (struct btsdec_segment){ .func = at->func, .addr = addr,
				      .depth = depth, .first = i, .last = i };
	seg_add_line(s, at);
}

/* Walks the segments in order, giving each from number `first` on to fn
 * once it is complete; depths are relative to `base` (the normalized depth
 * of the trace's start).  Returns the number of segments, or fn's error. */
static long walk_segments(const struct btsdec_decoded *d, int base, size_t first,
			  btsdec_segment_fn fn, void *arg)
{
	struct btsdec_segment cur;
	struct btsdec_branch b;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < d->nr; i++) {
		int delta;

		b.kind = d->info[i] & INFO_KIND;
		if (b.kind == BTSDEC_K_MARKER)
			continue;
		b.rec = d->recs[i];
		get_loc(d, b.rec.from, &b.from_loc);
		if (!n) {
			seg_start(&cur, i, &b.from_loc, b.rec.from, base);
			n = 1;
		}
		cur.last = i;
		seg_add_line(&cur, &b.from_loc);
		delta = depth_delta(b.kind);
		base += delta;
		get_loc(d, b.rec.to, &b.to_loc);
		if (delta || !same_func(cur.func, b.to_loc.func)) {
			if (fn && n - 1 >= first && (ret = fn(arg, n - 1, &cur)))
				return ret;
			seg_start(&cur, i + 1, &b.to_loc, b.rec.to, base);
			n++;
		}
	}
	if (fn && n && n - 1 >= first && (ret = fn(arg, n - 1, &cur)))
		return ret;
	return (long)n;
}

int btsdec_decoded_segments(const struct btsdec_decoded *d, size_t first,
			    btsdec_segment_fn fn, void *arg)
{
	long n = walk_segments(d, d->nr ? d->depth_at[0] : 0, first, fn, arg);

	return n < 0 ? (int)n : 0;
}

/* Depth checkpoints, normalized so that the shallowest point is 0. */
static void build_depth(struct btsdec_decoded *d)
{
	int depth = 0, min = 0;
	size_t i;

	for (i = 0; i < d->nr; i++) {
		if (i % DEPTH_STRIDE == 0)
			d->depth_at[i / DEPTH_STRIDE] = depth;
		depth += depth_delta(d->info[i] & INFO_KIND);
		if (depth < min)
			min = depth;
	}
	for (i = 0; i < (d->nr + DEPTH_STRIDE - 1) / DEPTH_STRIDE; i++)
		d->depth_at[i] -= min;
}

/* ---- the decoder --------------------------------------------------------------- */

int btsdec_decode(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		  const struct btsdec_trace *t, struct btsdec_decoded *out,
		  struct btsdec_err *err)
{
	return btsdec_decode_symbols(sym, cls, t, true, out, err);
}

static int decode_records(struct btsdec_decoded *d, struct btsdec_classifier *cls)
{
	struct cls_cache cc = { 0 };
	struct btsdec_loc l;
	int ret = 0;

	for (size_t i = 0; !ret && i < d->nr; i++) {
		const struct btsdec_record *r = &d->recs[i];

		if (btsdec_is_marker(r)) {
			d->info[i] = BTSDEC_K_MARKER;
			continue;
		}
		get_loc(d, r->from, &l);	/* symbolized once, here */
		get_loc(d, r->to, &l);
		ret = cls_lookup(&cc, d->sym, cls, r->from, &d->info[i]);
	}
	free(cc.ent);
	return ret;
}

int btsdec_decode_symbols(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			  const struct btsdec_trace *t, bool symbols,
			  struct btsdec_decoded *out, struct btsdec_err *err)
{
	struct btsdec_decoded d = { .nr = t->nr, .recs = t->recs, .sym = sym,
				    .symbols = symbols };
	long n;

	if (t->nr) {
		d.info = malloc(t->nr);
		d.depth_at = malloc((t->nr + DEPTH_STRIDE - 1) / DEPTH_STRIDE *
				    sizeof(*d.depth_at));
		if (!d.info || !d.depth_at || decode_records(&d, cls)) {
			btsdec_decoded_free(&d);
			return btsdec_fail(err, -ENOMEM, "out of memory decoding %zu records",
					   t->nr);
		}
	}
	build_depth(&d);
	n = walk_segments(&d, 0, 0, NULL, NULL);
	d.nr_seg = n > 0 ? (size_t)n : 0;
	*out = d;
	return 0;
}

void btsdec_decoded_free(struct btsdec_decoded *d)
{
	free(d->info);
	free(d->depth_at);
	memset(d, 0, sizeof(*d));
}
