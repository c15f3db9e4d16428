// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store's rate limit (RateLimitIntervalSec, RateLimitBurst): one state
 * file under flock, shared by every handler and service instance.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "btsdumpd.h"

/* ---- Rate limit ----------------------------------------------------------
 * STORE/.ratelimit holds "WINDOW_START STORED SUPPRESSED PREV_SUPPRESSED",
 * updated under flock by every crash.  Returns true when this crash is over
 * the burst; *suppressed is then the count in this window, else the count
 * suppressed in the previous window (reported once by the next entry). */
bool btsdumpd_rate_limited(struct btsdumpd_ctx *c, unsigned long long *suppressed)
{
	unsigned long long start = 0, stored = 0, supp = 0, prev = 0;
	unsigned long long now = time(NULL);
	char buf[128];
	bool limited = false;
	ssize_t n;
	int fd;

	*suppressed = 0;
	if (!c->cfg.rate_limit_interval_sec || !c->cfg.rate_limit_burst)
		return false;
	fd = openat(btsdumpd_store_fd(), ".ratelimit", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		btsdumpd_warn("rate limit state: %m; not limiting");
		if (fd >= 0)
			close(fd);
		return false;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%llu %llu %llu %llu", &start, &stored, &supp, &prev) != 4)
		start = stored = supp = prev = 0;
	if (now < start || now - start >= c->cfg.rate_limit_interval_sec) {
		prev += supp;	/* not reported yet: carried until an entry says it */
		start = now;
		stored = supp = 0;
	}
	if (stored >= c->cfg.rate_limit_burst) {
		limited = true;
		*suppressed = ++supp;
	} else {
		stored++;
		*suppressed = prev;
		prev = 0;
	}
	n = snprintf(buf, sizeof(buf), "%llu %llu %llu %llu\n", start, stored, supp, prev);
	if (pwrite(fd, buf, n, 0) != n || ftruncate(fd, n))
		btsdumpd_warn("rate limit state: %m");
	close(fd);
	return limited;
}
