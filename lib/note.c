// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trace notes: parsing and checking a note descriptor against every rule of
 * docs/format.md §2.2 and §1.1, and serializing a trace back into a whole
 * ELF note.  No libelf here: this is the part the fuzzer drives directly.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

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

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

const char *btsdec_source_name(unsigned int source)
{
	switch (source) {
	case BTS_SOURCE_HW:
		return "hardware";
	case BTS_SOURCE_EMUL:
		return "emulation";
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
	}
	return "invalid";
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
	if (kind == BTS_MARK_GAP ? sub > BTS_GAP_MAX : sub != 0)
		return btsdec_fail(err, -EINVAL,
				   "marker kind %u with invalid sub-code %u",
				   kind, sub);
	return 0;
}

struct note_hdr {
	uint32_t magic, record_size, flags, nr_gaps;
	uint16_t version, hdr_size, source, reserved0;
	uint64_t id, capacity, nr_records, lost, reserved1;
};

static void hdr_load(const uint8_t *d, struct note_hdr *h)
{
	h->magic = get32(d + 0);
	h->version = get16(d + 4);
	h->hdr_size = get16(d + 6);
	h->record_size = get32(d + 8);
	h->flags = get32(d + 12);
	h->id = get64(d + 16);
	h->capacity = get64(d + 24);
	h->nr_records = get64(d + 32);
	h->lost = get64(d + 40);
	h->nr_gaps = get32(d + 48);
	h->source = get16(d + 52);
	h->reserved0 = get16(d + 54);
	h->reserved1 = get64(d + 56);
}

/* Rules 2-5 of format.md §2.2: everything the header alone can violate. */
static int hdr_check(uint32_t type, const struct note_hdr *h, size_t len,
		     struct btsdec_err *err)
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
	if (h->source != BTS_SOURCE_HW && h->source != BTS_SOURCE_EMUL)
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

/* Rules 6-7: every record. */
static int records_check(uint32_t type, const struct btsdec_record *r,
			 size_t nr, struct btsdec_err *err)
{
	struct btsdec_err why;
	size_t i;

	for (i = 0; i < nr; i++) {
		if (btsdec_is_marker(&r[i])) {
			if (btsdec_marker_check(&r[i], &why))
				return btsdec_fail(err, -EINVAL, "record %zu: %s",
						   i, why.msg);
			continue;
		}
		if (type == NT_BTSCRASH_THREAD &&
		    (btsdec_is_kernel_addr(r[i].from) ||
		     btsdec_is_kernel_addr(r[i].to)))
			return btsdec_fail(err, -EINVAL,
				"record %zu holds a kernel address: the writer broke the user-core rule",
				i);
	}
	return 0;
}

int btsdec_note_parse(uint32_t type, const void *desc, size_t len,
		      struct btsdec_trace *t, struct btsdec_err *err)
{
	const uint8_t *d = desc;
	struct btsdec_record *recs = NULL;
	struct note_hdr h;
	size_t i;
	int ret;

	if (type != NT_BTSCRASH_THREAD && type != NT_BTSCRASH_CPU)
		return btsdec_fail(err, -EINVAL, "unknown note type 0x%x", type);
	if (len < BTS_CRASH_NOTE_HDR_SIZE)
		return btsdec_fail(err, -EINVAL,
				   "note of %zu bytes is shorter than its header",
				   len);
	hdr_load(d, &h);
	ret = hdr_check(type, &h, len, err);
	if (ret)
		return ret;
	if (h.nr_records) {
		recs = calloc(h.nr_records, sizeof(*recs));
		if (!recs)
			return btsdec_fail(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < h.nr_records; i++) {
		const uint8_t *p = d + h.hdr_size + i * BTS_RECORD_SIZE;

		recs[i].from = get64(p);
		recs[i].to = get64(p + 8);
		recs[i].flags = get64(p + 16);
	}
	ret = records_check(type, recs, h.nr_records, err);
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

#define NOTE_NAME_PADDED	12	/* "BTSCRASH\0" padded to 4 bytes */
#define NHDR_SIZE		12

size_t btsdec_note_size(size_t nr)
{
	if (nr > BTS_CRASH_MAX_CAPACITY)
		return 0;
	/* descriptor is 64 + 24n: always a multiple of 4, no tail padding */
	return NHDR_SIZE + NOTE_NAME_PADDED + BTS_CRASH_NOTE_HDR_SIZE +
	       nr * BTS_RECORD_SIZE;
}

static void hdr_store(uint8_t *d, const struct btsdec_trace *t)
{
	memset(d, 0, BTS_CRASH_NOTE_HDR_SIZE);
	put32(d + 0, BTS_CRASH_NOTE_MAGIC);
	put16(d + 4, BTS_CRASH_NOTE_VERSION);
	put16(d + 6, BTS_CRASH_NOTE_HDR_SIZE);
	put32(d + 8, BTS_RECORD_SIZE);
	put32(d + 12, t->flags);
	put64(d + 16, t->id);
	put64(d + 24, t->capacity);
	put64(d + 32, t->nr);
	put64(d + 40, t->lost);
	put32(d + 48, t->nr_gaps);
	put16(d + 52, t->source);
}

ssize_t btsdec_note_write(void *buf, size_t buflen,
			  const struct btsdec_trace *t, struct btsdec_err *err)
{
	size_t need = btsdec_note_size(t->nr), i;
	uint8_t *p = buf, *d;

	if (!need || t->nr > t->capacity)
		return btsdec_fail(err, -EINVAL,
				   "%zu records do not fit a ring of %llu",
				   t->nr, (unsigned long long)t->capacity);
	if (buflen < need)
		return btsdec_fail(err, -ENOSPC, "note needs %zu bytes", need);
	put32(p, BTS_CRASH_NOTE_NAMESZ);
	put32(p + 4, BTS_CRASH_NOTE_HDR_SIZE + t->nr * BTS_RECORD_SIZE);
	put32(p + 8, t->type);
	memset(p + NHDR_SIZE, 0, NOTE_NAME_PADDED);
	memcpy(p + NHDR_SIZE, BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ);
	d = p + NHDR_SIZE + NOTE_NAME_PADDED;
	hdr_store(d, t);
	d += BTS_CRASH_NOTE_HDR_SIZE;
	for (i = 0; i < t->nr; i++, d += BTS_RECORD_SIZE) {
		put64(d, t->recs[i].from);
		put64(d + 8, t->recs[i].to);
		put64(d + 16, t->recs[i].flags);
	}
	return need;
}
