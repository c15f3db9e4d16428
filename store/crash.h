/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What btsdumpd knows of one crash, typed (crash.c): the process (from the
 * kernel's arguments and /proc, the hand-off, or systemd-coredump's journal
 * entry) or the kernel (a kdump vmcore), what became of its core, and the
 * analysis's findings.  Carried through the pipeline; turned into the
 * entry's `meta` and the journal's fields in one place,
 * btsdumpd_crash_to_meta().  The two places it crosses a process boundary
 * parse into it, checked: the hand-off's datagrams and the analysis
 * child's result.  Errors: negative errno.
 */
#ifndef BTSDUMPD_CRASH_H
#define BTSDUMPD_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meta.h"

enum btsdumpd_kind { BTSDUMPD_KIND_PROCESS, BTSDUMPD_KIND_KERNEL };
/* meta CORE: none (not kept: Storage=none, or a vmcore), stored, dropped */
enum btsdumpd_core { BTSDUMPD_CORE_UNSET, BTSDUMPD_CORE_NONE, BTSDUMPD_CORE_STORED,
		     BTSDUMPD_CORE_DROPPED };
/* meta TRACE */
enum btsdumpd_trace { BTSDUMPD_TRACE_UNSET, BTSDUMPD_TRACE_PRESENT, BTSDUMPD_TRACE_ABSENT,
		      BTSDUMPD_TRACE_ERROR };

/* The analysis's findings (analyze.c, harvest.c). */
struct btsdumpd_analysis {
	enum btsdumpd_trace trace;
	bool has_threads, has_tid;
	uint64_t threads;		/* TRACE_THREADS */
	uint64_t rejected;		/* TRACE_REJECTED: malformed notes; 0 = none */
	uint64_t fault_tid;		/* FAULT_TID (has_tid) */
	char *last_branches;		/* LAST_BRANCHES: the journal's summary */
	char *fault;			/* FAULT: the fault line */
	char *trail;			/* TRAIL: the trail signature, hex
					 * (lib/trail.c) */
	char *error, *warning;		/* TRACE_ERROR, TRACE_WARNING */
	uint64_t report_last;		/* REPORT_LAST: the reports hold the newest
					 * N branches of each thread (ReportSizeMax);
					 * 0 = all */
	bool report_cut;		/* REPORT_CUT: cut at ReportSizeMax even so */
};

/* The required numbers of a process crash, as bits of crash.have. */
enum {
	BTSDUMPD_HAVE_PID = 1, BTSDUMPD_HAVE_UID = 2, BTSDUMPD_HAVE_GID = 4,
	BTSDUMPD_HAVE_SIGNAL = 8, BTSDUMPD_HAVE_TIMESTAMP = 16,
	BTSDUMPD_HAVE_PROCESS = 31,
};

struct btsdumpd_crash {
	enum btsdumpd_kind kind;
	unsigned int have;		/* BTSDUMPD_HAVE_* set */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int signal;
	uint64_t timestamp;		/* seconds since the epoch */
	int dump_mode;			/* the kernel's %d (0-2); -1: not known */
	char *comm, *exe, *cmdline, *cgroup, *hostname;
	/* companion mode: systemd-coredump's entry */
	char *coredump_filename, *coredump_timestamp, *coredump_boot_id;
	char *coredump_sha256;		/* its core's, with an LBR note kept */
	/* a kernel crash */
	char *vmcore, *symbols;
	/* the core */
	enum btsdumpd_core core;
	const char *core_file;		/* a static name in the entry */
	uint64_t core_size, core_stored_size;
	bool has_core_size, core_truncated;
	char *core_reason;
	struct btsdumpd_analysis an;
};

/* An empty crash (nothing known, dump mode unknown). */
void btsdumpd_crash_init(struct btsdumpd_crash *cr);
void btsdumpd_crash_free(struct btsdumpd_crash *cr);
void btsdumpd_analysis_free(struct btsdumpd_analysis *an);
/* *field = a copy of v (NULL clears it); 0 or -ENOMEM. */
int btsdumpd_crash_set(char **field, const char *v);
/* *field = formatted text; 0 or -ENOMEM. */
int btsdumpd_crash_setf(char **field, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A process crash's required numbers from text (the kernel's arguments,
 * a datagram, a journal field): whole decimal numbers, pid/uid/gid/signal
 * at most INT_MAX.  bit is one BTSDUMPD_HAVE_*; 0 or -EINVAL. */
int btsdumpd_crash_set_number(struct btsdumpd_crash *cr, unsigned int bit, const char *s);
/* The name of the first required number not set, or NULL. */
const char *btsdumpd_crash_missing(const struct btsdumpd_crash *cr);

/* The crash as `meta` (docs/btsdumpd.md "meta"), in one order; id and acl
 * (the entry's name and ACL state) when known.  0 or -ENOMEM. */
int btsdumpd_crash_to_meta(const struct btsdumpd_crash *cr, const char *id, const char *acl,
			   struct btsdumpd_meta *m);

/* The process facts the handler sends the service, "KEY=value" each
 * (NULL-terminated, free with btsdumpd_fields_free); 0 or -ENOMEM. */
int btsdumpd_crash_handoff_fields(const struct btsdumpd_crash *cr, char ***fields);
void btsdumpd_fields_free(char **fields);
/* The service side: one datagram of len bytes, "KEY=value", into cr when
 * KEY is one the handler sends (other keys are ignored; a bad number is
 * left unset, for btsdumpd_crash_missing to name).  0, -EBADMSG (no '=',
 * or a NUL inside) or -ENOMEM. */
int btsdumpd_crash_handoff_field(struct btsdumpd_crash *cr, const char *buf, size_t len);

/* The analysis child's result: written as meta text to fd, parsed back
 * (len bytes, checked: unknown keys ignored, bad numbers or TRACE values
 * refused).  0, -EBADMSG, -EFBIG or -ENOMEM. */
int btsdumpd_analysis_write(int fd, const struct btsdumpd_analysis *an);
int btsdumpd_analysis_parse(const char *buf, size_t len, struct btsdumpd_analysis *an);
/* The same from a file of an entry (the child's result file). */
int btsdumpd_analysis_read_at(int dirfd, const char *name, struct btsdumpd_analysis *an);

#endif /* BTSDUMPD_CRASH_H */
