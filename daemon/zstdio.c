// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstd streaming between file descriptors with bounded memory (libzstd):
 * the stored core.zst, written by btsdumpd, read back by btsdumpctl dump.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "util.h"
#include "zstdio.h"

#define IO_CHUNK	(64 * 1024)	/* zstd streaming buffers */

static ssize_t read_some(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Feeds one input chunk (or the end, when last) through the compressor. */
static int compress_chunk(ZSTD_CCtx *cctx, ZSTD_inBuffer *in, bool last,
			  void *obuf, int out_fd, uint64_t *total)
{
	ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
	size_t rem;
	int r;

	do {
		ZSTD_outBuffer out = { obuf, IO_CHUNK, 0 };

		rem = ZSTD_compressStream2(cctx, &out, in, mode);
		if (ZSTD_isError(rem))
			return -EIO;
		r = btsdumpd_write_all(out_fd, obuf, out.pos);
		if (r < 0)
			return r;
		*total += out.pos;
	} while (last ? rem != 0 : in->pos < in->size);
	return 0;
}

int btsdumpd_zstd_compress(int in_fd, int out_fd, int level, uint64_t *out_bytes)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	void *ibuf = malloc(IO_CHUNK), *obuf = malloc(IO_CHUNK);
	uint64_t total = 0;
	int r = 0;

	if (!cctx || !ibuf || !obuf) {
		r = -ENOMEM;
		goto out;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		ssize_t n = read_some(in_fd, ibuf, IO_CHUNK);
		ZSTD_inBuffer in = { ibuf, n > 0 ? (size_t)n : 0, 0 };

		if (n < 0) {
			r = n;
			break;
		}
		r = compress_chunk(cctx, &in, n == 0, obuf, out_fd, &total);
		if (r < 0 || n == 0)
			break;
	}
	if (!r && out_bytes)
		*out_bytes = total;
out:
	ZSTD_freeCCtx(cctx);
	free(ibuf);
	free(obuf);
	return r;
}

/* Decompresses one input chunk; *ret keeps ZSTD_decompressStream's last
 * hint (0 = at a frame boundary, everything flushed). */
static int decompress_chunk(ZSTD_DCtx *dctx, ZSTD_inBuffer *in, void *obuf,
			    int out_fd, uint64_t *total, uint64_t max_out,
			    size_t *ret)
{
	ZSTD_outBuffer out;
	int r;

	do {
		out = (ZSTD_outBuffer){ obuf, IO_CHUNK, 0 };
		*ret = ZSTD_decompressStream(dctx, &out, in);
		if (ZSTD_isError(*ret))
			return -EBADMSG;
		if (max_out && out.pos > max_out - *total)
			return -EFBIG;
		r = btsdumpd_write_all(out_fd, obuf, out.pos);
		if (r < 0)
			return r;
		*total += out.pos;
	} while (in->pos < in->size || (*ret && out.pos == out.size));
	return 0;
}

int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	void *ibuf = malloc(IO_CHUNK), *obuf = malloc(IO_CHUNK);
	size_t ret = 1;		/* nothing read yet: not at a frame end */
	uint64_t total = 0;
	int r = 0;

	if (!dctx || !ibuf || !obuf) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = read_some(in_fd, ibuf, IO_CHUNK);
		ZSTD_inBuffer in = { ibuf, n > 0 ? (size_t)n : 0, 0 };

		if (n <= 0) {
			r = n < 0 ? n : ret ? -EBADMSG : 0;	/* truncated frame */
			break;
		}
		r = decompress_chunk(dctx, &in, obuf, out_fd, &total, max_out, &ret);
		if (r < 0)
			break;
	}
out:
	ZSTD_freeDCtx(dctx);
	free(ibuf);
	free(obuf);
	return r;
}
