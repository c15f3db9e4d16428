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
 * While armed it holds a lock on DIR/armed (alive) and keeps in
 * DIR/progress the time before which every snapshot is settled, so a
 * handler waits as long as its snapshot may still come, and no longer.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
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
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "btsdumpd.h"
#include "lbr-snapshot.h"
#include "lbr.skel.h"

#define CPUS_MAX	4096
/* a sample every 2^40 user cycles: in practice never (no sampling cost) */
#define LBR_PERIOD	(1ULL << 40)
#define CHECK_NS	250000000ULL	/* how often the CPUs' events are checked */
#define HELD_MAX	128		/* snapshots waiting for their CPU's check */
/* A held snapshot settles within two checks (written, or dropped when its
 * CPU's event was re-armed after it); after this many it is dropped. */
#define HELD_CHECKS	4
/* the BPF program stamps a snapshot before it commits it to the ring */
#define COMMIT_NS	10000000ULL
/* perf's LBR depth for the core PMU (x86_pmu.lbr_nr) */
#define LBR_DEPTH_PATH	"/sys/bus/event_source/devices/cpu/caps/branches"

/* One CPU's perf event keeping its LBR on.  All times CLOCK_MONOTONIC
 * (bpf_ktime_get_ns() in the snapshots). */
struct cpu_event {
	int fd;			/* -1: not armed (offline, or its event failed) */
	uint64_t armed_ns;	/* when armed */
	uint64_t checked_ns;	/* the last check, and the event's enabled */
	uint64_t enabled;	/* time then (PERF_FORMAT_TOTAL_TIME_ENABLED) */
	uint64_t alive_ns;	/* recording until then at least (proven) */
};

/* A snapshot waiting for its CPU's check, and how many checks it saw. */
struct held_snap {
	struct btsdumpd_lbr_snap s;
	unsigned int checks;
};

struct collector {
	const char *dir;
	int armed_fd;		/* DIR/armed, locked while armed; -1 */
	int progress_fd;	/* DIR/progress; -1 */
	uint64_t lost;		/* the program's count of full-ring losses, logged */
	struct cpu_event cpus[CPUS_MAX];
	int nr_cpus;		/* possible CPUs (_SC_NPROCESSORS_CONF) */
	unsigned int depth;	/* LBR_DEPTH_PATH's, 0 if unknown */
	uint64_t checked_ns;	/* the last check */
	/* snapshots not yet known to come from a recording LBR */
	struct held_snap held[HELD_MAX];
	int nr_held;
	struct lbr_bpf *skel;
	struct ring_buffer *rb;
	bool no_kept;		/* --lbr-no-kept: the _blind program */
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

/* cpu's event's enabled time: 0, or -EBUSY when perf could not schedule
 * the pinned event (it then reads as end of file: another user holds
 * the LBR or the counters), -errno. */
static int cpu_read(const struct collector *co, int cpu, uint64_t *enabled)
{
	uint64_t v[2];
	ssize_t n = read(co->cpus[cpu].fd, v, sizeof(v));

	if (n == 0)
		return -EBUSY;
	if (n != sizeof(v))
		return n < 0 ? -errno : -EIO;
	*enabled = v[1];
	return 0;
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
	struct cpu_event *e = &co->cpus[cpu];
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	*e = (struct cpu_event){ .fd = fd, .armed_ns = monotonic_ns() };
	e->checked_ns = e->armed_ns;
	ret = cpu_read(co, cpu, &e->enabled);
	if (ret) {
		close(fd);
		e->fd = -1;
	}
	return ret;
}

static void cpu_disarm(struct collector *co, int cpu)
{
	if (co->cpus[cpu].fd >= 0)
		close(co->cpus[cpu].fd);
	co->cpus[cpu].fd = -1;
}

/* Whether cpu's event is still in perf's context: its enabled time ran
 * since the last check.  Once the CPU goes offline perf removes the
 * event and never puts it back: its time stops for good.  So time that
 * ran after the last check proves the event was there, keeping the LBR
 * on, from its arming up to that check: alive_ns.  (Only whether the
 * time ran: its rate is perf's clock, which in a VM with a mis-calibrated
 * TSC need not follow CLOCK_MONOTONIC.) */
static bool cpu_check(struct collector *co, int cpu, uint64_t now)
{
	struct cpu_event *e = &co->cpus[cpu];
	uint64_t enabled = 0;

	if (e->fd < 0 || cpu_read(co, cpu, &enabled) || enabled == e->enabled)
		return false;
	e->alive_ns = e->checked_ns;
	e->checked_ns = now;
	e->enabled = enabled;
	return true;
}

/* Every online CPU's event, at start: -errno of the first that failed
 * (-EBUSY: perf could not schedule it). */
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
		armed++;
	}
	co->checked_ns = monotonic_ns();
	return armed ? 0 : -ENODEV;
}

/* Every CPU, each CHECK_NS: a CPU that came online is armed, one whose
 * event died (offline, then online again) is armed anew. */
static void check_cpus(struct collector *co, uint64_t now)
{
	int cpu;

	for (cpu = 0; cpu < co->nr_cpus; cpu++) {
		bool online = cpu_online(cpu);

		if (co->cpus[cpu].fd >= 0 && online && cpu_check(co, cpu, now))
			continue;
		cpu_disarm(co, cpu);
		if (online && !cpu_arm(co, cpu))
			btsdumpd_log(LOG_INFO, "LBR collector armed on CPU %d (it came online)", cpu);
	}
}

/* The file the handler waits for (lbr-note.c). */
static void snapshot_write(struct collector *co, const struct btsdumpd_lbr_snap *held)
{
	struct btsdumpd_lbr_snap s = *held;
	char name[16];

	s.depth = co->depth;
	snprintf(name, sizeof(name), "%u", s.tid);
	if (write_file(co->dir, name, &s, sizeof(s)))
		btsdumpd_log(LOG_WARNING, "LBR snapshot of thread %u: %m", s.tid);
}

/* A held snapshot's fate once its CPU was checked: written when the
 * CPU's event was recording when it was taken (armed before, proven there
 * after it), dropped when it was not (a CPU back online before its event
 * was armed again: stale entries, maybe another process's); -EAGAIN:
 * not known yet. */
static int snapshot_settle(struct collector *co, struct held_snap *h)
{
	const struct btsdumpd_lbr_snap *s = &h->s;
	const struct cpu_event *e = &co->cpus[s->cpu];

	if (e->fd >= 0 && s->time_ns >= e->armed_ns && s->time_ns <= e->alive_ns) {
		snapshot_write(co, s);
		return 0;
	}
	/* counted in checks, not time: a collector starved of CPU (a crash
	 * storm) checks late, and its snapshots are no less good */
	if (e->fd >= 0 && s->time_ns >= e->armed_ns && ++h->checks < HELD_CHECKS)
		return -EAGAIN;
	btsdumpd_log(LOG_NOTICE, "LBR snapshot of thread %u dropped: CPU %u was not "
		     "recording when it was taken", s->tid, s->cpu);
	return -ESTALE;
}

/* The checks, and the held snapshots they settle. */
static void check(struct collector *co, uint64_t now)
{
	int i, kept = 0;

	if (now - co->checked_ns < CHECK_NS)
		return;
	co->checked_ns = now;
	check_cpus(co, now);
	for (i = 0; i < co->nr_held; i++)
		if (snapshot_settle(co, &co->held[i]) == -EAGAIN)
			co->held[kept++] = co->held[i];
	co->nr_held = kept;
}

static int on_snapshot(void *ctx, void *data, size_t len)
{
	const struct btsdumpd_lbr_snap *s = data;
	struct collector *co = ctx;

	if (len < sizeof(*s) || s->magic != BTSDUMPD_LBR_MAGIC ||
	    s->cpu >= (__u32)co->nr_cpus)
		return 0;
	if (co->nr_held == HELD_MAX) {
		btsdumpd_log(LOG_WARNING, "LBR snapshot of thread %u dropped: %d held",
			     co->held[0].s.tid, HELD_MAX);
		memmove(co->held, co->held + 1, (HELD_MAX - 1) * sizeof(co->held[0]));
		co->nr_held--;
	}
	co->held[co->nr_held++] = (struct held_snap){ .s = *s };
	return 0;
}

/* After a pass that began at start (the ring drained, the checks done):
 * every snapshot taken before the time written to DIR/progress is
 * settled, its file written or dropped; the handler waits for that
 * (lbr-note.c).  Snapshots the ring had no room for are counted by the
 * program and logged here. */
static void progress(struct collector *co, uint64_t start)
{
	uint64_t p = start > COMMIT_NS ? start - COMMIT_NS : 0, lost = co->skel->bss->lost;
	int i;

	for (i = 0; i < co->nr_held; i++)
		if (co->held[i].s.time_ns <= p)
			p = co->held[i].s.time_ns - 1;
	if (co->progress_fd >= 0 && pwrite(co->progress_fd, &p, sizeof(p), 0) != sizeof(p))
		btsdumpd_log(LOG_WARNING, "LBR collector: %s/progress: %m", co->dir);
	if (lost != co->lost)
		btsdumpd_log(LOG_WARNING, "LBR collector: %llu snapshots lost: the ring "
			     "buffer was full", (unsigned long long)(lost - co->lost));
	co->lost = lost;
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

/* The skeleton loaded with the signal program that reads how many of the
 * snapshot's entries perf's read kept (lbr.bpf.c; the verifier needs
 * cpu_hw_events in kallsyms: CONFIG_KALLSYMS_ALL), else with the one that
 * does not (at once with no_kept: --lbr-no-kept): NULL with errno set when
 * neither loads. */
static struct lbr_bpf *open_and_load(bool no_kept)
{
	struct bpf_program *unused;
	struct lbr_bpf *skel;
	int kept, ret = -ENOMEM;

	for (kept = !no_kept; kept >= 0; kept--) {
		skel = lbr_bpf__open();
		if (!skel)
			return NULL;
		unused = kept ? skel->progs.btsdumpd_lbr_signal_blind :
				skel->progs.btsdumpd_lbr_signal;
		bpf_program__set_autoload(unused, false);
		bpf_program__set_autoattach(unused, false);
		ret = lbr_bpf__load(skel);
		if (!ret) {
			if (!kept)
				btsdumpd_log(LOG_NOTICE, "LBR collector: perf's count of "
					     "kept entries unread (%s): notes keep what "
					     "they validate", no_kept ? "--lbr-no-kept" :
					     "cpu_hw_events not in kallsyms");
			return skel;
		}
		lbr_bpf__destroy(skel);
	}
	errno = -ret;
	return NULL;
}

static int load_program(struct collector *co)
{
	int ret;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return cannot_work(co, "the kernel has no BTF", "no /sys/kernel/btf/vmlinux"), -ENOENT;
	co->skel = open_and_load(co->no_kept);
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
	if (co->armed_fd >= 0)
		close(co->armed_fd);	/* the lock with it */
	if (co->progress_fd >= 0)
		close(co->progress_fd);
	ring_buffer__free(co->rb);
	lbr_bpf__destroy(co->skel);
	for (int cpu = 0; cpu < co->nr_cpus; cpu++)
		cpu_disarm(co, cpu);
}

/* DIR/armed written and locked for as long as this process runs (a
 * handler sees a killed collector by the lock's absence), DIR/progress
 * opened; a failure of either only costs handlers waiting. */
static void announce_armed(struct collector *co)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/progress", co->dir);
	co->progress_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	write_file(co->dir, "status", "armed\n", 6);
	write_file(co->dir, "armed", "", 0);
	snprintf(path, sizeof(path), "%s/armed", co->dir);
	co->armed_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (co->armed_fd < 0 || flock(co->armed_fd, LOCK_EX | LOCK_NB))
		btsdumpd_log(LOG_WARNING, "LBR collector: locking %s: %m", path);
}

/* Runs until SIGTERM or SIGINT: 0, also when the collector cannot work. */
int btsdumpd_lbr_collector(const char *dir, bool no_kept)
{
	static struct collector co = { .armed_fd = -1, .progress_fd = -1 };
	uint64_t start;
	int ret;

	co.dir = dir;
	co.no_kept = no_kept;
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
	announce_armed(&co);
	btsdumpd_log(LOG_INFO, "LBR collector armed on %d CPUs", armed_count(&co));
	while (!stop) {
		start = monotonic_ns();
		ret = ring_buffer__poll(co.rb, CHECK_NS / 1000000);
		if (ret < 0 && ret != -EINTR) {
			btsdumpd_log(LOG_ERR, "LBR collector: ring buffer: %s", strerror(-ret));
			break;
		}
		check(&co, monotonic_ns());
		progress(&co, start);
	}
out:
	collector_free(&co);
	return 0;
}
