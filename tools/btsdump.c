// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdump: the command-line reader of branch traces in core files, for
 * people who do not want a debugger (docs/btsdump.md).  Also `btsdump
 * add-note`, which writes a trace note into an existing core (fixtures,
 * tools), and `btsdump vmcore`, per-CPU kernel traces from a kernel dump
 * (printed by lib/vmreport.c).  Exit codes: usage() and docs/btsdump.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"
#include "btsdump-gdbserver.h"
#include "escape.h"
#include "exit.h"

/* One line on stderr, the message escaped as a whole (a core's name or a
 * reason quoting its contents cannot drive the terminal). */
#define say(...)	btsdec_escape_line(stderr, "btsdump", __VA_ARGS__)

static void usage(FILE *out)
{
	fputs("Usage: btsdump [OPTIONS] CORE [EXECUTABLE]\n"
	      "  or:  btsdump add-note [OPTIONS] CORE RECORDS\n"
	      "  or:  btsdump vmcore [OPTIONS] VMCORE [VMLINUX|SYSTEM.MAP]\n"
	      "  or:  btsdump gdbserver [OPTIONS] CORE [EXECUTABLE]\n"
	      "\n"
	      "Prints the last taken branches of each thread of a core, oldest to\n"
	      "newest, symbolized; the faulting thread first.\n"
	      "\n"
	      "  -t, --thread TID          only this thread\n"
	      "  -n, --last N              only the newest N branches (segments with --calls;\n"
	      "                            0, the default: all)\n"
	      "  -c, --calls               call/return history, indented by call depth\n"
	      "  -j, --json                JSON instead of text\n"
	      "  -S, --no-symbols          classify, but leave symbols and source lines out\n"
	      "                            (for readers that symbolize themselves: gdb)\n"
	      "  -d, --debuginfo-path P    where to look for separate debuginfo\n"
	      "                            (libdwfl syntax, default :.debug:/usr/lib/debug)\n"
	      "  -h, --help                this text\n"
	      "\n"
	      "Exit status: 0 traces printed; 1 usage; 2 core unreadable; 3 core has\n"
	      "no branch trace; 4 malformed trace notes skipped; 5 no such traced thread.\n"
	      "Run `btsdump add-note --help` for the note writer.\n", out);
}

static void usage_add(FILE *out)
{
	fputs("Usage: btsdump add-note [OPTIONS] CORE RECORDS\n"
	      "\n"
	      "Adds a thread trace note (docs/format.md) to CORE.  RECORDS is a text\n"
	      "file, one record per line, oldest first:\n"
	      "  FROM TO [FLAGS]          a branch (numbers in C syntax)\n"
	      "  switch-out TS_NS CPU     a context-switch marker (also switch-in)\n"
	      "  gap REASON TS_NS LEN_NS  a gap marker, REASON 0-3\n"
	      "  # ...                    a comment\n"
	      "\n"
	      "  -t, --tid TID             thread (default: the faulting thread)\n"
	      "  -C, --capacity N          ring capacity (default: max(records, 4096))\n"
	      "  -s, --source hw|emulation|lbr (default emulation)\n"
	      "  -w, --wrapped             set the WRAPPED flag\n"
	      "  -l, --lost N              records lost (exact)\n"
	      "  -g, --gaps N              number of gaps (default: the GAP markers)\n"
	      "  -o, --output FILE         write here instead of replacing CORE\n", out);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

/* Splits a line into at most 4 fields; returns how many. */
static int split(char *line, char **f)
{
	char *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(line, " \t\n", &save); tok && n < 5;
	     tok = strtok_r(NULL, " \t\n", &save))
		f[n++] = tok;
	return n;
}

static int parse_line(char *line, struct btsdec_record *r)
{
	uint64_t v[3] = { 0 };
	char *f[5];
	int n = split(line, f), i, first;
	unsigned int kind = 0;

	if (n < 2)
		return -EINVAL;
	first = !strcmp(f[0], "gap") || !strcmp(f[0], "switch-out") ||
		!strcmp(f[0], "switch-in");
	if (n > 4 || n < 2 + first || (first && !strcmp(f[0], "gap") && n != 4) ||
	    (first && strcmp(f[0], "gap") && n != 3))
		return -EINVAL;
	for (i = first; i < n; i++)
		if (parse_u64(f[i], &v[i - first]))
			return -EINVAL;
	if (!first) {
		*r = (struct btsdec_record){ v[0], v[1], v[2] };
		return 0;
	}
	if (!strcmp(f[0], "gap")) {
		*r = (struct btsdec_record){ BTS_MARKER(BTS_MARK_GAP, v[0]), v[1], v[2] };
		return 0;
	}
	kind = !strcmp(f[0], "switch-out") ? BTS_MARK_SWITCH_OUT : BTS_MARK_SWITCH_IN;
	*r = (struct btsdec_record){ BTS_MARKER(kind, 0), v[0], v[1] };
	return 0;
}

static int read_records(const char *path, struct btsdec_trace *t)
{
	char line[256];
	size_t cap = 0, lineno = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		say("%s: %m", path);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");

		lineno++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (t->nr == cap) {
			struct btsdec_record *n;

			cap = cap ? cap * 2 : 256;
			n = realloc(t->recs, cap * sizeof(*n));
			if (!n)
				goto fail;
			t->recs = n;
		}
		if (parse_line(p, &t->recs[t->nr])) {
			say("%s:%zu: cannot parse record",
				path, lineno);
			goto fail;
		}
		t->nr++;
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	return -EINVAL;
}

static int faulting_tid(const char *core_path, uint64_t *tid)
{
	struct btsdec_core *core;
	struct btsdec_err err;
	int ret = btsdec_core_open(core_path, &core, &err);

	if (ret) {
		say("%s", err.msg);
		return ret;
	}
	if (!btsdec_core_nr_threads(core)) {
		say("%s: no thread in core, give --tid",
			core_path);
		ret = -ENOENT;
	} else {
		*tid = btsdec_core_thread(core, 0)->tid;
	}
	btsdec_core_close(core);
	return ret;
}

static int add_note_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tid", required_argument, NULL, 't' },
		{ "capacity", required_argument, NULL, 'C' },
		{ "source", required_argument, NULL, 's' },
		{ "wrapped", no_argument, NULL, 'w' },
		{ "lost", required_argument, NULL, 'l' },
		{ "gaps", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct btsdec_trace t = { .type = NT_BTSCRASH_THREAD,
				  .flags = BTS_NOTE_F_USER_ONLY | BTS_NOTE_F_LOST_EXACT,
				  .source = BTS_SOURCE_EMUL };
	const char *output = NULL;
	bool have_tid = false;
	uint64_t v;
	struct btsdec_err err;
	bool have_gaps = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, "t:C:s:wl:g:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_u64(optarg, &t.id))
				goto bad;
			have_tid = true;
			break;
		case 'C':
			if (parse_u64(optarg, &t.capacity))
				goto bad;
			break;
		case 's':
			if (!strcmp(optarg, "hw"))
				t.source = BTS_SOURCE_HW;
			else if (!strcmp(optarg, "lbr"))
				t.source = BTS_SOURCE_LBR;
			else if (strcmp(optarg, "emulation"))
				goto bad;
			break;
		case 'w':
			t.flags |= BTS_NOTE_F_WRAPPED;
			break;
		case 'l':
			if (parse_u64(optarg, &t.lost))
				goto bad;
			break;
		case 'g':
			if (parse_u64(optarg, &v) || v > UINT32_MAX)
				goto bad;
			t.nr_gaps = v;
			have_gaps = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage_add(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (argc - optind != 2)
		goto bad;
	if (read_records(argv[optind + 1], &t))
		return BTS_EXIT_USAGE;
	if (!t.capacity)
		t.capacity = t.nr > 4096 ? t.nr : 4096;
	if (!have_gaps)		/* what a writer counts: the GAP markers */
		for (size_t i = 0; i < t.nr; i++)
			if (btsdec_is_marker(&t.recs[i]) &&
			    BTS_MARKER_KIND(t.recs[i].from) == BTS_MARK_GAP)
				t.nr_gaps++;
	if (!have_tid && faulting_tid(argv[optind], &t.id))
		return BTS_EXIT_READ;
	ret = btsdec_core_add_notes(argv[optind], output ? output : argv[optind],
				    &t, 1, &err);
	btsdec_trace_free(&t);
	if (ret) {
		say("add-note: %s", err.msg);
		return BTS_EXIT_READ;
	}
	return 0;
bad:
	usage_add(stderr);
	return BTS_EXIT_USAGE;
}

struct dump_args {
	struct btsdec_report_opts ro;
	const char *core;
	const char *debuginfo_path;
};

static int parse_dump_args(int argc, char **argv, struct dump_args *a)
{
	static const struct option opts[] = {
		{ "thread", required_argument, NULL, 't' },
		{ "last", required_argument, NULL, 'n' },
		{ "calls", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-symbols", no_argument, NULL, 'S' },
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "t:n:cjSd:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_u64(optarg, &v) || v > INT32_MAX)
				return -EINVAL;
			a->ro.have_tid = true;
			a->ro.tid = v;
			break;
		case 'n':
			if (parse_u64(optarg, &v))	/* 0: all, as btsdump vmcore */
				return -EINVAL;
			a->ro.last = v;
			break;
		case 'c':
			a->ro.calls = true;
			break;
		case 'j':
			a->ro.json = true;
			break;
		case 'S':
			a->ro.no_symbols = true;
			break;
		case 'd':
			a->debuginfo_path = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return -EINVAL;
	a->core = argv[optind];
	a->ro.executable = argc - optind == 2 ? argv[optind + 1] : NULL;
	return 0;
}

static int check_thread(struct btsdec_core *core, pid_t tid)
{
	for (size_t i = 0; i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *t = btsdec_core_thread(core, i);

		if (t->tid == tid && t->has_trace)
			return 0;
	}
	say("%s: no trace for thread %d",
		btsdec_core_path(core), tid);
	return BTS_EXIT_NO_THREAD;
}

static int report(struct btsdec_core *core, struct dump_args *a)
{
	struct btsdec_symopts so = { .executable = a->ro.executable,
				     .debuginfo_path = a->debuginfo_path };
	struct btsdec_classifier *cls = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_err err;
	int ret;

	if (btsdec_sym_open_core(core, &so, &sym, &err))
		say("warning: no symbols: %s", err.msg);
	if (btsdec_classifier_new(&cls, &err))
		say("warning: branches not classified: %s",
			err.msg);
	ret = btsdec_report(stdout, core, sym, cls, &a->ro, &err);
	if (ret)
		say("%s", err.msg);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	return ret ? BTS_EXIT_READ : 0;
}

static int dump_main(int argc, char **argv)
{
	struct dump_args a = { 0 };
	struct btsdec_core *core;
	struct btsdec_err err;
	size_t i, rejects;
	int ret;

	if (parse_dump_args(argc, argv, &a)) {
		usage(stderr);
		return BTS_EXIT_USAGE;
	}
	if (btsdec_core_open(a.core, &core, &err)) {
		say("%s", err.msg);
		return BTS_EXIT_READ;
	}
	if (btsdec_core_truncated(core))
		say("warning: %s is truncated (%llu bytes expected); "
			"memory past its end is missing", a.core,
			(unsigned long long)btsdec_core_truncated(core));
	rejects = btsdec_core_nr_rejects(core);
	for (i = 0; i < rejects; i++)
		say("warning: %s", btsdec_core_reject(core, i));
	if (!btsdec_core_nr_traces(core) && !a.ro.json) {
		if (!rejects)
			say("%s: no branch trace in this core "
				"(the process was not traced, or its kernel lacks btscrash)",
				a.core);
		ret = rejects ? BTS_EXIT_PARTIAL : BTS_EXIT_NONE;
	} else if (a.ro.have_tid && (ret = check_thread(core, a.ro.tid))) {
		;
	} else {
		ret = report(core, &a);
		if (!ret && rejects)
			ret = BTS_EXIT_PARTIAL;
		else if (!ret && !btsdec_core_nr_traces(core))
			ret = BTS_EXIT_NONE;
	}
	btsdec_core_close(core);
	return ret;
}

/* ---- btsdump vmcore: per-CPU kernel traces from a kernel dump ----------- */

static void vm_usage(FILE *out)
{
	fputs("Usage: btsdump vmcore [OPTIONS] VMCORE [VMLINUX|SYSTEM.MAP]\n"
	      "\n"
	      "Prints each CPU's last kernel branches from a vmcore (ELF, or\n"
	      "makedumpfile's kdump-compressed form, its pages raw, zlib, lzo, snappy\n"
	      "or zstd, also as its flattened -F stream), found through VMCOREINFO alone:\n"
	      "no vmlinux is needed.  With System.map addresses get names; with\n"
	      "vmlinux each branch is decoded as in a core's report: its kind (read\n"
	      "from vmlinux's code), names, and file:line from its DWARF.\n"
	      "A CPU whose ring is not in the dump falls back to its crash-note copy.\n"
	      "\n"
	      "  -C, --cpu LIST   only these CPUs (comma-separated)\n"
	      "  -n, --last N     the newest N branches per CPU (default 32, 0 = all)\n"
	      "  -c, --calls      call/return history per CPU (text; needs VMLINUX)\n"
	      "  -r, --raw        no symbols\n"
	      "  -j, --json       JSON instead of text\n"
	      "\n"
	      "Exit status: 0 traces printed; 1 usage; 2 vmcore unreadable; 3 no\n"
	      "branch trace in it; 4 some CPU's ring unreadable (its note shown).\n", out);
}

/* Exit status of a report: btsdec_vmcore_report's outcome, mapped. */
static int vm_exit(int ret, const struct btsdec_vmreport_result *res,
		   const struct btsdec_vmreport_opts *o, const struct btsdec_err *err)
{
	if (ret == -ENODATA) {
		if (!o->json)
			say("%s", err->msg);
		return BTS_EXIT_NONE;
	}
	if (ret) {
		say("%s", err->msg);
		return BTS_EXIT_READ;
	}
	return res->rings_unreadable ? BTS_EXIT_PARTIAL : 0;
}

static int vmcore_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'C' }, { "last", required_argument, NULL, 'n' },
		{ "calls", no_argument, NULL, 'c' },
		{ "raw", no_argument, NULL, 'r' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct btsdec_vmreport_opts o = { .last = 32, .prog = "btsdump" };
	struct btsdec_vmreport_result res;
	struct btsdec_vmcore *vc;
	struct btsdec_err err;
	uint64_t v;
	int c, ret;

	while ((c = getopt_long(argc, argv, "C:n:crjh", opts, NULL)) != -1) {
		switch (c) {
		case 'C': o.cpus = optarg; break;
		case 'c': o.calls = true; break;
		case 'n':
			if (parse_u64(optarg, &v)) {	/* 0: the whole ring */
				vm_usage(stderr);
				return BTS_EXIT_USAGE;
			}
			o.last = v;
			break;
		case 'r': o.raw = true; break;
		case 'j': o.json = true; break;
		case 'h': vm_usage(stdout); return 0;
		default: vm_usage(stderr); return BTS_EXIT_USAGE;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		vm_usage(stderr);
		return BTS_EXIT_USAGE;
	}
	o.symbols = argv[optind + 1];
	if (o.calls && (o.json || o.raw || !o.symbols)) {
		say("--calls is a text report and needs VMLINUX");
		return BTS_EXIT_USAGE;
	}
	if (btsdec_vmcore_open(argv[optind], &vc, &err)) {
		say("%s", err.msg);
		return BTS_EXIT_READ;
	}
	ret = btsdec_vmcore_report(stdout, vc, argv[optind], &o, &res, stderr, &err);
	btsdec_vmcore_close(vc);
	return vm_exit(ret, &res, &o, &err);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "add-note"))
		return add_note_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "vmcore"))
		return vmcore_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "gdbserver"))
		return gdbserver_main(argc - 1, argv + 1);
	return dump_main(argc, argv);
}
