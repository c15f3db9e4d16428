// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl's entries: loading the store (store/entries.c) or, through
 * btsdumpctl-journal.c, a journal; --since/--until, MATCH and -n applied;
 * an entry's files and core state; its values escaped on their way out
 * (lib/escape.c).  Process context, on content it does not trust.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btsdumpctl.h"
#include "escape.h"
#include "exit.h"
#include "util.h"

const char *const core_state_name[] = {
	[CORE_PRESENT] = "present", [CORE_MISSING] = "missing", [CORE_NONE] = "none",
	[CORE_REMOTE] = "remote",
};

/* Every value from the store or a journal goes through lib/escape.c on its
 * way to a person, and through lib/json.c (json-c) into JSON. */

/* v escaped for a table cell ("-" for none); NULL if out of memory. */
char *ctl_text_esc(const char *v)
{
	return btsdec_escape(v ? v : "-", 0);
}

/* Text btsdumpd rendered with the library (a trail, a report): already
 * escaped there, so its backslashes stay; a control byte is still caught. */
void ctl_put_rendered(FILE *f, const char *s)
{
	btsdec_escape_put(f, s, BTSDEC_ESC_LINES);
}

void ctl_put_value(FILE *f, const char *v)
{
	btsdec_escape_put(f, v, 0);
}
/* ---- entries ---- */

const char *ctl_meta(const struct btsdumpd_entry *e, const char *key)
{
	return btsdumpd_meta_get(&e->meta, key);
}

char *ctl_entry_file(const struct ctl *c, const struct btsdumpd_entry *e,
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

bool ctl_entry_has(const struct ctl *c, const struct btsdumpd_entry *e,
		      const char *name)
{
	struct stat st;
	bool ok;
	char *p;

	if (!c->store)
		return false;	/* a journal entry: its files are on its host */
	p = ctl_entry_file(c, e, name);
	ok = !lstat(p, &st) && S_ISREG(st.st_mode);
	free(p);
	return ok;
}

/* The entry's directory, open (-1 with errno: none, or from a journal). */
int ctl_entry_dir(const struct ctl *c, const struct btsdumpd_entry *e)
{
	char *dir;
	int fd;

	if (!c->store) {
		errno = ENOENT;
		return -1;
	}
	dir = ctl_entry_file(c, e, NULL);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	free(dir);
	return fd;
}

/* The path of the entry's text report, whichever file holds it, or NULL. */
char *ctl_report_path(const struct ctl *c, const struct btsdumpd_entry *e)
{
	int fd = ctl_entry_dir(c, e);
	const char *name = fd >= 0 ? btsdumpd_report_name(fd, false) : NULL;
	char *p = name ? ctl_entry_file(c, e, name) : NULL;

	if (fd >= 0)
		close(fd);
	return p;
}

/* The stored core's file: core.zst, or core with btsdumpd's Compress=no. */
const char *ctl_core_file(const struct btsdumpd_entry *e)
{
	const char *f = ctl_meta(e, "CORE_FILE");

	return f && !strcmp(f, "core") ? "core" : BTSDUMPD_CORE_FILE;
}

/* A file of an entry read from a journal: "HOST:ENTRY/name", where its
 * host keeps it. */
void ctl_remote_file(const struct btsdumpd_entry *e, const char *name)
{
	ctl_put_value(stdout, ctl_meta(e, "HOSTNAME") ? ctl_meta(e, "HOSTNAME") : "?");
	putchar(':');
	ctl_put_value(stdout, ctl_meta(e, "ENTRY") ? ctl_meta(e, "ENTRY") : e->id);
	printf("/%s", name);
}

enum core_state ctl_core_state(const struct ctl *c, const struct btsdumpd_entry *e)
{
	const char *core = ctl_meta(e, "CORE");

	if (ctl_entry_has(c, e, ctl_core_file(e)))
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
	const char *comm = ctl_meta(e, "COMM"), *exe = ctl_meta(e, "EXE"), *pid, *base;

	if (!match || !strcmp(e->id, match))
		return true;
	if (is_digits(match)) {
		pid = ctl_meta(e, "PID");
		return pid && !strcmp(pid, match);
	}
	if (comm && !strcmp(comm, match))
		return true;
	base = exe ? strrchr(exe, '/') : NULL;
	base = base ? base + 1 : exe;
	return base && !strcmp(base, match);
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
		btsdec_escape_line(stderr, NULL, "No crash readable by you (uid %u): the %zu in %s "
				   "are readable by root and by the user that crashed each.",
				   (unsigned int)getuid(), hidden, c->store);
		return BTS_EXIT_READ;
	}

	if (r == -ENOENT) {	/* no entry: the command says so (ctl_pick) */
		c->store_missing = true;
		return 0;
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
int ctl_load(struct ctl *c)
{
	int r = c->store ? load_store(c) : ctl_load_journal(c);

	if (!r)
		keep_in_time(c);
	return r;
}

/* The most recent entry matching c->match, or NULL (message printed). */
const struct btsdumpd_entry *ctl_pick(const struct ctl *c)
{
	for (size_t i = c->n; i-- > 0;)
		if (entry_matches(&c->e[i], c->match))
			return &c->e[i];
	if (c->store_missing)
		btsdec_escape_line(stderr, NULL, "No crashes stored (%s does not exist).", c->store);
	else if (c->match)
		btsdec_escape_line(stderr, NULL, "No crash matches \"%s\".", c->match);
	else if (c->have_since || c->have_until)
		fputs("No crash matches --since/--until.\n", stderr);
	else
		fputs("No crashes stored.\n", stderr);
	return NULL;
}
/* The entries list and -F show: those matching MATCH, the newest c->last
 * of them (0: all), in c->reverse's order; their count (*sel malloc'ed). */
size_t ctl_select_entries(const struct ctl *c, size_t **sel)
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
