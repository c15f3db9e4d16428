// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for lib/escape.c, the escaper of everything a person
 * reads.  Properties, for any bytes: the escaped text holds no control byte
 * (C0, DEL, C1) and is valid UTF-8; unescaping it gives the input back; the
 * buffer form is a prefix of the whole; with BTSDEC_ESC_LINES only newline
 * and tab pass raw.  Input: the bytes, NULs included.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* No control byte but those `keep` lets pass, no C1, valid UTF-8. */
static void check_safe(const char *s, size_t n, const char *keep)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 && !strchr(keep, p[i])) || p[i] == 0x7f ||
		    (p[i] == 0xc2 && i + 1 < n && p[i + 1] < 0xa0))
			__builtin_trap();
	if (!btsdec_utf8_valid(s, n))
		__builtin_trap();
}

static char *escaped(const uint8_t *data, size_t size, unsigned int flags, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	btsdec_escape_put_mem(f, (const char *)data, size, flags);
	if (fclose(f))
		abort();
	return buf;
}

/* The C-string forms: the first NUL ends the input. */
static void check_cstring(const uint8_t *data, size_t size, const char *whole)
{
	char *s = strndup((const char *)data, size), buf[64];
	char *e = btsdec_escape(s, 0);
	size_t n = strlen(s);

	if (!e || strncmp(e, whole, strlen(e)) || (n == size && strcmp(e, whole)))
		__builtin_trap();
	btsdec_escape_buf(s, buf, sizeof(buf), 0);
	if (strncmp(buf, e, strlen(buf)) || strlen(buf) >= sizeof(buf))
		__builtin_trap();
	free(e);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len, n;
	char *e = escaped(data, size, 0, &len), *back;

	check_safe(e, len, "");
	back = malloc(len + 1);
	if (!back || btsdec_unescape(e, back, &n) || n != size || memcmp(back, data, size))
		__builtin_trap();
	check_cstring(data, size, e);
	free(back);
	free(e);
	e = escaped(data, size, BTSDEC_ESC_LINES, &len);
	check_safe(e, len, "\n\t");
	free(e);
	return 0;
}
