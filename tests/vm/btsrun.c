// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsrun: runs a program with btscrash tracing on, the way a user would:
 * prctl(PR_BTS_CRASH, PR_BTS_CRASH_ENABLE, RECORDS), then exec (tracing is
 * inherited across exec and by threads and children).  If enabling fails it
 * says why and runs the program untraced.  Used in the test VM.
 * Usage: btsrun [-u UID] RECORDS PROGRAM [ARGS...]
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
	if (prctl(PR_BTS_CRASH, PR_BTS_CRASH_ENABLE, strtoul(argv[i], NULL, 0), 0, 0))
		fprintf(stderr, "btsrun: tracing not enabled: %s (errno %d, %s)\n",
			strerror(errno), errno, errno == ENOMEM ? "ENOMEM" : "other");
	execv(argv[i + 1], argv + i + 1);
	perror("btsrun: exec");
	return 127;
}
