// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Vacuum (docs/btsdumpd.md "Limits"): MaxUse and KeepFree applied to the
 * store by removing the cores of the oldest entries; whole entries (their
 * trace reports) only while the store's own trails exceed MaxUse, never
 * for space something else took; and the .#ID directories a dead handler
 * left.  Runs after each crash (collect.c) and for btsdumpd --vacuum.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "btsdumpd.h"
#include "entries.h"

#define STALE_SEC	3600	/* a .#ID this old is a handler that died */
#define SHORT_FLAG	".vacuum-short"	/* the limits were not met: logged */

static void remove_stale(int store_fd)
{
	int fd = dup(store_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".#", 2) &&
		    !fstatat(store_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISDIR(st.st_mode) && time(NULL) - st.st_mtime > STALE_SEC) {
			btsdumpd_log(LOG_NOTICE, "removing %s, left by a handler that died",
				     de->d_name);
			btsdumpd_entry_remove(de->d_name);
		}
	closedir(d);
}

/* Drops the core of entry e; returns the bytes freed. */
static uint64_t vacuum_core(int store_fd, struct btsdumpd_entry *e, const char *why)
{
	const char *file = btsdumpd_meta_get(&e->meta, "CORE_FILE");
	int fd = openat(store_fd, e->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	uint64_t freed = 0;
	struct stat st;
	int mfd;

	if (fd < 0 || !file || strchr(file, '/'))
		goto out;
	if (fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) || unlinkat(fd, file, 0))
		goto out;
	freed = st.st_size;
	btsdumpd_meta_set(&e->meta, "CORE", "dropped");
	btsdumpd_meta_set(&e->meta, "CORE_REASON", why);
	btsdumpd_meta_set(&e->meta, "CORE_FILE", "");
	mfd = openat(fd, "meta.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (mfd >= 0) {
		/* same mode and ACL as the meta it replaces */
		if (!btsdumpd_meta_write_fd(mfd, &e->meta) &&
		    !fstatat(fd, BTSDUMPD_META, &st, 0) && !fchmod(mfd, st.st_mode & 07777))
			renameat(fd, "meta.tmp", fd, BTSDUMPD_META);
		close(mfd);
		unlinkat(fd, "meta.tmp", 0);
	}
out:
	if (fd >= 0)
		close(fd);
	return freed;
}

/* The size of entry e's stored core (0: none). */
static uint64_t core_bytes(int store_fd, const struct btsdumpd_entry *e)
{
	const char *file = btsdumpd_meta_get(&e->meta, "CORE_FILE");
	char path[PATH_MAX];
	struct stat st;

	if (!file || !*file || strchr(file, '/'))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", e->id, file);
	return fstatat(store_fd, path, &st, AT_SYMLINK_NOFOLLOW) ? 0 : st.st_size;
}

/* The store's use against its limits, as the vacuum goes. */
struct usage {
	uint64_t total;		/* bytes of the store's entries */
	uint64_t pinned;	/* of which the new crash's core, never removed */
	uint64_t max_use, keep_free, avail;
};

static bool over(const struct usage *u)
{
	return u->total > u->max_use || u->avail < u->keep_free;
}

static void freed(struct usage *u, uint64_t f)
{
	u->total -= f < u->total ? f : u->total;
	u->avail += f;
}

/* Pass 1: the cores of the oldest entries, never keep's. */
static void vacuum_cores(int store_fd, struct btsdumpd_entry *e, size_t n,
			 const char *keep, struct usage *u)
{
	uint64_t f;

	for (size_t i = 0; i < n && over(u); i++) {
		if (keep && !strcmp(e[i].id, keep))
			continue;
		f = vacuum_core(store_fd, &e[i], u->total > u->max_use ? "vacuum: MaxUse" :
				"vacuum: KeepFree");
		if (!f)
			continue;
		btsdumpd_log(LOG_INFO, "vacuum: removed the core of %s (%llu bytes)", e[i].id,
			     (unsigned long long)f);
		freed(u, f);
		e[i].bytes -= f < e[i].bytes ? f : e[i].bytes;
	}
}

/* Pass 2: whole entries (their trails), oldest first, never keep's, and
 * only while the trails alone are over MaxUse: neither a filesystem that
 * something else filled (KeepFree) nor the new crash's core costs one. */
static void vacuum_trails(struct btsdumpd_entry *e, size_t n, const char *keep,
			  struct usage *u)
{
	for (size_t i = 0; i < n && u->total - u->pinned > u->max_use; i++) {
		if ((keep && !strcmp(e[i].id, keep)) || !e[i].bytes)
			continue;
		btsdumpd_entry_remove(e[i].id);
		btsdumpd_log(LOG_NOTICE, "vacuum: MaxUse: removed entry %s, its trace "
			     "report included (%llu bytes)", e[i].id,
			     (unsigned long long)e[i].bytes);
		freed(u, e[i].bytes);
	}
}

/* Limits the store cannot meet are logged once, when they first are not
 * met (STORE/.vacuum-short marks that), not at every crash after. */
static void note_short(int store_fd, const struct usage *u)
{
	int fd;

	if (!over(u)) {
		if (!unlinkat(store_fd, SHORT_FLAG, 0))
			btsdumpd_log(LOG_INFO, "vacuum: MaxUse and KeepFree met again");
		return;
	}
	fd = openat(store_fd, SHORT_FLAG, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return;		/* logged before (EEXIST), or cannot say so twice */
	close(fd);
	btsdumpd_log(LOG_WARNING, "vacuum: the store cannot meet its limits: %llu bytes free "
		     "(KeepFree=%llu), store %llu bytes (MaxUse=%llu) with no core left to "
		     "remove; every trace report is kept",
		     (unsigned long long)u->avail, (unsigned long long)u->keep_free,
		     (unsigned long long)u->total, (unsigned long long)u->max_use);
}

int btsdumpd_vacuum(struct btsdumpd_ctx *c, const char *keep)
{
	struct btsdumpd_entry *e = NULL;
	struct usage u = { 0 };
	struct statvfs v;
	size_t n = 0, i;
	int lock, ret, store_fd;

	if ((ret = btsdumpd_store_open(c)))
		return ret;
	store_fd = btsdumpd_store_fd();
	lock = openat(store_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) || fstatvfs(store_fd, &v)) {
		ret = -errno;
		goto out;
	}
	remove_stale(store_fd);
	u.max_use = btsdumpd_size_resolve(&c->cfg.max_use, btsdumpd_fs_size(&v));
	u.keep_free = v.f_blocks ? btsdumpd_size_resolve(&c->cfg.keep_free,
							btsdumpd_fs_size(&v)) : 0;
	u.avail = (uint64_t)v.f_bavail * v.f_frsize;
	if ((ret = btsdumpd_store_list(c->store, &e, &n)))
		goto out;
	for (i = 0; i < n; i++) {
		u.total += e[i].bytes;
		if (keep && !strcmp(e[i].id, keep))
			u.pinned = core_bytes(store_fd, &e[i]);
	}
	vacuum_cores(store_fd, e, n, keep, &u);
	vacuum_trails(e, n, keep, &u);
	note_short(store_fd, &u);
	btsdumpd_entries_free(e, n);
out:
	if (lock >= 0)
		close(lock);
	return ret;
}
