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

/* A CPU's heading line, or the opening of its JSON object. */
static void vmr_cpu_head(struct vmr *r, const struct btsdec_trace *t, uint64_t cpu,
			 bool panic, const struct btsdec_cpu_ring *ring, size_t take)
{
	if (r->o->json) {
		fprintf(r->out, "%s{\"cpu\":%llu,\"panic\":%s,\"source\":\"%s\","
			"\"capacity\":%llu,\"records\":%zu,\"wrapped\":%s,\"lost\":%llu,"
			"\"origin\":\"%s\"", r->first ? "" : ",", (unsigned long long)cpu,
			panic ? "true" : "false", ring ? "ring" : "note",
			(unsigned long long)t->capacity, t->nr,
			t->flags & BTS_NOTE_F_WRAPPED ? "true" : "false",
			(unsigned long long)t->lost, btsdec_source_name(t->source));
		if (ring && ring->frozen)
			fprintf(r->out, ",\"freeze_ts_ns\":%llu",
				(unsigned long long)ring->freeze_ts);
		fputs(",\"branches\":[", r->out);
	} else {
		fprintf(r->out, "%sCPU %llu%s: %zu of %zu records (%s, ring of %llu%s), %s\n",
			r->first ? "" : "\n", (unsigned long long)cpu,
			panic ? " (panic CPU)" : "", take, t->nr,
			ring ? "full ring" : "crash note", (unsigned long long)t->capacity,
			t->flags & BTS_NOTE_F_WRAPPED ? ", wrapped" : "",
			btsdec_source_name(t->source));
	}
	r->first = false;
}

static void vmr_json_record(const struct vmr *r, const struct btsdec_record *rec,
			    size_t i, bool first)
{
	char fb[256], tb[256];
	const char *fs = vmr_sym(r, rec->from, fb, sizeof(fb));
	const char *ts = vmr_sym(r, rec->to, tb, sizeof(tb));

	fprintf(r->out, "%s{\"index\":%zu,\"from\":\"0x%llx\",\"to\":\"0x%llx\","
		"\"flags\":%llu", first ? "" : ",", i, (unsigned long long)rec->from,
		(unsigned long long)rec->to, (unsigned long long)rec->flags);
	if (btsdec_is_marker(rec)) {
		fputs(",\"kind\":\"marker\",\"marker\":", r->out);
		btsdec_json_string(r->out, btsdec_marker_name(rec));
	} else {
		fputs(",\"from_symbol\":", r->out);
		fs ? btsdec_json_string(r->out, fs) : (void)fputs("null", r->out);
		fputs(",\"to_symbol\":", r->out);
		ts ? btsdec_json_string(r->out, ts) : (void)fputs("null", r->out);
	}
	fputc('}', r->out);
}

/* One text line; `nth` counts from the newest record (1). */
static void vmr_text_record(const struct vmr *r, const struct btsdec_record *rec,
			    size_t nth)
{
	char fb[256], tb[256];
	const char *fs = vmr_sym(r, rec->from, fb, sizeof(fb));
	const char *ts = vmr_sym(r, rec->to, tb, sizeof(tb));

	if (btsdec_is_marker(rec))
		fprintf(r->out, "  [%4zu] -- %s --\n", nth, btsdec_marker_name(rec));
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

	vmr_cpu_head(r, t, cpu, panic, ring, take);
	for (i = t->nr - take; i < t->nr; i++) {
		if (r->o->json)
			vmr_json_record(r, &t->recs[i], i, i == t->nr - take);
		else
			vmr_text_record(r, &t->recs[i], t->nr - i);
	}
	if (r->o->json)
		fputs("]}", r->out);
	r->res.cpus_shown++;
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

/* The document: header, then the CPUs.  -ENODATA when none had a trace. */
static int vmr_write(struct vmr *r, struct btsdec_err *err)
{
	struct btsdec_cpu_ring *rings = NULL;
	struct btsdec_err rerr;
	size_t nr_rings = 0;
	bool kdump = btsdec_vmcore_is_kdump(r->vc);
	int rret;

	rret = btsdec_vmcore_cpu_rings(r->vc, &rings, &nr_rings, &rerr);
	if (rret && (rret != -ENOENT || btsdec_vmcore_nr_cpu_notes(r->vc)))
		vmr_warn(r, "%s: per-CPU rings: %s\n", r->path, rerr.msg);
	if (r->o->json) {
		fputs("{\"vmcore\":", r->out);
		btsdec_json_string(r->out, r->path);
		fprintf(r->out, ",\"format\":\"%s\",\"cpus\":[",
			kdump ? "kdump-compressed" : "elf");
	} else {
		fprintf(r->out, "vmcore: %s (%s)\n\n", r->path,
			kdump ? "kdump-compressed" : "ELF");
	}
	if (nr_rings)
		vmr_rings(r, rings, nr_rings);
	else
		vmr_notes(r);
	if (r->o->json)
		fputs("]}\n", r->out);
	btsdec_cpu_rings_free(rings, nr_rings);
	if (r->res.cpus_shown)
		return 0;
	return btsdec_fail(err, -ENODATA, "%s: no branch trace in this vmcore%s%s%s", r->path,
			   rret == -ENOENT ? " (" : "", rret == -ENOENT ? rerr.msg : "",
			   rret == -ENOENT ? ")" : "");
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
