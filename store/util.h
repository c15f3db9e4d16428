/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers btsdumpd and btsdumpctl share (util.c).
 */
#ifndef BTSDUMPD_UTIL_H
#define BTSDUMPD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* read(2), retried on EINTR; bytes read, 0 at the end, or -errno. */
ssize_t btsdumpd_read_some(int fd, void *buf, size_t len);
/* write(2) until all of buf is out; 0 or -errno (-EIO for a 0 return). */
int btsdumpd_write_all(int fd, const void *buf, size_t len);
/* A whole string of decimal digits into *v; 0 or -EINVAL (also overflow). */
int btsdumpd_parse_u64(const char *s, uint64_t *v);
/* "SIGSEGV" for 11, or the number itself when it names no signal; the
 * result lives in a static buffer until the next call. */
const char *btsdumpd_signal_name(int sig);

/* The comm part of an entry ID: bytes outside [A-Za-z0-9_+-] become '_',
 * at most 15 bytes, "unknown" if empty.  out must hold 16 bytes. */
void btsdumpd_sanitize_comm(const char *comm, char *out);

#endif /* BTSDUMPD_UTIL_H */
