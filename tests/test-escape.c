// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lib/escape.c, the escaper of everything a person reads:
 * the table of docs/btsdump.md "Output safety" byte by byte, the cut of
 * the buffer form, the lines mode, the inverse, and lib/json.c's lossless
 * strings (a byte array for what is not UTF-8).
 */
#include <errno.h>
#include <json-c/json.h>

#include "btsdec.h"
#include "escape.h"
#include "test.h"

static void test_table(void)
{
	char buf[128];

	CHECK_STR(btsdec_escape_buf("\x1b[2J\a\nx", buf, sizeof(buf), 0), "\\x1b[2J\\x07\\x0ax");
	CHECK_STR(btsdec_escape_buf("a\\b\t\x7f", buf, sizeof(buf), 0), "a\\\\b\\x09\\x7f");
	CHECK_STR(btsdec_escape_buf("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", buf, sizeof(buf), 0),
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");	/* valid UTF-8 passes */
	CHECK_STR(btsdec_escape_buf("\xc2\x85\xc2\xa0", buf, sizeof(buf), 0), "\\xc2\\x85\xc2\xa0");
	/* invalid: lone continuation, overlong, surrogate, past U+10FFFF, cut */
	CHECK_STR(btsdec_escape_buf("\xff\x80\xc0\xaf", buf, sizeof(buf), 0),
		  "\\xff\\x80\\xc0\\xaf");
	CHECK_STR(btsdec_escape_buf("\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", buf, sizeof(buf), 0),
		  "\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xe2\\x82");
}

static void test_cut_and_lines(void)
{
	char buf[16];

	/* "ab" + "\x1b" needs 2 + 4 + NUL: the escape is not split */
	CHECK_STR(btsdec_escape_buf("ab\x1b" "cd", buf, 7, 0), "ab\\x1b");
	CHECK_STR(btsdec_escape_buf("ab\x1b" "cd", buf, 6, 0), "ab");
	CHECK_STR(btsdec_escape_buf(NULL, buf, sizeof(buf), 0), "");
	CHECK_STR(btsdec_escape_buf("a\n\t\\\x1b", buf, 9, BTSDEC_ESC_LINES),
		  "a\n\t\\\\x1b");
}

static void test_inverse(void)
{
	const char *in = "\x1b[2J\a\n\\x41\\\xff caf\xc3\xa9";
	char *e = btsdec_escape(in, 0), out[64];
	size_t n;

	REQUIRE(e);
	CHECK(!btsdec_unescape(e, out, &n));
	CHECK(n == strlen(in) && !memcmp(out, in, n));
	CHECK_EQ(btsdec_unescape("\\q", out, &n), -EINVAL);
	CHECK_EQ(btsdec_unescape("\\x4", out, &n), -EINVAL);
	CHECK_EQ(btsdec_unescape("\\xAB", out, &n), -EINVAL);	/* we write lower case */
	CHECK_EQ(btsdec_unescape("end\\", out, &n), -EINVAL);
	free(e);
}

/* JSON: UTF-8 stays a string, anything else is the array of its bytes. */
static void test_json_lossless(void)
{
	struct json_object *o = btsdec_json_str("/tmp/caf\xc3\xa9\x1b");
	const char *t;

	REQUIRE(o);
	CHECK_STR(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
		  "\"\\/tmp\\/caf\xc3\xa9\\u001b\"");
	json_object_put(o);
	o = btsdec_json_str("a\xff");
	REQUIRE(o);
	t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	CHECK_STR(t, "[97,255]");
	json_object_put(o);
	CHECK(!btsdec_json_str(NULL));
}

static const struct test_case tests[] = {
	TEST_CASE(test_table),
	TEST_CASE(test_cut_and_lines),
	TEST_CASE(test_inverse),
	TEST_CASE(test_json_lossless),
};

int main(void)
{
	return RUN_TESTS(tests);
}
