// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump gdbserver CORE [EXECUTABLE]`: serves a core to gdb over the
 * remote protocol on stdin/stdout (`target remote | btsdump gdbserver
 * ...`) as a stopped process with a recorded branch trace, so gdb's own
 * `record` and reverse-execution commands work on it (lib/gdbstub.c).
 * Messages go to stderr, which gdb shows.  Exit codes: tools/exit.h.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdump-gdbserver.h"
#include "escape.h"
#include "exit.h"
#include "gdbstub.h"

#define say(...)	btsdec_escape_line(stderr, "btsdump gdbserver", __VA_ARGS__)

static void usage(FILE *out)
{
	fputs("Usage: btsdump gdbserver [OPTIONS] CORE [EXECUTABLE]\n"
	      "\n"
	      "Serves CORE to gdb's remote protocol on stdin/stdout as a stopped process\n"
	      "whose threads carry their recorded branch traces:\n"
	      "  (gdb) target remote | btsdump gdbserver CORE EXECUTABLE\n"
	      "  (gdb) record btrace bts\n"
	      "then gdb's record and reverse-execution commands work on the core.\n"
	      "\n"
	      "  -d, --debuginfo-path P    where to look for separate debuginfo\n"
	      "  -h, --help                this text\n"
	      "\n"
	      "Exit status: 0 gdb detached; 1 usage; 2 core unreadable or connection lost.\n",
	      out);
}

static int parse(int argc, char **argv, struct btsdec_symopts *so)
{
	static const struct option opts[] = {
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return BTS_EXIT_OK + 100;
		}
		if (c != 'd')
			goto bad;
		so->debuginfo_path = optarg;
	}
	if (argc - optind == 1 || argc - optind == 2)
		return 0;
	say("expected CORE [EXECUTABLE]");
bad:
	fputs("Try 'btsdump gdbserver --help' for more information.\n", stderr);
	return BTS_EXIT_USAGE;
}

static int serve(const char *path, const struct btsdec_symopts *so)
{
	struct btsdec_core *core = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_gdbstub *stub = NULL;
	struct btsdec_err err;
	int ret = BTS_EXIT_READ;

	if (btsdec_core_open(path, &core, &err) ||
	    btsdec_sym_open_core(core, so, &sym, &err) ||
	    btsdec_gdbstub_new(core, sym, so->executable, &stub, &err)) {
		say("%s", err.msg);
		goto out;
	}
	for (size_t i = 0; i < btsdec_core_nr_rejects(core); i++)
		say("warning: %s", btsdec_core_reject(core, i));
	if (btsdec_gdbstub_serve(stub, STDIN_FILENO, STDOUT_FILENO, &err))
		say("%s", err.msg);
	else
		ret = BTS_EXIT_OK;
out:
	btsdec_gdbstub_free(stub);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
	return ret;
}

int gdbserver_main(int argc, char **argv)
{
	struct btsdec_symopts so = { 0 };
	int ret = parse(argc, argv, &so);

	if (ret)
		return ret == BTS_EXIT_OK + 100 ? BTS_EXIT_OK : ret;
	if (isatty(STDOUT_FILENO)) {
		say("stdout is a terminal: run it from gdb, "
		    "`target remote | btsdump gdbserver CORE [EXECUTABLE]`");
		return BTS_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is an error, not a death */
	so.executable = argc - optind == 2 ? argv[optind + 1] : NULL;
	return serve(argv[optind], &so);
}
