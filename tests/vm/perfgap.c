// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perfgap: the traced program of perf-bts-kernel.sh.  Under `perf record
 * -D -1 --control=fifo:CTL,ACK` it turns perf's events on itself, runs a
 * known loop (perf's records), turns them off, and at once oopses through
 * LKDTM (an fd opened before), so that its CPU's kernel ring still holds
 * perf's gap marker when the oops report prints it.  A getppid() after the
 * loop, perf's events still on, is where lbrsnap's BPF program takes its
 * branch snapshot (mode lbr).
 * Usage: perfgap CTL ACK LOOPS (waits for one byte on stdin first)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIRECT "/sys/kernel/debug/provoke-crash/DIRECT"

/* One perf control command and its "ack\n"; -1 if either fails. */
static int perf_cmd(int ctl, int ack, const char *cmd)
{
	char buf[8];
	ssize_t n, got = 0;

	if (write(ctl, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return -1;
	while (got < 4) {
		n = read(ack, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return memcmp(buf, "ack\n", 4) ? -1 : 0;
}

int main(int argc, char **argv)
{
	int direct, ctl, ack;
	long i, loops;
	char go;

	if (argc != 4)
		return 2;
	loops = atol(argv[3]);
	direct = open(DIRECT, O_WRONLY);
	ctl = open(argv[1], O_WRONLY);
	ack = open(argv[2], O_RDONLY);
	if (direct < 0 || ctl < 0 || ack < 0 || read(0, &go, 1) != 1) {
		perror("perfgap");
		return 1;
	}
	if (perf_cmd(ctl, ack, "enable\n"))
		return 3;
	for (i = 0; i < loops; i++)
		__asm__ volatile("" : : "r"(i) : "memory");	/* a taken JNE each */
	getppid();
	if (perf_cmd(ctl, ack, "disable\n"))
		return 4;
	write(direct, "EXCEPTION", 9);		/* oopses: does not return */
	return 5;
}
