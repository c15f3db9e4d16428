// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bpfsnap: bpf_get_branch_snapshot() in the guest, without libbpf or BTF
 * (the test kernel has none): one raw-tracepoint BPF program of raw
 * instructions writes the helper's return and the CPU's LBR as perf read
 * it (newest first) into an array map, the first time its mode's filter
 * lets it through.  Modes (Usage: bpfsnap run | signal SECONDS | hold):
 *  run (init.sh, perf-oops-test.sh): test-run once (BPF_PROG_TEST_RUN)
 *    in this process on this CPU (pin it with taskset); prints
 *    "LBRSNAP: ret N", then "LBRSNAP: I FROM TO" per entry.
 *  signal SECONDS (pmu-vm.sh): every CPU's LBR kept on for user branches
 *    by a perf event (as daemon/lbr-collector.c's), the program at the
 *    signal_generate tracepoint, the first SIGSEGV raised, in the
 *    faulting task; prints "armed", then "ret N", "pid P tid T" and
 *    "entry FROM TO" for all 32 slots.
 *  hold (perf-bts-kernel.sh, mode lbr): the program at sys_enter,
 *    perfgap's first getppid() (while perf's LBR user holds the LBR);
 *    prints "ready", at SIGTERM "LBRS-RET: BYTES HITS" (HITS: perfgap's
 *    getppid() calls seen), then "LBRS-E: FROM TO" per entry.
 * Exit 0; 1 when a bpf() or perf_event_open() call fails; 2 on usage.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#define SNAP_MAX	32	/* the deepest model-specific LBR */
#define ENTRY_SIZE	24	/* struct perf_branch_entry: from, to, bits */
#define LBR_PERIOD	(1ULL << 40)	/* a sample never: no sampling cost */
#define CPUS_MAX	64
#define NR_GETPPID	110	/* x86-64 */
#define PERFGAP		0x0070616766726570ULL	/* "perfgap\0" */
#define PROG_MAX	64	/* instructions */

/* the map's one value: what the program stores */
struct snap {
	uint64_t hits;		/* the filter let it through; taken at the first */
	uint64_t pid_tgid;	/* the task's at the snapshot */
	int64_t ret;		/* the helper's: bytes, or -errno */
	struct { uint64_t from, to, bits; } e[SNAP_MAX];	/* newest first */
};

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_X(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_K(d, k)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, k)
#define ADD_K(d, k)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, k)
#define LDX_DW(d, s, o)	INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, o, s)	INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_W(d, o, k)	INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, k)
#define LD_IMM64(d, s, lo, hi) \
	INSN(BPF_LD | BPF_IMM | BPF_DW, d, s, 0, lo), INSN(0, 0, 0, 0, hi)
#define JNE_K(d, k, o)	INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, k)
#define JNE_X(d, s, o)	INSN(BPF_JMP | BPF_JNE | BPF_X, d, s, o, 0)
#define JEQ_K(d, k, o)	INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, k)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define OUT		0x7fff	/* a jump's offset: to "return 0" (assemble()) */

enum mode { RUN, SIGNAL, HOLD };

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	long ret = syscall(SYS_bpf, cmd, attr, sizeof(*attr));

	return ret < 0 ? -errno : ret;
}

/* The program: the mode's filter, then the first time through the
 * snapshot into the map's value (no branch of its own reaches the LBR:
 * perf's and the recorder's filters keep user branches only).  Fills
 * INSN (PROG_MAX), returns the count, OUT jumps resolved. */
static int assemble(struct bpf_insn *insn, enum mode mode, int map_fd)
{
	/* each mode's filter, on r1 = the tracepoint's args[]: falls
	 * through for the event whose snapshot it wants, else jumps OUT */
	const struct bpf_insn filter_signal[] = {
		LDX_DW(2, 1, 0),		/* signal_generate's sig */
		JNE_K(2, SIGSEGV, OUT),
	};
	const struct bpf_insn filter_hold[] = {
		LDX_DW(2, 1, 8),		/* sys_enter's id */
		JNE_K(2, NR_GETPPID, OUT),
		MOV_X(1, 10),
		ADD_K(1, -16),
		MOV_K(2, 16),
		CALL(BPF_FUNC_get_current_comm),	/* into fp[-16], NUL-padded */
		LDX_DW(1, 10, -16),
		LD_IMM64(2, 0, (int32_t)PERFGAP, (int32_t)(PERFGAP >> 32)),
		JNE_X(1, 2, OUT),		/* one perfgap at a time */
	};
	const struct bpf_insn body[] = {
		ST_W(10, -4, 0),			/* key 0 */
		LD_IMM64(1, BPF_PSEUDO_MAP_FD, map_fd, 0),
		MOV_X(2, 10),
		ADD_K(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_K(0, 0, OUT),
		MOV_X(7, 0),
		LDX_DW(1, 7, offsetof(struct snap, hits)),
		MOV_X(2, 1),
		ADD_K(2, 1),
		STX_DW(7, offsetof(struct snap, hits), 2),
		JNE_K(1, 0, OUT),			/* taken before */
		MOV_X(1, 7),
		ADD_K(1, offsetof(struct snap, e)),
		MOV_K(2, sizeof(((struct snap *)0)->e)),
		MOV_K(3, 0),
		CALL(BPF_FUNC_get_branch_snapshot),
		STX_DW(7, offsetof(struct snap, ret), 0),
		CALL(BPF_FUNC_get_current_pid_tgid),
		STX_DW(7, offsetof(struct snap, pid_tgid), 0),
		MOV_K(0, 0),				/* OUT */
		EXIT(),
	};
	size_t n = 0, out;

	if (mode == SIGNAL) {
		memcpy(insn, filter_signal, sizeof(filter_signal));
		n = sizeof(filter_signal) / sizeof(insn[0]);
	} else if (mode == HOLD) {
		memcpy(insn, filter_hold, sizeof(filter_hold));
		n = sizeof(filter_hold) / sizeof(insn[0]);
	}
	memcpy(insn + n, body, sizeof(body));
	n += sizeof(body) / sizeof(insn[0]);
	out = n - 2;
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(insn[i].code) == BPF_JMP && insn[i].off == OUT)
			insn[i].off = out - (i + 1);
	return n;
}

static int load_prog(enum mode mode, int map_fd)
{
	static struct bpf_insn insn[PROG_MAX];
	static char log[65536];
	union bpf_attr a = {
		.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
		.insns = (uintptr_t)insn, .insn_cnt = assemble(insn, mode, map_fd),
		.license = (uintptr_t)"GPL",	/* the helper is GPL-only */
		.log_buf = (uintptr_t)log, .log_size = sizeof(log), .log_level = 1,
	};
	long fd = sys_bpf(BPF_PROG_LOAD, &a);

	if (fd < 0)
		fprintf(stderr, "bpfsnap: BPF_PROG_LOAD: %s\n%s\n", strerror(-fd), log);
	return fd;
}

/* CPU's LBR on, user branches only (daemon/lbr-collector.c's event);
 * the fd stays open until bpfsnap exits */
static int lbr_on(int cpu)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES, .sample_period = LBR_PERIOD,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY,
		.exclude_kernel = 1, .exclude_hv = 1, .pinned = 1,
	};
	long fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);

	if (fd < 0)
		fprintf(stderr, "bpfsnap: perf_event_open on CPU %d: %s\n", cpu,
			strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* The map and the program; attached at TP unless NULL.  Returns the
 * map's fd, -1 on failure (said); *PROG_FD the program's. */
static int arm(enum mode mode, const char *tp, int *prog_fd)
{
	union bpf_attr m = {
		.map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
		.value_size = sizeof(struct snap), .max_entries = 1,
	};
	long map_fd = sys_bpf(BPF_MAP_CREATE, &m), fd;

	if (map_fd < 0) {
		fprintf(stderr, "bpfsnap: BPF_MAP_CREATE: %s\n", strerror(-map_fd));
		return -1;
	}
	*prog_fd = load_prog(mode, map_fd);
	if (*prog_fd < 0)
		return -1;
	if (!tp)
		return map_fd;
	union bpf_attr t = { .raw_tracepoint = {
		.name = (uintptr_t)tp, .prog_fd = *prog_fd } };
	fd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &t);
	if (fd < 0) {
		fprintf(stderr, "bpfsnap: BPF_RAW_TRACEPOINT_OPEN %s: %s\n", tp,
			strerror(-fd));
		return -1;
	}
	return map_fd;
}

/* The map's value into S; -errno */
static int fetch(int map_fd, struct snap *s)
{
	uint32_t key = 0;
	union bpf_attr l = { .map_fd = map_fd, .key = (uintptr_t)&key,
			     .value = (uintptr_t)s };

	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &l);
}

/* The entries the helper returned (ret / 24 of them, at most SNAP_MAX) */
static int taken(const struct snap *s)
{
	return s->ret <= 0 ? 0 : s->ret / ENTRY_SIZE < SNAP_MAX ?
		(int)(s->ret / ENTRY_SIZE) : SNAP_MAX;
}

/* A call and return of its own: 64 of them right before the snapshot
 * make the LBR's newest 32 entries this program's user branches, however
 * often perf reset the stack at a switch-in before. */
static __attribute__((noinline)) void warm(int i)
{
	__asm__ volatile("" : : "r"(i));
}

static int run(void)
{
	static struct snap s;
	union bpf_attr a = { 0 };
	int prog_fd, map_fd = arm(RUN, NULL, &prog_fd), i, err;

	if (map_fd < 0)
		return 1;
	a.test.prog_fd = prog_fd;
	for (i = 0; i < 64; i++)
		warm(i);
	err = sys_bpf(BPF_PROG_TEST_RUN, &a);
	if (err < 0 || (err = fetch(map_fd, &s)) < 0) {
		fprintf(stderr, "bpfsnap: run: %s\n", strerror(-err));
		return 1;
	}
	printf("LBRSNAP: ret %lld\n", (long long)s.ret);
	for (i = 0; i < taken(&s); i++)
		printf("LBRSNAP: %d %#llx %#llx\n", i, (unsigned long long)s.e[i].from,
		       (unsigned long long)s.e[i].to);
	return 0;
}

static int signal_snap(const char *seconds)
{
	static struct snap s;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int map_fd, prog_fd, polls;

	for (int cpu = 0; cpu < cpus && cpu < CPUS_MAX; cpu++)
		if (lbr_on(cpu) < 0)
			return 1;
	map_fd = arm(SIGNAL, "signal_generate", &prog_fd);
	if (map_fd < 0)
		return 1;
	printf("armed\n");
	fflush(stdout);
	/*
	 * The program counts the hit first and writes pid_tgid last: a copy
	 * taken between them (seen on a loaded host: "ret 0, pid 0") is not
	 * the snapshot.  Once pid_tgid is there, one more copy holds every
	 * store before it (the first may have read the entries too early).
	 */
	for (polls = atoi(seconds) * 20; polls > 0; polls--) {
		if (fetch(map_fd, &s) == 0 && s.hits && s.pid_tgid &&
		    fetch(map_fd, &s) == 0)
			break;
		usleep(50000);
	}
	if (!polls) {
		fprintf(stderr, "bpfsnap: no SIGSEGV in %s s\n", seconds);
		return 1;
	}
	printf("ret %lld\npid %llu tid %llu\n", (long long)s.ret,
	       (unsigned long long)(s.pid_tgid >> 32),
	       (unsigned long long)(uint32_t)s.pid_tgid);
	for (int i = 0; i < SNAP_MAX; i++)
		printf("entry %llx %llx\n", (unsigned long long)s.e[i].from,
		       (unsigned long long)s.e[i].to);
	return 0;
}

static int hold(void)
{
	static struct snap s;
	sigset_t term;
	int map_fd, prog_fd, sig, err;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	map_fd = arm(HOLD, "sys_enter", &prog_fd);
	if (map_fd < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	sigwait(&term, &sig);
	err = fetch(map_fd, &s);
	if (err < 0) {
		fprintf(stderr, "bpfsnap: BPF_MAP_LOOKUP_ELEM: %s\n", strerror(-err));
		return 1;
	}
	printf("LBRS-RET: %lld %llu\n", (long long)s.ret, (unsigned long long)s.hits);
	for (int i = 0; i < taken(&s); i++)
		printf("LBRS-E: %llx %llx\n", (unsigned long long)s.e[i].from,
		       (unsigned long long)s.e[i].to);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "run"))
		return run();
	if (argc == 3 && !strcmp(argv[1], "signal"))
		return signal_snap(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "hold"))
		return hold();
	fprintf(stderr, "usage: bpfsnap run | signal SECONDS | hold\n");
	return 2;
}
