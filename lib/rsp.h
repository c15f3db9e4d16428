/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gdb's remote serial protocol, the wire part: a byte-at-a-time framer of
 * incoming packets ($data#cs, '}' escapes, acks, ^C), the framing of
 * replies, a growing reply buffer and the hex helpers.  Pure C, no I/O:
 * lib/gdbstub.c serves a core through it, tests/fuzz/fuzz-rsp.c fuzzes it.
 * Errors: negative errno.
 */
#ifndef BTSDEC_RSP_H
#define BTSDEC_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest packet accepted (and announced as PacketSize): payload bytes
 * after unescaping. */
#define BTSDEC_RSP_PACKET_MAX	0x20000

/* Framer state, one per connection. */
enum btsdec_rsp_state {
	BTSDEC_RSP_IDLE,	/* between packets: acks, ^C, noise skipped */
	BTSDEC_RSP_DATA,	/* after '$', collecting the payload */
	BTSDEC_RSP_ESCAPE,	/* after '}' in the payload */
	BTSDEC_RSP_CSUM1,	/* after '#', first checksum digit */
	BTSDEC_RSP_CSUM2,	/* second checksum digit */
};

struct btsdec_rsp_reader {
	enum btsdec_rsp_state state;
	bool overflow;		/* the payload outgrew buf: refused whole */
	uint8_t sum;		/* running checksum of the raw payload */
	uint8_t want;		/* checksum digits read so far */
	size_t len;		/* payload bytes in buf */
	char buf[BTSDEC_RSP_PACKET_MAX + 1];	/* NUL-terminated payload */
};

/* What one byte completed. */
enum btsdec_rsp_event {
	BTSDEC_RSP_NONE = 0,	/* nothing yet */
	BTSDEC_RSP_PACKET,	/* a whole packet: r->buf, r->len */
	BTSDEC_RSP_INTERRUPT,	/* ^C outside a packet */
	BTSDEC_RSP_ACK,		/* '+' */
	BTSDEC_RSP_NACK,	/* '-': resend the last reply */
	BTSDEC_RSP_BAD,		/* a packet with a wrong checksum or too long:
				 * answer '-' (with acks) or an error */
};

void btsdec_rsp_reader_init(struct btsdec_rsp_reader *r);
enum btsdec_rsp_event btsdec_rsp_feed(struct btsdec_rsp_reader *r, uint8_t c);

/* A reply being built: binary-safe, grown on demand. */
struct btsdec_rsp_buf {
	char *p;
	size_t len, cap;
	int err;		/* -ENOMEM once an append failed */
};

void btsdec_rsp_buf_reset(struct btsdec_rsp_buf *b);
void btsdec_rsp_buf_free(struct btsdec_rsp_buf *b);
void btsdec_rsp_put(struct btsdec_rsp_buf *b, const void *p, size_t n);
void btsdec_rsp_puts(struct btsdec_rsp_buf *b, const char *s);
void btsdec_rsp_printf(struct btsdec_rsp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends the bytes as hex digits. */
void btsdec_rsp_put_hex(struct btsdec_rsp_buf *b, const void *p, size_t n);

/* Frames payload as $...#cs into out (escaping $ # } *); 0 or -ENOMEM. */
int btsdec_rsp_frame(struct btsdec_rsp_buf *out, const void *payload, size_t n);

/* Parses hex digits at *p (at least one, at most 16) into *v and moves *p
 * past them; -EINVAL when there is none or the value overflows. */
int btsdec_rsp_hex_u64(const char **p, uint64_t *v);
/* Decodes 2n hex digits at s into out; -EINVAL on a non-hex digit. */
int btsdec_rsp_hex_decode(const char *s, void *out, size_t n);

#endif /* BTSDEC_RSP_H */
