// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the remote-protocol stub (lib/rsp.c, lib/gdbstub.c,
 * lib/gdbxfer.c, lib/gdbreplay.c): the input is a byte stream from gdb,
 * framed one byte at a time; every packet it completes is answered by a
 * stub serving tests/fixtures/crasher-null.core (opened once), in the
 * btrace mode and then in replay mode (bs, bc, Z2 and the values served
 * along the recovered trace).  A reply must be built (no crash, no leak)
 * and framed; the framer must never overrun.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdbstub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct btsdec_core *core;
static struct btsdec_sym *sym;

static void open_fixture(void)
{
	struct btsdec_symopts so = { .executable = SOURCE_ROOT "/tests/fixtures/crasher" };
	struct btsdec_err err;

	if (btsdec_core_open(SOURCE_ROOT "/tests/fixtures/crasher-null.core", &core, &err) ||
	    btsdec_sym_open_core(core, &so, &sym, &err)) {
		fprintf(stderr, "fuzz-rsp: %s\n", err.msg);
		abort();
	}
}

static void serve_input(const uint8_t *data, size_t size, bool replay)
{
	static struct btsdec_rsp_reader rd;
	struct btsdec_rsp_buf reply = { 0 }, framed = { 0 };
	enum btsdec_gdbstub_next next;
	struct btsdec_gdbstub *s;
	struct btsdec_err err;

	if (btsdec_gdbstub_new(core, sym, NULL, &s, &err))
		abort();
	if (replay)
		btsdec_gdbstub_set_replay(s);
	btsdec_rsp_reader_init(&rd);
	for (size_t i = 0; i < size; i++) {
		if (btsdec_rsp_feed(&rd, data[i]) != BTSDEC_RSP_PACKET)
			continue;
		if (rd.len > BTSDEC_RSP_PACKET_MAX || rd.buf[rd.len])
			__builtin_trap();
		if (btsdec_gdbstub_handle(s, rd.buf, rd.len, &reply, &next) ||
		    btsdec_rsp_frame(&framed, reply.p, reply.len))
			__builtin_trap();
	}
	btsdec_rsp_buf_free(&reply);
	btsdec_rsp_buf_free(&framed);
	btsdec_gdbstub_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!core)
		open_fixture();
	serve_input(data, size, false);
	serve_input(data, size, true);
	return 0;
}
