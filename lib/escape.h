/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one escaping of untrusted bytes (paths, symbol names, meta values)
 * for people: every text report, btsdumpctl's tables, btsdumpd's log lines
 * and messages (docs/btsdump.md "Output safety").  Pure C, no allocation
 * but btsdec_escape(); used by lib/, tools/, daemon/ and crash-ext/.
 */
#ifndef BTSDEC_ESCAPE_H
#define BTSDEC_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Flags of the escapers. */
enum {
	/* Text that its writer already escaped (a stored report, a rendered
	 * trail): newlines, tabs and backslashes pass, any other control byte
	 * or invalid UTF-8 is still escaped.  Safe, but not reversible. */
	BTSDEC_ESC_LINES = 1 << 0,
};

/* Longest escape of one input byte: "\xHH". */
#define BTSDEC_ESC_MAX	4

/* Length of the valid UTF-8 sequence at p[0..n) (RFC 3629: shortest form,
 * no surrogates, at most U+10FFFF), 0 if none starts there. */
size_t btsdec_utf8_seq(const unsigned char *p, size_t n);
/* True if s[0..n) is valid UTF-8 with no NUL. */
bool btsdec_utf8_valid(const char *s, size_t n);

/* One step of the escaping of s[0..n) (n >= 1): writes to out (at least
 * BTSDEC_ESC_MAX bytes) the text of the bytes at s, returns how many input
 * bytes it took (a whole UTF-8 character, or one byte) and sets *len to
 * what it wrote.  A control byte (C0, DEL, the C1 characters) and a byte
 * that is not part of valid UTF-8 become "\xHH" (lower-case hex), a
 * backslash "\\"; everything else passes. */
size_t btsdec_escape_step(const char *s, size_t n, unsigned int flags,
			  char *out, size_t *len);

/* s escaped onto f; NULL writes nothing. */
void btsdec_escape_put(FILE *f, const char *s, unsigned int flags);
/* s[0..n) escaped onto f (NUL bytes too: "\x00"). */
void btsdec_escape_put_mem(FILE *f, const char *s, size_t n, unsigned int flags);
/* s escaped into buf (len > 0), cut before the first escape that does not
 * fit, NUL-terminated; returns buf.  NULL gives "". */
const char *btsdec_escape_buf(const char *s, char *buf, size_t len, unsigned int flags);
/* s escaped, malloc'ed; NULL if out of memory (or s is NULL). */
char *btsdec_escape(const char *s, unsigned int flags);

/* One line onto f: "PREFIX: " (prefix may be NULL: none), the text fmt
 * makes escaped as a whole (a newline in a value shows as "\x0a"), then a
 * newline.  Every message a tool prints about a core or a store. */
void btsdec_escape_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
void btsdec_escape_line(FILE *f, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The inverse of escaping without flags: "\\" and "\xHH" back to bytes.
 * Writes at most strlen(s) bytes to out, sets *n; -EINVAL for any other
 * backslash sequence. */
int btsdec_unescape(const char *s, char *out, size_t *n);

#endif
