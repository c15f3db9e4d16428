// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsrun: runs a program with btscrash tracing on, the way a user would:
 * prctl(PR_BTS_CRASH, PR_BTS_CRASH_ENABLE, RECORDS), then exec (tracing is
 * inherited across exec and by threads and children).  If enabling fails it
 * says why and runs the program untraced.  Used in the test VM.
 * Usage: btsrun [-d DEFAULT] [-u UID] RECORDS PROGRAM [ARGS...]
 *   -d: set kernel.bts_crash_task_records first (needs root), -u: then
 *   switch user; RECORDS 0: no prctl (the system-wide default applies).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bts_crash.h"		/* include/uapi/linux: PR_BTS_CRASH */

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > 3 && !strcmp(argv[1], "-d")) {
		/* the system-wide default, set by this untraced process */
		FILE *f = fopen("/proc/sys/kernel/bts_crash_task_records", "w");

		if (!f || fprintf(f, "%s\n", argv[2]) < 0 || fclose(f)) {
			perror("btsrun: kernel.bts_crash_task_records");
			return 127;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc > 3 && !strcmp(argv[1], "-u")) {
		uid_t uid = atoi(argv[2]);

		if (setgid(uid) || setuid(uid)) {
			perror("btsrun: setuid");
			return 127;
		}
		i = 3;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: btsrun [-u UID] RECORDS PROGRAM [ARGS...]\n");
		return 127;
	}
	/* RECORDS 0: only switch user (the system-wide default applies) */
	if (strtoul(argv[i], NULL, 0) &&
	    prctl(PR_BTS_CRASH, PR_BTS_CRASH_ENABLE, strtoul(argv[i], NULL, 0), 0, 0))
		fprintf(stderr, "btsrun: tracing not enabled: %s (errno %d, %s)\n",
			strerror(errno), errno, errno == ENOMEM ? "ENOMEM" : "other");
	execv(argv[i + 1], argv + i + 1);
	perror("btsrun: exec");
	return 127;
}
