/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The store's decompressors (decompress.c: libzstd, liblzma, liblz4), one
 * descriptor to another with bounded memory.  Errors: negative errno.
 */
#ifndef BTSDUMPD_DECOMPRESS_H
#define BTSDUMPD_DECOMPRESS_H

#include <stdbool.h>
#include <stdint.h>

/* zstd frames: at most max_out bytes of output (0 = no limit), -EFBIG
 * past it, -EBADMSG on corrupt or cut input.  0 or -errno (-ENOSPC from a
 * full disk passes through); *out_failed (if not NULL) set when writing
 * out_fd failed, for the message to blame the output, not the core. */
int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out, bool *out_failed);
/* xz (concatenated streams) and lz4 frames, as systemd-coredump writes
 * them: 0, -EBADMSG on corrupt or cut input, -EPIPE when out_fd failed. */
int btsdumpd_xz_decompress(int in, int out);
int btsdumpd_lz4_decompress(int in, int out);
/* in copied to out as it is (reads retried on EINTR): 0 or -errno (out's
 * write error, e.g. -EPIPE, then *out_failed set if not NULL, or in's
 * read error). */
int btsdumpd_copy(int in, int out, bool *out_failed);

#endif /* BTSDUMPD_DECOMPRESS_H */
