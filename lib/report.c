// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Renderers of the decoded model (model.c): the per-thread branch list or
 * call history of a core as text for people or JSON for programs (the same
 * facts in both: indirect and smashed-stack marks, the fault line, missing
 * modules), and the text line of one branch for btsdumpd's journal.
 * They only read the model: nothing is decoded here, and each branch's
 * locations come from the symbolizer's cache, filled at decode.  Both write
 * as they go (JSON: no document tree), so memory does not grow with the
 * trace.  Every string from the dump reaches the text through
 * lib/escape.c; a branch object's JSON has one writer, json_branch_text().
 * Used by btsdump and btsdumpd.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "addrindex.h"
#include "btsdec.h"
#include "escape.h"
#include "ringtext.h"

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
static size_t first_shown(size_t nr, const struct btsdec_render_opts *o)
{
	return o->last && o->last < nr ? nr - o->last : 0;
}

/* ---- text ---------------------------------------------------------------- */

/* Every string from a core or a file (paths, module and symbol names) goes
 * through lib/escape.c before it reaches the text: a name cannot move the
 * cursor or forge a line. */

/* l's "file:line", escaped; NULL without a file. */
static const char *text_line(const struct btsdec_loc *l, char *buf, size_t len)
{
	char raw[256];

	return line_of(l, raw, sizeof(raw)) ? btsdec_escape_buf(raw, buf, len, 0) : NULL;
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
		btsdec_decoded_branch(&th->d, f->branch, &b);
		text_branch_what(out, &b);
		fputc(')', out);
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

void btsdec_render_branch_line(FILE *out, size_t i, const struct btsdec_branch *b)
{
	text_branch(out, 0, i, b);
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
			signal_name(th->signo, sig, sizeof(sig)));
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
		btsdec_decoded_segments(d, first_shown(d->nr_seg, o), text_segment_fn, out);
		return;
	}
	for (size_t i = first_shown(d->nr, o); i < d->nr; i++) {
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
	text_thread_head(out, th);
	if (th->has_trace)
		btsdec_render_text_trail(out, &th->d, o);
	if (th->has_fault)
		text_fault(out, th);
	fputc('\n', out);
}

/* ---- JSON (docs/json.md) ---------------------------------------------------- */

#define ADD(obj, key, val)	json_object_object_add(obj, key, val)
#define JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static struct json_object *json_module_offset(const struct btsdec_loc *l)
{
	return l->module ? btsdec_json_hex(l->mod_off) : NULL;
}

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
	else
		fprintf(out, ",\"cpu\":%llu", (unsigned long long)r->flags);
}

/* The JSON text (json-c's) of one address's location: its symbol, line,
 * module and module offset, in one block (at sym). */
struct jloc {
	uint64_t addr;
	char *sym, *line, *module, *mod_off;
};
_Static_assert(offsetof(struct jloc, addr) == 0, "addr_index_build(): address first");

/* The four strings of l, each through json-c, in one allocation. */
static int jloc_make(struct jloc *e, uint64_t addr, const struct btsdec_loc *l)
{
	struct json_object *o[4];
	const char *t[4];
	size_t n[4], i;
	char buf[256], *p;
	int ret = 0;

	o[0] = btsdec_json_str(btsdec_loc_format(l, addr, buf, sizeof(buf)));
	o[1] = btsdec_json_str(line_of(l, buf, sizeof(buf)));
	o[2] = btsdec_json_str(l->module);
	o[3] = json_module_offset(l);
	for (i = 0; i < 4; i++) {
		t[i] = o[i] ? json_object_to_json_string_ext(o[i], JSON_FLAGS) : "null";
		n[i] = t[i] ? strlen(t[i]) + 1 : 0;
		if (!t[i])
			ret = -ENOMEM;
	}
	p = ret ? NULL : malloc(n[0] + n[1] + n[2] + n[3]);
	if (p) {
		e->addr = addr;
		e->sym = memcpy(p, t[0], n[0]);
		e->line = memcpy(p + n[0], t[1], n[1]);
		e->module = memcpy(p + n[0] + n[1], t[2], n[2]);
		e->mod_off = memcpy(p + n[0] + n[1] + n[2], t[3], n[3]);
	}
	for (i = 0; i < 4; i++)
		json_object_put(o[i]);
	return p ? 0 : -ENOMEM;
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
	    (jloc_make(&loc[0], b->rec.from, &b->from_loc) ||
	     jloc_make(&loc[1], b->rec.to, &b->to_loc))) {
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
	ADD(o, "first_branch", json_object_new_uint64(s->first + 1));
	ADD(o, "last_branch", json_object_new_uint64(s->last + 1));
	ADD(o, "file", btsdec_json_str(s->file));
	ADD(o, "line_min", json_object_new_int(s->line_lo));
	ADD(o, "line_max", json_object_new_int(s->line_hi));
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
	const char *s = o ? json_object_to_json_string_ext(o, JSON_FLAGS) : NULL;
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
	const char *s = o ? json_object_to_json_string_ext(o, JSON_FLAGS) : NULL;

	if (s) {
		if (!first)
			fputc(',', out);
		fputs(s, out);
	}
	json_object_put(o);
	return s ? 0 : -ENOMEM;
}

/* The JSON of each distinct address's location, made once while the
 * branches are written: a trace repeats addresses, and json-c costs
 * ~30 000 instructions a branch object.  Bounded by the distinct
 * addresses: entries packed, found through 4-byte slots kept at most half
 * full. */
struct jloc_cache {
	struct jloc *ent;	/* packed */
	size_t used, room;
	uint32_t *slots;	/* entry index + 1; 0 = free */
	size_t cap;		/* slots, a power of two */
};

static int jloc_grow(struct jloc_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024;
	uint32_t *n = addr_index_build(c->ent, c->used, sizeof(*c->ent), cap);

	if (!n)
		return -ENOMEM;
	free(c->slots);
	c->slots = n;
	c->cap = cap;
	return 0;
}

static const struct jloc *jloc_get(struct jloc_cache *c, uint64_t addr,
				   const struct btsdec_loc *l)
{
	size_t i;

	if (c->used * 2 >= c->cap && jloc_grow(c))
		return NULL;
	for (i = addr_slot(addr, c->cap); c->slots[i]; i = (i + 1) & (c->cap - 1))
		if (c->ent[c->slots[i] - 1].addr == addr)
			return &c->ent[c->slots[i] - 1];
	if (c->used >= UINT32_MAX / 2 || btsdec_grow(&c->ent, &c->room, c->used + 1))
		return NULL;
	if (jloc_make(&c->ent[c->used], addr, l))
		return NULL;
	c->slots[i] = (uint32_t)++c->used;
	return &c->ent[c->used - 1];
}

static void jloc_free(struct jloc_cache *c)
{
	for (size_t i = 0; i < c->used; i++)
		free(c->ent[i].sym);
	free(c->ent);
	free(c->slots);
}

/* A branch object through the cache of locations. */
static int json_branch_cached(FILE *out, struct jloc_cache *c, size_t i,
			      const struct btsdec_branch *b)
{
	const struct jloc *e;
	struct jloc f, t;	/* copies: a second jloc_get may move the entries */

	if (b->kind != BTSDEC_K_MARKER) {
		if (!(e = jloc_get(c, b->rec.from, &b->from_loc)))
			return -ENOMEM;
		f = *e;
		if (!(e = jloc_get(c, b->rec.to, &b->to_loc)))
			return -ENOMEM;
		t = *e;
	}
	json_branch_text(out, i, b, &f, &t);
	return 0;
}

/* ,"branches":[...]: one branch object at a time, written as it is made,
 * so memory does not grow with the trace. */
static int json_branches(FILE *out, const struct btsdec_decoded *d, size_t first)
{
	struct jloc_cache c = { 0 };
	struct btsdec_branch b;
	int ret = 0;

	fputs(",\"branches\":[", out);
	for (size_t i = first; !ret && i < d->nr; i++) {
		btsdec_decoded_branch(d, i, &b);
		if (i > first)
			fputc(',', out);
		ret = json_branch_cached(out, &c, i, &b);
	}
	fputc(']', out);
	jloc_free(&c);
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
	ADD(o, "line", btsdec_json_str(line_of(&f->loc, buf, sizeof(buf))));
	ADD(o, "module", btsdec_json_str(f->loc.module));
	ADD(o, "module_offset", json_module_offset(&f->loc));
	ADD(o, "si_code", f->has_siginfo ? json_object_new_int(f->si_code) : NULL);
	ADD(o, "address", f->has_addr ? btsdec_json_hex(f->addr) : NULL);
	ADD(o, "relation", btsdec_json_str(btsdec_fault_rel_name(f->rel)));
	ADD(o, "branch", br ? json_object_new_uint64(f->branch + 1) : NULL);
	ADD(o, "run_bytes", json_object_new_uint64(f->run));
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
	ADD(j, "signal_name", th->signo ? btsdec_json_str(signal_name(th->signo, sig,
								      sizeof(sig))) : NULL);
	ADD(j, "trace", th->has_trace ? btsdec_json_trace(&th->facts) : NULL);
	ADD(j, "fault", json_fault(th));
	ret = json_open(out, j);
	if (!ret)
		ret = json_branches(out, d, first_shown(d->nr, o));
	if (!ret && o->calls)
		ret = json_calls(out, d, first_shown(d->nr_seg, o));
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

/* A streamed trace whose core stopped reading while rendered: the report
 * holds zeroed records, so it must not pass for a good one. */
static int render_check(const struct btsdec_model *m, FILE *out, struct btsdec_err *err)
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
	return render_check(m, out, err);
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
	return render_check(m, out, err);
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
