// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lib/grow.c: arrays grow geometrically (few reallocs for
 * many elements, overflow refused), the key index finds every key after
 * many rehashes, returns every position of a shared key, and says when a
 * key is absent; the search of sorted segments counts right at the edges.
 */
#include <errno.h>

#include "grow.h"
#include "test.h"

static void test_grow_doubles(void)
{
	size_t cap = 0, grows = 0, last = 0;
	uint32_t *v = NULL;

	for (size_t n = 1; n <= 100000; n++) {
		REQUIRE(btsdec_grow(&v, &cap, n) == 0);
		CHECK(cap >= n);
		v[n - 1] = (uint32_t)n;
		grows += cap != last;
		last = cap;
	}
	CHECK(grows <= 14);	/* 16 .. 131072: doublings, not one per element */
	CHECK_EQ(v[99999], 100000);
	CHECK_EQ(btsdec_grow(&v, &cap, SIZE_MAX / 2), -ENOMEM);
	CHECK_EQ(v[0], 1);	/* untouched on failure */
	free(v);
}

static void test_index_finds_every_key(void)
{
	struct btsdec_index x = { 0 };
	size_t misses = 0;

	CHECK_EQ(btsdec_index_get(&x, 5), BTSDEC_INDEX_NONE);	/* empty */
	for (size_t i = 0; i < 50000; i++)
		REQUIRE(btsdec_index_add(&x, 1000000 + 7 * i, i) == 0);
	for (size_t i = 0; i < 50000; i++)
		misses += btsdec_index_get(&x, 1000000 + 7 * i) != i;
	CHECK_EQ(misses, 0);
	CHECK_EQ(btsdec_index_get(&x, 1000001), BTSDEC_INDEX_NONE);
	CHECK(x.cap >= 2 * x.used);
	btsdec_index_free(&x);
	CHECK(!x.slots && !x.cap);
}

static void test_index_shared_key(void)
{
	struct btsdec_index x = { 0 };
	size_t probe = 0, i, seen = 0;

	for (i = 0; i < 100; i++)	/* 0, 3, .., 99 under key 42 */
		REQUIRE(btsdec_index_add(&x, i % 3 ? i : 42, i) == 0);
	while ((i = btsdec_index_next(&x, 42, &probe)) != BTSDEC_INDEX_NONE) {
		CHECK(i % 3 == 0);
		seen++;
	}
	CHECK_EQ(seen, 34);
	CHECK_EQ(btsdec_index_str("libc.so.6"), btsdec_index_str("libc.so.6"));
	CHECK(btsdec_index_str("libc.so.6") != btsdec_index_str("libm.so.6"));
	btsdec_index_free(&x);
}

/* Sorted segments: the count at or below x, by the first member or by
 * another one (base pointing at it). */
static void test_upper_bound(void)
{
	struct seg { uint64_t start, end_max; } v[] = {
		{ 10, 20 }, { 10, 25 }, { 30, 25 }, { 40, 90 }, { 100, 110 },
	};
	size_t n = sizeof(v) / sizeof(v[0]);

	CHECK_EQ(btsdec_upper_bound(v, n, sizeof(v[0]), 9), 0);
	CHECK_EQ(btsdec_upper_bound(v, n, sizeof(v[0]), 10), 2);
	CHECK_EQ(btsdec_upper_bound(v, n, sizeof(v[0]), 39), 3);
	CHECK_EQ(btsdec_upper_bound(v, n, sizeof(v[0]), UINT64_MAX), n);
	CHECK_EQ(btsdec_upper_bound(v, 0, sizeof(v[0]), 50), 0);
	CHECK_EQ(btsdec_upper_bound(&v[0].end_max, n, sizeof(v[0]), 24), 1);
	CHECK_EQ(btsdec_upper_bound(&v[0].end_max, n, sizeof(v[0]), 25), 3);
}

static const struct test_case tests[] = {
	TEST_CASE(test_grow_doubles),
	TEST_CASE(test_index_finds_every_key),
	TEST_CASE(test_index_shared_key),
	TEST_CASE(test_upper_bound),
};

int main(void)
{
	return RUN_TESTS(tests);
}
