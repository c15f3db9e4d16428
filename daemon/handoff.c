// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The service side of the hand-off's datagrams (docs/btsdumpd.md "The
 * hand-off"): which KEY=value fields it takes, which it needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handoff.h"
#include "util.h"

int btsdumpd_handoff_field(struct btsdumpd_meta *m, const char *buf, size_t len)
{
	static const char *const keys[] = { "PID", "UID", "GID", "SIGNAL",
		"SIGNAL_NAME", "TIMESTAMP", "COMM", "EXE", "CMDLINE", "CGROUP",
		"HOSTNAME", "DUMP_MODE" };
	const char *eq = memchr(buf, '=', len);
	size_t i, klen;

	if (!eq || memchr(buf, '\0', len))
		return -EBADMSG;
	klen = eq - buf;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i]) == klen && !memcmp(buf, keys[i], klen)) {
			char *val = strndup(eq + 1, len - klen - 1);
			int ret = val ? btsdumpd_meta_set(m, keys[i], val) : -ENOMEM;

			free(val);
			return ret;
		}
	}
	return 0;
}

const char *btsdumpd_handoff_missing(const struct btsdumpd_meta *m)
{
	static const char *const need[] = { "PID", "UID", "GID", "SIGNAL",
		"TIMESTAMP" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (btsdumpd_parse_u64(btsdumpd_meta_get(m, need[i]), &v))
			return need[i];
	return NULL;
}
