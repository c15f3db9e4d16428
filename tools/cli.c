// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The conventions every btscrash program shares (tools/cli.h): --version
 * from meson's project version (config.h), usage errors in one line plus
 * "Try 'PROG --help'", inputs that may be "-" or a pipe, and the pager of
 * btsdumpctl's listings (as systemd's tools run it).  Linked into
 * btsdump, btsdumpctl and btsdumpd.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "escape.h"

#define SPOOL_CHUNK	(1 << 16)

int bts_cli_version(const char *prog)
{
	printf("%s (btscrash) %s\n", prog, BTSCRASH_VERSION);
	return bts_cli_stdout_done(prog, 0);
}

int bts_cli_stdout_done(const char *prog, int status)
{
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (ferror(stdout))	/* an earlier flush failed */
		err = EIO;
	if (!err || status == BTS_EXIT_READ)
		return status;
	fprintf(stderr, "%s: writing the output: %s\n", prog, strerror(err));
	clearerr(stdout);
	return BTS_EXIT_READ;
}

int bts_cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	btsdec_escape_vline(stderr, prog, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return BTS_EXIT_USAGE;
}

int bts_cli_bad_option(const char *prog, char **argv, int c)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = !strncmp(arg, "--", 2);

	if (c == ':')
		return is_long || !optopt ?
			bts_cli_usage_error(prog, "option '%s' requires an argument", arg) :
			bts_cli_usage_error(prog, "option requires an argument -- '%c'", optopt);
	if (is_long)
		return optopt ?
			bts_cli_usage_error(prog, "option '%s' doesn't allow an argument", arg) :
			bts_cli_usage_error(prog, "unrecognized option '%s'", arg);
	return bts_cli_usage_error(prog, "invalid option -- '%c'", optopt);
}

int bts_cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (end == s || *end || *s == '-')
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : errno ? -EINVAL : 0;
}

const char *bts_cli_number_error(int err)
{
	return err == -ERANGE ? "out of range" : "not a number";
}

/* Copies in to out (a new, empty file) and rewinds out; 0 or -errno. */
static int spool(int in, int out)
{
	char *buf = malloc(SPOOL_CHUNK);
	ssize_t n;
	int ret = buf ? 0 : -ENOMEM;

	while (!ret && (n = read(in, buf, SPOOL_CHUNK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		errno = EIO;
		if (n < 0 || write(out, buf, n) != n)
			ret = -errno;
	}
	free(buf);
	if (!ret && lseek(out, 0, SEEK_SET))
		ret = -errno;
	return ret;
}

/* path opened ("-": stdin); a non-seekable input copied to the file
 * make_spool creates (its fd, or -errno); the fd, or -errno. */
static int open_input(const char *path, int (*make_spool)(void *), void *arg)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) :
		 fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	struct stat st;
	int out = -1, ret;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		ret = -errno;
	else if (S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0)
		return fd;
	else if (S_ISDIR(st.st_mode))
		ret = -EISDIR;
	else if ((out = make_spool(arg)) < 0)
		ret = out;
	else if ((ret = spool(fd, out)))
		close(out);
	close(fd);
	return ret ? ret : out;
}

static int make_memfd(void *unused)
{
	int fd = memfd_create("btscrash-input", MFD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int bts_cli_open_input(const char *path)
{
	return open_input(path, make_memfd, NULL);
}

static int make_tmpfile(void *name)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(name, PATH_MAX, "%s/btscrash-input.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		*(char *)name = '\0';
	return fd < 0 ? -errno : fd;
}

int bts_cli_open_input_named(const char *path, char name[PATH_MAX])
{
	int fd;

	*name = '\0';
	fd = open_input(path, make_tmpfile, name);
	if (fd < 0 && *name) {
		unlink(name);
		*name = '\0';
	}
	return fd;
}

int bts_cli_input_path(const char *path, char *buf, size_t len,
		       const char **out, int *fd)
{
	struct stat st;

	*fd = -1;
	*out = path;
	if (strcmp(path, "-") && (stat(path, &st) || S_ISREG(st.st_mode)))
		return 0;	/* a file, or an error its reader reports */
	*fd = bts_cli_open_input(path);
	if (*fd < 0)
		return *fd;
	snprintf(buf, len, "/proc/self/fd/%d", *fd);
	*out = buf;
	return 0;
}

/* ---- the pager, as systemd's tools run it ---- */

static pid_t pager_pid;

/* In the child: stdin from the pipe, then $PAGER (through sh), else less
 * (LESS=FRSXMK unless set: quit on one screen, raw colour, no init), else
 * cat, so the text is never lost. */
static void pager_exec(int rd, const char *pager)
{
	dup2(rd, STDIN_FILENO);
	setenv("LESS", "FRSXMK", 0);
	if (pager)
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
	execlp("less", "less", (char *)NULL);
	execlp("cat", "cat", (char *)NULL);
	_exit(127);
}

int bts_cli_pager_start(void)
{
	const char *pager = getenv("PAGER");
	int fds[2];

	if (!isatty(STDOUT_FILENO) || (pager && (!*pager || !strcmp(pager, "cat"))))
		return 0;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	pager_pid = fork();
	if (pager_pid == 0)
		pager_exec(fds[0], pager);
	if (pager_pid > 0 && dup2(fds[1], STDOUT_FILENO) < 0)
		pager_pid = -errno;
	close(fds[0]);
	close(fds[1]);
	return pager_pid < 0 ? -errno : 0;
}

void bts_cli_pager_end(void)
{
	if (pager_pid <= 0)
		return;
	fflush(stdout);
	close(STDOUT_FILENO);	/* the pager's end of input */
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = 0;
}
