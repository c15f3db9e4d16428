// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iocperiod: opens perf's BTS event on itself (branches, a period of 1:
 * intel_pmu_has_bts()), runs a loop with it on, turns it into a counting
 * event with PERF_EVENT_IOC_PERIOD (1000: stopped and started, never
 * deleted and added), runs the loop again and closes it: the close is the
 * event's pmu::del with a period that is no BTS event's.  pmu-vm.sh then
 * reads ds/bts_buffers: the recorder must have the BTS half back on the
 * CPU (issue 39 M1: it stayed held, every traced crash there without a
 * branch).  Pinned by the caller.  Exit 0, or 1 with perror's line.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

static void loop(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

int main(void)
{
	struct perf_event_attr a;
	unsigned long long period = 1000;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("iocperiod: perf_event_open");
		return 1;
	}
	loop();
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period)) {
		perror("iocperiod: PERF_EVENT_IOC_PERIOD");
		return 1;
	}
	loop();
	close(fd);
	return 0;
}
