// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The decoded model of a core: every selected thread with its trace facts,
 * its classified and symbolized branches and its call segments, decoded
 * once (btsdec_decode) and then handed to every renderer (report.c: text,
 * JSON; btsdumpd: the journal).  The records are borrowed from the core and
 * the symbol strings from the symbolizer, which must both outlive the model;
 * per record it holds one byte more (decode.c).  Process context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

static int model_copy_head(struct btsdec_model *m, struct btsdec_core *core,
			   const struct btsdec_model_opts *o)
{
	size_t nr = btsdec_core_nr_rejects(core);

	m->core = strdup(btsdec_core_path(core));
	m->executable = o && o->executable ? strdup(o->executable) : NULL;
	m->rejects = calloc(nr ? nr : 1, sizeof(*m->rejects));
	m->threads = calloc(btsdec_core_nr_threads(core) + 1, sizeof(*m->threads));
	if (!m->core || (o && o->executable && !m->executable) || !m->rejects || !m->threads)
		return -ENOMEM;
	for (; m->nr_rejects < nr; m->nr_rejects++) {
		m->rejects[m->nr_rejects] = strdup(btsdec_core_reject(core, m->nr_rejects));
		if (!m->rejects[m->nr_rejects])
			return -ENOMEM;
	}
	return 0;
}

int btsdec_model_build(struct btsdec_core *core, struct btsdec_sym *sym,
		       struct btsdec_classifier *cls, const struct btsdec_model_opts *o,
		       struct btsdec_model **out, struct btsdec_err *err)
{
	struct btsdec_model *m = calloc(1, sizeof(*m));
	int ret = m ? model_copy_head(m, core, o) : -ENOMEM;

	for (size_t i = 0; !ret && i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *th = btsdec_core_thread(core, i);
		struct btsdec_model_thread *mt = &m->threads[m->nr_threads];

		if (o && o->have_tid && th->tid != o->tid)
			continue;
		*mt = (struct btsdec_model_thread){
			.tid = th->tid, .signo = th->signo, .faulting = th->faulting,
			.has_trace = th->has_trace, .facts = th->trace,
		};
		mt->facts.recs = NULL;	/* mt->d holds (borrows) the records */
		if (th->has_trace) {
			ret = btsdec_decode_symbols(sym, cls, &th->trace,
						    !(o && o->no_symbols), &mt->d, err);
			if (ret)
				break;
		}
		m->nr_threads++;
	}
	if (ret) {
		btsdec_model_free(m);
		return ret == -ENOMEM ? btsdec_fail(err, ret, "out of memory decoding %s",
						    btsdec_core_path(core)) : ret;
	}
	*out = m;
	return 0;
}

void btsdec_model_free(struct btsdec_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_threads; i++)
		btsdec_decoded_free(&m->threads[i].d);
	for (size_t i = 0; i < m->nr_rejects; i++)
		free(m->rejects[i]);
	free(m->rejects);
	free(m->threads);
	free(m->executable);
	free(m->core);
	free(m);
}
