// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl's files share this: its state (struct ctl, filled by the
 * options in btsdumpctl.c), the entries (btsdumpctl-entries.c, -journal.c)
 * and the commands (btsdumpctl-list.c, -group.c, btsdumpctl-gdb.c).  Internal.
 */
#ifndef BTSDUMPCTL_H
#define BTSDUMPCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "btsdec.h"
#include "entries.h"
#include "escape.h"
#include "meta.h"

/* One line on stderr, escaped as a whole. */
#define say(...)	btsdec_escape_line(stderr, "btsdumpctl", __VA_ARGS__)

/* Each --json entry object's "schema" and "version" (docs/btsdumpctl.md
 * "JSON"): version 2 typed the meta values; version 1 (no schema key)
 * wrote every one as a string. */
#define BTSDUMPCTL_JSON_SCHEMA	"btscrash-entry"
#define BTSDUMPCTL_JSON_VERSION	2

/* CORE_REMOTE: stored on the host that crashed (an entry from a journal) */
enum core_state { CORE_PRESENT, CORE_MISSING, CORE_NONE, CORE_REMOTE };
extern const char *const core_state_name[];

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
	bool group;		/* list --group: counts per trail signature */
	const char *output;	/* dump -o */
	bool replay;		/* gdb --replay: "bts replay" once loaded */
	const char *match;
	bool store_missing;	/* the store does not exist: no entry */
	char **gdb_args;	/* after "--" */
	int n_gdb_args;
	struct btsdumpd_entry *e;
	size_t n, cap;		/* cap: room in e, for journal entries */
};

/* btsdumpctl-entries.c */
char *ctl_text_esc(const char *v);
void ctl_put_rendered(FILE *f, const char *s);
void ctl_put_value(FILE *f, const char *v);
const char *ctl_meta(const struct btsdumpd_entry *e, const char *key);
char *ctl_entry_file(const struct ctl *c, const struct btsdumpd_entry *e, const char *name);
bool ctl_entry_has(const struct ctl *c, const struct btsdumpd_entry *e, const char *name);
int ctl_entry_dir(const struct ctl *c, const struct btsdumpd_entry *e);
char *ctl_report_path(const struct ctl *c, const struct btsdumpd_entry *e);
const char *ctl_core_file(const struct btsdumpd_entry *e);
void ctl_remote_file(const struct btsdumpd_entry *e, const char *name);
enum core_state ctl_core_state(const struct ctl *c, const struct btsdumpd_entry *e);
int ctl_load(struct ctl *c);
const struct btsdumpd_entry *ctl_pick(const struct ctl *c);
size_t ctl_select_entries(const struct ctl *c, size_t **sel);

/* btsdumpctl-journal.c */
int ctl_load_journal(struct ctl *c);

/* btsdumpctl-list.c */
void ctl_fmt_time(uint64_t ts, char *buf, size_t len);
const char *ctl_sig_name(const struct btsdumpd_entry *e);
struct json_object *ctl_json_entry(const struct ctl *c, const struct btsdumpd_entry *e);
int ctl_json_print(const struct ctl *c, struct json_object *doc);
int cmd_list(const struct ctl *c);
int cmd_info(const struct ctl *c);
/* btsdumpctl-status.c: the stock-kernel LBR collector's state */
int cmd_status(const struct ctl *c);
int cmd_show(const struct ctl *c);

/* btsdumpctl-group.c, over the selected entries sel[0..n): TRAIL from
 * the stored core where an entry's meta has none (a local store's entries
 * from before btsdumpd wrote it); list --group */
void ctl_fill_trails(const struct ctl *c, const size_t *sel, size_t n);
int ctl_list_groups(const struct ctl *c, const size_t *sel, size_t n);

/* btsdumpctl-gdb.c */
/* Decompresses (or copies) the entry's core into out_fd; out_name in a
 * message (NULL: none printed).  0 or an exit status. */
int ctl_core_extract(const struct ctl *c, const struct btsdumpd_entry *e, int out_fd,
		     const char *out_name);
int cmd_dump(const struct ctl *c);
int cmd_gdb(const struct ctl *c);

#endif
