// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * JSON through json-c for every report the library writes (docs/json.md):
 * a string that is valid UTF-8 is a JSON string, any other the array of
 * its byte values (lossless, as systemd's JSON), addresses are "0x..."
 * strings, documents are written on one line.  Used
 * by report.c, vmreport.c and btsdumpd's error documents; process context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"
#include "escape.h"

/* A string that is not valid UTF-8 (a Latin-1 file name): the array of its
 * byte values, as systemd writes such a field (docs/json.md "Strings"). */
static struct json_object *json_bytes(const char *s, size_t n)
{
	struct json_object *a = json_object_new_array_ext((int)n);

	for (size_t i = 0; a && i < n; i++)
		if (json_object_array_add(a, json_object_new_int((unsigned char)s[i]))) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

struct json_object *btsdec_json_str(const char *s)
{
	size_t n;

	if (!s)
		return NULL;	/* json-c writes NULL as null */
	n = strlen(s);
	if (btsdec_utf8_valid(s, n))
		return json_object_new_string_len(s, (int)n);
	return json_bytes(s, n);
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
