// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the note parser (lib/note.c) and ring ordering
 * (lib/ring.c): hostile descriptors must be rejected cleanly, and whatever
 * is accepted must survive a write/parse round trip unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct btsdec_trace *t)
{
	size_t len = btsdec_note_size(t->nr);
	struct btsdec_trace again;
	uint8_t *buf;

	if (!len)
		__builtin_trap();
	buf = malloc(len);
	if (!buf)
		return;
	if (btsdec_note_write(buf, len, t, NULL) != (ssize_t)len ||
	    btsdec_note_parse(t->type, buf + 24, len - 24, &again, NULL))
		__builtin_trap();
	if (again.nr != t->nr || again.id != t->id || again.flags != t->flags ||
	    again.capacity != t->capacity || again.lost != t->lost ||
	    again.nr_gaps != t->nr_gaps || again.source != t->source ||
	    (t->nr && memcmp(again.recs, t->recs, t->nr * sizeof(*t->recs))))
		__builtin_trap();
	btsdec_trace_free(&again);
	free(buf);
}

static void ring(const struct btsdec_trace *t, uint8_t seed)
{
	struct btsdec_record *out;
	ssize_t n;

	if (!t->nr)
		return;
	out = calloc(t->nr, sizeof(*out));
	if (!out)
		return;
	n = btsdec_ring_order(t->recs, t->nr, seed % t->nr, seed & 1, out, NULL);
	if (n < 0 || (size_t)n > t->nr)
		__builtin_trap();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btsdec_trace t;
	struct btsdec_err err;
	uint32_t type;

	if (size < 1)
		return 0;
	type = data[0] & 1 ? NT_BTSCRASH_CPU : NT_BTSCRASH_THREAD;
	if (btsdec_note_parse(type, data + 1, size - 1, &t, &err)) {
		if (!err.msg[0])
			__builtin_trap();	/* every rejection says why */
		return 0;
	}
	round_trip(&t);
	ring(&t, data[0] >> 1);
	btsdec_trace_free(&t);
	return 0;
}
