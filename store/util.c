// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small helpers btsdumpd and btsdumpctl share: reads retried on EINTR,
 * whole writes, decimal numbers, signal names, the comm part of an
 * entry's name.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

ssize_t btsdumpd_read_some(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int btsdumpd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= w;
	}
	return 0;
}

int btsdumpd_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

const char *btsdumpd_signal_name(int sig)
{
	static char buf[16];
	const char *abbrev = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

	if (!abbrev) {
		snprintf(buf, sizeof(buf), "%d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}
void btsdumpd_sanitize_comm(const char *comm, char *out)
{
	size_t n = 0;

	for (const char *p = comm ? comm : ""; *p && n < 15; p++) {
		char c = *p;
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';

		out[n++] = ok ? c : '_';
	}
	if (!n)
		strcpy(out, "unknown");
	else
		out[n] = 0;
}
