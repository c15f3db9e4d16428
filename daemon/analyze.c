// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's analysis of one spooled core (docs/btsdumpd.md "What runs
 * where", step 3): a child that drops to the crashing user (a regular
 * uid) or AnalyzeUser, with no_new_privs, address-space, CPU and core
 * limits, decodes the core with the library (lib/; symbols from the
 * process's own files where it has their descriptors, mapped.c) into
 * report.txt, report.json and the journal summary; the parent waits on
 * its pidfd with a wall-clock timeout, kills it past that, and merges its
 * findings into the crash's meta.  Called by collect.c, process context.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdumpd.h"
#include "entries.h"
#include "zstdio.h"

#define ZSTD_LEVEL	3	/* the reports' compression, as the core's */

#define NOBODY		65534

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

static bool analyze_as_crasher(const struct btsdumpd_crash *cr, struct analyzer *a)
{
	if ((cr->have & (BTSDUMPD_HAVE_UID | BTSDUMPD_HAVE_GID)) !=
	    (BTSDUMPD_HAVE_UID | BTSDUMPD_HAVE_GID) || (cr->dump_mode >= 0 && cr->dump_mode != 1))
		return false;
	if (cr->uid <= SYSTEM_UID_MAX || cr->uid >= NOBODY || cr->gid >= NOBODY)
		return false;
	*a = (struct analyzer){ cr->uid, cr->gid };
	return true;
}

static int analyzer_resolve(const char *user, const struct btsdumpd_crash *cr,
			    struct analyzer *a)
{
	struct passwd *pw;

	*a = (struct analyzer){ getuid(), getgid() };
	if (geteuid() != 0 || analyze_as_crasher(cr, a))
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
		      size_t nr_traces, struct btsdumpd_analysis *an)
{
	const struct btsdec_model_thread *t = model->nr_threads ? &model->threads[0] : NULL;
	size_t n = c->cfg.journal_branches, i, len = 0, nr;
	char *out = NULL, num[32];
	bool first = true;
	int width;
	FILE *f;

	an->threads = nr_traces;
	an->has_threads = true;
	if (!t || !t->has_trace || !n)
		return;
	an->fault_tid = t->tid;
	an->has_tid = true;
	f = open_memstream(&out, &len);
	if (!f)
		return;
	/* the numbers aligned: as wide as the newest's */
	nr = btsdec_thread_nr_branches(t);	/* the inferred one counts */
	width = snprintf(num, sizeof(num), "%zu", nr);
	for (i = n < nr ? nr - n : 0; i < nr; i++) {
		struct btsdec_branch b;

		btsdec_thread_branch(t, i, &b);	/* the inferred one last */
		if (b.kind == BTSDEC_K_MARKER)
			continue;
		fputs(first ? "" : "\n", f);
		btsdec_render_branch_line(f, width, i, &b);
		first = false;
	}
	fclose(f);
	if (out && *out)
		btsdumpd_crash_set(&an->last_branches, out);
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
		btsdumpd_crash_set(&an->fault, out);
	free(out);
}

/* ---- the reports: zstd, at most ReportSizeMax bytes each ---- */

/* One more line at the end of a report (a zstd frame of its own). */
static void report_line(int fd, const char *fmt, ...)
{
	uint64_t total;
	va_list ap;
	FILE *f;

	if (lseek(fd, 0, SEEK_END) < 0 || !(f = btsdumpd_zstd_fopen_write(fd, ZSTD_LEVEL, 0, &total)))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* Replaces a JSON report by the error document (docs/json.md). */
static void json_error(int fd, const char *why)
{
	uint64_t total;
	FILE *f;

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) ||
	    !(f = btsdumpd_zstd_fopen_write(fd, ZSTD_LEVEL, 0, &total)))
		return;
	btsdec_json_error(f, why, NULL);
	fclose(f);
}

typedef int (*render_fn)(FILE *out, const struct btsdec_model *m,
			 const struct btsdec_render_opts *o, struct btsdec_err *err);

/* Renders the model into fd once, the newest o->last branches of each
 * thread (0: all); *total gets the bytes it wanted. */
static int render_once(int fd, render_fn render, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, uint64_t max, uint64_t *total,
		       struct btsdec_err *err)
{
	FILE *f;
	int r;

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) ||
	    !(f = btsdumpd_zstd_fopen_write(fd, ZSTD_LEVEL, max, total)))
		return btsdec_fail(err, -errno, "report: %s", strerror(errno));
	if (o->last && render == btsdec_render_text)
		fprintf(f, "btsdumpd: the newest %zu branches of each thread: the whole "
			"report is larger than ReportSizeMax=%llu bytes (btsdump on the core "
			"shows them all)\n\n", o->last, (unsigned long long)max);
	r = render(f, m, o, err);
	if (fclose(f) && !r)
		r = btsdec_fail(err, -EIO, "report: %s", strerror(errno));
	return r;
}

/* The longest trail of the model, in records. */
static size_t longest(const struct btsdec_model *m)
{
	size_t most = 0;

	for (size_t i = 0; i < m->nr_threads; i++)
		if (m->threads[i].d.nr > most)
			most = m->threads[i].d.nr;
	return most;
}

/* A report of at most max bytes (0: no limit): from *last (0: all) the
 * newest branches of each thread that fit, by proportion then halving;
 * *last gets the count kept, *cut whether even one branch each did not
 * fit (the report then ends at max bytes). */
static int render_bounded(int fd, render_fn render, const struct btsdec_model *m,
			  uint64_t max, size_t *last, bool *cut, struct btsdec_err *err)
{
	struct btsdec_render_opts o = { .last = *last };
	uint64_t total;
	size_t n;
	int r;

	for (;;) {
		r = render_once(fd, render, m, &o, max, &total, err);
		if (r || !max || total <= max)
			break;
		n = o.last ? o.last : longest(m);
		if (n <= 1) {
			*cut = true;
			break;
		}
		o.last = (size_t)(n * ((double)max * 0.9 / (double)total));
		o.last = o.last && o.last < n ? o.last : n / 2;
	}
	*last = o.last;
	return r;
}

/* The text and JSON reports of the model, bounded alike: the same newest
 * branches in both.  Cut even so (one branch per thread does not fit):
 * the text says so at its end, the JSON is the error document. */
static void render_reports(struct btsdumpd_ctx *c, const struct btsdec_model *m,
			   int txt, int json, struct btsdumpd_analysis *an)
{
	uint64_t max = btsdumpd_size_resolve(&c->cfg.report_size_max, 0);
	size_t last = 0, json_last;
	bool cut_txt = false, cut_json = false;
	struct btsdec_err err;

	if (render_bounded(txt, btsdec_render_text, m, max, &last, &cut_txt, &err))
		report_line(txt, "btsdumpd: report: %s\n", err.msg);
	json_last = last;
	if (render_bounded(json, btsdec_render_json, m, max, &json_last, &cut_json, &err))
		btsdumpd_crash_setf(&an->warning, "JSON report: %s", err.msg);
	if (json_last != last && render_bounded(txt, btsdec_render_text, m, max,
						&json_last, &cut_txt, &err))
		report_line(txt, "btsdumpd: report: %s\n", err.msg);
	if (cut_txt)
		report_line(txt, "\nbtsdumpd: report cut at ReportSizeMax=%llu bytes\n",
			    (unsigned long long)max);
	if (cut_json)
		json_error(json, "report larger than ReportSizeMax with one branch per thread");
	an->report_last = json_last;
	an->report_cut = cut_txt || cut_json;
}

/* Decodes the core once; the text and JSON reports, the journal's
 * summary and the trail signature come from that one model. */
static void report_core(struct btsdumpd_ctx *c, struct btsdec_core *core,
			struct btsdec_sym *sym, struct btsdec_classifier *cls,
			const char *exe, int txt, int json, struct btsdumpd_analysis *an)
{
	struct btsdec_model_opts mo = { .executable = exe };
	struct btsdec_render_opts ro = { 0 };
	char trail[BTSDEC_TRAIL_HEX + 1];
	struct btsdec_model *model;
	struct btsdec_err err;
	uint64_t total;
	FILE *f;

	if (btsdec_model_build(core, sym, cls, &mo, &model, &err)) {
		btsdumpd_crash_setf(&an->warning, "report: %s", err.msg);
		report_line(txt, "btsdumpd: report: %s\n", err.msg);
		json_error(json, err.msg);
		return;
	}
	if (btsdec_core_nr_traces(core)) {
		render_reports(c, model, txt, json, an);
		summarize(c, model, btsdec_core_nr_traces(core), an);
		if (!btsdec_model_trail(model, core, sym, trail))
			btsdumpd_crash_set(&an->trail, trail);
	} else {
		report_line(txt, "btsdumpd: no branch trace in this core (the process was not "
			    "traced, or its kernel lacks btscrash)%s\n", btsdec_core_nr_rejects(core) ?
			    "; malformed trace notes were rejected" : "");
		f = btsdumpd_zstd_fopen_write(json, ZSTD_LEVEL, 0, &total);
		if (!f || btsdec_render_json(f, model, &ro, &err))
			btsdumpd_crash_setf(&an->warning, "JSON report: %s",
					    f ? err.msg : strerror(errno));
		if (f)
			fclose(f);
	}
	btsdec_model_free(model);
}

/* The name the report gives the core (its "core:" line, JSON "core"): the
 * crashing program and its PID, not the spool the analysis reads. */
static const char *core_name(const struct btsdumpd_ctx *c, char *buf, size_t len)
{
	const char *exe = c->crash.exe ? strrchr(c->crash.exe, '/') : NULL;

	snprintf(buf, len, "core of %s (PID %d)", exe ? exe + 1 :
		 c->crash.comm ? c->crash.comm : "?", (int)c->crash.pid);
	return buf;
}

static void analysis_child(struct btsdumpd_ctx *c, const struct analyzer *a, int spool_fd,
			   int txt, int json, int res_fd, uint64_t spool_bytes)
{
	const char *exe = c->crash.exe;
	struct btsdec_symopts so = { .executable = exe };
	struct btsdec_classifier *cls = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_core *core;
	struct btsdumpd_analysis an = { 0 };
	struct btsdec_err err;
	char name[300];
	int ret;

	if (c->exe_as_crasher && geteuid() == 0 &&
	    (c->crash.have & (BTSDUMPD_HAVE_UID | BTSDUMPD_HAVE_GID)) ==
	    (BTSDUMPD_HAVE_UID | BTSDUMPD_HAVE_GID))
		btsdumpd_mapped_open_as(&c->mapped, exe, c->proc_maps, c->crash.uid,
					c->crash.gid);
	so.elf_fds = c->mapped.fd;
	so.nr_elf_fds = c->mapped.nr;
	ret = drop_privileges(a, spool_bytes, c->cfg.analyze_timeout_sec);
	if (ret) {
		an.trace = BTSDUMPD_TRACE_ERROR;
		btsdumpd_crash_setf(&an.error, "analysis: dropping privileges to uid %u: %s",
				    (unsigned int)a->uid, strerror(-ret));
		goto out;
	}
	if (exe && access(exe, R_OK))
		so.executable = NULL;	/* dwfl finds it by build-id or NT_FILE */
	ret = btsdec_core_open_fd(spool_fd, core_name(c, name, sizeof(name)), &core, &err);
	if (ret) {
		an.trace = BTSDUMPD_TRACE_ERROR;
		btsdumpd_crash_set(&an.error, err.msg);
		report_line(txt, "btsdumpd: no trace report: %s\n", err.msg);
		json_error(json, err.msg);
		goto out;
	}
	if (btsdec_sym_open_core(core, &so, &sym, &err))
		btsdumpd_crash_setf(&an.warning, "no symbols: %s", err.msg);
	if (btsdec_classifier_new(&cls, &err))
		btsdumpd_crash_setf(&an.warning, "branches not classified: %s", err.msg);
	if (btsdec_core_nr_rejects(core)) {
		an.rejected = btsdec_core_nr_rejects(core);
		btsdumpd_crash_set(&an.error, btsdec_core_reject(core, 0));
	}
	if (!btsdec_core_nr_traces(core))
		an.trace = an.rejected ? BTSDUMPD_TRACE_ERROR : BTSDUMPD_TRACE_ABSENT;
	else
		an.trace = BTSDUMPD_TRACE_PRESENT;
	report_core(c, core, sym, cls, exe, txt, json, &an);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
out:
	_exit(btsdumpd_analysis_write(res_fd, &an) ? 1 : 0);
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


/* Runs the analysis; its findings into c->crash.an. */
void btsdumpd_analyze(struct btsdumpd_ctx *c, int dirfd, int spool_fd, uint64_t bytes)
{
	int txt = btsdumpd_entry_create_file(dirfd, BTSDUMPD_REPORT_TXT);
	int json = btsdumpd_entry_create_file(dirfd, BTSDUMPD_REPORT_JSON);
	int res = btsdumpd_entry_create_file(dirfd, BTSDUMPD_ANALYSIS_FILE);
	struct btsdumpd_analysis an = { 0 };
	struct analyzer a;
	char why[160] = "";
	int status = 0, ret;
	pid_t pid;

	if (txt < 0 || json < 0 || res < 0) {
		snprintf(why, sizeof(why), "analysis: creating the report: %s", strerror(errno));
		goto fail;
	}
	ret = analyzer_resolve(c->cfg.analyze_user, &c->crash, &a);
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
	else if (btsdumpd_analysis_read_at(dirfd, BTSDUMPD_ANALYSIS_FILE, &an))
		snprintf(why, sizeof(why), "analysis: no result (exit status %d)",
			 WEXITSTATUS(status));
	if (!*why) {
		btsdumpd_analysis_free(&c->crash.an);
		c->crash.an = an;
		memset(&an, 0, sizeof(an));
	}
fail:
	if (*why) {
		c->crash.an.trace = BTSDUMPD_TRACE_ERROR;
		btsdumpd_crash_set(&c->crash.an.error, why);
		if (txt >= 0)
			report_line(txt, "\nbtsdumpd: %s\n", why);
		if (json >= 0)
			json_error(json, why);
	}
	btsdumpd_analysis_free(&an);
	if (txt >= 0)
		close(txt);
	if (json >= 0)
		close(json);
	if (res >= 0)
		close(res);
	unlinkat(dirfd, BTSDUMPD_ANALYSIS_FILE, 0);
}

