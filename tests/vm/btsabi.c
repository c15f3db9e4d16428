// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsabi: the recorder's user-visible contract, checked from inside the
 * test VM (run as root by tests/vm/init.sh, results read by
 * tests/vm/check-vm.py): prctl arguments, ENABLE leaving the caller as it
 * was on any error, ENABLE and DISABLE for every thread of the process, the sysctl's bounds, what a ring is charged to
 * (VmPin, mlock()ed pages, release at exit, none for io_uring workers),
 * that a secure exec or a credential change ends tracing, and that the
 * emulation's TF stays out of the way of the program's own, a ptracer's
 * and uprobes'.  One line per check: "ok - WHAT" or
 * "not ok - WHAT: DETAIL", then "btsabi: done".
 * Usage: btsabi            (all checks; needs /bin/btsabi-suid, mode 4755)
 *        btsabi probe      (prints "GET=<ring size> EUID=<euid>")
 *        btsabi movss      (a load of SS, then a call through NULL)
 *        btsabi late-enable (a spinning thread crashes after ENABLE)
 *        btsabi alloc-fail (ring allocations failing: needs
 *                          CONFIG_FAIL_PAGE_ALLOC, as the test kernel has)
 *        btsabi lbr-pingpong (with btsabi-hi lbr-pong on CPU 0, then a
 *                          call through NULL: the LBR source's test)
 */
#define _GNU_SOURCE		/* REG_EFL, CPU_SET */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/ucontext.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bts_crash.h"		/* include/uapi/linux: PR_BTS_CRASH */

#define SYSCTL	"/proc/sys/kernel/bts_crash_task_records"
#define USER	1000

/* prctl(PR_BTS_CRASH, op, arg): its result, or -errno */
static long bts(unsigned long op, unsigned long arg)
{
	long r = prctl(PR_BTS_CRASH, op, arg, 0, 0);

	return r < 0 ? -errno : r;
}

static long get(void)
{
	long r = prctl(PR_BTS_CRASH, PR_BTS_CRASH_GET, 0, 0, 0);

	return r < 0 ? -errno : r;
}

static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", ok ? "ok" : "not ok", what);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
}

/* VmPin of this process in kB, -1 if not found. */
static long vmpin(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Writes v to path; 0 or -errno. */
static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int sysctl_write(const char *v)
{
	return write_file(SYSCTL, v);
}

static long sysctl_read(void)
{
	char buf[32] = "";
	int fd = open(SYSCTL, O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		return -1;
	close(fd);
	return strtol(buf, NULL, 10);
}

/* Becomes USER with RLIMIT_MEMLOCK = kb; exits 127 if it cannot. */
static void become_user(long kb)
{
	struct rlimit rl = { kb << 10, kb << 10 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(USER) || setuid(USER)) {
		perror("btsabi: become_user");
		exit(127);
	}
}

/* Runs fn in a child; its exit status (0 when all its checks ran). */
static int in_child(void (*fn)(void))
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		fn();
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- a fork that fails after the child took its ring ------------------------ */

#define PIDS_CG "/sys/fs/cgroup/btsabi-pids"

/*
 * A traced process at its pids cgroup's limit forks: the fork fails in
 * cgroup_can_fork(), after the child took its ring (after its pid).  The
 * ring goes in the fork's error path, in task context: with
 * CONFIG_MEMCG the child's task_struct is freed from an RCU callback,
 * where the last mmdrop() of the ring's mm would take pgd_lock in
 * softirq, and the kernel warns (bts_crash_release(): the VM's check for
 * no WARNING fails).  In a child: it moves itself into the cgroup.
 */
static void fork_at_pids_limit(void)
{
	char pid[32];
	pid_t c;
	int i, eagain = 0;

	mkdir("/sys/fs/cgroup", 0755);
	mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	mkdir(PIDS_CG, 0755);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file("/sys/fs/cgroup/cgroup.subtree_control", "+pids") ||
	    write_file(PIDS_CG "/pids.max", "1") ||
	    write_file(PIDS_CG "/cgroup.procs", pid)) {
		check(0, "fork at the pids limit: a pids cgroup of 1 (CONFIG_CGROUP_PIDS)",
		      "cannot set it up");
		return;
	}
	bts(PR_BTS_CRASH_ENABLE, 4096);
	for (i = 0; i < 8; i++) {	/* a few: each frees a ring */
		c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
		else if (errno == EAGAIN)
			eagain++;
	}
	check(eagain == 8 && get() == 4096, "fork at the pids limit: EAGAIN, the parent traced",
	      "%d of 8 EAGAIN, GET %ld", eagain, get());
	write_file("/sys/fs/cgroup/cgroup.procs", pid);
	rmdir(PIDS_CG);
	sleep(1);	/* RCU callbacks run: a ring freed there would warn now */
}

/* ---- ENABLE validates first; unused arguments ---------------------------- */

static void enable_keeps_on_einval(void)
{
	long r;

	check(bts(PR_BTS_CRASH_ENABLE, 1024) == 0 && get() == 1024,
	      "prctl: ENABLE 1024 traces with 1024 records", "GET %ld", get());
	r = bts(PR_BTS_CRASH_ENABLE, 0);
	check(r == -EINVAL && get() == 1024, "prctl: ENABLE 0 is EINVAL and keeps the ring",
	      "ret %ld, GET %ld", r, get());
	r = bts(PR_BTS_CRASH_ENABLE, 65537);
	check(r == -EINVAL && get() == 1024, "prctl: ENABLE 65537 is EINVAL and keeps the ring",
	      "ret %ld, GET %ld", r, get());
	r = prctl(PR_BTS_CRASH, PR_BTS_CRASH_DISABLE, 1, 0, 0) < 0 ? -errno : 0;
	check(r == -EINVAL && get() == 1024, "prctl: DISABLE with a non-zero argument is EINVAL",
	      "ret %ld, GET %ld", r, get());
	r = prctl(PR_BTS_CRASH, PR_BTS_CRASH_GET, 1, 0, 0) < 0 ? -errno : 0;
	check(r == -EINVAL, "prctl: GET with a non-zero argument is EINVAL", "ret %ld", r);
	r = prctl(PR_BTS_CRASH, PR_BTS_CRASH_GET, 0, 1, 0) < 0 ? -errno : 0;
	check(r == -EINVAL, "prctl: arg4 must be 0", "ret %ld", r);
	check(bts(PR_BTS_CRASH_DISABLE, 0) == 0 && get() == 0, "prctl: DISABLE stops tracing",
	      "GET %ld", get());
}

static void enable_keeps_on_enomem(void)
{
	long r;

	become_user(64);
	check(bts(PR_BTS_CRASH_ENABLE, 16) == 0 && get() == 16,
	      "prctl: a user traces with 16 records under a 64 KiB RLIMIT_MEMLOCK", "GET %ld", get());
	r = bts(PR_BTS_CRASH_ENABLE, 4096);	/* 96 KiB */
	check(r == -ENOMEM && get() == 16, "prctl: ENABLE over RLIMIT_MEMLOCK is ENOMEM and keeps the ring",
	      "ret %ld, GET %ld", r, get());
}

/* ---- per process ---------------------------------------------------------- */

static pthread_barrier_t bar;
static long seen_get;

/* Sleeps in the kernel (futex) while main changes tracing; then GET. */
static void *waiting_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);	/* main changes tracing */
	pthread_barrier_wait(&bar);
	seen_get = get();
	pthread_barrier_wait(&bar);
	return NULL;
}

static void *get_thread(void *arg)
{
	(void)arg;
	seen_get = get();
	return NULL;
}

/* Runs op(arg) on a thread of its own; its result. */
struct op_arg { unsigned long op, arg; long ret; };

static void *op_thread(void *p)
{
	struct op_arg *o = p;

	o->ret = bts(o->op, o->arg);
	return NULL;
}

/*
 * docs/kernel.md: ENABLE and DISABLE act on the whole process, threads
 * that already run included (charged at once to the caller), all or
 * nothing; threads created afterwards inherit the ring size.
 */
static void per_process(void)
{
	struct op_arg o = { PR_BTS_CRASH_ENABLE, 512, -1 };
	long base = vmpin(), pin;
	pthread_t t;

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, waiting_thread, NULL);
	pthread_barrier_wait(&bar);
	bts(PR_BTS_CRASH_ENABLE, 512);
	pin = vmpin();
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	check(seen_get == 512, "process: a thread running before ENABLE gets the ring too",
	      "GET %ld", seen_get);
	check(pin - base == 2 * 12, "process: ENABLE charges both threads' rings at once",
	      "VmPin %ld -> %ld kB", base, pin);
	pthread_join(t, NULL);

	pthread_create(&t, NULL, get_thread, NULL);
	pthread_join(t, NULL);
	check(seen_get == 512, "process: a thread created after ENABLE inherits the ring size",
	      "GET %ld", seen_get);

	pthread_create(&t, NULL, waiting_thread, NULL);
	pthread_barrier_wait(&bar);
	bts(PR_BTS_CRASH_DISABLE, 0);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	check(seen_get == 0 && get() == 0, "process: DISABLE ends tracing in every thread",
	      "other thread's GET %ld, ours %ld", seen_get, get());
	pthread_join(t, NULL);

	pthread_create(&t, NULL, op_thread, &o);
	pthread_join(t, NULL);
	check(o.ret == 0 && get() == 512, "process: ENABLE from another thread reaches the main thread",
	      "ENABLE %ld, main's GET %ld", o.ret, get());
	bts(PR_BTS_CRASH_DISABLE, 0);
	pin = vmpin();
	check(pin == base, "process: every ring's charge returns after DISABLE",
	      "VmPin %ld -> %ld kB", base, pin);
}

/* Over the limit for all threads: nothing changes, in any thread. */
static void per_process_all_or_nothing(void)
{
	long base, r;
	pthread_t t;

	become_user(40);	/* one ring of 1024 records (24 kB), not two */
	base = vmpin();
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, waiting_thread, NULL);
	pthread_barrier_wait(&bar);
	r = bts(PR_BTS_CRASH_ENABLE, 1024);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	check(r == -ENOMEM && get() == 0 && seen_get == 0 && vmpin() == base,
	      "process: ENABLE over RLIMIT_MEMLOCK for its two threads changes neither",
	      "ret %ld, GETs %ld/%ld, VmPin %ld -> %ld kB", r, get(), seen_get, base, vmpin());
	pthread_join(t, NULL);
}

/*
 * Threads created while another thread enables: each one that asks after
 * ENABLE returned has the ring (none slips through a fork in flight).
 */
#define RACE_THREADS 200
static volatile int enabled;
static volatile int race_misses, race_late;

static void *race_child(void *arg)
{
	int after = enabled;
	long g = get();

	(void)arg;
	if (after) {
		race_late++;
		if (g != 64)
			race_misses++;
	}
	return NULL;
}

static void *race_maker(void *arg)
{
	pthread_t t;
	int i, after = 0;

	(void)arg;
	/* until RACE_THREADS threads were made after ENABLE returned */
	for (i = 0; i < 100000 && after < RACE_THREADS; i++) {
		after += enabled;
		if (pthread_create(&t, NULL, race_child, NULL))
			break;
		pthread_join(t, NULL);
	}
	return NULL;
}

static void per_process_fork_race(void)
{
	pthread_t m;
	long r;

	pthread_create(&m, NULL, race_maker, NULL);
	usleep(20000);
	r = bts(PR_BTS_CRASH_ENABLE, 64);
	enabled = 1;
	pthread_join(m, NULL);
	check(r == 0 && race_late > 0 && race_misses == 0,
	      "process: threads created during ENABLE all get the ring",
	      "ret %ld, %d of %d later threads untraced", r, race_misses, race_late);
}

/*
 * `btsabi late-enable`: a thread spinning in user mode (no system call)
 * when main enables tracing for the process; it then crashes, and its
 * core's trace note shows its calls after ENABLE (tests/vm/check-vm.py).
 */
static volatile int go;

static __attribute__((noinline)) int late_leaf(int i)
{
	return i * 3 + 1;
}

static void *late_spinner(void *arg)
{
	int i, acc = 0;

	(void)arg;
	while (!go)
		;
	for (i = 0; i < 100; i++)
		acc += late_leaf(i);
	if (acc)
		((void (*)(void))0)();
	return NULL;
}

static void late_enable_then_crash(void)
{
	pthread_t t;

	pthread_create(&t, NULL, late_spinner, NULL);
	usleep(10000);
	if (bts(PR_BTS_CRASH_ENABLE, 4096))
		exit(2);
	go = 1;
	pthread_join(t, NULL);
	exit(1);
}

/* ---- sysctl --------------------------------------------------------------- */

static void sysctl_bounds(void)
{
	long before = sysctl_read();
	int r = sysctl_write("65537\n");

	check(r == -EINVAL && sysctl_read() == before,
	      "sysctl: bts_crash_task_records refuses 65537", "write %d, now %ld", r, sysctl_read());
	r = sysctl_write("65536\n");
	check(r == 0 && sysctl_read() == 65536, "sysctl: bts_crash_task_records takes 65536",
	      "write %d, now %ld", r, sysctl_read());
	sysctl_write("0\n");
}

/* ---- who pays ------------------------------------------------------------- */

static void pinned_shows(void)
{
	long base = vmpin(), pin;

	bts(PR_BTS_CRASH_ENABLE, 4096);		/* 96 KiB */
	pin = vmpin();
	check(pin - base == 96, "charge: a 4096-record ring is 96 kB of VmPin", "VmPin %ld -> %ld kB",
	      base, pin);
	bts(PR_BTS_CRASH_ENABLE, 16);
	pin = vmpin();
	check(pin - base == 4, "charge: replaced by 16 records, 4 kB of VmPin", "VmPin %ld kB", pin);
	bts(PR_BTS_CRASH_DISABLE, 0);
	pin = vmpin();
	check(pin == base, "charge: DISABLE returns it", "VmPin %ld kB", pin);
}

static void mlock_shares_limit(void)
{
	size_t len = 64 << 10;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long r;

	become_user(64);
	if (p == MAP_FAILED || mlock(p, len)) {
		check(0, "charge: mlock() of the whole 64 KiB limit", "%s", strerror(errno));
		return;
	}
	r = bts(PR_BTS_CRASH_ENABLE, 16);
	check(r == -ENOMEM && get() == 0,
	      "charge: after mlock() of the whole limit, a ring is ENOMEM", "ret %ld", r);
	munlock(p, len);
	r = bts(PR_BTS_CRASH_ENABLE, 16);
	check(r == 0, "charge: after munlock() the ring fits", "ret %ld", r);
}

static void released_at_exit(void)
{
	siginfo_t si;
	pid_t pid;
	long r;

	become_user(96);
	pid = fork();
	if (pid == 0)
		_exit(bts(PR_BTS_CRASH_ENABLE, 4096) == 0 ? 0 : 1);	/* all 96 KiB */
	/* a zombie: its task_struct stays until it is reaped */
	memset(&si, 0, sizeof(si));
	if (pid < 0 || waitid(P_PID, pid, &si, WEXITED | WNOWAIT) || si.si_status != 0) {
		check(0, "charge: a child traced with the whole limit", "status %d", si.si_status);
		return;
	}
	r = bts(PR_BTS_CRASH_ENABLE, 4096);
	check(r == 0, "charge: a dead (unreaped) child's ring is released at its exit",
	      "ret %ld", r);
	waitpid(pid, NULL, 0);
}

/* Threads of this process whose name starts with prefix. */
static int threads_named(const char *prefix)
{
	char path[300], comm[64];
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/task");

	while (dir && (d = readdir(dir))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strncmp(comm, prefix, strlen(prefix)))
			n++;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* One IORING_OP_NOP forced onto an io-wq worker thread; 0 or -errno. */
static int io_uring_async_nop(void)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	unsigned int *tail, *array;
	size_t len;
	char *sq;
	int fd = syscall(__NR_io_uring_setup, 4, &p);

	if (fd < 0)
		return -errno;
	len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	if (len < p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe))
		len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqe == MAP_FAILED)
		return -errno;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->flags = IOSQE_ASYNC;	/* through io-wq: a worker thread */
	tail = (unsigned int *)(sq + p.sq_off.tail);
	array = (unsigned int *)(sq + p.sq_off.array);
	array[*tail & *(unsigned int *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	return 0;	/* fd stays open: the worker lingers */
}

static void io_workers_untraced(void)
{
	long base, pin;
	int r;

	bts(PR_BTS_CRASH_ENABLE, 4096);
	base = vmpin();
	r = io_uring_async_nop();
	pin = vmpin();
	check(r == 0 && threads_named("iou-wrk-") > 0, "io_uring: an async request runs on a worker thread",
	      "ret %d, %d workers", r, threads_named("iou-wrk-"));
	check(r == 0 && pin == base, "io_uring: its worker gets no ring (VmPin unchanged)",
	      "VmPin %ld -> %ld kB", base, pin);
}

/* ---- the program's own single-stepping, next to the emulation's -------- */

static volatile int traps;

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;

	(void)sig;
	(void)si;
	if (++traps >= 5)	/* enough: the program clears its TF */
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L;
}

static void own_tf(void)
{
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	unsigned long flags;

	bts(PR_BTS_CRASH_ENABLE, 256);
	sigaction(SIGTRAP, &sa, NULL);
	asm volatile("pushf\n\tpop %0" : "=r"(flags));
	check(!(flags & 0x100), "tf: pushf does not show the recorder's TF",
	      "flags %#lx", flags);
	/* the anti-debugger's check: set TF, count the traps */
	asm volatile("pushf\n\torq $0x100, (%%rsp)\n\tpopf\n\t"
		     "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
		     "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop" ::: "memory", "cc");
	check(traps == 5, "tf: a program that sets TF gets its SIGTRAPs (5, then it clears TF)",
	      "%d traps", traps);
}

static void ptrace_steps(void)
{
	int st, steps = 0, traps_seen = 0;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		bts(PR_BTS_CRASH_ENABLE, 256);
		raise(SIGSTOP);
		for (volatile int i = 0; i < 100; i++)
			;
		_exit(7);
	}
	waitpid(pid, &st, 0);		/* its SIGSTOP */
	for (; steps < 200; steps++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) || waitpid(pid, &st, 0) != pid ||
		    !WIFSTOPPED(st))
			break;
		traps_seen += WSTOPSIG(st) == SIGTRAP;
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &st, 0);
	check(steps == 200 && traps_seen == 200 && WIFEXITED(st) && WEXITSTATUS(st) == 7,
	      "ptrace: 200 single-steps of a traced child each stop with SIGTRAP, then it exits",
	      "%d steps, %d SIGTRAP stops, status %#x", steps, traps_seen, st);
}

/*
 * `btsrun N btsabi movss`: a load of SS holds the step trap for one
 * instruction; the step that spans two must not look like a branch.
 * Prints the address of the mov to SS, then calls through NULL.
 */
static void movss_then_crash(void)
{
	extern char btsabi_movss[];

	printf("MOVSS=%p\n", (void *)btsabi_movss);
	fflush(stdout);
	asm volatile("mov %%ss, %%eax\n"
		     ".globl btsabi_movss\nbtsabi_movss:\n\t"
		     "mov %%eax, %%ss\n\tnop\n\tnop\n" ::: "eax");
	((void (*)(void))0)();
}

/* ---- secure exec and credential changes ----------------------------------- */

/* GET as seen by PROG (probe mode) run as USER after ENABLE 16; -1 on error. */
static long exec_probe(const char *prog, long *euid)
{
	int fd[2];
	char buf[64] = "";
	long n = -1;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		become_user(1024);
		if (bts(PR_BTS_CRASH_ENABLE, 16))
			_exit(126);
		execl(prog, prog, "probe", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	if (read(fd[0], buf, sizeof(buf) - 1) > 0)
		sscanf(buf, "GET=%ld EUID=%ld", &n, euid);
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return n;
}

static void secure_exec(void)
{
	long euid = -1, n;

	n = exec_probe("/bin/btsabi", &euid);
	check(n == 16 && euid == USER, "exec: a plain exec keeps the ring", "GET %ld, euid %ld", n, euid);
	n = exec_probe("/bin/btsabi-suid", &euid);
	check(n == 0 && euid == 0, "exec: a setuid-root exec ends tracing", "GET %ld, euid %ld", n, euid);
	sysctl_write("64\n");
	n = exec_probe("/bin/btsabi-suid", &euid);
	check(n == 64 && euid == 0,
	      "exec: the system-wide default applies to the setuid program as to any other",
	      "GET %ld, euid %ld", n, euid);
	sysctl_write("0\n");
}

static void setuid_drops(void)
{
	long r = bts(PR_BTS_CRASH_ENABLE, 16);

	if (setgid(USER) || setuid(USER)) {
		check(0, "creds: setuid", "%s", strerror(errno));
		return;
	}
	check(r == 0 && get() == 0, "creds: setuid() that makes the task non-dumpable ends tracing",
	      "enable %ld, GET %ld", r, get());
}

/* ---- the LBR source: two processes on one CPU ---------------------------- */

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static __attribute__((noinline)) int pong_work(int x)
{
	int i;

	for (i = 0; i < 50; i++)	/* more branches than the LBR holds */
		x = late_leaf(x + i);
	return x;
}

/* `btsabi-hi lbr-pong`: answers each byte on stdin after 100+ branches. */
static void lbr_pong(void)
{
	char c;

	while (read(0, &c, 1) == 1) {
		c += pong_work(c) & 1;
		if (write(1, &c, 1) != 1)
			break;
	}
	exit(0);
}

/*
 * `btsabi lbr-pingpong`: on CPU 0 with btsabi-hi (linked at 0x20000000)
 * as its partner, 20 round trips; after the last it crashes within a few
 * branches: with the LBR source its core's note may hold only its own.
 */
static void lbr_pingpong(void)
{
	int to[2], from[2], i;
	char c = 1;
	pid_t pid;

	pin_cpu0();
	if (pipe(to) || pipe(from))
		exit(2);
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl("/bin/btsabi-hi", "btsabi-hi", "lbr-pong", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 20; i++)
		if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
			exit(3);
	((void (*)(void))0)();
}

/* ---- a ring allocation that fails ---------------------------------------- */

#define FAIL_PAGE_ALLOC "/sys/kernel/debug/fail_page_alloc/"

/*
 * fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC) for the tasks marked with
 * make-it-fail, every allocation of order 4 or more, sleeping ones
 * included, `times` of them (-1: all): a 4096-record ring (96 KiB, order
 * 5) cannot be had, the descriptor and slab pages (order 3 at most) can.
 * verbose 2: an injected failure of an allocation without __GFP_NOWARN
 * prints "FAULT_INJECTION: forcing a failure." and a stack, as the
 * allocator's own "page allocation failure" splat would (lib/fault-inject.c
 * skips both for __GFP_NOWARN).  0 or -errno.
 */
static int fail_big_allocations(const char *times)
{
	static const char *const attr[][2] = {
		{ "task-filter", "Y" }, { "probability", "100" }, { "interval", "1" },
		{ "space", "0" }, { "verbose", "2" }, { "min-order", "4" },
		{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" },
	};
	char path[128];
	unsigned int i;
	int r;

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);	/* or already */
	for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++) {
		snprintf(path, sizeof(path), FAIL_PAGE_ALLOC "%s", attr[i][0]);
		r = write_file(path, attr[i][1]);
		if (r)
			return r;
	}
	return write_file(FAIL_PAGE_ALLOC "times", times);
}

/* The kernel log holds s (klogctl READ_ALL: the whole ring buffer). */
static int klog_has(const char *s)
{
	static char buf[1 << 20];
	int n = klogctl(3, buf, sizeof(buf) - 1);	/* SYSLOG_ACTION_READ_ALL */

	if (n < 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

/*
 * A user with RLIMIT_MEMLOCK of exactly one 4096-record ring (96 KiB):
 * its first ENABLE's ring cannot be allocated (one injected failure),
 * ENOMEM, untraced, VmPin unchanged; the second, with nothing failing,
 * gets the ring: the first charged nothing to the user's locked_vm that
 * it kept.  make-it-fail is set by root before the uid changes (writing
 * it needs CAP_SYS_RESOURCE).
 */
static void alloc_fail_uncharged(void)
{
	long base, en, pin, again;

	if (fail_big_allocations("1") || write_file("/proc/self/make-it-fail", "1")) {
		check(0, "alloc: fail_page_alloc set up for one failure", "%s", strerror(errno));
		return;
	}
	become_user(96);
	base = vmpin();
	en = bts(PR_BTS_CRASH_ENABLE, 4096);
	pin = vmpin();
	check(en == -ENOMEM && get() == 0 && pin == base,
	      "alloc: a user's ENABLE whose ring cannot be allocated is ENOMEM, untraced, VmPin unchanged",
	      "ret %ld, GET %ld, VmPin %ld -> %ld kB", en, get(), base, pin);
	again = bts(PR_BTS_CRASH_ENABLE, 4096);
	check(again == 0 && get() == 4096 && vmpin() - base == 96,
	      "alloc: then the same ring within the same 96 KiB RLIMIT_MEMLOCK: nothing was left charged",
	      "ret %ld, GET %ld, VmPin %ld -> %ld kB", again, get(), base, vmpin());
}

/*
 * The ring's allocation fails (issue 26 §6): ENABLE is ENOMEM and leaves
 * the caller untraced; a fork whose inherited ring cannot be had runs
 * untraced (the rate-limited "child not traced" line) while the parent
 * keeps its ring; nothing stays charged (alloc_fail_uncharged()); no
 * allocation-failure splat and no stack either way (the ring is asked for
 * with __GFP_NOWARN | __GFP_NORETRY: without the first, fail_page_alloc's
 * verbose 2 prints "FAULT_INJECTION" and a stack).  Root here: no
 * RLIMIT_MEMLOCK.
 */
static void alloc_fails_cleanly(void)
{
	int r = fail_big_allocations("-1"), st = -1;
	long en;
	pid_t pid;

	check(r == 0, "alloc: fail_page_alloc set up for this task", "%s", strerror(-r));
	write_file("/proc/self/make-it-fail", "1");
	en = bts(PR_BTS_CRASH_ENABLE, 4096);
	write_file("/proc/self/make-it-fail", "0");
	check(en == -ENOMEM && get() == 0,
	      "alloc: ENABLE whose ring cannot be allocated is ENOMEM, nothing traced",
	      "ret %ld, GET %ld", en, get());
	en = bts(PR_BTS_CRASH_ENABLE, 4096);
	write_file("/proc/self/make-it-fail", "1");
	pid = fork();
	if (pid == 0)
		_exit(get() == 0 ? 0 : 1);
	write_file("/proc/self/make-it-fail", "0");
	waitpid(pid, &st, 0);
	check(en == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && get() == 4096,
	      "alloc: a fork whose ring cannot be allocated runs untraced, the parent keeps its ring",
	      "ENABLE %ld, child status %d, GET %ld", en, st, get());
	check(klog_has("child not traced: -12"), "alloc: the kernel says the child is not traced",
	      "no \"child not traced: -12\" in the kernel log");
	bts(PR_BTS_CRASH_DISABLE, 0);
	st = in_child(alloc_fail_uncharged);
	check(st == 0, "alloc: the unprivileged case ran", "child status %d", st);
	check(!klog_has("page allocation failure"), "alloc: no allocation-failure splat",
	      "\"page allocation failure\" in the kernel log");
	check(!klog_has("FAULT_INJECTION: forcing a failure"),
	      "alloc: no stack for the failures (the ring is asked for with __GFP_NOWARN)",
	      "fail_page_alloc printed \"FAULT_INJECTION: forcing a failure\" and a stack: an allocation without __GFP_NOWARN");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "probe")) {
		printf("GET=%ld EUID=%ld\n", get(), (long)geteuid());
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "lbr-pingpong"))
		lbr_pingpong();
	if (argc > 1 && !strcmp(argv[1], "lbr-pong"))
		lbr_pong();
	if (argc > 1 && !strcmp(argv[1], "late-enable")) {
		late_enable_then_crash();
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "alloc-fail")) {
		alloc_fails_cleanly();
		printf("btsabi: done\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "movss")) {
		movss_then_crash();
		return 1;
	}
	in_child(enable_keeps_on_einval);
	in_child(enable_keeps_on_enomem);
	in_child(per_process);
	in_child(per_process_all_or_nothing);
	in_child(per_process_fork_race);
	sysctl_bounds();
	in_child(pinned_shows);
	in_child(mlock_shares_limit);
	in_child(released_at_exit);
	in_child(io_workers_untraced);
	in_child(own_tf);
	in_child(ptrace_steps);
	in_child(fork_at_pids_limit);
	secure_exec();
	in_child(setuid_drops);
	printf("btsabi: done\n");
	return 0;
}
