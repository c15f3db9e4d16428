// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding a trace: classifies and symbolizes each record, then builds the
 * call/return history (function segments with call depth, normalized so the
 * shallowest is 0) the way gdb's `record function-call-history` shows it,
 * flags returns that smashed the stack (ret_smashed), and relates the
 * fault's pc to the trail's newest branch (btsdec_fault_relate).
 * Memory stays bounded (issue 16): per record one byte of kind and marks
 * and a depth checkpoint every DEPTH_STRIDE records, beside the trace's own
 * records, which are borrowed; symbols are per distinct address in the
 * symbolizer, classification per distinct `from` address and the calls'
 * return addresses per distinct address here.  Branches and segments
 * are made on demand (btsdec_decoded_branch, btsdec_decoded_segments).
 * Process context; used by model.c, report.c, btsdumpd and the tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrindex.h"
#include "btsdec.h"

#define MAX_INSN	16
#define INFO_INDIRECT	0x80	/* info byte: kind | INFO_INDIRECT | INFO_SMASHED */
#define INFO_SMASHED	0x40
#define INFO_KIND	0x3f
#define DEPTH_STRIDE	64	/* records per depth checkpoint */

/* ---- classification, once per distinct `from` ---------------------------- */

/* What is known of one address: as a `from`, its classification; as a
 * return's target (the smashed-stack rule), the verdict of the code. */
struct cls_ent {
	uint64_t addr;
	uint8_t info;		/* kind | INFO_INDIRECT; or INFO_SMASHED */
	uint8_t size;		/* length of the instruction, 0 unknown */
	bool used;
};

struct cls_cache {
	struct cls_ent *ent;
	size_t cap, used;
};

static int cls_grow(struct cls_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024;
	struct cls_ent *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->ent[i].used)
			continue;
		for (j = addr_slot(c->ent[i].addr, cap); n[j].used; j = (j + 1) & (cap - 1))
			;
		n[j] = c->ent[i];
	}
	free(c->ent);
	c->ent = n;
	c->cap = cap;
	return 0;
}

static void classify_at(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			struct cls_ent *e)
{
	uint8_t code[MAX_INSN];
	size_t n = 0, size = 0;
	bool indirect = false;
	enum btsdec_kind k = BTSDEC_K_UNKNOWN;

	if (sym)	/* the code comes from the core or the module file */
		n = btsdec_sym_read_code(sym, e->addr, code, sizeof(code));
	if (cls)
		k = btsdec_classify_insn(cls, code, n, e->addr, &indirect, &size);
	e->info = (uint8_t)k | (indirect ? INFO_INDIRECT : 0);
	e->size = (uint8_t)size;
}

/* addr's entry; a new one (*fresh set, info and size 0) on first sight.
 * NULL: out of memory. */
static struct cls_ent *cls_find(struct cls_cache *c, uint64_t addr, bool *fresh)
{
	size_t i;

	*fresh = false;
	if (c->used * 2 >= c->cap && cls_grow(c))
		return NULL;
	for (i = addr_slot(addr, c->cap); c->ent[i].used; i = (i + 1) & (c->cap - 1))
		if (c->ent[i].addr == addr)
			return &c->ent[i];
	c->ent[i] = (struct cls_ent){ .addr = addr, .used = true };
	c->used++;
	*fresh = true;
	return &c->ent[i];
}

/* The classification of a branch from `from`, made on first sight. */
static const struct cls_ent *cls_lookup(struct cls_cache *c, struct btsdec_sym *sym,
					struct btsdec_classifier *cls, uint64_t from)
{
	bool fresh;
	struct cls_ent *e = cls_find(c, from, &fresh);

	if (e && fresh)
		classify_at(sym, cls, e);
	return e;
}

/* ---- returns that go where no call came from ------------------------------ */

/* The return addresses of the calls seen so far: an open-addressing set,
 * one slot per distinct address, kept at most half full. */
struct ret_set {
	uint64_t *slot;		/* 0 = empty (no call returns to 0) */
	size_t cap, used;	/* cap: a power of two */
};

static size_t ret_slot(const struct ret_set *set, uint64_t a)
{
	size_t i = addr_slot(a, set->cap);

	while (set->slot[i] && set->slot[i] != a)
		i = (i + 1) & (set->cap - 1);
	return i;
}

static bool ret_has(const struct ret_set *set, uint64_t a)
{
	return set->cap && set->slot[ret_slot(set, a)] == a;
}

static int ret_add(struct ret_set *set, uint64_t a)
{
	size_t i;

	if (set->used * 2 >= set->cap) {
		struct ret_set n = { .cap = set->cap ? 2 * set->cap : 1024,
				     .used = set->used };

		n.slot = calloc(n.cap, sizeof(*n.slot));
		if (!n.slot)
			return -ENOMEM;
		for (size_t k = 0; k < set->cap; k++)
			if (set->slot[k])
				n.slot[ret_slot(&n, set->slot[k])] = set->slot[k];
		free(set->slot);
		*set = n;
	}
	i = ret_slot(set, a);
	if (!set->slot[i]) {
		set->slot[i] = a;
		set->used++;
	}
	return 0;
}

/* Whether the instruction ending right before addr is a call: 1 yes, 0 no,
 * -1 the code there cannot be read.  x86 does not decode backwards, so
 * each length a call can have is tried. */
static int follows_call(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			uint64_t addr)
{
	uint8_t code[MAX_INSN];
	size_t k, size;
	bool ind;

	if (addr < MAX_INSN ||
	    btsdec_sym_read_code(sym, addr - MAX_INSN, code, MAX_INSN) < MAX_INSN)
		return -1;
	for (k = 2; k < MAX_INSN; k++)
		if (btsdec_classify_insn(cls, code + MAX_INSN - k, k, addr - k, &ind,
					 &size) == BTSDEC_K_CALL && size == k)
			return 1;
	return 0;
}

/*
 * The smashed-stack rule (docs/json.md `smashed_stack`, docs/btsdump.md):
 * a return is flagged when its target is not right after any call seen
 * earlier in the trail (that call's `from` plus its length), and not right
 * after a call instruction in the code either: the bytes before the target
 * (from the core or the module file) end in no call, or the target lies in
 * no mapping of the process at all (0x414141414141).  The second test
 * spares returns into frames entered before the trail began (a wrapped
 * ring); a target inside a mapping whose code cannot be read is not
 * flagged, since nothing there says it is wrong.
 */
struct ret_state {
	struct ret_set calls;		/* return addresses of the calls so far */
	struct cls_cache judged;	/* targets whose code was read: the verdict */
};

/* Whether a return from the record's branch smashed the stack: 1 yes,
 * 0 no, -ENOMEM.  The code before a target is read once per target. */
static int ret_smashed(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		       struct ret_state *rs, enum btsdec_kind kind, uint64_t to)
{
	struct cls_ent *e;
	bool fresh;
	int after;

	if (kind != BTSDEC_K_RETURN || !sym || !cls)
		return 0;
	if (to && ret_has(&rs->calls, to))
		return 0;
	if (!(e = cls_find(&rs->judged, to, &fresh)))
		return -ENOMEM;
	if (fresh) {
		after = follows_call(sym, cls, to);
		if (after < 0 ? !btsdec_sym_mapped(sym, to) : !after)
			e->info = INFO_SMASHED;
	}
	return e->info == INFO_SMASHED;
}

/* ---- call depth and segments ------------------------------------------------ */

/* How a branch changes the call depth: +1 calls, -1 returns, 0 others. */
static int depth_delta(enum btsdec_kind k)
{
	switch (k) {
	case BTSDEC_K_CALL: case BTSDEC_K_SYSCALL: case BTSDEC_K_INTERRUPT:
		return 1;
	case BTSDEC_K_RETURN: case BTSDEC_K_SYSRET: case BTSDEC_K_IRET:
		return -1;
	default:
		return 0;
	}
}

static void get_loc(const struct btsdec_decoded *d, uint64_t addr, struct btsdec_loc *l)
{
	if (d->sym && d->symbols)
		btsdec_sym_lookup(d->sym, addr, l);
	else
		memset(l, 0, sizeof(*l));
}

void btsdec_decoded_branch(const struct btsdec_decoded *d, size_t i,
			   struct btsdec_branch *b)
{
	int depth = d->depth_at[i / DEPTH_STRIDE];

	memset(b, 0, sizeof(*b));
	b->rec = btsdec_trace_at(d->t, i);
	b->kind = d->info[i] & INFO_KIND;
	b->indirect = d->info[i] & INFO_INDIRECT;
	b->smashed = d->info[i] & INFO_SMASHED;
	for (size_t j = i - i % DEPTH_STRIDE; j <= i; j++)
		depth += depth_delta(d->info[j] & INFO_KIND);
	b->depth = depth;
	if (b->kind == BTSDEC_K_MARKER)
		return;
	get_loc(d, b->rec.from, &b->from_loc);
	get_loc(d, b->rec.to, &b->to_loc);
}

static bool same_func(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void seg_add_line(struct btsdec_segment *s, const struct btsdec_loc *l)
{
	if (!l->file || !l->line)
		return;
	if (!s->file)
		s->file = l->file;
	if (strcmp(s->file, l->file))
		return;
	if (!s->line_lo || l->line < s->line_lo)
		s->line_lo = l->line;
	if (l->line > s->line_hi)
		s->line_hi = l->line;
}

static void seg_start(struct btsdec_segment *s, const struct btsdec_loc *at,
		      uint64_t addr, int depth)
{
	*s = (struct btsdec_segment){ .func = at->func, .addr = addr,
				      .depth = depth, .first = BTSDEC_SEG_NONE,
				      .last = BTSDEC_SEG_NONE };
	seg_add_line(s, at);
}

/* Walks the segments in order, giving each from number `first` on to fn
 * once it is complete; depths are relative to `base` (the normalized depth
 * of the trace's start).  Returns the number of segments, or fn's error. */
static long walk_segments(const struct btsdec_decoded *d, int base, size_t first,
			  btsdec_segment_fn fn, void *arg)
{
	struct btsdec_segment cur;
	struct btsdec_branch b;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < d->nr; i++) {
		int delta;

		b.kind = d->info[i] & INFO_KIND;
		if (b.kind == BTSDEC_K_MARKER)
			continue;
		b.rec = btsdec_trace_at(d->t, i);
		get_loc(d, b.rec.from, &b.from_loc);
		if (!n) {
			seg_start(&cur, &b.from_loc, b.rec.from, base);
			n = 1;
		}
		if (cur.first == BTSDEC_SEG_NONE)
			cur.first = i;
		cur.last = i;
		seg_add_line(&cur, &b.from_loc);
		delta = depth_delta(b.kind);
		base += delta;
		get_loc(d, b.rec.to, &b.to_loc);
		if (delta || !same_func(cur.func, b.to_loc.func)) {
			if (fn && n - 1 >= first && (ret = fn(arg, n - 1, &cur)))
				return ret;
			seg_start(&cur, &b.to_loc, b.rec.to, base);
			n++;
		}
	}
	if (fn && n && n - 1 >= first && (ret = fn(arg, n - 1, &cur)))
		return ret;
	return (long)n;
}

int btsdec_decoded_segments(const struct btsdec_decoded *d, size_t first,
			    btsdec_segment_fn fn, void *arg)
{
	long n = walk_segments(d, d->nr ? d->depth_at[0] : 0, first, fn, arg);

	return n < 0 ? (int)n : 0;
}

/* Depth checkpoints, normalized so that the shallowest point is 0. */
static void build_depth(struct btsdec_decoded *d)
{
	int depth = 0, min = 0;
	size_t i;

	for (i = 0; i < d->nr; i++) {
		if (i % DEPTH_STRIDE == 0)
			d->depth_at[i / DEPTH_STRIDE] = depth;
		depth += depth_delta(d->info[i] & INFO_KIND);
		if (depth < min)
			min = depth;
	}
	for (i = 0; i < (d->nr + DEPTH_STRIDE - 1) / DEPTH_STRIDE; i++)
		d->depth_at[i] -= min;
}

/* ---- the decoder --------------------------------------------------------------- */

int btsdec_decode(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		  const struct btsdec_trace *t, struct btsdec_decoded *out,
		  struct btsdec_err *err)
{
	return btsdec_decode_symbols(sym, cls, t, true, out, err);
}

/* Classifies, symbolizes and marks each record, oldest first: a return
 * is judged against the calls before it (ret_smashed). */
static int decode_records(struct btsdec_decoded *d, struct btsdec_classifier *cls)
{
	struct cls_cache cc = { 0 };
	struct ret_state rs = { 0 };
	const struct cls_ent *e;
	struct btsdec_loc l;
	int ret = 0, smashed;

	for (size_t i = 0; !ret && i < d->nr; i++) {
		const struct btsdec_record rec = btsdec_trace_at(d->t, i), *r = &rec;
		enum btsdec_kind k;

		if (btsdec_is_marker(r)) {
			d->info[i] = BTSDEC_K_MARKER;
			continue;
		}
		get_loc(d, r->from, &l);	/* symbolized once, here */
		get_loc(d, r->to, &l);
		if (!(e = cls_lookup(&cc, d->sym, cls, r->from))) {
			ret = -ENOMEM;
			break;
		}
		k = e->info & INFO_KIND;
		d->info[i] = e->info;
		smashed = ret_smashed(d->sym, cls, &rs, k, r->to);
		if (smashed < 0) {
			ret = smashed;
			break;
		}
		if (smashed)
			d->info[i] |= INFO_SMASHED;
		if (k == BTSDEC_K_CALL && e->size && r->from + e->size)
			ret = ret_add(&rs.calls, r->from + e->size);
	}
	free(rs.calls.slot);
	free(rs.judged.ent);
	free(cc.ent);
	return ret;
}

int btsdec_decode_symbols(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			  const struct btsdec_trace *t, bool symbols,
			  struct btsdec_decoded *out, struct btsdec_err *err)
{
	struct btsdec_decoded d = { .nr = t->nr, .t = t, .sym = sym,
				    .symbols = symbols };
	long n;

	if (t->nr) {
		d.info = malloc(t->nr);
		d.depth_at = malloc((t->nr + DEPTH_STRIDE - 1) / DEPTH_STRIDE *
				    sizeof(*d.depth_at));
		if (!d.info || !d.depth_at || decode_records(&d, cls)) {
			btsdec_decoded_free(&d);
			return btsdec_fail(err, -ENOMEM, "out of memory decoding %zu records",
					   t->nr);
		}
	}
	build_depth(&d);
	n = walk_segments(&d, 0, 0, NULL, NULL);
	d.nr_seg = n > 0 ? (size_t)n : 0;
	*out = d;
	return 0;
}

void btsdec_decoded_free(struct btsdec_decoded *d)
{
	free(d->info);
	free(d->depth_at);
	memset(d, 0, sizeof(*d));
}

/* ---- the fault tied to the trail ------------------------------------------ */

/* The longest straight-line run searched for pc after the newest branch. */
#define MAX_RUN		(64 * 1024)

static const char *const fault_rel_names[BTSDEC_FAULT__MAX] = {
	[BTSDEC_FAULT_NO_TRAIL] = "no_trail",
	[BTSDEC_FAULT_TARGET] = "target",
	[BTSDEC_FAULT_RUN] = "run",
	[BTSDEC_FAULT_UNRELATED] = "unrelated",
	[BTSDEC_FAULT_UNKNOWN] = "unknown",
};

const char *btsdec_fault_rel_name(enum btsdec_fault_rel r)
{
	return (unsigned int)r < BTSDEC_FAULT__MAX ? fault_rel_names[r] : "invalid";
}

/* Whether execution cannot fall through an instruction of this kind
 * without the trail recording it (a conditional jump falls through when
 * not taken, a syscall returns to the next instruction). */
static bool leaves_run(enum btsdec_kind k)
{
	return k == BTSDEC_K_CALL || k == BTSDEC_K_RETURN || k == BTSDEC_K_JUMP ||
	       k == BTSDEC_K_IRET || k == BTSDEC_K_SYSRET;
}

/* Walks the code from `from` towards pc, one instruction at a time. */
enum btsdec_fault_rel btsdec_run_relate(struct btsdec_sym *sym,
					struct btsdec_classifier *cls,
					uint64_t from, uint64_t pc)
{
	uint8_t code[MAX_INSN];
	uint64_t a = from;
	size_t n, size;
	bool ind;

	if (a == pc)
		return BTSDEC_FAULT_TARGET;
	while (a != pc) {
		if (pc < a || pc - from > MAX_RUN)
			return BTSDEC_FAULT_UNRELATED;
		if (!sym || !cls)
			return BTSDEC_FAULT_UNKNOWN;
		n = btsdec_sym_read_code(sym, a, code, sizeof(code));
		if (leaves_run(btsdec_classify_insn(cls, code, n, a, &ind, &size)))
			return BTSDEC_FAULT_UNRELATED;
		if (!size)
			return BTSDEC_FAULT_UNKNOWN;
		a += size;
	}
	return BTSDEC_FAULT_RUN;
}

/* The first instruction on the straight code from `to` that leaves it
 * or, with syscalls, is a syscall, within MAX_RUN: its address and kind;
 * 0 when the code ends or cannot be read first. */
static uint64_t run_walk(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 uint64_t to, bool syscalls, enum btsdec_kind *kind)
{
	uint8_t code[MAX_INSN];
	enum btsdec_kind k;
	size_t n, size;
	bool ind;

	*kind = BTSDEC_K_UNKNOWN;
	for (uint64_t a = to; sym && cls && a - to <= MAX_RUN; a += size) {
		n = btsdec_sym_read_code(sym, a, code, sizeof(code));
		k = btsdec_classify_insn(cls, code, n, a, &ind, &size);
		if ((syscalls && k == BTSDEC_K_SYSCALL) || leaves_run(k)) {
			*kind = k;
			return a;
		}
		if (!size)
			break;
	}
	return 0;
}

uint64_t btsdec_run_syscall(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			    uint64_t to)
{
	enum btsdec_kind k;
	uint64_t a = run_walk(sym, cls, to, true, &k);

	return k == BTSDEC_K_SYSCALL ? a : 0;
}

uint64_t btsdec_run_exit(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 uint64_t to, enum btsdec_kind *kind)
{
	return run_walk(sym, cls, to, false, kind);
}

void btsdec_fault_relate(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 const struct btsdec_decoded *d, struct btsdec_fault *f)
{
	size_t i = d->nr;
	uint64_t to;

	while (i && (d->info[i - 1] & INFO_KIND) == BTSDEC_K_MARKER)
		i--;
	f->run = 0;
	if (!i) {
		f->rel = BTSDEC_FAULT_NO_TRAIL;
		return;
	}
	f->branch = i - 1;
	to = btsdec_trace_at(d->t, i - 1).to;
	if (f->pc == to) {
		f->rel = BTSDEC_FAULT_TARGET;
		return;
	}
	f->rel = btsdec_run_relate(sym, cls, to, f->pc);
	if (f->rel == BTSDEC_FAULT_RUN)
		f->run = f->pc - to;
}
