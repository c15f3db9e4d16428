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
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "cli.h"
#include "btsdump-gdbserver.h"
#include "escape.h"
#include "exit.h"
#include "gdbstub.h"

#define PROG	"btsdump gdbserver"
#define say(...)	btsdec_escape_line(stderr, PROG, __VA_ARGS__)

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
	      "      --version             the version\n"
	      "\n"
	      "CORE may be a pipe, <(zstdcat CORE.zst) (spooled to memory first).\n"
	      "Exit status: 0 gdb detached; 1 usage; 2 core unreadable or connection lost.\n",
	      out);
}

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse(int argc, char **argv, struct btsdec_symopts *so, int *status)
{
	static const struct option opts[] = {
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		BTS_CLI_OPTION_VERSION,
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, BTS_CLI_OPTSTRING "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': so->debuginfo_path = optarg; break;
		case 'h': usage(stdout); *status = 0; return -1;
		case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
		default: return bts_cli_bad_option("btsdump", argv, c);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return bts_cli_usage_error("btsdump", argc - optind < 1 ? "gdbserver: missing CORE" :
					   "gdbserver: too many arguments");
	if (!strcmp(argv[optind], "-"))	/* stdin carries the protocol */
		return bts_cli_usage_error("btsdump", "gdbserver: CORE cannot be \"-\" "
					   "(stdin is gdb's): give a file or <(zstdcat CORE.zst)");
	return 0;
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
	const char *path;
	char buf[64];
	int status = 0, fd = -1, ret = parse(argc, argv, &so, &status);

	if (ret)
		return ret < 0 ? status : ret;
	if (isatty(STDOUT_FILENO)) {
		say("stdout is a terminal: run it from gdb, "
		    "`target remote | btsdump gdbserver CORE [EXECUTABLE]`");
		return BTS_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is an error, not a death */
	so.executable = argc - optind == 2 ? argv[optind + 1] : NULL;
	ret = bts_cli_input_path(argv[optind], buf, sizeof(buf), &path, &fd);
	if (ret) {
		say("%s: %s", argv[optind], strerror(-ret));
		return BTS_EXIT_READ;
	}
	ret = serve(path, &so);
	if (fd >= 0)
		close(fd);
	return ret;
}
