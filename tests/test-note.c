// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the note format (lib/note.c) at its edges: empty, one
 * record, full ring, wrapped, maximal, padding and alignment, every
 * rejection rule of docs/format.md §2.2, the marker encoding, and a trace
 * streamed from a file (window edges, a bad record far in, a file cut short).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btsdec.h"
#include "ringtext.h"
#include "test.h"

#define DESC_OFF 24	/* 12-byte Nhdr + "BTSCRASH\0" padded to 12 */

static uint8_t note[DESC_OFF + 64 + 24 * 64 + 64];

static struct btsdec_record recs[64];

/* Writes a thread note with n records (user addresses) into `note`. */
static size_t make(size_t n, uint64_t capacity, uint32_t flags)
{
	struct btsdec_trace t = {
		.type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY | flags,
		.id = 4242, .capacity = capacity, .source = BTS_SOURCE_EMUL,
		.nr = n, .recs = recs,
	};
	ssize_t w;

	for (size_t i = 0; i < n; i++)
		recs[i] = (struct btsdec_record){ 0x401000 + i, 0x402000 + i, 0 };
	memset(note, 0xee, sizeof(note));
	w = btsdec_note_write(note, sizeof(note), &t, NULL);
	return w < 0 ? 0 : (size_t)w - DESC_OFF;
}

static int parse(uint32_t type, size_t len, struct btsdec_trace *t,
		 struct btsdec_err *err)
{
	return btsdec_note_parse(type, note + DESC_OFF, len, t, err);
}

static void put64(size_t off, uint64_t v)
{
	v = htole64(v);
	memcpy(note + DESC_OFF + off, &v, 8);
}

static void put32(size_t off, uint32_t v)
{
	v = htole32(v);
	memcpy(note + DESC_OFF + off, &v, 4);
}

static void put16(size_t off, uint16_t v)
{
	v = htole16(v);
	memcpy(note + DESC_OFF + off, &v, 2);
}

/* Expects the note as it is now in `note` to be rejected with `why`. */
static void expect_reject(uint32_t type, size_t len, const char *why)
{
	struct btsdec_trace t;
	struct btsdec_err err = { "" };

	CHECK_EQ(parse(type, len, &t, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, why);
}

static void test_empty(void)
{
	struct btsdec_trace t;
	size_t len = make(0, 16, 0);

	CHECK_EQ(len, 64);
	REQUIRE(parse(NT_BTSCRASH_THREAD, len, &t, NULL) == 0);
	CHECK_EQ(t.nr, 0);
	CHECK_EQ(t.id, 4242);
	CHECK_EQ(t.capacity, 16);
	CHECK(t.recs == NULL);
	btsdec_trace_free(&t);
}

static void test_one_record(void)
{
	struct btsdec_trace t;
	size_t len = make(1, 16, 0);

	REQUIRE(parse(NT_BTSCRASH_THREAD, len, &t, NULL) == 0);
	REQUIRE(t.nr == 1);
	CHECK_EQ(t.recs[0].from, 0x401000);
	CHECK_EQ(t.recs[0].to, 0x402000);
	CHECK_EQ(t.source, BTS_SOURCE_EMUL);
	btsdec_trace_free(&t);
}

static void test_full_and_wrapped(void)
{
	struct btsdec_trace t;
	size_t len = make(64, 64, BTS_NOTE_F_WRAPPED | BTS_NOTE_F_LOST_EXACT);

	put64(40, 1000);	/* lost */
	put32(48, 3);		/* gaps */
	REQUIRE(parse(NT_BTSCRASH_THREAD, len, &t, NULL) == 0);
	CHECK_EQ(t.nr, 64);
	CHECK(t.flags & BTS_NOTE_F_WRAPPED);
	CHECK_EQ(t.lost, 1000);
	CHECK_EQ(t.nr_gaps, 3);
	CHECK_EQ(t.recs[63].from, 0x401000 + 63);
	btsdec_trace_free(&t);
}

static void test_maximal_capacity(void)
{
	struct btsdec_trace t;
	size_t len = make(2, 16, 0);

	put64(24, BTS_CRASH_MAX_CAPACITY);
	REQUIRE(parse(NT_BTSCRASH_THREAD, len, &t, NULL) == 0);
	btsdec_trace_free(&t);
	put64(24, BTS_CRASH_MAX_CAPACITY + 1);
	expect_reject(NT_BTSCRASH_THREAD, len, "capacity");
	put64(24, 0);
	expect_reject(NT_BTSCRASH_THREAD, len, "capacity");
	CHECK_EQ(btsdec_note_size(BTS_CRASH_MAX_CAPACITY + 1), 0);
}

static void test_padding_and_name(void)
{
	uint32_t namesz, descsz, type;
	size_t len = make(3, 16, 0);

	memcpy(&namesz, note, 4);
	memcpy(&descsz, note + 4, 4);
	memcpy(&type, note + 8, 4);
	CHECK_EQ(le32toh(namesz), 9);	/* "BTSCRASH" + NUL */
	CHECK_EQ(le32toh(descsz), len);
	CHECK_EQ(le32toh(type), NT_BTSCRASH_THREAD);
	CHECK(!memcmp(note + 12, "BTSCRASH\0\0\0\0", 12));	/* NUL + padding */
	CHECK_EQ(btsdec_note_size(3), DESC_OFF + len);
	CHECK_EQ(btsdec_note_size(3) % 4, 0);
	CHECK_EQ(note[DESC_OFF + len], 0xee);	/* writes nothing past the end */
}

static void test_buffer_too_small(void)
{
	struct btsdec_trace t = { .type = NT_BTSCRASH_THREAD, .capacity = 4,
				  .nr = 2, .recs = recs };
	struct btsdec_err err;

	CHECK_EQ(btsdec_note_write(note, btsdec_note_size(2) - 1, &t, &err), -ENOSPC);
	t.nr = 5;
	CHECK_EQ(btsdec_note_write(note, sizeof(note), &t, &err), -EINVAL);
}

static void test_unaligned_descriptor(void)
{
	static uint8_t shifted[sizeof(note) + 8];
	struct btsdec_trace t;
	size_t len = make(5, 16, 0);

	for (int shift = 1; shift < 8; shift++) {
		memcpy(shifted + shift, note + DESC_OFF, len);
		REQUIRE(btsdec_note_parse(NT_BTSCRASH_THREAD, shifted + shift, len,
					  &t, NULL) == 0);
		CHECK_EQ(t.recs[4].to, 0x402004);
		btsdec_trace_free(&t);
	}
}

static void test_rejects_header(void)
{
	size_t len;

	len = make(2, 16, 0); put32(0, 0x12345678);
	expect_reject(NT_BTSCRASH_THREAD, len, "bad magic");
	len = make(2, 16, 0); put16(4, 2);
	expect_reject(NT_BTSCRASH_THREAD, len, "version");
	len = make(2, 16, 0); put32(8, 16);
	expect_reject(NT_BTSCRASH_THREAD, len, "record size");
	len = make(2, 16, 0); put16(52, 4);	/* 1-3: hw, emul, lbr */
	expect_reject(NT_BTSCRASH_THREAD, len, "source");
	len = make(2, 16, 0); put16(54, 1);
	expect_reject(NT_BTSCRASH_THREAD, len, "reserved");
	len = make(2, 16, 0); put64(56, 1);
	expect_reject(NT_BTSCRASH_THREAD, len, "reserved");
	len = make(2, 16, 0); put32(12, BTS_NOTE_F_USER_ONLY | 0x100);
	expect_reject(NT_BTSCRASH_THREAD, len, "flags");
	len = make(2, 16, 0); put32(12, 0);
	expect_reject(NT_BTSCRASH_THREAD, len, "USER_ONLY");
	expect_reject(NT_BTSCRASH_THREAD, 63, "shorter than its header");
	expect_reject(0x1234, 64, "unknown note type");
}

static void test_rejects_sizes(void)
{
	size_t len;

	len = make(2, 16, 0); put16(6, 56);
	expect_reject(NT_BTSCRASH_THREAD, len, "header size");
	len = make(2, 16, 0); put16(6, 68);
	expect_reject(NT_BTSCRASH_THREAD, len, "header size");
	len = make(0, 16, 0); put16(6, 72);
	expect_reject(NT_BTSCRASH_THREAD, len, "header size");
	len = make(2, 16, 0);
	expect_reject(NT_BTSCRASH_THREAD, len - 1, "do not fill");
	expect_reject(NT_BTSCRASH_THREAD, len + 24, "do not fill");
	len = make(2, 16, 0); put64(32, 3);
	expect_reject(NT_BTSCRASH_THREAD, len, "do not fill");
	len = make(2, 16, 0); put64(32, 1ULL << 61);	/* n * 24 overflows */
	expect_reject(NT_BTSCRASH_THREAD, len, "do not fill");
	len = make(2, 16, 0); put64(32, UINT64_MAX);
	expect_reject(NT_BTSCRASH_THREAD, len, "do not fill");
	len = make(4, 3, 0);
	CHECK_EQ(len, 0);	/* the writer refuses too */
	len = make(4, 4, 0); put64(24, 3);
	expect_reject(NT_BTSCRASH_THREAD, len, "exceed capacity");
}

static void test_larger_header_is_skipped(void)
{
	struct btsdec_trace t;
	size_t len = make(3, 16, 0);

	/* A compatible writer with an 8-byte longer header: shift records. */
	memmove(note + DESC_OFF + 72, note + DESC_OFF + 64, 3 * 24);
	put64(64, 0xdeadbeef);
	put16(6, 72);
	REQUIRE(parse(NT_BTSCRASH_THREAD, len + 8, &t, NULL) == 0);
	CHECK_EQ(t.nr, 3);
	CHECK_EQ(t.recs[0].from, 0x401000);
	CHECK_EQ(t.recs[2].to, 0x402002);
	btsdec_trace_free(&t);
}

static void test_kernel_addresses(void)
{
	struct btsdec_trace t;
	size_t len;

	len = make(3, 16, 0); put64(64 + 24, 0xffffffff81000000ULL);
	expect_reject(NT_BTSCRASH_THREAD, len, "kernel address");
	len = make(3, 16, 0); put64(64 + 2 * 24 + 8, 0x0000800000000000ULL);
	expect_reject(NT_BTSCRASH_THREAD, len, "kernel address");
	len = make(3, 16, 0); put64(64 + 8, 0x00007fffffffffffULL);
	REQUIRE(parse(NT_BTSCRASH_THREAD, len, &t, NULL) == 0);	/* top of user */
	btsdec_trace_free(&t);
	/* CPU notes carry kernel addresses and need no USER_ONLY */
	len = make(3, 16, 0); put64(64, 0xffffffff81000000ULL); put32(12, 0);
	REQUIRE(parse(NT_BTSCRASH_CPU, len, &t, NULL) == 0);
	CHECK_EQ(t.recs[0].from, 0xffffffff81000000ULL);
	btsdec_trace_free(&t);
}

static void test_markers(void)
{
	const struct {
		uint64_t from;
		int ok;
	} cases[] = {
		{ BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), 1 },
		{ BTS_MARKER(BTS_MARK_SWITCH_IN, 0), 1 },
		{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF), 1 },
		{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_MAX), 1 },
		{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_TASK), 1 },
		{ BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_TASK), 1 },
		{ BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_PERF), 1 },
		{ BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_MAX + 1), 0 },
		{ BTS_MARKER(0, 0), 0 },
		{ BTS_MARKER(BTS_MARK_MAX + 1, 0), 0 },
		{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_MAX + 1), 0 },
		{ BTS_MARKER(BTS_MARK_SWITCH_IN, 1), 0 },
		{ BTS_MARKER(BTS_MARK_SWITCH_IN, 0) | (1ULL << 30), 0 },
	};
	struct btsdec_trace t;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = make(3, 16, 0);
		int ret;

		put64(64 + 24, cases[i].from);
		put64(64 + 24 + 8, 123456789);	/* timestamp: no address */
		ret = parse(NT_BTSCRASH_THREAD, len, &t, NULL);
		CHECK_EQ(ret, cases[i].ok ? 0 : -EINVAL);
		if (!ret) {
			CHECK(btsdec_is_marker(&t.recs[1]));
			CHECK(!btsdec_is_marker(&t.recs[0]));
			btsdec_trace_free(&t);
		}
	}
}

/* A kernel ring that ends suspended says so above its (older) records;
 * a user ring, or a kernel ring that resumed, does not (format.md §1.1). */
static char *ring_text(const struct btsdec_record *r, size_t nr, bool user)
{
	struct btsdec_ring_text v = { .what = "CPU 0", .recs = r, .nr = nr,
				      .capacity = 64, .source = BTS_SOURCE_HW,
				      .user = user };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	btsdec_ring_text_write(f, &v, 0, false, NULL, NULL);
	fclose(f);
	return buf;
}

static void test_ring_suspended(void)
{
	struct btsdec_record r[] = {
		{ 0xffffffff81000000ULL, 0xffffffff81000100ULL, 0 },
		{ BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_TASK), 5500000000ULL, 77 },
		{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_TASK), 6000000000ULL, 500000000 },
	};
	char *s, d[128];

	s = ring_text(r, 2, false);
	CHECK(strstr(s, "  not recording kernel branches since 5.500000 s (task 77's "
		      "ring held BTS); the records below are older\n") != NULL);
	CHECK(strstr(s, "suspended at 5.500000000s: task 77's ring took BTS") != NULL);
	free(s);
	s = ring_text(r, 3, false);
	CHECK(strstr(s, "not recording") == NULL);
	CHECK(strstr(s, "gap (task), resumed at 6.000000000s after 500000000 ns") != NULL);
	free(s);
	s = ring_text(r, 2, true);
	CHECK(strstr(s, "not recording") == NULL);
	free(s);
	CHECK_STR(btsdec_marker_name(&r[1]), "suspend");
	r[1].from = BTS_MARKER(BTS_MARK_SUSPEND, BTS_GAP_PERF);
	CHECK_STR(btsdec_marker_describe(&r[1], d, sizeof(d)), "suspended (perf) at 5.500000000s");
	s = ring_text(r, 2, false);
	CHECK(strstr(s, "not recording kernel branches since 5.500000 s (perf)") != NULL);
	free(s);
}

static void test_marker_never_canonical(void)
{
	/* The tag must be non-canonical under 4- and 5-level paging. */
	uint64_t tag = BTS_MARKER_TAG;
	uint64_t top57 = tag >> 56, top48 = tag >> 47;

	CHECK(top57 != 0 && top57 != 0xff);
	CHECK(top48 != 0 && top48 != 0x1ffff);
	CHECK_STR(btsdec_marker_name(&(struct btsdec_record){ BTS_MARKER(BTS_MARK_GAP, 1), 0, 0 }), "gap");
	CHECK_STR(btsdec_gap_reason_name(BTS_GAP_PERF), "perf");
	CHECK_STR(btsdec_gap_reason_name(99), "invalid");
}

/* Many traces of one file share one window (a core's threads: issue 30):
 * read in turn, record by record, each still gets its own records. */
static void test_shared_window(void)
{
	enum { NT = 3, N = 5000 };	/* N: more than one window each */
	struct btsdec_trace held = {
		.type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY,
		.capacity = N, .source = BTS_SOURCE_HW, .nr = N,
	}, t[NT];
	size_t len = btsdec_note_size(N), i, k;
	struct btsdec_recwin *win = btsdec_recwin_new();
	uint8_t *buf = malloc(len);
	int fd = memfd_create("notes", 0);
	struct btsdec_err err;

	REQUIRE(win && buf && fd >= 0 && (held.recs = calloc(N, sizeof(*held.recs))));
	for (k = 0; k < NT; k++) {
		held.id = 100 + k;
		for (i = 0; i < N; i++)
			held.recs[i] = (struct btsdec_record){ 0x401000 + i, 0x500000 + k, 0 };
		REQUIRE(btsdec_note_write(buf, len, &held, NULL) == (ssize_t)len);
		REQUIRE(pwrite(fd, buf, len, k * len) == (ssize_t)len);
		REQUIRE(btsdec_note_parse_fd(NT_BTSCRASH_THREAD, fd, k * len + DESC_OFF,
					     len - DESC_OFF, win, &t[k], &err) == 0);
	}
	for (i = 0; i < N; i += 7)
		for (k = 0; k < NT; k++) {
			CHECK_EQ(btsdec_trace_at(&t[k], i).from, 0x401000 + i);
			CHECK_EQ(btsdec_trace_at(&t[k], i).to, 0x500000 + k);
		}
	for (k = 0; k < NT; k++) {
		CHECK_EQ(btsdec_trace_error(&t[k]), 0);
		btsdec_trace_free(&t[k]);
	}
	btsdec_recwin_free(win);
	close(fd);
	free(held.recs);
	free(buf);
}

static void test_layout_matches_header(void)
{
	/* The C header and the byte offsets of docs/format.md agree. */
	CHECK_EQ(sizeof(struct bts_crash_note_hdr), BTS_CRASH_NOTE_HDR_SIZE);
	CHECK_EQ(sizeof(struct bts_record), BTS_RECORD_SIZE);
	CHECK_EQ(__builtin_offsetof(struct bts_crash_note_hdr, lost), 40);
	CHECK_EQ(__builtin_offsetof(struct bts_crash_note_hdr, source), 52);
	CHECK_EQ(sizeof(struct bts_crash_ring), 72);
	CHECK_EQ(__builtin_offsetof(struct bts_crash_ring, records_pa), 40);
	CHECK_EQ(__builtin_offsetof(struct bts_crash_ring, freeze_ts), 64);
	CHECK_EQ(sizeof(struct bts_crash_table), 24);
}

/* A trace streamed from a file (btsdec_note_parse_fd): the same records
 * as a held one, across window edges, in any order; a bad record far into
 * the trace rejects the note; a file that shrinks afterwards is reported. */
static void test_streamed(void)
{
	const size_t n = 10000;	/* more than two 4096-record windows */
	struct btsdec_trace held = {
		.type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY, .id = 7,
		.capacity = 16384, .source = BTS_SOURCE_HW, .nr = n,
	}, t;
	size_t len = btsdec_note_size(n), i;
	uint8_t *buf = malloc(len);
	struct btsdec_err err;
	int fd = memfd_create("note", 0);
	struct btsdec_record r;

	REQUIRE(buf && fd >= 0 && (held.recs = calloc(n, sizeof(*held.recs))));
	for (i = 0; i < n; i++)
		held.recs[i] = (struct btsdec_record){ 0x401000 + i, 0x500000 + i, i & 1 };
	REQUIRE(btsdec_note_write(buf, len, &held, NULL) == (ssize_t)len);
	REQUIRE(write(fd, buf, len) == (ssize_t)len);
	REQUIRE(btsdec_note_parse_fd(NT_BTSCRASH_THREAD, fd, DESC_OFF, len - DESC_OFF,
				     NULL, &t, &err) == 0);
	CHECK(t.src && !t.recs);
	CHECK_EQ(t.nr, n);
	CHECK_EQ(t.capacity, 16384);
	for (i = n; i-- > 0; ) {	/* backwards: every window read again */
		r = btsdec_trace_at(&t, i);
		CHECK(!memcmp(&r, &held.recs[i], sizeof(r)));
	}
	for (i = 4090; i < 4100; i++)	/* forwards over an edge */
		CHECK_EQ(btsdec_trace_at(&t, i).to, 0x500000 + i);
	CHECK_EQ(btsdec_trace_error(&t), 0);
	/* the file shrinks under the reader: zeroed records, and said */
	REQUIRE(ftruncate(fd, DESC_OFF + 64 + 24 * 100) == 0);
	CHECK_EQ(btsdec_trace_at(&t, 9000).from, 0);
	CHECK_EQ(btsdec_trace_error(&t), -EIO);
	btsdec_trace_free(&t);
	CHECK(!t.src);

	/* a kernel address in record 9000, checked at parse time */
	held.recs[9000].to = 0xffffffff81000000ULL;
	REQUIRE(btsdec_note_write(buf, len, &held, NULL) == (ssize_t)len);
	REQUIRE(pwrite(fd, buf, len, 0) == (ssize_t)len);
	CHECK_EQ(btsdec_note_parse_fd(NT_BTSCRASH_THREAD, fd, DESC_OFF, len - DESC_OFF,
				      NULL, &t, &err), -EINVAL);
	CHECK(strstr(err.msg, "record 9000 holds a kernel address"));
	/* a descriptor longer than the file */
	REQUIRE(ftruncate(fd, len - 24 * 10) == 0);
	CHECK_EQ(btsdec_note_parse_fd(NT_BTSCRASH_THREAD, fd, DESC_OFF, len - DESC_OFF,
				      NULL, &t, &err), -EIO);
	CHECK(strstr(err.msg, "cut short"));
	close(fd);
	free(held.recs);
	free(buf);
}

static const struct test_case tests[] = {
	TEST_CASE(test_empty),
	TEST_CASE(test_one_record),
	TEST_CASE(test_full_and_wrapped),
	TEST_CASE(test_maximal_capacity),
	TEST_CASE(test_padding_and_name),
	TEST_CASE(test_buffer_too_small),
	TEST_CASE(test_unaligned_descriptor),
	TEST_CASE(test_rejects_header),
	TEST_CASE(test_rejects_sizes),
	TEST_CASE(test_larger_header_is_skipped),
	TEST_CASE(test_kernel_addresses),
	TEST_CASE(test_markers),
	TEST_CASE(test_marker_never_canonical),
	TEST_CASE(test_ring_suspended),
	TEST_CASE(test_layout_matches_header),
	TEST_CASE(test_streamed),
	TEST_CASE(test_shared_window),
};

int main(void)
{
	return RUN_TESTS(tests);
}
