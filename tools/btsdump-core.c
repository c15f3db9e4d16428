// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump CORE [EXECUTABLE]`: the report of a core's branch traces, text
 * or JSON (lib/report.c), with the exit status of docs/btsdump.md.  CORE
 * may be "-" or a pipe (tools/cli.c spools it); EXECUTABLE is checked
 * (btsdump-exe.c) before libdwfl sees it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdump.h"

static void usage(void)
{
	fputs("Usage: btsdump [OPTIONS] CORE [EXECUTABLE]\n"
	      "  or:  btsdump vmcore [OPTIONS] VMCORE [VMLINUX|SYSTEM.MAP]\n"
	      "  or:  btsdump add-note [OPTIONS] CORE RECORDS\n"
	      "  or:  btsdump regs [OPTIONS] CORE [EXECUTABLE]\n"
	      "  or:  btsdump why [OPTIONS] CORE [EXECUTABLE] REGISTER|*ADDR[,SIZE]\n"
	      "\n"
	      "Prints the last taken branches of each thread of a core, oldest to\n"
	      "newest, symbolized; the faulting thread first.  CORE \"-\": standard input.\n"
	      "\n"
	      "  -t, --thread TID          only this thread\n"
	      "  -n, --last N              only the newest N branches (segments with --calls;\n"
	      "                            0, the default: all)\n"
	      "  -c, --calls               call/return history, indented by call depth\n"
	      "  -j, --json                JSON instead of text\n"
	      "  -S, --no-symbols          classify, but leave symbols and source lines out\n"
	      "                            (for readers that symbolize themselves: gdb)\n"
	      "      --no-demangle         C++ and Rust names as the ELF has them\n"
	      "  -d, --debuginfo-path P    where to look for separate debuginfo\n"
	      "                            (libdwfl syntax, default :.debug:/usr/lib/debug)\n"
	      "  -h, --help                this text\n"
	      "      --version             the version\n"
	      "\n"
	      "Exit status: 0 traces printed; 1 usage; 2 core unreadable; 3 core has\n"
	      "no branch trace; 4 malformed trace notes skipped; 5 no such traced thread;\n"
	      "7 EXECUTABLE missing, unreadable, not ELF, a core or another build (not used).\n"
	      "`btsdump vmcore --help`, `btsdump add-note --help`, `btsdump regs --help`,\n"
	      "`btsdump why --help`:\n"
	      "the other modes.\n", stdout);
}

struct dump_args {
	struct btsdec_report_opts ro;
	const char *core;
	const char *debuginfo_path;
	bool no_demangle;
};

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse_dump_args(int argc, char **argv, struct dump_args *a, int *status)
{
	static const struct option opts[] = {
		{ "thread", required_argument, NULL, 't' },
		{ "last", required_argument, NULL, 'n' },
		{ "calls", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-symbols", no_argument, NULL, 'S' },
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		BTS_CLI_OPTION_VERSION,
		{ 0 }
	};
	uint64_t v;
	int c, ret;

	while ((c = getopt_long(argc, argv, BTS_CLI_OPTSTRING "t:n:cjSd:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (bts_cli_parse_u64(optarg, &v) || v > INT32_MAX)
				return usage_error("--thread: not a thread ID: '%s'", optarg);
			a->ro.have_tid = true;
			a->ro.tid = v;
			break;
		case 'n':
			if ((ret = bts_cli_parse_u64(optarg, &v)))	/* 0: all */
				return usage_error("--last: %s: '%s'",
						   bts_cli_number_error(ret), optarg);
			a->ro.last = v;
			break;
		case 'c': a->ro.calls = true; break;
		case 'j': a->ro.json = true; break;
		case 'S': a->ro.no_symbols = true; break;
		case 'd': a->debuginfo_path = optarg; break;
		case 'M': a->no_demangle = true; break;
		case 'h': usage(); *status = 0; return -1;
		case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
		default: return bts_cli_bad_option("btsdump", argv, c);
		}
	}
	if (argc - optind < 1)
		return usage_error("missing CORE");
	if (argc - optind > 2)
		return usage_error("too many arguments: '%s'", argv[optind + 2]);
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
				     .debuginfo_path = a->debuginfo_path,
				     .no_demangle = a->no_demangle };
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

/* The core, "-" and pipes spooled (tools/cli.c); 0 or BTS_EXIT_READ. */
static int open_core(const char *path, struct btsdec_core **core)
{
	struct btsdec_err err;
	int fd = bts_cli_open_input(path);

	if (fd < 0) {
		say("%s: %s", path, strerror(-fd));
		return BTS_EXIT_READ;
	}
	if (btsdec_core_open_fd(fd, path, core, &err)) {
		say("%s", err.msg);
		return BTS_EXIT_READ;
	}
	return 0;
}

/* What the core holds: its warnings said, then the report; the status. */
static int dump_core(struct btsdec_core *core, struct dump_args *a)
{
	size_t i, rejects = btsdec_core_nr_rejects(core);
	int ret;

	if (btsdec_core_truncated(core))
		say("warning: %s is truncated (%llu bytes expected); "
			"memory past its end is missing", a->core,
			(unsigned long long)btsdec_core_truncated(core));
	for (i = 0; i < rejects; i++)
		say("warning: %s", btsdec_core_reject(core, i));
	if (!btsdec_core_nr_traces(core) && !a->ro.json) {
		if (!rejects)
			say("%s: no branch trace in this core "
				"(the process was not traced, or its kernel lacks btscrash)",
				a->core);
		return rejects ? BTS_EXIT_PARTIAL : BTS_EXIT_NONE;
	}
	if (a->ro.have_tid && (ret = check_thread(core, a->ro.tid)))
		return ret;
	ret = report(core, a);
	if (!ret && rejects)
		ret = BTS_EXIT_PARTIAL;
	else if (!ret && !btsdec_core_nr_traces(core))
		ret = BTS_EXIT_NONE;
	return ret;
}

int btsdump_core_main(int argc, char **argv)
{
	struct dump_args a = { 0 };
	struct btsdec_core *core;
	bool bad_exe = false;
	int ret, status = 0;

	ret = parse_dump_args(argc, argv, &a, &status);
	if (ret)
		return ret < 0 ? status : ret;
	ret = open_core(a.core, &core);
	if (ret)
		return ret;
	if (a.ro.executable && btsdump_check_executable(core, a.ro.executable)) {
		a.ro.executable = NULL;	/* neither used nor named */
		bad_exe = true;
	}
	ret = dump_core(core, &a);
	btsdec_core_close(core);
	if (bad_exe && (ret == 0 || ret == BTS_EXIT_PARTIAL))
		ret = BTS_EXIT_EXECUTABLE;
	return ret;
}
