// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd --lbr-collector: the stock-kernel collector's long-running
 * side.  Keeps every online CPU's LBR recording user branches through a
 * perf event, loads lbr.bpf.c (its skeleton, CO-RE against the running
 * kernel's BTF) and writes each snapshot it hands over into DIR/TID for
 * the handler (lbr-note.c), with the CPU's LBR depth.  A test run of the
 * program's probe first tells whether the kernel snapshots this CPU's LBR
 * at all (AMD's only since Linux 6.10).  Where it cannot work it says why
 * in one line and in DIR/status, and exits 0: crashes are stored as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "btsdumpd.h"
#include "lbr-snapshot.h"
#include "lbr.skel.h"

#define CPUS_MAX	4096
/* a sample every 2^40 user cycles: in practice never (no sampling cost) */
#define LBR_PERIOD	(1ULL << 40)
/* perf's LBR depth for the core PMU (x86_pmu.lbr_nr) */
#define LBR_DEPTH_PATH	"/sys/bus/event_source/devices/cpu/caps/branches"

struct collector {
	const char *dir;
	int fds[CPUS_MAX];
	int nr_fds;
	unsigned int depth;	/* LBR_DEPTH_PATH's, 0 if unknown */
	struct lbr_bpf *skel;
	struct ring_buffer *rb;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* DIR/NAME written whole (a temporary file renamed over it). */
static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[256], tmp[272];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len)
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* The one line saying why there is no collector, logged and kept in
 * DIR/status for btsdumpctl. */
static int cannot_work(struct collector *co, const char *why, const char *detail)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "no LBR collector: %s (%s)", why, detail);

	/* a normal state (no LBR, a VM), not a fault: a notice */
	btsdumpd_log(LOG_NOTICE, "%s; crashes are stored without it", line);
	if (n > 0 && (size_t)n < sizeof(line) - 1) {
		line[n++] = '\n';
		write_file(co->dir, "status", line, n);
	}
	return 0;
}

/* What a failed perf_event_open with a branch stack means. */
static const char *perf_reason(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
		return "the CPU has no LBR, or the kernel no PMU driver for it";
	case EACCES:
	case EPERM:
		return "not allowed to use perf's branch stack (perf_event_paranoid: "
		       "CAP_PERFMON, or CAP_SYS_ADMIN at 3 on Debian's kernels)";
	case EBUSY:
		return "the LBR is taken by another perf user";
	default:
		return "perf_event_open with a user branch stack failed";
	}
}

/* One pinned event per online CPU keeping the LBR on, user branches only. */
static int arm_cpus(struct collector *co)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES, .sample_period = LBR_PERIOD,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY,
		.exclude_kernel = 1, .exclude_hv = 1, .pinned = 1,
	};
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int fd;

	for (cpu = 0; cpu < ncpu && cpu < CPUS_MAX; cpu++) {
		fd = syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;	/* offline (hotplug: not followed yet) */
		if (fd < 0)
			return -errno;
		co->fds[co->nr_fds++] = fd;
	}
	return co->nr_fds ? 0 : -ENODEV;
}

static int on_snapshot(void *ctx, void *data, size_t len)
{
	struct btsdumpd_lbr_snap s;
	struct collector *co = ctx;
	char name[16];

	if (len < sizeof(s))
		return 0;
	memcpy(&s, data, sizeof(s));
	if (s.magic != BTSDUMPD_LBR_MAGIC)
		return 0;
	s.depth = co->depth;
	snprintf(name, sizeof(name), "%u", s.tid);
	if (write_file(co->dir, name, &s, sizeof(s)))
		btsdumpd_log(LOG_WARNING, "LBR snapshot of thread %u: %m", s.tid);
	return 0;
}

/* LBR_DEPTH_PATH's number, 0 when absent or odd. */
static unsigned int lbr_depth(void)
{
	unsigned int depth = 0;
	FILE *f = fopen(LBR_DEPTH_PATH, "re");

	if (f) {
		if (fscanf(f, "%u", &depth) != 1 || depth > BTSDUMPD_LBR_MAX)
			depth = 0;
		fclose(f);
	}
	return depth;
}

/* Test-runs the probe here, with this CPU's LBR armed: -ENOENT from the
 * helper means the kernel has no branch snapshot for this CPU. */
static int probe_snapshot(struct collector *co)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int ret = bpf_prog_test_run_opts(bpf_program__fd(co->skel->progs.btsdumpd_lbr_probe),
					 &opts);

	if (ret) {	/* no test run: the crash will tell */
		btsdumpd_log(LOG_DEBUG, "LBR collector: probe not run: %s", strerror(-ret));
		return 0;
	}
	if ((int)opts.retval == -ENOENT)
		return cannot_work(co, "this kernel cannot snapshot this CPU's LBR",
				   "bpf_get_branch_snapshot: No such file or directory; "
				   "AMD's LbrExtV2 needs Linux 6.10 or later"), -ENOENT;
	return 0;
}

static int load_program(struct collector *co)
{
	int ret;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return cannot_work(co, "the kernel has no BTF", "no /sys/kernel/btf/vmlinux"), -ENOENT;
	co->skel = lbr_bpf__open_and_load();
	if (!co->skel)
		return cannot_work(co, "loading the BPF program failed", strerror(errno)), -errno;
	ret = probe_snapshot(co);
	if (ret)
		return ret;
	bpf_program__set_autoattach(co->skel->progs.btsdumpd_lbr_probe, false);
	ret = lbr_bpf__attach(co->skel);
	if (ret)
		return cannot_work(co, "attaching at the signal_generate raw tracepoint failed",
				   strerror(-ret)), ret;
	co->rb = ring_buffer__new(bpf_map__fd(co->skel->maps.snapshots), on_snapshot, co, NULL);
	if (!co->rb)
		return cannot_work(co, "the ring buffer failed", strerror(errno)), -errno;
	return 0;
}

static void collector_free(struct collector *co)
{
	static const char stopped[] = "no LBR collector: stopped\n";
	char path[256];

	snprintf(path, sizeof(path), "%s/armed", co->dir);
	if (!unlink(path))
		write_file(co->dir, "status", stopped, sizeof(stopped) - 1);
	ring_buffer__free(co->rb);
	lbr_bpf__destroy(co->skel);
	while (co->nr_fds)
		close(co->fds[--co->nr_fds]);
}

/* Runs until SIGTERM or SIGINT: 0, also when the collector cannot work. */
int btsdumpd_lbr_collector(const char *dir)
{
	static struct collector co;
	int ret;

	co.dir = dir;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		btsdumpd_log(LOG_ERR, "no LBR collector: %s: %m", dir);
		return -errno;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	co.depth = lbr_depth();
	ret = arm_cpus(&co);
	if (ret) {
		cannot_work(&co, perf_reason(-ret), strerror(-ret));
		goto out;
	}
	if (load_program(&co))
		goto out;
	write_file(dir, "status", "armed\n", 6);
	write_file(dir, "armed", "", 0);
	btsdumpd_log(LOG_INFO, "LBR collector armed on %d CPUs", co.nr_fds);
	while (!stop) {
		ret = ring_buffer__poll(co.rb, 1000);
		if (ret < 0 && ret != -EINTR) {
			btsdumpd_log(LOG_ERR, "LBR collector: ring buffer: %s", strerror(-ret));
			break;
		}
	}
out:
	collector_free(&co);
	return 0;
}
