/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, records and notes: the part of the decoder library's interface
 * that note.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_NOTE_API_H
#define BTSDEC_NOTE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"

/* One parsed trace note (thread or CPU). */
struct btsdec_trace {
	uint32_t type;		/* NT_BTSCRASH_THREAD or NT_BTSCRASH_CPU */
	uint32_t flags;		/* BTS_NOTE_F_* */
	uint64_t id;
	uint64_t capacity;
	uint64_t lost;
	uint32_t nr_gaps;
	uint16_t source;
	size_t nr;		/* records, oldest first */
	struct btsdec_record *recs;	/* malloc'ed, owned; NULL when streamed */
	struct btsdec_recsrc *src;	/* streamed: read from a file on demand
					 * (btsdec_trace_at), owned */
};

/* Parses a note descriptor.  On error returns -EINVAL (or -ENOMEM) and puts
 * the rule that failed into err.  `t` is filled only on success. */
int btsdec_note_parse(uint32_t type, const void *desc, size_t len,
		      struct btsdec_trace *t, struct btsdec_err *err);
struct btsdec_recwin;

/* The same for a descriptor of len bytes at file offset `off` of fd, which
 * must stay open while t is used: the header is read and every record
 * checked now, in pieces; the records are read again, a window at a time,
 * by btsdec_trace_at.  Memory stays flat in the trace's length (issue 16).
 * The window is win, which may serve many traces and must outlive them
 * (a core's threads share one: issue 30), or one of t's own if win is
 * NULL.  -EIO when the file ends early. */
int btsdec_note_parse_fd(uint32_t type, int fd, uint64_t off, size_t len,
			 struct btsdec_recwin *win, struct btsdec_trace *t,
			 struct btsdec_err *err);
/* A window of records read from a file, for btsdec_note_parse_fd. */
struct btsdec_recwin *btsdec_recwin_new(void);
void btsdec_recwin_free(struct btsdec_recwin *win);
void btsdec_trace_free(struct btsdec_trace *t);
/* Record i (< t->nr) of t, held or streamed.  A streamed trace whose file
 * fails to read gives zeroed records and btsdec_trace_error says so. */
struct btsdec_record btsdec_trace_at(const struct btsdec_trace *t, size_t i);
/* 0, or -EIO when a streamed read failed since the trace was parsed. */
int btsdec_trace_error(const struct btsdec_trace *t);

/* Serializes t as a whole ELF note into buf.  Returns the byte count, or
 * -ENOSPC / -EINVAL. */
ssize_t btsdec_note_write(void *buf, size_t buflen,
			  const struct btsdec_trace *t, struct btsdec_err *err);

#endif /* BTSDEC_NOTE_API_H */
