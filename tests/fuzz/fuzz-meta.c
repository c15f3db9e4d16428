// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for btsdumpd's two text parsers: the store's `meta`
 * (daemon/store.c, read by btsdumpctl) and btsdumpd.conf (daemon/config.c).
 * meta: whatever parses must survive a write/read round trip unchanged and
 * hold no raw control character once written; config: values stay in range.
 * Input: one selector byte (even: meta, odd: config), then the file.
 */
#include <fcntl.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dirfd_ < 0) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-meta.XXXXXX");
		if (!mkdtemp(dir) || (dirfd_ = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
	}
	if (!size || size > (1 << 15))
		return 0;
	if (put(data[0] & 1 ? "conf" : "meta", data + 1, size - 1))
		return 0;
	if (data[0] & 1)
		check_config();
	else
		check_meta();
	return 0;
}
