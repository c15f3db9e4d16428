/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btsdumpd's store (docs/btsdumpd.md "The store"): entry metadata (`meta`,
 * escaped KEY=VALUE lines), listing complete entries, zstd streaming, and the
 * POSIX ACL that lets the crashing user read an entry, the hand-off's
 * datagrams, and the small helpers both sides share (whole writes, numbers,
 * signal names).  Shared by btsdumpd
 * (writer) and btsdumpctl (reader); process context.  Errors: negative errno.
 */
#ifndef BTSDUMPD_STORE_H
#define BTSDUMPD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BTSDUMPD_STORE_DEFAULT	"/var/lib/btsdumpd"
#define BTSDUMPD_META		"meta"
#define BTSDUMPD_CORE_FILE	"core.zst"
#define BTSDUMPD_REPORT_TXT	"report.txt"
#define BTSDUMPD_REPORT_JSON	"report.json"

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

/* The service side of the hand-off (docs/btsdumpd.md): one datagram of
 * len bytes, "KEY=value", goes into m when KEY is one the handler sends;
 * other keys are ignored.  0, or -EBADMSG (no '=', or a NUL inside). */
int btsdumpd_handoff_field(struct btsdumpd_meta *m, const char *buf, size_t len);
/* Once the fd came: NULL when the fields the service needs (PID, UID, GID,
 * SIGNAL, TIMESTAMP) are there and numbers, else the first that is not. */
const char *btsdumpd_handoff_missing(const struct btsdumpd_meta *m);

/* A complete entry (a directory ID/ holding a readable meta). */
struct btsdumpd_entry {
	char *id;
	struct btsdumpd_meta meta;
	uint64_t timestamp;	/* TIMESTAMP, else the directory's mtime */
	uint64_t bytes;		/* sum of the entry's file sizes */
};

/* Lists the store's complete entries that the caller can read, oldest
 * first (timestamp, then id).  Directories starting with '.' are skipped.
 * 0 or -errno. */
int btsdumpd_store_list(const char *store, struct btsdumpd_entry **out, size_t *n);
void btsdumpd_entries_free(struct btsdumpd_entry *e, size_t n);

/* zstd streaming, bounded memory.  compress: in_fd -> out_fd at level;
 * *out_bytes gets the compressed size.  decompress: at most max_out bytes
 * of output (0 = no limit), -EFBIG past it, -EBADMSG on corrupt input.
 * Both return 0 or -errno (-ENOSPC from a full disk passes through). */
int btsdumpd_zstd_compress(int in_fd, int out_fd, int level, uint64_t *out_bytes);
int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out);

/* Sets a POSIX access ACL on fd: owner rw(x), group none, user:uid r(x),
 * mask r(x), other none; x only when dir.  0, -EOPNOTSUPP where the
 * filesystem has no ACLs, or -errno. */
int btsdumpd_acl_grant_user(int fd, uid_t uid, bool dir);

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

#endif /* BTSDUMPD_STORE_H */
