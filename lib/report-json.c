// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The JSON renderer of the decoded model (docs/json.md), for programs: the
 * same facts as the text, streamed (no document tree: memory does not grow
 * with the trace); the pieces vmreport.c shares (btsdec_json_record,
 * _branch, _trace).  A branch object has one writer, json_branch_text();
 * its locations' JSON comes from report-loc.c's cache.
 */
#include <errno.h>
#include <string.h>

#include "btsdec.h"
#include "report.h"

#define ADD(obj, key, val)	json_object_object_add(obj, key, val)

/* A branch object has one writer, json_branch_text() below: the core
 * report streams its text, vmreport.c takes it as a json-c object
 * (btsdec_json_branch, btsdec_json_record: the same text, parsed). */

/* The keys every branch object has, core or vmcore, as text: its opening
 * brace and keys, no closing brace.  A marker's keys follow. */
static void json_record_text(FILE *out, size_t i, const struct btsdec_record *r,
			     enum btsdec_kind kind)
{
	fprintf(out, "{\"number\":%zu,\"from\":\"0x%llx\",\"to\":\"0x%llx\",\"flags\":%llu,"
		"\"kind\":\"%s\"", i + 1, (unsigned long long)r->from,
		(unsigned long long)r->to, (unsigned long long)r->flags,
		btsdec_kind_name(kind));
	if (btsdec_record_cycles(r) >= 0)	/* LBR_INFO's, where the CPU gave it */
		fprintf(out, ",\"cycles\":%d", btsdec_record_cycles(r));
	if (kind != BTSDEC_K_MARKER)
		return;
	fprintf(out, ",\"marker\":\"%s\",\"timestamp_ns\":%llu", btsdec_marker_name(r),
		(unsigned long long)r->to);
	if (BTS_MARKER_KIND(r->from) == BTS_MARK_GAP)
		fprintf(out, ",\"gap_ns\":%llu,\"reason\":\"%s\"", (unsigned long long)r->flags,
			btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)));
	else if (BTS_MARKER_KIND(r->from) == BTS_MARK_SUSPEND)
		fprintf(out, ",\"reason\":\"%s\",\"task\":%llu",
			btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)),
			(unsigned long long)r->flags);
	else
		fprintf(out, ",\"cpu\":%llu", (unsigned long long)r->flags);
}
/* The one writer of a branch object (docs/json.md "The branch object");
 * f and t: the JSON of its two locations (NULL for a marker). */
static void json_branch_text(FILE *out, size_t i, const struct btsdec_branch *b,
			     const struct jloc *f, const struct jloc *t)
{
	json_record_text(out, i, &b->rec, b->kind);
	if (b->kind != BTSDEC_K_MARKER)
		fprintf(out, ",\"indirect\":%s,\"smashed_stack\":%s,\"depth\":%d,"
			"\"from_symbol\":%s,\"to_symbol\":%s,\"from_line\":%s,\"to_line\":%s,"
			"\"from_module\":%s,\"to_module\":%s,\"from_module_offset\":%s,"
			"\"to_module_offset\":%s", b->indirect ? "true" : "false",
			b->smashed ? "true" : "false", b->depth, f->sym, t->sym, f->line,
			t->line, f->module, t->module, f->mod_off, t->mod_off);
	if (b->inferred)
		fputs(",\"inferred\":true", out);
	fputc('}', out);
}

/* What a writer to the memory stream f (of *buf) wrote, parsed by json-c;
 * closes f. */
static struct json_object *json_parsed(char **buf, FILE *f)
{
	struct json_object *o = NULL;

	if (!fclose(f))		/* sets *buf */
		o = json_tokener_parse(*buf);
	free(*buf);
	return o;
}

struct json_object *btsdec_json_record(size_t i, const struct btsdec_record *r,
				       enum btsdec_kind kind)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_record_text(f, i, r, kind);
	fputc('}', f);
	return json_parsed(&buf, f);
}

struct json_object *btsdec_json_branch(size_t i, const struct btsdec_branch *b)
{
	struct jloc loc[2] = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f;

	if (b->kind != BTSDEC_K_MARKER &&
	    (btsdec_jloc_make(&loc[0], b->rec.from, &b->from_loc) ||
	     btsdec_jloc_make(&loc[1], b->rec.to, &b->to_loc))) {
		free(loc[0].sym);
		return NULL;
	}
	f = open_memstream(&buf, &len);
	if (f)
		json_branch_text(f, i, b, &loc[0], &loc[1]);
	free(loc[0].sym);
	free(loc[1].sym);
	return f ? json_parsed(&buf, f) : NULL;
}

static struct json_object *json_segment(size_t i, const struct btsdec_segment *s)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "number", json_object_new_uint64(i + 1));
	ADD(o, "function", btsdec_json_str(s->func));
	ADD(o, "address", btsdec_json_hex(s->addr));
	ADD(o, "depth", json_object_new_int(s->depth));
	ADD(o, "first_branch", s->first == BTSDEC_SEG_NONE ? NULL :
				json_object_new_uint64(s->first + 1));
	ADD(o, "last_branch", s->last == BTSDEC_SEG_NONE ? NULL :
			       json_object_new_uint64(s->last + 1));
	ADD(o, "file", btsdec_json_str(s->file));
	ADD(o, "line_min", s->file ? json_object_new_int(s->line_lo) : NULL);
	ADD(o, "line_max", s->file ? json_object_new_int(s->line_hi) : NULL);
	return o;
}

/* The trace facts object, the same for a thread note, a CPU note or ring. */
struct json_object *btsdec_json_trace(const struct btsdec_trace *t)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "source", btsdec_json_str(btsdec_source_name(t->source)));
	ADD(o, "capacity", json_object_new_uint64(t->capacity));
	ADD(o, "records", json_object_new_uint64(t->nr));
	ADD(o, "wrapped", json_object_new_boolean(t->flags & BTS_NOTE_F_WRAPPED));
	ADD(o, "truncated", json_object_new_boolean(t->flags & BTS_NOTE_F_TRUNCATED));
	ADD(o, "lost", json_object_new_uint64(t->lost));
	ADD(o, "lost_exact", json_object_new_boolean(t->flags & BTS_NOTE_F_LOST_EXACT));
	ADD(o, "gaps", json_object_new_uint64(t->nr_gaps));
	return o;
}

/* Writes o's members without its closing brace (o is an object with at
 * least one key: json-c writes it on one line, keys in insertion order), so
 * that the large arrays can follow as streamed members; drops o.  The
 * document stays byte for byte what one json-c tree would write. */
static int json_open(FILE *out, struct json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, BTSDEC_JSON_FLAGS) : NULL;
	size_t n = s ? strlen(s) : 0;

	if (n < 2 || s[n - 1] != '}') {
		json_object_put(o);
		return -ENOMEM;
	}
	fwrite(s, 1, n - 1, out);
	json_object_put(o);
	return 0;
}

/* Writes o as the next item of an array (a comma before all but the
 * first), then drops it. */
static int json_item(FILE *out, bool first, struct json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, BTSDEC_JSON_FLAGS) : NULL;

	if (s) {
		if (!first)
			fputc(',', out);
		fputs(s, out);
	}
	json_object_put(o);
	return s ? 0 : -ENOMEM;
}
/* A branch object through the cache of locations. */
static int json_branch_cached(FILE *out, struct jloc_cache *c, size_t i,
			      const struct btsdec_branch *b)
{
	const struct jloc *e;
	struct jloc f, t;	/* copies: a second jloc_get may move the entries */

	if (b->kind != BTSDEC_K_MARKER) {
		if (!(e = btsdec_jloc_get(c, b->rec.from, &b->from_loc)))
			return -ENOMEM;
		f = *e;
		if (!(e = btsdec_jloc_get(c, b->rec.to, &b->to_loc)))
			return -ENOMEM;
		t = *e;
	}
	json_branch_text(out, i, b, &f, &t);
	return 0;
}

/* ,"branches":[...]: one branch object at a time, written as it is made,
 * so memory does not grow with the trace; the inferred one last. */
static int json_branches(FILE *out, const struct btsdec_model_thread *th, size_t first)
{
	struct jloc_cache c = { 0 };
	struct btsdec_branch b;
	int ret = 0;

	fputs(",\"branches\":[", out);
	for (size_t i = first; !ret && i < btsdec_thread_nr_branches(th); i++) {
		btsdec_thread_branch(th, i, &b);
		if (i > first)
			fputc(',', out);
		ret = json_branch_cached(out, &c, i, &b);
	}
	fputc(']', out);
	btsdec_jloc_free(&c);
	return ret;
}

struct json_seg_ctx {
	FILE *out;
	size_t first;
};

static int json_segment_fn(void *arg, size_t i, const struct btsdec_segment *s)
{
	struct json_seg_ctx *c = arg;

	return json_item(c->out, i == c->first, json_segment(i, s));
}

/* ,"calls":[...], streamed the same way. */
static int json_calls(FILE *out, const struct btsdec_decoded *d, size_t first)
{
	struct json_seg_ctx c = { .out = out, .first = first };
	int ret;

	fputs(",\"calls\":[", out);
	ret = btsdec_decoded_segments(d, first, json_segment_fn, &c);
	fputc(']', out);
	return ret;
}

static struct json_object *json_fault(const struct btsdec_model_thread *th)
{
	const struct btsdec_fault *f = &th->fault;
	struct json_object *o;
	bool br = f->rel != BTSDEC_FAULT_NO_TRAIL;
	char buf[256];

	if (!th->has_fault || !(o = json_object_new_object()))
		return NULL;
	ADD(o, "pc", btsdec_json_hex(f->pc));
	ADD(o, "symbol", btsdec_json_str(btsdec_loc_format(&f->loc, f->pc, buf,
							   sizeof(buf))));
	ADD(o, "line", btsdec_json_str(btsdec_report_line(&f->loc, buf, sizeof(buf))));
	ADD(o, "module", btsdec_json_str(f->loc.module));
	ADD(o, "module_offset", btsdec_json_module_offset(&f->loc));
	ADD(o, "si_code", f->has_siginfo ? json_object_new_int(f->si_code) : NULL);
	ADD(o, "address", f->has_addr ? btsdec_json_hex(f->addr) : NULL);
	ADD(o, "relation", btsdec_json_str(btsdec_fault_rel_name(f->rel)));
	ADD(o, "branch", br ? json_object_new_uint64(f->branch + 1) : NULL);
	ADD(o, "run_bytes", json_object_new_uint64(f->run));
	ADD(o, "inferred", json_object_new_boolean(f->inferred));
	return o;
}

/* The thread object; its "branches" and "calls" arrays streamed. */
static int json_thread(FILE *out, const struct btsdec_model_thread *th,
		       const struct btsdec_render_opts *o)
{
	const struct btsdec_decoded *d = &th->d;
	struct json_object *j = json_object_new_object();
	char sig[32];
	int ret;

	if (!j)
		return -ENOMEM;
	ADD(j, "tid", json_object_new_int(th->tid));
	ADD(j, "faulting", json_object_new_boolean(th->faulting));
	ADD(j, "signal", json_object_new_int(th->signo));
	ADD(j, "signal_name", th->signo ? btsdec_json_str(btsdec_report_signal_name(th->signo, sig,
								      sizeof(sig))) : NULL);
	ADD(j, "trace", th->has_trace ? btsdec_json_trace(&th->facts) : NULL);
	ADD(j, "fault", json_fault(th));
	ret = json_open(out, j);
	if (!ret)
		ret = json_branches(out, th, btsdec_report_first(d->nr, o));
	if (!ret && o->calls)
		ret = json_calls(out, d, btsdec_report_first(d->nr_seg, o));
	fputc('}', out);
	return ret;
}

/* ---- driver -------------------------------------------------------------- */

static struct json_object *json_missing(const struct btsdec_model *m)
{
	struct json_object *a = json_object_new_array(), *o;

	for (size_t i = 0; a && i < m->nr_missing; i++) {
		const struct btsdec_missing *mm = &m->missing[i];

		if (!(o = json_object_new_object()))
			break;
		ADD(o, "module", btsdec_json_str(mm->module));
		ADD(o, "path", btsdec_json_str(mm->path));
		ADD(o, "build_id", *mm->build_id ? btsdec_json_str(mm->build_id) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

/* The document head: every key before "threads". */
static struct json_object *json_head(const struct btsdec_model *m)
{
	struct json_object *doc = json_object_new_object(), *rej;

	if (!doc)
		return NULL;
	ADD(doc, "schema", json_object_new_string(BTSDEC_JSON_SCHEMA_CORE));
	ADD(doc, "version", json_object_new_int(BTSDEC_JSON_VERSION));
	ADD(doc, "core", btsdec_json_str(m->core));
	ADD(doc, "executable", btsdec_json_str(m->executable));
	rej = json_object_new_array();
	for (size_t i = 0; rej && i < m->nr_rejects; i++)
		json_object_array_add(rej, btsdec_json_str(m->rejects[i]));
	ADD(doc, "rejected", rej);
	ADD(doc, "missing_modules", json_missing(m));
	return doc;
}
/* The document is written as it is made: the head and each thread's facts
 * as json-c objects, each branch and segment as a json-c object written and
 * freed, so memory stays flat however long the trace (issue 16). */
int btsdec_render_json(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err)
{
	int ret = json_open(out, json_head(m));

	if (!ret)
		fputs(",\"threads\":[", out);
	for (size_t i = 0; !ret && i < m->nr_threads; i++) {
		if (i)
			fputc(',', out);
		ret = json_thread(out, &m->threads[i], o);
	}
	if (ret)
		return btsdec_fail(err, ret, "out of memory writing the JSON document");
	fputs("]}\n", out);
	return btsdec_report_check(m, out, err);
}
