/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Minimal test harness for the unit tests: CHECK* record a failure and go
 * on, REQUIRE* stop the test case.  main() runs each TEST_CASE and exits 1
 * on any failure.  SOURCE_ROOT locates fixtures.
 */
#ifndef BTS_TEST_H
#define BTS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	test_failures++; } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", \
		__FILE__, __LINE__, #a, _a, #b, _b); test_failures++; } } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b)) { fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", expected \"%s\"\n", \
		__FILE__, __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); test_failures++; } } while (0)
#define CHECK_CONTAINS(hay, needle) do { const char *_h = (hay); \
	if (!_h || !strstr(_h, (needle))) { fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
		__FILE__, __LINE__, _h ? _h : "(null)", (needle)); test_failures++; } } while (0)
#define REQUIRE(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
	test_failures++; return; } } while (0)

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_CASE(f) { #f, f }

static inline int run_tests(const struct test_case *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int before = test_failures;

		t[i].fn();
		printf("%s %s\n", test_failures == before ? "ok  " : "FAIL", t[i].name);
	}
	return test_failures ? 1 : 0;
}

#define RUN_TESTS(arr) run_tests(arr, sizeof(arr) / sizeof(arr[0]))

#endif
