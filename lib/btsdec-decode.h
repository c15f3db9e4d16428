/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, decoding and histories: the part of the decoder library's
 * interface that decode.c implements.  Included through btsdec.h, the
 * library's one public header, which includes every module's.  Process
 * context; errors as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_DECODE_API_H
#define BTSDEC_DECODE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"
#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"

/* One branch as the renderers see it, made on demand from the decoded
 * trace (btsdec_decoded_branch): the symbol strings point into the
 * symbolizer. */
struct btsdec_branch {
	struct btsdec_record rec;
	enum btsdec_kind kind;
	bool indirect;
	bool smashed;		/* a return that smashed the stack (ret_smashed()
				 * in decode.c, docs/json.md `smashed_stack`) */
	bool inferred;		/* not recorded: the branch to the fault's pc that
				 * the core proves (infer.c, docs/json.md) */
	int depth;		/* call depth after normalization, >= 0 */
	struct btsdec_loc from_loc;
	struct btsdec_loc to_loc;
};

/* One function segment of a call/return history, like gdb's
 * `record function-call-history`. */
struct btsdec_segment {
	const char *func;	/* NULL = unknown (shown as the address) */
	uint64_t addr;		/* first address executed in the segment */
	int depth;
	size_t first, last;	/* indexes of the first and last branch taken
				 * from the segment; BTSDEC_SEG_NONE for
				 * the segment the trace ends in */
	const char *file;	/* NULL = no line known */
	int line_lo, line_hi;	/* 0 when file is NULL */
};
#define BTSDEC_SEG_NONE	SIZE_MAX

/* A decoded trace, compact (issue 16): the trace (borrowed: it must
 * outlive this; its records held or streamed from the core), one byte of
 * kind and marks per record and a call depth every 64 records; symbols stay
 * in the symbolizer (one entry per distinct address), which must outlive it
 * too.  About one byte per record of its own. */
struct btsdec_decoded {
	size_t nr;
	const struct btsdec_trace *t;	/* borrowed: the records, oldest first */
	uint8_t *info;		/* per record: kind, 0x80 = indirect,
				 * 0x40 = smashed stack */
	int32_t *depth_at;	/* normalized depth before records 0, 64, 128, ... */
	size_t nr_seg;		/* segments of the call history */
	struct btsdec_sym *sym;	/* borrowed; NULL = addresses only */
	bool symbols;		/* false: classified, not symbolized */
};

/* Classifies and symbolizes every record of a trace and builds its call
 * history.  sym may be NULL (addresses only). */
int btsdec_decode(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		  const struct btsdec_trace *t, struct btsdec_decoded *out,
		  struct btsdec_err *err);
/* The same; with symbols false, branches are classified (sym still reads
 * the code) but carry no symbols or lines, and segments split only at
 * calls and returns. */
int btsdec_decode_symbols(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			  const struct btsdec_trace *t, bool symbols,
			  struct btsdec_decoded *out, struct btsdec_err *err);
void btsdec_decoded_free(struct btsdec_decoded *d);
/* Branch i (< d->nr) with its kind, depth and locations. */
void btsdec_decoded_branch(const struct btsdec_decoded *d, size_t i,
			   struct btsdec_branch *b);
/* Calls fn for every segment numbered first (0-based) and later, in order;
 * stops at fn's first nonzero return and returns it, else 0.  The segment
 * is valid during the call only. */
typedef int (*btsdec_segment_fn)(void *arg, size_t i, const struct btsdec_segment *s);
int btsdec_decoded_segments(const struct btsdec_decoded *d, size_t first,
			    btsdec_segment_fn fn, void *arg);

/* How the faulting thread's pc relates to the newest branch of its trail. */
enum btsdec_fault_rel {
	BTSDEC_FAULT_NO_TRAIL,	/* the trace holds no branch (or no trace) */
	BTSDEC_FAULT_TARGET,	/* pc is the newest branch's `to` (or the
				 * inferred branch's, btsdec_fault.inferred) */
	BTSDEC_FAULT_RUN,	/* pc lies in the straight-line code after `to`:
				 * no call, jump or return between them */
	BTSDEC_FAULT_UNRELATED,	/* the code after `to` branches away before pc,
				 * or pc lies before `to` or too far after it */
	BTSDEC_FAULT_UNKNOWN,	/* the code after `to` cannot be read */
	BTSDEC_FAULT__MAX,
};

/* "target", "run", "unrelated", "unknown", "no_trail" (docs/json.md). */
const char *btsdec_fault_rel_name(enum btsdec_fault_rel r);

/* The fault of a thread (NT_PRSTATUS, NT_SIGINFO) tied to its trail. */
struct btsdec_fault {
	uint64_t pc;		/* rip */
	struct btsdec_loc loc;	/* pc symbolized (empty without symbols) */
	int signo;		/* pr_cursig */
	bool has_siginfo;
	int si_code;
	bool has_addr;		/* addr is si_addr (btsdec_thread.has_addr) */
	uint64_t addr;
	enum btsdec_fault_rel rel;
	size_t branch;		/* index of the newest branch (not NO_TRAIL) */
	uint64_t run;		/* RUN: bytes from that branch's `to` to pc */
	bool inferred;		/* the trail lacks the branch to pc, which the
				 * core proves: `infer`, numbered `branch`, one
				 * past the trail (btsdec_fault_infer) */
	struct btsdec_branch infer;
};

/* How pc relates to a branch target `to`: TARGET (equal), RUN (straight
 * code from `to` reaches pc), UNRELATED or UNKNOWN, as for a fault; the
 * code is read through sym and classified by cls (either NULL: UNKNOWN
 * unless equal). */
enum btsdec_fault_rel btsdec_run_relate(struct btsdec_sym *sym,
					struct btsdec_classifier *cls,
					uint64_t to, uint64_t pc);
/* The first syscall (syscall, sysenter, int n) on the straight code from
 * `to`, before any instruction that leaves it (call, jump, return) and
 * within 64 KiB: where the kernel may have moved the thread elsewhere (a
 * signal handler, sigreturn).  0 when there is none or the code cannot be
 * read. */
uint64_t btsdec_run_syscall(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			    uint64_t to);
/* The first instruction on the straight code from `to` that leaves it (a
 * call, jump or return), within 64 KiB; *kind its kind.  0 when there is
 * none or the code cannot be read. */
uint64_t btsdec_run_exit(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 uint64_t to, enum btsdec_kind *kind);
/* Relates f->pc to the newest branch of d: fills rel, branch and run.
 * Reads the code after the branch's `to` through sym (may be NULL:
 * only TARGET or UNKNOWN then). */
void btsdec_fault_relate(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 const struct btsdec_decoded *d, struct btsdec_fault *f);

/* A thread's trace as gdb's BTS blocks (lib/blocks.c): the one model of
 * its instruction sequence, served to gdb by the stub and walked by the
 * value-recovery engine.  Straight runs already walked are remembered
 * (a ring repeats its loops). */
struct btsdec_run {
	uint64_t to, from;	/* from 0: an empty slot */
	bool straight;
};

struct btsdec_blocks {
	struct btsdec_sym *sym;		/* borrowed: reads the code */
	struct btsdec_classifier *cls;	/* borrowed */
	struct btsdec_run *runs;	/* open addressing, a power of two long */
	size_t runs_cap, runs_nr;
};

void btsdec_blocks_init(struct btsdec_blocks *b, struct btsdec_sym *sym,
			struct btsdec_classifier *cls);
void btsdec_blocks_fini(struct btsdec_blocks *b);
/* Called with each block, newest first: the instructions from begin to end
 * (both executed, but the newest block's end is the thread's pc, not yet
 * executed); end 0 (begin 1 when unknown) is a gap: code not known ran. */
typedef void (*btsdec_block_fn)(void *arg, uint64_t begin, uint64_t end);
/* Walks th's trace (its newest `keep` records; SIZE_MAX = all) into blocks. */
void btsdec_blocks_walk(struct btsdec_blocks *b, const struct btsdec_thread *th,
			size_t keep, btsdec_block_fn fn, void *arg);

#endif /* BTSDEC_DECODE_API_H */
