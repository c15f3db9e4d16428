// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store's rate limit (RateLimitIntervalSec, RateLimitBurst): one state
 * file under flock, shared by every handler and service instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "btsdumpd.h"

/*
 * STORE/.ratelimit, a regular file of its own: anything else there (a
 * symlink, a directory, a hard link to another file) would turn the limit
 * off or write elsewhere; it is replaced, and the log says so.
 */
static int open_state(void)
{
	int store = btsdumpd_store_fd(), fd, tries;
	struct stat st;

	for (tries = 0; tries < 2; tries++) {
		fd = openat(store, ".ratelimit", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
			    O_NONBLOCK, 0600);
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1)
			return fd;
		if (fd < 0 && errno != ELOOP && errno != EISDIR && errno != ENXIO &&
		    errno != EWOULDBLOCK)
			return -1;
		if (fd >= 0)
			close(fd);
		btsdumpd_warn("rate limit state: .ratelimit in the store is not a file of its own "
			      "(a symlink, a link or a directory): replaced");
		if (unlinkat(store, ".ratelimit", 0) && unlinkat(store, ".ratelimit", AT_REMOVEDIR))
			return -1;
	}
	return -1;
}

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
	fd = open_state();
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
