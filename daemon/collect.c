// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's collection pipeline for one crash (docs/btsdumpd.md "What runs
 * where"): rate limit, spool the core from its pipe in bounded memory,
 * analyse it in an unprivileged child, store core + reports + meta under a
 * temporary name and rename, log one journal entry, vacuum.  Runs in the
 * handler (direct mode) or in a service instance; one crash per process.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdumpd.h"

#define SPOOL_CHUNK	(64 * 1024)
#define SPACE_CHECK	(16ULL << 20)	/* statvfs every 16 MiB written */
#define REPORT_ROOM	(256 * 1024)	/* given back by a spool on a full disk */
#define NOBODY		65534
#define SPOOL_NAME	"core"
#define ANALYSIS_NAME	"analysis"	/* the child's findings, meta format */
#define STALE_SEC	3600	/* a .#ID this old is a handler that died */

static int store_fd = -1;

void btsdumpd_load_config(struct btsdumpd_ctx *c)
{
	btsdumpd_config_defaults(&c->cfg);
	btsdumpd_config_load(&c->cfg, c->config_path, btsdumpd_warn);
}

int btsdumpd_store_open(struct btsdumpd_ctx *c)
{
	if (store_fd >= 0)
		return 0;
	if (!mkdir(c->store, 0755))
		chmod(c->store, 0755);	/* listable; entries protect themselves */
	else if (errno != EEXIST)
		return -errno;
	store_fd = open(c->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return store_fd < 0 ? -errno : 0;
}

static uint64_t fs_size(const struct statvfs *v)
{
	return (uint64_t)v->f_blocks * v->f_frsize;
}

/* Reads and throws away the rest of a core, so the kernel finishes. */
static uint64_t drain(int fd)
{
	static char buf[SPOOL_CHUNK];
	uint64_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		total += n;
	}
	return total;
}

/* ---- Rate limit ----------------------------------------------------------
 * STORE/.ratelimit holds "WINDOW_START STORED SUPPRESSED PREV_SUPPRESSED",
 * updated under flock by every crash.  Returns true when this crash is over
 * the burst; *suppressed is then the count in this window, else the count
 * suppressed in the previous window (reported once by the next entry). */
static bool rate_limited(struct btsdumpd_ctx *c, unsigned long long *suppressed)
{
	unsigned long long start = 0, stored = 0, supp = 0, prev = 0;
	unsigned long long now = time(NULL);
	char buf[128];
	bool limited = false;
	ssize_t n;
	int fd;

	*suppressed = 0;
	if (!c->cfg.rate_limit_interval_sec || !c->cfg.rate_limit_burst)
		return false;
	fd = openat(store_fd, ".ratelimit", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		btsdumpd_warn("rate limit state: %m; not limiting");
		if (fd >= 0)
			close(fd);
		return false;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%llu %llu %llu %llu", &start, &stored, &supp, &prev) != 4)
		start = stored = supp = prev = 0;
	if (now < start || now - start >= c->cfg.rate_limit_interval_sec) {
		prev += supp;	/* not reported yet: carried until an entry says it */
		start = now;
		stored = supp = 0;
	}
	if (stored >= c->cfg.rate_limit_burst) {
		limited = true;
		*suppressed = ++supp;
	} else {
		stored++;
		*suppressed = prev;
		prev = 0;
	}
	n = snprintf(buf, sizeof(buf), "%llu %llu %llu %llu\n", start, stored, supp, prev);
	if (pwrite(fd, buf, n, 0) != n || ftruncate(fd, n))
		btsdumpd_warn("rate limit state: %m");
	close(fd);
	return limited;
}

/* ---- Entries ------------------------------------------------------------- */

int btsdumpd_entry_begin(struct btsdumpd_ctx *c, const char *id_base, int *dirfd)
{
	char tmp[sizeof(c->id) + 4];
	int k, ret = btsdumpd_store_open(c);

	if (ret)
		return ret;
	for (k = 0; k < 1000; k++) {
		if (k)
			snprintf(c->id, sizeof(c->id), "%s.%d", id_base, k);
		else
			snprintf(c->id, sizeof(c->id), "%s", id_base);
		if (!faccessat(store_fd, c->id, F_OK, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(tmp, sizeof(tmp), ".#%s", c->id);
		if (mkdirat(store_fd, tmp, 0700)) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		*dirfd = openat(store_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (*dirfd < 0)
			return -errno;
		btsdumpd_meta_set(&c->meta, "ID", c->id);
		return 0;
	}
	return -EEXIST;
}

/* Mode and ACL of one file (or the directory) of an entry. */
static int protect(int fd, uid_t reader, bool dir)
{
	if (fchmod(fd, dir ? 0750 : 0640))
		return -errno;
	return reader ? btsdumpd_acl_grant_user(fd, reader, dir) : 0;
}

static int protect_files(int dirfd, uid_t reader)
{
	static const char *const files[] = { BTSDUMPD_CORE_FILE, SPOOL_NAME,
					      BTSDUMPD_REPORT_TXT, BTSDUMPD_REPORT_JSON };
	int ret = 0, r, fd;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fd = openat(dirfd, files[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		r = protect(fd, reader, false);
		ret = ret ? ret : r;
		close(fd);
	}
	return ret;
}

/* meta is written last, then the directory gets its final name. */
int btsdumpd_entry_commit(struct btsdumpd_ctx *c, int dirfd, uid_t reader)
{
	char tmp[sizeof(c->id) + 4];
	int ret, fd;

	btsdumpd_meta_set(&c->meta, "VERSION", "1");
	if (!btsdumpd_meta_get(&c->meta, "KIND"))
		btsdumpd_meta_set(&c->meta, "KIND", "process");
	ret = protect_files(dirfd, reader);
	if (!ret)
		ret = protect(dirfd, reader, true);
	btsdumpd_meta_set(&c->meta, "ACL", ret == -EOPNOTSUPP ? "unsupported" :
			  reader ? "set" : "root");
	if (ret && ret != -EOPNOTSUPP)
		btsdumpd_warn("%s: permissions: %s", c->id, strerror(-ret));
	fd = openat(dirfd, BTSDUMPD_META, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	ret = btsdumpd_meta_write_fd(fd, &c->meta);
	if (!ret)
		ret = protect(fd, reader, false);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), ".#%s", c->id);
	if (renameat(store_fd, tmp, store_fd, c->id))
		return -errno;
	fsync(store_fd);
	return 0;
}

/* Removes a directory of the store and its files (no subdirectories). */
static void remove_dir(const char *name)
{
	static const char *const files[] = { BTSDUMPD_META, BTSDUMPD_CORE_FILE,
		BTSDUMPD_REPORT_TXT, BTSDUMPD_REPORT_JSON, SPOOL_NAME, "core.zst.tmp",
		ANALYSIS_NAME, "meta.tmp" };
	int fd = openat(store_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	size_t i;

	if (fd >= 0) {
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			unlinkat(fd, files[i], 0);
		close(fd);
	}
	unlinkat(store_fd, name, AT_REMOVEDIR);
}

/* ---- Spool --------------------------------------------------------------- */

struct spool {
	uint64_t received;	/* bytes the kernel sent */
	uint64_t written;	/* bytes in the spool file */
	bool stopped;		/* the spool ended before the core */
	bool keep;		/* the spool is good enough to store */
	char reason[256];
};

/* False (and why set) when writing more would leave less than KeepFree. */
static bool space_ok(struct btsdumpd_ctx *c, uint64_t more, char *why, size_t len)
{
	struct statvfs v;
	uint64_t avail, keep;

	if (fstatvfs(store_fd, &v) || !v.f_blocks)	/* ramfs: no accounting */
		return true;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	keep = btsdumpd_size_resolve(&c->cfg.keep_free, fs_size(&v));
	if (avail >= keep + more)
		return true;
	snprintf(why, len, "KeepFree: %llu bytes free, %llu to keep",
		 (unsigned long long)avail, (unsigned long long)keep);
	return false;
}

static void spool_stop(struct spool *s, bool keep, const char *why)
{
	s->stopped = true;
	s->keep = keep;
	if (why)
		snprintf(s->reason, sizeof(s->reason), "%s", why);
}

static void spool_core(struct btsdumpd_ctx *c, int in, int out, struct spool *s)
{
	static char buf[SPOOL_CHUNK];
	uint64_t max = btsdumpd_size_resolve(&c->cfg.process_size_max, 0);
	uint64_t next_check = 0;
	char why[128];
	ssize_t n;
	int ret;

	*s = (struct spool){ .keep = true };
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !s->stopped) {
				snprintf(why, sizeof(why), "reading the core: %s", strerror(errno));
				spool_stop(s, true, why);
			}
			break;
		}
		s->received += n;
		if (s->stopped)
			continue;
		if (s->written + n > max) {
			n = max - s->written;
			snprintf(why, sizeof(why), "core larger than ProcessSizeMax=%llu, cut",
				 (unsigned long long)max);
			spool_stop(s, true, why);
		}
		if (s->written >= next_check) {
			next_check = s->written + SPACE_CHECK;
			if (!space_ok(c, 0, s->reason, sizeof(s->reason))) {
				spool_stop(s, false, NULL);
				continue;
			}
		}
		ret = btsdumpd_write_all(out, buf, n);
		if (ret) {
			snprintf(why, sizeof(why), "writing the spool: %s", strerror(-ret));
			spool_stop(s, false, why);
			/* room for the report: the trace notes are at the start */
			s->written = s->written > REPORT_ROOM ? s->written - REPORT_ROOM : 0;
			if (ftruncate(out, s->written))
				btsdumpd_warn("truncating the spool: %m");
			continue;
		}
		s->written += n;
	}
}

/* ---- Analysis, in an unprivileged child ----------------------------------- */

/* The analysis runs as the crashing user when that is a regular user, as
 * systemd-coredump does its work: the executable and libraries of a
 * program in a mode-0700 home are readable to that user and to nobody
 * else.  A system user's crash (uid <= SYSTEM_UID_MAX, systemd's and
 * Debian's SYS_UID_MAX), root's, and that of a process that changed
 * credentials (DUMP_MODE 2: its memory may hold what its user must not
 * read, and the analysis reads the core) run as AnalyzeUser (its uid and
 * gid here); everything runs as the caller when that is not root.
 * "nobody" need not be in the user database. */
#define SYSTEM_UID_MAX	999

struct analyzer {
	uid_t uid;
	gid_t gid;
};

static bool analyze_as_crasher(const struct btsdumpd_meta *meta, struct analyzer *a)
{
	const char *uid = btsdumpd_meta_get(meta, "UID"), *gid = btsdumpd_meta_get(meta, "GID");
	const char *mode = btsdumpd_meta_get(meta, "DUMP_MODE");
	unsigned long u, g;
	char *end;

	if (!uid || !gid || (mode && strcmp(mode, "1")))
		return false;
	errno = 0;
	u = strtoul(uid, &end, 10);
	if (errno || *end || !*uid || u <= SYSTEM_UID_MAX || u >= NOBODY)
		return false;
	g = strtoul(gid, &end, 10);
	if (errno || *end || !*gid || g >= NOBODY)
		return false;
	*a = (struct analyzer){ (uid_t)u, (gid_t)g };
	return true;
}

static int analyzer_resolve(const char *user, const struct btsdumpd_meta *meta,
			    struct analyzer *a)
{
	struct passwd *pw;

	*a = (struct analyzer){ getuid(), getgid() };
	if (geteuid() != 0 || analyze_as_crasher(meta, a))
		return 0;
	pw = getpwnam(user);
	if (pw)
		*a = (struct analyzer){ pw->pw_uid, pw->pw_gid };
	else if (!strcmp(user, "nobody"))
		*a = (struct analyzer){ NOBODY, NOBODY };
	else
		return -ENOENT;
	return 0;
}

static int drop_privileges(const struct analyzer *a, uint64_t core_bytes, unsigned int timeout)
{
	struct rlimit as = { .rlim_cur = core_bytes + (1ULL << 30) };
	struct rlimit cpu = { .rlim_cur = timeout, .rlim_max = timeout + 1 };
	struct rlimit core = { 1, 1 };	/* a pipe core_pattern never dumps at 1 */
	struct rlimit hard;

	if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(a->gid, a->gid, a->gid) ||
			       setresuid(a->uid, a->uid, a->uid)))
		return -errno;
	as.rlim_max = as.rlim_cur;
	/* under a hard limit of 0 (LimitCORE=0), 0: raising it needs
	 * CAP_SYS_RESOURCE, and 0 dumps nothing either */
	if (!getrlimit(RLIMIT_CORE, &hard) && hard.rlim_max < core.rlim_max)
		core = (struct rlimit){ hard.rlim_max, hard.rlim_max };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_CPU, &cpu))
		return -errno;
#ifndef __SANITIZE_ADDRESS__	/* ASan's shadow alone is terabytes of address space */
	if (setrlimit(RLIMIT_AS, &as))
		return -errno;
#endif
	return 0;
}

/* The journal's summary, from the model: the faulting thread and its last
 * journal_branches records' branch lines (markers left out), newest last. */
static void summarize(struct btsdumpd_ctx *c, const struct btsdec_model *model,
		      size_t nr_traces, struct btsdumpd_meta *m)
{
	const struct btsdec_model_thread *t = model->nr_threads ? &model->threads[0] : NULL;
	size_t n = c->cfg.journal_branches, i, len = 0;
	char *out = NULL;
	bool first = true;
	FILE *f;

	btsdumpd_meta_setf(m, "TRACE_THREADS", "%zu", nr_traces);
	if (!t || !t->has_trace || !n)
		return;
	btsdumpd_meta_setf(m, "FAULT_TID", "%d", (int)t->tid);
	f = open_memstream(&out, &len);
	if (!f)
		return;
	for (i = n < t->d.nr ? t->d.nr - n : 0; i < t->d.nr; i++) {
		struct btsdec_branch b;

		btsdec_decoded_branch(&t->d, i, &b);
		if (b.kind == BTSDEC_K_MARKER)
			continue;
		fputs(first ? "" : "\n", f);
		btsdec_render_branch_line(f, i, &b);
		first = false;
	}
	fclose(f);
	if (out && *out)
		btsdumpd_meta_set(m, "LAST_BRANCHES", out);
	free(out);
	if (!t->has_fault)
		return;
	out = NULL;
	f = open_memstream(&out, &len);
	if (!f)
		return;
	btsdec_render_fault_line(f, t);
	fclose(f);
	if (out && *out)
		btsdumpd_meta_set(m, "FAULT", out);
	free(out);
}

/* Decodes the core once; the text and JSON reports and the journal's
 * summary are renderings of that one model. */
static void report_core(struct btsdumpd_ctx *c, struct btsdec_core *core,
			struct btsdec_sym *sym, struct btsdec_classifier *cls,
			const char *exe, FILE *txt, FILE *json, struct btsdumpd_meta *m)
{
	struct btsdec_model_opts mo = { .executable = exe };
	struct btsdec_render_opts ro = { 0 };
	struct btsdec_model *model;
	struct btsdec_err err;

	if (btsdec_model_build(core, sym, cls, &mo, &model, &err)) {
		btsdumpd_meta_setf(m, "TRACE_WARNING", "report: %s", err.msg);
		fprintf(txt, "btsdumpd: report: %s\n", err.msg);
		btsdec_json_error(json, err.msg, NULL);
		return;
	}
	if (!btsdec_core_nr_traces(core)) {
		fprintf(txt, "btsdumpd: no branch trace in this core (the process was not "
			"traced, or its kernel lacks btscrash)%s\n",
			btsdec_core_nr_rejects(core) ? "; malformed trace notes were rejected" : "");
	} else {
		if (btsdec_render_text(txt, model, &ro, &err))
			fprintf(txt, "btsdumpd: report: %s\n", err.msg);
		summarize(c, model, btsdec_core_nr_traces(core), m);
	}
	if (btsdec_render_json(json, model, &ro, &err))
		btsdumpd_meta_setf(m, "TRACE_WARNING", "JSON report: %s", err.msg);
	btsdec_model_free(model);
}

static void analysis_child(struct btsdumpd_ctx *c, const struct analyzer *a, int spool_fd,
			   int txt_fd, int json_fd, int res_fd, uint64_t spool_bytes)
{
	const char *exe = btsdumpd_meta_get(&c->meta, "EXE");
	struct btsdec_symopts so = { .executable = exe };
	struct btsdec_classifier *cls = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_core *core;
	struct btsdumpd_meta m = { 0 };
	struct btsdec_err err;
	FILE *txt = fdopen(txt_fd, "w"), *json = fdopen(json_fd, "w");
	int ret;

	ret = drop_privileges(a, spool_bytes, c->cfg.analyze_timeout_sec);
	if (ret || !txt || !json) {
		btsdumpd_meta_set(&m, "TRACE", "error");
		btsdumpd_meta_setf(&m, "TRACE_ERROR", "analysis: dropping privileges to uid %u: %s",
				   (unsigned int)a->uid, strerror(-ret));
		goto out;
	}
	if (exe && access(exe, R_OK))
		so.executable = NULL;	/* dwfl finds it by build-id or NT_FILE */
	ret = btsdec_core_open_fd(spool_fd, "core", &core, &err);
	if (ret) {
		btsdumpd_meta_set(&m, "TRACE", "error");
		btsdumpd_meta_set(&m, "TRACE_ERROR", err.msg);
		fprintf(txt, "btsdumpd: no trace report: %s\n", err.msg);
		btsdec_json_error(json, err.msg, NULL);
		goto out;
	}
	if (btsdec_sym_open_core(core, &so, &sym, &err))
		btsdumpd_meta_setf(&m, "TRACE_WARNING", "no symbols: %s", err.msg);
	if (btsdec_classifier_new(&cls, &err))
		btsdumpd_meta_setf(&m, "TRACE_WARNING", "branches not classified: %s", err.msg);
	if (btsdec_core_nr_rejects(core)) {
		btsdumpd_meta_setf(&m, "TRACE_REJECTED", "%zu", btsdec_core_nr_rejects(core));
		btsdumpd_meta_set(&m, "TRACE_ERROR", btsdec_core_reject(core, 0));
	}
	if (!btsdec_core_nr_traces(core))
		btsdumpd_meta_set(&m, "TRACE", btsdec_core_nr_rejects(core) ? "error" : "absent");
	else
		btsdumpd_meta_set(&m, "TRACE", "present");
	report_core(c, core, sym, cls, exe, txt, json, &m);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
out:
	if (txt)
		fflush(txt);
	if (json)
		fflush(json);
	_exit(btsdumpd_meta_write_fd(res_fd, &m) ? 1 : 0);
}

/* Reaps pid into *status; 0 or -errno. */
static int reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Milliseconds left until end (CLOCK_MONOTONIC), 0 once past it. */
static int ms_left(const struct timespec *end)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (end->tv_sec - now.tv_sec) * 1000LL + (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/* SIGKILL to the analysis child, which runs as a->uid.  The handler keeps
 * no CAP_KILL, so as root it takes that uid as its effective uid for the
 * kill(2), then 0 again (allowed and giving its capabilities back: its real
 * and saved uids stay 0). */
static void kill_child(pid_t pid, const struct analyzer *a)
{
	if (!kill(pid, SIGKILL) || errno != EPERM || geteuid() != 0)
		return;
	if (setresuid(-1, a->uid, -1)) {
		btsdumpd_warn("analysis: killing it as uid %u: %m", (unsigned int)a->uid);
		return;
	}
	if (kill(pid, SIGKILL))
		btsdumpd_warn("analysis: killing it: %m");
	if (setresuid(-1, 0, -1))
		btsdumpd_warn("analysis: back to uid 0: %m");
	/* the euid change cleared the dumpable flag (fs.suid_dumpable=0):
	 * restore it, nothing about this process changed (LeakSanitizer's
	 * exit-time check, which ptraces the process, needs it) */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* Waits for the analysis child at most timeout seconds (wall clock), then
 * kills it.  Its pidfd turns readable when it exits: one poll(), no
 * polling loop.  pidfd_open() needs Linux 5.3 (btscrash's kernel is 6.1);
 * there is no fallback: without it (ENOSYS, or a seccomp filter's EPERM)
 * the child is killed and the error returned, so the entry says the
 * analysis failed and why, and the core is stored all the same. */
static int wait_child(pid_t pid, const struct analyzer *a, unsigned int timeout, int *status)
{
	struct pollfd p = { .fd = pidfd_open(pid, 0), .events = POLLIN };
	struct timespec end;
	int ret = 0, n;

	if (p.fd < 0) {
		ret = -errno;
		goto kill;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout;
	do {
		n = ms_left(&end);
		n = n ? poll(&p, 1, n) : 0;
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		ret = -errno;
	else if (n == 0)
		ret = -ETIMEDOUT;
	close(p.fd);
	if (!ret)
		return reap(pid, status);
kill:
	kill_child(pid, a);	/* not reaped yet: pid still names the child */
	reap(pid, status);
	return ret;
}

static int create_file(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Replaces a partial JSON report by the error document (docs/json.md). */
static void json_error(int fd, const char *why)
{
	FILE *f;

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		return;
	f = fdopen(dup(fd), "w");
	if (!f)
		return;
	btsdec_json_error(f, why, NULL);
	fclose(f);
}

/* Runs the analysis; merges its findings into c->meta. */
static void analyze(struct btsdumpd_ctx *c, int dirfd, int spool_fd, uint64_t bytes)
{
	int txt = create_file(dirfd, BTSDUMPD_REPORT_TXT);
	int json = create_file(dirfd, BTSDUMPD_REPORT_JSON);
	int res = create_file(dirfd, ANALYSIS_NAME);
	struct btsdumpd_meta m = { 0 };
	struct analyzer a;
	char why[160] = "";
	int status = 0, ret;
	pid_t pid;
	size_t i;

	if (txt < 0 || json < 0 || res < 0) {
		snprintf(why, sizeof(why), "analysis: creating the report: %s", strerror(errno));
		goto fail;
	}
	ret = analyzer_resolve(c->cfg.analyze_user, &c->meta, &a);
	if (ret) {
		snprintf(why, sizeof(why), "analysis: dropping privileges to %s: %s",
			 c->cfg.analyze_user, strerror(-ret));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, sizeof(why), "analysis: fork: %s", strerror(errno));
		goto fail;
	}
	if (!pid)
		analysis_child(c, &a, spool_fd, txt, json, res, bytes);
	ret = wait_child(pid, &a, c->cfg.analyze_timeout_sec, &status);
	if (ret == -ETIMEDOUT)
		snprintf(why, sizeof(why), "analysis timed out after %u s (AnalyzeTimeoutSec)",
			 c->cfg.analyze_timeout_sec);
	else if (ret)
		snprintf(why, sizeof(why), "analysis: waiting for it: %s%s", strerror(-ret),
			 ret == -ENOSYS ? " (pidfd_open needs Linux 5.3)" : "");
	else if (!WIFEXITED(status))
		snprintf(why, sizeof(why), "analysis failed: %s",
			 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no exit status");
	else if (btsdumpd_meta_read_at(dirfd, ANALYSIS_NAME, &m) || !btsdumpd_meta_get(&m, "TRACE"))
		snprintf(why, sizeof(why), "analysis: no result (exit status %d)",
			 WEXITSTATUS(status));
	for (i = 0; !*why && i < m.n; i++)
		btsdumpd_meta_set(&c->meta, m.keys[i], m.vals[i]);
fail:
	if (*why) {
		btsdumpd_meta_set(&c->meta, "TRACE", "error");
		btsdumpd_meta_set(&c->meta, "TRACE_ERROR", why);
		if (txt >= 0)
			dprintf(txt, "\nbtsdumpd: %s\n", why);
		if (json >= 0)
			json_error(json, why);
	}
	btsdumpd_meta_free(&m);
	if (txt >= 0)
		close(txt);
	if (json >= 0)
		close(json);
	if (res >= 0)
		close(res);
	unlinkat(dirfd, ANALYSIS_NAME, 0);
}

/* ---- Storing the core ------------------------------------------------------ */

static void core_dropped(struct btsdumpd_ctx *c, const char *why)
{
	btsdumpd_meta_set(&c->meta, "CORE", "dropped");
	btsdumpd_meta_set(&c->meta, "CORE_REASON", why);
}

/* Compresses the spool into core.zst (or keeps it as is with Compress=no). */
static void store_core(struct btsdumpd_ctx *c, int dirfd, int spool_fd, const struct spool *s)
{
	uint64_t ext_max = btsdumpd_size_resolve(&c->cfg.external_size_max, 0);
	uint64_t out_bytes = 0;
	char why[300];
	int out, ret;

	if (c->cfg.storage == BTSDUMPD_STORAGE_NONE) {
		btsdumpd_meta_set(&c->meta, "CORE", "none");
		return;
	}
	if (!s->keep)
		return core_dropped(c, s->reason);
	if (s->received > ext_max) {
		snprintf(why, sizeof(why), "core of %llu bytes larger than ExternalSizeMax=%llu",
			 (unsigned long long)s->received, (unsigned long long)ext_max);
		return core_dropped(c, why);
	}
	if (!c->cfg.compress) {		/* the spool itself is the stored core */
		btsdumpd_meta_set(&c->meta, "CORE", "stored");
		btsdumpd_meta_set(&c->meta, "CORE_FILE", SPOOL_NAME);
		btsdumpd_meta_setf(&c->meta, "CORE_STORED_SIZE", "%llu",
				   (unsigned long long)s->written);
		goto cut;
	}
	/* the compressed core is at most about the spool's size */
	if (!space_ok(c, s->written, why, sizeof(why)))
		return core_dropped(c, why);
	out = openat(dirfd, "core.zst.tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0 || lseek(spool_fd, 0, SEEK_SET))
		ret = -errno;
	else
		ret = btsdumpd_zstd_compress(spool_fd, out, 3, &out_bytes);
	if (!ret && fsync(out))
		ret = -errno;
	if (out >= 0)
		close(out);
	if (!ret && renameat(dirfd, "core.zst.tmp", dirfd, BTSDUMPD_CORE_FILE))
		ret = -errno;
	if (ret) {
		unlinkat(dirfd, "core.zst.tmp", 0);
		snprintf(why, sizeof(why), "storing the core: %s", strerror(-ret));
		return core_dropped(c, why);
	}
	btsdumpd_meta_set(&c->meta, "CORE", "stored");
	btsdumpd_meta_set(&c->meta, "CORE_FILE", BTSDUMPD_CORE_FILE);
	btsdumpd_meta_setf(&c->meta, "CORE_STORED_SIZE", "%llu", (unsigned long long)out_bytes);
cut:
	if (s->stopped)
		btsdumpd_meta_set(&c->meta, "CORE_REASON", s->reason);
}

/* ---- One crash ------------------------------------------------------------- */

static void entry_id_base(struct btsdumpd_ctx *c, char *buf, size_t len)
{
	const char *comm = btsdumpd_meta_get(&c->meta, "COMM");
	char safe[16];

	btsdumpd_sanitize_comm(comm ? comm : "", safe);
	snprintf(buf, len, "%s.%s.%s", btsdumpd_meta_get(&c->meta, "TIMESTAMP"),
		 btsdumpd_meta_get(&c->meta, "PID"), safe);
}

/* The journal entry (docs/btsdumpd.md "Journal"). */
static void log_crash(struct btsdumpd_ctx *c, unsigned long long ratelimited_before)
{
	const char *branches = btsdumpd_meta_get(&c->meta, "LAST_BRANCHES");
	const char *fault = btsdumpd_meta_get(&c->meta, "FAULT");
	const char *comm = btsdumpd_meta_get(&c->meta, "COMM");
	const char *cd_ts = btsdumpd_meta_get(&c->meta, "COREDUMP_TIMESTAMP");
	char *msg = NULL, entry[PATH_MAX + 64], before[64], cd_pid[48], cd_time[64];
	const char *extra[5] = { entry, NULL, NULL, NULL, NULL };
	size_t x = 1;
	int n;

	snprintf(entry, sizeof(entry), "BTSDUMPD_ENTRY=%s/%s", c->store, c->id);
	if (ratelimited_before) {
		snprintf(before, sizeof(before), "BTSDUMPD_RATELIMITED_BEFORE=%llu",
			 ratelimited_before);
		extra[x++] = before;
	}
	if (cd_ts) {	/* companion.c: systemd-coredump's keys, linking the entries */
		snprintf(cd_pid, sizeof(cd_pid), "COREDUMP_PID=%s",
			 btsdumpd_meta_get(&c->meta, "PID"));
		snprintf(cd_time, sizeof(cd_time), "COREDUMP_TIMESTAMP=%s", cd_ts);
		extra[x++] = cd_pid;
		extra[x++] = cd_time;
	}
	n = asprintf(&msg, "Process %s (%s) of user %s dumped core: %s.%s%s%s%s%s%s",
		     btsdumpd_meta_get(&c->meta, "PID"), comm ? comm : "?",
		     btsdumpd_meta_get(&c->meta, "UID"),
		     btsdumpd_meta_get(&c->meta, "SIGNAL_NAME"),
		     branches ? "\n\nLast branches of thread " : "",
		     branches ? btsdumpd_meta_get(&c->meta, "FAULT_TID") : "",
		     branches ? ":\n" : "", branches ? branches : "",
		     branches && fault ? "\n" : "", branches && fault ? fault : "");
	if (n < 0)
		return;
	btsdumpd_log_entry(LOG_CRIT, msg, &c->meta, extra);
	free(msg);
}

static void log_ratelimited(struct btsdumpd_ctx *c, unsigned long long count, uint64_t bytes)
{
	char field[64];
	const char *extra[] = { field, NULL };
	const char *comm = btsdumpd_meta_get(&c->meta, "COMM");
	char *msg;

	snprintf(field, sizeof(field), "BTSDUMPD_RATELIMITED=%llu", count);
	if (asprintf(&msg, "Process %s (%s) of user %s dumped core: %s; not stored: rate "
		     "limit (%u per %u s), %llu suppressed in this window, %llu bytes discarded",
		     btsdumpd_meta_get(&c->meta, "PID"), comm ? comm : "?",
		     btsdumpd_meta_get(&c->meta, "UID"), btsdumpd_meta_get(&c->meta, "SIGNAL_NAME"),
		     c->cfg.rate_limit_burst, c->cfg.rate_limit_interval_sec, count,
		     (unsigned long long)bytes) < 0)
		return;
	btsdumpd_log_entry(LOG_WARNING, msg, &c->meta, extra);
	free(msg);
}

int btsdumpd_collect(struct btsdumpd_ctx *c, int core_fd)
{
	unsigned long long suppressed;
	struct spool s;
	char base[96], tmp[sizeof(c->id) + 4];
	int ret, dirfd = -1, spool_fd;
	uid_t reader = strtoul(btsdumpd_meta_get(&c->meta, "UID"), NULL, 10);

	/* a process that changed credentials (SUID_DUMP_ROOT): its memory may
	 * hold what its user must not read; the entry stays root-only */
	if (!strcmp(btsdumpd_meta_get(&c->meta, "DUMP_MODE") ?: "", "2"))
		reader = 0;

	ret = btsdumpd_store_open(c);
	if (ret) {
		btsdumpd_log(LOG_ERR, "store %s: %s; core of PID %s discarded", c->store,
			     strerror(-ret), btsdumpd_meta_get(&c->meta, "PID"));
		drain(core_fd);
		close(core_fd);
		return ret;
	}
	if (rate_limited(c, &suppressed)) {
		log_ratelimited(c, suppressed, drain(core_fd));
		close(core_fd);
		return 0;
	}
	entry_id_base(c, base, sizeof(base));
	ret = btsdumpd_entry_begin(c, base, &dirfd);
	spool_fd = ret ? -1 : create_file(dirfd, SPOOL_NAME);
	if (spool_fd < 0) {
		ret = ret ? ret : -errno;
		btsdumpd_log(LOG_ERR, "store %s: new entry %s: %s; core of PID %s discarded",
			     c->store, base, strerror(-ret), btsdumpd_meta_get(&c->meta, "PID"));
		drain(core_fd);
		close(core_fd);
		goto out;
	}
	spool_core(c, core_fd, spool_fd, &s);
	close(core_fd);		/* the dumping process is released here */
	btsdumpd_meta_setf(&c->meta, "CORE_SIZE", "%llu", (unsigned long long)s.received);
	if (s.written < s.received)
		btsdumpd_meta_set(&c->meta, "CORE_TRUNCATED", "1");
	if (s.stopped)
		btsdumpd_log(LOG_WARNING, "%s: core cut at %llu of %llu bytes: %s", c->id,
			     (unsigned long long)s.written, (unsigned long long)s.received,
			     s.reason);
	analyze(c, dirfd, spool_fd, s.written);
	store_core(c, dirfd, spool_fd, &s);
	close(spool_fd);
	if (strcmp(btsdumpd_meta_get(&c->meta, "CORE_FILE") ?: "", SPOOL_NAME))
		unlinkat(dirfd, SPOOL_NAME, 0);
	ret = btsdumpd_entry_commit(c, dirfd, reader);
	if (ret && !strcmp(btsdumpd_meta_get(&c->meta, "CORE") ?: "", "stored")) {
		/* out of space for the metadata: keep the report, not the core */
		unlinkat(dirfd, BTSDUMPD_CORE_FILE, 0);
		unlinkat(dirfd, SPOOL_NAME, 0);
		unlinkat(dirfd, BTSDUMPD_META, 0);
		core_dropped(c, "no space left for the entry with its core");
		ret = btsdumpd_entry_commit(c, dirfd, reader);
	}
	if (ret) {
		btsdumpd_log(LOG_ERR, "store %s: entry %s: %s; removed", c->store, c->id,
			     strerror(-ret));
		snprintf(tmp, sizeof(tmp), ".#%s", c->id);
		remove_dir(tmp);
	}
	log_crash(c, suppressed);
	btsdumpd_vacuum(c, ret ? NULL : c->id);
out:
	if (dirfd >= 0)
		close(dirfd);
	return ret;
}

/* ---- Vacuum ---------------------------------------------------------------- */

static void remove_stale(void)
{
	int fd = dup(store_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".#", 2) &&
		    !fstatat(store_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISDIR(st.st_mode) && time(NULL) - st.st_mtime > STALE_SEC) {
			btsdumpd_log(LOG_NOTICE, "removing %s, left by a handler that died",
				     de->d_name);
			remove_dir(de->d_name);
		}
	closedir(d);
}

/* Drops the core of entry e; returns the bytes freed. */
static uint64_t vacuum_core(struct btsdumpd_entry *e, const char *why)
{
	const char *file = btsdumpd_meta_get(&e->meta, "CORE_FILE");
	int fd = openat(store_fd, e->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	uint64_t freed = 0;
	struct stat st;
	int mfd;

	if (fd < 0 || !file || strchr(file, '/'))
		goto out;
	if (fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) || unlinkat(fd, file, 0))
		goto out;
	freed = st.st_size;
	btsdumpd_meta_set(&e->meta, "CORE", "dropped");
	btsdumpd_meta_set(&e->meta, "CORE_REASON", why);
	btsdumpd_meta_set(&e->meta, "CORE_FILE", "");
	mfd = openat(fd, "meta.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (mfd >= 0) {
		/* same mode and ACL as the meta it replaces */
		if (!btsdumpd_meta_write_fd(mfd, &e->meta) &&
		    !fstatat(fd, BTSDUMPD_META, &st, 0) && !fchmod(mfd, st.st_mode & 07777))
			renameat(fd, "meta.tmp", fd, BTSDUMPD_META);
		close(mfd);
		unlinkat(fd, "meta.tmp", 0);
	}
out:
	if (fd >= 0)
		close(fd);
	return freed;
}

int btsdumpd_vacuum(struct btsdumpd_ctx *c, const char *keep)
{
	struct btsdumpd_entry *e = NULL;
	uint64_t total = 0, max_use, keep_free, avail, f;
	struct statvfs v;
	size_t n = 0, i;
	int lock, ret, pass;

	if ((ret = btsdumpd_store_open(c)))
		return ret;
	lock = openat(store_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) || fstatvfs(store_fd, &v)) {
		ret = -errno;
		goto out;
	}
	remove_stale();
	max_use = btsdumpd_size_resolve(&c->cfg.max_use, fs_size(&v));
	keep_free = v.f_blocks ? btsdumpd_size_resolve(&c->cfg.keep_free, fs_size(&v)) : 0;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if ((ret = btsdumpd_store_list(c->store, &e, &n)))
		goto out;
	for (i = 0; i < n; i++)
		total += e[i].bytes;
	/* first the cores of the oldest entries, then whole entries */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && (total > max_use || avail < keep_free); i++) {
			if (keep && !strcmp(e[i].id, keep))
				continue;
			if (pass == 0) {
				f = vacuum_core(&e[i], total > max_use ? "vacuum: MaxUse" :
						"vacuum: KeepFree");
			} else {
				f = e[i].bytes;
				remove_dir(e[i].id);
			}
			if (f)
				btsdumpd_log(LOG_INFO, "vacuum: %s %s (%llu bytes)",
					     pass ? "removed entry" : "removed the core of",
					     e[i].id, (unsigned long long)f);
			total -= f < total ? f : total;
			avail += f;
			if (pass == 0)
				e[i].bytes -= f < e[i].bytes ? f : e[i].bytes;
		}
	btsdumpd_entries_free(e, n);
out:
	if (lock >= 0)
		close(lock);
	return ret;
}
