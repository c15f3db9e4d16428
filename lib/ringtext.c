// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The text of one kernel-dump ring (lib/ringtext.h): shared by
 * `btsdump vmcore` (lib/vmreport.c) and `crash> bts` (crash-ext/bts.c, which
 * builds this file in), so both print the same lines for the same ring.
 * Every name passes through lib/escape.c (a symbol or file name from the
 * dump cannot drive the terminal); the heading's `what` is the caller's
 * text, escaped there.
 * Process context; no allocation.
 */
#include "escape.h"
#include "ringtext.h"

/*
 * A kernel ring whose newest record is a SUSPEND marker was not recording
 * when it was read (docs/format.md §1.1): its branches are from before
 * then, and the text says so first, never as "the last branches".
 */
static void ring_suspended(FILE *out, const struct btsdec_ring_text *v)
{
	const struct btsdec_record *r = v->nr ? &v->recs[v->nr - 1] : NULL;
	unsigned long long s, us;

	if (v->user || !r || !btsdec_is_marker(r) ||
	    BTS_MARKER_KIND(r->from) != BTS_MARK_SUSPEND)
		return;
	s = r->to / 1000000000ULL;
	us = r->to % 1000000000ULL / 1000;
	if (BTS_MARKER_SUB(r->from) == BTS_GAP_TASK)
		fprintf(out, "  not recording kernel branches since %llu.%06llu s "
			"(task %llu's ring held BTS); the records below are older\n",
			s, us, (unsigned long long)r->flags);
	else
		fprintf(out, "  not recording kernel branches since %llu.%06llu s "
			"(%s); the records below are older\n", s, us,
			btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)));
}

void btsdec_ring_text_heading(FILE *out, const struct btsdec_ring_text *v, size_t take)
{
	fprintf(out, "%s: %zu of %zu records (%s%sring of %llu%s", v->what, take, v->nr,
		v->copy ? v->copy : "", v->copy ? ", " : "",
		(unsigned long long)v->capacity, v->wrapped ? ", wrapped" : "");
	if (v->frozen && v->freeze_ts)
		fprintf(out, ", frozen at %llu.%06llu s",
			(unsigned long long)(v->freeze_ts / 1000000000ULL),
			(unsigned long long)(v->freeze_ts % 1000000000ULL) / 1000);
	else if (v->frozen)
		fputs(", frozen", out);
	fprintf(out, "), %s", btsdec_source_name(v->source));
	/* the emulation's kernel rings hold function entries, not branches */
	if (!v->user && v->source == BTS_SOURCE_EMUL)
		fputs("; kernel function entries (ftrace), each from its "
		      "reconstructed call site", out);
	fputc('\n', out);
	ring_suspended(out, v);
}

static void ring_record(FILE *out, size_t nth, const struct btsdec_record *r,
			bool raw, btsdec_addr_name_fn name, const void *ctx)
{
	char fb[256], tb[256], fe[256], te[256], cb[32];
	const char *fs, *ts;

	if (raw) {
		fprintf(out, "  [%4zu] %016llx %016llx %016llx\n", nth,
			(unsigned long long)r->from, (unsigned long long)r->to,
			(unsigned long long)r->flags);
		return;
	}
	if (btsdec_is_marker(r)) {
		fprintf(out, "  [%4zu] -- %s --\n", nth,
			btsdec_marker_describe(r, fb, sizeof(fb)));
		return;
	}
	fs = name ? name(ctx, r->from, fb, sizeof(fb)) : NULL;
	ts = name ? name(ctx, r->to, tb, sizeof(tb)) : NULL;
	fs = fs ? btsdec_escape_buf(fs, fe, sizeof(fe), 0) : NULL;
	ts = ts ? btsdec_escape_buf(ts, te, sizeof(te), 0) : NULL;
	fprintf(out, "  [%4zu] %016llx %-28s -> %016llx%s%s%s\n", nth,
		(unsigned long long)r->from, fs ? fs : "",
		(unsigned long long)r->to, ts ? " " : "", ts ? ts : "",
		btsdec_cycles_text(r, cb, sizeof(cb)));
}

void btsdec_ring_text_write(FILE *out, const struct btsdec_ring_text *v, size_t last,
			    bool raw, btsdec_addr_name_fn name, const void *ctx)
{
	size_t take = last && last < v->nr ? last : v->nr;

	btsdec_ring_text_heading(out, v, take);
	if (!v->nr)
		fputs("  (no branches recorded)\n", out);
	for (size_t i = v->nr - take; i < v->nr; i++)
		ring_record(out, i + 1, &v->recs[i], raw, name, ctx);
}
