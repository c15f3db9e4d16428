// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the remote-protocol wire layer (lib/rsp.c) and the
 * stub's packet table (lib/gdbstub.c) on tests/fixtures/crasher-null.core:
 * framing, escapes, checksums, overlong packets, hex parsing, replies,
 * the trace's blocks and qXfer paging; replay mode's moves, values,
 * breakpoints and watchpoints (lib/gdbreplay.c).
 */
#include <errno.h>

#include "gdbstub.h"
#include "test.h"

/* Feeds s; returns the last event and the number of packets seen. */
static enum btsdec_rsp_event feed(struct btsdec_rsp_reader *r, const char *s,
				  size_t n, int *packets)
{
	enum btsdec_rsp_event ev = BTSDEC_RSP_NONE, e;

	*packets = 0;
	for (size_t i = 0; i < n; i++) {
		e = btsdec_rsp_feed(r, (uint8_t)s[i]);
		if (e != BTSDEC_RSP_NONE)
			ev = e;
		*packets += e == BTSDEC_RSP_PACKET;
	}
	return ev;
}

static void test_framer(void)
{
	static struct btsdec_rsp_reader r;
	int n;

	btsdec_rsp_reader_init(&r);
	CHECK_EQ(feed(&r, "+$g#67", 6, &n), BTSDEC_RSP_PACKET);
	CHECK_STR(r.buf, "g");
	CHECK_EQ(feed(&r, "$g#68", 5, &n), BTSDEC_RSP_BAD);	/* wrong sum */
	CHECK_EQ(feed(&r, "$g#6z", 5, &n), BTSDEC_RSP_BAD);	/* not hex */
	/* "}]" is an escaped '}' (0x5d ^ 0x20 = 0x7d); the sum covers the raw bytes */
	CHECK_EQ(feed(&r, "$a}]b#9d", 8, &n), BTSDEC_RSP_PACKET);
	CHECK_STR(r.buf, "a}b");
	CHECK_EQ(feed(&r, "\x03", 1, &n), BTSDEC_RSP_INTERRUPT);
	CHECK_EQ(feed(&r, "-", 1, &n), BTSDEC_RSP_NACK);
	CHECK_EQ(feed(&r, "noise$?#3f", 10, &n), BTSDEC_RSP_PACKET);
	CHECK_EQ(n, 1);
}

static void test_overlong(void)
{
	static struct btsdec_rsp_reader r;
	size_t len = BTSDEC_RSP_PACKET_MAX + 10;
	char *s = malloc(len + 4);
	int n;

	REQUIRE(s);
	btsdec_rsp_reader_init(&r);
	s[0] = '$';
	memset(s + 1, 'A', len - 1);
	memcpy(s + len, "#00", 3);
	CHECK_EQ(feed(&r, s, len + 3, &n), BTSDEC_RSP_BAD);
	CHECK_EQ(n, 0);
	CHECK(r.len <= BTSDEC_RSP_PACKET_MAX);
	CHECK_EQ(feed(&r, "$g#67", 5, &n), BTSDEC_RSP_PACKET);	/* and on */
	free(s);
}

static void test_frame_and_hex(void)
{
	struct btsdec_rsp_buf b = { 0 };
	const char *p;
	uint64_t v;

	CHECK_EQ(btsdec_rsp_frame(&b, "a#b", 3), 0);
	CHECK_EQ(b.len, 8);
	CHECK(!memcmp(b.p, "$a}\x03" "b#", 6));
	p = "ffffffffffffffff,";
	CHECK_EQ(btsdec_rsp_hex_u64(&p, &v), 0);
	CHECK(v == UINT64_MAX && *p == ',');
	p = "10000000000000000";
	CHECK_EQ(btsdec_rsp_hex_u64(&p, &v), -EINVAL);
	p = ",";
	CHECK_EQ(btsdec_rsp_hex_u64(&p, &v), -EINVAL);
	btsdec_rsp_buf_free(&b);
}

static struct btsdec_core *core;
static struct btsdec_sym *sym;
static struct btsdec_gdbstub *stub;
static struct btsdec_rsp_buf reply;

static const char *ask(const char *pkt)
{
	enum btsdec_gdbstub_next next;

	if (btsdec_gdbstub_handle(stub, pkt, strlen(pkt), &reply, &next))
		return "(failed)";
	btsdec_rsp_put(&reply, "", 1);	/* NUL-terminated for the checks */
	return reply.p;
}

static void test_packets(void)
{
	CHECK_STR(ask("?"), "T0bthread:5304;");
	CHECK_STR(ask("qfThreadInfo"), "m5304");
	CHECK_STR(ask("Hg5304"), "OK");
	CHECK_CONTAINS(ask("Hg1"), "E.");
	CHECK_STR(ask("p10"), "0000000000000000");	/* rip: the call through NULL */
	CHECK_STR(ask("m0,4"), "E01");
	CHECK_STR(ask("Z0,1000,1"), "OK");
	CHECK_STR(ask("Z2,1000,1"), "");
	CHECK_CONTAINS(ask("c"), "E.");
	CHECK_CONTAINS(ask("M1000,1:00"), "E.");
	CHECK_STR(ask("vFile:open:"), "");
	CHECK_CONTAINS(ask("qXfer:features:read:target.xml:0,40000"), "fs_base");
	/* monitor bts-where outside replay mode: back 0; others: the list */
	CHECK_STR(ask("qRcmd,6274732d7768657265"),
		  "746872656164203231323532206261636b20300a");
	CHECK_STR(ask("qRcmd,666f6f"),
		  "6d6f6e69746f7220636f6d6d616e64733a206274732d77686572650a");
	CHECK_CONTAINS(ask("qRcmd,6"), "E.");
	CHECK_CONTAINS(ask("qRcmd,zz"), "E.");
	CHECK_CONTAINS(ask("qRcmd,6161616161616161616161616161616161616161616161616161616161616161"
			   "6161"), "E.");
}

static void test_btrace(void)
{
	const char *x;

	/* no recording until gdb asks: a configuration without bts */
	CHECK_STR(ask("qXfer:btrace-conf:read::0,1000"),
		  "l<btrace-conf version=\"1.0\"></btrace-conf>");
	CHECK_CONTAINS(ask("qXfer:btrace:read:all:0,1000"), "E.");
	CHECK_STR(ask("Qbtrace-conf:bts:size=0x30"), "OK");	/* 2 records */
	CHECK_STR(ask("Qbtrace:bts"), "OK");
	CHECK_CONTAINS(ask("qXfer:btrace:read:delta:0,1000"), "E.");
	x = ask("qXfer:btrace:read:new:0,1000");
	/* the newest block ends at the stop pc (0), the one before at the
	 * indirect call; the older records do not fit */
	CHECK_CONTAINS(x, "<block begin=\"0x0\" end=\"0x0\"/>\n"
		       "<block begin=\"0x5558571751d9\" end=\"0x55585717520c\"/>\n</btrace>");
	CHECK(!strstr(x, "0x555857175254"));
	CHECK_STR(ask("qXfer:btrace:read:new:0,1000"),
		  "l<btrace version=\"1.0\">\n</btrace>\n");
	/* paging: 16 bytes at a time, 'm' until the last piece */
	CHECK_STR(ask("qXfer:btrace:read:all:0,10"), "m<!DOCTYPE btrace");
	CHECK_STR(ask("qXfer:btrace:read:all:10000,10"), "l");
	CHECK_STR(ask("Qbtrace:off"), "OK");
}

/* Replay mode (lib/gdbreplay.c) on the same core: the engine's 139
 * instructions, the last the call through NULL at dispatch+51.  Each
 * packet in order, its reply (a prefix, for errors). */
static const struct {
	const char *pkt, *reply;
} replay_session[] = {
	{ "vCont?", "vCont;c;C;s;S" },
	{ "?", "T0bthread:5304;" },
	{ "bs", "T05thread:5304;" },
	/* monitor bts-where: "thread 21252 back 1\n" */
	{ "qRcmd,6274732d7768657265", "746872656164203231323532206261636b20310a" },
	{ "p10", "0c52175758550000" },		/* rip: call *%rdx */
	{ "p3", "0000000000000000" },		/* rdx: the NULL */
	{ "p12", "xxxxxxxx" },			/* cs: not followed */
	{ "m0,4", "E01" },
	{ "m7ffcbc4ff838,8", "0000000000000000" },	/* h */
	{ "s", "T0bthread:5304;" },		/* the end: the core's signal */
	{ "qRcmd,6274732d7768657265", "746872656164203231323532206261636b20300a" },
	{ "p10", "0000000000000000" },
	{ "Z3,7ffcbc4ff838,8", "" },		/* reads alone: not served */
	{ "Z0,5558571751e4,1", "OK" },		/* dispatch, line 30 */
	{ "bc", "T05thread:5304;" },
	{ "p10", "e451175758550000" },
	{ "z0,5558571751e4,1", "OK" },
	{ "vCont;c", "T0bthread:5304;" },
	{ "Z2,7ffcbc4ff838,8", "OK" },		/* h's slot */
	{ "bc", "T05watch:7ffcbc4ff838;thread:5304;" },
	{ "p10", "ff51175758550000" },		/* the store to h */
	{ "vCont;s:5304", "T05watch:7ffcbc4ff838;thread:5304;" },
	{ "z2,7ffcbc4ff838,8", "OK" },
	{ "Z4,7ffcbc4ff838,8", "OK" },		/* read or written */
	{ "bs", "T05awatch:7ffcbc4ff838;thread:5304;" },	/* the store */
	{ "z4,7ffcbc4ff838,8", "OK" },
	{ "bc", "T05replaylog:begin;thread:5304;" },
	{ "bs", "T05replaylog:begin;thread:5304;" },
	{ "vCont;x", "E." },
	{ "Z2,1000,0", "E." },
	{ "c", "T0bthread:5304;" },
};

static void test_replay(void)
{
	struct btsdec_gdbstub *plain = stub;
	struct btsdec_err err;

	if (btsdec_gdbstub_new(core, sym, NULL, &stub, &err)) {
		CHECK(!"a replay stub");
		stub = plain;
		return;
	}
	btsdec_gdbstub_set_replay(stub);
	CHECK_CONTAINS(ask("qSupported:multiprocess-"), "ReverseStep+;ReverseContinue+");
	CHECK(!strstr(reply.p, "Qbtrace"));
	for (size_t i = 0; i < sizeof(replay_session) / sizeof(replay_session[0]); i++) {
		const char *want = replay_session[i].reply;

		if (!strncmp(want, "E.", 2))
			CHECK_CONTAINS(ask(replay_session[i].pkt), want);
		else
			CHECK_STR(ask(replay_session[i].pkt), want);
	}
	btsdec_gdbstub_free(stub);
	stub = plain;
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_framer), TEST_CASE(test_overlong),
		TEST_CASE(test_frame_and_hex), TEST_CASE(test_packets),
		TEST_CASE(test_btrace), TEST_CASE(test_replay),
	};
	struct btsdec_symopts so = { .executable = SOURCE_ROOT "/tests/fixtures/crasher" };
	struct btsdec_err err;
	int ret;

	if (btsdec_core_open(SOURCE_ROOT "/tests/fixtures/crasher-null.core", &core, &err) ||
	    btsdec_sym_open_core(core, &so, &sym, &err) ||
	    btsdec_gdbstub_new(core, sym, so.executable, &stub, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	ret = RUN_TESTS(cases);
	btsdec_rsp_buf_free(&reply);
	btsdec_gdbstub_free(stub);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
	return ret;
}
