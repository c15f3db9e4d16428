// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's side of the store (docs/btsdumpd.md "The store"): opening it,
 * an entry's transaction (a hidden .#ID directory, its files' modes and
 * ACLs, meta written last from the typed crash, then the rename), and
 * removing an entry.  The store's descriptor lives here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "btsdumpd.h"
#include "acl.h"
#include "entries.h"

static int store_fd = -1;

/*
 * A store others may write is one where any user can plant, replace or
 * remove entries and the rate limit's state: said at every crash (the
 * crash is stored all the same: nothing is lost for it).  The sticky
 * bit does not help: the entries' names are predictable.
 */
static void store_check_mode(const char *path, int fd)
{
	struct stat st;

	if (!fstat(fd, &st) && (st.st_mode & (S_IWGRP | S_IWOTH)))
		btsdumpd_warn("the store %s is writable by %s (mode %04o): any user can plant or "
			      "remove entries; make it 0755, owned by root", path,
			      st.st_mode & S_IWOTH ? "others" : "its group", st.st_mode & 07777);
}

int btsdumpd_store_open(struct btsdumpd_ctx *c)
{
	if (store_fd >= 0)
		return 0;
	if (!mkdir(c->store, 0755))
		chmod(c->store, 0755);	/* listable; entries protect themselves */
	else if (errno != EEXIST)
		return -errno;
	store_fd = open(c->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (store_fd < 0)
		return -errno;
	store_check_mode(c->store, store_fd);
	return 0;
}

int btsdumpd_store_fd(void)
{
	return store_fd;
}

uint64_t btsdumpd_fs_size(const struct statvfs *v)
{
	return (uint64_t)v->f_blocks * v->f_frsize;
}

int btsdumpd_entry_begin(struct btsdumpd_ctx *c, const char *id_base, int *dirfd)
{
	char tmp[sizeof(c->id) + 4];
	int k, ret = btsdumpd_store_open(c);

	c->acl = NULL;
	if (ret)
		return ret;
	for (k = 0; k < 1000; k++) {
		if (k)
			snprintf(c->id, sizeof(c->id), "%s.%d", id_base, k);
		else
			snprintf(c->id, sizeof(c->id), "%s", id_base);
		if (!faccessat(store_fd, c->id, F_OK, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(tmp, sizeof(tmp), ".#%s", c->id);
		if (mkdirat(store_fd, tmp, 0700)) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		*dirfd = openat(store_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (*dirfd < 0)
			return -errno;
		return 0;
	}
	return -EEXIST;
}

/* Mode and ACL of one file (or the directory) of an entry. */
static int protect(int fd, uid_t reader, bool dir)
{
	if (fchmod(fd, dir ? 0750 : 0640))
		return -errno;
	return reader ? btsdumpd_acl_grant_user(fd, reader, dir) : 0;
}

static int protect_files(int dirfd, uid_t reader)
{
	static const char *const files[] = { BTSDUMPD_CORE_FILE, BTSDUMPD_SPOOL_FILE,
					      BTSDUMPD_REPORT_TXT, BTSDUMPD_REPORT_JSON,
					      BTSDUMPD_LBR_NOTE };
	int ret = 0, r, fd;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fd = openat(dirfd, files[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		r = protect(fd, reader, false);
		ret = ret ? ret : r;
		close(fd);
	}
	return ret;
}

/* meta, the crash turned into text here, is written last, then the
 * directory gets its final name. */
int btsdumpd_entry_commit(struct btsdumpd_ctx *c, int dirfd, uid_t reader)
{
	char tmp[sizeof(c->id) + 4];
	struct btsdumpd_meta m;
	int ret, fd;

	ret = protect_files(dirfd, reader);
	if (!ret)
		ret = protect(dirfd, reader, true);
	c->acl = ret == -EOPNOTSUPP ? "unsupported" : reader ? "set" : "root";
	if (ret && ret != -EOPNOTSUPP)
		btsdumpd_warn("%s: permissions: %s", c->id, strerror(-ret));
	ret = btsdumpd_crash_to_meta(&c->crash, c->id, c->acl, &m);
	if (ret)
		return ret;
	fd = openat(dirfd, BTSDUMPD_META, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0) {
		btsdumpd_meta_free(&m);
		return -errno;
	}
	ret = btsdumpd_meta_write_fd(fd, &m);
	btsdumpd_meta_free(&m);
	if (!ret)
		ret = protect(fd, reader, false);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), ".#%s", c->id);
	if (renameat(store_fd, tmp, store_fd, c->id))
		return -errno;
	fsync(store_fd);
	return 0;
}

/* Removes a directory of the store and its files (no subdirectories). */
void btsdumpd_entry_remove(const char *name)
{
	static const char *const files[] = { BTSDUMPD_META, BTSDUMPD_CORE_FILE,
		BTSDUMPD_REPORT_TXT, BTSDUMPD_REPORT_JSON, BTSDUMPD_REPORT_TXT_PLAIN,
		BTSDUMPD_REPORT_JSON_PLAIN, BTSDUMPD_SPOOL_FILE, "core.zst.tmp",
		BTSDUMPD_ANALYSIS_FILE, "meta.tmp", BTSDUMPD_LBR_NOTE };
	int fd = openat(store_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	size_t i;

	if (fd >= 0) {
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			unlinkat(fd, files[i], 0);
		close(fd);
	}
	unlinkat(store_fd, name, AT_REMOVEDIR);
}

/* The analysis (analyze.c) creates its files in the entry with this too. */
int btsdumpd_entry_create_file(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}
