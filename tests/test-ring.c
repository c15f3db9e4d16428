// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of ring ordering (lib/format.c): a circular BTS ring as the
 * hardware leaves it, before and after wrapping, with a lagging WRAPPED
 * flag, and with out-of-range descriptors.
 */
#include <errno.h>

#include "btsdec.h"
#include "test.h"

#define CAP 8

static struct btsdec_record slots[CAP], out[CAP];

/* Simulates the hardware writing n branches numbered from 1 into slots. */
static uint64_t write_ring(unsigned int n)
{
	uint64_t index = 0;

	memset(slots, 0, sizeof(slots));
	for (unsigned int i = 1; i <= n; i++) {
		slots[index] = (struct btsdec_record){ i, i + 1000, 0 };
		index = (index + 1) % CAP;
	}
	return index;
}

static void expect_sequence(ssize_t n, unsigned int first, unsigned int last)
{
	REQUIRE(n == (ssize_t)(last - first + 1));
	for (ssize_t i = 0; i < n; i++)
		CHECK_EQ(out[i].from, first + i);
}

static void test_empty_ring(void)
{
	uint64_t idx = write_ring(0);

	CHECK_EQ(btsdec_ring_order(slots, CAP, idx, false, out, NULL), 0);
}

static void test_partial(void)
{
	uint64_t idx = write_ring(3);

	expect_sequence(btsdec_ring_order(slots, CAP, idx, false, out, NULL), 1, 3);
}

static void test_exactly_full(void)
{
	uint64_t idx = write_ring(CAP);	/* index back at 0 */

	CHECK_EQ(idx, 0);
	expect_sequence(btsdec_ring_order(slots, CAP, idx, true, out, NULL), 1, CAP);
}

static void test_wrapped(void)
{
	uint64_t idx = write_ring(CAP + 5);

	CHECK_EQ(idx, 5);
	expect_sequence(btsdec_ring_order(slots, CAP, idx, true, out, NULL), 6, CAP + 5);
}

static void test_wrapped_flag_lags(void)
{
	uint64_t idx = write_ring(CAP * 3 + 2);

	/* flag clear, but slot[index] is written: still read as wrapped */
	expect_sequence(btsdec_ring_order(slots, CAP, idx, false, out, NULL),
			CAP * 2 + 3, CAP * 3 + 2);
}

static void test_bad_descriptor(void)
{
	struct btsdec_err err;

	write_ring(3);
	CHECK_EQ(btsdec_ring_order(slots, CAP, CAP, false, out, &err), -EINVAL);
	CHECK_CONTAINS(err.msg, "index");
	CHECK_EQ(btsdec_ring_order(slots, 0, 0, false, out, &err), -EINVAL);
	CHECK_EQ(btsdec_ring_order(slots, BTS_CRASH_MAX_CAPACITY + 1, 0, false, out, &err),
		 -EINVAL);
}

static const struct test_case tests[] = {
	TEST_CASE(test_empty_ring),
	TEST_CASE(test_partial),
	TEST_CASE(test_exactly_full),
	TEST_CASE(test_wrapped),
	TEST_CASE(test_wrapped_flag_lags),
	TEST_CASE(test_bad_descriptor),
};

int main(void)
{
	return RUN_TESTS(tests);
}
