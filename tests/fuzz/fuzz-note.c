// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the note parser (lib/note.c) and ring ordering
 * (lib/format.c): hostile descriptors must be rejected cleanly, whatever is
 * accepted must obey docs/format.md §2.2 and survive a write/parse round
 * trip unchanged.  Input: one selector byte, then the descriptor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOTE_PREFIX	24	/* n_namesz, n_descsz, n_type, "BTSCRASH\0" padded */

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* What the parser accepted must be what the format allows. */
static void check_accepted(uint32_t type, const struct btsdec_trace *t)
{
	if (t->type != type || !t->capacity ||
	    t->capacity > BTS_CRASH_MAX_CAPACITY || t->nr > t->capacity ||
	    (t->flags & ~BTS_NOTE_F_KNOWN) ||
	    (t->source != BTS_SOURCE_HW && t->source != BTS_SOURCE_EMUL &&
	     t->source != BTS_SOURCE_LBR) ||
	    (t->nr && !t->recs))
		__builtin_trap();
	if (type == NT_BTSCRASH_THREAD && !(t->flags & BTS_NOTE_F_USER_ONLY))
		__builtin_trap();
	for (size_t i = 0; i < t->nr; i++) {
		const struct btsdec_record *r = &t->recs[i];

		if (btsdec_is_marker(r)) {
			if (btsdec_marker_check(r, NULL) ||
			    !strcmp(btsdec_marker_name(r), "invalid") ||
			    (BTS_MARKER_KIND(r->from) == BTS_MARK_GAP &&
			     !strcmp(btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)),
				     "invalid")))
				__builtin_trap();
		} else if (type == NT_BTSCRASH_THREAD &&
			   (btsdec_is_kernel_addr(r->from) ||
			    btsdec_is_kernel_addr(r->to))) {
			__builtin_trap();
		}
	}
}

/* Writes t as a note, checks the ELF note framing, parses it back and
 * compares.  A v1 input (hdr_size 64) must come back byte for byte. */
static void round_trip(const struct btsdec_trace *t, const uint8_t *desc,
		       size_t len)
{
	size_t need = btsdec_note_size(t->nr);
	struct btsdec_trace again;
	uint8_t *buf;

	if (!need || need != NOTE_PREFIX + BTS_CRASH_NOTE_HDR_SIZE +
			     t->nr * BTS_RECORD_SIZE)
		__builtin_trap();
	/* one byte short: refused, and nothing written past the buffer */
	buf = malloc(need - 1);
	if (!buf)
		return;
	if (btsdec_note_write(buf, need - 1, t, NULL) != -ENOSPC)
		__builtin_trap();
	free(buf);

	buf = malloc(need);
	if (!buf)
		return;
	if (btsdec_note_write(buf, need, t, NULL) != (ssize_t)need)
		__builtin_trap();
	if (get_le(buf, 4) != BTS_CRASH_NOTE_NAMESZ ||
	    get_le(buf + 4, 4) != need - NOTE_PREFIX ||
	    get_le(buf + 8, 4) != t->type ||
	    memcmp(buf + 12, BTS_CRASH_NOTE_NAME "\0\0\0", 12))
		__builtin_trap();
	if (get_le(desc + 6, 2) == BTS_CRASH_NOTE_HDR_SIZE &&
	    (len != need - NOTE_PREFIX || memcmp(buf + NOTE_PREFIX, desc, len)))
		__builtin_trap();
	if (btsdec_note_parse(t->type, buf + NOTE_PREFIX, need - NOTE_PREFIX,
			      &again, NULL))
		__builtin_trap();
	if (again.type != t->type || again.nr != t->nr || again.id != t->id ||
	    again.flags != t->flags || again.capacity != t->capacity ||
	    again.lost != t->lost || again.nr_gaps != t->nr_gaps ||
	    again.source != t->source ||
	    (t->nr && memcmp(again.recs, t->recs, t->nr * sizeof(*t->recs))))
		__builtin_trap();
	btsdec_trace_free(&again);
	free(buf);
}

/* The records as the slots of a ring of nr slots, index and wrap flag from
 * the selector; index == nr must be refused.  Checks the count exactly. */
static void ring(const struct btsdec_trace *t, uint8_t sel)
{
	uint64_t cap = t->nr, index;
	struct btsdec_record *out;
	bool wrapped = sel & 2;
	size_t want = 0;
	ssize_t n;

	if (!cap)
		return;
	index = (sel >> 2) % (cap + 1);
	out = calloc(cap, sizeof(*out));
	if (!out)
		return;
	n = btsdec_ring_order(t->recs, cap, index, wrapped, out, NULL);
	if (index == cap) {
		if (n != -EINVAL)
			__builtin_trap();
		free(out);
		return;
	}
	if (t->recs[index].from || t->recs[index].to || t->recs[index].flags)
		wrapped = true;
	for (uint64_t i = 0; i < (wrapped ? cap : index); i++)
		want += t->recs[i].from || t->recs[i].to || t->recs[i].flags;
	if (n < 0 || (uint64_t)n > cap || (size_t)n != want)
		__builtin_trap();
	for (ssize_t i = 0; i < n; i++)
		if (!out[i].from && !out[i].to && !out[i].flags)
			__builtin_trap();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btsdec_trace t;
	struct btsdec_err err;
	uint32_t type;
	int ret;

	if (size < 1)
		return 0;
	type = data[0] & 1 ? NT_BTSCRASH_CPU : NT_BTSCRASH_THREAD;
	err.msg[0] = '\0';
	ret = btsdec_note_parse(type, data + 1, size - 1, &t, &err);
	if (ret) {
		if ((ret != -EINVAL && ret != -ENOMEM) || !err.msg[0])
			__builtin_trap();	/* every rejection says why */
		return 0;
	}
	check_accepted(type, &t);
	round_trip(&t, data + 1, size - 1);
	ring(&t, data[0]);
	btsdec_trace_free(&t);
	return 0;
}
