/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A store entry from btsdumpd's journal entry (journal.c).  Errors:
 * negative errno.
 */
#ifndef BTSDUMPD_JOURNAL_H
#define BTSDUMPD_JOURNAL_H

#include <stddef.h>

#include "entries.h"

/* An entry from btsdumpd's journal entry (btsdumpctl -D/--file; the fields
 * may come from any host: untrusted).  Start from a zeroed e; each field
 * "NAME=value" (len bytes, binary) goes in: BTSDUMPD_KEY as KEY, MESSAGE,
 * the sender's _HOSTNAME as HOSTNAME unless the entry named one; a value
 * ends at a NUL; a key meta cannot hold is skipped.  0, or -ENOMEM.
 * done: 1 when e is a crash entry (an ID and a TIMESTAMP number), its id
 * and timestamp set; 0 when not (e emptied); -ENOMEM. */
int btsdumpd_entry_journal_field(struct btsdumpd_entry *e, const void *d, size_t len);
int btsdumpd_entry_journal_done(struct btsdumpd_entry *e);

#endif /* BTSDUMPD_JOURNAL_H */
