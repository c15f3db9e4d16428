// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for btsdumpd's text parsers: the store's `meta`
 * (daemon/store.c, read by btsdumpctl), btsdumpd.conf (daemon/config.c) and
 * the hand-off's datagrams (daemon/store.c, read by the service).  All in
 * memory: the file readers only hand these parsers a buffer.
 * meta: whatever parses must survive a format/parse round trip unchanged
 * and hold no raw control character once formatted; config: values stay in
 * range; hand-off: only the handler's keys get in, and what got in is
 * formatted and parsed back unchanged.
 * Input: one selector byte (mod 3: 0 meta, 1 config, 2 hand-off), then the
 * file, or the datagrams, each a 2-byte little-endian length and its bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "handoff.h"
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
		"HOSTNAME", "DUMP_MODE" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

static void check_handoff(const uint8_t *data, size_t size)
{
	struct btsdumpd_meta m = { 0 };
	const char *missing;

	while (size >= 2) {
		size_t len = data[0] | (size_t)data[1] << 8;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		btsdumpd_handoff_field(&m, (const char *)data, len);
		data += len;
		size -= len;
	}
	for (size_t i = 0; i < m.n; i++)
		if (!handoff_key(m.keys[i]) || strlen(m.vals[i]) > (1 << 16))
			__builtin_trap();
	missing = btsdumpd_handoff_missing(&m);
	if (missing && !handoff_key(missing))
		__builtin_trap();
	check_round_trip(&m);	/* what the service would store reads back */
	btsdumpd_meta_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > (1 << 15))
		return 0;
	switch (data[0] % 3) {
	case 0:
		check_meta(data + 1, size - 1);
		break;
	case 1:
		check_config(data + 1, size - 1);
		break;
	default:
		check_handoff(data + 1, size - 1);
	}
	return 0;
}
