// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The text renderer of the decoded model, for people: per thread the
 * branch list or call history (indirect and smashed-stack marks, the fault
 * line, missing modules), written as it goes; the one-branch line of
 * btsdumpd's journal entry and the vmcore rings' text.  Every string from
 * the dump reaches the text through lib/escape.c.
 */
#include <errno.h>
#include <string.h>

#include "btsdec.h"
#include "escape.h"
#include "report.h"
#include "ringtext.h"

/* ---- text ---------------------------------------------------------------- */

/* Every string from a core or a file (paths, module and symbol names) goes
 * through lib/escape.c before it reaches the text: a name cannot move the
 * cursor or forge a line. */

/* l's "file:line", escaped; NULL without a file. */
static const char *text_line(const struct btsdec_loc *l, char *buf, size_t len)
{
	char raw[256];

	return btsdec_report_line(l, raw, sizeof(raw)) ? btsdec_escape_buf(raw, buf, len, 0) : NULL;
}

static void text_marker(FILE *out, int width, size_t i, const struct btsdec_record *r)
{
	char what[128];

	fprintf(out, "%*zu  %-9s %s", width, i + 1, "marker",
		btsdec_marker_describe(r, what, sizeof(what)));
}

/* "func+0x12"; "module+0x1234" (from the module's load address) in a
 * module without a symbol there or whose file is missing; "??" like gdb
 * when nothing is known (the address is printed beside it anyway). */
static const char *text_symbol(const struct btsdec_loc *l, char *buf, size_t len)
{
	char raw[256];

	if (l->func)
		return btsdec_escape_buf(btsdec_loc_format(l, 0, raw, sizeof(raw)), buf, len, 0);
	if (!l->module)
		return "??";
	snprintf(raw, sizeof(raw), "%s+0x%llx", l->module, (unsigned long long)l->mod_off);
	return btsdec_escape_buf(raw, buf, len, 0);
}

/* The kind column: "call*", "jump*" for an indirect call or jump. */
static const char *text_kind(const struct btsdec_branch *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", btsdec_kind_name(b->kind), b->indirect ? "*" : "");
	return buf;
}

/* One branch line without its newline; the number right-aligned in width. */
static void text_branch(FILE *out, int width, size_t i, const struct btsdec_branch *b)
{
	char fs[256], ts[256], fl[256], tl[256], kind[16], cyc[32];
	const char *fline, *tline;

	if (b->kind == BTSDEC_K_MARKER) {
		text_marker(out, width, i, &b->rec);
		return;
	}
	fline = text_line(&b->from_loc, fl, sizeof(fl));
	tline = text_line(&b->to_loc, tl, sizeof(tl));
	fprintf(out, "%*zu  %-9s 0x%012llx %-28s -> 0x%012llx %s", width, i + 1,
		text_kind(b, kind, sizeof(kind)), (unsigned long long)b->rec.from,
		text_symbol(&b->from_loc, fs, sizeof(fs)),
		(unsigned long long)b->rec.to,
		text_symbol(&b->to_loc, ts, sizeof(ts)));
	if (fline || tline)
		fprintf(out, "  [%s -> %s]", fline ? fline : "?",
			tline ? tline : "?");
	fputs(btsdec_cycles_text(&b->rec, cyc, sizeof(cyc)), out);
	if (b->smashed)
		fputs("  <- smashed stack? no call returns here", out);
	if (b->inferred)
		fprintf(out, "  (inferred: %s not recorded)", btsdec_kind_name(b->kind));
}

/* "indirect call in dispatch", "return at crasher+0x12e0", ... */
static void text_branch_what(FILE *out, const struct btsdec_branch *b)
{
	char buf[256];

	fprintf(out, "%s%s", b->indirect ? "indirect " : "", btsdec_kind_name(b->kind));
	if (b->from_loc.func)
		fprintf(out, " in %s", btsdec_escape_buf(b->from_loc.func, buf, sizeof(buf), 0));
	else
		fprintf(out, " at %s", text_symbol(&b->from_loc, buf, sizeof(buf)));
}

/* The line that ties the fault to the trail, without indent or newline
 * (ends a thread's report; btsdumpd's FAULT field). */
void btsdec_render_fault_line(FILE *out, const struct btsdec_model_thread *th)
{
	const struct btsdec_fault *f = &th->fault;
	struct btsdec_branch b;
	char sym[256];

	fprintf(out, "faulted at 0x%llx", (unsigned long long)f->pc);
	if (f->loc.func || f->loc.module)
		fprintf(out, " %s", text_symbol(&f->loc, sym, sizeof(sym)));
	switch (f->rel) {
	case BTSDEC_FAULT_TARGET:
		fprintf(out, " = target of #%zu (", f->branch + 1);
		break;
	case BTSDEC_FAULT_RUN:
		fprintf(out, " = 0x%llx bytes into the straight-line run after #%zu (",
			(unsigned long long)f->run, f->branch + 1);
		break;
	case BTSDEC_FAULT_UNRELATED:
		fprintf(out, ": not reached by straight-line code from the target of #%zu (",
			f->branch + 1);
		break;
	case BTSDEC_FAULT_UNKNOWN:
		fprintf(out, ": the code after the target of #%zu cannot be read to relate it (",
			f->branch + 1);
		break;
	default:
		fputs(": no branch in the trace to tie it to", out);
	}
	if (f->rel != BTSDEC_FAULT_NO_TRAIL) {
		btsdec_thread_branch(th, f->branch, &b);
		text_branch_what(out, &b);
		fputs(f->inferred ? ", inferred)" : ")", out);
	}
	if (f->has_addr && f->addr != f->pc)
		fprintf(out, "; fault address 0x%llx", (unsigned long long)f->addr);
}

static void text_fault(FILE *out, const struct btsdec_model_thread *th)
{
	fputs("  ", out);
	btsdec_render_fault_line(out, th);
	fputc('\n', out);
}

void btsdec_render_branch_line(FILE *out, int width, size_t i, const struct btsdec_branch *b)
{
	text_branch(out, width, i, b);
}

#define MAX_INDENT	32

static void text_segment(FILE *out, size_t i, const struct btsdec_segment *s)
{
	char name[64];

	if (!s->func)
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)s->addr);
	/* indented by depth, up to MAX_INDENT levels (deep recursion,
	 * or a trail whose returns were not recorded) */
	fprintf(out, "%7zu\t%*s", i + 1, 2 * (s->depth < MAX_INDENT ? s->depth : MAX_INDENT), "");
	btsdec_escape_put(out, s->func ? s->func : name, 0);
	if (s->file) {
		fputs("\tat ", out);
		btsdec_escape_put(out, s->file, 0);
	}
	if (s->file && s->line_lo == s->line_hi)
		fprintf(out, ":%d", s->line_lo);
	else if (s->file)
		fprintf(out, ":%d,%d", s->line_lo, s->line_hi);
	fputc('\n', out);
}

static void text_thread_head(FILE *out, const struct btsdec_model_thread *th)
{
	const struct btsdec_trace *t = &th->facts;
	char sig[32];

	fprintf(out, "thread %d", th->tid);
	if (th->faulting)
		fprintf(out, " (faulting thread, %s)",
			btsdec_report_signal_name(th->signo, sig, sizeof(sig)));
	fputc('\n', out);
	if (!th->has_trace) {
		fputs("  no branch trace for this thread\n", out);
		return;
	}
	fprintf(out, "  trace: %s, %zu records in a ring of %llu, %s, %s%llu lost, %u gaps\n",
		btsdec_source_name(t->source), t->nr,
		(unsigned long long)t->capacity,
		t->flags & BTS_NOTE_F_WRAPPED ? "wrapped" : "not wrapped",
		t->flags & BTS_NOTE_F_LOST_EXACT ? "" : ">=",
		(unsigned long long)t->lost, t->nr_gaps);
}

static int text_segment_fn(void *out, size_t i, const struct btsdec_segment *s)
{
	text_segment(out, i, s);
	return 0;
}

void btsdec_render_text_trail(FILE *out, const struct btsdec_decoded *d,
			      const struct btsdec_render_opts *o)
{
	struct btsdec_branch b;

	if (!d->nr)
		fputs("  (the trace is empty)\n", out);
	if (o->calls) {
		btsdec_decoded_segments(d, btsdec_report_first(d->nr_seg, o), text_segment_fn, out);
		return;
	}
	for (size_t i = btsdec_report_first(d->nr, o); i < d->nr; i++) {
		btsdec_decoded_branch(d, i, &b);
		text_branch(out, 7, i, &b);
		fputc('\n', out);
	}
}

void btsdec_render_ring_decoded(FILE *out, const struct btsdec_ring_text *v,
				const struct btsdec_decoded *d, size_t last, bool calls)
{
	size_t take = last && last < v->nr ? last : v->nr;

	btsdec_ring_text_heading(out, v, take);
	if (calls && v->source == BTS_SOURCE_EMUL) {
		fputs("  (no call history: the emulation records kernel function "
		      "entries, not returns)\n", out);
		return;
	}
	btsdec_render_text_trail(out, d, &(struct btsdec_render_opts){
		.calls = calls, .last = take ? take : SIZE_MAX });
}

static void text_thread(FILE *out, const struct btsdec_model_thread *th,
			const struct btsdec_render_opts *o)
{
	struct btsdec_branch b;

	text_thread_head(out, th);
	if (th->has_trace)
		btsdec_render_text_trail(out, &th->d, o);
	for (size_t i = th->d.nr; !o->calls && i < btsdec_thread_nr_branches(th); i++) {
		btsdec_thread_branch(th, i, &b);
		text_branch(out, 7, i, &b);	/* the inferred branch */
		fputc('\n', out);
	}
	if (th->has_fault)
		text_fault(out, th);
	fputc('\n', out);
}
int btsdec_render_text(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err)
{
	btsdec_escape_line(out, "core", "%s", m->core);
	if (m->executable)
		btsdec_escape_line(out, "executable", "%s", m->executable);
	for (size_t i = 0; i < m->nr_missing; i++)
		btsdec_escape_line(out, "missing", "%s, build-id %s (addresses in it as "
				   "%s+OFFSET)", m->missing[i].path, *m->missing[i].build_id ?
				   m->missing[i].build_id : "unknown", m->missing[i].module);
	fputc('\n', out);
	for (size_t i = 0; i < m->nr_threads; i++)
		text_thread(out, &m->threads[i], o);
	return btsdec_report_check(m, out, err);
}
