// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd --lbr-collector: the stock-kernel collector's long-running
 * side.  Keeps every online CPU's LBR recording user branches through a
 * perf event, loads lbr.bpf.c (its skeleton, CO-RE against the running
 * kernel's BTF) and writes each snapshot it hands over into DIR/TID for
 * the handler (lbr-note.c).  Where it cannot work it says why in one line
 * and in DIR/status, and exits 0: crashes are stored as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include "btsdumpd.h"
#include "lbr-snapshot.h"
#include "lbr.skel.h"

#define CPUS_MAX	4096
/* a sample every 2^40 user cycles: in practice never (no sampling cost) */
#define LBR_PERIOD	(1ULL << 40)
#define CHECK_NS	1000000000ULL	/* hotplug: how often CPUs are checked */

/* One CPU's perf event keeping its LBR on. */
struct cpu_event {
	int fd;			/* -1: not armed (offline, or its event failed) */
	uint64_t armed_ns;	/* CLOCK_MONOTONIC when armed */
};

struct collector {
	const char *dir;
	struct cpu_event cpus[CPUS_MAX];
	int nr_cpus;		/* possible CPUs (_SC_NPROCESSORS_CONF) */
	uint64_t checked_ns;	/* the last hotplug check */
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
		return "the LBR is taken by another perf user (perf could not schedule "
		       "the collector's pinned event)";
	default:
		return "perf_event_open with a user branch stack failed";
	}
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Whether a CPU is online: no online file means it cannot go offline. */
static bool cpu_online(int cpu)
{
	char path[64], c = '1';
	int fd;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* One pinned event on cpu keeping its LBR on, user branches only. */
static int cpu_arm(struct collector *co, int cpu)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES, .sample_period = LBR_PERIOD,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
		.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY,
		.exclude_kernel = 1, .exclude_hv = 1, .pinned = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	co->cpus[cpu] = (struct cpu_event){ fd, monotonic_ns() };
	return 0;
}

static void cpu_disarm(struct collector *co, int cpu)
{
	if (co->cpus[cpu].fd >= 0)
		close(co->cpus[cpu].fd);
	co->cpus[cpu].fd = -1;
}

/* Whether cpu's event keeps its LBR on now: scheduled, its enabled time
 * running.  Not when perf could not schedule it (a pinned event then
 * reads as end of file: another user holds the LBR or the counters) nor
 * once the CPU went offline (perf removes a CPU's events then and never
 * puts them back: the time stops). */
static bool cpu_alive(const struct collector *co, int cpu)
{
	uint64_t v[2][2];
	int fd = co->cpus[cpu].fd;

	return fd >= 0 && read(fd, v[0], sizeof(v[0])) == sizeof(v[0]) &&
	       read(fd, v[1], sizeof(v[1])) == sizeof(v[1]) && v[1][1] > v[0][1];
}

/* Every online CPU's event, at start: -errno of the first that failed;
 * -EBUSY when perf could not schedule one. */
static int arm_cpus(struct collector *co)
{
	int cpu, ret, armed = 0;

	co->nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (co->nr_cpus > CPUS_MAX)
		co->nr_cpus = CPUS_MAX;
	for (cpu = 0; cpu < CPUS_MAX; cpu++)
		co->cpus[cpu].fd = -1;
	for (cpu = 0; cpu < co->nr_cpus; cpu++) {
		ret = cpu_online(cpu) ? cpu_arm(co, cpu) : -ENODEV;
		if (ret == -ENODEV)
			continue;	/* offline: armed when it comes online */
		if (ret)
			return ret;
		if (!cpu_alive(co, cpu))
			return -EBUSY;
		armed++;
	}
	co->checked_ns = monotonic_ns();
	return armed ? 0 : -ENODEV;
}

/* CPU hotplug, once a second: a CPU that came online is armed, one whose
 * event died (offline, then online again) is armed anew. */
static void check_cpus(struct collector *co, uint64_t now)
{
	int cpu, ret;

	if (now - co->checked_ns < CHECK_NS)
		return;
	co->checked_ns = now;
	for (cpu = 0; cpu < co->nr_cpus; cpu++) {
		bool online = cpu_online(cpu);

		if (co->cpus[cpu].fd >= 0 && online && cpu_alive(co, cpu))
			continue;
		cpu_disarm(co, cpu);
		if (!online)
			continue;
		ret = cpu_arm(co, cpu);
		if (!ret && cpu_alive(co, cpu))
			btsdumpd_log(LOG_INFO, "LBR collector armed on CPU %d (it came online)", cpu);
		else
			cpu_disarm(co, cpu);
	}
}

static int on_snapshot(void *ctx, void *data, size_t len)
{
	const struct btsdumpd_lbr_snap *s = data;
	struct collector *co = ctx;
	char name[16];

	if (len < sizeof(*s) || s->magic != BTSDUMPD_LBR_MAGIC)
		return 0;
	/* taken where the LBR was not kept on (a CPU back online before its
	 * event was armed again): stale entries, maybe another process's */
	if (s->cpu >= (__u32)co->nr_cpus || s->time_ns < co->cpus[s->cpu].armed_ns ||
	    !cpu_alive(co, s->cpu)) {
		btsdumpd_log(LOG_NOTICE, "LBR snapshot of thread %u dropped: CPU %u was not "
			     "armed when it was taken", s->tid, s->cpu);
		return 0;
	}
	snprintf(name, sizeof(name), "%u", s->tid);
	if (write_file(co->dir, name, s, sizeof(*s)))
		btsdumpd_log(LOG_WARNING, "LBR snapshot of thread %u: %m", s->tid);
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
	ret = lbr_bpf__attach(co->skel);
	if (ret)
		return cannot_work(co, "attaching at the signal_generate raw tracepoint failed",
				   strerror(-ret)), ret;
	co->rb = ring_buffer__new(bpf_map__fd(co->skel->maps.snapshots), on_snapshot, co, NULL);
	if (!co->rb)
		return cannot_work(co, "the ring buffer failed", strerror(errno)), -errno;
	return 0;
}

static int armed_count(const struct collector *co)
{
	int cpu, n = 0;

	for (cpu = 0; cpu < co->nr_cpus; cpu++)
		n += co->cpus[cpu].fd >= 0;
	return n;
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
	for (int cpu = 0; cpu < co->nr_cpus; cpu++)
		cpu_disarm(co, cpu);
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
	ret = arm_cpus(&co);
	if (ret) {
		cannot_work(&co, perf_reason(-ret), strerror(-ret));
		goto out;
	}
	if (load_program(&co))
		goto out;
	write_file(dir, "status", "armed\n", 6);
	write_file(dir, "armed", "", 0);
	btsdumpd_log(LOG_INFO, "LBR collector armed on %d CPUs", armed_count(&co));
	while (!stop) {
		ret = ring_buffer__poll(co.rb, 1000);
		if (ret < 0 && ret != -EINTR) {
			btsdumpd_log(LOG_ERR, "LBR collector: ring buffer: %s", strerror(-ret));
			break;
		}
		check_cpus(&co, monotonic_ns());
	}
out:
	collector_free(&co);
	return 0;
}
