// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmbench: the kernel-side benchmarks, run inside the test VM by
 * bench/vm-bench.sh.  Prints one line per measurement:
 *   RESULT <name> <variant> <median ns> <runs>
 *
 *   vmbench pingpong VARIANT ROUNDS RUNS  two processes bounce a byte over
 *       two pipes ROUNDS times (2 context switches per round); VARIANT
 *       "traced" enables tracing (4096 records) before the fork, so both
 *       ends are traced; "untraced" does not.
 *   vmbench coredump VARIANT MIB RUNS  a child maps MIB MiB (populated by
 *       the kernel, no user instructions), then faults; the time from just
 *       before the fault until the parent reaps it is dominated by writing
 *       the core.  "traced": the child runs with a full 65536-record ring,
 *       so its core carries a 1.5 MiB trace note.  Cores go to the
 *       core_pattern; with VMBENCH_CORE_DIR set, DIR/core.PID is removed.
 *   vmbench branches VARIANT N RUNS  a loop of N iterations, one taken
 *       branch each (its jump back), in a child ("traced": 4096 records).
 *   vmbench idle VARIANT SECONDS RUNS  sleeps SECONDS between the marks:
 *       what the rest of the system does meanwhile (the stock-kernel
 *       collector's checks, bench/vm-bench-collector.sh: its MSR accesses;
 *       the time says nothing under -icount's sleep=off).
 *   vmbench signals VARIANT N RUNS  raises SIGUSR1 for itself N times
 *       (kill(), a handler that returns): what every signal that is not a
 *       crash pays (the stock-kernel collector's BPF program runs at each
 *       one's generation, check-collector-signals.py).
 * Under QEMU's -icount shift=0 (bench/vm-bench.sh --icount) the guest's
 * clock advances one nanosecond per guest instruction: the times are then
 * guest instruction counts.
 * Each timed run is bracketed by two marks in the PMU model's pmu-log
 * (pmu_mark()), after one empty bracket that measures the marks' own MSR
 * accesses: bench/msr-per-unit.py counts the MSR accesses between them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bts_crash.h"		/* include/uapi/linux: PR_BTS_CRASH */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/*
 * A mark in the PMU model's pmu-log: a CPU-wide count of branches retired
 * (raw event C4H) opened and closed on CPU 0, whose event-select write
 * says which mark it is: USR only (value 0x5100c4) begins a bracket, OS
 * only (0x5200c4) ends it.  A CPU-wide counting event adds nothing to a
 * context switch (no perf_sched_events, no sched_task callback).  Without
 * a PMU (or a kernel without perf) the open fails: no mark, no harm.
 */
static void pmu_mark(int end)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_RAW;
	a.size = sizeof(a);
	a.config = 0xc4;
	a.exclude_kernel = !end;
	a.exclude_user = end;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	if (fd >= 0)
		close(fd);
}

static void trace_on(unsigned long records)
{
	if (prctl(PR_BTS_CRASH, PR_BTS_CRASH_ENABLE, records, 0, 0)) {
		perror("vmbench: PR_BTS_CRASH_ENABLE");
		exit(1);
	}
}

static long long pingpong_once(int traced, long rounds)
{
	int ab[2], ba[2];
	long long t0, t1;
	pid_t pid;
	char c = 0;
	long i;

	if (pipe(ab) || pipe(ba))
		exit(1);
	pid = fork();
	if (pid == 0) {
		if (traced)
			trace_on(4096);
		for (i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	if (traced)
		trace_on(4096);
	pmu_mark(0);
	t0 = now_ns();
	for (i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			exit(1);
	t1 = now_ns();
	pmu_mark(1);
	if (traced)
		prctl(PR_BTS_CRASH, PR_BTS_CRASH_DISABLE, 0, 0, 0);
	waitpid(pid, NULL, 0);
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
	return t1 - t0;
}

static volatile int sink;

static long long coredump_once(int traced, long mib)
{
	int p[2];
	long long t0 = 0, t1;
	pid_t pid;

	if (pipe(p))
		exit(1);
	pid = fork();
	if (pid == 0) {
		char *m = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		int i;

		if (m == MAP_FAILED)
			_exit(1);
		if (traced) {
			trace_on(65536);
			for (i = 0; i < 40000; i++)	/* > 65536 branches: a full ring */
				sink += i;
		}
		pmu_mark(0);
		t0 = now_ns();
		if (write(p[1], &t0, sizeof(t0)) != sizeof(t0))
			_exit(1);
		*(volatile int *)0 = 0;
		_exit(1);
	}
	close(p[1]);
	if (read(p[0], &t0, sizeof(t0)) != sizeof(t0))
		exit(1);
	waitpid(pid, NULL, 0);
	t1 = now_ns();
	pmu_mark(1);
	close(p[0]);
	if (getenv("VMBENCH_CORE_DIR")) {	/* keep the RAM disk from filling */
		char path[256];

		snprintf(path, sizeof(path), "%s/core.%d", getenv("VMBENCH_CORE_DIR"), (int)pid);
		unlink(path);
	}
	return t1 - t0;
}

static long long branches_once(int traced, long n)
{
	int p[2];
	long long t[2];
	pid_t pid;
	long i;

	if (pipe(p))
		exit(1);
	pid = fork();
	if (pid == 0) {
		if (traced)
			trace_on(4096);
		pmu_mark(0);
		t[0] = now_ns();
		for (i = 0; i < n; i++)		/* one taken jcc per iteration */
			sink += i;
		t[1] = now_ns();
		pmu_mark(1);
		if (write(p[1], t, sizeof(t)) != sizeof(t))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], t, sizeof(t)) != sizeof(t))
		exit(1);
	waitpid(pid, NULL, 0);
	close(p[0]);
	return t[1] - t[0];
}

static long long idle_once(long seconds)
{
	long long t0, t1;

	pmu_mark(0);
	t0 = now_ns();
	sleep(seconds);
	t1 = now_ns();
	pmu_mark(1);
	return t1 - t0;
}

static void on_signal(int sig)
{
	(void)sig;
}

static long long signals_once(long n)
{
	struct sigaction sa;
	long long t0, t1;
	long i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	if (sigaction(SIGUSR1, &sa, NULL))
		exit(1);
	pmu_mark(0);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		kill(getpid(), SIGUSR1);
	t1 = now_ns();
	pmu_mark(1);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	long long t[64];
	int runs, traced, i;
	long arg;

	if (argc != 5) {
		fprintf(stderr, "usage: vmbench pingpong|coredump|branches|idle|signals traced|untraced N RUNS\n");
		return 2;
	}
	traced = !strcmp(argv[2], "traced");	/* any other label: untraced */
	arg = atol(argv[3]);
	runs = atoi(argv[4]);
	if (runs < 1 || runs > 64 || arg < 1)
		return 2;
	pmu_mark(0);	/* the empty bracket: the marks' own accesses */
	pmu_mark(1);
	for (i = 0; i < runs; i++) {
		if (!strcmp(argv[1], "pingpong"))
			t[i] = pingpong_once(traced, arg);
		else if (!strcmp(argv[1], "branches"))
			t[i] = branches_once(traced, arg);
		else if (!strcmp(argv[1], "idle"))
			t[i] = idle_once(arg);
		else if (!strcmp(argv[1], "signals"))
			t[i] = signals_once(arg);
		else
			t[i] = coredump_once(traced, arg);
	}
	qsort(t, runs, sizeof(t[0]), cmp_ll);
	printf("RESULT %s %s %lld %d\n", argv[1], argv[2], t[runs / 2], runs);
	return 0;
}
