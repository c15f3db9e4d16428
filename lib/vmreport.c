// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Vmcore reports: each CPU's last kernel branches from a kernel dump, its
 * full ring (found through VMCOREINFO) or, when that is unreadable, its
 * crash-note copy.  btsdec_vmmodel_build reads the rings once into a model
 * (the selected CPUs, where each trace comes from, the kernel symbols);
 * btsdec_vmmodel_render writes it as text for people or JSON for programs,
 * as often as asked.  Given vmlinux, each CPU's trace is decoded as a
 * core's thread is (lib/decode.c: kinds read from vmlinux's code, DWARF
 * lines) and its lines are the core report's (report.c); otherwise the
 * lines are lib/ringtext.c's, as crash> bts prints them.  Used by `btsdump vmcore` and btsdumpd's kdump
 * harvest (one model, text and JSON reports); process context.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"
#include "escape.h"
#include "ringtext.h"

/* One CPU of the model. */
struct vm_cpu {
	uint64_t cpu;
	bool panic;
	const struct btsdec_cpu_ring *ring;	/* NULL: the trace is the crash note */
	const struct btsdec_trace *t;		/* points into rings or the vmcore */
	bool decoded;				/* d holds t decoded (vmlinux given) */
	struct btsdec_decoded d;
};

struct btsdec_vmmodel {
	struct btsdec_vmcore *vc;
	char *path;
	bool raw;			/* no symbols */
	bool calls;			/* text: call history of decoded CPUs */
	struct btsdec_ksyms *ks;	/* NULL: addresses only */
	struct btsdec_sym *ksym;	/* vmlinux given: its DWARF and code */
	struct btsdec_classifier *cls;
	struct btsdec_cpu_ring *rings;
	size_t nr_rings;
	int rings_status;		/* btsdec_vmcore_cpu_rings's result */
	struct btsdec_err rings_err;	/* and why, when it failed */
	struct vm_cpu *cpus;
	size_t nr_cpus;
	size_t rings_unreadable;
};

/* One rendering in progress. */
struct vmr {
	FILE *out;
	const struct btsdec_vmmodel *m;
	struct json_object *cpus;	/* JSON: the "cpus" array being filled */
};

static void vm_warn(FILE *warn, const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line (fmt without its newline), escaped: a path or a message may
 * come from the dump. */
static void vm_warn(FILE *warn, const char *prog, const char *fmt, ...)
{
	va_list ap;

	if (!warn)
		return;
	va_start(ap, fmt);
	btsdec_escape_vline(warn, prog, fmt, ap);
	va_end(ap);
}

static bool vm_cpu_selected(const char *list, uint64_t cpu)
{
	char buf[256], *tok, *save = NULL;

	if (!list)
		return true;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strtoull(tok, NULL, 10) == cpu)
			return true;
	return false;
}

/* ---- building the model -------------------------------------------------- */

static const struct btsdec_trace *vm_note_of(struct btsdec_vmcore *vc, uint64_t cpu)
{
	for (size_t i = 0; i < btsdec_vmcore_nr_cpu_notes(vc); i++)
		if (btsdec_vmcore_cpu_note(vc, i)->id == cpu)
			return btsdec_vmcore_cpu_note(vc, i);
	return NULL;
}

static void vm_add(struct btsdec_vmmodel *m, uint64_t cpu, bool panic,
		   const struct btsdec_cpu_ring *ring, const struct btsdec_trace *t)
{
	m->cpus[m->nr_cpus++] = (struct vm_cpu){ .cpu = cpu, .panic = panic,
						 .ring = ring, .t = t };
}

/* Every selected CPU with a ring (an unreadable ring falls back to the
 * CPU's crash note), or, without rings, what the crash notes carry. */
static int vm_select(struct btsdec_vmmodel *m, const struct btsdec_vmreport_opts *o,
		     FILE *warn)
{
	size_t n = m->nr_rings + btsdec_vmcore_nr_cpu_notes(m->vc);
	const struct btsdec_trace *note;

	m->cpus = calloc(n ? n : 1, sizeof(*m->cpus));
	if (!m->cpus)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_rings; i++) {
		const struct btsdec_cpu_ring *ring = &m->rings[i];

		if (!vm_cpu_selected(o->cpus, ring->cpu))
			continue;
		if (!ring->status) {
			vm_add(m, ring->cpu, ring->panic, ring, &ring->trace);
			continue;
		}
		vm_warn(warn, o->prog, "CPU %llu: ring unreadable: %s",
			(unsigned long long)ring->cpu, ring->err.msg);
		m->rings_unreadable++;
		note = vm_note_of(m->vc, ring->cpu);
		if (note)
			vm_add(m, ring->cpu, ring->panic, NULL, note);
	}
	for (size_t i = 0; !m->nr_rings && i < btsdec_vmcore_nr_cpu_notes(m->vc); i++) {
		note = btsdec_vmcore_cpu_note(m->vc, i);
		if (!vm_cpu_selected(o->cpus, note->id))
			continue;
		vm_add(m, note->id, false, NULL, note);
		/* the ring table unreadable: each CPU's ring is, a partial result */
		if (m->rings_status && m->rings_status != -ENOENT)
			m->rings_unreadable++;
	}
	return 0;
}

/* System.map: names.  vmlinux: names, and a symbolizer and classifier to
 * decode each CPU's trace with (kinds, lines, calls). */
static int vm_open_symbols(struct btsdec_vmmodel *m, const struct btsdec_vmreport_opts *o,
			   struct btsdec_err *err)
{
	uint64_t kaslr = 0;
	char buf[64];
	int ret;

	if (!o->symbols || o->raw)
		return 0;
	if (btsdec_vmcore_info(m->vc, "KERNELOFFSET", buf, sizeof(buf)))
		kaslr = strtoull(buf, NULL, 16);
	ret = btsdec_ksyms_open(o->symbols, kaslr, &m->ks, err);
	if (ret || !btsdec_ksyms_from_vmlinux(m->ks))
		return ret;
	ret = btsdec_sym_open_kernel(o->symbols, kaslr, NULL, &m->ksym, err);
	return ret ? ret : btsdec_classifier_new(&m->cls, err);
}

/* Each selected CPU's trace decoded, when vmlinux was given. */
static int vm_decode(struct btsdec_vmmodel *m, struct btsdec_err *err)
{
	for (size_t i = 0; m->ksym && i < m->nr_cpus; i++) {
		struct vm_cpu *c = &m->cpus[i];
		int ret = btsdec_decode(m->ksym, m->cls, c->t, &c->d, err);

		if (ret)
			return ret;
		c->decoded = true;
	}
	return 0;
}

int btsdec_vmmodel_build(struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o, FILE *warn,
			 struct btsdec_vmmodel **out, struct btsdec_err *err)
{
	struct btsdec_vmmodel *m = calloc(1, sizeof(*m));
	int ret;

	if (!m || !(m->path = strdup(name))) {
		free(m);
		return btsdec_fail(err, -ENOMEM, "out of memory reading %s", name);
	}
	m->vc = vc;
	m->raw = o->raw;
	m->calls = o->calls;
	for (size_t i = 0; i < btsdec_vmcore_nr_rejects(vc); i++)
		vm_warn(warn, o->prog, "warning: CPU note skipped: %s",
			btsdec_vmcore_reject(vc, i));
	ret = vm_open_symbols(m, o, err);
	if (ret)
		goto fail;
	m->rings_status = btsdec_vmcore_cpu_rings(vc, &m->rings, &m->nr_rings, &m->rings_err);
	if (m->rings_status && (m->rings_status != -ENOENT || btsdec_vmcore_nr_cpu_notes(vc)))
		vm_warn(warn, o->prog, "%s: per-CPU rings: %s%s", name, m->rings_err.msg,
			m->rings_status != -ENOENT ? "; the CPUs' crash notes instead (which CPU "
			"panicked is in the table only)" : "");
	ret = vm_select(m, o, warn);
	if (ret) {
		ret = btsdec_fail(err, ret, "out of memory reading %s", name);
		goto fail;
	}
	ret = vm_decode(m, err);
	if (ret)
		goto fail;
	*out = m;
	return 0;
fail:
	btsdec_vmmodel_free(m);
	return ret;
}

void btsdec_vmmodel_free(struct btsdec_vmmodel *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_cpus; i++)
		if (m->cpus[i].decoded)
			btsdec_decoded_free(&m->cpus[i].d);
	btsdec_sym_close(m->ksym);
	btsdec_classifier_free(m->cls);
	btsdec_ksyms_close(m->ks);
	btsdec_cpu_rings_free(m->rings, m->nr_rings);
	free(m->cpus);
	free(m->path);
	free(m);
}

/* ---- rendering ------------------------------------------------------------- */

/* Names a kernel address from System.map or vmlinux's symbol table (ctx: the
 * rendering, struct vmr); lib/ringtext.c's callback too. */
static const char *vmr_sym(const void *ctx, uint64_t a, char *buf, size_t len)
{
	const struct vmr *r = ctx;
	uint64_t off;
	const char *name;

	if (r->m->raw || !r->m->ks)
		return NULL;
	name = btsdec_ksyms_lookup(r->m->ks, a, &off);
	if (!name)
		return NULL;
	if (off)
		snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)off);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

/* Branch i of CPU c: decoded (kind, and names from vmlinux's DWARF), or
 * a record named from the symbol table. */
static struct json_object *vmr_json_record(const struct vmr *r, const struct vm_cpu *c,
					   size_t i)
{
	const struct btsdec_record *rec = &c->t->recs[i];
	bool marker = btsdec_is_marker(rec);
	struct btsdec_branch b = { .kind = marker ? BTSDEC_K_MARKER : BTSDEC_K_UNKNOWN };
	struct json_object *o;
	char fb[256], tb[256];

	if (c->decoded) {	/* the object a core's branch gets */
		btsdec_decoded_branch(&c->d, i, &b);
		return btsdec_json_branch(i, &b);
	}
	o = btsdec_json_record(i, rec, b.kind);
	if (o && !marker) {
		json_object_object_add(o, "from_symbol",
				       btsdec_json_str(vmr_sym(r, rec->from, fb, sizeof(fb))));
		json_object_object_add(o, "to_symbol",
				       btsdec_json_str(vmr_sym(r, rec->to, tb, sizeof(tb))));
	}
	return o;
}

/* One CPU's object in the "cpus" array (docs/json.md). */
static void vmr_json_cpu(struct vmr *r, const struct vm_cpu *c, size_t take)
{
	const struct btsdec_trace *t = c->t;
	struct json_object *o = json_object_new_object(), *br;
	bool frozen = c->ring && c->ring->frozen;

	if (!o)
		return;
	json_object_object_add(o, "cpu", json_object_new_uint64(c->cpu));
	json_object_object_add(o, "panic", json_object_new_boolean(c->panic));
	json_object_object_add(o, "copy", json_object_new_string(c->ring ? "ring" : "crash_note"));
	json_object_object_add(o, "frozen", json_object_new_boolean(frozen));
	if (frozen)
		json_object_object_add(o, "freeze_ts_ns",
				       json_object_new_uint64(c->ring->freeze_ts));
	json_object_object_add(o, "trace", btsdec_json_trace(t));
	br = json_object_new_array();
	for (size_t i = t->nr - take; br && i < t->nr; i++)
		json_object_array_add(br, vmr_json_record(r, c, i));
	json_object_object_add(o, "branches", br);
	json_object_array_add(r->cpus, o);
}

/* One CPU as text: lib/ringtext.c, the same lines as crash> bts. */
static void vmr_text_cpu(struct vmr *r, const struct vm_cpu *c, size_t take, bool first)
{
	const struct btsdec_trace *t = c->t;
	char what[64];
	struct btsdec_ring_text v = {
		.what = what, .recs = t->recs, .nr = t->nr, .capacity = t->capacity,
		.source = t->source, .wrapped = t->flags & BTS_NOTE_F_WRAPPED,
		.frozen = c->ring && c->ring->frozen,
		.freeze_ts = c->ring ? c->ring->freeze_ts : 0,
		.copy = c->ring ? "full ring" : "crash note",
	};

	snprintf(what, sizeof(what), "CPU %llu%s", (unsigned long long)c->cpu,
		 c->panic ? " (panic CPU)" : "");
	if (!first)
		fputc('\n', r->out);
	if (!c->decoded) {
		btsdec_ring_text_write(r->out, &v, take, r->m->raw, vmr_sym, r);
		return;
	}
	/* decoded: the core report's lines (kind, names, lines) */
	btsdec_render_ring_decoded(r->out, &v, &c->d, take, r->m->calls);
}

/* The JSON document's head; the CPUs go into r->cpus. */
static struct json_object *vmr_json_head(struct vmr *r, bool kdump)
{
	struct json_object *doc = json_object_new_object();

	r->cpus = json_object_new_array();
	if (!doc || !r->cpus) {
		json_object_put(doc);
		json_object_put(r->cpus);
		r->cpus = NULL;
		return NULL;
	}
	json_object_object_add(doc, "schema", json_object_new_string(BTSDEC_JSON_SCHEMA_VMCORE));
	json_object_object_add(doc, "version", json_object_new_int(BTSDEC_JSON_VERSION));
	json_object_object_add(doc, "vmcore", btsdec_json_str(r->m->path));
	json_object_object_add(doc, "format",
			       json_object_new_string(kdump ? "kdump-compressed" : "elf"));
	json_object_object_add(doc, "cpus", r->cpus);
	return doc;
}

int btsdec_vmmodel_render(FILE *out, const struct btsdec_vmmodel *m, bool json,
			  size_t last, struct btsdec_vmreport_result *res,
			  struct btsdec_err *err)
{
	bool kdump = btsdec_vmcore_is_kdump(m->vc);
	struct vmr r = { .out = out, .m = m };
	struct json_object *doc = NULL;
	int ret;

	if (res)
		*res = (struct btsdec_vmreport_result){ m->nr_cpus, m->rings_unreadable };
	if (json) {
		doc = vmr_json_head(&r, kdump);
		if (!doc)
			return btsdec_fail(err, -ENOMEM, "out of memory building the report");
	} else {
		btsdec_escape_line(out, "vmcore", "%s (%s)", m->path,
				   kdump ? "kdump-compressed" : "ELF");
		fputc('\n', out);
	}
	for (size_t i = 0; i < m->nr_cpus; i++) {
		const struct vm_cpu *c = &m->cpus[i];
		size_t take = last && last < c->t->nr ? last : c->t->nr;

		if (json)
			vmr_json_cpu(&r, c, take);
		else
			vmr_text_cpu(&r, c, take, i == 0);
	}
	if (doc) {
		ret = btsdec_json_write(out, doc, err);
		if (ret)
			return ret;
	}
	if (m->nr_cpus)
		return 0;
	if (m->rings_status == -ENOENT)
		return btsdec_fail(err, -ENODATA, "%s: no branch trace in this vmcore (%s)",
				   m->path, m->rings_err.msg);
	return btsdec_fail(err, -ENODATA, "%s: no branch trace in this vmcore", m->path);
}

int btsdec_vmcore_report(FILE *out, struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o,
			 struct btsdec_vmreport_result *res, FILE *warn,
			 struct btsdec_err *err)
{
	struct btsdec_vmmodel *m;
	int ret;

	if (res)
		*res = (struct btsdec_vmreport_result){ 0 };
	ret = btsdec_vmmodel_build(vc, name, o, warn, &m, err);
	if (ret)
		return ret;
	ret = btsdec_vmmodel_render(out, m, o->json, o->last, res, err);
	btsdec_vmmodel_free(m);
	return ret;
}
