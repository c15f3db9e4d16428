// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Vmcore reports: each CPU's last kernel branches from a kernel dump, its
 * full ring (found through VMCOREINFO) or, when that is unreadable, its
 * crash-note copy; text for people or JSON for programs.  Used by `btsdump
 * vmcore` and btsdumpd's kdump harvest; process context.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

/* One report being written. */
struct vmr {
	FILE *out, *warn;
	const struct btsdec_vmreport_opts *o;
	const char *path;
	struct btsdec_vmcore *vc;
	struct btsdec_ksyms *ks;	/* NULL: addresses only */
	bool first;			/* no CPU printed yet */
	struct json_object *cpus;	/* JSON: the "cpus" array being filled */
	struct btsdec_vmreport_result res;
};

static void vmr_warn(const struct vmr *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vmr_warn(const struct vmr *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->warn)
		return;
	if (r->o->prog)
		fprintf(r->warn, "%s: ", r->o->prog);
	va_start(ap, fmt);
	vfprintf(r->warn, fmt, ap);
	va_end(ap);
}

static bool vmr_cpu_selected(const char *list, uint64_t cpu)
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

static const char *vmr_sym(const struct vmr *r, uint64_t a, char *buf, size_t len)
{
	uint64_t off;
	const char *name;

	if (r->o->raw || !r->ks)
		return NULL;
	name = btsdec_ksyms_lookup(r->ks, a, &off);
	if (!name)
		return NULL;
	if (off)
		snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)off);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

/* A CPU's heading line. */
static void vmr_cpu_head(struct vmr *r, const struct btsdec_trace *t, uint64_t cpu,
			 bool panic, const struct btsdec_cpu_ring *ring, size_t take)
{
	fprintf(r->out, "%sCPU %llu%s: %zu of %zu records (%s, ring of %llu%s), %s\n",
		r->first ? "" : "\n", (unsigned long long)cpu,
		panic ? " (panic CPU)" : "", take, t->nr,
		ring ? "full ring" : "crash note", (unsigned long long)t->capacity,
		t->flags & BTS_NOTE_F_WRAPPED ? ", wrapped" : "",
		btsdec_source_name(t->source));
	r->first = false;
}

static struct json_object *vmr_json_record(const struct vmr *r,
					   const struct btsdec_record *rec, size_t i)
{
	bool marker = btsdec_is_marker(rec);
	struct json_object *o = btsdec_json_record(i, rec, marker ? BTSDEC_K_MARKER
								    : BTSDEC_K_UNKNOWN);
	char fb[256], tb[256];

	if (o && !marker) {
		json_object_object_add(o, "from_symbol",
				       btsdec_json_str(vmr_sym(r, rec->from, fb, sizeof(fb))));
		json_object_object_add(o, "to_symbol",
				       btsdec_json_str(vmr_sym(r, rec->to, tb, sizeof(tb))));
	}
	return o;
}

/* One CPU's object in the "cpus" array (docs/json.md). */
static void vmr_json_cpu(struct vmr *r, const struct btsdec_trace *t, uint64_t cpu,
			 bool panic, const struct btsdec_cpu_ring *ring, size_t take)
{
	struct json_object *o = json_object_new_object(), *br;

	if (!o)
		return;
	json_object_object_add(o, "cpu", json_object_new_uint64(cpu));
	json_object_object_add(o, "panic", json_object_new_boolean(panic));
	json_object_object_add(o, "copy", json_object_new_string(ring ? "ring" : "crash_note"));
	json_object_object_add(o, "frozen", json_object_new_boolean(ring && ring->frozen));
	if (ring && ring->frozen)
		json_object_object_add(o, "freeze_ts_ns", json_object_new_uint64(ring->freeze_ts));
	json_object_object_add(o, "trace", btsdec_json_trace(t));
	br = json_object_new_array();
	for (size_t i = t->nr - take; br && i < t->nr; i++)
		json_object_array_add(br, vmr_json_record(r, &t->recs[i], i));
	json_object_object_add(o, "branches", br);
	json_object_array_add(r->cpus, o);
}

/* One text line; `nth` is the record's number: its position in the trace,
 * oldest first, from 1 (docs/json.md "Numbering"). */
static void vmr_text_record(const struct vmr *r, const struct btsdec_record *rec,
			    size_t nth)
{
	char fb[256], tb[256];
	const char *fs = vmr_sym(r, rec->from, fb, sizeof(fb));
	const char *ts = vmr_sym(r, rec->to, tb, sizeof(tb));

	if (btsdec_is_marker(rec) && !r->o->raw)
		fprintf(r->out, "  [%4zu] -- %s --\n", nth,
			btsdec_marker_describe(rec, fb, sizeof(fb)));
	else if (r->o->raw)
		fprintf(r->out, "  [%4zu] %016llx %016llx %016llx\n", nth,
			(unsigned long long)rec->from, (unsigned long long)rec->to,
			(unsigned long long)rec->flags);
	else
		fprintf(r->out, "  [%4zu] %016llx %-28s -> %016llx%s%s\n", nth,
			(unsigned long long)rec->from, fs ? fs : "",
			(unsigned long long)rec->to, ts ? " " : "", ts ? ts : "");
}

/* One CPU's trace, its newest o->last records (0 = all), oldest first.
 * ring is NULL when t is the CPU's crash note. */
static void vmr_cpu(struct vmr *r, const struct btsdec_trace *t, uint64_t cpu,
		    bool panic, const struct btsdec_cpu_ring *ring)
{
	size_t take = r->o->last && r->o->last < t->nr ? r->o->last : t->nr, i;

	r->res.cpus_shown++;
	if (r->o->json) {
		vmr_json_cpu(r, t, cpu, panic, ring, take);
		return;
	}
	vmr_cpu_head(r, t, cpu, panic, ring, take);
	for (i = t->nr - take; i < t->nr; i++)
		vmr_text_record(r, &t->recs[i], i + 1);
}

static const struct btsdec_trace *vmr_note_of(const struct vmr *r, uint64_t cpu)
{
	size_t i;

	for (i = 0; i < btsdec_vmcore_nr_cpu_notes(r->vc); i++)
		if (btsdec_vmcore_cpu_note(r->vc, i)->id == cpu)
			return btsdec_vmcore_cpu_note(r->vc, i);
	return NULL;
}

/* Every selected CPU with a ring; an unreadable ring falls back to the
 * CPU's crash note. */
static void vmr_rings(struct vmr *r, const struct btsdec_cpu_ring *rings, size_t n)
{
	const struct btsdec_trace *note;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct btsdec_cpu_ring *ring = &rings[i];

		if (!vmr_cpu_selected(r->o->cpus, ring->cpu))
			continue;
		if (!ring->status) {
			vmr_cpu(r, &ring->trace, ring->cpu, ring->panic, ring);
			continue;
		}
		vmr_warn(r, "CPU %llu: ring unreadable: %s\n",
			 (unsigned long long)ring->cpu, ring->err.msg);
		r->res.rings_unreadable++;
		note = vmr_note_of(r, ring->cpu);
		if (note)
			vmr_cpu(r, note, ring->cpu, ring->panic, NULL);
	}
}

/* No rings to follow: what the crash notes carry. */
static void vmr_notes(struct vmr *r)
{
	size_t i;

	for (i = 0; i < btsdec_vmcore_nr_cpu_notes(r->vc); i++) {
		const struct btsdec_trace *n = btsdec_vmcore_cpu_note(r->vc, i);

		if (vmr_cpu_selected(r->o->cpus, n->id))
			vmr_cpu(r, n, n->id, false, NULL);
	}
}

static int vmr_open_symbols(struct vmr *r, struct btsdec_err *err)
{
	uint64_t kaslr = 0;
	char buf[64];

	if (!r->o->symbols || r->o->raw)
		return 0;
	if (btsdec_vmcore_info(r->vc, "KERNELOFFSET", buf, sizeof(buf)))
		kaslr = strtoull(buf, NULL, 16);
	return btsdec_ksyms_open(r->o->symbols, kaslr, &r->ks, err);
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
	json_object_object_add(doc, "vmcore", btsdec_json_str(r->path));
	json_object_object_add(doc, "format",
			       json_object_new_string(kdump ? "kdump-compressed" : "elf"));
	json_object_object_add(doc, "cpus", r->cpus);
	return doc;
}

/* The document: header, then the CPUs.  -ENODATA when none had a trace. */
static int vmr_write(struct vmr *r, struct btsdec_err *err)
{
	struct btsdec_cpu_ring *rings = NULL;
	struct json_object *doc = NULL;
	struct btsdec_err rerr;
	size_t nr_rings = 0;
	bool kdump = btsdec_vmcore_is_kdump(r->vc);
	int rret, ret;

	rret = btsdec_vmcore_cpu_rings(r->vc, &rings, &nr_rings, &rerr);
	if (rret && (rret != -ENOENT || btsdec_vmcore_nr_cpu_notes(r->vc)))
		vmr_warn(r, "%s: per-CPU rings: %s\n", r->path, rerr.msg);
	if (r->o->json) {
		doc = vmr_json_head(r, kdump);
		if (!doc) {
			btsdec_cpu_rings_free(rings, nr_rings);
			return btsdec_fail(err, -ENOMEM, "out of memory building the report");
		}
	} else {
		fprintf(r->out, "vmcore: %s (%s)\n\n", r->path,
			kdump ? "kdump-compressed" : "ELF");
	}
	if (nr_rings)
		vmr_rings(r, rings, nr_rings);
	else
		vmr_notes(r);
	btsdec_cpu_rings_free(rings, nr_rings);
	if (doc) {
		ret = btsdec_json_write(r->out, doc, err);
		if (ret)
			return ret;
	}
	if (r->res.cpus_shown)
		return 0;
	return btsdec_fail(err, -ENODATA, "%s: no branch trace in this vmcore%s", r->path,
			   rret == -ENOENT ? " (no BTS_CRASH=1 in VMCOREINFO: not a btscrash "
			   "kernel, or per-CPU rings off)" : "");
}

int btsdec_vmcore_report(FILE *out, struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o,
			 struct btsdec_vmreport_result *res, FILE *warn,
			 struct btsdec_err *err)
{
	struct vmr r = { .out = out, .warn = warn, .o = o, .path = name, .vc = vc,
			 .first = true };
	int ret;

	for (size_t i = 0; i < btsdec_vmcore_nr_rejects(vc); i++)
		vmr_warn(&r, "warning: CPU note skipped: %s\n", btsdec_vmcore_reject(vc, i));
	ret = vmr_open_symbols(&r, err);
	if (!ret) {
		ret = vmr_write(&r, err);
		btsdec_ksyms_close(r.ks);
	}
	if (res)
		*res = r.res;
	return ret;
}
