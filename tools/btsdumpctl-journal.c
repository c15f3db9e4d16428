// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl -D and --file: btsdumpd's entries read from a journal (a
 * central host's, systemd-journal-remote's) with libsystemd's sd-journal;
 * each entry's fields parsed by the store library (store/journal.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "btsdumpctl.h"
#include "cli.h"
#include "exit.h"
#include "grow.h"
#include "journal.h"

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

int ctl_load_journal(struct ctl *c)
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
