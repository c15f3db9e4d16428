// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Vacuum (docs/btsdumpd.md "Limits"): MaxUse and KeepFree applied to the
 * store, the cores of the oldest entries first, then whole entries; and
 * the .#ID directories a dead handler left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

int btsdumpd_vacuum(struct btsdumpd_ctx *c, const char *keep)
{
	struct btsdumpd_entry *e = NULL;
	uint64_t total = 0, max_use, keep_free, avail, f;
	struct statvfs v;
	size_t n = 0, i;
	int lock, ret, pass, store_fd;

	if ((ret = btsdumpd_store_open(c)))
		return ret;
	store_fd = btsdumpd_store_fd();
	lock = openat(store_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) || fstatvfs(store_fd, &v)) {
		ret = -errno;
		goto out;
	}
	remove_stale(store_fd);
	max_use = btsdumpd_size_resolve(&c->cfg.max_use, btsdumpd_fs_size(&v));
	keep_free = v.f_blocks ? btsdumpd_size_resolve(&c->cfg.keep_free, btsdumpd_fs_size(&v)) : 0;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if ((ret = btsdumpd_store_list(c->store, &e, &n)))
		goto out;
	for (i = 0; i < n; i++)
		total += e[i].bytes;
	/* first the cores of the oldest entries, then whole entries */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && (total > max_use || avail < keep_free); i++) {
			if (keep && !strcmp(e[i].id, keep))
				continue;
			if (pass == 0) {
				f = vacuum_core(store_fd, &e[i], total > max_use ? "vacuum: MaxUse" :
						"vacuum: KeepFree");
			} else {
				f = e[i].bytes;
				btsdumpd_entry_remove(e[i].id);
			}
			if (f)
				btsdumpd_log(LOG_INFO, "vacuum: %s %s (%llu bytes)",
					     pass ? "removed entry" : "removed the core of",
					     e[i].id, (unsigned long long)f);
			total -= f < total ? f : total;
			avail += f;
			if (pass == 0)
				e[i].bytes -= f < e[i].bytes ? f : e[i].bytes;
		}
	btsdumpd_entries_free(e, n);
out:
	if (lock >= 0)
		close(lock);
	return ret;
}

