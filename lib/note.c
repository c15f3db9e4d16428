// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trace notes as the library holds them: a note descriptor parsed (through
 * format.c, which checks every rule of docs/format.md §2.2 and §1.1) into a
 * struct btsdec_trace with its records, and a trace serialized back into a
 * whole ELF note (btsdump add-note, the fixtures).  No libelf here: this is
 * the part the note fuzzer drives directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

int btsdec_note_parse(uint32_t type, const void *desc, size_t len,
		      struct btsdec_trace *t, struct btsdec_err *err)
{
	const uint8_t *d = desc;
	struct btsdec_record *recs = NULL;
	struct bts_crash_note_hdr h;
	int ret;

	ret = btsdec_note_hdr_load(type, desc, len, &h, err);
	if (ret)
		return ret;
	if (h.nr_records) {
		recs = calloc(h.nr_records, sizeof(*recs));
		if (!recs)
			return btsdec_fail(err, -ENOMEM, "out of memory for %llu records",
					   (unsigned long long)h.nr_records);
	}
	for (size_t i = 0; i < h.nr_records; i++)
		btsdec_record_load(d + h.hdr_size + i * BTS_RECORD_SIZE, &recs[i]);
	ret = btsdec_records_check(type, recs, h.nr_records, err);
	if (ret) {
		free(recs);
		return ret;
	}
	*t = (struct btsdec_trace){
		.type = type, .flags = h.flags, .id = h.id,
		.capacity = h.capacity, .lost = h.lost, .nr_gaps = h.nr_gaps,
		.source = h.source, .nr = h.nr_records, .recs = recs,
	};
	return 0;
}

void btsdec_trace_free(struct btsdec_trace *t)
{
	free(t->recs);
	t->recs = NULL;
	t->nr = 0;
}

ssize_t btsdec_note_write(void *buf, size_t buflen,
			  const struct btsdec_trace *t, struct btsdec_err *err)
{
	size_t need = btsdec_note_size(t->nr), descsz;
	struct bts_crash_note_hdr h;
	uint8_t *d;

	if (!need || t->nr > t->capacity)
		return btsdec_fail(err, -EINVAL,
				   "%zu records do not fit a ring of %llu",
				   t->nr, (unsigned long long)t->capacity);
	if (buflen < need)
		return btsdec_fail(err, -ENOSPC, "note needs %zu bytes", need);
	descsz = BTS_CRASH_NOTE_HDR_SIZE + t->nr * BTS_RECORD_SIZE;
	memset(buf, 0, need);
	d = (uint8_t *)buf + btsdec_note_frame_store(buf, t->type, descsz);
	h = (struct bts_crash_note_hdr){
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = BTS_CRASH_NOTE_HDR_SIZE, .record_size = BTS_RECORD_SIZE,
		.flags = t->flags, .id = t->id, .capacity = t->capacity,
		.nr_records = t->nr, .lost = t->lost, .nr_gaps = t->nr_gaps,
		.source = t->source,
	};
	btsdec_note_hdr_store(d, &h);
	d += BTS_CRASH_NOTE_HDR_SIZE;
	for (size_t i = 0; i < t->nr; i++, d += BTS_RECORD_SIZE)
		btsdec_record_store(d, &t->recs[i]);
	return need;
}
