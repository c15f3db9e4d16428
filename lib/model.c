// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The decoded model of a core: every selected thread with its trace facts,
 * its classified and symbolized branches and its call segments, and the
 * faulting thread's pc tied to its trail (btsdec_fault_relate; a branch
 * the trail lacks, inferred: btsdec_fault_infer), and the
 * modules whose file was not found (with their build-id), decoded
 * once (btsdec_decode) and then handed to every renderer (report-text.c,
 * report-json.c; btsdumpd: the journal).  The records are borrowed from the core and
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

/* The faulting thread's pc, symbolized and tied to its trail, through the
 * branch the trail lacks where the core proves it (infer.c). */
static void model_fault(struct btsdec_model_thread *mt, struct btsdec_core *core,
			const struct btsdec_thread *th, struct btsdec_sym *sym,
			struct btsdec_classifier *cls, bool symbols)
{
	struct btsdec_fault *f = &mt->fault;

	*f = (struct btsdec_fault){
		.pc = th->pc, .signo = th->signo, .has_siginfo = th->has_siginfo,
		.si_code = th->si_code, .has_addr = th->has_addr, .addr = th->addr,
	};
	if (sym && symbols)
		btsdec_sym_lookup(sym, f->pc, &f->loc);
	btsdec_fault_relate(sym, cls, &mt->d, f);
	btsdec_fault_infer(core, th, sym, cls, &mt->d, symbols, f);
	mt->has_fault = true;
}

/* Called for every branch's two locations: found by path in an index. */
static int note_missing(struct btsdec_model *m, const struct btsdec_loc *l)
{
	uint64_t key;
	size_t probe = 0, i;

	if (!l->missing)
		return 0;
	key = btsdec_index_str(l->path);
	while ((i = btsdec_index_next(&m->missing_by_path, key, &probe)) != BTSDEC_INDEX_NONE)
		if (!strcmp(m->missing[i].path, l->path))
			return 0;
	if (btsdec_grow(&m->missing, &m->cap_missing, m->nr_missing + 1) ||
	    btsdec_index_add(&m->missing_by_path, key, m->nr_missing))
		return -ENOMEM;
	m->missing[m->nr_missing++] = (struct btsdec_missing){
		.path = l->path, .module = l->module, .build_id = l->missing,
	};
	return 0;
}

/* The missing modules of a decoded trace's branches, oldest first: their
 * locations come from the symbolizer's cache (filled at decode), as the
 * renderers get them, without making each branch. */
static int trace_missing(struct btsdec_model *m, const struct btsdec_decoded *d)
{
	struct btsdec_loc l;
	int ret = 0;

	if (!d->sym || !d->symbols)
		return 0;	/* no locations, so nothing missing */
	for (size_t j = 0; !ret && j < d->nr; j++) {
		const struct btsdec_record rec = btsdec_trace_at(d->t, j), *r = &rec;

		if (btsdec_is_marker(r))
			continue;
		btsdec_sym_lookup(d->sym, r->from, &l);
		ret = note_missing(m, &l);
		if (ret)
			break;
		btsdec_sym_lookup(d->sym, r->to, &l);
		ret = note_missing(m, &l);
	}
	return ret;
}

/* The modules whose file was not found, as the branches and faults met
 * them: named once each, with their build-id, like eu-stack -b.  The
 * strings are the symbolizer's, so they outlive the lookups. */
static int model_missing(struct btsdec_model *m)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < m->nr_threads; i++) {
		const struct btsdec_model_thread *t = &m->threads[i];

		ret = trace_missing(m, &t->d);
		if (!ret && t->has_fault)
			ret = note_missing(m, &t->fault.loc);
	}
	return ret;
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
		mt->facts.recs = NULL;	/* mt->d borrows the core's trace */
		mt->facts.src = NULL;
		if (th->has_trace) {
			ret = btsdec_decode_symbols(sym, cls, &th->trace,
						    !(o && o->no_symbols), &mt->d, err);
			if (ret)
				break;
		}
		if (th->faulting && th->has_regs)
			model_fault(mt, core, th, sym, cls, !(o && o->no_symbols));
		m->nr_threads++;
	}
	if (!ret)
		ret = model_missing(m);
	for (size_t i = 0; !ret && i < m->nr_threads; i++)
		if (m->threads[i].has_trace && btsdec_trace_error(m->threads[i].d.t))
			ret = btsdec_fail(err, -EIO, "%s: reading thread %d's records: %s",
					  btsdec_core_path(core), (int)m->threads[i].tid,
					  "the core changed or could not be read");
	if (ret) {
		btsdec_model_free(m);
		return ret == -ENOMEM ? btsdec_fail(err, ret, "out of memory decoding %s",
						    btsdec_core_path(core)) : ret;
	}
	*out = m;
	return 0;
}

size_t btsdec_thread_nr_branches(const struct btsdec_model_thread *th)
{
	return th->d.nr + (th->has_fault && th->fault.inferred);
}

void btsdec_thread_branch(const struct btsdec_model_thread *th, size_t i,
			  struct btsdec_branch *b)
{
	if (i == th->d.nr && th->has_fault && th->fault.inferred)
		*b = th->fault.infer;
	else
		btsdec_decoded_branch(&th->d, i, b);
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
	free(m->missing);
	btsdec_index_free(&m->missing_by_path);
	free(m->threads);
	free(m->executable);
	free(m->core);
	free(m);
}
