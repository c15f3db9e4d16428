// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of btsdumpd's store library (store/): meta escaping round
 * trip and malformed input, from files and from memory buffers, store listing order and skips, zstd round trip
 * and corrupt/truncated/oversized input, the reports' bounded zstd FILE and
 * their one reader, the ACL on tmpfs (its xattr bytes, and read back
 * through libacl).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <acl/libacl.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "acl.h"
#include "entries.h"
#include "crash.h"
#include "meta.h"
#include "util.h"
#include "decompress.h"
#include "zstdio.h"
#include "test.h"

static char tmpdir[] = "/tmp/test-store-XXXXXX";

static int tmpfile_with(const char *name, const void *buf, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && len && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_meta_round_trip(void)
{
	struct btsdumpd_meta m = {}, r = {};
	char all[256], buf[4096];
	int dirfd, fd;
	ssize_t n;

	for (int i = 1; i < 256; i++)
		all[i - 1] = i;
	all[255] = 0;
	REQUIRE(btsdumpd_meta_set(&m, "ALL", all) == 0);
	REQUIRE(btsdumpd_meta_setf(&m, "PID", "%d", 42) == 0);
	REQUIRE(btsdumpd_meta_set(&m, "PID", "43") == 0);	/* replaces */
	REQUIRE(btsdumpd_meta_set(&m, "EMPTY", "") == 0);
	CHECK_EQ(m.n, 3);
	CHECK_EQ(btsdumpd_meta_set(&m, "BAD KEY", "x"), -EINVAL);
	CHECK_EQ(btsdumpd_meta_set(&m, "K=V", "x"), -EINVAL);
	CHECK_EQ(btsdumpd_meta_set(&m, "", "x"), -EINVAL);
	fd = tmpfile_with("meta", NULL, 0);
	REQUIRE(fd >= 0);
	CHECK_EQ(btsdumpd_meta_write_fd(fd, &m), 0);
	n = pread(fd, buf, sizeof(buf), 0);
	REQUIRE(n > 0);
	for (ssize_t i = 0; i < n; i++)
		CHECK(buf[i] == '\n' || ((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f));
	close(fd);
	dirfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(btsdumpd_meta_read_at(dirfd, "meta", &r), 0);
	CHECK_EQ(r.n, 3);
	CHECK_STR(btsdumpd_meta_get(&r, "ALL"), all);
	CHECK_STR(btsdumpd_meta_get(&r, "PID"), "43");
	CHECK_STR(btsdumpd_meta_get(&r, "EMPTY"), "");
	CHECK(btsdumpd_meta_get(&r, "NOPE") == NULL);
	close(dirfd);
	btsdumpd_meta_free(&m);
	btsdumpd_meta_free(&r);
}

static void test_meta_malformed(void)
{
	static const char text[] =
		"A=1\nno equals\n=empty key\nB=bad\\q\nC=x\\x0\nD=raw\x1b\n"
		"E=nul\\x00\nF=two\\x41\\n\nA=2\nG=trailing\\\nH=end";
	struct btsdumpd_meta m;
	int dirfd, fd;
	char *big;

	fd = tmpfile_with("meta", text, sizeof(text) - 1);
	REQUIRE(fd >= 0);
	close(fd);
	dirfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(btsdumpd_meta_read_at(dirfd, "meta", &m), 0);
	CHECK_STR(btsdumpd_meta_get(&m, "A"), "2");
	CHECK_STR(btsdumpd_meta_get(&m, "F"), "twoA\n");
	CHECK_STR(btsdumpd_meta_get(&m, "H"), "end");
	CHECK_EQ(m.n, 3);
	btsdumpd_meta_free(&m);

	big = malloc(1024 * 1024 + 1);
	REQUIRE(big);
	memset(big, 'a', 1024 * 1024 + 1);
	memcpy(big, "A=", 2);
	fd = tmpfile_with("meta", big, 1024 * 1024);
	close(fd);
	CHECK_EQ(btsdumpd_meta_read_at(dirfd, "meta", &m), 0);
	CHECK_EQ(strlen(btsdumpd_meta_get(&m, "A")), 1024 * 1024 - 2);
	btsdumpd_meta_free(&m);
	fd = tmpfile_with("meta", big, 1024 * 1024 + 1);
	close(fd);
	CHECK_EQ(btsdumpd_meta_read_at(dirfd, "meta", &m), -EFBIG);
	CHECK_EQ(btsdumpd_meta_read_at(dirfd, "nonexistent", &m), -ENOENT);
	free(big);
	close(dirfd);
}

/* The parser takes a buffer: no NUL needed at its end, its length rules. */
static void test_meta_parse_buffer(void)
{
	static const char text[] = "A=1\nB=x\\ty\nC=cut here";
	struct btsdumpd_meta m, back;
	size_t len;
	char *buf, *big;

	CHECK_EQ(btsdumpd_meta_parse(text, sizeof(text) - 1 - 5, &m), 0);	/* "C=cut" */
	CHECK_EQ(m.n, 3);
	CHECK_STR(btsdumpd_meta_get(&m, "B"), "x\ty");
	CHECK_STR(btsdumpd_meta_get(&m, "C"), "cut");
	REQUIRE(btsdumpd_meta_format(&m, &buf, &len) == 0);
	CHECK_EQ(len, strlen("A=1\nB=x\\ty\nC=cut\n"));
	CHECK(len == strlen("A=1\nB=x\\ty\nC=cut\n") && !memcmp(buf, "A=1\nB=x\\ty\nC=cut\n", len));
	CHECK_EQ(btsdumpd_meta_parse(buf, len, &back), 0);
	CHECK_EQ(back.n, 3);
	CHECK_STR(btsdumpd_meta_get(&back, "C"), "cut");
	free(buf);
	btsdumpd_meta_free(&back);
	btsdumpd_meta_free(&m);
	CHECK_EQ(btsdumpd_meta_parse("K=a\0b\nL=c", 9, &m), 0);	/* a NUL: line skipped */
	CHECK_EQ(m.n, 1);
	CHECK_STR(btsdumpd_meta_get(&m, "L"), "c");
	btsdumpd_meta_free(&m);
	CHECK_EQ(btsdumpd_meta_parse("", 0, &m), 0);
	CHECK_EQ(m.n, 0);
	big = calloc(1, 1024 * 1024 + 1);
	REQUIRE(big);
	CHECK_EQ(btsdumpd_meta_parse(big, 1024 * 1024 + 1, &m), -EFBIG);
	CHECK_EQ(m.n, 0);
	free(big);
}

static void make_entry(const char *name, const char *ts)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/store/%s", tmpdir, name);
	mkdir(path, 0750);
	if (!ts)
		return;
	snprintf(path, sizeof(path), "%s/store/%s/meta", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd >= 0) {
		if (*ts)
			dprintf(fd, "TIMESTAMP=%s\n", ts);
		close(fd);
	}
}

static void test_store_list(void)
{
	struct btsdumpd_entry *e = NULL;
	char store[256];
	size_t n = 0;

	snprintf(store, sizeof(store), "%s/store", tmpdir);
	REQUIRE(mkdir(store, 0755) == 0);
	make_entry("300.1.b", "300");
	make_entry("300.1.a", "300");
	make_entry("100.2.c", "100");
	make_entry(".#50.3.d", "50");		/* being written */
	make_entry("60.4.nometa", NULL);
	make_entry("now.5.mtime", "");		/* no TIMESTAMP: mtime */
	REQUIRE(btsdumpd_store_list(store, &e, &n) == 0);
	REQUIRE(n == 4);
	CHECK_STR(e[0].id, "100.2.c");
	CHECK_STR(e[1].id, "300.1.a");
	CHECK_STR(e[2].id, "300.1.b");
	CHECK_STR(e[3].id, "now.5.mtime");
	CHECK_EQ(e[0].timestamp, 100);
	CHECK(e[3].timestamp > 1000000000);
	CHECK_EQ(e[0].bytes, strlen("TIMESTAMP=100\n"));
	btsdumpd_entries_free(e, n);
	CHECK_EQ(btsdumpd_store_list("/nonexistent/store", &e, &n), -ENOENT);
}

static int decompress_buf(const void *in, size_t len, uint64_t max, size_t *out_len)
{
	int ifd = tmpfile_with("z.in", in, len), ofd = tmpfile_with("z.out", NULL, 0);
	int r = btsdumpd_zstd_decompress(ifd, ofd, max, NULL);

	*out_len = lseek(ofd, 0, SEEK_END);
	close(ifd);
	close(ofd);
	return r;
}

static void test_zstd(void)
{
	size_t len = 3 * 1024 * 1024 + 123, zlen, outlen;
	uint8_t *data = malloc(len), *z;
	uint64_t zbytes = 0, x = 88172645463325252ull;
	int ifd, zfd, full;

	REQUIRE(data);
	for (size_t i = 0; i < len; i++) {	/* half noise, half text */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = (i / 4096) % 2 ? (uint8_t)x : "abcdefgh"[i % 8];
	}
	ifd = tmpfile_with("plain", data, len);
	zfd = tmpfile_with("plain.zst", NULL, 0);
	REQUIRE(ifd >= 0 && zfd >= 0);
	CHECK_EQ(btsdumpd_zstd_compress(ifd, zfd, 3, &zbytes), 0);
	zlen = lseek(zfd, 0, SEEK_END);
	CHECK_EQ(zbytes, zlen);
	CHECK(zlen < len);
	z = malloc(zlen);
	REQUIRE(z && pread(zfd, z, zlen, 0) == (ssize_t)zlen);
	CHECK_EQ(decompress_buf(z, zlen, 0, &outlen), 0);
	CHECK_EQ(outlen, len);
	close(ifd);
	CHECK_EQ(decompress_buf(z, zlen, len, &outlen), 0);
	CHECK_EQ(decompress_buf(z, zlen, len - 1, &outlen), -EFBIG);
	CHECK_EQ(decompress_buf(z, zlen / 2, 0, &outlen), -EBADMSG);
	CHECK_EQ(decompress_buf(z, zlen - 1, 0, &outlen), -EBADMSG);
	CHECK_EQ(decompress_buf(z, 0, 0, &outlen), -EBADMSG);
	z[zlen / 2] ^= 0x55;
	CHECK_EQ(decompress_buf(z, zlen, 0, &outlen), -EBADMSG);
	full = open("/dev/full", O_WRONLY);
	if (full >= 0) {
		ifd = tmpfile_with("plain", data, len);
		CHECK_EQ(btsdumpd_zstd_compress(ifd, full, 3, NULL), -ENOSPC);
		close(ifd);
		close(full);
	}
	close(zfd);
	free(z);
	free(data);
}

static void test_zstd_content(void)
{
	static const char msg[] = "hello, store\n";
	char buf[64];
	uint64_t zb;
	int ifd = tmpfile_with("m", msg, sizeof(msg) - 1), zfd = tmpfile_with("m.zst", NULL, 0);
	int ofd;
	ssize_t n;

	REQUIRE(ifd >= 0 && zfd >= 0);
	CHECK_EQ(btsdumpd_zstd_compress(ifd, zfd, 19, &zb), 0);
	lseek(zfd, 0, SEEK_SET);
	ofd = tmpfile_with("m.out", NULL, 0);
	CHECK_EQ(btsdumpd_zstd_decompress(zfd, ofd, 0, NULL), 0);
	n = pread(ofd, buf, sizeof(buf), 0);
	CHECK_EQ(n, sizeof(msg) - 1);
	CHECK(n > 0 && !memcmp(buf, msg, n));
	close(ifd);
	close(zfd);
	close(ofd);
}

/* Reads all of f into buf (at most len - 1 bytes, NUL-terminated); the
 * byte count, or -1 when the FILE reported an error. */
static ssize_t slurp(FILE *f, char *buf, size_t len)
{
	size_t n = fread(buf, 1, len - 1, f);
	bool err = ferror(f);

	buf[n] = '\0';
	fclose(f);
	return err ? -1 : (ssize_t)n;
}

/* The reports: written through a bounded zstd FILE (bytes past the bound
 * counted, not written), a line appended as a frame of its own, read
 * back by the one reader whether compressed or plain (an older entry);
 * a frame cut short is an error, an empty file an empty report. */
static void test_report_file(void)
{
	char dir[300], buf[256];
	uint64_t total;
	int dfd, fd;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/entry", tmpdir);
	REQUIRE(!mkdir(dir, 0700) && (dfd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0);
	CHECK(btsdumpd_report_name(dfd, false) == NULL && errno == ENOENT);
	CHECK(btsdumpd_report_open(dfd, false) == NULL && errno == ENOENT);
	/* an older entry: plain report.txt */
	fd = openat(dfd, BTSDUMPD_REPORT_TXT_PLAIN, O_WRONLY | O_CREAT, 0600);
	REQUIRE(fd >= 0 && write(fd, "plain\n", 6) == 6);
	close(fd);
	CHECK_STR(btsdumpd_report_name(dfd, false), BTSDUMPD_REPORT_TXT_PLAIN);
	REQUIRE((f = btsdumpd_report_open(dfd, false)));
	CHECK_EQ(slurp(f, buf, sizeof(buf)), 6);
	CHECK_STR(buf, "plain\n");
	/* report.txt.zst wins; 10 bytes allowed, 16 wanted */
	fd = openat(dfd, BTSDUMPD_REPORT_TXT, O_RDWR | O_CREAT, 0600);
	REQUIRE(fd >= 0 && (f = btsdumpd_zstd_fopen_write(fd, 3, 10, &total)));
	fputs("0123456789", f);
	fflush(f);
	fputs("abcdef", f);
	CHECK_EQ(fclose(f), 0);
	CHECK_EQ(total, 16);
	REQUIRE((f = btsdumpd_zstd_fopen_write(fd, 3, 0, &total)));	/* a second frame */
	fputs("\nmore\n", f);
	CHECK_EQ(fclose(f), 0);
	CHECK_STR(btsdumpd_report_name(dfd, false), BTSDUMPD_REPORT_TXT);
	REQUIRE((f = btsdumpd_report_open(dfd, false)));
	CHECK_EQ(slurp(f, buf, sizeof(buf)), 16);
	CHECK_STR(buf, "0123456789\nmore\n");
	/* cut inside its last frame: an error after what could be read */
	REQUIRE(!ftruncate(fd, lseek(fd, 0, SEEK_END) - 3));
	REQUIRE((f = btsdumpd_report_open(dfd, false)));
	CHECK_EQ(slurp(f, buf, sizeof(buf)), -1);
	REQUIRE(!ftruncate(fd, 0));
	REQUIRE((f = btsdumpd_report_open(dfd, false)));
	CHECK_EQ(slurp(f, buf, sizeof(buf)), 0);
	close(fd);
	close(dfd);
}

/* The ACL of fd as getfacl prints it (numeric IDs, one entry a line), or
 * NULL; free() it. */
static char *acl_text(int fd)
{
	acl_t acl = acl_get_fd(fd);
	char *t, *out;

	if (!acl)
		return NULL;
	t = acl_to_any_text(acl, NULL, '\n', TEXT_NUMERIC_IDS);
	out = t ? strdup(t) : NULL;
	acl_free(t);
	acl_free(acl);
	return out;
}

static void test_acl(void)
{
	static const uint8_t want_file[] = {
		2, 0, 0, 0,
		0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		0x02, 0, 4, 0, 0xe8, 0x03, 0, 0,
		0x04, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	char path[] = "/dev/shm/test-store-acl-XXXXXX", dpath[64];
	uint8_t got[64];
	struct stat st;
	char *text;
	int fd, dfd, r;
	ssize_t n;

	fd = mkstemp(path);
	if (fd < 0) {
		printf("skip acl: no /dev/shm\n");
		return;
	}
	fchmod(fd, 0640);
	r = btsdumpd_acl_grant_user(fd, 1000, false);
	if (r == -EOPNOTSUPP) {
		printf("skip acl: tmpfs without ACLs\n");
		goto out;
	}
	CHECK_EQ(r, 0);
	n = fgetxattr(fd, "system.posix_acl_access", got, sizeof(got));
	CHECK_EQ(n, sizeof(want_file));
	CHECK(n == sizeof(want_file) && !memcmp(got, want_file, n));
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0640);
	text = acl_text(fd);
	CHECK_STR(text, "user::rw-\nuser:1000:r--\ngroup::---\nmask::r--\nother::---");
	free(text);
	snprintf(dpath, sizeof(dpath), "%s.d", path);
	REQUIRE(mkdir(dpath, 0750) == 0);
	dfd = open(dpath, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(btsdumpd_acl_grant_user(dfd, 1000, true), 0);
	n = fgetxattr(dfd, "system.posix_acl_access", got, sizeof(got));
	CHECK(n == sizeof(want_file) && got[6] == 7 && got[14] == 5 && got[30] == 5);
	CHECK(fstat(dfd, &st) == 0 && (st.st_mode & 0777) == 0750);
	text = acl_text(dfd);
	CHECK_STR(text, "user::rwx\nuser:1000:r-x\ngroup::---\nmask::r-x\nother::---");
	free(text);
	close(dfd);
	rmdir(dpath);
out:
	close(fd);
	unlink(path);
}

static void test_sanitize_comm(void)
{
	char out[16];

	btsdumpd_sanitize_comm("crasher", out);
	CHECK_STR(out, "crasher");
	btsdumpd_sanitize_comm("a b/c.d\x1b+-_", out);
	CHECK_STR(out, "a_b_c_d_+-_");
	btsdumpd_sanitize_comm("0123456789abcdefghij", out);
	CHECK_STR(out, "0123456789abcde");
	btsdumpd_sanitize_comm("", out);
	CHECK_STR(out, "unknown");
	btsdumpd_sanitize_comm(NULL, out);
	CHECK_STR(out, "unknown");
}

/* The hand-off's datagrams into a typed crash: known keys in, unknown ones
 * ignored, values taken by length (not up to a NUL), numbers checked,
 * malformed datagrams refused; and what the handler sends of a crash
 * comes out the same on the other side. */
static void test_handoff(void)
{
	struct btsdumpd_crash cr, back;
	struct btsdumpd_meta m = { 0 };
	static const char cmdline[] = "CMDLINE=a=b c";
	char **fields;

	btsdumpd_crash_init(&cr);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "PID=42", 6), 0);
	CHECK_STR(btsdumpd_crash_missing(&cr), "UID");
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "UID=1000xxx", 8), 0);	/* by length */
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "GID=1000", 8), 0);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "SIGNAL=11", 9), 0);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "TIMESTAMP=x", 11), 0);
	CHECK_STR(btsdumpd_crash_missing(&cr), "TIMESTAMP");		/* not a number */
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "TIMESTAMP=1700000000", 20), 0);
	CHECK(btsdumpd_crash_missing(&cr) == NULL);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "SIGNAL=2147483648", 17), 0);	/* > INT_MAX */
	CHECK_STR(btsdumpd_crash_missing(&cr), "SIGNAL");
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "SIGNAL=11", 9), 0);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, cmdline, sizeof(cmdline) - 1), 0);
	CHECK_STR(cr.cmdline, "a=b c");
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "DUMP_MODE=7", 11), 0);	/* no such mode */
	CHECK_EQ(cr.dump_mode, -1);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "DUMP_MODE=2", 11), 0);
	CHECK_EQ(cr.dump_mode, 2);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "TRACE=present", 13), 0);	/* ignored */
	CHECK_EQ(cr.an.trace, BTSDUMPD_TRACE_UNSET);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "PIDX=1", 6), 0);		/* ignored */
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "PI", 2), 0 - EBADMSG);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "PID=4\0=2", 8), 0 - EBADMSG);
	CHECK_EQ(btsdumpd_crash_handoff_field(&cr, "", 0), 0 - EBADMSG);
	CHECK_EQ(cr.uid, 1000);
	CHECK_EQ(cr.pid, 42);
	CHECK_EQ(btsdumpd_crash_to_meta(&cr, NULL, NULL, &m), 0);
	CHECK_STR(btsdumpd_meta_get(&m, "SIGNAL_NAME"), "SIGSEGV");
	CHECK_STR(btsdumpd_meta_get(&m, "DUMP_MODE"), "2");
	CHECK(btsdumpd_meta_get(&m, "TRACE") == NULL && btsdumpd_meta_get(&m, "ID") == NULL);
	btsdumpd_meta_free(&m);

	/* the handler's side: its fields, received, are the same crash */
	CHECK_EQ(btsdumpd_crash_set(&cr.exe, "/bin/x\ny"), 0);
	cr.core = BTSDUMPD_CORE_STORED;	/* not a process fact: not sent */
	CHECK_EQ(btsdumpd_crash_handoff_fields(&cr, &fields), 0);
	btsdumpd_crash_init(&back);
	for (size_t i = 0; fields[i]; i++) {
		CHECK(strncmp(fields[i], "CORE", 4) != 0);
		CHECK_EQ(btsdumpd_crash_handoff_field(&back, fields[i], strlen(fields[i])), 0);
	}
	CHECK(back.pid == 42 && back.uid == 1000 && back.gid == 1000 && back.signal == 11 &&
	      back.timestamp == 1700000000 && back.dump_mode == 2 &&
	      back.core == BTSDUMPD_CORE_UNSET);
	CHECK_STR(back.exe, "/bin/x\ny");
	CHECK_STR(back.cmdline, "a=b c");
	btsdumpd_fields_free(fields);
	btsdumpd_crash_free(&back);
	btsdumpd_crash_free(&cr);
}

/* The analysis child's result: typed findings through text and back;
 * a result without TRACE, or with a bad number, is refused. */
static void test_analysis_result(void)
{
	static const char good[] = "TRACE=present\nTRACE_THREADS=3\nFAULT_TID=77\n"
				   "LAST_BRANCHES=#1 a\\n#2 b\nFAULT=f\nOTHER=x\n";
	struct btsdumpd_analysis an;

	CHECK_EQ(btsdumpd_analysis_parse(good, sizeof(good) - 1, &an), 0);
	CHECK(an.trace == BTSDUMPD_TRACE_PRESENT && an.has_threads && an.threads == 3 &&
	      an.has_tid && an.fault_tid == 77);
	CHECK_STR(an.last_branches, "#1 a\n#2 b");
	CHECK_STR(an.fault, "f");
	CHECK(an.report_last == 0 && !an.report_cut);
	btsdumpd_analysis_free(&an);
	CHECK_EQ(btsdumpd_analysis_parse("TRACE=present\nREPORT_LAST=500\nREPORT_CUT=1\n", 43,
					 &an), 0);
	CHECK(an.report_last == 500 && an.report_cut);
	btsdumpd_analysis_free(&an);
	CHECK_EQ(btsdumpd_analysis_parse("TRACE=present\nREPORT_LAST=x\n", 28, &an), 0 - EBADMSG);
	CHECK_EQ(btsdumpd_analysis_parse("TRACE_THREADS=1\n", 16, &an), 0 - EBADMSG);
	CHECK_EQ(btsdumpd_analysis_parse("TRACE=maybe\n", 12, &an), 0 - EBADMSG);
	CHECK_EQ(btsdumpd_analysis_parse("TRACE=absent\nFAULT_TID=-1\n", 26, &an), 0 - EBADMSG);
	CHECK(an.last_branches == NULL);
}

static const struct test_case tests[] = {
	TEST_CASE(test_meta_round_trip),
	TEST_CASE(test_meta_malformed),
	TEST_CASE(test_meta_parse_buffer),
	TEST_CASE(test_store_list),
	TEST_CASE(test_zstd),
	TEST_CASE(test_zstd_content),
	TEST_CASE(test_report_file),
	TEST_CASE(test_acl),
	TEST_CASE(test_sanitize_comm),
	TEST_CASE(test_handoff),
	TEST_CASE(test_analysis_result),
};

int main(void)
{
	int r;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	r = RUN_TESTS(tests);
	if (!getenv("TEST_STORE_KEEP")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return r;
}
