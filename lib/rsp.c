// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gdb's remote serial protocol, the wire part (rsp.h): frames incoming
 * packets one byte at a time, whatever the peer sends (a hostile stream
 * never overruns the buffer: an overlong packet is refused whole), frames
 * replies and keeps them in a growing buffer.  No I/O; lib/gdbstub.c owns
 * the connection.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "rsp.h"

void btsdec_rsp_reader_init(struct btsdec_rsp_reader *r)
{
	r->state = BTSDEC_RSP_IDLE;
	r->overflow = false;
	r->len = 0;
	r->buf[0] = '\0';
}

static enum btsdec_rsp_event idle(struct btsdec_rsp_reader *r, uint8_t c)
{
	switch (c) {
	case '$':
		r->state = BTSDEC_RSP_DATA;
		r->overflow = false;
		r->sum = 0;
		r->len = 0;
		return BTSDEC_RSP_NONE;
	case 0x03:
		return BTSDEC_RSP_INTERRUPT;
	case '+':
		return BTSDEC_RSP_ACK;
	case '-':
		return BTSDEC_RSP_NACK;
	default:
		return BTSDEC_RSP_NONE;	/* noise between packets */
	}
}

static void payload(struct btsdec_rsp_reader *r, uint8_t c)
{
	if (r->len < BTSDEC_RSP_PACKET_MAX)
		r->buf[r->len++] = (char)c;
	else
		r->overflow = true;
}

/* The checksum's digits: the packet stands when both are hex and match. */
static enum btsdec_rsp_event checksum(struct btsdec_rsp_reader *r, uint8_t c)
{
	int v = btsdec_hex_digit(c);

	if (r->state == BTSDEC_RSP_CSUM1) {
		r->want = v < 0 ? 0 : (uint8_t)(v << 4);
		r->overflow |= v < 0;
		r->state = BTSDEC_RSP_CSUM2;
		return BTSDEC_RSP_NONE;
	}
	r->state = BTSDEC_RSP_IDLE;
	r->buf[r->len] = '\0';
	if (v < 0 || r->overflow || (uint8_t)(r->want | v) != r->sum)
		return BTSDEC_RSP_BAD;
	return BTSDEC_RSP_PACKET;
}

enum btsdec_rsp_event btsdec_rsp_feed(struct btsdec_rsp_reader *r, uint8_t c)
{
	switch (r->state) {
	case BTSDEC_RSP_IDLE:
		return idle(r, c);
	case BTSDEC_RSP_DATA:
		if (c == '#') {
			r->state = BTSDEC_RSP_CSUM1;
			return BTSDEC_RSP_NONE;
		}
		r->sum += c;
		if (c == '}')
			r->state = BTSDEC_RSP_ESCAPE;
		else
			payload(r, c);
		return BTSDEC_RSP_NONE;
	case BTSDEC_RSP_ESCAPE:
		r->sum += c;
		payload(r, c ^ 0x20);
		r->state = BTSDEC_RSP_DATA;
		return BTSDEC_RSP_NONE;
	default:
		return checksum(r, c);
	}
}

void btsdec_rsp_buf_reset(struct btsdec_rsp_buf *b)
{
	b->len = 0;
	b->err = 0;
}

void btsdec_rsp_buf_free(struct btsdec_rsp_buf *b)
{
	free(b->p);
	*b = (struct btsdec_rsp_buf){ 0 };
}

static bool reserve(struct btsdec_rsp_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (b->err)
		return false;
	if (n <= b->cap - b->len)
		return true;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return false;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void btsdec_rsp_put(struct btsdec_rsp_buf *b, const void *p, size_t n)
{
	if (n && reserve(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

void btsdec_rsp_puts(struct btsdec_rsp_buf *b, const char *s)
{
	btsdec_rsp_put(b, s, strlen(s));
}

void btsdec_rsp_printf(struct btsdec_rsp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void btsdec_rsp_put_hex(struct btsdec_rsp_buf *b, const void *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *s = p;

	if (!reserve(b, 2 * n))
		return;
	for (size_t i = 0; i < n; i++) {
		b->p[b->len++] = digits[s[i] >> 4];
		b->p[b->len++] = digits[s[i] & 15];
	}
}

int btsdec_rsp_frame(struct btsdec_rsp_buf *out, const void *payload, size_t n)
{
	const uint8_t *s = payload;
	uint8_t sum = 0;
	char tail[4];

	btsdec_rsp_buf_reset(out);
	btsdec_rsp_put(out, "$", 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		if (c == '$' || c == '#' || c == '}' || c == '*') {
			btsdec_rsp_put(out, "}", 1);
			sum += '}';
			c ^= 0x20;
		}
		btsdec_rsp_put(out, &c, 1);
		sum += c;
	}
	snprintf(tail, sizeof(tail), "#%02x", sum);
	btsdec_rsp_put(out, tail, 3);
	return out->err;
}

int btsdec_rsp_hex_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d, n = 0;

	while ((d = btsdec_hex_digit((unsigned char)*s)) >= 0) {
		if (++n > 16)
			return -EINVAL;
		x = x << 4 | (uint64_t)d;
		s++;
	}
	if (!n)
		return -EINVAL;
	*v = x;
	*p = s;
	return 0;
}

int btsdec_rsp_hex_decode(const char *s, void *out, size_t n)
{
	uint8_t *o = out;

	for (size_t i = 0; i < n; i++) {
		int hi = btsdec_hex_digit((unsigned char)s[2 * i]), lo;

		if (hi < 0 || (lo = btsdec_hex_digit((unsigned char)s[2 * i + 1])) < 0)
			return -EINVAL;
		o[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
