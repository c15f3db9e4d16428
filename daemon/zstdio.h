/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zstd streaming between descriptors (zstdio.c, libzstd).
 */
#ifndef BTSDUMPD_ZSTDIO_H
#define BTSDUMPD_ZSTDIO_H

#include <stdint.h>

/* zstd streaming, bounded memory.  compress: in_fd -> out_fd at level;
 * *out_bytes gets the compressed size.  decompress: at most max_out bytes
 * of output (0 = no limit), -EFBIG past it, -EBADMSG on corrupt input.
 * Both return 0 or -errno (-ENOSPC from a full disk passes through). */
int btsdumpd_zstd_compress(int in_fd, int out_fd, int level, uint64_t *out_bytes);
int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out);

#endif /* BTSDUMPD_ZSTDIO_H */
