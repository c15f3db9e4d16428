// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Listing the store (docs/btsdumpd.md "The store"): its complete entries
 * (a directory holding a readable meta) that the caller can read, oldest
 * first, with their sizes; an entry's trace report, read decompressed.
 * btsdumpctl and btsdumpd's vacuum.  An entry from a journal: journal.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "entries.h"
#include "util.h"
#include "zstdio.h"

static uint64_t entry_bytes(int fd)
{
	uint64_t sum = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int dfd;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return 0;
	}
	while ((d = readdir(dir)))
		if (!fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			sum += st.st_size;
	closedir(dir);
	return sum;
}

/* Loads one entry; 1 when it is complete and readable, 0 to skip it. */
static int entry_load(int storefd, const char *name, struct btsdumpd_entry *e)
{
	struct stat st;
	int fd, r;

	fd = openat(storefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	r = btsdumpd_meta_read_at(fd, BTSDUMPD_META, &e->meta);
	if (r < 0) {
		close(fd);
		return r == -ENOMEM ? r : 0;	/* unreadable or broken: skipped */
	}
	e->id = strdup(name);
	if (!e->id) {
		btsdumpd_meta_free(&e->meta);
		close(fd);
		return -ENOMEM;
	}
	if (fstat(fd, &st) < 0)
		st.st_mtime = 0;
	if (btsdumpd_parse_u64(btsdumpd_meta_get(&e->meta, "TIMESTAMP"), &e->timestamp))
		e->timestamp = st.st_mtime;
	e->bytes = entry_bytes(fd);
	close(fd);
	return 1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct btsdumpd_entry *x = a, *y = b;

	if (x->timestamp != y->timestamp)
		return x->timestamp < y->timestamp ? -1 : 1;
	return strcmp(x->id, y->id);
}

int btsdumpd_store_list(const char *store, struct btsdumpd_entry **out, size_t *n)
{
	struct btsdumpd_entry *e = NULL, *t;
	size_t cnt = 0, cap = 0;
	struct dirent *d;
	DIR *dir;
	int r = 0;

	dir = opendir(store);
	if (!dir)
		return -errno;
	while (r >= 0 && (errno = 0, d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 32;
			t = realloc(e, cap * sizeof(*e));
			if (!t) {
				r = -ENOMEM;
				break;
			}
			e = t;
		}
		memset(&e[cnt], 0, sizeof(e[cnt]));
		r = entry_load(dirfd(dir), d->d_name, &e[cnt]);
		cnt += r > 0;
	}
	if (r >= 0 && errno)
		r = -errno;
	closedir(dir);
	if (r < 0) {
		btsdumpd_entries_free(e, cnt);
		return r;
	}
	if (cnt)
		qsort(e, cnt, sizeof(*e), entry_cmp);
	*out = e;
	*n = cnt;
	return 0;
}

void btsdumpd_entries_free(struct btsdumpd_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].id);
		btsdumpd_meta_free(&e[i].meta);
	}
	free(e);
}

/* ---- an entry's report ---- */

const char *btsdumpd_report_name(int entry_fd, bool json)
{
	const char *names[] = { json ? BTSDUMPD_REPORT_JSON : BTSDUMPD_REPORT_TXT,
				json ? BTSDUMPD_REPORT_JSON_PLAIN : BTSDUMPD_REPORT_TXT_PLAIN };
	struct stat st;

	for (size_t i = 0; i < 2; i++)
		if (!fstatat(entry_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			return names[i];
	errno = ENOENT;
	return NULL;
}

FILE *btsdumpd_report_open(int entry_fd, bool json)
{
	const char *name = btsdumpd_report_name(entry_fd, json);
	int fd = name ? openat(entry_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (strcmp(name + strlen(name) - 4, ".zst"))
		f = fdopen(fd, "r");	/* an entry from before compression */
	else
		return btsdumpd_zstd_fopen_read(fd);
	if (!f)
		close(fd);
	return f;
}
