// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl dump and gdb: an entry's core decompressed (store/decompress.c)
 * to a file or a pipe, and gdb launched on EXE and that core with
 * gdb/bts.py loaded (found beside the install or the build tree) and
 * $BTSDUMP naming the btsdump beside btsdumpctl; with --replay, bts.py's
 * "bts replay" run once the core is loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btsdumpctl.h"
#include "cli.h"
#include "decompress.h"
#include "exit.h"
#include "util.h"

int ctl_core_extract(const struct ctl *c, const struct btsdumpd_entry *e, int out_fd,
		     const char *out_name)
{
	const char *core = ctl_meta(e, "CORE"), *reason = ctl_meta(e, "CORE_REASON");
	enum core_state st = ctl_core_state(c, e);
	char *path = ctl_entry_file(c, e, ctl_core_file(e));
	bool out_failed = false;
	uint64_t max;
	int fd, r;

	if (st != CORE_PRESENT) {
		if (out_name)
			say("the core of %s is %s (CORE=%s%s%s%s)%s%s", e->id,
			    st == CORE_MISSING ? "missing" : "not stored", core ? core : "unknown",
			    st == CORE_MISSING ? ", but " : "",
			    st == CORE_MISSING ? ctl_core_file(e) : "",
			    st == CORE_MISSING ? " is gone" : "", reason ? ": " : "",
			    reason ? reason : "");
		free(path);
		return BTS_EXIT_READ;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (btsdumpd_parse_u64(ctl_meta(e, "CORE_SIZE"), &max))
		max = 0;	/* no size known: no limit */
	r = fd < 0 ? -errno : strcmp(ctl_core_file(e), "core") ?
	    btsdumpd_zstd_decompress(fd, out_fd, max, &out_failed) :
	    btsdumpd_copy(fd, out_fd, &out_failed);
	if (fd >= 0)
		close(fd);
	if (out_name && out_failed)
		say("writing %s: %s", out_name, strerror(-r));
	else if (out_name && r < 0)
		say("cannot decompress %s: %s", path,
			r == -EBADMSG ? "corrupt or truncated zstd data" :
			r == -EFBIG ? "larger than CORE_SIZE says" : strerror(-r));
	free(path);
	return r < 0 ? BTS_EXIT_READ : 0;
}

int cmd_dump(const struct ctl *c)
{
	const struct btsdumpd_entry *e;
	int fd = STDOUT_FILENO, r;

	if (!c->output && isatty(STDOUT_FILENO)) {
		fputs("btsdumpctl: refusing to write a core to a terminal; use -o FILE "
		      "or redirect stdout\n", stderr);
		return BTS_EXIT_USAGE;
	}
	e = ctl_pick(c);
	if (!e)
		return BTS_EXIT_NONE;
	if (c->output) {
		fd = open(c->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			say("cannot create %s: %m", c->output);
			return BTS_EXIT_READ;
		}
	}
	r = ctl_core_extract(c, e, fd, c->output ? c->output : "the output");
	if (c->output && close(fd) < 0 && !r) {
		say("writing %s failed: %m", c->output);
		r = BTS_EXIT_READ;
	}
	if (r && c->output)
		unlink(c->output);
	return r;
}
/* path if readable, else NULL (path freed); NULL for NULL. */
static char *readable(char *path)
{
	if (path && !access(path, R_OK))
		return path;
	free(path);
	return NULL;
}

/* The source tree's gdb/bts.py when dir is a meson build tree (its
 * meson-info names the source directory): btsdumpctl run from a build. */
static char *source_tree_script(const char *dir)
{
	struct json_object *info, *dirs, *src;
	char *path, *p = NULL;

	if (asprintf(&path, "%s/meson-info/meson-info.json", dir) < 0)
		return NULL;
	info = access(path, R_OK) ? NULL : json_object_from_file(path);
	free(path);
	if (info && json_object_object_get_ex(info, "directories", &dirs) &&
	    json_object_object_get_ex(dirs, "source", &src) &&
	    json_object_is_type(src, json_type_string) &&
	    asprintf(&p, "%s/gdb/bts.py", json_object_get_string(src)) < 0)
		p = NULL;
	json_object_put(info);
	return readable(p);
}

/* gdb/bts.py for `btsdumpctl gdb`: $BTSDUMPCTL_GDB_SCRIPT ("" for none),
 * else DATADIR's, else PREFIX/share's for the prefix btsdumpctl runs
 * from, else the source tree's when it runs from its build tree; when
 * none is found gdb runs without it, and btsdumpctl says so. */
static char *gdb_script(void)
{
	const char *env = getenv("BTSDUMPCTL_GDB_SCRIPT");
	char exe[4096], *p = NULL, *prefix;
	ssize_t n;

	if (env) {
		if (*env && access(env, R_OK) < 0)
			say("warning: %s: %m; not loaded", env);
		return *env && !access(env, R_OK) ? strdup(env) : NULL;
	}
	if (asprintf(&p, "%s/btscrash/gdb/bts.py", BTSCRASH_DATADIR) >= 0 && (p = readable(p)))
		return p;
	p = NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	prefix = n > 0 ? dirname(dirname(exe)) : NULL;	/* PREFIX/bin/btsdumpctl */
	if (prefix && (p = source_tree_script(prefix)))
		return p;
	if (prefix && asprintf(&p, "%s/share/btscrash/gdb/bts.py", prefix) >= 0 &&
	    (p = readable(p)))
		return p;
	say("warning: gdb/bts.py not found (in %s/btscrash/gdb, in PREFIX/share/"
	    "btscrash/gdb beside btsdumpctl, or in the source tree of its build "
	    "tree): gdb runs without the bts commands; BTSDUMPCTL_GDB_SCRIPT names it",
	    BTSCRASH_DATADIR);
	return NULL;
}

/* The bts commands' btsdump: $BTSDUMP, else the btsdump beside this
 * btsdumpctl (PREFIX/bin, or the build tree's tools/), which bts.py
 * looks for only beside an installed script. */
static void btsdump_beside(void)
{
	char exe[4096], *p;
	ssize_t n;

	if (getenv("BTSDUMP"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (n > 0 && asprintf(&p, "%s/btsdump", dirname(exe)) >= 0) {
		if (!access(p, X_OK))
			setenv("BTSDUMP", p, 0);
		free(p);
	}
}

static int run_gdb(const struct ctl *c, const char *exe, const char *core)
{
	char *script = gdb_script(), *src = NULL, *argv[c->n_gdb_args + 10];
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int n = 0, status;
	pid_t pid;

	argv[n++] = "gdb";
	if (script && asprintf(&src, "source %s", script) >= 0) {
		argv[n++] = "-iex";
		argv[n++] = src;
	}
	if (exe) {
		argv[n++] = "-se";
		argv[n++] = (char *)exe;
	}
	argv[n++] = "-c";
	argv[n++] = (char *)core;
	if (c->replay && script) {
		argv[n++] = "-ex";
		argv[n++] = "bts replay";
	} else if (c->replay) {
		say("warning: --replay needs gdb/bts.py: gdb runs on the plain core");
	}
	for (int i = 0; i < c->n_gdb_args; i++)
		argv[n++] = c->gdb_args[i];
	argv[n] = NULL;
	sigaction(SIGINT, &ign, &oint);		/* ^C is gdb's */
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		btsdump_beside();
		execvp("gdb", argv);
		say("cannot run gdb: %m");
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	free(script);
	free(src);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
		if (pid < 0 || !WIFEXITED(status))
			fputs("btsdumpctl: gdb could not be run or was killed\n", stderr);
		return BTS_EXIT_GDB;
	}
	return WEXITSTATUS(status);
}

int cmd_gdb(const struct ctl *c)
{
	const struct btsdumpd_entry *e = ctl_pick(c);
	const char *tmpdir = getenv("TMPDIR");
	char *tmp;
	int fd, r;

	if (!e)
		return BTS_EXIT_NONE;
	if (asprintf(&tmp, "%s/btsdumpctl-core-XXXXXX",
		     tmpdir && *tmpdir ? tmpdir : "/tmp") < 0)
		return BTS_EXIT_READ;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		say("cannot create a temporary file %s: %m", tmp);
		free(tmp);
		return BTS_EXIT_READ;
	}
	r = ctl_core_extract(c, e, fd, tmp);
	if (close(fd) < 0 && !r) {
		say("writing %s failed: %m", tmp);
		r = BTS_EXIT_READ;
	}
	if (!r)
		r = run_gdb(c, ctl_meta(e, "EXE"), tmp);
	unlink(tmp);
	free(tmp);
	return r;
}
