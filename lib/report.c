// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reports: the per-thread branch list or call history of a core, as text
 * for people or JSON for programs (the same facts in both).  Collect first
 * (btsdec_decode), print after.  Used by btsdump and btsdumpd.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "btsdec.h"

void btsdec_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static const char *signal_name(int sig, char *buf, size_t len)
{
	const char *abbr = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbr)
		snprintf(buf, len, "SIG%s", abbr);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static const char *line_of(const struct btsdec_loc *l, char *buf, size_t len)
{
	if (!l->file)
		return NULL;
	snprintf(buf, len, "%s:%d", l->file, l->line);
	return buf;
}

/* First branch index to show for --last. */
static size_t first_shown(size_t nr, const struct btsdec_report_opts *o)
{
	return o->last && o->last < nr ? nr - o->last : 0;
}

/* ---- text ---------------------------------------------------------------- */

static void text_marker(FILE *out, size_t i, const struct btsdec_record *r)
{
	unsigned int kind = BTS_MARKER_KIND(r->from);

	fprintf(out, "%7zu  %-9s %s", i + 1, "marker", btsdec_marker_name(r));
	if (kind == BTS_MARK_GAP)
		fprintf(out, " (%s), resumed at %llu.%09llus after %llu ns",
			btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)),
			(unsigned long long)r->to / 1000000000,
			(unsigned long long)r->to % 1000000000,
			(unsigned long long)r->flags);
	else
		fprintf(out, " cpu %llu at %llu.%09llus",
			(unsigned long long)r->flags,
			(unsigned long long)r->to / 1000000000,
			(unsigned long long)r->to % 1000000000);
	fputc('\n', out);
}

/* "func+0x12", or "??" like gdb when nothing is known (the address is
 * printed beside it anyway). */
static const char *text_symbol(const struct btsdec_loc *l, char *buf, size_t len)
{
	return l->func ? btsdec_loc_format(l, 0, buf, len) : "??";
}

static void text_branch(FILE *out, size_t i, const struct btsdec_branch *b)
{
	char fs[256], ts[256], fl[256], tl[256];
	const char *fline, *tline;

	if (b->kind == BTSDEC_K_MARKER) {
		text_marker(out, i, &b->rec);
		return;
	}
	fline = line_of(&b->from_loc, fl, sizeof(fl));
	tline = line_of(&b->to_loc, tl, sizeof(tl));
	fprintf(out, "%7zu  %-9s 0x%012llx %-28s -> 0x%012llx %s", i + 1,
		btsdec_kind_name(b->kind), (unsigned long long)b->rec.from,
		text_symbol(&b->from_loc, fs, sizeof(fs)),
		(unsigned long long)b->rec.to,
		text_symbol(&b->to_loc, ts, sizeof(ts)));
	if (fline || tline)
		fprintf(out, "  [%s -> %s]", fline ? fline : "?",
			tline ? tline : "?");
	fputc('\n', out);
}

static void text_segment(FILE *out, size_t i, const struct btsdec_segment *s)
{
	char name[64];

	if (!s->func)
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)s->addr);
	fprintf(out, "%7zu\t%*s%s", i + 1, 2 * s->depth, "",
		s->func ? s->func : name);
	if (s->file && s->line_lo == s->line_hi)
		fprintf(out, "\tat %s:%d", s->file, s->line_lo);
	else if (s->file)
		fprintf(out, "\tat %s:%d,%d", s->file, s->line_lo, s->line_hi);
	fputc('\n', out);
}

static void text_thread_head(FILE *out, const struct btsdec_thread *th)
{
	const struct btsdec_trace *t = &th->trace;
	char sig[32];

	fprintf(out, "thread %d", th->tid);
	if (th->faulting)
		fprintf(out, " (faulting thread, %s)",
			signal_name(th->signo, sig, sizeof(sig)));
	fputc('\n', out);
	if (!th->has_trace) {
		fputs("  no branch trace for this thread\n\n", out);
		return;
	}
	fprintf(out, "  trace: %s, %zu records in a ring of %llu, %s, %s%llu lost, %u gaps\n",
		btsdec_source_name(t->source), t->nr,
		(unsigned long long)t->capacity,
		t->flags & BTS_NOTE_F_WRAPPED ? "wrapped" : "not wrapped",
		t->flags & BTS_NOTE_F_LOST_EXACT ? "" : ">=",
		(unsigned long long)t->lost, t->nr_gaps);
}

static void text_thread(FILE *out, const struct btsdec_thread *th,
			const struct btsdec_decoded *d,
			const struct btsdec_report_opts *o)
{
	size_t i;

	text_thread_head(out, th);
	if (!th->has_trace)
		return;
	if (!d->nr)
		fputs("  (the trace is empty)\n", out);
	if (o->calls) {
		for (i = first_shown(d->nr_seg, o); i < d->nr_seg; i++)
			text_segment(out, i, &d->seg[i]);
	} else {
		for (i = first_shown(d->nr, o); i < d->nr; i++)
			text_branch(out, i, &d->br[i]);
	}
	fputc('\n', out);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_hex(FILE *out, const char *key, uint64_t v)
{
	fprintf(out, "\"%s\":\"0x%llx\"", key, (unsigned long long)v);
}

static void json_marker(FILE *out, const struct btsdec_record *r)
{
	fputs(",\"marker\":", out);
	btsdec_json_string(out, btsdec_marker_name(r));
	fprintf(out, ",\"timestamp_ns\":%llu", (unsigned long long)r->to);
	if (BTS_MARKER_KIND(r->from) == BTS_MARK_GAP) {
		fprintf(out, ",\"gap_ns\":%llu,\"reason\":", (unsigned long long)r->flags);
		btsdec_json_string(out, btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)));
	} else {
		fprintf(out, ",\"cpu\":%llu", (unsigned long long)r->flags);
	}
}

static void json_branch(FILE *out, size_t i, const struct btsdec_branch *b)
{
	char buf[256];

	fprintf(out, "{\"index\":%zu,", i);
	json_hex(out, "from", b->rec.from);
	fputc(',', out);
	json_hex(out, "to", b->rec.to);
	fprintf(out, ",\"flags\":%llu,\"kind\":\"%s\"",
		(unsigned long long)b->rec.flags, btsdec_kind_name(b->kind));
	if (b->kind == BTSDEC_K_MARKER) {
		json_marker(out, &b->rec);
		fputc('}', out);
		return;
	}
	fprintf(out, ",\"indirect\":%s,\"depth\":%d,\"from_symbol\":",
		b->indirect ? "true" : "false", b->depth);
	btsdec_json_string(out, btsdec_loc_format(&b->from_loc, b->rec.from,
						  buf, sizeof(buf)));
	fputs(",\"to_symbol\":", out);
	btsdec_json_string(out, btsdec_loc_format(&b->to_loc, b->rec.to, buf,
						  sizeof(buf)));
	fputs(",\"from_line\":", out);
	btsdec_json_string(out, line_of(&b->from_loc, buf, sizeof(buf)));
	fputs(",\"to_line\":", out);
	btsdec_json_string(out, line_of(&b->to_loc, buf, sizeof(buf)));
	fputs(",\"from_module\":", out);
	btsdec_json_string(out, b->from_loc.module);
	fputs(",\"to_module\":", out);
	btsdec_json_string(out, b->to_loc.module);
	fputc('}', out);
}

static void json_segment(FILE *out, size_t i, const struct btsdec_segment *s)
{
	fprintf(out, "{\"index\":%zu,\"function\":", i);
	btsdec_json_string(out, s->func);
	fputc(',', out);
	json_hex(out, "address", s->addr);
	fprintf(out, ",\"depth\":%d,\"first_branch\":%zu,\"last_branch\":%zu,\"file\":",
		s->depth, s->first, s->last);
	btsdec_json_string(out, s->file);
	fprintf(out, ",\"line_min\":%d,\"line_max\":%d}", s->line_lo, s->line_hi);
}

static void json_trace(FILE *out, const struct btsdec_trace *t)
{
	fprintf(out, "{\"source\":\"%s\",\"capacity\":%llu,\"records\":%zu,"
		"\"wrapped\":%s,\"truncated\":%s,\"lost\":%llu,\"lost_exact\":%s,\"gaps\":%u}",
		btsdec_source_name(t->source), (unsigned long long)t->capacity,
		t->nr, t->flags & BTS_NOTE_F_WRAPPED ? "true" : "false",
		t->flags & BTS_NOTE_F_TRUNCATED ? "true" : "false",
		(unsigned long long)t->lost,
		t->flags & BTS_NOTE_F_LOST_EXACT ? "true" : "false", t->nr_gaps);
}

static void json_thread(FILE *out, const struct btsdec_thread *th,
			const struct btsdec_decoded *d,
			const struct btsdec_report_opts *o)
{
	char sig[32];
	size_t i, first;

	fprintf(out, "{\"tid\":%d,\"faulting\":%s,\"signal\":%d,\"signal_name\":",
		th->tid, th->faulting ? "true" : "false", th->signo);
	btsdec_json_string(out, th->signo ? signal_name(th->signo, sig, sizeof(sig))
					  : NULL);
	fputs(",\"trace\":", out);
	if (th->has_trace)
		json_trace(out, &th->trace);
	else
		fputs("null", out);
	fputs(",\"branches\":[", out);
	first = first_shown(d->nr, o);
	for (i = first; i < d->nr; i++) {
		fputs(i > first ? "," : "", out);
		json_branch(out, i, &d->br[i]);
	}
	fputc(']', out);
	if (o->calls) {
		fputs(",\"calls\":[", out);
		first = first_shown(d->nr_seg, o);
		for (i = first; i < d->nr_seg; i++) {
			fputs(i > first ? "," : "", out);
			json_segment(out, i, &d->seg[i]);
		}
		fputc(']', out);
	}
	fputc('}', out);
}

/* ---- driver -------------------------------------------------------------- */

static void report_head(FILE *out, struct btsdec_core *core,
			const struct btsdec_report_opts *o)
{
	if (o->json) {
		fputs("{\"core\":", out);
		btsdec_json_string(out, btsdec_core_path(core));
		fputs(",\"executable\":", out);
		btsdec_json_string(out, o->executable);
		fputs(",\"rejected\":[", out);
		for (size_t i = 0; i < btsdec_core_nr_rejects(core); i++) {
			fputs(i ? "," : "", out);
			btsdec_json_string(out, btsdec_core_reject(core, i));
		}
		fputs("],\"threads\":[", out);
		return;
	}
	fprintf(out, "core: %s\n", btsdec_core_path(core));
	if (o->executable)
		fprintf(out, "executable: %s\n", o->executable);
	fputc('\n', out);
}

int btsdec_report(FILE *out, struct btsdec_core *core, struct btsdec_sym *sym,
		  struct btsdec_classifier *cls,
		  const struct btsdec_report_opts *o, struct btsdec_err *err)
{
	size_t i, shown = 0;
	int ret;

	report_head(out, core, o);
	for (i = 0; i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *th = btsdec_core_thread(core, i);
		struct btsdec_decoded d = { 0 };

		if (o->have_tid && th->tid != o->tid)
			continue;
		if (th->has_trace) {
			ret = btsdec_decode(sym, cls, &th->trace, &d, err);
			if (ret)
				return ret;
		}
		if (o->json) {
			fputs(shown ? "," : "", out);
			json_thread(out, th, &d, o);
		} else {
			text_thread(out, th, &d, o);
		}
		shown++;
		btsdec_decoded_free(&d);
	}
	if (o->json)
		fputs("]}\n", out);
	if (fflush(out) || ferror(out))
		return btsdec_fail(err, -EIO, "writing the report: %m");
	return 0;
}
