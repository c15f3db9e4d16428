/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text of one kernel-dump ring: a CPU's ring or crash note, or a task's
 * ring, as `btsdump vmcore` (lib/vmreport.c) and `crash> bts`
 * (crash-ext/bts.c) both print it: one heading, one numbering (position in
 * the trace, oldest first, from 1: docs/json.md "Numbering"), one rendering
 * of markers.  Pure C over lib/format.c; symbols come from the caller
 * (System.map, crash's symbol table) through a callback.
 */
#ifndef BTSDEC_RINGTEXT_H
#define BTSDEC_RINGTEXT_H

#include <stdio.h>

#include "format.h"

/* What one ring's text shows: its records (oldest first) and its facts. */
struct btsdec_ring_text {
	const char *what;		/* "CPU 1 (panic CPU)", "PID 12 (x) user branches";
					 * a value from the dump in it escaped (lib/escape.h) */
	const struct btsdec_record *recs;
	size_t nr;
	uint64_t capacity;
	unsigned int source;		/* BTS_SOURCE_* */
	bool wrapped;
	bool frozen;
	uint64_t freeze_ts;		/* ns since boot; 0 = not recorded */
	const char *copy;		/* "full ring", "crash note"; NULL: not said */
	bool user;			/* user branches (a task's ring) */
};

/* Names addr into buf ("func+0x12", "(crasher)"); NULL: no name. */
typedef const char *(*btsdec_addr_name_fn)(const void *ctx, uint64_t addr,
					    char *buf, size_t len);

/* The heading line alone ("CPU 1 (panic CPU): 32 of 4096 records (...)"),
 * `take` the number of records shown under it. */
void btsdec_ring_text_heading(FILE *out, const struct btsdec_ring_text *v, size_t take);
/* The heading line, then the newest `last` records (0: all), oldest first;
 * raw: the three words of each record, markers included, no names. */
void btsdec_ring_text_write(FILE *out, const struct btsdec_ring_text *v, size_t last,
			    bool raw, btsdec_addr_name_fn name, const void *ctx);

#endif
