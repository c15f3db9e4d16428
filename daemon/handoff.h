/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off's datagrams, service side (handoff.c).
 */
#ifndef BTSDUMPD_HANDOFF_H
#define BTSDUMPD_HANDOFF_H

#include <stddef.h>

#include "meta.h"

/* The service side of the hand-off (docs/btsdumpd.md): one datagram of
 * len bytes, "KEY=value", goes into m when KEY is one the handler sends;
 * other keys are ignored.  0, or -EBADMSG (no '=', or a NUL inside). */
int btsdumpd_handoff_field(struct btsdumpd_meta *m, const char *buf, size_t len);
/* Once the fd came: NULL when the fields the service needs (PID, UID, GID,
 * SIGNAL, TIMESTAMP) are there and numbers, else the first that is not. */
const char *btsdumpd_handoff_missing(const struct btsdumpd_meta *m);

#endif /* BTSDUMPD_HANDOFF_H */
