/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A gdb remote-protocol stub that serves an ELF core as a stopped process
 * with a recorded branch trace (lib/gdbstub.c): registers, memory, threads,
 * auxv, the shared libraries, and each thread's trace note as gdb's BTS
 * blocks (qXfer:btrace:read), so gdb's own `record` and reverse-execution
 * commands work on the core; or, in replay mode, reverse execution itself
 * with recovered values (lib/gdbreplay.c).  Used by `btsdump gdbserver` and the packet
 * fuzzer; process context, one connection per stub.
 */
#ifndef BTSDEC_GDBSTUB_H
#define BTSDEC_GDBSTUB_H

#include "btsdec.h"
#include "rsp.h"

struct btsdec_gdbstub;

/* A stub over core, reading memory through sym (the core's segments, then
 * the mapped files libdwfl matched by build-id).  Both must outlive it.
 * executable: the program's path for qXfer:exec-file:read (may be NULL:
 * the core's NT_FILE entry holding AT_ENTRY).  0 or -ENOMEM. */
int btsdec_gdbstub_new(struct btsdec_core *core, struct btsdec_sym *sym,
		       const char *executable, struct btsdec_gdbstub **out,
		       struct btsdec_err *err);
void btsdec_gdbstub_free(struct btsdec_gdbstub *s);
/* Replay mode (lib/gdbreplay.c): instead of a branch trace for gdb's
 * btrace, reverse execution served natively (ReverseStep+,
 * ReverseContinue+: bs, bc, s, c, vCont along each thread's recovered
 * instructions), with the registers and memory value recovery proves at
 * the current point.  Call before serving. */
void btsdec_gdbstub_set_replay(struct btsdec_gdbstub *s);

/* What a packet asks of the connection. */
enum btsdec_gdbstub_next {
	BTSDEC_GDBSTUB_REPLY,	/* send the reply and go on */
	BTSDEC_GDBSTUB_LAST,	/* send the reply, then end (D, vKill) */
	BTSDEC_GDBSTUB_QUIT,	/* end without a reply (k) */
};

/* Answers one packet's payload (unescaped, len bytes) into reply, which
 * is reset first: an empty reply for what is not implemented, "E..." for
 * what is refused or malformed.  Never fails on input; -ENOMEM only when
 * the reply cannot be built. */
int btsdec_gdbstub_handle(struct btsdec_gdbstub *s, const char *pkt,
			  size_t len, struct btsdec_rsp_buf *reply,
			  enum btsdec_gdbstub_next *next);

/* Serves one connection: packets from in_fd, replies to out_fd, until
 * the peer detaches, kills or closes.  0, or a negative errno for an I/O
 * error (err says which). */
int btsdec_gdbstub_serve(struct btsdec_gdbstub *s, int in_fd, int out_fd,
			 struct btsdec_err *err);

#endif /* BTSDEC_GDBSTUB_H */
