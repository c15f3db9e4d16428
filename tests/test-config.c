// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of btsdumpd's configuration (daemon/config.c): the parser on
 * memory buffers (sections, comments, values in and out of range, long
 * lines, a NUL, no final newline), and the file loader with its drop-ins
 * and size limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "test.h"

static int warnings;
static char last_warning[256];

static void count_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	va_end(ap);
	warnings++;
}

static void parse(struct btsdumpd_config *c, const char *text, size_t len)
{
	btsdumpd_config_defaults(c);
	warnings = 0;
	btsdumpd_config_parse(c, "t.conf", text, len, count_warn);
}

static void test_parse(void)
{
	static const char text[] =
		"# comment\n; also\n[Other]\nCompress=no\n[Store]\n"
		"  Compress = no  \nRateLimitBurst=5\nJournalBranches=999\n"
		"Unknown=1\nnot a pair\nAnalyzeUser=bts-analyze\nMaxUse=20%\n"
		"KeepFree=1G\nReportSizeMax=256K\nAnalyzeTimeoutSec=7";	/* no final newline */
	struct btsdumpd_config c;

	btsdumpd_config_defaults(&c);
	CHECK_EQ(c.report_size_max.bytes, 32ULL << 20);
	parse(&c, text, sizeof(text) - 1);
	CHECK_EQ(c.report_size_max.bytes, 256ULL << 10);
	CHECK(!c.compress);
	CHECK_EQ(c.rate_limit_burst, 5);
	CHECK_EQ(c.journal_branches, 16);		/* out of range: default */
	CHECK_STR(c.analyze_user, "bts-analyze");
	CHECK_EQ(c.max_use.percent, 20);
	CHECK_EQ(c.keep_free.bytes, 1ULL << 30);
	CHECK_EQ(c.keep_free.percent, 0);
	CHECK_EQ(c.analyze_timeout_sec, 7);
	CHECK_EQ(warnings, 4);	/* [Other], JournalBranches, Unknown, not a pair */

	parse(&c, text, sizeof(text) - 2);		/* the buffer's length rules */
	CHECK_EQ(c.analyze_timeout_sec, 60);		/* "...Sec=": bad value */
	CHECK_CONTAINS(last_warning, "t.conf:15: bad value for AnalyzeTimeoutSec");
}

static void test_parse_edges(void)
{
	char text[2200];
	struct btsdumpd_config c;
	int n;

	/* a 1022-byte line is read, a 1023-byte one is not */
	n = snprintf(text, sizeof(text), "[Store]\nAnalyzeUser=%01010d\n", 0);
	REQUIRE(n == 8 + 1022 + 1);
	parse(&c, text, n);
	CHECK_EQ(warnings, 1);				/* read: too long a name */
	CHECK_CONTAINS(last_warning, "t.conf:2: bad value for AnalyzeUser");
	CHECK_STR(c.analyze_user, "nobody");
	n = snprintf(text, sizeof(text), "[Store]\nRateLimitBurst=3%01007d\nCompress=no\n", 0);
	REQUIRE(n == 8 + 1023 + 1 + 12);
	parse(&c, text, n);
	CHECK_EQ(warnings, 1);
	CHECK_CONTAINS(last_warning, "t.conf:2: line too long");
	CHECK(!c.compress);			/* the next line still counts */
	CHECK_EQ(c.rate_limit_burst, 20);
	parse(&c, "[Store]\nCompress=no\0yes\nRateLimitBurst=4", 40);	/* NUL ends a line */
	CHECK(!c.compress);
	CHECK_EQ(c.rate_limit_burst, 4);
	parse(&c, "", 0);
	CHECK_EQ(warnings, 0);
	CHECK(c.compress);
}

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (write(fd, text, len) != (ssize_t)len)
			perror(path);
		close(fd);
	}
}

static void test_load(void)
{
	char dir[] = "/tmp/test-config-XXXXXX", path[128], dropin[160];
	struct btsdumpd_config c;
	char *big;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/btsdumpd.conf", dir);
	btsdumpd_config_defaults(&c);
	CHECK_EQ(btsdumpd_config_load(&c, path, count_warn), 0);	/* none: defaults */
	CHECK_EQ(c.rate_limit_burst, 20);
	write_file(path, "[Store]\nRateLimitBurst=7\nCompress=no\n", 37);
	snprintf(dropin, sizeof(dropin), "%s.d", path);
	REQUIRE(mkdir(dropin, 0700) == 0);
	snprintf(dropin, sizeof(dropin), "%s.d/10-a.conf", path);
	write_file(dropin, "[Store]\nRateLimitBurst=8\n", 25);
	btsdumpd_config_defaults(&c);
	CHECK_EQ(btsdumpd_config_load(&c, path, count_warn), 0);
	CHECK_EQ(c.rate_limit_burst, 8);			/* the drop-in wins */
	CHECK(!c.compress);
	big = malloc(64 * 1024 + 1);
	REQUIRE(big);
	memset(big, '#', 64 * 1024 + 1);
	write_file(dropin, big, 64 * 1024 + 1);		/* over the limit: ignored */
	btsdumpd_config_defaults(&c);
	CHECK_EQ(btsdumpd_config_load(&c, path, count_warn), -EFBIG);
	CHECK_EQ(c.rate_limit_burst, 7);
	write_file(dropin, big, 64 * 1024);		/* at the limit: read */
	CHECK_EQ(btsdumpd_config_load(&c, path, count_warn), 0);
	free(big);
	unlink(dropin);
	snprintf(dropin, sizeof(dropin), "%s.d", path);
	rmdir(dropin);
	unlink(path);
	rmdir(dir);
}

static const struct test_case tests[] = {
	TEST_CASE(test_parse),
	TEST_CASE(test_parse_edges),
	TEST_CASE(test_load),
};

int main(void)
{
	return RUN_TESTS(tests);
}
