// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Every decompressor the store's readers use, file descriptor to file
 * descriptor with bounded memory: zstd (btsdumpd's core.zst, read back by
 * btsdumpctl dump), xz and lz4 (systemd-coredump's cores, read by the
 * companion, daemon/companion.c), and the plain copy beside them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <lz4frame.h>
#include <lzma.h>
#include <zstd.h>

#include "decompress.h"
#include "util.h"

#define IO_CHUNK	(64 * 1024)	/* streaming buffers */

/* Decompresses one input chunk; *ret keeps ZSTD_decompressStream's last
 * hint (0 = at a frame boundary, everything flushed). */
static int decompress_chunk(ZSTD_DCtx *dctx, ZSTD_inBuffer *in, void *obuf,
			    int out_fd, uint64_t *total, uint64_t max_out,
			    size_t *ret, bool *out_failed)
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
		if (r < 0) {
			if (out_failed)
				*out_failed = true;
			return r;
		}
		*total += out.pos;
	} while (in->pos < in->size || (*ret && out.pos == out.size));
	return 0;
}

int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out, bool *out_failed)
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
		ssize_t n = btsdumpd_read_some(in_fd, ibuf, IO_CHUNK);
		ZSTD_inBuffer in = { ibuf, n > 0 ? (size_t)n : 0, 0 };

		if (n <= 0) {
			r = n < 0 ? n : ret ? -EBADMSG : 0;	/* truncated frame */
			break;
		}
		r = decompress_chunk(dctx, &in, obuf, out_fd, &total, max_out, &ret,
				     out_failed);
		if (r < 0)
			break;
	}
out:
	ZSTD_freeDCtx(dctx);
	free(ibuf);
	free(obuf);
	return r;
}

/* ---- systemd-coredump's: xz, lz4, plain ---- */

int btsdumpd_copy(int in, int out, bool *out_failed)
{
	static char buf[IO_CHUNK];
	ssize_t n;
	int r = 0;

	while (!r && (n = btsdumpd_read_some(in, buf, sizeof(buf))) > 0)
		r = btsdumpd_write_all(out, buf, n);
	if (r && out_failed)
		*out_failed = true;
	return r ? r : n < 0 ? (int)n : 0;
}

int btsdumpd_xz_decompress(int in, int out)
{
	static uint8_t ibuf[IO_CHUNK], obuf[IO_CHUNK];
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_action act = LZMA_RUN;
	lzma_ret r = LZMA_OK;
	ssize_t n;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	while (r == LZMA_OK) {
		if (!s.avail_in && act == LZMA_RUN) {
			n = read(in, ibuf, sizeof(ibuf));
			if (n < 0) {
				r = LZMA_PROG_ERROR;
				break;
			}
			s.next_in = ibuf;
			s.avail_in = n;
			if (!n)
				act = LZMA_FINISH;
		}
		s.next_out = obuf;
		s.avail_out = sizeof(obuf);
		r = lzma_code(&s, act);
		if (btsdumpd_write_all(out, obuf, sizeof(obuf) - s.avail_out))
			r = LZMA_PROG_ERROR;
	}
	lzma_end(&s);
	return r == LZMA_STREAM_END ? 0 : -EBADMSG;
}

int btsdumpd_lz4_decompress(int in, int out)
{
	static char ibuf[IO_CHUNK], obuf[IO_CHUNK];
	size_t hint = 1;	/* 0 once a frame ended where the input did */
	LZ4F_dctx *z;
	ssize_t n;
	int ret = 0;

	if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
		return -ENOMEM;
	while (!ret && (n = read(in, ibuf, sizeof(ibuf))) > 0) {
		size_t pos = 0;

		while (!ret && pos < (size_t)n) {
			size_t olen = sizeof(obuf), ilen = n - pos;

			hint = LZ4F_decompress(z, obuf, &olen, ibuf + pos, &ilen, NULL);
			if (LZ4F_isError(hint))
				ret = -EBADMSG;
			else if (btsdumpd_write_all(out, obuf, olen))
				ret = -EPIPE;
			pos += ilen;
		}
	}
	LZ4F_freeDecompressionContext(z);
	return ret ? ret : n < 0 ? -errno : hint ? -EBADMSG : 0;
}
