// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the format decoder's dump side (lib/format.c), the
 * code crash> bts and btsdump vmcore share: the input is a physical memory
 * image with a ring table at address 0, read through the read callback with
 * the v1 layout VMCOREINFO exports; every ring it names is loaded and put in
 * time order.  The same bytes are also walked as a buffer of ELF notes.
 * Whatever is accepted must obey docs/format.md §4.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct image {
	const uint8_t *p;
	size_t size;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len,
		      struct btsdec_err *err)
{
	const struct image *im = ctx;

	if (addr > im->size || len > im->size - addr)
		return btsdec_fail(err, -ENOENT, "not in the image");
	memcpy(buf, im->p + addr, len);
	return 0;
}

static const struct btsdec_ring_layout v1 = {
	.size = sizeof(struct bts_crash_ring),
#define OFF(f) .f = offsetof(struct bts_crash_ring, f)
	OFF(flags), OFF(id), OFF(capacity), OFF(index), OFF(records_pa),
	OFF(lost), OFF(nr_gaps), OFF(source), OFF(freeze_ts),
#undef OFF
};

static void check_ring(struct image *im, uint64_t addr)
{
	struct btsdec_record *recs;
	struct bts_crash_ring d;
	bool wrapped;
	size_t nr;

	if (btsdec_ring_desc_load(image_read, im, &v1, addr, &d, NULL))
		return;
	if (d.magic != BTS_CRASH_RING_MAGIC || !d.capacity ||
	    d.capacity > BTS_CRASH_MAX_CAPACITY || d.index >= d.capacity)
		__builtin_trap();
	if (btsdec_ring_records(image_read, im, &d, im->size, &recs, &nr,
				&wrapped, NULL))
		return;
	if (nr > d.capacity || (!wrapped && nr > d.index) ||
	    ((d.flags & BTS_RING_F_WRAPPED) && !wrapped))
		__builtin_trap();
	for (size_t i = 0; i < nr; i++)
		if (!recs[i].from && !recs[i].to && !recs[i].flags)
			__builtin_trap();	/* an empty slot is never a record */
	free(recs);
}

static void walk_notes(const uint8_t *data, size_t size)
{
	struct btsdec_elf_note n;
	size_t off = 0, last = 0;

	while (btsdec_elf_note_next(data, size, &off, &n, NULL) > 0) {
		if (n.desc < data || n.desc_off > size || n.descsz > size - n.desc_off ||
		    off <= last || off > size)
			__builtin_trap();
		last = off;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im = { data, size };
	struct btsdec_table t;

	walk_notes(data, size);
	if (btsdec_table_load(image_read, &im, 0, &t, NULL))
		return 0;
	if (!t.nr_entries || t.nr_entries > BTSDEC_TABLE_MAX_CPUS || !t.entries)
		__builtin_trap();
	/* a hostile table may name many rings: look at the first few */
	for (uint32_t i = 0; i < t.nr_entries && i < 16; i++)
		if (t.entries[i])
			check_ring(&im, t.entries[i]);
	btsdec_table_free(&t);
	return 0;
}
