// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A store entry from btsdumpd's journal entry (btsdumpctl -D and --file,
 * a central host's journal): its fields, untrusted, into the entry's meta.
 * The reading of the journal is the caller's (libsystemd's sd-journal).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "util.h"

int btsdumpd_entry_journal_field(struct btsdumpd_entry *e, const void *d, size_t len)
{
	const char *eq = memchr(d, '=', len);
	char *key, *val;
	int r = 0;

	if (!eq)
		return 0;
	key = strndup(d, eq - (const char *)d);
	val = strndup(eq + 1, len - (eq + 1 - (const char *)d));
	if (!key || !val)
		r = -ENOMEM;
	else if (!strncmp(key, "BTSDUMPD_", 9))
		r = btsdumpd_meta_set(&e->meta, key + 9, val);
	else if (!strcmp(key, "MESSAGE"))
		r = btsdumpd_meta_set(&e->meta, "MESSAGE", val);
	else if (!strcmp(key, "_HOSTNAME") && !btsdumpd_meta_get(&e->meta, "HOSTNAME"))
		r = btsdumpd_meta_set(&e->meta, "HOSTNAME", val);
	free(key);
	free(val);
	return r == -ENOMEM ? r : 0;	/* -EINVAL: a key meta cannot hold */
}

int btsdumpd_entry_journal_done(struct btsdumpd_entry *e)
{
	const char *id = btsdumpd_meta_get(&e->meta, "ID");

	if (!id || btsdumpd_parse_u64(btsdumpd_meta_get(&e->meta, "TIMESTAMP"), &e->timestamp)) {
		btsdumpd_meta_free(&e->meta);	/* not one of btsdumpd's crash entries */
		memset(e, 0, sizeof(*e));
		return 0;
	}
	e->id = strdup(id);
	if (!e->id) {
		btsdumpd_meta_free(&e->meta);
		return -ENOMEM;
	}
	return 1;
}
