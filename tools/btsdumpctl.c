// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl: reads btsdumpd's crash store, like coredumpctl (docs/
 * btsdumpctl.md): list, info, show (the trace report), dump (the core) and
 * gdb.  Runs as any user, on store content it does not trust: values are
 * escaped on output (lib/escape.c), JSON written by lib/json.c.  Links the
 * store code (daemon/) and those two files of the decoder library.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "btsdec.h"
#include "cli.h"
#include "escape.h"
#include "exit.h"
#include "entries.h"
#include "grow.h"
#include "meta.h"
#include "util.h"
#include "zstdio.h"


/* CORE_REMOTE: stored on the host that crashed (an entry from a journal) */
enum core_state { CORE_PRESENT, CORE_MISSING, CORE_NONE, CORE_REMOTE };
static const char *const core_state_name[] = {
	[CORE_PRESENT] = "present", [CORE_MISSING] = "missing", [CORE_NONE] = "none",
	[CORE_REMOTE] = "remote",
};

struct ctl {
	const char *store;	/* NULL: entries read from a journal */
	const char *journal_dir;	/* -D: a journal directory */
	const char *journal_files[16];	/* --file, as coredumpctl's */
	size_t n_journal_files;
	bool json;
	bool json_pretty;	/* --json=pretty */
	bool reverse;		/* -r: newest first */
	bool no_legend, no_pager;
	size_t last;		/* -n N, -1: the newest N matches (0: all) */
	bool have_since, have_until;
	uint64_t since, until;	/* --since, --until: seconds since the epoch */
	const char *field;	/* -F: print this field of each match */
	const char *output;	/* dump -o */
	const char *match;
	char **gdb_args;	/* after "--" */
	int n_gdb_args;
	struct btsdumpd_entry *e;
	size_t n, cap;		/* cap: room in e, for journal entries */
};

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
	      "      --no-legend           no column headings\n"
	      "      --no-pager            do not pipe the output into a pager\n"
	      "  -o, --output FILE         dump: write the core here\n"
	      "  -h, --help                this text\n"
	      "      --version             the version\n"
	      "\n"
	      "Exit status (as btsdump's): 0 ok; 1 usage (or dump to a terminal);\n"
	      "2 store, entry or report unreadable, core not stored, missing or\n"
	      "corrupt; 3 nothing stored or no match; 6 gdb could not be run.\n"
	      "gdb: gdb's own status once it ran.\n",
	      stdout);
}

/* ---- output escaping ---- */

/* Every value from the store or a journal goes through lib/escape.c on its
 * way to a person, and through lib/json.c (json-c) into JSON. */

/* One line on stderr, escaped as a whole. */
#define say(...)	btsdec_escape_line(stderr, "btsdumpctl", __VA_ARGS__)

/* v escaped for a table cell ("-" for none); NULL if out of memory. */
static char *text_esc(const char *v)
{
	return btsdec_escape(v ? v : "-", 0);
}

/* Text btsdumpd rendered with the library (a trail, a report): already
 * escaped there, so its backslashes stay; a control byte is still caught. */
static void put_rendered(FILE *f, const char *s)
{
	btsdec_escape_put(f, s, BTSDEC_ESC_LINES);
}

static void put_value(FILE *f, const char *v)
{
	btsdec_escape_put(f, v, 0);
}

/* ---- entries ---- */

static const char *meta(const struct btsdumpd_entry *e, const char *key)
{
	return btsdumpd_meta_get(&e->meta, key);
}

static char *entry_file(const struct ctl *c, const struct btsdumpd_entry *e,
			const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s%s%s", c->store, e->id, name ? "/" : "",
		     name ? name : "") < 0) {
		fputs("btsdumpctl: out of memory\n", stderr);
		exit(BTS_EXIT_READ);
	}
	return p;
}

static bool entry_has(const struct ctl *c, const struct btsdumpd_entry *e,
		      const char *name)
{
	struct stat st;
	bool ok;
	char *p;

	if (!c->store)
		return false;	/* a journal entry: its files are on its host */
	p = entry_file(c, e, name);
	ok = !lstat(p, &st) && S_ISREG(st.st_mode);
	free(p);
	return ok;
}

/* The entry's directory, open (-1 with errno: none, or from a journal). */
static int entry_dir(const struct ctl *c, const struct btsdumpd_entry *e)
{
	char *dir;
	int fd;

	if (!c->store) {
		errno = ENOENT;
		return -1;
	}
	dir = entry_file(c, e, NULL);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	free(dir);
	return fd;
}

/* The path of the entry's text report, whichever file holds it, or NULL. */
static char *report_path(const struct ctl *c, const struct btsdumpd_entry *e)
{
	int fd = entry_dir(c, e);
	const char *name = fd >= 0 ? btsdumpd_report_name(fd, false) : NULL;
	char *p = name ? entry_file(c, e, name) : NULL;

	if (fd >= 0)
		close(fd);
	return p;
}

/* The stored core's file: core.zst, or core with btsdumpd's Compress=no. */
static const char *core_file(const struct btsdumpd_entry *e)
{
	const char *f = meta(e, "CORE_FILE");

	return f && !strcmp(f, "core") ? "core" : BTSDUMPD_CORE_FILE;
}

/* A file of an entry read from a journal: "HOST:ENTRY/name", where its
 * host keeps it. */
static void remote_file(const struct btsdumpd_entry *e, const char *name)
{
	put_value(stdout, meta(e, "HOSTNAME") ? meta(e, "HOSTNAME") : "?");
	putchar(':');
	put_value(stdout, meta(e, "ENTRY") ? meta(e, "ENTRY") : e->id);
	printf("/%s", name);
}

static enum core_state core_state(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *core = meta(e, "CORE");

	if (entry_has(c, e, core_file(e)))
		return CORE_PRESENT;
	if (!core || strcmp(core, "stored"))
		return CORE_NONE;
	return c->store ? CORE_MISSING : CORE_REMOTE;
}

static bool is_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool entry_matches(const struct btsdumpd_entry *e, const char *match)
{
	const char *comm = meta(e, "COMM"), *exe = meta(e, "EXE"), *pid, *base;

	if (!match || !strcmp(e->id, match))
		return true;
	if (is_digits(match)) {
		pid = meta(e, "PID");
		return pid && !strcmp(pid, match);
	}
	if (comm && !strcmp(comm, match))
		return true;
	base = exe ? strrchr(exe, '/') : NULL;
	base = base ? base + 1 : exe;
	return base && !strcmp(base, match);
}

/* ---- btsdumpd's journal entries (-D, --file) ---- */

static int journal_entry_add(struct ctl *c, sd_journal *j)
{
	struct btsdumpd_entry *e;
	const void *d;
	size_t len;
	int r;

	if (btsdec_grow(&c->e, &c->cap, c->n + 1))
		return -ENOMEM;
	e = &c->e[c->n];
	memset(e, 0, sizeof(*e));
	SD_JOURNAL_FOREACH_DATA(j, d, len)
		if (btsdumpd_entry_journal_field(e, d, len) == -ENOMEM)
			return -ENOMEM;
	r = btsdumpd_entry_journal_done(e);
	c->n += r > 0;
	return r < 0 ? r : 0;
}

/* The journal files given with --file, opened into fds (*n of them, the
 * caller's to close after the journal: sd-journal leaves them open).  "-"
 * and pipes are spooled to temporary files (tools/cli.c), named in
 * spooled[] for the caller to unlink: `--file -` reads standard input. */
static int open_journal_files(const struct ctl *c, sd_journal **j, int *fds,
			      size_t *n, char (*spooled)[PATH_MAX])
{
	int r = 0;

	for (size_t i = 0; i < c->n_journal_files && r >= 0; i++) {
		r = bts_cli_open_input_named(c->journal_files[i], spooled[i]);
		if (r >= 0)
			fds[(*n)++] = r;
	}
	return r < 0 ? r : sd_journal_open_files_fd(j, fds, *n, 0);
}

/* Closes what open_journal_files opened and removes its spools. */
static void close_journal_files(int *fds, size_t n, char (*spooled)[PATH_MAX])
{
	for (size_t i = 0; i < n; i++) {
		close(fds[i]);
		if (*spooled[i])
			unlink(spooled[i]);
	}
}

static int load_journal(struct ctl *c)
{
	const char *what = c->journal_dir ? c->journal_dir : c->journal_files[0];
	int fds[sizeof(c->journal_files) / sizeof(c->journal_files[0])];
	char spooled[sizeof(fds) / sizeof(fds[0])][PATH_MAX] = { "" };
	size_t nfds = 0;
	sd_journal *j;
	int r;

	r = c->journal_dir ? sd_journal_open_directory(&j, c->journal_dir, 0)
			   : open_journal_files(c, &j, fds, &nfds, spooled);
	if (r < 0) {
		close_journal_files(fds, nfds, spooled);
		say("cannot open the journal in %s: %s", what,
			strerror(-r));
		return BTS_EXIT_READ;
	}
	sd_journal_set_data_threshold(j, 0);	/* whole fields: the trail */
	r = sd_journal_add_match(j, "MESSAGE_ID=" BTSDUMPD_MESSAGE_ID, 0);
	while (r >= 0 && (r = sd_journal_next(j)) > 0)
		r = journal_entry_add(c, j);
	sd_journal_close(j);
	close_journal_files(fds, nfds, spooled);
	if (r < 0) {
		say("reading the journal in %s: %s", what, strerror(-r));
		return BTS_EXIT_READ;
	}
	return 0;
}

/* Entries outside --since/--until dropped (freed), the rest kept in order. */
static void keep_in_time(struct ctl *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		if ((c->have_since && c->e[i].timestamp < c->since) ||
		    (c->have_until && c->e[i].timestamp > c->until)) {
			free(c->e[i].id);
			btsdumpd_meta_free(&c->e[i].meta);
		} else {
			c->e[n++] = c->e[i];
		}
	}
	c->n = n;
}

/* How many entries the store holds, readable or not (a directory not
 * starting with "."; btsdumpd_store_list skips those it cannot read). */
static size_t store_count(const char *store)
{
	DIR *dir = opendir(store);
	struct dirent *d;
	size_t n = 0;

	while (dir && (d = readdir(dir)))
		n += d->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n;
}

static int load_store(struct ctl *c)
{
	size_t hidden;
	int r = btsdumpd_store_list(c->store, &c->e, &c->n);

	if (!r && !c->n && (hidden = store_count(c->store))) {
		btsdec_escape_line(stderr, NULL, "No crash readable by you: the %zu in %s "
				   "are readable by root and by the user that crashed (uid %u).",
				   hidden, c->store, (unsigned int)getuid());
		return BTS_EXIT_READ;
	}

	if (r == -ENOENT) {
		btsdec_escape_line(stderr, NULL, "No crashes stored (%s does not exist).", c->store);
		return BTS_EXIT_NONE;
	}
	if (r < 0) {
		say("cannot read the store %s: %s",
			c->store, strerror(-r));
		return BTS_EXIT_READ;
	}
	return 0;
}

/* Loads the store or the journal, --since/--until applied; 0 or an exit
 * status (message printed). */
static int load(struct ctl *c)
{
	int r = c->store ? load_store(c) : load_journal(c);

	if (!r)
		keep_in_time(c);
	return r;
}

/* The most recent entry matching c->match, or NULL (message printed). */
static const struct btsdumpd_entry *pick(const struct ctl *c)
{
	for (size_t i = c->n; i-- > 0;)
		if (entry_matches(&c->e[i], c->match))
			return &c->e[i];
	if (c->match) {
		btsdec_escape_line(stderr, NULL, "No crash matches \"%s\".", c->match);
	} else {
		fputs("No crashes stored.\n", stderr);
	}
	return NULL;
}

static void fmt_time(uint64_t ts, char *buf, size_t len)
{
	time_t t = ts;
	struct tm tm;

	if (ts > (uint64_t)INT64_MAX || !localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%a %Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "@%llu", (unsigned long long)ts);
}

static const char *sig_name(const struct btsdumpd_entry *e)
{
	const char *name = meta(e, "SIGNAL_NAME"), *num = meta(e, "SIGNAL");
	uint64_t v;

	if (name || btsdumpd_parse_u64(num, &v) || v > 999)
		return name ? name : num;
	return btsdumpd_signal_name(v);
}

/* ---- list ---- */

static void list_line(const struct ctl *c, const struct btsdumpd_entry *e, int tw, int iw)
{
	const char *exe = meta(e, "EXE");
	char *f[8], tbuf[64];

	exe = exe ? exe : meta(e, "VMCORE") ? meta(e, "VMCORE") : meta(e, "COMM");
	fmt_time(e->timestamp, tbuf, sizeof(tbuf));
	f[0] = text_esc(meta(e, "PID"));
	f[1] = text_esc(meta(e, "UID"));
	f[2] = text_esc(meta(e, "GID"));
	f[3] = text_esc(sig_name(e));
	f[4] = text_esc(core_state_name[core_state(c, e)]);
	f[5] = text_esc(meta(e, "TRACE") ? meta(e, "TRACE") : "absent");
	f[6] = text_esc(exe);
	f[7] = text_esc(e->id);
	printf("%-*s %7s %5s %5s %-7s %-8s %-7s ", tw, tbuf,
	       f[0] ? f[0] : "?", f[1] ? f[1] : "?", f[2] ? f[2] : "?",
	       f[3] ? f[3] : "?", f[4] ? f[4] : "?", f[5] ? f[5] : "?");
	if (!c->store) {	/* a central host's journal: which host */
		char *h = text_esc(meta(e, "HOSTNAME"));

		printf("%-15s ", h ? h : "?");
		free(h);
	}
	printf("%-*s %s\n", iw, f[7] ? f[7] : "?", f[6] ? f[6] : "?");
	for (int i = 0; i < 8; i++)
		free(f[i]);
}

/* One entry as a JSON object (json-c, lib/json.c's strings: docs/json.md
 * "Strings"): the meta keys written in capitals, as they are (strings),
 * and the derived facts in lower case. */
static struct json_object *json_entry(const struct ctl *c, const struct btsdumpd_entry *e)
{
	struct json_object *o = json_object_new_object();
	char *path = c->store ? entry_file(c, e, NULL) : NULL;	/* NULL: on its host */
	char *report = report_path(c, e);

	if (o) {
		json_object_object_add(o, "id", btsdec_json_str(e->id));
		json_object_object_add(o, "path", btsdec_json_str(path));
		json_object_object_add(o, "timestamp", json_object_new_uint64(e->timestamp));
		json_object_object_add(o, "bytes", json_object_new_uint64(e->bytes));
		json_object_object_add(o, "corefile",
				       json_object_new_string(core_state_name[core_state(c, e)]));
		json_object_object_add(o, "report", btsdec_json_str(report));
	}
	for (size_t i = 0; o && i < e->meta.n; i++)
		if (!strpbrk(e->meta.keys[i], "abcdefghijklmnopqrstuvwxyz"))	/* else: would clash */
			json_object_object_add(o, e->meta.keys[i], btsdec_json_str(e->meta.vals[i]));
	free(path);
	free(report);
	return o;
}

/* doc on one line (--json=pretty: indented); 0 or an exit status
 * (message printed). */
static int json_print(const struct ctl *c, struct json_object *doc)
{
	struct btsdec_err err;
	const char *s;

	if (c->json_pretty && doc &&
	    (s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						JSON_C_TO_STRING_NOSLASHESCAPE))) {
		puts(s);
		json_object_put(doc);
		return 0;
	}
	if (btsdec_json_write(stdout, doc, &err)) {
		say("%s", err.msg);
		return BTS_EXIT_READ;
	}
	return 0;
}

/* The entries list and -F show: those matching MATCH, the newest c->last
 * of them (0: all), in c->reverse's order; their count (*sel malloc'ed). */
static size_t select_entries(const struct ctl *c, size_t **sel)
{
	size_t n = 0, skip;

	*sel = malloc((c->n ? c->n : 1) * sizeof(**sel));
	if (!*sel) {
		fputs("btsdumpctl: out of memory\n", stderr);
		exit(BTS_EXIT_READ);
	}
	for (size_t i = 0; i < c->n; i++)
		if (entry_matches(&c->e[i], c->match))
			(*sel)[n++] = i;
	skip = c->last && n > c->last ? n - c->last : 0;
	memmove(*sel, *sel + skip, (n - skip) * sizeof(**sel));
	n -= skip;
	for (size_t i = 0; c->reverse && i < n / 2; i++) {
		size_t t = (*sel)[i];

		(*sel)[i] = (*sel)[n - 1 - i];
		(*sel)[n - 1 - i] = t;
	}
	return n;
}

/* -F FIELD: its value in each selected entry that has it, one a line. */
static void list_field(const struct ctl *c, const size_t *sel, size_t n)
{
	const char *key = strncmp(c->field, "BTSDUMPD_", 9) ? c->field : c->field + 9;

	for (size_t i = 0; i < n; i++) {
		const struct btsdumpd_entry *e = &c->e[sel[i]];
		const char *v = !strcmp(key, "ID") ? e->id : meta(e, key);

		if (v) {
			put_value(stdout, v);
			putchar('\n');
		}
	}
}

static void list_table(const struct ctl *c, const size_t *sel, size_t n)
{
	int tw = 4, iw = 2;
	char tbuf[64];

	for (size_t i = 0; i < n; i++) {
		fmt_time(c->e[sel[i]].timestamp, tbuf, sizeof(tbuf));
		if ((int)strlen(tbuf) > tw)
			tw = strlen(tbuf);
		if ((int)strlen(c->e[sel[i]].id) > iw)	/* escaped: wider, still aligned */
			iw = strlen(c->e[sel[i]].id);
	}
	if (n && !c->no_legend)
		printf("%-*s %7s %5s %5s %-7s %-8s %-7s %s%-*s %s\n", tw, "TIME",
		       "PID", "UID", "GID", "SIG", "COREFILE", "TRACE",
		       c->store ? "" : "HOST            ", iw, "ID", "EXE");
	for (size_t i = 0; i < n; i++)
		list_line(c, &c->e[sel[i]], tw, iw);
}

static int cmd_list(const struct ctl *c)
{
	struct json_object *arr = c->json && !c->field ? json_object_new_array() : NULL;
	size_t *sel, n = select_entries(c, &sel);
	int r = 0;

	if (c->field)
		list_field(c, sel, n);
	else if (!c->json)
		list_table(c, sel, n);
	for (size_t i = 0; arr && i < n; i++)
		json_object_array_add(arr, json_entry(c, &c->e[sel[i]]));
	free(sel);
	if (c->json && !c->field && (r = json_print(c, arr)))
		return r;
	if (!n)
		pick(c);	/* prints why */
	return n ? 0 : BTS_EXIT_NONE;
}

/* ---- info ---- */

static void field(const char *label, const char *val)
{
	if (!val)
		return;
	printf("%14s: ", label);
	put_value(stdout, val);
	putchar('\n');
}

static void info_core(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *core = meta(e, "CORE"), *reason = meta(e, "CORE_REASON");
	enum core_state st = core_state(c, e);
	char *path = c->store ? entry_file(c, e, core_file(e)) : NULL;

	printf("%14s: ", "Storage");
	if (st == CORE_NONE) {
		put_value(stdout, core ? core : "none");
	} else if (st == CORE_REMOTE) {
		remote_file(e, core_file(e));
		fputs(" (remote)", stdout);
	} else {
		put_value(stdout, path);
		printf(" (%s", core_state_name[st]);
		if (meta(e, "CORE_TRUNCATED") && !strcmp(meta(e, "CORE_TRUNCATED"), "1"))
			fputs(", truncated", stdout);
		putchar(')');
	}
	if (reason) {
		fputs(": ", stdout);
		put_value(stdout, reason);
	}
	putchar('\n');
	field("Core Size", meta(e, "CORE_SIZE"));
	field("Stored Size", meta(e, "CORE_STORED_SIZE"));
	if (c->store)
		printf("%14s: %llu bytes\n", "Disk Usage", (unsigned long long)e->bytes);
	free(path);
}

static void info_trace(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *trace = meta(e, "TRACE"), *threads = meta(e, "TRACE_THREADS");
	const char *lb = meta(e, "LAST_BRANCHES");
	char *path;

	printf("%14s: ", "Trace");
	put_value(stdout, trace ? trace : "absent");
	if (trace && !strcmp(trace, "present") && threads) {
		fputs(" (", stdout);
		put_value(stdout, threads);
		fputs(strcmp(threads, "1") ? " threads)" : " thread)", stdout);
	}
	if (meta(e, "TRACE_ERROR")) {
		fputs(": ", stdout);
		put_value(stdout, meta(e, "TRACE_ERROR"));
	}
	putchar('\n');
	field("Fault Thread", meta(e, "FAULT_TID"));
	field("Fault", meta(e, "FAULT"));
	if (lb) {
		printf("%14s:\n", "Last Branches");
		for (const char *l = lb; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			char *line = strndup(l, strcspn(l, "\n"));

			if (line && (*line || strchr(l, '\n'))) {
				printf("%16s", "");
				put_rendered(stdout, line);
				putchar('\n');
			}
			free(line);
		}
	}
	if (!c->store && meta(e, "ENTRY")) {
		printf("%14s: ", "Report");
		remote_file(e, BTSDUMPD_REPORT_TXT);
		putchar('\n');
		return;
	}
	path = report_path(c, e);
	field("Report", path ? path : "none");
	free(path);
}

static int cmd_info(const struct ctl *c)
{
	const struct btsdumpd_entry *e = pick(c);
	const char *sig, *name;
	char tbuf[64], *s = NULL;

	if (!e)
		return BTS_EXIT_NONE;
	if (c->json)
		return json_print(c, json_entry(c, e));
	sig = meta(e, "SIGNAL");
	name = sig_name(e);
	field("Entry", e->id);
	if (meta(e, "PID") && meta(e, "COMM") &&
	    asprintf(&s, "%s (%s)", meta(e, "PID"), meta(e, "COMM")) < 0)
		s = NULL;
	field("PID", s ? s : meta(e, "PID"));
	free(s);
	s = NULL;
	field("UID", meta(e, "UID"));
	field("GID", meta(e, "GID"));
	if (sig && name && strcmp(sig, name) && asprintf(&s, "%s (%s)", sig, name) < 0)
		s = NULL;
	field("Signal", s ? s : sig ? sig : name);
	free(s);
	fmt_time(e->timestamp, tbuf, sizeof(tbuf));
	field("Timestamp", tbuf);
	field("Command Line", meta(e, "CMDLINE"));
	field("Executable", meta(e, "EXE"));
	field("Vmcore", meta(e, "VMCORE"));
	field("Control Group", meta(e, "CGROUP"));
	field("Hostname", meta(e, "HOSTNAME"));
	info_core(c, e);
	info_trace(c, e);
	return 0;
}

/* ---- show ---- */

static int cmd_show(const struct ctl *c)
{
	const struct btsdumpd_entry *e = pick(c);
	const char *name = c->json ? "JSON report" : "report";
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int fd;

	if (!e)
		return BTS_EXIT_NONE;
	if (!c->store) {	/* the journal entry's MESSAGE: the trail */
		if (c->json)
			return json_print(c, json_entry(c, e));
		put_rendered(stdout, meta(e, "MESSAGE") ?: "");
		putchar('\n');
		return 0;
	}
	fd = entry_dir(c, e);
	f = fd >= 0 ? btsdumpd_report_open(fd, c->json) : NULL;
	if (!f) {
		say("entry %s has no readable %s (%s): %s", e->id, name,
		    c->json ? BTSDUMPD_REPORT_JSON : BTSDUMPD_REPORT_TXT, strerror(errno));
		if (fd >= 0)
			close(fd);
		return BTS_EXIT_READ;
	}
	close(fd);
	while ((n = getline(&line, &cap, f)) > 0) {
		if (c->json)
			fwrite(line, 1, n, stdout);	/* lib/json.c's: valid JSON */
		else
			btsdec_escape_put_mem(stdout, line, n, BTSDEC_ESC_LINES);
	}
	free(line);
	n = ferror(f);
	fclose(f);
	if (n) {
		say("reading %s of %s failed", name, e->id);
		return BTS_EXIT_READ;
	}
	return 0;
}

/* ---- dump, gdb ---- */

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;
	int r;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		r = btsdumpd_write_all(out, buf, n);
		if (r)
			return r;
	}
	return 0;
}

/* Decompresses (or copies) the entry's core into out_fd; 0 or an exit status. */
static int core_extract(const struct ctl *c, const struct btsdumpd_entry *e, int out_fd)
{
	const char *core = meta(e, "CORE"), *reason = meta(e, "CORE_REASON");
	enum core_state st = core_state(c, e);
	char *path = entry_file(c, e, core_file(e));
	uint64_t max;
	int fd, r;

	if (st != CORE_PRESENT) {
		say("the core of %s is %s (CORE=%s%s%s%s)%s%s", e->id,
		    st == CORE_MISSING ? "missing" : "not stored", core ? core : "unknown",
		    st == CORE_MISSING ? ", but " : "", st == CORE_MISSING ? core_file(e) : "",
		    st == CORE_MISSING ? " is gone" : "", reason ? ": " : "", reason ? reason : "");
		free(path);
		return BTS_EXIT_READ;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (btsdumpd_parse_u64(meta(e, "CORE_SIZE"), &max))
		max = 0;	/* no size known: no limit */
	r = fd < 0 ? -errno : strcmp(core_file(e), "core") ?
	    btsdumpd_zstd_decompress(fd, out_fd, max) : copy_fd(fd, out_fd);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		say("cannot decompress %s: %s", path,
			r == -EBADMSG ? "corrupt or truncated zstd data" :
			r == -EFBIG ? "larger than CORE_SIZE says" : strerror(-r));
	free(path);
	return r < 0 ? BTS_EXIT_READ : 0;
}

static int cmd_dump(const struct ctl *c)
{
	const struct btsdumpd_entry *e;
	int fd = STDOUT_FILENO, r;

	if (!c->output && isatty(STDOUT_FILENO)) {
		fputs("btsdumpctl: refusing to write a core to a terminal; use -o FILE "
		      "or redirect stdout\n", stderr);
		return BTS_EXIT_USAGE;
	}
	e = pick(c);
	if (!e)
		return BTS_EXIT_NONE;
	if (c->output) {
		fd = open(c->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			say("cannot create %s: %m", c->output);
			return BTS_EXIT_READ;
		}
	}
	r = core_extract(c, e, fd);
	if (c->output && close(fd) < 0 && !r) {
		say("writing %s failed: %m", c->output);
		r = BTS_EXIT_READ;
	}
	if (r && c->output)
		unlink(c->output);
	return r;
}

/* $BTSDUMPCTL_GDB_SCRIPT ("" = none), else DATADIR/btscrash/gdb/bts.py
 * (meson's datadir), else PREFIX/share/btscrash/gdb/bts.py with PREFIX the
 * parent of the directory btsdumpctl runs from (a relocated install). */
/* path if readable, else NULL (path freed); NULL for NULL. */
static char *readable(char *path)
{
	if (path && !access(path, R_OK))
		return path;
	free(path);
	return NULL;
}

/* The source tree's gdb/bts.py when dir is a meson build tree (its
 * meson-info names the source directory): btsdumpctl run from a build. */
static char *source_tree_script(const char *dir)
{
	struct json_object *info, *dirs, *src;
	char *path, *p = NULL;

	if (asprintf(&path, "%s/meson-info/meson-info.json", dir) < 0)
		return NULL;
	info = access(path, R_OK) ? NULL : json_object_from_file(path);
	free(path);
	if (info && json_object_object_get_ex(info, "directories", &dirs) &&
	    json_object_object_get_ex(dirs, "source", &src) &&
	    json_object_is_type(src, json_type_string) &&
	    asprintf(&p, "%s/gdb/bts.py", json_object_get_string(src)) < 0)
		p = NULL;
	json_object_put(info);
	return readable(p);
}

/* gdb/bts.py for `btsdumpctl gdb`: $BTSDUMPCTL_GDB_SCRIPT ("" for none),
 * else DATADIR's, else PREFIX/share's for the prefix btsdumpctl runs
 * from, else the source tree's when it runs from its build tree; when
 * none is found gdb runs without it, and btsdumpctl says so. */
static char *gdb_script(void)
{
	const char *env = getenv("BTSDUMPCTL_GDB_SCRIPT");
	char exe[4096], *p = NULL, *prefix;
	ssize_t n;

	if (env) {
		if (*env && access(env, R_OK) < 0)
			say("warning: %s: %m; not loaded", env);
		return *env && !access(env, R_OK) ? strdup(env) : NULL;
	}
	if (asprintf(&p, "%s/btscrash/gdb/bts.py", BTSCRASH_DATADIR) >= 0 && (p = readable(p)))
		return p;
	p = NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	prefix = n > 0 ? dirname(dirname(exe)) : NULL;	/* PREFIX/bin/btsdumpctl */
	if (prefix && (p = source_tree_script(prefix)))
		return p;
	if (prefix && asprintf(&p, "%s/share/btscrash/gdb/bts.py", prefix) >= 0 &&
	    (p = readable(p)))
		return p;
	say("warning: gdb/bts.py not found (in %s/btscrash/gdb, in PREFIX/share/"
	    "btscrash/gdb beside btsdumpctl, or in the source tree of its build "
	    "tree): gdb runs without the bts commands; BTSDUMPCTL_GDB_SCRIPT names it",
	    BTSCRASH_DATADIR);
	return NULL;
}

static int run_gdb(const struct ctl *c, const char *exe, const char *core)
{
	char *script = gdb_script(), *src = NULL, *argv[c->n_gdb_args + 8];
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int n = 0, status;
	pid_t pid;

	argv[n++] = "gdb";
	if (script && asprintf(&src, "source %s", script) >= 0) {
		argv[n++] = "-iex";
		argv[n++] = src;
	}
	if (exe) {
		argv[n++] = "-se";
		argv[n++] = (char *)exe;
	}
	argv[n++] = "-c";
	argv[n++] = (char *)core;
	for (int i = 0; i < c->n_gdb_args; i++)
		argv[n++] = c->gdb_args[i];
	argv[n] = NULL;
	sigaction(SIGINT, &ign, &oint);		/* ^C is gdb's */
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execvp("gdb", argv);
		say("cannot run gdb: %m");
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	free(script);
	free(src);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
		if (pid < 0 || !WIFEXITED(status))
			fputs("btsdumpctl: gdb could not be run or was killed\n", stderr);
		return BTS_EXIT_GDB;
	}
	return WEXITSTATUS(status);
}

static int cmd_gdb(const struct ctl *c)
{
	const struct btsdumpd_entry *e = pick(c);
	const char *tmpdir = getenv("TMPDIR");
	char *tmp;
	int fd, r;

	if (!e)
		return BTS_EXIT_NONE;
	if (asprintf(&tmp, "%s/btsdumpctl-core-XXXXXX",
		     tmpdir && *tmpdir ? tmpdir : "/tmp") < 0)
		return BTS_EXIT_READ;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		say("cannot create a temporary file %s: %m", tmp);
		free(tmp);
		return BTS_EXIT_READ;
	}
	r = core_extract(c, e, fd);
	if (close(fd) < 0 && !r) {
		say("writing %s failed: %m", tmp);
		r = BTS_EXIT_READ;
	}
	if (!r)
		r = run_gdb(c, meta(e, "EXE"), tmp);
	unlink(tmp);
	free(tmp);
	return r;
}

/* ---- main ---- */

static const struct command {
	const char *name;
	int (*fn)(const struct ctl *c);
} commands[] = {
	{ "list", cmd_list }, { "info", cmd_info }, { "show", cmd_show },
	{ "dump", cmd_dump }, { "gdb", cmd_gdb }, { "debug", cmd_gdb },
};

#define usage_error(...)	bts_cli_usage_error("btsdumpctl", __VA_ARGS__)

enum { OPT_STORE = 0x101, OPT_FILE, OPT_NO_LEGEND, OPT_NO_PAGER };

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

/* The options that choose and shape the listing (coredumpctl's). */
static int ctl_select_option(struct ctl *c, int o)
{
	uint64_t v;

	switch (o) {
	case 'r': c->reverse = true; return 0;
	case '1': c->last = 1; return 0;
	case 'n':
		if (bts_cli_parse_u64(optarg, &v) || !v || v > SIZE_MAX)
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
	case OPT_NO_LEGEND: c->no_legend = true; return 0;
	case OPT_NO_PAGER: c->no_pager = true; return 0;
	case 'j':
		if (optarg && strcmp(optarg, "short") && strcmp(optarg, "pretty"))
			return usage_error("--json: short or pretty, not '%s'", optarg);
		c->json = true;
		c->json_pretty = optarg && !strcmp(optarg, "pretty");
		return 0;
	default: return 1;	/* not one of these */
	}
}

/* One option into c: 0, -1 after --help or --version (*status set), or a
 * usage error's status. */
static int ctl_option(struct ctl *c, int o, char **argv, int *status)
{
	int r = ctl_select_option(c, o);

	if (r != 1)
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
		{ "no-legend", no_argument, NULL, OPT_NO_LEGEND },
		{ "no-pager", no_argument, NULL, OPT_NO_PAGER },
		{ "output", required_argument, NULL, 'o' },
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
	while ((o = getopt_long(argc, argv, BTS_CLI_OPTSTRING "D:jo:hrn:1S:U:F:", opts, NULL)) != -1)
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
	if (r < 0)
		return status;
	if (!r)
		r = load(&c);
	/* a pager for what people read (not dump's core, not gdb's terminal) */
	if (!r && !c.no_pager && cmd->fn != cmd_dump && cmd->fn != cmd_gdb)
		bts_cli_pager_start();	/* -errno: no pager, stdout as it was */
	if (!r)
		r = cmd->fn(&c);
	if (fflush(stdout) && !r)
		r = BTS_EXIT_READ;
	bts_cli_pager_end();
	btsdumpd_entries_free(c.e, c.n);
	return r;
}
