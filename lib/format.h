/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The btscrash format decoder: the one place that reads the layouts of
 * include/uapi/linux/bts_crash.h (docs/format.md): ELF note framing, the
 * note header, records and markers, the ring descriptor, the ring table and
 * ring order.  Offsets come from the header's structs (offsetof/sizeof) or,
 * for the ring descriptor, from VMCOREINFO.  Pure C with no libelf/libdw:
 * compiled into libbtsdec and into the crash extension (crash-ext/bts.c),
 * which hand it memory through a read callback.  Errors: negative errno
 * plus a message in struct btsdec_err.
 */
#ifndef BTSDEC_FORMAT_H
#define BTSDEC_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bts_crash.h>

struct btsdec_err {
	char msg[512];
};

/* Sets err->msg (printf style; err may be NULL) and returns `code`. */
int btsdec_fail(struct btsdec_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- Records and markers (§1) ------------------------------------------ */

/* One record in host byte order (struct bts_record is the file's). */
struct btsdec_record {
	uint64_t from;
	uint64_t to;
	uint64_t flags;
};

/* Loads/stores one struct bts_record at p (any alignment). */
void btsdec_record_load(const void *p, struct btsdec_record *r);
void btsdec_record_store(void *p, const struct btsdec_record *r);

static inline bool btsdec_is_marker(const struct btsdec_record *r)
{
	return (r->from & BTS_MARKER_TAG_MASK) == BTS_MARKER_TAG;
}

/* An LBR record's cycle count (docs/format.md §1: flags bit 5, bits
 * 47:32), or -1 when the record carries none. */
static inline int btsdec_record_cycles(const struct btsdec_record *r)
{
	if (btsdec_is_marker(r) || !(r->flags & BTS_REC_F_CYCLES))
		return -1;
	return (int)((r->flags >> BTS_REC_CYCLES_SHIFT) & BTS_REC_CYCLES_MASK);
}

/* Text for people: " (N cycles)" when r carries a count, else "". */
const char *btsdec_cycles_text(const struct btsdec_record *r, char *buf, size_t len);

/* True for an address in the kernel half of the 64-bit address space. */
static inline bool btsdec_is_kernel_addr(uint64_t a)
{
	return a >= 0x0000800000000000ULL;
}

/* Checks a marker record (§1.1); 0 or -EINVAL. */
int btsdec_marker_check(const struct btsdec_record *r, struct btsdec_err *err);
const char *btsdec_marker_name(const struct btsdec_record *r);
const char *btsdec_gap_reason_name(unsigned int reason);
const char *btsdec_source_name(unsigned int source);

/* The one description of a marker every reader prints (core and vmcore
 * reports, crash> bts): "switch-out cpu 1 at 12.000000345s", "gap (perf),
 * resumed at 12.000000345s after 5000 ns".  Returns buf. */
const char *btsdec_marker_describe(const struct btsdec_record *r, char *buf,
				   size_t len);

/* Rules 6-7 of §2.2 over a note's records; 0 or -EINVAL naming the record. */
int btsdec_records_check(uint32_t type, const struct btsdec_record *r,
			 size_t nr, struct btsdec_err *err);
/* The same for records numbered from `first` (a trace checked in pieces). */
int btsdec_records_check_at(uint32_t type, const struct btsdec_record *r,
			    size_t nr, size_t first, struct btsdec_err *err);

/* ---- ELF note framing (§2) ----------------------------------------------- */

/* One note of a PT_NOTE buffer; pointers into that buffer. */
struct btsdec_elf_note {
	uint32_t namesz, descsz, type;
	const uint8_t *name;
	const uint8_t *desc;
	size_t desc_off;	/* offset of desc in the buffer */
};

/* Where a note's parts lie, from the start of its 12-byte header. */
struct btsdec_elf_note_head {
	uint32_t namesz, descsz, type;
	uint64_t name_off, desc_off;	/* from the header */
	uint64_t next;			/* the next note, clamped to `avail` */
};

/* Frames the note whose header is at p (12 bytes readable) with `avail`
 * bytes of notes from p on; `at` is p's offset, for the message.  0, or
 * -EINVAL when its sizes run past those bytes.  For readers that hold only
 * a note's head (lib/core.c streams a large trace note). */
int btsdec_elf_note_head(const void *p, uint64_t avail, uint64_t at,
			 struct btsdec_elf_note_head *h, struct btsdec_err *err);

/* The note at *off of a buffer of notes (4-byte aligned fields, names and
 * descriptors padded to 4).  Returns 1 and advances *off past it, 0 when
 * fewer bytes than a note header remain, -EINVAL when its sizes run past
 * the buffer (nothing after it can be trusted). */
int btsdec_elf_note_next(const void *buf, size_t len, size_t *off,
			 struct btsdec_elf_note *n, struct btsdec_err *err);
/* True when the note's owner is `name` (namesz counts the NUL). */
bool btsdec_elf_note_owner(const struct btsdec_elf_note *n, const char *name,
			   size_t namesz);

/* Bytes of a whole btscrash note (nhdr, padded name, descriptor) with nr
 * records; 0 if nr is above BTS_CRASH_MAX_CAPACITY. */
size_t btsdec_note_size(size_t nr);

/* ---- Note descriptor header (§2.1, §2.2) ---------------------------------- */

/* Loads the descriptor header of a `type` note of len bytes into h (host
 * order) and checks rules 2-5 of §2.2.  0 or -EINVAL. */
int btsdec_note_hdr_load(uint32_t type, const void *desc, size_t len,
			 struct bts_crash_note_hdr *h, struct btsdec_err *err);
/* Stores h as a descriptor header (BTS_CRASH_NOTE_HDR_SIZE bytes). */
void btsdec_note_hdr_store(void *desc, const struct bts_crash_note_hdr *h);
/* Writes the ELF note framing (nhdr and padded name) of a `type` note
 * with a descriptor of descsz bytes; returns the bytes written (the
 * descriptor starts there). */
size_t btsdec_note_frame_store(void *buf, uint32_t type, uint32_t descsz);

/* ---- Rings in a dump (§4) ------------------------------------------------- */

/* Reads len bytes at addr (physical or virtual, as the caller decides) into
 * buf: 0, or a negative errno with err filled (-ENOENT: not in the dump). */
typedef int (*btsdec_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len,
			      struct btsdec_err *err);
/* VMCOREINFO value of key into buf; false when absent. */
typedef bool (*btsdec_info_fn)(void *ctx, const char *key, char *buf,
			       size_t len);

/* Reader limits, not format: the largest ring descriptor and ring table
 * accepted (the format allows growth through hdr_size). */
#define BTSDEC_RING_DESC_MAX	4096
#define BTSDEC_TABLE_MAX_CPUS	65536

/* Where VMCOREINFO says the ring descriptor's fields are (§4.1).  magic,
 * version, hdr_size and record_size are at their struct offsets. */
struct btsdec_ring_layout {
	uint64_t size;
	uint64_t flags, id, capacity, index, records_pa, lost, nr_gaps, source,
		 freeze_ts;
};

/* What VMCOREINFO says about the rings: the ring layout, and the table
 * of per-CPU rings' physical address (*table_pa 0: the kernel kept per-task
 * rings only, per-CPU rings were off).  -ENOENT when the kernel kept no
 * rings (no BTS_CRASH=1), -EINVAL when a key is missing or out of range. */
int btsdec_vmcoreinfo_rings(btsdec_info_fn info, void *ctx, uint64_t *table_pa,
			    struct btsdec_ring_layout *l, struct btsdec_err *err);
/* A numeric VMCOREINFO value (whole string in `base`); false if absent. */
bool btsdec_info_u64(btsdec_info_fn info, void *ctx, const char *key,
		     int base, uint64_t *v);

/* The ring table (§4.2). */
struct btsdec_table {
	uint32_t nr_entries;
	uint64_t panic_cpu;
	uint64_t *entries;	/* malloc'ed: ring descriptor address per CPU */
};

int btsdec_table_load(btsdec_read_fn read, void *ctx, uint64_t pa,
		      struct btsdec_table *t, struct btsdec_err *err);
void btsdec_table_free(struct btsdec_table *t);

/* Reads the ring descriptor at addr into d (host order) and checks it
 * (§4.3): magic, version, hdr_size, record_size, capacity, index. */
int btsdec_ring_desc_load(btsdec_read_fn read, void *ctx,
			  const struct btsdec_ring_layout *l, uint64_t addr,
			  struct bts_crash_ring *d, struct btsdec_err *err);

/* Whether a ring has wrapped: its flag, or a written slot at index (the
 * flag may lag the hardware, §4.3). */
bool btsdec_ring_wrapped(const struct btsdec_record *slots, uint64_t index,
			 bool flag);

/* Puts the slots of a circular ring into time order (§4.3), skipping
 * never-written all-zero slots.  out must hold capacity records.  Returns
 * the number of records, or -EINVAL for a capacity or index out of range. */
ssize_t btsdec_ring_order(const struct btsdec_record *slots, uint64_t capacity,
			  uint64_t index, bool wrapped,
			  struct btsdec_record *out, struct btsdec_err *err);

/* Reads the ring of descriptor d (its slots at d->records_pa through read)
 * and returns its records in time order in *out (malloc'ed, *nr of them)
 * and whether it wrapped.  max_bytes bounds what the ring may claim (the
 * dump's size; UINT64_MAX for no bound).  0, -ENOMEM, -EINVAL, or what
 * read returned. */
int btsdec_ring_records(btsdec_read_fn read, void *ctx,
			const struct bts_crash_ring *d, uint64_t max_bytes,
			struct btsdec_record **out, size_t *nr, bool *wrapped,
			struct btsdec_err *err);

#endif /* BTSDEC_FORMAT_H */
