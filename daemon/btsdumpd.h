/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btsdumpd internals shared by its files: the per-crash context, logging
 * (journal, else /dev/kmsg, else stderr) and the collection pipeline
 * (collect.c: rate limit, spool, analysis, store, vacuum; harvest.c: kdump
 * vmcores).  Process context, one crash per process.
 */
#ifndef BTSDUMPD_H
#define BTSDUMPD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "crash.h"
#include "meta.h"

enum btsdumpd_log_target {
	BTSDUMPD_LOG_AUTO,	/* journal if its socket exists, else kmsg, else stderr */
	BTSDUMPD_LOG_JOURNAL,
	BTSDUMPD_LOG_KMSG,
	BTSDUMPD_LOG_STDERR,
};

/* mapped.c: descriptors of the crashing process's ELF files (its
 * executable first), distinct, for the analysis (lib/symbol.c takes one
 * only where its build-id is the core's).  At most BTSDUMPD_MAPPED_MAX:
 * a process maps more (full), the rest are found by path alone. */
#define BTSDUMPD_MAPPED_MAX	256
#define BTSDUMPD_MAPPED_CHUNK	128	/* a hand-off datagram's (SCM_MAX_FD 253) */
struct btsdumpd_mapped {
	int fd[BTSDUMPD_MAPPED_MAX];
	dev_t dev[BTSDUMPD_MAPPED_MAX];
	ino_t ino[BTSDUMPD_MAPPED_MAX];
	size_t nr;
	bool full;
};

struct btsdumpd_ctx {
	const char *store;
	const char *config_path;
	const char *socket_path;
	const char *lbr_dir;		/* the LBR collector's snapshots */
	bool direct;
	struct btsdumpd_config cfg;
	struct btsdumpd_crash crash;	/* what is known of the crash so far */
	char id[128];			/* the entry's name, once begun */
	const char *acl;		/* the entry's ACL state, once committed */
	pid_t source;			/* companion: the child decompressing the core
					 * into its pipe; collect.c reaps it (0: none) */
	struct btsdumpd_mapped mapped;	/* the handler's, or the hand-off's */
	bool exe_as_crasher;		/* companion: the analysis opens EXE and the
					 * files of proc_maps as the crashing user
					 * (the process is gone) */
	char *proc_maps;		/* companion: COREDUMP_PROC_MAPS, or NULL */
};

void btsdumpd_log_init(enum btsdumpd_log_target t);
void btsdumpd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void btsdumpd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One structured entry: MESSAGE, PRIORITY and BTSDUMPD_<KEY> for every key
 * of the crash's meta (btsdumpd_crash_to_meta, with the entry's id and ACL
 * state), plus extra fields ("KEY=value", NULL-terminated). */
void btsdumpd_log_entry(int prio, const char *message, const struct btsdumpd_ctx *c,
			const char *const *extra);

/* entry.c: creates the store if need be (0755: entries protect
 * themselves) and opens it for the calls below; 0 or -errno.  Its
 * descriptor, once open (else -1). */
int btsdumpd_store_open(struct btsdumpd_ctx *c);
int btsdumpd_store_fd(void);
/* The size of the filesystem statvfs described, in bytes. */
struct statvfs;
uint64_t btsdumpd_fs_size(const struct statvfs *v);
/* ratelimit.c: true when this crash is over RateLimitBurst in its
 * interval (*suppressed: the count in this window); else false, and
 * *suppressed is the count suppressed in the previous window, reported
 * once by this entry. */
bool btsdumpd_rate_limited(struct btsdumpd_ctx *c, unsigned long long *suppressed);
/* Loads the configuration (warnings logged). */
void btsdumpd_load_config(struct btsdumpd_ctx *c);
/* Stores the crash whose core is read from core_fd (closed here); c->crash
 * already holds PID, UID, GID, SIGNAL, TIMESTAMP and what /proc told.
 * 0 or a negative errno when the store could not be written at all. */
int btsdumpd_collect(struct btsdumpd_ctx *c, int core_fd);
/* vacuum.c: applies MaxUse and KeepFree to the store; keep names an entry
 * never to delete (NULL: none). */
int btsdumpd_vacuum(struct btsdumpd_ctx *c, const char *keep);
/* Reports on every vmcore under dirs not yet harvested. */
int btsdumpd_harvest(struct btsdumpd_ctx *c, char *const *dirs, int n);
/* Companion mode (companion.c): systemd-coredump's cores, from its journal
 * entries (journal_dir: a journal directory instead of the system's, for
 * tests); once: what is there now, then return.  0 or -errno. */
int btsdumpd_companion(struct btsdumpd_ctx *c, const char *journal_dir, bool once);
/* The SHA-256 of the file at fd, whole, in lowercase hex (libgcrypt): 0 or
 * -errno. */
#define BTSDUMPD_SHA256_HEX	64
int btsdumpd_sha256_fd(int fd, char hex[BTSDUMPD_SHA256_HEX + 1]);
struct btsdumpd_lbr_framed;
/* The LBR note (framed) written into the spool of systemd-coredump's core
 * whose digest (before the note) is hex: kept in the entry as
 * BTSDUMPD_LBR_NOTE, the digest in its meta (COREDUMP_SHA256), for gdb on
 * that core (gdb/bts.py, docs/btsdumpd.md "Companion mode"). */
void btsdumpd_companion_keep_note(struct btsdumpd_ctx *c, int dirfd,
				  const struct btsdumpd_lbr_framed *note, const char *hex);

/* entry.c: an entry's transaction.  begin: a hidden .#ID directory (ID
 * from id_base, made unique) in c->id, *dirfd open on it; commit: modes
 * and ACLs (reader may read it; 0: root only), meta from c->crash, the
 * rename to ID; remove: a directory of the store and its known files. */
int btsdumpd_entry_begin(struct btsdumpd_ctx *c, const char *id_base, int *dirfd);
int btsdumpd_entry_commit(struct btsdumpd_ctx *c, int dirfd, uid_t reader);
void btsdumpd_entry_remove(const char *name);
/* A new file in an entry (O_EXCL, mode 0600): fd or -1 with errno. */
int btsdumpd_entry_create_file(int dirfd, const char *name);
/* The spooled core in an entry while it is collected (kept as the stored
 * core with Compress=no). */
#define BTSDUMPD_SPOOL_FILE	"core"
/* The analysis child's findings in an entry while it runs
 * (btsdumpd_analysis_write). */
#define BTSDUMPD_ANALYSIS_FILE	"analysis"
/* analyze.c: the spooled core (bytes long) analysed in an unprivileged
 * child into the entry's reports; its findings into c->crash.an. */
void btsdumpd_analyze(struct btsdumpd_ctx *c, int dirfd, int spool_fd, uint64_t bytes);

/* The stock-kernel collector (docs/btsdumpd.md "Stock kernels"), its
 * directory BTSDUMPD_LBR_DIR_DEFAULT (entries.h).  lbr-collector.c: runs
 * until SIGTERM; 0, also when it cannot work (one line logged, DIR/status
 * says why). */
int btsdumpd_lbr_collector(const char *dir, bool no_kept);
/* lbr-note.c: the snapshot of the faulting thread of the core at path
 * into it as a thread note, source lbr: 0; -EEXIST when the core has a
 * trace note already (never replaced); -ENOENT without a collector or a
 * snapshot; -ETIMEDOUT when the collector settled none within 30 s;
 * else -errno.  crash_time: the dump's start (%t, seconds since the
 * epoch; 0 unknown): the snapshot must come from around it.  mapped (may
 * be NULL): the process's files, for the code at each entry's from.  The
 * note written, framed, into *note (malloc'ed; zeroed when none). */
struct btsdumpd_lbr_framed {
	void *data;	/* the note as in the core: Elf64_Nhdr, name, descriptor */
	size_t len;
};
int btsdumpd_lbr_note(const char *dir, const char *path, uint64_t crash_time,
		      const struct btsdumpd_mapped *mapped, struct btsdumpd_lbr_framed *note);

/* mapped.c: the executable and map_files of pid, while the kernel holds
 * it (needs root's CAP_SYS_ADMIN); exe and the paths of a /proc/PID/maps
 * text (either NULL; maps is cut into lines) opened with the crashing
 * user's file-system identity (0 or -errno); closing them all. */
void btsdumpd_mapped_open(struct btsdumpd_mapped *m, pid_t pid);
int btsdumpd_mapped_open_as(struct btsdumpd_mapped *m, const char *exe, char *maps,
			    uid_t uid, gid_t gid);
void btsdumpd_mapped_close(struct btsdumpd_mapped *m);
/* The hand-off: m's descriptors as datagrams of BTSDUMPD_MAPPED_CHUNK
 * (0 or -errno); a received datagram of len bytes: its descriptors added
 * to m (-EAGAIN), else the one it carries (the core's), else -ENODATA. */
struct msghdr;
int btsdumpd_mapped_send(int sock, const struct btsdumpd_mapped *m);
int btsdumpd_mapped_receive(struct btsdumpd_mapped *m, struct msghdr *mh, size_t len);

#endif /* BTSDUMPD_H */
