// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl list, info and show: the entries as a table (--group:
 * btsdumpctl-group.c), a field (-F), JSON (json-c, lib/json.c's strings:
 * docs/btsdumpctl.md), an entry's metadata and its stored trace report.
 * Everything printed is escaped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btsdumpctl.h"
#include "escape.h"
#include "exit.h"
#include "util.h"

void ctl_fmt_time(uint64_t ts, char *buf, size_t len)
{
	time_t t = ts;
	struct tm tm;

	if (ts > (uint64_t)INT64_MAX || !localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%a %Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "@%llu", (unsigned long long)ts);
}

const char *ctl_sig_name(const struct btsdumpd_entry *e)
{
	const char *name = ctl_meta(e, "SIGNAL_NAME"), *num = ctl_meta(e, "SIGNAL");
	uint64_t v;

	if (name || btsdumpd_parse_u64(num, &v) || v > 999)
		return name ? name : num;
	return btsdumpd_signal_name(v);
}

/* ---- list ---- */

static void list_line(const struct ctl *c, const struct btsdumpd_entry *e, int tw, int iw)
{
	const char *exe = ctl_meta(e, "EXE"), *trail = ctl_meta(e, "TRAIL");
	char *f[9], tbuf[64];

	exe = exe ? exe : ctl_meta(e, "VMCORE") ? ctl_meta(e, "VMCORE") : ctl_meta(e, "COMM");
	ctl_fmt_time(e->timestamp, tbuf, sizeof(tbuf));
	f[0] = ctl_text_esc(ctl_meta(e, "PID"));
	f[1] = ctl_text_esc(ctl_meta(e, "UID"));
	f[2] = ctl_text_esc(ctl_meta(e, "GID"));
	f[3] = ctl_text_esc(ctl_sig_name(e));
	f[4] = ctl_text_esc(core_state_name[ctl_core_state(c, e)]);
	f[5] = ctl_text_esc(ctl_meta(e, "TRACE") ? ctl_meta(e, "TRACE") : "absent");
	f[6] = ctl_text_esc(exe);
	f[7] = ctl_text_esc(e->id);
	f[8] = ctl_text_esc(trail && *trail ? trail : "-");	/* as --group's "-" */
	printf("%-*s %7s %5s %5s %-7s %-8s %-7s %-12.12s ", tw, tbuf,
	       f[0] ? f[0] : "?", f[1] ? f[1] : "?", f[2] ? f[2] : "?",
	       f[3] ? f[3] : "?", f[4] ? f[4] : "?", f[5] ? f[5] : "?",
	       f[8] ? f[8] : "?");
	if (!c->store) {	/* a central host's journal: which host */
		char *h = ctl_text_esc(ctl_meta(e, "HOSTNAME"));

		printf("%-15s ", h ? h : "?");
		free(h);
	}
	printf("%-*s %s\n", iw, f[7] ? f[7] : "?", f[6] ? f[6] : "?");
	for (int i = 0; i < 9; i++)
		free(f[i]);
}

/* The meta keys --json writes typed (docs/btsdumpctl.md "JSON"): numbers,
 * and flags meta holds as "1" (booleans).  Any other key is a string, and
 * so is a typed key whose value does not parse (store content is not
 * trusted: an entry btsdumpd did not write). */
static const struct {
	const char *key;
	bool flag;
} typed_keys[] = {
	{ "VERSION", false }, { "PID", false }, { "UID", false }, { "GID", false },
	{ "SIGNAL", false }, { "TIMESTAMP", false }, { "DUMP_MODE", false },
	{ "COREDUMP_TIMESTAMP", false }, { "CORE_SIZE", false },
	{ "CORE_STORED_SIZE", false }, { "TRACE_THREADS", false },
	{ "TRACE_REJECTED", false }, { "FAULT_TID", false }, { "REPORT_LAST", false },
	{ "CORE_TRUNCATED", true }, { "REPORT_CUT", true },
};

/* A meta value as JSON: typed as the table says, else lib/json.c's string. */
static struct json_object *json_meta_value(const char *key, const char *v)
{
	uint64_t n;

	for (size_t i = 0; i < sizeof(typed_keys) / sizeof(typed_keys[0]); i++) {
		if (strcmp(key, typed_keys[i].key) || btsdumpd_parse_u64(v, &n))
			continue;
		if (!typed_keys[i].flag)
			return json_object_new_uint64(n);
		if (n <= 1)
			return json_object_new_boolean(n);
	}
	return btsdec_json_str(v);
}

/* One entry as a JSON object (json-c, lib/json.c's strings: docs/json.md
 * "Strings"): its schema and version, the derived facts in lower case,
 * then the meta keys written in capitals, typed (json_meta_value). */
struct json_object *ctl_json_entry(const struct ctl *c, const struct btsdumpd_entry *e)
{
	struct json_object *o = json_object_new_object();
	char *path = c->store ? ctl_entry_file(c, e, NULL) : NULL;	/* NULL: on its host */
	char *report = ctl_report_path(c, e);

	if (o) {
		json_object_object_add(o, "schema", json_object_new_string(BTSDUMPCTL_JSON_SCHEMA));
		json_object_object_add(o, "version", json_object_new_int(BTSDUMPCTL_JSON_VERSION));
		json_object_object_add(o, "id", btsdec_json_str(e->id));
		json_object_object_add(o, "path", btsdec_json_str(path));
		json_object_object_add(o, "timestamp", json_object_new_uint64(e->timestamp));
		json_object_object_add(o, "bytes", json_object_new_uint64(e->bytes));
		json_object_object_add(o, "corefile",
				       json_object_new_string(core_state_name[ctl_core_state(c, e)]));
		json_object_object_add(o, "report", btsdec_json_str(report));
	}
	for (size_t i = 0; o && i < e->meta.n; i++)
		if (!strpbrk(e->meta.keys[i], "abcdefghijklmnopqrstuvwxyz"))	/* else: would clash */
			json_object_object_add(o, e->meta.keys[i],
					       json_meta_value(e->meta.keys[i], e->meta.vals[i]));
	free(path);
	free(report);
	return o;
}

/* doc on one line (--json=pretty: indented); 0 or an exit status
 * (message printed). */
int ctl_json_print(const struct ctl *c, struct json_object *doc)
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

/* -F FIELD: its value in each selected entry that has it, one a line. */
static void list_field(const struct ctl *c, const size_t *sel, size_t n)
{
	const char *key = strncmp(c->field, "BTSDUMPD_", 9) ? c->field : c->field + 9;

	for (size_t i = 0; i < n; i++) {
		const struct btsdumpd_entry *e = &c->e[sel[i]];
		const char *v = !strcmp(key, "ID") ? e->id : ctl_meta(e, key);

		if (v) {
			ctl_put_value(stdout, v);
			putchar('\n');
		}
	}
}

static void list_table(const struct ctl *c, const size_t *sel, size_t n)
{
	int tw = 4, iw = 2;
	char tbuf[64];

	for (size_t i = 0; i < n; i++) {
		ctl_fmt_time(c->e[sel[i]].timestamp, tbuf, sizeof(tbuf));
		if ((int)strlen(tbuf) > tw)
			tw = strlen(tbuf);
		if ((int)strlen(c->e[sel[i]].id) > iw)	/* escaped: wider, still aligned */
			iw = strlen(c->e[sel[i]].id);
	}
	if (n && !c->no_legend)
		printf("%-*s %7s %5s %5s %-7s %-8s %-7s %-12s %s%-*s %s\n", tw, "TIME",
		       "PID", "UID", "GID", "SIG", "COREFILE", "TRACE", "TRAIL",
		       c->store ? "" : "HOST            ", iw, "ID", "EXE");
	for (size_t i = 0; i < n; i++)
		list_line(c, &c->e[sel[i]], tw, iw);
}

int cmd_list(const struct ctl *c)
{
	struct json_object *arr = c->json && !c->field && !c->group ?
				  json_object_new_array() : NULL;
	size_t *sel, n = ctl_select_entries(c, &sel);
	int r = 0;

	ctl_fill_trails(c, sel, n);
	if (c->group && n) {
		r = ctl_list_groups(c, sel, n);
		free(sel);
		return r;
	}
	if (c->field)
		list_field(c, sel, n);
	else if (!c->json)
		list_table(c, sel, n);
	for (size_t i = 0; arr && i < n; i++)
		json_object_array_add(arr, ctl_json_entry(c, &c->e[sel[i]]));
	free(sel);
	if (arr && (r = ctl_json_print(c, arr)))
		return r;
	if (!n)
		ctl_pick(c);	/* prints why */
	return n ? 0 : BTS_EXIT_NONE;
}

/* ---- info ---- */

static void field(const char *label, const char *val)
{
	if (!val)
		return;
	printf("%14s: ", label);
	ctl_put_value(stdout, val);
	putchar('\n');
}

static void info_core(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *core = ctl_meta(e, "CORE"), *reason = ctl_meta(e, "CORE_REASON");
	enum core_state st = ctl_core_state(c, e);
	char *path = c->store ? ctl_entry_file(c, e, ctl_core_file(e)) : NULL;

	printf("%14s: ", "Storage");
	if (st == CORE_NONE) {
		ctl_put_value(stdout, core ? core : "none");
	} else if (st == CORE_REMOTE) {
		ctl_remote_file(e, ctl_core_file(e));
		fputs(" (remote)", stdout);
	} else {
		ctl_put_value(stdout, path);
		printf(" (%s", core_state_name[st]);
		if (ctl_meta(e, "CORE_TRUNCATED") && !strcmp(ctl_meta(e, "CORE_TRUNCATED"), "1"))
			fputs(", truncated", stdout);
		putchar(')');
	}
	if (reason) {
		fputs(": ", stdout);
		ctl_put_value(stdout, reason);
	}
	putchar('\n');
	field("Core Size", ctl_meta(e, "CORE_SIZE"));
	field("Stored Size", ctl_meta(e, "CORE_STORED_SIZE"));
	if (c->store)
		printf("%14s: %llu bytes\n", "Disk Usage", (unsigned long long)e->bytes);
	free(path);
}

static void info_trace(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *trace = ctl_meta(e, "TRACE"), *threads = ctl_meta(e, "TRACE_THREADS");
	const char *lb = ctl_meta(e, "LAST_BRANCHES");
	char *path;

	printf("%14s: ", "Trace");
	ctl_put_value(stdout, trace ? trace : "absent");
	if (trace && !strcmp(trace, "present") && threads) {
		fputs(" (", stdout);
		ctl_put_value(stdout, threads);
		fputs(strcmp(threads, "1") ? " threads)" : " thread)", stdout);
	}
	if (ctl_meta(e, "TRACE_ERROR")) {
		fputs(": ", stdout);
		ctl_put_value(stdout, ctl_meta(e, "TRACE_ERROR"));
	}
	putchar('\n');
	field("Fault Thread", ctl_meta(e, "FAULT_TID"));
	field("Fault", ctl_meta(e, "FAULT"));
	field("Trail", ctl_meta(e, "TRAIL"));
	if (lb) {
		printf("%14s:\n", "Last Branches");
		for (const char *l = lb; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			char *line = strndup(l, strcspn(l, "\n"));

			if (line && (*line || strchr(l, '\n'))) {
				printf("%16s", "");
				ctl_put_rendered(stdout, line);
				putchar('\n');
			}
			free(line);
		}
	}
	if (!c->store && ctl_meta(e, "ENTRY")) {
		printf("%14s: ", "Report");
		ctl_remote_file(e, BTSDUMPD_REPORT_TXT);
		putchar('\n');
		return;
	}
	path = ctl_report_path(c, e);
	field("Report", path ? path : "none");
	free(path);
}

int cmd_info(const struct ctl *c)
{
	const struct btsdumpd_entry *e = ctl_pick(c);
	const char *sig, *name;
	char tbuf[64], *s = NULL;

	if (!e)
		return BTS_EXIT_NONE;
	if (c->json)
		return ctl_json_print(c, ctl_json_entry(c, e));
	sig = ctl_meta(e, "SIGNAL");
	name = ctl_sig_name(e);
	field("Entry", e->id);
	if (ctl_meta(e, "PID") && ctl_meta(e, "COMM") &&
	    asprintf(&s, "%s (%s)", ctl_meta(e, "PID"), ctl_meta(e, "COMM")) < 0)
		s = NULL;
	field("PID", s ? s : ctl_meta(e, "PID"));
	free(s);
	s = NULL;
	field("UID", ctl_meta(e, "UID"));
	field("GID", ctl_meta(e, "GID"));
	if (sig && name && strcmp(sig, name) && asprintf(&s, "%s (%s)", sig, name) < 0)
		s = NULL;
	field("Signal", s ? s : sig ? sig : name);
	free(s);
	ctl_fmt_time(e->timestamp, tbuf, sizeof(tbuf));
	field("Timestamp", tbuf);
	field("Command Line", ctl_meta(e, "CMDLINE"));
	field("Executable", ctl_meta(e, "EXE"));
	field("Vmcore", ctl_meta(e, "VMCORE"));
	field("Control Group", ctl_meta(e, "CGROUP"));
	field("Hostname", ctl_meta(e, "HOSTNAME"));
	info_core(c, e);
	info_trace(c, e);
	return 0;
}

/* ---- show ---- */

int cmd_show(const struct ctl *c)
{
	const struct btsdumpd_entry *e = ctl_pick(c);
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
			return ctl_json_print(c, ctl_json_entry(c, e));
		ctl_put_rendered(stdout, ctl_meta(e, "MESSAGE") ?: "");
		putchar('\n');
		return 0;
	}
	fd = ctl_entry_dir(c, e);
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
