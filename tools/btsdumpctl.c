// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl: reads btsdumpd's crash store, like coredumpctl (docs/
 * btsdumpctl.md).  This file owns its command line: usage, options, TIME
 * parsing, the commands table and main; the entries are loaded by
 * btsdumpctl-entries.c, the commands run in btsdumpctl-list.c (list, info,
 * show; list --group in btsdumpctl-group.c), btsdumpctl-gdb.c (dump, gdb)
 * and btsdumpctl-status.c (status).
 */#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btsdumpctl.h"
#include "cli.h"
#include "escape.h"
#include "exit.h"
#include "meta.h"
#include "util.h"

static void usage(void)
{
	fputs("Usage: btsdumpctl [OPTIONS] [COMMAND] [MATCH]\n"
	      "\n"
	      "Reads the crashes btsdumpd stored (default " BTSDUMPD_STORE_DEFAULT "),\n"
	      "or, with -D or --file, btsdumpd's journal entries in a journal directory\n"
	      "or files: a central host's, collected with systemd-journal-remote\n"
	      "(list, info and show; the cores stay on the hosts that crashed).\n"
	      "\n"
	      "Commands:\n"
	      "  list [MATCH]              one line per entry, oldest first (default)\n"
	      "  info [MATCH]              all metadata of the most recent match\n"
	      "  show [MATCH]              its trace report (--json: the JSON one)\n"
	      "  dump [MATCH] [-o FILE]    its core, decompressed, to FILE or a non-tty stdout\n"
	      "  gdb [MATCH] [-- ARGS]     gdb EXE CORE, with ARGS passed to gdb\n"
	      "  status                    the stock-kernel LBR collector: armed, or why not\n"
	      "\n"
	      "MATCH: an entry ID, a PID (all digits), or a name (COMM or the basename\n"
	      "of EXE).\n"
	      "\n"
	      "      --store DIR           the store (default " BTSDUMPD_STORE_DEFAULT ")\n"
	      "  -D, --directory DIR       btsdumpd's entries in the journal files in DIR\n"
	      "      --file FILE           ... in this journal file (repeatable; \"-\":\n"
	      "                            standard input)\n"
	      "  -j, --json[=short|pretty] JSON instead of text (list, info, show)\n"
	      "  -r, --reverse             list newest first\n"
	      "  -n, --last N              only the newest N matches; -1: the newest one\n"
	      "  -S, --since TIME          only crashes at or after TIME\n"
	      "  -U, --until TIME          only crashes at or before TIME (TIME: \"YYYY-MM-DD\n"
	      "                            [HH:MM[:SS]]\", @EPOCH, now, today, yesterday, -5min)\n"
	      "  -F, --field FIELD         print FIELD (a meta key: EXE, COMM, ...) of each match\n"
	      "  -g, --group               list: one line per trail signature (the bug):\n"
	      "                            count, hosts, first and last seen\n"
	      "      --no-legend           no column headings\n"
	      "      --no-pager            do not pipe the output into a pager\n"
	      "  -o, --output FILE         dump: write the core here\n"
	      "      --replay              gdb: start in \"bts replay\" (reverse execution\n"
	      "                            with recovered values; docs/gdb.md)\n"
	      "  -h, --help                this text\n"
	      "      --version             the version\n"
	      "\n"
	      "Exit status (as btsdump's): 0 ok; 1 usage (or dump to a terminal);\n"
	      "2 store, entry or report unreadable, core not stored, missing or\n"
	      "corrupt; 3 nothing stored or no match; 6 gdb could not be run.\n"
	      "gdb: gdb's own status once it ran.\n",
	      stdout);
}

static const struct command {
	const char *name;
	int (*fn)(const struct ctl *c);
} commands[] = {
	{ "list", cmd_list }, { "info", cmd_info }, { "show", cmd_show },
	{ "dump", cmd_dump }, { "gdb", cmd_gdb }, { "debug", cmd_gdb },
	{ "status", cmd_status },
};

#define usage_error(...)	bts_cli_usage_error("btsdumpctl", __VA_ARGS__)

enum { OPT_STORE = 0x101, OPT_FILE, OPT_NO_LEGEND, OPT_NO_PAGER, OPT_REPLAY };

/* "today" and "yesterday": local midnight, days back from today. */
static int midnight(int days_back, uint64_t *t)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return -EINVAL;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday -= days_back;
	tm.tm_isdst = -1;
	now = mktime(&tm);
	return now == (time_t)-1 ? -EINVAL : (*t = now, 0);
}

/* "-5min", "-2h", "-1d": that long ago. */
static int time_ago(const char *s, uint64_t *t)
{
	static const struct { const char *unit; uint64_t sec; } units[] = {
		{ "s", 1 }, { "sec", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 },
		{ "d", 86400 }, { "w", 7 * 86400 },
	};
	uint64_t now = time(NULL), v;
	char *end;

	errno = 0;
	v = strtoull(s + 1, &end, 10);
	for (size_t i = 0; !errno && end != s + 1 && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && v <= now / units[i].sec)
			return *t = now - v * units[i].sec, 0;
	return -EINVAL;
}

/* TIME of --since/--until, as seconds since the epoch: "YYYY-MM-DD
 * [HH:MM[:SS]]" (local time), @EPOCH, now, today, yesterday, -N{s,min,h,d,w}. */
static int parse_time(const char *s, uint64_t *t)
{
	static const char *const fmts[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	struct tm tm;
	time_t v;

	if (*s == '@')
		return bts_cli_parse_u64(s + 1, t);
	if (!strcmp(s, "now"))
		return *t = time(NULL), 0;
	if (!strcmp(s, "today") || !strcmp(s, "yesterday"))
		return midnight(*s == 'y', t);
	if (*s == '-')
		return time_ago(s, t);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *end;

		memset(&tm, 0, sizeof(tm));
		end = strptime(s, fmts[i], &tm);
		if (end && !*end) {
			tm.tm_isdst = -1;
			v = mktime(&tm);
			return v == (time_t)-1 || v < 0 ? -EINVAL : (*t = v, 0);
		}
	}
	return -EINVAL;
}

/* ctl_select_option's answer for an option it does not take (not 1:
 * BTS_EXIT_USAGE, a usage error it said). */
#define CTL_OTHER_OPTION	(-2)

/* The options that choose and shape the listing (coredumpctl's): 0, a
 * usage error's status, or CTL_OTHER_OPTION. */
static int ctl_select_option(struct ctl *c, int o)
{
	uint64_t v;

	switch (o) {
	case 'r': c->reverse = true; return 0;
	case '1': c->last = 1; return 0;
	case 'n':
		if (bts_cli_parse_u64(optarg, &v) == -ERANGE || v > SIZE_MAX)
			return usage_error("--last: out of range: '%s'", optarg);
		if (bts_cli_parse_u64(optarg, &v) || !v)
			return usage_error("--last: not a positive number: '%s'", optarg);
		c->last = v;
		return 0;
	case 'S': case 'U':
		if (parse_time(optarg, o == 'S' ? &c->since : &c->until))
			return usage_error("--%s: not a time: '%s'", o == 'S' ? "since" : "until",
					   optarg);
		*(o == 'S' ? &c->have_since : &c->have_until) = true;
		return 0;
	case 'F': c->field = optarg; return 0;
	case 'g': c->group = true; return 0;
	case OPT_NO_LEGEND: c->no_legend = true; return 0;
	case OPT_NO_PAGER: c->no_pager = true; return 0;
	case 'j':
		if (optarg && strcmp(optarg, "short") && strcmp(optarg, "pretty"))
			return usage_error("--json: short or pretty, not '%s'", optarg);
		c->json = true;
		c->json_pretty = optarg && !strcmp(optarg, "pretty");
		return 0;
	default: return CTL_OTHER_OPTION;
	}
}

/* One option into c: 0, -1 after --help or --version (*status set), or a
 * usage error's status. */
static int ctl_option(struct ctl *c, int o, char **argv, int *status)
{
	int r = ctl_select_option(c, o);

	if (r != CTL_OTHER_OPTION)
		return r;
	switch (o) {
	case OPT_STORE: c->store = optarg; return 0;
	case 'D': c->journal_dir = optarg; return 0;
	case OPT_FILE:
		if (c->n_journal_files + 1 >= sizeof(c->journal_files) /
					      sizeof(c->journal_files[0]))
			return usage_error("too many --file");
		c->journal_files[c->n_journal_files++] = optarg;
		return 0;
	case 'o': c->output = optarg; return 0;
	case OPT_REPLAY: c->replay = true; return 0;
	case 'h': usage(); *status = 0; return -1;
	case BTS_CLI_VERSION: *status = bts_cli_version("btsdumpctl"); return -1;
	default: return bts_cli_bad_option("btsdumpctl", argv, o);
	}
}

/* The command and MATCH after the options, checked against them. */
static int ctl_command(struct ctl *c, int argc, char **argv, const struct command **cmd)
{
	const char *name = optind < argc ? argv[optind++] : "list";

	if (optind < argc)
		c->match = argv[optind++];
	*cmd = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			*cmd = &commands[i];
	if (!*cmd)
		return usage_error("unknown command '%s'", name);
	if (!c->store && ((*cmd)->fn == cmd_dump || (*cmd)->fn == cmd_gdb)) {
		say("%s: journal entries carry no core; it stays on "
			"the host that crashed (btsdumpctl %s there)", name, name);
		return BTS_EXIT_USAGE;
	}
	if (optind < argc)
		return usage_error("one MATCH at most: '%s'", argv[optind]);
	if (c->output && (*cmd)->fn != cmd_dump)
		return usage_error("-o is for dump");
	if (c->field && (*cmd)->fn != cmd_list)
		return usage_error("-F is for list");
	if (c->group && ((*cmd)->fn != cmd_list || c->field))
		return usage_error("--group is for list, without -F");
	if (c->replay && (*cmd)->fn != cmd_gdb)
		return usage_error("--replay is for gdb");
	if (c->gdb_args && (*cmd)->fn != cmd_gdb)
		return usage_error("\"--\" arguments are for gdb");
	return 0;
}

/* Options and positional arguments: 0, -1 after --help or --version
 * (*status set), or a usage error's status (message printed). */
static int parse_args(struct ctl *c, int argc, char **argv, const struct command **cmd,
		      int *status)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, OPT_STORE },
		{ "directory", required_argument, NULL, 'D' },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "json", optional_argument, NULL, 'j' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "last", required_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "field", required_argument, NULL, 'F' },
		{ "group", no_argument, NULL, 'g' },
		{ "no-legend", no_argument, NULL, OPT_NO_LEGEND },
		{ "no-pager", no_argument, NULL, OPT_NO_PAGER },
		{ "output", required_argument, NULL, 'o' },
		{ "replay", no_argument, NULL, OPT_REPLAY },
		{ "help", no_argument, NULL, 'h' },
		BTS_CLI_OPTION_VERSION,
		{}
	};
	int o, r;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			c->gdb_args = argv + i + 1;
			c->n_gdb_args = argc - i - 1;
			argc = i;
			break;
		}
	while ((o = getopt_long(argc, argv, BTS_CLI_OPTSTRING "D:jo:hrn:1S:U:F:g", opts, NULL)) != -1)
		if ((r = ctl_option(c, o, argv, status)))
			return r;
	if (c->journal_dir && c->n_journal_files)
		return usage_error("-D or --file, not both");
	if (c->journal_dir || c->n_journal_files)
		c->store = NULL;
	return ctl_command(c, argc, argv, cmd);
}

int main(int argc, char **argv)
{
	struct ctl c = { .store = BTSDUMPD_STORE_DEFAULT };
	const struct command *cmd = NULL;
	int r, status = 0;

	r = parse_args(&c, argc, argv, &cmd, &status);
	if (r < 0)	/* --help, --version */
		return bts_cli_stdout_done("btsdumpctl", status);
	if (!r && cmd->fn == cmd_status)	/* no store to read */
		return cmd_status(&c);
	if (!r)
		r = ctl_load(&c);
	/* a pager for what people read (not dump's core, not gdb's terminal) */
	if (!r && c.n && !c.no_pager && cmd->fn != cmd_dump && cmd->fn != cmd_gdb)
		bts_cli_pager_start();	/* -errno: no pager, stdout as it was */
	if (!r)
		r = cmd->fn(&c);
	r = bts_cli_stdout_done("btsdumpctl", r);
	bts_cli_pager_end();
	btsdumpd_entries_free(c.e, c.n);
	return r;
}
