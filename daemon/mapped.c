// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The crashing process's ELF files as descriptors, for the analysis, which
 * runs unprivileged and may not open them by path (a program in /root or in
 * a service's 0700 directory; docs/btsdumpd.md "Symbols").  The handler
 * opens them through /proc/PID/exe and /proc/PID/map_files/ while the kernel
 * holds the process; the hand-off carries them (SCM_RIGHTS); the companion
 * opens systemd-coredump's COREDUMP_EXE and COREDUMP_PROC_MAPS' files as
 * the crashing user.  lib/symbol.c uses one only where its build-id is the
 * core's.  At most BTSDUMPD_MAPPED_MAX distinct files.  Process context.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btsdumpd.h"

#define CHUNK		BTSDUMPD_MAPPED_CHUNK
#define FDS_MESSAGE	"MAPPED_FDS"

/* Keeps fd when it is an ELF file not kept yet and there is room; else
 * closes it.  false once the set is full (fd not kept). */
static bool mapped_add(struct btsdumpd_mapped *m, int fd)
{
	unsigned char magic[SELFMAG];
	struct stat st;
	size_t i;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG))
		goto drop;
	for (i = 0; i < m->nr; i++)
		if (m->dev[i] == st.st_dev && m->ino[i] == st.st_ino)
			goto drop;
	if (m->nr == BTSDUMPD_MAPPED_MAX) {
		m->full = true;
		close(fd);
		return false;
	}
	m->fd[m->nr] = fd;
	m->dev[m->nr] = st.st_dev;
	m->ino[m->nr++] = st.st_ino;
	return true;
drop:
	close(fd);
	return true;
}

void btsdumpd_mapped_open(struct btsdumpd_mapped *m, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0)
		mapped_add(m, fd);
	/* opening map_files/ needs CAP_SYS_ADMIN (the kernel's handler has it) */
	snprintf(path, sizeof(path), "/proc/%d/map_files", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		/* regular files only: opening a mapped device could act on it */
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && !mapped_add(m, fd))
			break;
	}
	closedir(d);
}

/* A regular file by path: kept (if ELF), or -errno. */
static int open_path(struct btsdumpd_mapped *m, const char *path)
{
	struct stat st;
	int fd;

	if (path[0] != '/')
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	mapped_add(m, fd);
	return 0;
}

/* The paths of a /proc/PID/maps text (systemd-coredump's
 * COREDUMP_PROC_MAPS): each line's sixth field to its end, a path that
 * is no longer there ("(deleted)") left out; opened until m is full. */
static void open_maps(struct btsdumpd_mapped *m, char *maps)
{
	char *line, *next, *path;
	size_t len;
	int at;

	for (line = maps; line && *line && !m->full; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		at = -1;
		if (sscanf(line, "%*s %*s %*s %*s %*s %n", &at) != 0 || at < 0)
			continue;
		path = line + at;
		len = strlen(path);
		if (len >= 10 && !strcmp(path + len - 10, " (deleted)"))
			continue;
		open_path(m, path);
	}
}

/* Opens exe and the files of maps (either may be NULL) with the crashing
 * user's file-system identity (fsuid, fsgid, no supplementary groups):
 * what that user could read.  In a child about to drop its privileges
 * for good (analyze.c), which keeps CAP_SETUID and CAP_SETGID for that. */
int btsdumpd_mapped_open_as(struct btsdumpd_mapped *m, const char *exe, char *maps,
			    uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL))
		return -errno;
	setfsgid(gid);
	setfsuid(uid);
	if ((uid_t)setfsuid(-1) != uid || (gid_t)setfsgid(-1) != gid)
		return -EPERM;
	if (exe)
		open_path(m, exe);
	if (maps)
		open_maps(m, maps);
	return 0;
}

void btsdumpd_mapped_close(struct btsdumpd_mapped *m)
{
	while (m->nr)
		close(m->fd[--m->nr]);
	m->full = false;
}

/* ---- the hand-off: datagrams of CHUNK descriptors ---------------------------- */

int btsdumpd_mapped_send(int sock, const struct btsdumpd_mapped *m)
{
	char cbuf[CMSG_SPACE(CHUNK * sizeof(int))];
	struct iovec iov = { (char *)FDS_MESSAGE, sizeof(FDS_MESSAGE) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf };
	struct cmsghdr *cm;
	size_t i, n;

	for (i = 0; i < m->nr; i += n) {
		n = m->nr - i < CHUNK ? m->nr - i : CHUNK;
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), m->fd + i, n * sizeof(int));
		if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
			return -errno;
	}
	return 0;
}

/* The descriptors a received datagram carries (every SCM_RIGHTS message
 * of it) into fds, at most max; those beyond are closed.  Their count. */
static size_t cmsg_fds(struct msghdr *mh, int *fds, size_t max)
{
	struct cmsghdr *cm;
	size_t n = 0, k, i;
	int fd;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (n < max)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

int btsdumpd_mapped_receive(struct btsdumpd_mapped *m, struct msghdr *mh, size_t len)
{
	int fds[CHUNK];
	size_t n, i;

	if (len == sizeof(FDS_MESSAGE) - 1 && !memcmp(mh->msg_iov->iov_base, FDS_MESSAGE, len)) {
		n = cmsg_fds(mh, fds, CHUNK);
		for (i = 0; i < n; i++)
			mapped_add(m, fds[i]);	/* kept, or closed */
		return -EAGAIN;		/* more to come */
	}
	n = cmsg_fds(mh, fds, 1);
	return n ? fds[0] : -ENODATA;
}
