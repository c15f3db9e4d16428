// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The btscrash format decoder (format.h): every field of the layouts in
 * include/uapi/linux/bts_crash.h is read and written here, at offsetof()
 * of the header's structs (or VMCOREINFO's offsets for the ring
 * descriptor), and checked against docs/format.md before use.  Pure: no
 * libelf, no I/O but the caller's read callback.  Built into libbtsdec, the
 * crash extension and the fuzzers; process context, reentrant.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

int btsdec_fail(struct btsdec_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Little-endian integers of n bytes at p, whatever the host. */
static uint64_t le_load(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void le_store(uint8_t *p, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

#define FIELD_SIZE(type, f)	sizeof(((type *)0)->f)
/* dst->f = the field f of struct `type` stored at p */
#define LOAD(dst, p, type, f) \
	((dst)->f = le_load((const uint8_t *)(p) + offsetof(type, f), \
			    FIELD_SIZE(type, f)))
#define STORE(p, src, type, f) \
	le_store((uint8_t *)(p) + offsetof(type, f), FIELD_SIZE(type, f), (src)->f)

/* ---- Records and markers ------------------------------------------------- */

void btsdec_record_load(const void *p, struct btsdec_record *r)
{
	LOAD(r, p, struct bts_record, from);
	LOAD(r, p, struct bts_record, to);
	LOAD(r, p, struct bts_record, flags);
}

void btsdec_record_store(void *p, const struct btsdec_record *r)
{
	STORE(p, r, struct bts_record, from);
	STORE(p, r, struct bts_record, to);
	STORE(p, r, struct bts_record, flags);
}

const char *btsdec_cycles_text(const struct btsdec_record *r, char *buf, size_t len)
{
	int c = btsdec_record_cycles(r);

	if (c < 0 || !len)
		return "";
	snprintf(buf, len, " (%d cycles)", c);
	return buf;
}

const char *btsdec_source_name(unsigned int source)
{
	switch (source) {
	case BTS_SOURCE_HW:
		return "hardware";
	case BTS_SOURCE_EMUL:
		return "emulation";
	case BTS_SOURCE_LBR:
		return "lbr";
	}
	return "unknown";
}

const char *btsdec_gap_reason_name(unsigned int reason)
{
	static const char *const names[] = {
		[BTS_GAP_UNKNOWN] = "unknown",
		[BTS_GAP_PERF] = "perf",
		[BTS_GAP_DISABLED] = "disabled",
		[BTS_GAP_OVERFLOW] = "overflow",
		[BTS_GAP_TASK] = "task",
	};

	return reason <= BTS_GAP_MAX ? names[reason] : "invalid";
}

const char *btsdec_marker_name(const struct btsdec_record *r)
{
	switch (BTS_MARKER_KIND(r->from)) {
	case BTS_MARK_SWITCH_OUT:
		return "switch-out";
	case BTS_MARK_SWITCH_IN:
		return "switch-in";
	case BTS_MARK_GAP:
		return "gap";
	case BTS_MARK_SUSPEND:
		return "suspend";
	}
	return "invalid";
}

const char *btsdec_marker_describe(const struct btsdec_record *r, char *buf,
				   size_t len)
{
	unsigned long long s = r->to / 1000000000, ns = r->to % 1000000000;

	if (BTS_MARKER_KIND(r->from) == BTS_MARK_GAP)
		snprintf(buf, len, "gap (%s), resumed at %llu.%09llus after %llu ns",
			 btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)), s, ns,
			 (unsigned long long)r->flags);
	else if (BTS_MARKER_KIND(r->from) == BTS_MARK_SUSPEND &&
		 BTS_MARKER_SUB(r->from) == BTS_GAP_TASK)
		snprintf(buf, len, "suspended at %llu.%09llus: task %llu's ring took BTS",
			 s, ns, (unsigned long long)r->flags);
	else if (BTS_MARKER_KIND(r->from) == BTS_MARK_SUSPEND)
		snprintf(buf, len, "suspended (%s) at %llu.%09llus",
			 btsdec_gap_reason_name(BTS_MARKER_SUB(r->from)), s, ns);
	else if (BTS_MARKER_KIND(r->from) == BTS_MARK_SWITCH_OUT ||
		 BTS_MARKER_KIND(r->from) == BTS_MARK_SWITCH_IN)
		snprintf(buf, len, "%s cpu %llu at %llu.%09llus", btsdec_marker_name(r),
			 (unsigned long long)r->flags, s, ns);
	else
		snprintf(buf, len, "invalid marker 0x%016llx",
			 (unsigned long long)r->from);
	return buf;
}

int btsdec_marker_check(const struct btsdec_record *r, struct btsdec_err *err)
{
	unsigned int kind = BTS_MARKER_KIND(r->from);
	unsigned int sub = BTS_MARKER_SUB(r->from);

	if (r->from & BTS_MARKER_RSVD_MASK)
		return btsdec_fail(err, -EINVAL,
				   "marker 0x%016llx has reserved bits set",
				   (unsigned long long)r->from);
	if (kind == 0 || kind > BTS_MARK_MAX)
		return btsdec_fail(err, -EINVAL, "unknown marker kind %u", kind);
	if (kind == BTS_MARK_GAP || kind == BTS_MARK_SUSPEND ? sub > BTS_GAP_MAX : sub != 0)
		return btsdec_fail(err, -EINVAL,
				   "marker kind %u with invalid sub-code %u",
				   kind, sub);
	return 0;
}

int btsdec_records_check_at(uint32_t type, const struct btsdec_record *r,
			    size_t nr, size_t first, struct btsdec_err *err)
{
	struct btsdec_err why;

	for (size_t i = 0; i < nr; i++) {
		if (btsdec_is_marker(&r[i])) {
			if (btsdec_marker_check(&r[i], &why))
				return btsdec_fail(err, -EINVAL, "record %zu: %s",
						   first + i, why.msg);
			continue;
		}
		if (type == NT_BTSCRASH_THREAD &&
		    (btsdec_is_kernel_addr(r[i].from) ||
		     btsdec_is_kernel_addr(r[i].to)))
			return btsdec_fail(err, -EINVAL,
				"record %zu holds a kernel address: the writer broke the user-core rule",
				first + i);
	}
	return 0;
}

int btsdec_records_check(uint32_t type, const struct btsdec_record *r,
			 size_t nr, struct btsdec_err *err)
{
	return btsdec_records_check_at(type, r, nr, 0, err);
}

/* ---- ELF note framing ------------------------------------------------------ */

/* The ELF note header: three 4-byte words (Elf64_Nhdr, without elf.h). */
struct nhdr {
	uint32_t n_namesz, n_descsz, n_type;
};

#define NOTE_ALIGN(x)	(((uint64_t)(x) + 3) & ~(uint64_t)3)

int btsdec_elf_note_head(const void *p, uint64_t avail, uint64_t at,
			 struct btsdec_elf_note_head *h, struct btsdec_err *err)
{
	struct nhdr n;
	uint64_t end;

	LOAD(&n, p, struct nhdr, n_namesz);
	LOAD(&n, p, struct nhdr, n_descsz);
	LOAD(&n, p, struct nhdr, n_type);
	*h = (struct btsdec_elf_note_head){
		.namesz = n.n_namesz, .descsz = n.n_descsz, .type = n.n_type,
		.name_off = sizeof(n), .desc_off = sizeof(n) + NOTE_ALIGN(n.n_namesz),
	};
	end = h->desc_off + NOTE_ALIGN(n.n_descsz);
	/* 64-bit sums of 32-bit sizes cannot overflow */
	if (h->desc_off > avail || n.n_descsz > avail - h->desc_off)
		return btsdec_fail(err, -EINVAL,
				   "note at offset %llu: name of %u and descriptor of %u bytes run past the %llu bytes of notes",
				   (unsigned long long)at, n.n_namesz, n.n_descsz,
				   (unsigned long long)(at + avail));
	h->next = end < avail ? end : avail;
	return 0;
}

int btsdec_elf_note_next(const void *buf, size_t len, size_t *off,
			 struct btsdec_elf_note *n, struct btsdec_err *err)
{
	const uint8_t *p = buf;
	struct btsdec_elf_note_head h;

	if (*off > len || len - *off < sizeof(struct nhdr))
		return 0;
	if (btsdec_elf_note_head(p + *off, len - *off, *off, &h, err))
		return -EINVAL;
	*n = (struct btsdec_elf_note){
		.namesz = h.namesz, .descsz = h.descsz, .type = h.type,
		.name = p + *off + h.name_off, .desc = p + *off + h.desc_off,
		.desc_off = *off + h.desc_off,
	};
	*off += h.next;
	return 1;
}

bool btsdec_elf_note_owner(const struct btsdec_elf_note *n, const char *name,
			   size_t namesz)
{
	return n->namesz == namesz && !memcmp(n->name, name, namesz);
}

size_t btsdec_note_frame_store(void *buf, uint32_t type, uint32_t descsz)
{
	struct nhdr h = { BTS_CRASH_NOTE_NAMESZ, descsz, type };
	uint8_t *p = buf;
	size_t name_len = NOTE_ALIGN(BTS_CRASH_NOTE_NAMESZ);

	STORE(p, &h, struct nhdr, n_namesz);
	STORE(p, &h, struct nhdr, n_descsz);
	STORE(p, &h, struct nhdr, n_type);
	memset(p + sizeof(h), 0, name_len);
	memcpy(p + sizeof(h), BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ);
	return sizeof(h) + name_len;
}

size_t btsdec_note_size(size_t nr)
{
	if (nr > BTS_CRASH_MAX_CAPACITY)
		return 0;
	return sizeof(struct nhdr) + NOTE_ALIGN(BTS_CRASH_NOTE_NAMESZ) +
	       NOTE_ALIGN(BTS_CRASH_NOTE_HDR_SIZE + nr * BTS_RECORD_SIZE);
}

/* ---- Note descriptor header -------------------------------------------------- */

#define NOTE_HDR_FIELDS(X) X(magic) X(version) X(hdr_size) X(record_size) \
	X(flags) X(id) X(capacity) X(nr_records) X(lost) X(nr_gaps) X(source) \
	X(reserved0) X(reserved1)

_Static_assert(sizeof(struct bts_crash_note_hdr) == BTS_CRASH_NOTE_HDR_SIZE,
	       "note header size");
_Static_assert(sizeof(struct bts_record) == BTS_RECORD_SIZE, "record size");

/* Rules 2-5 of format.md §2.2: everything the header alone can violate. */
static int note_hdr_check(uint32_t type, const struct bts_crash_note_hdr *h,
			  size_t len, struct btsdec_err *err)
{
	size_t body;

	if (h->magic != BTS_CRASH_NOTE_MAGIC)
		return btsdec_fail(err, -EINVAL, "bad magic 0x%08x", h->magic);
	if (h->version != BTS_CRASH_NOTE_VERSION)
		return btsdec_fail(err, -EINVAL, "unsupported version %u",
				   h->version);
	if (h->record_size != BTS_RECORD_SIZE)
		return btsdec_fail(err, -EINVAL, "record size %u, expected %u",
				   h->record_size, BTS_RECORD_SIZE);
	if (h->source != BTS_SOURCE_HW && h->source != BTS_SOURCE_EMUL &&
	    h->source != BTS_SOURCE_LBR)
		return btsdec_fail(err, -EINVAL, "unknown source %u", h->source);
	if (h->reserved0 || h->reserved1 || (h->flags & ~BTS_NOTE_F_KNOWN))
		return btsdec_fail(err, -EINVAL,
				   "reserved header fields or flags set");
	if (h->hdr_size < BTS_CRASH_NOTE_HDR_SIZE || h->hdr_size % 8 ||
	    h->hdr_size > len)
		return btsdec_fail(err, -EINVAL,
				   "header size %u invalid for a %zu-byte note",
				   h->hdr_size, len);
	body = len - h->hdr_size;
	if (h->nr_records > body / BTS_RECORD_SIZE ||
	    h->nr_records * BTS_RECORD_SIZE != body)
		return btsdec_fail(err, -EINVAL,
				   "%llu records do not fill %zu bytes",
				   (unsigned long long)h->nr_records, body);
	if (h->capacity == 0 || h->capacity > BTS_CRASH_MAX_CAPACITY)
		return btsdec_fail(err, -EINVAL, "capacity %llu out of range",
				   (unsigned long long)h->capacity);
	if (h->nr_records > h->capacity)
		return btsdec_fail(err, -EINVAL,
				   "%llu records exceed capacity %llu",
				   (unsigned long long)h->nr_records,
				   (unsigned long long)h->capacity);
	if (type == NT_BTSCRASH_THREAD && !(h->flags & BTS_NOTE_F_USER_ONLY))
		return btsdec_fail(err, -EINVAL,
				   "thread note without USER_ONLY flag");
	return 0;
}

int btsdec_note_hdr_load(uint32_t type, const void *desc, size_t len,
			 struct bts_crash_note_hdr *h, struct btsdec_err *err)
{
	if (type != NT_BTSCRASH_THREAD && type != NT_BTSCRASH_CPU)
		return btsdec_fail(err, -EINVAL, "unknown note type 0x%x", type);
	if (len < BTS_CRASH_NOTE_HDR_SIZE)
		return btsdec_fail(err, -EINVAL,
				   "note of %zu bytes is shorter than its header",
				   len);
#define X(f) LOAD(h, desc, struct bts_crash_note_hdr, f);
	NOTE_HDR_FIELDS(X)
#undef X
	return note_hdr_check(type, h, len, err);
}

void btsdec_note_hdr_store(void *desc, const struct bts_crash_note_hdr *h)
{
	memset(desc, 0, BTS_CRASH_NOTE_HDR_SIZE);
#define X(f) STORE(desc, h, struct bts_crash_note_hdr, f);
	NOTE_HDR_FIELDS(X)
#undef X
}

/* ---- VMCOREINFO --------------------------------------------------------------- */

bool btsdec_info_u64(btsdec_info_fn info, void *ctx, const char *key,
		     int base, uint64_t *v)
{
	char buf[64], *end;

	if (!info(ctx, key, buf, sizeof(buf)) || !buf[0])
		return false;
	errno = 0;
	*v = strtoull(buf, &end, base);
	return !*end && !errno;
}

/* The fields VMCOREINFO exports an OFFSET() for (§4.1), with their sizes. */
#define RING_FIELDS(X) X(flags) X(id) X(capacity) X(index) X(records_pa) \
	X(lost) X(nr_gaps) X(source) X(freeze_ts)

int btsdec_vmcoreinfo_rings(btsdec_info_fn info, void *ctx, uint64_t *table_pa,
			    struct btsdec_ring_layout *l, struct btsdec_err *err)
{
	uint64_t version;

	if (!btsdec_info_u64(info, ctx, "BTS_CRASH", 10, &version) ||
	    version != BTS_CRASH_RING_VERSION)
		return btsdec_fail(err, -ENOENT,
				   "no BTS_CRASH=%u in VMCOREINFO: the kernel kept no branch traces (not a btscrash kernel, or a newer format)",
				   BTS_CRASH_RING_VERSION);
	/* BTS_CRASH=1 without a table: per-task rings only */
	if (!btsdec_info_u64(info, ctx, "BTS_CRASH_TABLE_PA", 16, table_pa))
		*table_pa = 0;
	if (!btsdec_info_u64(info, ctx, "SIZE(bts_crash_ring)", 10, &l->size) ||
	    l->size < sizeof(struct bts_crash_ring) || l->size > BTSDEC_RING_DESC_MAX)
		return btsdec_fail(err, -EINVAL,
				   "VMCOREINFO: no usable SIZE(bts_crash_ring)");
#define X(f) \
	if (!btsdec_info_u64(info, ctx, "OFFSET(bts_crash_ring." #f ")", 10, &l->f) || \
	    l->f > l->size - FIELD_SIZE(struct bts_crash_ring, f)) \
		return btsdec_fail(err, -EINVAL, \
				   "VMCOREINFO: no usable OFFSET(bts_crash_ring." #f ")");
	RING_FIELDS(X)
#undef X
	return 0;
}

/* ---- The ring table ------------------------------------------------------------ */

#define TABLE_FIELDS(X) X(magic) X(version) X(hdr_size) X(nr_entries) \
	X(entry_size) X(panic_cpu)

int btsdec_table_load(btsdec_read_fn read, void *ctx, uint64_t pa,
		      struct btsdec_table *t, struct btsdec_err *err)
{
	uint8_t raw[sizeof(struct bts_crash_table)];
	struct bts_crash_table h;
	uint8_t *ent;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = read(ctx, pa, raw, sizeof(raw), err);
	if (ret)
		return ret;
#define X(f) LOAD(&h, raw, struct bts_crash_table, f);
	TABLE_FIELDS(X)
#undef X
	if (h.magic != BTS_CRASH_TABLE_MAGIC || h.version != BTS_CRASH_RING_VERSION ||
	    h.hdr_size < sizeof(struct bts_crash_table) ||
	    h.entry_size != FIELD_SIZE(struct bts_crash_table, entries[0]) ||
	    !h.nr_entries || h.nr_entries > BTSDEC_TABLE_MAX_CPUS)
		return btsdec_fail(err, -EINVAL,
				   "corrupt ring table at physical %#llx (magic %#x, version %u, header %u, %u entries of %u bytes)",
				   (unsigned long long)pa, h.magic, h.version,
				   h.hdr_size, h.nr_entries, h.entry_size);
	ent = malloc((size_t)h.nr_entries * h.entry_size);
	t->entries = calloc(h.nr_entries, sizeof(*t->entries));
	if (!ent || !t->entries) {
		free(ent);
		btsdec_table_free(t);
		return btsdec_fail(err, -ENOMEM, "out of memory for %u ring table entries",
				   h.nr_entries);
	}
	ret = read(ctx, pa + h.hdr_size, ent, (size_t)h.nr_entries * h.entry_size, err);
	for (uint32_t i = 0; !ret && i < h.nr_entries; i++)
		t->entries[i] = le_load(ent + (size_t)i * h.entry_size, h.entry_size);
	free(ent);
	if (ret) {
		btsdec_table_free(t);
		return ret;
	}
	t->nr_entries = h.nr_entries;
	t->panic_cpu = h.panic_cpu;
	return 0;
}

void btsdec_table_free(struct btsdec_table *t)
{
	free(t->entries);
	memset(t, 0, sizeof(*t));
}

/* ---- Ring descriptors and ring order -------------------------------------------- */

int btsdec_ring_desc_load(btsdec_read_fn read, void *ctx,
			  const struct btsdec_ring_layout *l, uint64_t addr,
			  struct bts_crash_ring *d, struct btsdec_err *err)
{
	uint8_t raw[BTSDEC_RING_DESC_MAX];
	int ret;

	if (l->size < sizeof(*d) || l->size > sizeof(raw))
		return btsdec_fail(err, -EINVAL, "ring descriptor size %llu out of range",
				   (unsigned long long)l->size);
	ret = read(ctx, addr, raw, l->size, err);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	/* the header words are where the struct says; the rest where VMCOREINFO says */
	LOAD(d, raw, struct bts_crash_ring, magic);
	LOAD(d, raw, struct bts_crash_ring, version);
	LOAD(d, raw, struct bts_crash_ring, hdr_size);
	LOAD(d, raw, struct bts_crash_ring, record_size);
#define X(f) d->f = le_load(raw + l->f, FIELD_SIZE(struct bts_crash_ring, f));
	RING_FIELDS(X)
#undef X
	if (d->magic != BTS_CRASH_RING_MAGIC || d->version != BTS_CRASH_RING_VERSION)
		return btsdec_fail(err, -EINVAL,
				   "not a ring descriptor (magic %#x, version %u)",
				   d->magic, d->version);
	if (d->hdr_size < sizeof(*d) || d->hdr_size > l->size ||
	    d->record_size != BTS_RECORD_SIZE || !d->capacity ||
	    d->capacity > BTS_CRASH_MAX_CAPACITY || d->index >= d->capacity)
		return btsdec_fail(err, -EINVAL,
				   "corrupt ring (header %u, record size %u, capacity %llu, index %llu)",
				   d->hdr_size, d->record_size,
				   (unsigned long long)d->capacity,
				   (unsigned long long)d->index);
	return 0;
}

static bool slot_empty(const struct btsdec_record *r)
{
	return !r->from && !r->to && !r->flags;
}

bool btsdec_ring_wrapped(const struct btsdec_record *slots, uint64_t index,
			 bool flag)
{
	return flag || !slot_empty(&slots[index]);
}

static size_t copy_used(const struct btsdec_record *s, uint64_t lo, uint64_t hi,
			struct btsdec_record *out, size_t n)
{
	for (uint64_t i = lo; i < hi; i++)
		if (!slot_empty(&s[i]))
			out[n++] = s[i];
	return n;
}

ssize_t btsdec_ring_order(const struct btsdec_record *slots, uint64_t capacity,
			  uint64_t index, bool wrapped,
			  struct btsdec_record *out, struct btsdec_err *err)
{
	size_t n = 0;

	if (capacity == 0 || capacity > BTS_CRASH_MAX_CAPACITY)
		return btsdec_fail(err, -EINVAL, "ring capacity %llu out of range",
				   (unsigned long long)capacity);
	if (index >= capacity)
		return btsdec_fail(err, -EINVAL,
				   "ring index %llu out of range (capacity %llu)",
				   (unsigned long long)index,
				   (unsigned long long)capacity);
	if (btsdec_ring_wrapped(slots, index, wrapped))
		n = copy_used(slots, index, capacity, out, n);
	return copy_used(slots, 0, index, out, n);
}

int btsdec_ring_records(btsdec_read_fn read, void *ctx,
			const struct bts_crash_ring *d, uint64_t max_bytes,
			struct btsdec_record **out, size_t *nr, bool *wrapped,
			struct btsdec_err *err)
{
	uint64_t bytes = d->capacity * BTS_RECORD_SIZE;
	struct btsdec_record *slots, *recs;
	ssize_t n;
	int ret;

	*out = NULL;
	*nr = 0;
	if (!d->capacity || d->capacity > BTS_CRASH_MAX_CAPACITY || d->index >= d->capacity)
		return btsdec_fail(err, -EINVAL, "corrupt ring (capacity %llu, index %llu)",
				   (unsigned long long)d->capacity,
				   (unsigned long long)d->index);
	if (bytes > max_bytes)
		return btsdec_fail(err, -EINVAL,
				   "ring of %llu records is larger than the dump",
				   (unsigned long long)d->capacity);
	_Static_assert(sizeof(*slots) == BTS_RECORD_SIZE, "slots are read in place");
	slots = malloc(bytes);
	recs = malloc(bytes);
	if (!slots || !recs) {
		free(slots);
		free(recs);
		return btsdec_fail(err, -ENOMEM, "out of memory for a ring of %llu records",
				   (unsigned long long)d->capacity);
	}
	ret = read(ctx, d->records_pa, slots, bytes, err);
	for (uint64_t i = 0; !ret && i < d->capacity; i++)
		btsdec_record_load((const uint8_t *)slots + i * BTS_RECORD_SIZE, &slots[i]);
	if (!ret) {
		*wrapped = btsdec_ring_wrapped(slots, d->index, d->flags & BTS_RING_F_WRAPPED);
		n = btsdec_ring_order(slots, d->capacity, d->index, *wrapped, recs, err);
		ret = n < 0 ? (int)n : 0;
	}
	free(slots);
	if (ret) {
		free(recs);
		return ret;
	}
	*out = recs;
	*nr = n;
	return 0;
}
