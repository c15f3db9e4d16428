// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The core report (btsdec_report): the model built (model.c), rendered as
 * text (report-text.c) or JSON (report-json.c), and checked; the small
 * pieces both renderers share (signal names, file:line, --last).  They
 * only read the model: nothing is decoded in a renderer.  Used by btsdump
 * and btsdumpd.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "btsdec.h"
#include "report.h"

const char *btsdec_report_signal_name(int sig, char *buf, size_t len)
{
	const char *abbr = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbr)
		snprintf(buf, len, "SIG%s", abbr);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

const char *btsdec_report_line(const struct btsdec_loc *l, char *buf, size_t len)
{
	if (!l->file)
		return NULL;
	snprintf(buf, len, "%s:%d", l->file, l->line);
	return buf;
}

/* First branch index to show for --last. */
size_t btsdec_report_first(size_t nr, const struct btsdec_render_opts *o)
{
	return o->last && o->last < nr ? nr - o->last : 0;
}
/* A streamed trace whose core stopped reading while rendered: the report
 * holds zeroed records, so it must not pass for a good one. */
int btsdec_report_check(const struct btsdec_model *m, FILE *out, struct btsdec_err *err)
{
	for (size_t i = 0; i < m->nr_threads; i++)
		if (m->threads[i].has_trace && btsdec_trace_error(m->threads[i].d.t))
			return btsdec_fail(err, -EIO, "%s: thread %d's records could not be "
					   "read again (the core changed?)", m->core,
					   (int)m->threads[i].tid);
	if (fflush(out) || ferror(out))
		return btsdec_fail(err, -EIO, "writing the report: %m");
	return 0;
}
int btsdec_report(FILE *out, struct btsdec_core *core, struct btsdec_sym *sym,
		  struct btsdec_classifier *cls,
		  const struct btsdec_report_opts *o, struct btsdec_err *err)
{
	struct btsdec_model_opts mo = { .have_tid = o->have_tid, .tid = o->tid,
					.no_symbols = o->no_symbols,
					.executable = o->executable };
	struct btsdec_render_opts ro = { .calls = o->calls, .last = o->last };
	struct btsdec_model *m;
	int ret;

	ret = btsdec_model_build(core, sym, cls, &mo, &m, err);
	if (ret)
		return ret;
	ret = o->json ? btsdec_render_json(out, m, &ro, err)
		      : btsdec_render_text(out, m, &ro, err);
	btsdec_model_free(m);
	return ret;
}
