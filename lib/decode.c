// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding a trace: classifies and symbolizes each record, then builds the
 * call/return history (function segments with call depth, normalized so the
 * shallowest is 0) the way gdb's `record function-call-history` shows it.
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
	b->kind = cls ? btsdec_classify(cls, code, n, r->from, &b->indirect)
		      : BTSDEC_K_UNKNOWN;
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
	*out = d;
	return 0;
}

void btsdec_decoded_free(struct btsdec_decoded *d)
{
	free(d->br);
	free(d->seg);
	memset(d, 0, sizeof(*d));
}
