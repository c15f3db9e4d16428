// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump why [OPTIONS] CORE [EXECUTABLE] REGISTER|*ADDR[,SIZE]`: where a
 * value of the final state (the fault; --back N: N instructions before) came from, as the chain the
 * library builds once (lib/why.c over lib/recover.c), rendered as text (a
 * tree, newest first, every line escaped: lib/escape.c) or --json
 * (docs/json.md "btsdump why").  Exit codes: exit.h.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "btsdec.h"
#include "btsdump.h"
#include "exit.h"

#define DEFAULT_DEPTH 8
#define MAX_STEPS 64

struct why_args {
	struct btsdump_recover_opts o;
	struct btsdec_why_value what;
	const char *target;
	bool expr;		/* target is a C expression: placed once the
				 * engine has run */
	unsigned depth;
};

static void usage(FILE *out)
{
	fputs("Usage: btsdump why [OPTIONS] CORE [EXECUTABLE] REGISTER|*ADDR[,SIZE]\n"
	      "\n"
	      "Shows where a value of the thread's final state (the fault) came from:\n"
	      "the instruction that last wrote it, with its location and the operands\n"
	      "it read as recovered from the core and the trace, then where those came\n"
	      "from, newest first.  A value that cannot be proven is shown as unknown.\n"
	      "REGISTER is a gdb name (rdx, edx, dl, r8d, rip, eflags; '$' allowed);\n"
	      "memory is *ADDR (8 bytes), *ADDR,SIZE or ADDR,SIZE (SIZE 1, 2, 4 or 8).\n"
	      "A C expression is a variable (a local or parameter of the function at\n"
	      "the fault, or of the last one run when the fault's pc is in none; a\n"
	      "global) then .FIELD, ->FIELD, [N]: req->handler, table[3],\n"
	      "placed with its DWARF and the values proven there.\n"
	      "\n"
	      "  -n, --back N              the value N instructions before the fault\n"
	      "                            (default 0: at it), as btsdump regs --back\n"
	      "  -D, --depth N             follow the chain N links deep (default 8)\n"
	      BTSDUMP_RECOVER_HELP
	      "\n"
	      "Exit status: 0 shown; 1 usage (an unknown register, address form or\n"
	      "variable); 2 core unreadable; 3 no trace, N beyond it, or a value the\n"
	      "expression needs is unknown; 5 no such traced thread; 7 EXECUTABLE not\n"
	      "used.\n",
	      out);
}

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse(int argc, char **argv, struct why_args *a, int *status)
{
	static const struct option opts[] = {
		{ "depth", required_argument, NULL, 'D' },
		BTSDUMP_RECOVER_OPTIONS,
		{ 0 }
	};
	uint64_t v;
	int c, ret, n;

	while ((c = getopt_long(argc, argv, BTSDUMP_RECOVER_OPTSTRING "D:", opts, NULL)) != -1) {
		if (c != 'D') {
			if ((ret = btsdump_recover_option("why", c, argv, &a->o, usage, status)))
				return ret;
			continue;
		}
		if ((ret = bts_cli_parse_u64(optarg, &v)) || v > 64)
			return usage_error("why: --depth: %s: '%s'",
					   bts_cli_number_error(ret ? ret : -ERANGE), optarg);
		a->depth = (unsigned)v;
	}
	n = argc - optind;
	if (n < 2 || n > 3)
		return usage_error(n < 2 ? "why: missing CORE or REGISTER" : "why: too many arguments");
	a->target = argv[argc - 1];
	a->expr = btsdec_why_parse(a->target, &a->what) != 0;
	if (a->expr && !isalpha((unsigned char)*a->target) && *a->target != '_')
		return usage_error("why: '%s': not a register, *ADDR[,SIZE] nor a C expression",
				   a->target);
	a->o.so.executable = n == 3 ? argv[optind + 1] : NULL;
	return 0;
}

/* A value's digits: "unknown", all known "0x…", else nibbles with '?'. */
static const char *value_text(const struct btsdec_why_value *v, char buf[19])
{
	uint64_t m = v->size >= 8 ? ~0ull : (1ull << (8 * v->size)) - 1;

	if (!(v->known & m))
		return "unknown";
	if ((v->known & m) == m) {
		snprintf(buf, 19, "0x%llx", (unsigned long long)v->val);
		return buf;
	}
	return btsdump_nibbles(v->val, v->known, 2 * (v->size ? v->size : 8), buf);
}

/* The symbol holding a memory value's address ("handlers+0x18"), or
 * NULL; points into the symbolizer. */
static const char *mem_symbol(struct btsdec_sym *sym, const struct btsdec_why_value *v,
			      uint64_t *off)
{
	if (v->kind != BTSDEC_WHY_MEM || !v->addr_known)
		return NULL;
	return btsdec_sym_addrsym(sym, v->addr, off);
}

/* "rdx = 0x0", "[0x5558… handlers+0x18]/8 = 0x0", "[address unknown]/8",
 * "3". */
static void value_line(struct btsdec_sym *sym, const struct btsdec_why_value *v,
		       char *out, size_t len)
{
	const char *name;
	uint64_t off;
	char hex[19], at[160] = "";

	if (v->kind == BTSDEC_WHY_IMM)
		snprintf(out, len, "%s", value_text(v, hex));
	else if (v->kind == BTSDEC_WHY_REG)
		snprintf(out, len, "%s = %s", btsdec_why_reg_name(v), value_text(v, hex));
	else if (v->addr_known) {
		if ((name = mem_symbol(sym, v, &off)))
			snprintf(at, sizeof(at), off ? " %.120s+0x%llx" : " %.120s", name,
				 (unsigned long long)off);
		snprintf(out, len, "[0x%llx%s]/%u = %s", (unsigned long long)v->addr, at,
			 v->size, value_text(v, hex));
	}
	else
		snprintf(out, len, "[address unknown]/%u", v->size);
}

/* "dispatch+0x22 (crasher.c:30)" */
static void where(struct btsdec_sym *sym, uint64_t pc, char *out, size_t len)
{
	struct btsdec_loc loc;
	char fn[256];

	btsdec_sym_lookup(sym, pc, &loc);
	btsdec_loc_format(&loc, pc, fn, sizeof(fn));
	if (loc.file && loc.line > 0)
		snprintf(out, len, "%s (%s:%d)", fn, loc.file, loc.line);
	else
		snprintf(out, len, "%s", fn);
}

static const char *origin(const struct btsdec_why_step *s)
{
	bool mem = s->what.kind == BTSDEC_WHY_MEM;

	switch (s->from) {
	case BTSDEC_WHY_BEFORE:
		return mem ? "a slot the trace never wrote before here (the core's value, "
			     "or proven by a load)" : "held since before the trace began";
	case BTSDEC_WHY_SYSCALL: return "the kernel, at the syscall";
	case BTSDEC_WHY_GAP: return "code the trace does not show (a gap)";
	case BTSDEC_WHY_ALIAS: return "may have been written by (a store at an address not "
				      "known, or not modelled)";
	case BTSDEC_WHY_NOT_FOLLOWED:
		return mem && !s->what.addr_known ? "its address is not known" :
		       "memory another thread may write: not followed";
	default: return "";
	}
}

static void print_step(struct btsdec_sym *sym, const struct btsdec_why *w, size_t k)
{
	const struct btsdec_why_step *s = &w->steps[k];
	char val[256], loc[512], ops[1024] = "";
	size_t used = 0;
	int ind = 2 * (int)s->depth;

	value_line(sym, &s->what, val, sizeof(val));
	if (s->from == BTSDEC_WHY_BEFORE || s->from == BTSDEC_WHY_NOT_FOLLOWED) {
		btsdec_escape_line(stdout, NULL, "%*s%s <- %s", ind, "", val, origin(s));
		return;
	}
	if (s->from == BTSDEC_WHY_GAP) {	/* no address: nothing to place */
		btsdec_escape_line(stdout, NULL, "%*s%s <- %s [back %zu]", ind, "", val, origin(s),
				   w->nr_insns - s->insn);
		return;
	}
	where(sym, s->pc, loc, sizeof(loc));
	btsdec_escape_line(stdout, NULL, "%*s%s <- %s%s%s in %s [back %zu]%s%s%s", ind, "", val,
			   s->from == BTSDEC_WHY_INSN ? "" : origin(s),
			   s->from == BTSDEC_WHY_INSN || !s->text[0] ? "" : ": ", s->text,
			   loc, w->nr_insns - s->insn,
			   s->maybe ? " (maybe: it may not have written it)" : "",
			   s->partial ? " (some of its bytes)" : "",
			   s->what.kind == BTSDEC_WHY_REG && s->what.reg == BTSDEC_REG_RIP &&
			   !s->nr_ops ? " (the next instruction, or a direct target)" : "");
	for (unsigned o = 0; o < s->nr_ops && used < sizeof(ops); o++) {
		value_line(sym, &s->ops[o], val, sizeof(val));
		used += snprintf(ops + used, sizeof(ops) - used, "%s%s", o ? ", " : "", val);
	}
	if (s->nr_ops)
		btsdec_escape_line(stdout, NULL, "%*s    read %s", ind, "", ops);
}

/* Depth first from step k: a link's inputs under it. */
static void print_tree(struct btsdec_sym *sym, const struct btsdec_why *w, size_t k)
{
	print_step(sym, w, k);
	for (size_t c = k + 1; c < w->nr; c++)
		if (w->steps[c].parent == k)
			print_tree(sym, w, c);
}

static struct json_object *value_json(struct btsdec_sym *sym,
				      const struct btsdec_why_value *v)
{
	struct json_object *o = json_object_new_object();
	uint64_t m = v->size >= 8 ? ~0ull : (1ull << (8 * v->size)) - 1, off = 0;
	const char *name = mem_symbol(sym, v, &off);

	json_object_object_add(o, "kind", json_object_new_string(
		v->kind == BTSDEC_WHY_REG ? "register" : v->kind == BTSDEC_WHY_MEM ? "memory" :
		"immediate"));
	if (v->kind == BTSDEC_WHY_REG)
		json_object_object_add(o, "name", json_object_new_string(btsdec_why_reg_name(v)));
	if (v->kind == BTSDEC_WHY_MEM) {
		json_object_object_add(o, "address", v->addr_known ? btsdec_json_hex(v->addr) : NULL);
		json_object_object_add(o, "symbol", btsdec_json_str(name));
		json_object_object_add(o, "offset", name ? json_object_new_uint64(off) : NULL);
	}
	json_object_object_add(o, "size", json_object_new_int(v->size));
	json_object_object_add(o, "value", v->known & m ? btsdec_json_hex(v->val) : NULL);
	json_object_object_add(o, "known", btsdec_json_hex(v->known & m));
	return o;
}

static const char *const from_names[] = {
	[BTSDEC_WHY_INSN] = "instruction", [BTSDEC_WHY_BEFORE] = "before-trace",
	[BTSDEC_WHY_SYSCALL] = "syscall", [BTSDEC_WHY_GAP] = "gap",
	[BTSDEC_WHY_ALIAS] = "alias", [BTSDEC_WHY_NOT_FOLLOWED] = "not-followed",
};

static struct json_object *insn_json(struct btsdec_sym *sym, const struct btsdec_why *w,
				     const struct btsdec_why_step *s)
{
	struct json_object *o = json_object_new_object();
	struct btsdec_loc loc;

	json_object_object_add(o, "index", json_object_new_uint64(s->insn));
	json_object_object_add(o, "back", json_object_new_uint64(w->nr_insns - s->insn));
	if (s->from == BTSDEC_WHY_GAP) {
		json_object_object_add(o, "address", NULL);
		return o;
	}
	btsdec_sym_lookup(sym, s->pc, &loc);
	json_object_object_add(o, "address", btsdec_json_hex(s->pc));
	json_object_object_add(o, "text", btsdec_json_str(s->text));
	json_object_object_add(o, "function", btsdec_json_str(loc.func));
	json_object_object_add(o, "offset", loc.func ? json_object_new_uint64(loc.off) : NULL);
	json_object_object_add(o, "file", btsdec_json_str(loc.file));
	json_object_object_add(o, "line", loc.file && loc.line > 0 ?
			       json_object_new_int(loc.line) : NULL);
	return o;
}

static struct json_object *step_json(struct btsdec_sym *sym, const struct btsdec_why *w,
				     const struct btsdec_why_step *s)
{
	struct json_object *o = json_object_new_object(), *ops = json_object_new_array();
	bool has_insn = s->from != BTSDEC_WHY_BEFORE && s->from != BTSDEC_WHY_NOT_FOLLOWED;

	json_object_object_add(o, "parent", s->parent == SIZE_MAX ? NULL :
			       json_object_new_uint64(s->parent));
	json_object_object_add(o, "depth", json_object_new_int((int)s->depth));
	json_object_object_add(o, "back", json_object_new_uint64(w->nr_insns - s->at));
	json_object_object_add(o, "what", value_json(sym, &s->what));
	json_object_object_add(o, "from", json_object_new_string(from_names[s->from]));
	json_object_object_add(o, "instruction", has_insn ? insn_json(sym, w, s) : NULL);
	json_object_object_add(o, "maybe", json_object_new_boolean(s->maybe));
	json_object_object_add(o, "partial", json_object_new_boolean(s->partial));
	for (unsigned k = 0; k < s->nr_ops; k++) {
		struct json_object *v = value_json(sym, &s->ops[k]);

		json_object_object_add(v, "source", json_object_new_boolean(s->source[k]));
		json_object_array_add(ops, v);
	}
	json_object_object_add(o, "operands", ops);
	return o;
}

static int print_json(struct btsdec_sym *sym, const struct why_args *a,
		      const struct btsdec_thread *th, const struct btsdec_why *w)
{
	struct json_object *doc = json_object_new_object(), *chain = json_object_new_array();
	struct btsdec_err err;
	int ret;

	json_object_object_add(doc, "schema", json_object_new_string(BTSDEC_JSON_SCHEMA_WHY));
	json_object_object_add(doc, "version", json_object_new_int(BTSDEC_JSON_VERSION));
	json_object_object_add(doc, "tid", json_object_new_int(th->tid));
	json_object_object_add(doc, "target", btsdec_json_str(a->target));
	json_object_object_add(doc, "back", json_object_new_uint64(a->o.back));
	json_object_object_add(doc, "instructions", json_object_new_uint64(w->nr_insns));
	json_object_object_add(doc, "depth", json_object_new_int((int)a->depth));
	json_object_object_add(doc, "truncated", json_object_new_boolean(w->truncated));
	for (size_t k = 0; k < w->nr; k++)
		json_object_array_add(chain, step_json(sym, w, &w->steps[k]));
	json_object_object_add(doc, "chain", chain);
	ret = btsdec_json_write(stdout, doc, &err);	/* frees doc */
	if (ret)
		say("%s", err.msg);
	return ret ? BTS_EXIT_READ : 0;
}

static int show(struct btsdec_core *core, struct btsdec_sym *sym, void *arg)
{
	const struct why_args *a = arg;
	const struct btsdec_thread *th;
	struct btsdec_recover *r;
	struct btsdec_why w = { 0 };
	struct btsdec_why_value what = a->what;
	struct btsdec_err err;
	size_t at;
	int ret = btsdump_recover(core, sym, a->o.have_tid, a->o.tid, a->o.back, &th, &r);

	if (ret)
		return ret;
	at = btsdec_recover_nr(r) - a->o.back;
	if (a->expr && (ret = btsdec_why_eval(r, sym, a->target, at, &what, &at, &err))) {
		btsdec_recover_free(r);
		if (ret == -ENODATA) {
			say("why: %s: %s", a->target, err.msg);
			return BTS_EXIT_NONE;
		}
		return usage_error("why: '%s': not a register, *ADDR[,SIZE] nor a variable "
				   "there: %s", a->target, err.msg);
	}
	if (btsdec_why_explain(r, &what, at, a->depth, MAX_STEPS, &w)) {
		say("%s: out of memory", btsdec_core_path(core));
		btsdec_recover_free(r);
		return BTS_EXIT_READ;
	}
	if (a->o.json) {
		ret = print_json(sym, a, th, &w);
	} else {
		if (a->o.back)
			btsdec_escape_line(stdout, NULL, "thread %d, %llu instruction%s before the fault "
					   "(%zu traced):", (int)th->tid, (unsigned long long)a->o.back,
					   a->o.back == 1 ? "" : "s", w.nr_insns);
		else
			btsdec_escape_line(stdout, NULL, "thread %d, at the fault (%zu instructions "
					   "traced):", (int)th->tid, w.nr_insns);
		print_tree(sym, &w, 0);
		if (w.truncated)
			printf("(more links not shown: the chain holds at most %d)\n", MAX_STEPS);
	}
	btsdec_why_fini(&w);
	btsdec_recover_free(r);
	return ret;
}

int btsdump_why_main(int argc, char **argv)
{
	struct why_args a = { .depth = DEFAULT_DEPTH };
	int status = 0, ret = parse(argc, argv, &a, &status);

	if (ret)
		return ret < 0 ? status : ret;
	return btsdump_open_core(argv[optind], &a.o.so, show, &a);
}
