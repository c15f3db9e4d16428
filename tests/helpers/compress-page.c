// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper for tests/make-vmcore.py: compresses standard input the way
 * makedumpfile compresses a kdump-compressed dump's pages (-l lzo1x_1,
 * -p snappy, -z zstd), so the synthetic vmcores carry every page format
 * lib/vmcore.c reads; writes the compressed bytes to standard output.
 * Usage: compress-page lzo|snappy|zstd < PAGE > BODY
 */
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define MAX_IN	(1 << 20)

int main(int argc, char **argv)
{
	static unsigned char in[MAX_IN], out[MAX_IN + MAX_IN / 16 + 4096];
	static unsigned char wrk[LZO1X_1_MEM_COMPRESS];
	size_t n = fread(in, 1, sizeof(in), stdin), len = sizeof(out);
	lzo_uint lzo_len = sizeof(out);

	if (argc != 2 || ferror(stdin) || !feof(stdin)) {
		fprintf(stderr, "usage: compress-page lzo|snappy|zstd < PAGE (at most 1 MiB)\n");
		return 2;
	}
	if (!strcmp(argv[1], "lzo")) {
		if (lzo_init() != LZO_E_OK ||
		    lzo1x_1_compress(in, n, out, &lzo_len, wrk) != LZO_E_OK)
			return 1;
		len = lzo_len;
	} else if (!strcmp(argv[1], "snappy")) {
		if (snappy_compress((const char *)in, n, (char *)out, &len) != SNAPPY_OK)
			return 1;
	} else if (!strcmp(argv[1], "zstd")) {
		len = ZSTD_compress(out, sizeof(out), in, n, 1);
		if (ZSTD_isError(len))
			return 1;
	} else {
		fprintf(stderr, "compress-page: unknown method %s\n", argv[1]);
		return 2;
	}
	return fwrite(out, 1, len, stdout) == len ? 0 : 1;
}
