// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's collection pipeline for one crash (docs/btsdumpd.md "What runs
 * where"): rate limit (ratelimit.c), spool the core from its pipe in
 * bounded memory, have it analysed (analyze.c), store the core, commit the
 * entry (entry.c), log one journal entry, vacuum (vacuum.c).  Runs in the
 * handler (direct mode), in a service instance or in the companion.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btsdumpd.h"
#include "entries.h"
#include "escape.h"
#include "util.h"
#include "zstdio.h"

#define SPOOL_CHUNK	(64 * 1024)
#define REPORT_ROOM	(256 * 1024)	/* left free by a spool for the entry */
#define NOTES_MAX	(64ULL << 20)	/* at most this much spooled past KeepFree */

void btsdumpd_load_config(struct btsdumpd_ctx *c)
{
	btsdumpd_config_defaults(&c->cfg);
	btsdumpd_config_load(&c->cfg, c->config_path, btsdumpd_warn);
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

/* ---- Spool --------------------------------------------------------------- */

struct spool {
	uint64_t received;	/* bytes the kernel sent */
	uint64_t written;	/* bytes in the spool file */
	bool stopped;		/* the spool ended before the core */
	bool keep;		/* the spool is good enough to store */
	bool notes_only;	/* short of space (KeepFree): the spool goes on
				 * only to the end of the core's notes, for the
				 * analysis; the core is not kept */
	char reason[256];
};

/* Where the note segments of the ELF core in the spool end: 0 while its
 * program headers are not all written yet, else the end of the last
 * PT_NOTE (or of the headers, without one, or when it is no ELF core). */
static uint64_t notes_end(int fd, uint64_t written)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t end, i;

	if (written < sizeof(eh))
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph))
		return sizeof(eh);
	end = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ph);
	if (written < end)
		return 0;
	for (i = 0; i < eh.e_phnum; i++)
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) == sizeof(ph) &&
		    ph.p_type == PT_NOTE && ph.p_offset + ph.p_filesz > end &&
		    ph.p_filesz < NOTES_MAX)
			end = ph.p_offset + ph.p_filesz;
	return end;
}

/* In notes_only mode: true once the notes are all in the spool (or past
 * NOTES_MAX). */
static bool notes_done(int fd, const struct spool *s)
{
	uint64_t end = notes_end(fd, s->written);

	return s->written >= NOTES_MAX || (end && s->written >= end);
}

/* False (and why set) when writing more would leave less than KeepFree
 * (or than floor, what the caller needs left whatever KeepFree says). */
static bool space_ok(struct btsdumpd_ctx *c, uint64_t more, uint64_t floor,
		     char *why, size_t len)
{
	struct statvfs v;
	uint64_t avail, keep;

	if (fstatvfs(btsdumpd_store_fd(), &v) || !v.f_blocks)	/* ramfs: no accounting */
		return true;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	keep = btsdumpd_size_resolve(&c->cfg.keep_free, btsdumpd_fs_size(&v));
	keep = keep > floor ? keep : floor;
	if (avail >= keep + more)
		return true;
	snprintf(why, len, "KeepFree: %llu bytes free, %llu to keep",
		 (unsigned long long)avail, (unsigned long long)keep);
	return false;
}

/* Whether n more bytes of notes leave REPORT_ROOM free, KeepFree or not. */
static bool notes_room(uint64_t n)
{
	struct statvfs v;

	if (fstatvfs(btsdumpd_store_fd(), &v) || !v.f_blocks)
		return true;
	return (uint64_t)v.f_bavail * v.f_frsize >= n + REPORT_ROOM;
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
		/* before each write (other spools share the filesystem); the
		 * trail is kept all the same: the notes are spooled, never
		 * into the room the entry needs */
		if (!s->notes_only)
			s->notes_only = !space_ok(c, n, REPORT_ROOM, s->reason, sizeof(s->reason));
		if (s->notes_only && (notes_done(out, s) || !notes_room(n))) {
			spool_stop(s, false, NULL);
			continue;
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

/* ---- Storing the core ------------------------------------------------------ */

static void core_dropped(struct btsdumpd_ctx *c, const char *why)
{
	c->crash.core = BTSDUMPD_CORE_DROPPED;
	btsdumpd_crash_set(&c->crash.core_reason, why);
}

static void core_stored(struct btsdumpd_ctx *c, const char *file, uint64_t bytes)
{
	c->crash.core = BTSDUMPD_CORE_STORED;
	c->crash.core_file = file;
	c->crash.core_stored_size = bytes;
}

/* Compresses the spool into core.zst (or keeps it as is with Compress=no). */
static void store_core(struct btsdumpd_ctx *c, int dirfd, int spool_fd, const struct spool *s)
{
	uint64_t ext_max = btsdumpd_size_resolve(&c->cfg.external_size_max, 0);
	uint64_t out_bytes = 0;
	char why[300];
	int out, ret;

	if (c->cfg.storage == BTSDUMPD_STORAGE_NONE) {
		c->crash.core = BTSDUMPD_CORE_NONE;
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
		core_stored(c, BTSDUMPD_SPOOL_FILE, s->written);
		goto cut;
	}
	/* the compressed core is at most about the spool's size */
	if (!space_ok(c, s->written, 0, why, sizeof(why)))
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
	core_stored(c, BTSDUMPD_CORE_FILE, out_bytes);
cut:
	if (s->stopped)
		btsdumpd_crash_set(&c->crash.core_reason, s->reason);
}

/* ---- The stock-kernel collector's note ---------------------------------- */

/* A whole spooled core without a trace note gets the LBR collector's
 * (lbr-note.c): the spool is rewritten, so reopened.  The companion keeps
 * the note in its entry too, with the digest of systemd-coredump's core
 * (taken before the note), for gdb on that core (companion.c). */
static void lbr_note(struct btsdumpd_ctx *c, int dirfd, int *spool_fd, struct spool *s)
{
	struct btsdumpd_lbr_framed note = { 0 };
	char path[64], digest[BTSDUMPD_SHA256_HEX + 1] = "";
	struct stat st;
	int ret, fd;

	if (!c->lbr_dir || !s->keep || s->stopped || s->notes_only)
		return;
	if (c->crash.coredump_filename && !c->crash.core_truncated &&
	    btsdumpd_sha256_fd(*spool_fd, digest))
		digest[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, BTSDUMPD_SPOOL_FILE);
	ret = btsdumpd_lbr_note(c->lbr_dir, path, c->crash.timestamp, &c->mapped, &note);
	if (!ret && digest[0])
		btsdumpd_companion_keep_note(c, dirfd, &note, digest);
	free(note.data);
	if (ret == -ENOENT || ret == -EEXIST)
		return;
	if (ret == -ETIMEDOUT) {
		btsdumpd_log(LOG_WARNING, "%s: no LBR note: the collector settled no snapshot "
			     "of the crash within 30 s", c->id);
		return;
	}
	if (ret == -ENODATA) {
		btsdumpd_log(LOG_WARNING, "%s: no LBR note: the LBR held no branch of the "
			     "crashing thread", c->id);
		return;
	}
	if (ret) {
		btsdumpd_log(LOG_WARNING, "%s: no LBR note: %s", c->id, strerror(-ret));
		return;
	}
	fd = openat(dirfd, BTSDUMPD_SPOOL_FILE, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		btsdumpd_log(LOG_ERR, "%s: the spool after the LBR note: %m", c->id);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(*spool_fd);
	*spool_fd = fd;
	s->written = st.st_size;
}

/* ---- One crash ------------------------------------------------------------- */

static void entry_id_base(struct btsdumpd_ctx *c, char *buf, size_t len)
{
	char safe[16];

	btsdumpd_sanitize_comm(c->crash.comm ? c->crash.comm : "", safe);
	snprintf(buf, len, "%llu.%d.%s", (unsigned long long)c->crash.timestamp,
		 (int)c->crash.pid, safe);
}

/* companion.c's child decompressing systemd-coredump's file, once its
 * pipe ended: a file that did not decompress whole (corrupt, truncated)
 * gave a cut core, and the entry says so. */
static void reap_source(struct btsdumpd_ctx *c)
{
	int status;

	if (c->source <= 0)
		return;
	if (waitpid(c->source, &status, 0) == c->source &&
	    (!WIFEXITED(status) || WEXITSTATUS(status))) {
		c->crash.core_truncated = true;
		btsdumpd_crash_setf(&c->crash.core_reason, "%s did not decompress whole "
				    "(corrupt or truncated)", c->crash.coredump_filename ?
				    c->crash.coredump_filename : "the stored core");
	}
	c->source = 0;
}

/* The journal entry (docs/btsdumpd.md "Journal"). */
static void log_crash(struct btsdumpd_ctx *c, unsigned long long ratelimited_before)
{
	const struct btsdumpd_crash *cr = &c->crash;
	const char *branches = cr->an.last_branches, *fault = cr->an.fault;
	const char *cd_ts = cr->coredump_timestamp;
	char tid[24];
	char *msg = NULL, entry[PATH_MAX + 64], before[64], cd_pid[48], cd_time[64];
	char comm[128];
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
		snprintf(cd_pid, sizeof(cd_pid), "COREDUMP_PID=%d", (int)cr->pid);
		snprintf(cd_time, sizeof(cd_time), "COREDUMP_TIMESTAMP=%s", cd_ts);
		extra[x++] = cd_pid;
		extra[x++] = cd_time;
	}
	snprintf(tid, sizeof(tid), "%llu", (unsigned long long)cr->an.fault_tid);
	/* the trail is the library's text, escaped; the comm is escaped here */
	n = asprintf(&msg, "Process %d (%s) of user %u dumped core: %s.%s%s%s%s%s%s",
		     (int)cr->pid, btsdec_escape_buf(cr->comm ? cr->comm : "?", comm,
						     sizeof(comm), 0), (unsigned int)cr->uid,
		     btsdumpd_signal_name(cr->signal),
		     branches ? "\n\nLast branches of thread " : "",
		     branches && cr->an.has_tid ? tid : "",
		     branches ? ":\n" : "", branches ? branches : "",
		     branches && fault ? "\n" : "", branches && fault ? fault : "");
	if (n < 0)
		return;
	btsdumpd_log_entry(LOG_CRIT, msg, c, extra);
	free(msg);
}

static void log_ratelimited(struct btsdumpd_ctx *c, unsigned long long count, uint64_t bytes)
{
	char field[64];
	const char *extra[] = { field, NULL };
	const struct btsdumpd_crash *cr = &c->crash;
	char *msg, comm[128];

	snprintf(field, sizeof(field), "BTSDUMPD_RATELIMITED=%llu", count);
	if (asprintf(&msg, "Process %d (%s) of user %u dumped core: %s; not stored: rate "
		     "limit (%u per %u s), %llu suppressed in this window, %llu bytes discarded",
		     (int)cr->pid, btsdec_escape_buf(cr->comm ? cr->comm : "?", comm,
						     sizeof(comm), 0), (unsigned int)cr->uid,
		     btsdumpd_signal_name(cr->signal),
		     c->cfg.rate_limit_burst, c->cfg.rate_limit_interval_sec, count,
		     (unsigned long long)bytes) < 0)
		return;
	btsdumpd_log_entry(LOG_WARNING, msg, c, extra);
	free(msg);
}

int btsdumpd_collect(struct btsdumpd_ctx *c, int core_fd)
{
	unsigned long long suppressed;
	struct spool s;
	char base[96], tmp[sizeof(c->id) + 4];
	int ret, dirfd = -1, spool_fd;
	/* a process that changed credentials (SUID_DUMP_ROOT): its memory may
	 * hold what its user must not read; the entry stays root-only */
	uid_t reader = c->crash.dump_mode == 2 ? 0 : c->crash.uid;

	c->id[0] = '\0';	/* no entry yet (the companion collects many) */
	c->acl = NULL;
	ret = btsdumpd_store_open(c);
	if (ret) {
		btsdumpd_log(LOG_ERR, "store %s: %s; core of PID %d discarded", c->store,
			     strerror(-ret), (int)c->crash.pid);
		drain(core_fd);
		close(core_fd);
		return ret;
	}
	if (btsdumpd_rate_limited(c, &suppressed)) {
		log_ratelimited(c, suppressed, drain(core_fd));
		close(core_fd);
		return 0;
	}
	entry_id_base(c, base, sizeof(base));
	ret = btsdumpd_entry_begin(c, base, &dirfd);
	spool_fd = ret ? -1 : btsdumpd_entry_create_file(dirfd, BTSDUMPD_SPOOL_FILE);
	if (spool_fd < 0) {
		ret = ret ? ret : -errno;
		btsdumpd_log(LOG_ERR, "store %s: new entry %s: %s; core of PID %d discarded",
			     c->store, base, strerror(-ret), (int)c->crash.pid);
		drain(core_fd);
		close(core_fd);
		goto out;
	}
	spool_core(c, core_fd, spool_fd, &s);
	close(core_fd);		/* the dumping process is released here */
	reap_source(c);
	lbr_note(c, dirfd, &spool_fd, &s);
	c->crash.core_size = s.received;
	c->crash.has_core_size = true;
	c->crash.core_truncated |= s.written < s.received;
	if (s.stopped)
		btsdumpd_log(LOG_WARNING, "%s: core cut at %llu of %llu bytes: %s", c->id,
			     (unsigned long long)s.written, (unsigned long long)s.received,
			     s.reason);
	btsdumpd_analyze(c, dirfd, spool_fd, s.written);
	store_core(c, dirfd, spool_fd, &s);
	close(spool_fd);
	if (c->crash.core != BTSDUMPD_CORE_STORED || strcmp(c->crash.core_file, BTSDUMPD_SPOOL_FILE))
		unlinkat(dirfd, BTSDUMPD_SPOOL_FILE, 0);
	ret = btsdumpd_entry_commit(c, dirfd, reader);
	if (ret && c->crash.core == BTSDUMPD_CORE_STORED) {
		/* out of space for the metadata: keep the report, not the core */
		unlinkat(dirfd, BTSDUMPD_CORE_FILE, 0);
		unlinkat(dirfd, BTSDUMPD_SPOOL_FILE, 0);
		unlinkat(dirfd, BTSDUMPD_META, 0);
		core_dropped(c, "no space left for the entry with its core");
		ret = btsdumpd_entry_commit(c, dirfd, reader);
	}
	if (ret) {
		btsdumpd_log(LOG_ERR, "store %s: entry %s: %s; removed", c->store, c->id,
			     strerror(-ret));
		snprintf(tmp, sizeof(tmp), ".#%s", c->id);
		btsdumpd_entry_remove(tmp);
	}
	log_crash(c, suppressed);
	btsdumpd_vacuum(c, ret ? NULL : c->id);
out:
	if (dirfd >= 0)
		close(dirfd);
	return ret;
}
