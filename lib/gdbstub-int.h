/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stub's state, shared by lib/gdbstub.c (packets, threads, registers,
 * memory, the connection) and lib/gdbxfer.c (the qXfer objects: target
 * description, auxv, exec-file, libraries-svr4, btrace).  Private.
 */
#ifndef BTSDEC_GDBSTUB_INT_H
#define BTSDEC_GDBSTUB_INT_H

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

#endif /* BTSDEC_GDBSTUB_INT_H */
