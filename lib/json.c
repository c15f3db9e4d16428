// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * JSON through json-c for every report the library writes (docs/json.md):
 * strings are always valid UTF-8 (a byte that is not part of a valid UTF-8
 * sequence, as in a Latin-1 file name, becomes U+00HH, as btsdumpctl does),
 * addresses are "0x..." strings, documents are written on one line.  Used
 * by report.c, vmreport.c and btsdumpd's error documents; process context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), 0 if there is none. */
static size_t utf8_valid(const unsigned char *p)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* s as valid UTF-8 (malloc'ed), invalid bytes as U+00HH. */
static char *utf8_fix(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(2 * strlen(s) + 1), *o = out;
	size_t n;

	if (!out)
		return NULL;
	while (*p) {
		n = utf8_valid(p);
		if (n) {
			memcpy(o, p, n);
			o += n, p += n;
		} else {		/* U+0080..U+00FF in two bytes */
			*o++ = (char)(0xc0 | *p >> 6);
			*o++ = (char)(0x80 | (*p++ & 0x3f));
		}
	}
	*o = '\0';
	return out;
}

struct json_object *btsdec_json_str(const char *s)
{
	const unsigned char *p;
	struct json_object *o;
	char *fixed;
	size_t n;

	if (!s)
		return NULL;	/* json-c writes NULL as null */
	for (p = (const unsigned char *)s; *p; p += n)
		if (!(n = utf8_valid(p)))
			break;
	if (!*p)
		return json_object_new_string(s);
	fixed = utf8_fix(s);
	if (!fixed)
		return NULL;
	o = json_object_new_string(fixed);
	free(fixed);
	return o;
}

struct json_object *btsdec_json_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

int btsdec_json_write(FILE *out, struct json_object *doc, struct btsdec_err *err)
{
	const char *s;

	if (!doc)
		return btsdec_fail(err, -ENOMEM, "out of memory building the JSON document");
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s) {
		json_object_put(doc);
		return btsdec_fail(err, -ENOMEM, "out of memory writing the JSON document");
	}
	fputs(s, out);
	fputc('\n', out);
	json_object_put(doc);
	return 0;
}

void btsdec_json_string(FILE *out, const char *s)
{
	struct json_object *o = btsdec_json_str(s);

	fputs(o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE) : "null",
	      out);
	json_object_put(o);
}

int btsdec_json_error(FILE *out, const char *why, struct btsdec_err *err)
{
	struct json_object *doc = json_object_new_object();

	if (doc) {
		json_object_object_add(doc, "schema",
				       json_object_new_string(BTSDEC_JSON_SCHEMA_ERROR));
		json_object_object_add(doc, "version",
				       json_object_new_int(BTSDEC_JSON_VERSION));
		json_object_object_add(doc, "error", btsdec_json_str(why));
	}
	return btsdec_json_write(out, doc, err);
}
