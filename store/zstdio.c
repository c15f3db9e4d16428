// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstd streaming with bounded memory (libzstd): compression between file
 * descriptors (the stored core.zst, written by btsdumpd; decompress.c
 * reads it back) and both ways behind a FILE (the trace reports: written
 * by the analysis, read by btsdumpd_report_open()).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "util.h"
#include "zstdio.h"

#define IO_CHUNK	(64 * 1024)	/* zstd streaming buffers */

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
		ssize_t n = btsdumpd_read_some(in_fd, ibuf, IO_CHUNK);
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

/* ---- zstd behind a FILE (fopencookie) ---------------------------------- */

struct zwriter {
	ZSTD_CCtx *cctx;
	int fd;
	uint64_t max, *total, out;
	char obuf[IO_CHUNK];
};

static ssize_t zw_write(void *cookie, const char *buf, size_t len)
{
	struct zwriter *w = cookie;
	ZSTD_inBuffer in = { buf, len, 0 };
	int r;

	*w->total += len;
	if (w->max && *w->total > w->max)
		return len;	/* counted, not written: the caller sees the total */
	r = compress_chunk(w->cctx, &in, false, w->obuf, w->fd, &w->out);
	if (r < 0) {
		errno = -r;
		return 0;
	}
	return len;
}

static int zw_close(void *cookie)
{
	struct zwriter *w = cookie;
	ZSTD_inBuffer in = { NULL, 0, 0 };
	int r = compress_chunk(w->cctx, &in, true, w->obuf, w->fd, &w->out);

	ZSTD_freeCCtx(w->cctx);
	free(w);
	if (r < 0) {
		errno = -r;
		return EOF;
	}
	return 0;
}

FILE *btsdumpd_zstd_fopen_write(int fd, int level, uint64_t max, uint64_t *total)
{
	static const cookie_io_functions_t io = { .write = zw_write, .close = zw_close };
	struct zwriter *w = calloc(1, sizeof(*w));
	FILE *f;

	if (!w || !(w->cctx = ZSTD_createCCtx()) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)))
		goto fail;
	w->fd = fd;
	w->max = max;
	w->total = total;
	*total = 0;
	f = fopencookie(w, "w", io);
	if (f)
		return f;
fail:
	if (w)
		ZSTD_freeCCtx(w->cctx);
	free(w);
	errno = ENOMEM;
	return NULL;
}

struct zreader {
	ZSTD_DCtx *dctx;
	int fd;
	bool eof;
	size_t hint;		/* ZSTD_decompressStream's last: 0 at a frame end */
	ZSTD_inBuffer in;
	char ibuf[IO_CHUNK];
};

static ssize_t zr_read(void *cookie, char *buf, size_t len)
{
	struct zreader *z = cookie;
	ssize_t n;

	for (;;) {
		ZSTD_outBuffer out = { buf, len, 0 };

		if (z->in.pos == z->in.size && !z->eof) {
			n = btsdumpd_read_some(z->fd, z->ibuf, sizeof(z->ibuf));
			if (n < 0) {
				errno = -n;
				return -1;
			}
			z->eof = n == 0;
			z->in = (ZSTD_inBuffer){ z->ibuf, n, 0 };
		}
		if (z->eof && z->in.pos == z->in.size && !z->hint)
			return 0;	/* the end, at a frame's end */
		z->hint = ZSTD_decompressStream(z->dctx, &out, &z->in);
		if (ZSTD_isError(z->hint)) {
			errno = EBADMSG;
			return -1;
		}
		if (out.pos)
			return out.pos;
		if (z->eof && z->in.pos == z->in.size && z->hint) {
			errno = EBADMSG;	/* ends inside a frame */
			return -1;
		}
	}
}

static int zr_close(void *cookie)
{
	struct zreader *z = cookie;

	ZSTD_freeDCtx(z->dctx);
	close(z->fd);
	free(z);
	return 0;
}

FILE *btsdumpd_zstd_fopen_read(int fd)
{
	static const cookie_io_functions_t io = { .read = zr_read, .close = zr_close };
	struct zreader *z = calloc(1, sizeof(*z));
	FILE *f;

	if (z && (z->dctx = ZSTD_createDCtx())) {
		z->fd = fd;
		/* hint 0: an empty file is an empty report */
		f = fopencookie(z, "r", io);
		if (f)
			return f;
		ZSTD_freeDCtx(z->dctx);
	}
	free(z);
	close(fd);
	errno = ENOMEM;
	return NULL;
}
