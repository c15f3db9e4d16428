// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump regs [OPTIONS] CORE [EXECUTABLE]`: a thread's registers N
 * instructions before its fault, as the value-recovery engine proves them
 * from the core and the trace (lib/recover.c); unknown stays unknown.
 * Text (symbols escaped, lib/escape.c) or --json.  Exit codes: exit.h.
 * Also what btsdump why shares with it (btsdump.h): the options, opening
 * the core and its symbolizer, running the engine for a thread.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdump.h"
#include "exit.h"

/* regs has the shared options alone */
#define regs_args btsdump_recover_opts

static void usage(FILE *out)
{
	fputs("Usage: btsdump regs [OPTIONS] CORE [EXECUTABLE]\n"
	      "\n"
	      "Prints a thread's registers N instructions before its fault, as recovered\n"
	      "from the core's final state and the trace; a value that cannot be proven\n"
	      "is shown as unknown (a nibble as '?').\n"
	      "\n"
	      "  -n, --back N              N instructions before the fault (default 0: at it)\n"
	      BTSDUMP_RECOVER_HELP
	      "\n"
	      "Exit status: 0 shown; 1 usage; 2 core unreadable; 3 no trace or N beyond\n"
	      "it; 5 no such traced thread; 7 EXECUTABLE not used.\n",
	      out);
}

int btsdump_recover_option(const char *mode, int c, char **argv,
			   struct btsdump_recover_opts *o, void (*help)(FILE *),
			   int *status)
{
	uint64_t v;
	int ret;

	switch (c) {
	case 'n': case 't':
		if ((ret = bts_cli_parse_u64(optarg, &v)) || (c == 't' && v > INT_MAX))
			return usage_error("%s: --%s: %s: '%s'", mode, c == 'n' ? "back" : "thread",
					   bts_cli_number_error(ret ? ret : -ERANGE), optarg);
		if (c == 'n')
			o->back = v;
		else
			o->have_tid = true, o->tid = (pid_t)v;
		return 0;
	case 'j': o->json = true; return 0;
	case 'd': o->so.debuginfo_path = optarg; return 0;
	case 'h': help(stdout); *status = 0; return -1;
	case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
	default: return bts_cli_bad_option("btsdump", argv, c);
	}
}

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse(int argc, char **argv, struct regs_args *a, int *status)
{
	static const struct option opts[] = {
		BTSDUMP_RECOVER_OPTIONS,
		{ 0 }
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, BTSDUMP_RECOVER_OPTSTRING, opts, NULL)) != -1)
		if ((ret = btsdump_recover_option("regs", c, argv, a, usage, status)))
			return ret;
	if (argc - optind < 1 || argc - optind > 2)
		return usage_error(argc - optind < 1 ? "regs: missing CORE" :
				   "regs: too many arguments");
	a->so.executable = argc - optind == 2 ? argv[optind + 1] : NULL;
	return 0;
}

const struct btsdec_thread *btsdump_pick_thread(struct btsdec_core *core, bool have_tid,
						pid_t tid)
{
	for (size_t i = 0; i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *t = btsdec_core_thread(core, i);

		if (have_tid ? t->tid == tid : true)
			return t;
	}
	return NULL;
}

const char *btsdump_nibbles(uint64_t v, uint64_t k, unsigned digits, char buf[19])
{
	buf[0] = '0';
	buf[1] = 'x';
	for (unsigned n = 0; n < digits; n++) {
		unsigned sh = 4 * (digits - 1 - n);

		buf[2 + n] = (k >> sh & 0xf) == 0xf ? "0123456789abcdef"[v >> sh & 0xf] : '?';
	}
	buf[2 + digits] = 0;
	return buf;
}

static void print_text(struct btsdec_sym *sym, const struct regs_args *a,
		       const struct btsdec_thread *th, const struct btsdec_regs *s,
		       size_t nr, bool gap)
{
	struct btsdec_loc loc;
	char where[512], hex[19];
	uint64_t pc = s->val[BTSDEC_REG_RIP];

	if (gap) {
		snprintf(where, sizeof(where), "in a gap of the trace");
	} else {
		btsdec_sym_lookup(sym, pc, &loc);
		btsdec_loc_format(&loc, pc, where, sizeof(where));
	}
	btsdec_escape_line(stdout, NULL, "thread %d: %llu instruction%s before the fault "
			   "(of %zu traced), %s%s", (int)th->tid, (unsigned long long)a->back,
			   a->back == 1 ? "" : "s", nr, gap ? "" : "at ", where);
	for (int k = 0; k < BTSDEC_REG__MAX; k++)
		printf("%-7s %s\n", btsdec_reg_name(k), !s->known[k] ? "unknown" :
		       btsdump_nibbles(s->val[k], s->known[k], 16, hex));
}

static int print_json(const struct regs_args *a, const struct btsdec_thread *th,
		      const struct btsdec_regs *s, size_t nr, bool gap)
{
	struct json_object *doc = json_object_new_object(), *regs = json_object_new_object();
	struct btsdec_err err;
	int ret;

	json_object_object_add(doc, "schema", json_object_new_string(BTSDEC_JSON_SCHEMA_REGS));
	json_object_object_add(doc, "version", json_object_new_int(BTSDEC_JSON_VERSION));
	json_object_object_add(doc, "tid", json_object_new_int(th->tid));
	json_object_object_add(doc, "back", json_object_new_uint64(a->back));
	json_object_object_add(doc, "instructions", json_object_new_uint64(nr));
	json_object_object_add(doc, "gap", json_object_new_boolean(gap));
	for (int k = 0; k < BTSDEC_REG__MAX; k++) {
		struct json_object *r = NULL;

		if (s->known[k]) {
			r = json_object_new_object();
			json_object_object_add(r, "value", btsdec_json_hex(s->val[k]));
			json_object_object_add(r, "known", btsdec_json_hex(s->known[k]));
		}
		json_object_object_add(regs, btsdec_reg_name(k), r);
	}
	json_object_object_add(doc, "registers", regs);
	ret = btsdec_json_write(stdout, doc, &err);	/* frees doc */
	if (ret)
		say("%s", err.msg);
	return ret ? BTS_EXIT_READ : 0;
}

int btsdump_recover(struct btsdec_core *core, struct btsdec_sym *sym, bool have_tid,
		    pid_t tid, uint64_t back, const struct btsdec_thread **th,
		    struct btsdec_recover **r)
{
	struct btsdec_classifier *cls = NULL;
	struct btsdec_err err;
	int rc;

	*r = NULL;
	*th = btsdump_pick_thread(core, have_tid, tid);
	if (!*th) {
		say("%s: no thread %d", btsdec_core_path(core), (int)tid);
		return BTS_EXIT_NO_THREAD;
	}
	rc = btsdec_classifier_new(&cls, &err);
	if (!rc)
		rc = btsdec_recover_open(core, sym, cls, *th, r, &err);
	btsdec_classifier_free(cls);	/* the engine keeps no reference */
	if (rc) {
		say("%s: %s", btsdec_core_path(core), err.msg);
		return BTS_EXIT_NONE;
	}
	if (back > btsdec_recover_nr(*r)) {
		say("%s: thread %d: --back %llu: only %zu instructions traced",
		    btsdec_core_path(core), (int)(*th)->tid, (unsigned long long)back,
		    btsdec_recover_nr(*r));
		btsdec_recover_free(*r);
		*r = NULL;
		return BTS_EXIT_NONE;
	}
	return 0;
}

static int show(struct btsdec_core *core, struct btsdec_sym *sym, const struct regs_args *a)
{
	const struct btsdec_thread *th;
	struct btsdec_recover *r;
	struct btsdec_regs s;
	uint64_t addr;
	size_t nr;
	bool gap;
	int ret = btsdump_recover(core, sym, a->have_tid, a->tid, a->back, &th, &r);

	if (ret)
		return ret;
	nr = btsdec_recover_nr(r);
	btsdec_recover_regs_at(r, nr - a->back, &s);
	gap = a->back && btsdec_recover_insn(r, nr - a->back, &addr);
	if (a->json)
		ret = print_json(a, th, &s, nr, gap);
	else
		print_text(sym, a, th, &s, nr, gap);
	btsdec_recover_free(r);
	return ret;
}

int btsdump_open_core(const char *input, struct btsdec_symopts *so,
		      int (*fn)(struct btsdec_core *, struct btsdec_sym *, void *), void *arg)
{
	struct btsdec_core *core = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_err err;
	const char *path;
	char buf[64];
	int fd = -1, exe = 0, ret = bts_cli_input_path(input, buf, sizeof(buf), &path, &fd);

	if (ret) {
		say("%s: %s", input, strerror(-ret));
		return BTS_EXIT_READ;
	}
	ret = BTS_EXIT_READ;
	if (btsdec_core_open(path, &core, &err)) {
		say("%s", err.msg);
		goto out;
	}
	if (so->executable && btsdump_check_executable(core, so->executable)) {
		so->executable = NULL;
		exe = BTS_EXIT_EXECUTABLE;
	}
	if (btsdec_sym_open_core(core, so, &sym, &err)) {
		say("%s", err.msg);
		goto out;
	}
	ret = fn(core, sym, arg);
	if (!ret && exe)
		ret = exe;
out:
	btsdec_sym_close(sym);
	btsdec_core_close(core);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int show_regs(struct btsdec_core *core, struct btsdec_sym *sym, void *arg)
{
	return show(core, sym, arg);
}

int btsdump_regs_main(int argc, char **argv)
{
	struct regs_args a = { 0 };
	int status = 0, ret = parse(argc, argv, &a, &status);

	if (ret)
		return ret < 0 ? status : ret;
	return btsdump_open_core(argv[optind], &a.so, show_regs, &a);
}
