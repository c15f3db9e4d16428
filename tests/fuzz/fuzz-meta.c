// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for btsdumpd's text parsers: the store's `meta`
 * (daemon/store.c, read by btsdumpctl), btsdumpd.conf (daemon/config.c) and
 * the hand-off's datagrams (daemon/store.c, read by the service).
 * meta: whatever parses must survive a write/read round trip unchanged and
 * hold no raw control character once written; config: values stay in range;
 * hand-off: only the handler's keys get in, and what got in is written and
 * read back unchanged.
 * Input: one selector byte (mod 3: 0 meta, 1 config, 2 hand-off), then the
 * file, or the datagrams, each a 2-byte little-endian length and its bytes.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int dirfd_ = -1;
static char dir[64];

static int put(const char *name, const uint8_t *data, size_t size)
{
	int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, data, size) == (ssize_t)size;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static void check_meta(void)
{
	struct btsdumpd_meta m = { 0 }, back = { 0 };
	char buf[1 << 16];
	ssize_t n;
	int fd;

	if (btsdumpd_meta_read_at(dirfd_, "meta", &m))
		return;
	fd = openat(dirfd_, "meta2", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || btsdumpd_meta_write_fd(fd, &m))
		__builtin_trap();
	n = pread(fd, buf, sizeof(buf), 0);
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
			__builtin_trap();
	close(fd);
	if (btsdumpd_meta_read_at(dirfd_, "meta2", &back) || back.n != m.n)
		__builtin_trap();
	for (size_t i = 0; i < m.n; i++)
		if (strcmp(m.keys[i], back.keys[i]) || strcmp(m.vals[i], back.vals[i]))
			__builtin_trap();
	btsdumpd_meta_free(&m);
	btsdumpd_meta_free(&back);
}

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void check_config(void)
{
	struct btsdumpd_config c;
	char path[128];

	snprintf(path, sizeof(path), "%s/conf", dir);
	btsdumpd_config_defaults(&c);
	btsdumpd_config_load(&c, path, quiet);
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
	int fd;

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
	fd = openat(dirfd_, "meta", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || btsdumpd_meta_write_fd(fd, &m))
		__builtin_trap();
	close(fd);
	btsdumpd_meta_free(&m);
	check_meta();		/* what the service would store reads back */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dirfd_ < 0) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-meta.XXXXXX");
		if (!mkdtemp(dir) || (dirfd_ = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
	}
	if (!size || size > (1 << 15))
		return 0;
	switch (data[0] % 3) {
	case 0:
		if (!put("meta", data + 1, size - 1))
			check_meta();
		break;
	case 1:
		if (!put("conf", data + 1, size - 1))
			check_config();
		break;
	default:
		check_handoff(data + 1, size - 1);
	}
	return 0;
}
