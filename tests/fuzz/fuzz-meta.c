// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for btsdumpd's text parsers: the store's `meta`
 * (store/meta.c, read by btsdumpctl), btsdumpd.conf (daemon/config.c),
 * the hand-off's datagrams and the analysis child's result (store/crash.c,
 * read by the service).  All in memory: the file readers only hand these
 * parsers a buffer.
 * meta: whatever parses must survive a format/parse round trip unchanged
 * and hold no raw control character once formatted; config: values stay in
 * range; hand-off: only the handler's keys get in, what got in is
 * formatted and parsed back unchanged, and sent again it is the same
 * crash; analysis: what parses, stored, parses back the same; journal
 * (btsdumpctl -D, store/journal.c): a crash entry's id is its ID, its
 * meta stores and reads back.
 * Input: one selector byte (mod 5: 0 meta, 1 config, 2 hand-off,
 * 3 analysis, 4 journal), then the file, or the datagrams (journal
 * fields), each a 2-byte little-endian length and its bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "crash.h"
#include "entries.h"
#include "journal.h"
#include "meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* m formatted, then parsed back: the same pairs, no raw control byte. */
static void check_round_trip(const struct btsdumpd_meta *m)
{
	struct btsdumpd_meta back = { 0 };
	size_t len;
	char *buf;

	if (btsdumpd_meta_format(m, &buf, &len))
		__builtin_trap();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
			__builtin_trap();
	if (btsdumpd_meta_parse(buf, len, &back) || back.n != m->n)
		__builtin_trap();
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], back.keys[i]) || strcmp(m->vals[i], back.vals[i]))
			__builtin_trap();
	free(buf);
	btsdumpd_meta_free(&back);
}

static void check_meta(const uint8_t *data, size_t size)
{
	struct btsdumpd_meta m;

	if (btsdumpd_meta_parse((const char *)data, size, &m))
		return;
	check_round_trip(&m);
	btsdumpd_meta_free(&m);
}

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void check_config(const uint8_t *data, size_t size)
{
	struct btsdumpd_config c;

	btsdumpd_config_defaults(&c);
	btsdumpd_config_parse(&c, "fuzz.conf", (const char *)data, size, quiet);
	if (c.analyze_timeout_sec < 1 || c.analyze_timeout_sec > 3600 ||
	    c.journal_branches > 256 || c.max_use.percent > 100 ||
	    c.keep_free.percent > 100 || !memchr(c.analyze_user, 0, sizeof(c.analyze_user)))
		__builtin_trap();
}

static bool handoff_key(const char *k)
{
	static const char *const keys[] = { "PID", "UID", "GID", "SIGNAL",
		"SIGNAL_NAME", "TIMESTAMP", "COMM", "EXE", "CMDLINE", "CGROUP",
		"HOSTNAME", "DUMP_MODE", "VERSION", "KIND" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

/* Two metas with the same pairs in the same order. */
static void check_same(const struct btsdumpd_meta *a, const struct btsdumpd_meta *b)
{
	if (a->n != b->n)
		__builtin_trap();
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->keys[i], b->keys[i]) || strcmp(a->vals[i], b->vals[i]))
			__builtin_trap();
}

/* The next of the datagrams (a 2-byte little-endian length, then its
 * bytes, cut at the input's end): its bytes and *len, or NULL at the end. */
static const char *next_datagram(const uint8_t **data, size_t *size, size_t *len)
{
	const char *d;

	if (*size < 2)
		return NULL;
	*len = (*data)[0] | (size_t)(*data)[1] << 8;
	*data += 2;
	*size -= 2;
	if (*len > *size)
		*len = *size;
	d = (const char *)*data;
	*data += *len;
	*size -= *len;
	return d;
}

static void check_handoff(const uint8_t *data, size_t size)
{
	struct btsdumpd_crash cr, back;
	struct btsdumpd_meta m, mb;
	const char *missing, *d;
	char **fields;
	size_t len;

	btsdumpd_crash_init(&cr);
	while ((d = next_datagram(&data, &size, &len)))
		btsdumpd_crash_handoff_field(&cr, d, len);
	if (btsdumpd_crash_to_meta(&cr, NULL, NULL, &m))
		__builtin_trap();
	for (size_t i = 0; i < m.n; i++)
		if (!handoff_key(m.keys[i]) || strlen(m.vals[i]) > (1 << 16))
			__builtin_trap();
	missing = btsdumpd_crash_missing(&cr);
	if (missing && !handoff_key(missing))
		__builtin_trap();
	check_round_trip(&m);	/* what the service would store reads back */
	/* what the handler would send of it, received again: the same crash */
	if (btsdumpd_crash_handoff_fields(&cr, &fields))
		__builtin_trap();
	btsdumpd_crash_init(&back);
	for (size_t i = 0; fields[i]; i++)
		if (btsdumpd_crash_handoff_field(&back, fields[i], strlen(fields[i])))
			__builtin_trap();
	if (btsdumpd_crash_to_meta(&back, NULL, NULL, &mb))
		__builtin_trap();
	check_same(&m, &mb);
	btsdumpd_fields_free(fields);
	btsdumpd_meta_free(&m);
	btsdumpd_meta_free(&mb);
	btsdumpd_crash_free(&cr);
	btsdumpd_crash_free(&back);
}

/* The analysis child's result: parsed (checked), it goes into meta, and
 * that meta's text parses back to the same findings. */
static void check_analysis(const uint8_t *data, size_t size)
{
	struct btsdumpd_crash cr, back;
	struct btsdumpd_meta m, mb;
	size_t len;
	char *buf;

	btsdumpd_crash_init(&cr);
	if (btsdumpd_analysis_parse((const char *)data, size, &cr.an))
		return;
	if (!cr.an.trace || btsdumpd_crash_to_meta(&cr, NULL, NULL, &m) ||
	    btsdumpd_meta_format(&m, &buf, &len))
		__builtin_trap();
	btsdumpd_crash_init(&back);
	if (btsdumpd_analysis_parse(buf, len, &back.an) ||
	    btsdumpd_crash_to_meta(&back, NULL, NULL, &mb))
		__builtin_trap();
	check_same(&m, &mb);
	free(buf);
	btsdumpd_meta_free(&m);
	btsdumpd_meta_free(&mb);
	btsdumpd_crash_free(&cr);
	btsdumpd_crash_free(&back);
}

/* Journal fields from another host (btsdumpctl -D): an entry or not; a
 * crash entry's id is its ID, and its meta stores and reads back. */
static void check_journal(const uint8_t *data, size_t size)
{
	struct btsdumpd_entry e = { 0 };
	const char *d;
	size_t len;
	int r;

	while ((d = next_datagram(&data, &size, &len)))
		if (btsdumpd_entry_journal_field(&e, d, len))
			__builtin_trap();
	r = btsdumpd_entry_journal_done(&e);
	if (r < 0 || (r == 0 && (e.id || e.meta.n)))
		__builtin_trap();
	if (r == 1) {
		if (strcmp(e.id, btsdumpd_meta_get(&e.meta, "ID")))
			__builtin_trap();
		check_round_trip(&e.meta);
		free(e.id);
		btsdumpd_meta_free(&e.meta);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > (1 << 15))
		return 0;
	switch (data[0] % 5) {
	case 0:
		check_meta(data + 1, size - 1);
		break;
	case 1:
		check_config(data + 1, size - 1);
		break;
	case 2:
		check_handoff(data + 1, size - 1);
		break;
	case 3:
		check_analysis(data + 1, size - 1);
		break;
	default:
		check_journal(data + 1, size - 1);
	}
	return 0;
}
