/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zstd streaming (zstdio.c, libzstd): compression between descriptors,
 * and both ways behind a FILE.  Decompression between descriptors:
 * decompress.h.
 */
#ifndef BTSDUMPD_ZSTDIO_H
#define BTSDUMPD_ZSTDIO_H

#include <stdint.h>
#include <stdio.h>

/* zstd streaming, bounded memory: in_fd -> out_fd at level; *out_bytes
 * gets the compressed size.  0 or -errno (-ENOSPC from a full disk passes
 * through). */
int btsdumpd_zstd_compress(int in_fd, int out_fd, int level, uint64_t *out_bytes);

/* A FILE whose bytes go zstd-compressed to fd (left open by fclose; the
 * frame ends at fclose, whose EOF means the end was not written).  *total
 * counts the bytes written to the FILE; past max (0 = no limit) they are
 * counted and thrown away, so the caller learns how much a bounded
 * output wanted.  fopen_read: a FILE of fd's zstd frames decompressed
 * (fd closed by fclose); a corrupt or cut frame reads as an error
 * (EBADMSG).  NULL with errno on failure (fd then closed by fopen_read). */
FILE *btsdumpd_zstd_fopen_write(int fd, int level, uint64_t max, uint64_t *total);
FILE *btsdumpd_zstd_fopen_read(int fd);

#endif /* BTSDUMPD_ZSTDIO_H */
