// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Companion mode (btsdumpd --companion, systemd/btsdumpd.service): beside
 * systemd-coredump, which stays kernel.core_pattern's handler and stores
 * the cores.  Follows the journal for systemd-coredump's entries, reads
 * each stored core (zstd, xz, lz4 or plain, as systemd-coredump wrote it)
 * and puts it through collect.c's pipeline as if the kernel had piped it:
 * the trace report becomes a store entry (without the core, which stays
 * systemd-coredump's) and a journal entry of btsdumpd's own MESSAGE_ID,
 * linked to the coredump entry by COREDUMP_PID and COREDUMP_TIMESTAMP.
 * Only entries journald attributes to systemd-coredump (its unit, or root)
 * are trusted (any process can log a field named COREDUMP_FILENAME).
 * Where it stopped is kept in STORE/.companion-cursor.  An LBR note
 * (collect.c) is kept in the entry with the digest of systemd-coredump's
 * core, for gdb on that core.  Process context.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <gcrypt.h>
#include <systemd/sd-journal.h>

#include "btsdumpd.h"
#include "util.h"
#include "decompress.h"
#include "entries.h"

/* systemd-coredump's MESSAGE_ID (SD_MESSAGE_COREDUMP) and its store. */
#define COREDUMP_MESSAGE	"MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1"
#define COREDUMP_DIR		"/var/lib/systemd/coredump/"
#define CURSOR_NAME		".companion-cursor"
#define MAPS_MAX		(1024 * 1024)	/* of COREDUMP_PROC_MAPS read */
#define DIGEST_CHUNK		(1024 * 1024)

/* ---- the stored core, decompressed into a pipe ------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A child decompressing the core at path into a pipe; returns the pipe's
 * read end (the kernel's pipe, to collect.c) or -errno. */
static int open_core(const char *path, pid_t *child)
{
	int p[2], fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pipe2(p, O_CLOEXEC)) {
		close(fd);
		return -EINVAL;
	}
	*child = fork();
	if (*child < 0) {
		close(fd);
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!*child) {
		int r;

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);	/* a core cut at ProcessSizeMax */
		r = ends_with(path, ".zst") ? btsdumpd_zstd_decompress(fd, p[1], 0, NULL) :
		    ends_with(path, ".xz") ? btsdumpd_xz_decompress(fd, p[1]) :
		    ends_with(path, ".lz4") ? btsdumpd_lz4_decompress(fd, p[1]) : btsdumpd_copy(fd, p[1], NULL);
		_exit(r && r != -EPIPE ? 1 : 0);
	}
	close(fd);
	close(p[1]);
	return p[0];
}

/* ---- one coredump entry --------------------------------------------------- */

/* A field's value ("KEY=value" in the journal), NUL-terminated into buf;
 * NULL when absent or longer than buf. */
static const char *field(sd_journal *j, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n;
	const void *d;

	if (sd_journal_get_data(j, key, &d, &n) < 0 || n <= klen || n - klen - 1 >= len)
		return NULL;
	memcpy(buf, (const char *)d + klen + 1, n - klen - 1);
	buf[n - klen - 1] = '\0';
	return buf;
}

/* The core's name, core.COMM.UID.BOOT_ID.PID.TIMESTAMP[.zst|.xz|.lz4]
 * (systemd-coredump's), agrees with the entry's COREDUMP_UID, _PID and
 * _TIMESTAMP, and the file is root's, in its store. */
static bool file_agrees(sd_journal *j, const char *file)
{
	char name[PATH_MAX], uid[32], pid[32], ts[32], *f[5];
	struct stat st;
	char *p;
	int n = 0;

	if (lstat(file, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    !field(j, "COREDUMP_UID", uid, sizeof(uid)) ||
	    !field(j, "COREDUMP_PID", pid, sizeof(pid)) ||
	    !field(j, "COREDUMP_TIMESTAMP", ts, sizeof(ts)))
		return false;
	snprintf(name, sizeof(name), "%s", file + strlen(COREDUMP_DIR));
	for (const char *ext = ".zst\0.xz\0.lz4\0"; *ext; ext += strlen(ext) + 1)
		if (ends_with(name, ext))
			name[strlen(name) - strlen(ext)] = '\0';
	while (n < 4 && (p = strrchr(name, '.'))) {	/* ts, pid, boot id, uid */
		f[n++] = p + 1;
		*p = '\0';
	}
	return n == 4 && !strcmp(f[0], ts) && !strcmp(f[1], pid) && !strcmp(f[3], uid);
}

/* systemd-coredump's own entry.  By the fields journald sets itself (a
 * sender cannot forge them): its process, in one of its service's
 * instances (systemd-coredump@.service, where it logs as the crashing
 * user: it drops to that uid for its work) or as root (the kernel-spawned
 * handler without its socket).  journald reads _COMM and _SYSTEMD_UNIT
 * from /proc, so they are missing when systemd-coredump exited before its
 * entry was read: then the core itself vouches for it (root's, in the
 * store, its name agreeing with the entry), which only systemd-coredump
 * writes.  Either way a core in its store. */
static bool trusted(sd_journal *j, const char *file)
{
	char uid[16], comm[32], unit[256];
	bool by_unit = field(j, "_SYSTEMD_UNIT", unit, sizeof(unit)) &&
		       !strncmp(unit, "systemd-coredump@", 17) && ends_with(unit, ".service");
	bool by_root = field(j, "_UID", uid, sizeof(uid)) && !strcmp(uid, "0");
	bool by_comm = field(j, "_COMM", comm, sizeof(comm));

	if (strncmp(file, COREDUMP_DIR, strlen(COREDUMP_DIR)) || strstr(file, "/../"))
		return false;
	if (by_comm)
		return (by_unit || by_root) && !strcmp(comm, "systemd-coredum");
	return file_agrees(j, file);
}

/* The entry's facts into c->crash, as the handler takes them from the
 * kernel and /proc; 0, -EINVAL when a number is missing or bad, or
 * -ENOMEM. */
static int crash_from_entry(struct btsdumpd_crash *cr, sd_journal *j, const char *file)
{
	static const struct { const char *field; unsigned int bit; } num[] = {
		{ "COREDUMP_PID", BTSDUMPD_HAVE_PID }, { "COREDUMP_UID", BTSDUMPD_HAVE_UID },
		{ "COREDUMP_GID", BTSDUMPD_HAVE_GID }, { "COREDUMP_SIGNAL", BTSDUMPD_HAVE_SIGNAL } };
	static const char *const text[] = { "COREDUMP_COMM", "COREDUMP_EXE",
		"COREDUMP_CMDLINE", "COREDUMP_HOSTNAME", "COREDUMP_CGROUP" };
	char **dest[] = { &cr->comm, &cr->exe, &cr->cmdline, &cr->hostname, &cr->cgroup };
	char buf[4096];
	uint64_t v;

	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		if (!field(j, num[i].field, buf, sizeof(buf)) ||
		    btsdumpd_crash_set_number(cr, num[i].bit, buf))
			return -EINVAL;
	/* COREDUMP_TIMESTAMP is in microseconds, the kernel's %t in seconds */
	if (!field(j, "COREDUMP_TIMESTAMP", buf, sizeof(buf)) || btsdumpd_parse_u64(buf, &v))
		return -EINVAL;
	cr->timestamp = v / 1000000;
	cr->have |= BTSDUMPD_HAVE_TIMESTAMP;
	if (btsdumpd_crash_set(&cr->coredump_timestamp, buf))
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		if (field(j, text[i], buf, sizeof(buf)) && btsdumpd_crash_set(dest[i], buf))
			return -ENOMEM;
	if (!cr->comm && btsdumpd_crash_set(&cr->comm, "unknown"))
		return -ENOMEM;
	if (btsdumpd_crash_set(&cr->coredump_filename, file) ||
	    (field(j, "_BOOT_ID", buf, sizeof(buf)) &&
	     btsdumpd_crash_set(&cr->coredump_boot_id, buf)))
		return -ENOMEM;
	return 0;
}

/* COREDUMP_PROC_MAPS, whole lines of at most MAPS_MAX bytes (or of
 * libsystemd's data threshold, 64 KiB by default, a hint it may exceed);
 * NULL when absent or out of memory. */
static char *proc_maps(sd_journal *j)
{
	static const char key[] = "COREDUMP_PROC_MAPS=";
	const void *d;
	char *s, *end;
	size_t n;

	if (sd_journal_get_data(j, "COREDUMP_PROC_MAPS", &d, &n) < 0 || n <= sizeof(key) - 1)
		return NULL;
	n -= sizeof(key) - 1;
	s = strndup((const char *)d + sizeof(key) - 1, n < MAPS_MAX ? n : MAPS_MAX);
	end = s ? strrchr(s, '\n') : NULL;
	if (end)	/* a last line without its newline may be cut: left out */
		end[1] = '\0';
	return s;
}

static void one_entry(struct btsdumpd_ctx *c, sd_journal *j)
{
	char file[PATH_MAX];
	pid_t child = -1;
	int fd, status;

	if (!field(j, "COREDUMP_FILENAME", file, sizeof(file)))
		return;		/* not stored (Storage=journal or none): no core to read */
	if (!trusted(j, file)) {
		btsdumpd_log(LOG_WARNING, "companion: ignoring a coredump entry not from "
			     "systemd-coredump as root (COREDUMP_FILENAME=%s)", file);
		return;
	}
	btsdumpd_crash_free(&c->crash);
	if (crash_from_entry(&c->crash, j, file)) {
		btsdumpd_log(LOG_WARNING, "companion: coredump entry of %s lacks its "
			     "PID/UID/GID/SIGNAL/TIMESTAMP; skipped", file);
		return;
	}
	fd = open_core(file, &child);
	if (fd < 0) {	/* vacuumed by systemd-coredump since, most likely */
		btsdumpd_log(LOG_INFO, "companion: %s: %s; skipped", file, strerror(-fd));
		return;
	}
	c->source = child;	/* reaped by collect.c once spooled: the entry says */
	c->proc_maps = proc_maps(j);
	btsdumpd_collect(c, fd);	/* closes fd */
	free(c->proc_maps);
	c->proc_maps = NULL;
	if (c->source > 0)	/* not collected (store, rate limit): reaped here */
		waitpid(child, &status, 0);
	c->source = 0;
	if (c->crash.core_truncated && c->crash.coredump_filename)
		btsdumpd_log(LOG_WARNING, "companion: %s: %s", file,
			     c->crash.core_reason ? c->crash.core_reason : "the core is cut");
}

/* ---- the LBR note, for gdb on systemd-coredump's core ------------------------ */

int btsdumpd_sha256_fd(int fd, char hex[BTSDUMPD_SHA256_HEX + 1])
{
	gcry_md_hd_t h;
	const unsigned char *d;
	char *buf = malloc(DIGEST_CHUNK);
	uint64_t off = 0;
	ssize_t n = -1;

	if (!buf)
		return -ENOMEM;
	if (!gcry_check_version(GCRYPT_VERSION) || gcry_md_open(&h, GCRY_MD_SHA256, 0)) {
		free(buf);
		return -EIO;
	}
	while ((n = pread(fd, buf, DIGEST_CHUNK, off)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0) {
			gcry_md_write(h, buf, n);
			off += n;
		}
	d = n ? NULL : gcry_md_read(h, GCRY_MD_SHA256);
	for (int i = 0; d && i < BTSDUMPD_SHA256_HEX / 2; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	gcry_md_close(h);
	free(buf);
	return n ? -errno : 0;
}

void btsdumpd_companion_keep_note(struct btsdumpd_ctx *c, int dirfd,
				  const struct btsdumpd_lbr_framed *note, const char *hex)
{
	int fd = btsdumpd_entry_create_file(dirfd, BTSDUMPD_LBR_NOTE);
	int ret = fd < 0 ? -errno : btsdumpd_write_all(fd, note->data, note->len);

	if (!ret && fsync(fd))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (!ret)
		ret = btsdumpd_crash_set(&c->crash.coredump_sha256, hex) ? -ENOMEM : 0;
	if (ret) {
		unlinkat(dirfd, BTSDUMPD_LBR_NOTE, 0);
		btsdumpd_log(LOG_WARNING, "%s: keeping the LBR note for gdb: %s", c->id,
			     strerror(-ret));
	}
}

/* ---- the journal ------------------------------------------------------------- */

static void save_cursor(struct btsdumpd_ctx *c, sd_journal *j)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	char *cur = NULL;
	FILE *f;

	if (sd_journal_get_cursor(j, &cur) < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", c->store, CURSOR_NAME);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (f && fputs(cur, f) >= 0 && !fclose(f)) {
		if (rename(tmp, path))
			btsdumpd_warn("companion: saving the cursor: %m");
	} else {
		if (f)
			fclose(f);
		btsdumpd_warn("companion: saving the cursor: %m");
	}
	free(cur);
}

/* Where the last run stopped; from the journal's head the first time (the
 * cores systemd-coredump still keeps get their reports). */
static int seek(struct btsdumpd_ctx *c, sd_journal *j)
{
	char path[PATH_MAX], cur[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", c->store, CURSOR_NAME);
	f = fopen(path, "re");
	if (f && fgets(cur, sizeof(cur), f)) {
		fclose(f);
		cur[strcspn(cur, "\n")] = '\0';
		if (sd_journal_seek_cursor(j, cur) < 0 || sd_journal_next(j) <= 0)
			return sd_journal_seek_head(j);
		/* on the last one done; or, when it has been rotated away, on
		 * the first after it: step back so that one comes next */
		if (sd_journal_test_cursor(j, cur) <= 0)
			sd_journal_previous(j);
		return 0;
	}
	if (f)
		fclose(f);
	return sd_journal_seek_head(j);
}

int btsdumpd_companion(struct btsdumpd_ctx *c, const char *journal_dir, bool once)
{
	sd_journal *j;
	int r;

	btsdumpd_load_config(c);
	c->cfg.storage = BTSDUMPD_STORAGE_NONE;	/* the core is systemd-coredump's */
	c->exe_as_crasher = true;	/* the process is gone: no /proc (mapped.c) */
	r = btsdumpd_store_open(c);
	if (r) {
		btsdumpd_log(LOG_ERR, "companion: store %s: %s", c->store, strerror(-r));
		return r;
	}
	r = journal_dir ? sd_journal_open_directory(&j, journal_dir, 0)
			/* not SD_JOURNAL_SYSTEM: systemd-coredump logs as the
			 * crashing user, so its entries land in that user's
			 * journal file (journald's SplitMode=uid) */
			: sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
	if (r < 0 || (r = sd_journal_add_match(j, COREDUMP_MESSAGE, 0)) < 0 ||
	    (r = seek(c, j)) < 0) {
		btsdumpd_log(LOG_ERR, "companion: opening the journal: %s", strerror(-r));
		return r;
	}
	for (;;) {
		while ((r = sd_journal_next(j)) > 0) {
			one_entry(c, j);
			save_cursor(c, j);
		}
		if (r < 0) {
			btsdumpd_log(LOG_ERR, "companion: reading the journal: %s", strerror(-r));
			break;
		}
		if (once)
			break;
		r = sd_journal_wait(j, (uint64_t)-1);
		if (r < 0) {
			btsdumpd_log(LOG_ERR, "companion: waiting on the journal: %s",
				     strerror(-r));
			break;
		}
	}
	sd_journal_close(j);
	return r < 0 ? r : 0;
}
