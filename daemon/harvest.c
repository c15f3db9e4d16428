// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd --harvest: at boot, finds the vmcores kdump saved (kdump-tools'
 * /var/crash/STAMP/dump.STAMP, kexec-tools' vmcore*), and stores one
 * report entry per vmcore not seen before: each CPU's last kernel branches
 * (lib/vmreport.c), symbolized with the crashed kernel's System.map when
 * one is installed.  The vmcore stays where it is.  Process context, root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdumpd.h"
#include "entries.h"
#include "escape.h"
#include "zstdio.h"

#define HARVESTED	".harvested"
#define MAX_DEPTH	2
#define REPORT_LAST	64	/* branches per CPU in the text report */

static bool is_vmcore_name(const char *n)
{
	return !strncmp(n, "vmcore", 6) || !strncmp(n, "dump.", 5);
}

/* "DEV:INO:SIZE:MTIME" identifies a vmcore across reboots and renames. */
static void vmcore_key(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "%llu:%llu:%llu:%lld", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
		 (long long)st->st_mtime);
}

static bool harvested(int fd, const char *key)
{
	char line[PATH_MAX + 128];
	size_t kl = strlen(key);
	FILE *f;
	bool seen = false;

	if (lseek(fd, 0, SEEK_SET) || !(f = fdopen(dup(fd), "r")))
		return false;
	while (!seen && fgets(line, sizeof(line), f))
		seen = !strncmp(line, key, kl) && line[kl] == ' ';
	fclose(f);
	return seen;
}

/* The crashed kernel's System.map or vmlinux, by its OSRELEASE. */
static void find_symbols(const struct btsdec_vmcore *vc, char *out, size_t len)
{
	static const char *const where[][2] = { { "/boot/System.map-", "" },
		{ "/usr/lib/debug/boot/vmlinux-", "" }, { "/lib/modules/", "/build/System.map" } };
	char rel[128];
	size_t i;

	*out = '\0';
	if (btsdec_vmcore_info(vc, "OSRELEASE", rel, sizeof(rel)) && !strchr(rel, '/'))
		for (i = 0; i < sizeof(where) / sizeof(where[0]) && !*out; i++) {
			snprintf(out, len, "%s%s%s", where[i][0], rel, where[i][1]);
			if (access(out, R_OK))
				*out = '\0';
		}
}

/* In a child with resource limits: the text and JSON reports of the one
 * open vmcore (the parent's, inherited). */
static int report_child(struct btsdec_vmcore *vc, const char *vmcore, const char *symbols,
			int txt, int json)
{
	struct btsdec_vmreport_opts o = { .last = REPORT_LAST, .symbols = *symbols ? symbols : NULL,
					  .prog = "btsdumpd" };
	struct btsdec_vmreport_result res = { 0 };
	struct rlimit core = { 1, 1 }, cpu = { 300, 301 };
	struct btsdec_vmmodel *model;
	struct btsdec_err err, jerr;
	uint64_t tn, jn;	/* (bounded by the rings, not ReportSizeMax) */
	FILE *t = btsdumpd_zstd_fopen_write(txt, 3, 0, &tn);
	FILE *j = btsdumpd_zstd_fopen_write(json, 3, 0, &jn);
	int ret;

	setrlimit(RLIMIT_CORE, &core);
	setrlimit(RLIMIT_CPU, &cpu);
	if (!t || !j)
		_exit(10);
	/* the rings are read once; the text and JSON reports render that model */
	ret = btsdec_vmmodel_build(vc, vmcore, &o, t, &model, &err);
	if (!ret) {
		ret = btsdec_vmmodel_render(t, model, false, REPORT_LAST, &res, &err);
		if (btsdec_vmmodel_render(j, model, true, 0, NULL, &jerr) == -ENOMEM)
			fprintf(t, "btsdumpd: JSON report: %s\n", jerr.msg);
		btsdec_vmmodel_free(model);
	}
	if (ret && ret != -ENODATA)
		fprintf(t, "btsdumpd: %s\n", err.msg);
	fclose(t);
	fclose(j);
	_exit(ret == -ENODATA ? 3 : ret ? 2 : res.rings_unreadable ? 4 : 0);
}

static int harvest_one(struct btsdumpd_ctx *c, const char *path, const struct stat *st)
{
	static const enum btsdumpd_trace trace[] = { BTSDUMPD_TRACE_PRESENT,
		BTSDUMPD_TRACE_ERROR, BTSDUMPD_TRACE_ERROR, BTSDUMPD_TRACE_ABSENT,
		BTSDUMPD_TRACE_PRESENT };
	char base[96], symbols[PATH_MAX];
	int dirfd, txt = -1, json = -1, status = 0, ret, code;
	struct btsdec_vmcore *vc;
	struct btsdec_err err;
	pid_t pid;

	btsdumpd_crash_free(&c->crash);
	c->crash.kind = BTSDUMPD_KIND_KERNEL;
	if (btsdumpd_crash_set(&c->crash.vmcore, path))
		return -ENOMEM;
	c->crash.timestamp = st->st_mtime > 0 ? st->st_mtime : 0;
	c->crash.uid = 0;
	c->crash.have = BTSDUMPD_HAVE_TIMESTAMP | BTSDUMPD_HAVE_UID;
	c->crash.core = BTSDUMPD_CORE_NONE;
	c->crash.core_size = st->st_size;
	c->crash.has_core_size = true;
	snprintf(base, sizeof(base), "%lld.kernel.vmcore", (long long)st->st_mtime);
	ret = btsdumpd_entry_begin(c, base, &dirfd);
	if (ret)
		return ret;
	txt = openat(dirfd, BTSDUMPD_REPORT_TXT, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	json = openat(dirfd, BTSDUMPD_REPORT_JSON, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (txt < 0 || json < 0) {
		ret = -errno;
		goto out;
	}
	if (btsdec_vmcore_open(path, &vc, &err)) {
		/* an entry all the same: the vmcore is there, unreadable */
		FILE *t = btsdumpd_zstd_fopen_write(txt, 3, 0, &(uint64_t){ 0 });

		if (t) {
			fprintf(t, "btsdumpd: %s\n", err.msg);
			fclose(t);
		}
		c->crash.an.trace = BTSDUMPD_TRACE_ERROR;
		btsdumpd_crash_set(&c->crash.an.error, err.msg);
		ret = btsdumpd_entry_commit(c, dirfd, 0);
		goto out;
	}
	find_symbols(vc, symbols, sizeof(symbols));
	if (*symbols)
		btsdumpd_crash_set(&c->crash.symbols, symbols);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto close_vmcore;
	}
	if (!pid)
		report_child(vc, path, symbols, txt, json);
	waitpid(pid, &status, 0);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	c->crash.an.trace = code <= 4 ? trace[code] : BTSDUMPD_TRACE_ERROR;
	if (code == 1 || code > 4)
		btsdumpd_crash_set(&c->crash.an.error, WIFSIGNALED(status) ?
				   strsignal(WTERMSIG(status)) : "vmcore unreadable");
	ret = btsdumpd_entry_commit(c, dirfd, 0);
close_vmcore:
	btsdec_vmcore_close(vc);
out:
	if (txt >= 0)
		close(txt);
	if (json >= 0)
		close(json);
	close(dirfd);
	return ret;
}

static void log_harvest(struct btsdumpd_ctx *c, const char *path)
{
	char *msg, entry[PATH_MAX + 64];
	const char *extra[] = { entry, NULL };
	char *safe = btsdec_escape(path, 0);	/* the message's one value from outside */

	snprintf(entry, sizeof(entry), "BTSDUMPD_ENTRY=%s/%s", c->store, c->id);
	if (!safe)
		return;
	if (asprintf(&msg, "Kernel crash dump %s: per-CPU branch traces %s (%s/%s).", safe,
		     c->crash.an.trace != BTSDUMPD_TRACE_PRESENT ?
		     "not found" : "harvested", c->store, c->id) < 0)
		msg = NULL;
	free(safe);
	if (!msg)
		return;
	btsdumpd_log_entry(LOG_CRIT, msg, c, extra);
	free(msg);
}

static void scan(struct btsdumpd_ctx *c, const char *dir, int depth, int state, int *count)
{
	char path[PATH_MAX], key[128];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);
	int ret;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			scan(c, path, depth + 1, state, count);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !is_vmcore_name(de->d_name))
			continue;
		vmcore_key(&st, key, sizeof(key));
		if (harvested(state, key))
			continue;
		ret = harvest_one(c, path, &st);
		if (ret) {
			btsdumpd_log(LOG_ERR, "harvest %s: %s", path, strerror(-ret));
			continue;
		}
		dprintf(state, "%s %s\n", key, path);
		log_harvest(c, path);
		(*count)++;
	}
	closedir(d);
}

int btsdumpd_harvest(struct btsdumpd_ctx *c, char *const *dirs, int n)
{
	char state_path[PATH_MAX];
	int state, i, count = 0, ret = btsdumpd_store_open(c);

	if (ret) {
		btsdumpd_log(LOG_ERR, "harvest: store %s: %s", c->store, strerror(-ret));
		return ret;
	}
	snprintf(state_path, sizeof(state_path), "%s/" HARVESTED, c->store);
	state = open(state_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (state < 0 || flock(state, LOCK_EX)) {
		btsdumpd_log(LOG_ERR, "harvest: %s: %m", state_path);
		return -errno;
	}
	for (i = 0; i < n; i++)
		scan(c, dirs[i], 0, state, &count);
	close(state);
	btsdumpd_log(LOG_INFO, "harvest: %d new vmcore%s", count, count == 1 ? "" : "s");
	return btsdumpd_vacuum(c, NULL);
}
