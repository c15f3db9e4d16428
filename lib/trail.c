// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The trail signature of a crash, which bug it is on any run and host:
 * the faulting thread's function transitions (by build-id and symbol, no
 * address), loops collapsed, the newest BTSDEC_TRAIL_DEPTH hashed with the
 * program and the fault.  Called on the model by btsdumpd and btsdumpctl.
 */
#include <errno.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

/* Transitions looked at, newest first: bounds the memory on long trails. */
#define TRAIL_SCAN	65536

/* The hash's input starts with this: a new rule is a new tag. */
#define TRAIL_TAG	"btscrash-trail-1"

struct trail_step {
	struct btsdec_trail_fn from, to;
};

/* The collapsed transitions, newest at s[0]. */
struct trail_stack {
	struct trail_step *s;
	size_t n, cap;
};

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool fn_eq(const struct btsdec_trail_fn *a, const struct btsdec_trail_fn *b)
{
	return str_eq(a->module, b->module) && str_eq(a->func, b->func);
}

static bool run_eq(const struct trail_step *a, const struct trail_step *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!fn_eq(&a[i].from, &b[i].from) || !fn_eq(&a[i].to, &b[i].to))
			return false;
	return true;
}

/* One older transition onto the stack; then, while the newest-pushed
 * run of up to BTSDEC_TRAIL_CYCLE transitions repeats the run before
 * it, one copy goes: a loop leaves one iteration, whatever its count. */
static int trail_push(struct trail_stack *st, const struct trail_step *step)
{
	size_t len;

	if (btsdec_grow(&st->s, &st->cap, st->n + 1))
		return -ENOMEM;
	st->s[st->n++] = *step;
	for (len = 1; len <= BTSDEC_TRAIL_CYCLE && 2 * len <= st->n; len++)
		if (run_eq(st->s + st->n - len, st->s + st->n - 2 * len, len)) {
			st->n -= len;
			len = 0;	/* again, from runs of one */
		}
	return 0;
}

/* ---- FNV-1a, 128 bits ---- */

static void hash_bytes(unsigned __int128 *h, const void *p, size_t len)
{
	const unsigned __int128 prime = ((unsigned __int128)1 << 88) + 0x13b;
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		*h = (*h ^ b[i]) * prime;
}

/* s and its NUL: fields never run into each other. */
static void hash_str(unsigned __int128 *h, const char *s)
{
	hash_bytes(h, s, strlen(s) + 1);
}

static void hash_fn(unsigned __int128 *h, const struct btsdec_trail_fn *fn)
{
	hash_str(h, fn->module ? fn->module : "(unmapped)");
	hash_str(h, fn->func ? fn->func : "");
}

static void hash_fault(unsigned __int128 *h, const struct btsdec_trail_in *in)
{
	struct btsdec_trail_fn at;
	char kind[64];

	snprintf(kind, sizeof(kind), "signal %d code %d %s", in->signo,
		 in->has_siginfo ? in->si_code : 0, btsdec_fault_rel_name(in->rel));
	hash_str(h, kind);
	in->lookup(in->arg, in->pc, &at);
	hash_fn(h, &at);
}

int btsdec_trail_sign(const struct btsdec_trail_in *in, char hex[BTSDEC_TRAIL_HEX + 1])
{
	unsigned __int128 h = ((unsigned __int128)0x6c62272e07bb0142ULL << 64) |
			      0x62b821756295c58dULL;
	struct trail_stack st = { 0 };
	size_t seen = 0;
	int r = 0;

	for (size_t i = in->t ? in->t->nr : 0; !r && i-- > 0 && seen < TRAIL_SCAN;) {
		struct btsdec_record rec = btsdec_trace_at(in->t, i);
		struct trail_step step;

		if (btsdec_is_marker(&rec))
			continue;
		in->lookup(in->arg, rec.from, &step.from);
		in->lookup(in->arg, rec.to, &step.to);
		if (fn_eq(&step.from, &step.to))
			continue;	/* within one function: loops, ifs */
		seen++;
		r = trail_push(&st, &step);
	}
	if (!r) {
		hash_str(&h, TRAIL_TAG);
		hash_str(&h, in->program ? in->program : "");
		hash_fault(&h, in);
		for (size_t i = 0; i < st.n && i < BTSDEC_TRAIL_DEPTH; i++) {
			hash_fn(&h, &st.s[i].from);
			hash_fn(&h, &st.s[i].to);
		}
		snprintf(hex, BTSDEC_TRAIL_HEX + 1, "%016llx%016llx",
			 (unsigned long long)(h >> 64), (unsigned long long)h);
	}
	free(st.s);
	return r;
}

/* The symbolizer's name of the function at addr. */
static void sym_fn(void *arg, uint64_t addr, struct btsdec_trail_fn *fn)
{
	struct btsdec_sym *sym = arg;
	struct btsdec_loc l;
	const char *id;

	btsdec_sym_lookup(sym, addr, &l);
	id = l.module ? btsdec_sym_build_id(sym, addr) : NULL;
	fn->module = !l.module ? NULL : id && *id ? id : l.module;
	fn->func = l.func;
}

int btsdec_model_trail(const struct btsdec_model *m, struct btsdec_core *core,
		       struct btsdec_sym *sym, char hex[BTSDEC_TRAIL_HEX + 1])
{
	const struct btsdec_model_thread *t = m->nr_threads ? &m->threads[0] : NULL;
	struct btsdec_trail_in in;
	uint64_t entry = 0;
	const char *program = NULL;

	if (!t || !t->faulting || !t->has_trace || !t->has_fault || !sym)
		return -ENODATA;
	if (btsdec_core_auxv(core, AT_ENTRY, &entry))
		program = btsdec_sym_build_id(sym, entry);
	in = (struct btsdec_trail_in){
		.program = program ? program : "", .signo = t->fault.signo,
		.has_siginfo = t->fault.has_siginfo, .si_code = t->fault.si_code,
		.rel = t->fault.rel, .pc = t->fault.pc, .t = t->d.t,
		.lookup = sym_fn, .arg = sym,
	};
	return btsdec_trail_sign(&in, hex);
}

int btsdec_core_trail(struct btsdec_core *core, const struct btsdec_symopts *so,
		      char hex[BTSDEC_TRAIL_HEX + 1])
{
	struct btsdec_classifier *cls = NULL;
	struct btsdec_model *m = NULL;
	struct btsdec_sym *sym = NULL;
	int r;

	r = btsdec_sym_open_core(core, so, &sym, NULL) ?:
	    btsdec_classifier_new(&cls, NULL) ?:
	    btsdec_model_build(core, sym, cls, NULL, &m, NULL) ?:
	    btsdec_model_trail(m, core, sym, hex);
	btsdec_model_free(m);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	return r;
}
