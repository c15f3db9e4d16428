/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stub's state, shared by lib/gdbstub.c (packets, threads, registers,
 * memory, the connection) and lib/gdbxfer.c (the qXfer objects: target
 * description, auxv, exec-file, libraries-svr4, btrace) and
 * lib/gdbreplay.c (replay mode: the current point, reverse execution,
 * breakpoints and watchpoints).  Private.
 */
#ifndef BTSDEC_GDBSTUB_INT_H
#define BTSDEC_GDBSTUB_INT_H

#include "btsdec-recover.h"
#include "gdbstub.h"

/* One thread of the core as the stub serves it. */
struct stub_thread {
	const struct btsdec_thread *th;
	bool btrace_on;		/* Qbtrace:bts asked for this thread */
	bool btrace_sent;	/* its whole trace went out once */
	char *btrace;		/* its trace as btrace.dtd XML, made once */
	size_t btrace_len;
	bool regs_read;		/* prs/fp below filled (or found absent) */
	bool has_prs, has_fp, has_avx;
	uint8_t prs[512];	/* NT_PRSTATUS descriptor (struct elf_prstatus) */
	uint8_t fp[512];	/* NT_FPREGSET descriptor (user_fpregs_struct) */
	uint8_t xs[832];	/* NT_X86_XSTATE up to its AVX component */
	/* Replay mode (gdbreplay.c): */
	bool rec_tried;		/* rec below opened (or found impossible) */
	struct btsdec_recover *rec;	/* its engine; NULL: no history */
	size_t at;		/* the current point: before instruction at;
				 * btsdec_recover_nr(rec) is the core's state */
	size_t ro_from;		/* from this point on, no gap or syscall
				 * before the end: read-only mappings held
				 * what the core holds (single-threaded) */
};

/* The reply to a packet the stub cannot parse (gdbstub.c, gdbreplay.c). */
#define ERR_MALFORMED "E.malformed packet"

/* A breakpoint or watchpoint gdb inserted (Z0/Z1, Z2, Z4), replay mode. */
struct stub_point {
	uint8_t type;		/* 0, 1: break at addr; 2: write watch;
				 * 4: access watch */
	uint64_t addr, len;
};

struct btsdec_gdbstub {
	struct btsdec_core *core;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;	/* owned: the stop pc tied to the trail */
	char *exe;		/* absolute, or NULL */
	size_t nr;
	struct stub_thread *t;	/* faulting thread first */
	size_t cur;		/* Hg: the thread register and trace requests name */
	bool noack;		/* QStartNoAckMode accepted */
	bool multi;		/* multiprocess+ agreed: thread ids "pPID.TID" */
	pid_t pid;		/* the process's (NT_PRPSINFO), else the first
				 * thread's tid */
	uint64_t bts_size;	/* Qbtrace-conf:bts:size: serve the newest
				 * bts_size / 24 records; 0 = all */
	struct btsdec_rsp_buf obj;	/* a qXfer object being made */
	struct btsdec_blocks blocks;	/* the traces' blocks (its walks remembered) */
	bool replay;		/* serve reverse execution (gdbreplay.c) */
	size_t resume;		/* Hc: the thread s, c, bs and bc move */
	bool resume_any;	/* Hc-1 / Hc0: the Hg thread */
	struct stub_point *pts;
	size_t nr_pts, cap_pts;
};

/* "qXfer:OBJECT:read:ANNEX:OFF,LEN" (args after "qXfer:"): the reply. */
int stub_xfer(struct btsdec_gdbstub *s, const char *args,
	      struct btsdec_rsp_buf *reply);
/* Reads len bytes of the process's memory at addr: bytes read. */
size_t stub_read_mem(struct btsdec_gdbstub *s, uint64_t addr, void *buf,
		     size_t len);
/* The process id NT_PRPSINFO holds; 0 when the core has none. */
pid_t stub_core_pid(struct btsdec_core *core);
/* Thread t's id as the stub writes it: "pPID.TID" under multiprocess,
 * else "TID" (hex). */
void stub_put_thread_id(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *r,
			const struct stub_thread *t);
/* What qThreadExtraInfo and qXfer:threads:read say of a thread: its
 * length, the text NUL-terminated in text (size bytes). */
size_t stub_thread_text(const struct stub_thread *t, char *text, size_t size);
/* The registers of gdb's amd64-linux numbering (gdbxfer.c's target
 * description): how many (the AVX halves only when the core has them),
 * register n's size in bytes, and its value in thread t into out (16
 * bytes): its size, or -ENOENT when the core does not hold it. */
size_t stub_nr_regs(struct btsdec_gdbstub *s);
size_t stub_reg_size(size_t n);
int stub_reg(struct btsdec_gdbstub *s, struct stub_thread *t, size_t n,
	     uint8_t *out);

/* The stop reply for thread t at the end: the core's signal. */
void stub_put_stop(struct btsdec_gdbstub *s, const struct stub_thread *t,
		   struct btsdec_rsp_buf *r);

/* Replay mode (gdbreplay.c).  Whether thread t is somewhere before the
 * core's state (else the core is served as in the other mode). */
bool stub_replay_before_end(struct btsdec_gdbstub *s, struct stub_thread *t);
/* Register n of thread t at its point, as the g and p replies write it:
 * hex for each byte proven, "xx" for the others. */
void stub_replay_put_reg(struct btsdec_gdbstub *s, struct stub_thread *t,
			 size_t n, struct btsdec_rsp_buf *r);
/* Memory of thread t at its point: the bytes proven from addr on (the
 * first unproven one ends them) into buf; their count. */
size_t stub_replay_read_mem(struct btsdec_gdbstub *s, struct stub_thread *t,
			    uint64_t addr, uint8_t *buf, size_t len);
/* s, c, vCont (forward: back false) and bs, bc (back): moves thread t
 * one instruction (step) or to the next stop, its stop reply into r.
 * 0. */
int stub_replay_resume(struct btsdec_gdbstub *s, struct stub_thread *t, bool back,
		       bool step, struct btsdec_rsp_buf *r);
/* Thread t's point in replay mode as instructions before the core's
 * state (btsdump why --back counts the same way); 0 at the end. */
size_t stub_replay_back(struct btsdec_gdbstub *s, struct stub_thread *t);
/* Z and z in replay mode: args after the letter. */
int stub_replay_point(struct btsdec_gdbstub *s, bool insert, const char *a,
		      struct btsdec_rsp_buf *r);
void stub_replay_free(struct btsdec_gdbstub *s);

#endif /* BTSDEC_GDBSTUB_INT_H */
