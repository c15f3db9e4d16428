// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one escaping of untrusted bytes for people (lib/escape.h): control
 * bytes and invalid UTF-8 as "\xHH", a backslash as "\\", valid UTF-8 as
 * it is; and its inverse, for tests and readers of escaped text.  Also the
 * one UTF-8 validator (lib/json.c's strings).  Process context.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

size_t btsdec_utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (!n)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool btsdec_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k;

	for (size_t i = 0; i < n; i += k)
		if (!p[i] || !(k = btsdec_utf8_seq(p + i, n - i)))
			return false;
	return true;
}

static size_t esc_hex(unsigned char c, char *out, size_t *len)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\', out[1] = 'x', out[2] = hex[c >> 4], out[3] = hex[c & 15];
	*len = 4;
	return 1;
}

size_t btsdec_escape_step(const char *s, size_t n, unsigned int flags,
			  char *out, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	bool lines = flags & BTSDEC_ESC_LINES;
	size_t k;

	if (*p == '\\' && !lines) {
		out[0] = out[1] = '\\';
		*len = 2;
		return 1;
	}
	if ((*p < 0x20 && !(lines && (*p == '\n' || *p == '\t'))) || *p == 0x7f)
		return esc_hex(*p, out, len);
	k = btsdec_utf8_seq(p, n);
	/* invalid, or a C1 control (U+0080..U+009F: 0xc2 0x80..0x9f) */
	if (!k || (k == 2 && p[0] == 0xc2 && p[1] < 0xa0))
		return esc_hex(*p, out, len);
	memcpy(out, p, k);
	*len = k;
	return k;
}

void btsdec_escape_put_mem(FILE *f, const char *s, size_t n, unsigned int flags)
{
	char e[BTSDEC_ESC_MAX];
	size_t i = 0, len;

	while (i < n) {
		i += btsdec_escape_step(s + i, n - i, flags, e, &len);
		fwrite(e, 1, len, f);
	}
}

void btsdec_escape_put(FILE *f, const char *s, unsigned int flags)
{
	if (s)
		btsdec_escape_put_mem(f, s, strlen(s), flags);
}

const char *btsdec_escape_buf(const char *s, char *buf, size_t len, unsigned int flags)
{
	size_t n = s ? strlen(s) : 0, i = 0, o = 0, k, w;
	char e[BTSDEC_ESC_MAX];

	while (i < n) {
		k = btsdec_escape_step(s + i, n - i, flags, e, &w);
		if (o + w >= len)
			break;
		memcpy(buf + o, e, w);
		o += w, i += k;
	}
	buf[o] = '\0';
	return buf;
}

char *btsdec_escape(const char *s, unsigned int flags)
{
	size_t n = s ? strlen(s) : 0;
	/* every byte at most BTSDEC_ESC_MAX; SIZE_MAX / 4 bytes cannot exist */
	char *buf = s ? malloc(n * BTSDEC_ESC_MAX + 1) : NULL;

	return buf ? (char *)btsdec_escape_buf(s, buf, n * BTSDEC_ESC_MAX + 1, flags) : NULL;
}

void btsdec_escape_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char *msg;

	if (prefix)
		fprintf(f, "%s: ", prefix);
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("(out of memory formatting a message)\n", f);
		return;
	}
	btsdec_escape_put(f, msg, 0);
	free(msg);
	fputc('\n', f);
}

void btsdec_escape_line(FILE *f, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	btsdec_escape_vline(f, prefix, fmt, ap);
	va_end(ap);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int btsdec_unescape(const char *s, char *out, size_t *n)
{
	size_t o = 0;
	int hi, lo;

	while (*s) {
		if (*s != '\\') {
			out[o++] = *s++;
		} else if (s[1] == '\\') {
			out[o++] = '\\';
			s += 2;
		} else if (s[1] == 'x' && (hi = hex_digit(s[2])) >= 0 &&
			   (lo = hex_digit(s[3])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			s += 4;
		} else {
			return -EINVAL;
		}
	}
	*n = o;
	return 0;
}
