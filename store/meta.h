/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btsdumpd's `meta` (docs/btsdumpd.md "meta"): escaped KEY=VALUE lines,
 * the store's record format (meta.c).  Errors: negative errno.
 */
#ifndef BTSDUMPD_META_H
#define BTSDUMPD_META_H

#include <stddef.h>

/* Ordered KEY=VALUE pairs; setting an existing key replaces its value. */
struct btsdumpd_meta {
	size_t n, cap;
	char **keys;
	char **vals;
};

int btsdumpd_meta_set(struct btsdumpd_meta *m, const char *key, const char *val);
int btsdumpd_meta_setf(struct btsdumpd_meta *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *btsdumpd_meta_get(const struct btsdumpd_meta *m, const char *key);
void btsdumpd_meta_free(struct btsdumpd_meta *m);
/* m escaped (docs/btsdumpd.md "meta") into a new buffer *buf (free() it)
 * of *len bytes; 0, -EINVAL (a bad key) or -ENOMEM. */
int btsdumpd_meta_format(const struct btsdumpd_meta *m, char **buf, size_t *len);
/* Writes m escaped to fd; 0 or -errno. */
int btsdumpd_meta_write_fd(int fd, const struct btsdumpd_meta *m);
/* Parses len bytes of meta text (at most 1 MiB, need not end in a NUL);
 * malformed lines are skipped.  0, -EFBIG when over the size limit, or
 * -ENOMEM (m is then empty). */
int btsdumpd_meta_parse(const char *buf, size_t len, struct btsdumpd_meta *m);
/* Reads a meta file and parses it as above; 0 or -errno. */
int btsdumpd_meta_read_at(int dirfd, const char *name, struct btsdumpd_meta *m);

#endif /* BTSDUMPD_META_H */
