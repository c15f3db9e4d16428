/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One hex digit's value, either case, for the parsers that take both:
 * lib/rsp.c (gdb's packets) and store/meta.c (the store's meta values).
 * (lib/escape.c's inverse takes only the lower case it writes, so that
 * an escaped text has one spelling.)  Header only; any context.
 */
#ifndef BTSDEC_HEX_H
#define BTSDEC_HEX_H

/* 0-15 for 0-9, a-f, A-F; -1 for any other byte (c as unsigned char). */
static inline int btsdec_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* BTSDEC_HEX_H */
