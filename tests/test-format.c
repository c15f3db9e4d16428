// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the format decoder (lib/format.c), linked alone (no libelf,
 * no libdw: the crash extension builds it the same way).  Layouts are
 * written here at docs/format.md's literal offsets, so a header that drifts
 * from the prose contract fails: note framing and header, the ring table,
 * ring descriptors at VMCOREINFO's offsets, ring order through a read
 * callback, and every rejection on the way.
 */
#include <errno.h>

#include "format.h"
#include "test.h"

/* ---- a little-endian memory image the read callback serves ---- */

static uint8_t mem[4096];

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len,
		    struct btsdec_err *err)
{
	(void)ctx;
	if (addr > sizeof(mem) || len > sizeof(mem) - addr)
		return btsdec_fail(err, -ENOENT, "address %#llx not in the image",
				   (unsigned long long)addr);
	memcpy(buf, mem + addr, len);
	return 0;
}

static void put(uint64_t addr, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++, v >>= 8)
		mem[addr + i] = (uint8_t)v;
}

/* VMCOREINFO as a kernel with the uapi layout exports it (§4.1). */
static const char *info_text[][2] = {
	{ "BTS_CRASH", "1" }, { "BTS_CRASH_TABLE_PA", "100" },
	{ "SIZE(bts_crash_ring)", "72" },
	{ "OFFSET(bts_crash_ring.flags)", "12" }, { "OFFSET(bts_crash_ring.id)", "16" },
	{ "OFFSET(bts_crash_ring.capacity)", "24" },
	{ "OFFSET(bts_crash_ring.index)", "32" },
	{ "OFFSET(bts_crash_ring.records_pa)", "40" },
	{ "OFFSET(bts_crash_ring.lost)", "48" },
	{ "OFFSET(bts_crash_ring.nr_gaps)", "56" },
	{ "OFFSET(bts_crash_ring.source)", "60" },
	{ "OFFSET(bts_crash_ring.freeze_ts)", "64" },
};
static const char *info_override_key, *info_override_val;

static bool info(void *ctx, const char *key, char *buf, size_t len)
{
	(void)ctx;
	if (info_override_key && !strcmp(key, info_override_key)) {
		if (!info_override_val)
			return false;
		snprintf(buf, len, "%s", info_override_val);
		return true;
	}
	for (size_t i = 0; i < sizeof(info_text) / sizeof(info_text[0]); i++)
		if (!strcmp(key, info_text[i][0])) {
			snprintf(buf, len, "%s", info_text[i][1]);
			return true;
		}
	return false;
}

#define TABLE	0x100
#define DESC	0x200
#define RECS	0x400
#define CAP	8

/* Table of 2 CPUs (CPU 1 has no ring), one descriptor, CAP slots of which
 * n were written, the newest at slot (n - 1) % CAP. */
static void make_image(unsigned int n, uint32_t ring_flags)
{
	memset(mem, 0, sizeof(mem));
	put(TABLE + 0, 4, BTS_CRASH_TABLE_MAGIC);
	put(TABLE + 4, 2, 1);
	put(TABLE + 6, 2, 24);
	put(TABLE + 8, 4, 2);
	put(TABLE + 12, 4, 8);
	put(TABLE + 16, 8, 0);
	put(TABLE + 24, 8, DESC);
	put(DESC + 0, 4, BTS_CRASH_RING_MAGIC);
	put(DESC + 4, 2, 1);
	put(DESC + 6, 2, 72);
	put(DESC + 8, 4, 24);
	put(DESC + 12, 4, ring_flags);
	put(DESC + 16, 8, 0);
	put(DESC + 24, 8, CAP);
	put(DESC + 32, 8, n % CAP);
	put(DESC + 40, 8, RECS);
	put(DESC + 48, 8, n > CAP ? n - CAP : 0);
	put(DESC + 56, 4, 1);
	put(DESC + 60, 2, BTS_SOURCE_EMUL);
	put(DESC + 64, 8, 123456789);
	for (unsigned int i = 1; i <= n; i++) {
		uint64_t slot = RECS + ((i - 1) % CAP) * 24;

		put(slot, 8, i);
		put(slot + 8, 8, 1000 + i);
		put(slot + 16, 8, 0);
	}
}

static void test_struct_offsets_match_the_doc(void)
{
	/* §2.1, §4.2, §4.3: the header's structs are the documented layout */
	CHECK_EQ(offsetof(struct bts_crash_note_hdr, id), 16);
	CHECK_EQ(offsetof(struct bts_crash_note_hdr, nr_records), 32);
	CHECK_EQ(offsetof(struct bts_crash_note_hdr, source), 52);
	CHECK_EQ(sizeof(struct bts_crash_note_hdr), BTS_CRASH_NOTE_HDR_SIZE);
	CHECK_EQ(offsetof(struct bts_crash_table, panic_cpu), 16);
	CHECK_EQ(sizeof(struct bts_crash_table), 24);
	CHECK_EQ(offsetof(struct bts_crash_ring, records_pa), 40);
	CHECK_EQ(offsetof(struct bts_crash_ring, freeze_ts), 64);
	CHECK_EQ(sizeof(struct bts_crash_ring), 72);
}

static void test_note_hdr_round_trip(void)
{
	struct bts_crash_note_hdr h = {
		.magic = BTS_CRASH_NOTE_MAGIC, .version = 1, .hdr_size = 64,
		.record_size = 24, .flags = BTS_NOTE_F_USER_ONLY, .id = 0x1234,
		.capacity = 16, .nr_records = 0, .lost = 7, .nr_gaps = 2,
		.source = BTS_SOURCE_HW,
	}, back;
	uint8_t d[64];
	struct btsdec_err err;

	btsdec_note_hdr_store(d, &h);
	CHECK_EQ(d[16], 0x34);	/* id at 16, little-endian */
	CHECK_EQ(d[17], 0x12);
	CHECK_EQ(d[40], 7);	/* lost at 40 */
	CHECK_EQ(d[52], BTS_SOURCE_HW);
	REQUIRE(btsdec_note_hdr_load(NT_BTSCRASH_THREAD, d, sizeof(d), &back, &err) == 0);
	CHECK(!memcmp(&h, &back, sizeof(h)));
	/* a CPU note may lack USER_ONLY, a thread note may not */
	h.flags = 0;
	btsdec_note_hdr_store(d, &h);
	CHECK_EQ(btsdec_note_hdr_load(NT_BTSCRASH_CPU, d, sizeof(d), &back, &err), 0);
	CHECK_EQ(btsdec_note_hdr_load(NT_BTSCRASH_THREAD, d, sizeof(d), &back, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "USER_ONLY");
	CHECK_EQ(btsdec_note_hdr_load(NT_BTSCRASH_CPU, d, 63, &back, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "shorter than its header");
	CHECK_EQ(btsdec_note_hdr_load(0x42540003, d, sizeof(d), &back, &err), -EINVAL);
}

static void test_elf_note_walk(void)
{
	uint8_t buf[128] = { 0 };
	struct btsdec_elf_note n;
	struct btsdec_err err;
	size_t off = 0, len;

	/* a "CORE" note with a 5-byte descriptor (padded to 8), then ours */
	put(0, 4, 5), put(4, 4, 5), put(8, 4, 1);
	memcpy(mem + 12, "CORE", 5);
	len = 12 + 8 + 8;
	len += btsdec_note_frame_store(mem + len, NT_BTSCRASH_CPU, 4);
	len += 4;
	memcpy(buf, mem, len);
	REQUIRE(btsdec_elf_note_next(buf, len, &off, &n, &err) == 1);
	CHECK(btsdec_elf_note_owner(&n, "CORE", 5));
	CHECK_EQ(n.descsz, 5);
	CHECK_EQ(n.desc_off, 20);
	CHECK_EQ(off, 28);
	REQUIRE(btsdec_elf_note_next(buf, len, &off, &n, &err) == 1);
	CHECK(btsdec_elf_note_owner(&n, BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ));
	CHECK(!btsdec_elf_note_owner(&n, "CORE", 5));
	CHECK_EQ(n.type, NT_BTSCRASH_CPU);
	CHECK_EQ(n.desc_off, 28 + 24);
	CHECK_EQ(btsdec_elf_note_next(buf, len, &off, &n, &err), 0);
	/* a descriptor that runs past the buffer: an error, not a read past it */
	off = 0;
	CHECK_EQ(btsdec_elf_note_next(buf, 24, &off, &n, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "run past");
	off = 0;
	put(0, 4, 0xfffffffd);	/* name size that would wrap a 32-bit sum */
	memcpy(buf, mem, 12);
	CHECK_EQ(btsdec_elf_note_next(buf, len, &off, &n, &err), -EINVAL);
	CHECK_EQ(btsdec_note_size(BTS_CRASH_MAX_CAPACITY + 1), 0);
	CHECK_EQ(btsdec_note_size(1), 12 + 12 + 64 + 24);
}

static void test_vmcoreinfo(void)
{
	struct btsdec_ring_layout l;
	struct btsdec_err err;
	uint64_t pa;

	info_override_key = NULL;
	REQUIRE(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err) == 0);
	CHECK_EQ(pa, 0x100);
	CHECK_EQ(l.size, 72);
	CHECK_EQ(l.records_pa, 40);
	info_override_key = "BTS_CRASH", info_override_val = NULL;
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), -ENOENT);
	CHECK_CONTAINS(err.msg, "BTS_CRASH=1");
	info_override_val = "2";	/* a newer format: not read as this one */
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), -ENOENT);
	info_override_key = "SIZE(bts_crash_ring)", info_override_val = "71";
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), -EINVAL);
	info_override_key = "OFFSET(bts_crash_ring.freeze_ts)", info_override_val = "65";
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "freeze_ts");
	info_override_val = "64x";
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), -EINVAL);
	/* per-task rings only (bts_crash.cpu_records=0): no table, a layout */
	info_override_key = "BTS_CRASH_TABLE_PA", info_override_val = NULL;
	pa = 1;
	CHECK_EQ(btsdec_vmcoreinfo_rings(info, NULL, &pa, &l, &err), 0);
	CHECK_EQ(pa, 0);
	info_override_key = NULL;
}

static void test_table(void)
{
	struct btsdec_table t;
	struct btsdec_err err;

	make_image(3, 0);
	REQUIRE(btsdec_table_load(mem_read, NULL, TABLE, &t, &err) == 0);
	CHECK_EQ(t.nr_entries, 2);
	CHECK_EQ(t.entries[0], DESC);
	CHECK_EQ(t.entries[1], 0);
	CHECK_EQ(t.panic_cpu, 0);
	btsdec_table_free(&t);
	put(TABLE + 12, 4, 4);	/* entry size */
	CHECK_EQ(btsdec_table_load(mem_read, NULL, TABLE, &t, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "corrupt ring table");
	CHECK(!t.entries);
	make_image(3, 0);
	put(TABLE + 8, 4, BTSDEC_TABLE_MAX_CPUS + 1);
	CHECK_EQ(btsdec_table_load(mem_read, NULL, TABLE, &t, &err), -EINVAL);
	make_image(3, 0);
	put(TABLE + 6, 2, 4000);	/* entries past the image: the read's error */
	CHECK_EQ(btsdec_table_load(mem_read, NULL, TABLE, &t, &err), -ENOENT);
	CHECK_CONTAINS(err.msg, "not in the image");
	CHECK_EQ(btsdec_table_load(mem_read, NULL, sizeof(mem), &t, &err), -ENOENT);
}

static void load_layout(struct btsdec_ring_layout *l)
{
	uint64_t pa;

	info_override_key = NULL;
	btsdec_vmcoreinfo_rings(info, NULL, &pa, l, NULL);
}

static void test_ring_descriptor(void)
{
	struct btsdec_ring_layout l;
	struct bts_crash_ring d;
	struct btsdec_err err;

	load_layout(&l);
	make_image(3, BTS_RING_F_FROZEN);
	REQUIRE(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err) == 0);
	CHECK_EQ(d.capacity, CAP);
	CHECK_EQ(d.index, 3);
	CHECK_EQ(d.records_pa, RECS);
	CHECK_EQ(d.source, BTS_SOURCE_EMUL);
	CHECK_EQ(d.freeze_ts, 123456789);
	CHECK_EQ(d.flags, BTS_RING_F_FROZEN);
	put(DESC + 32, 8, CAP);	/* index == capacity */
	CHECK_EQ(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "index 8");
	make_image(3, 0);
	put(DESC + 24, 8, BTS_CRASH_MAX_CAPACITY + 1);
	CHECK_EQ(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err), -EINVAL);
	make_image(3, 0);
	put(DESC + 6, 2, 64);	/* hdr_size smaller than the v1 descriptor */
	CHECK_EQ(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err), -EINVAL);
	make_image(3, 0);
	put(DESC, 4, BTS_CRASH_TABLE_MAGIC);
	CHECK_EQ(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "not a ring descriptor");
	/* moved fields: the reader follows VMCOREINFO, not the struct */
	make_image(3, 0);
	l.size = 80, l.freeze_ts = 72;
	put(DESC + 72, 8, 42);
	REQUIRE(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err) == 0);
	CHECK_EQ(d.freeze_ts, 42);
}

static void expect_ring(unsigned int n, uint32_t flags, unsigned int first,
			unsigned int last, bool want_wrapped)
{
	struct btsdec_ring_layout l;
	struct btsdec_record *recs;
	struct bts_crash_ring d;
	struct btsdec_err err;
	bool wrapped;
	size_t nr;

	load_layout(&l);
	make_image(n, flags);
	REQUIRE(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err) == 0);
	REQUIRE(btsdec_ring_records(mem_read, NULL, &d, UINT64_MAX, &recs, &nr,
				    &wrapped, &err) == 0);
	CHECK_EQ(wrapped, want_wrapped);
	CHECK_EQ(nr, last - first + 1);
	for (size_t i = 0; i < nr && i <= last - first; i++) {
		CHECK_EQ(recs[i].from, first + i);
		CHECK_EQ(recs[i].to, 1000 + first + i);
	}
	free(recs);
}

static void test_ring_records(void)
{
	struct btsdec_ring_layout l;
	struct btsdec_record *recs;
	struct bts_crash_ring d;
	struct btsdec_err err;
	bool wrapped;
	size_t nr;

	expect_ring(3, 0, 1, 3, false);
	expect_ring(CAP, 0, 1, CAP, true);	/* exactly full: index back at 0 */
	expect_ring(CAP + 5, BTS_RING_F_WRAPPED, 6, CAP + 5, true);
	expect_ring(CAP + 5, 0, 6, CAP + 5, true);	/* the flag lags */
	load_layout(&l);
	make_image(3, 0);
	REQUIRE(btsdec_ring_desc_load(mem_read, NULL, &l, DESC, &d, &err) == 0);
	CHECK_EQ(btsdec_ring_records(mem_read, NULL, &d, CAP * 24 - 1, &recs, &nr,
				     &wrapped, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "larger than the dump");
	d.records_pa = sizeof(mem) - 24;
	CHECK_EQ(btsdec_ring_records(mem_read, NULL, &d, UINT64_MAX, &recs, &nr,
				     &wrapped, &err), -ENOENT);
	CHECK(!recs);
	d.index = CAP;
	CHECK_EQ(btsdec_ring_records(mem_read, NULL, &d, UINT64_MAX, &recs, &nr,
				     &wrapped, &err), -EINVAL);
}

/* The one marker description core, vmcore and crash> bts print. */
static void test_marker_describe(void)
{
	struct btsdec_record out = { BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), 12000000345ULL, 1 };
	struct btsdec_record gap = { BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF), 5ULL, 5000 };
	struct btsdec_record bad = { BTS_MARKER(9, 0), 0, 0 };
	char buf[128];

	CHECK_STR(btsdec_marker_describe(&out, buf, sizeof(buf)),
		  "switch-out cpu 1 at 12.000000345s");
	CHECK_STR(btsdec_marker_describe(&gap, buf, sizeof(buf)),
		  "gap (perf), resumed at 0.000000005s after 5000 ns");
	CHECK_CONTAINS(btsdec_marker_describe(&bad, buf, sizeof(buf)), "invalid marker");
}

static const struct test_case tests[] = {
	TEST_CASE(test_marker_describe),
	TEST_CASE(test_struct_offsets_match_the_doc),
	TEST_CASE(test_note_hdr_round_trip),
	TEST_CASE(test_elf_note_walk),
	TEST_CASE(test_vmcoreinfo),
	TEST_CASE(test_table),
	TEST_CASE(test_ring_descriptor),
	TEST_CASE(test_ring_records),
};

int main(void)
{
	return RUN_TESTS(tests);
}
