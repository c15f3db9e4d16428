// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD shim for tests/test-btsdumpd.py: makes btsdumpd meet what a
 * test cannot arrange for real.  BTSDUMPD_TEST_SHIM=slow-analysis: the
 * analysis child (the one caller of PR_SET_NO_NEW_PRIVS) hangs for 30 s;
 * =no-pidfd: pidfd_open() fails with ENOSYS, as on a kernel before 5.3.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int prctl(int option, ...);
int pidfd_open(pid_t pid, unsigned int flags);

static bool shim_is(const char *what)
{
	const char *v = getenv("BTSDUMPD_TEST_SHIM");

	return v && !strcmp(v, what);
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)		/* as glibc's: always four words */
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_NO_NEW_PRIVS && shim_is("slow-analysis"))
		sleep(30);
	return syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}

int pidfd_open(pid_t pid, unsigned int flags)
{
	if (shim_is("no-pidfd")) {
		errno = ENOSYS;
		return -1;
	}
	return syscall(SYS_pidfd_open, pid, flags);
}
