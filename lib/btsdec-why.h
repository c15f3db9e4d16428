/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, where a value came from (issue 40, part 3): for a register or
 * memory at an instruction of the value-recovery engine's sequence
 * (btsdec-recover.h), the instruction that last defined it and the
 * operands that instruction read, with their recovered values, followed
 * back as a chain.  lib/why.c builds the chain once (lib/why-expr.c places
 * a C expression); `btsdump why` (text, --json) and gdb's `bts why`
 * render it.  Process context.
 *
 * Nothing is stored per instruction for it: the defining instruction is
 * found on demand from what the engine already holds (the bits each
 * instruction may write, the index of memory accesses at known addresses
 * and of the writes that may alias), so the engine's memory per
 * instruction (btsdec-recover.h) is unchanged.  Values are the engine's:
 * unknown bits stay unknown.
 */
#ifndef BTSDEC_WHY_API_H
#define BTSDEC_WHY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btsdec-recover.h"

/* A value asked about: a register's bits, or up to 8 bytes of memory. */
enum btsdec_why_kind { BTSDEC_WHY_REG, BTSDEC_WHY_MEM, BTSDEC_WHY_IMM };
struct btsdec_why_value {
	uint8_t kind;		/* enum btsdec_why_kind */
	uint8_t size;		/* bytes (1, 2, 4, 8) */
	uint8_t reg, shift;	/* REG: enum btsdec_reg and the bit its bits
				 * start at (ah: 8) */
	bool addr_known;	/* MEM: whether addr is proven */
	uint64_t addr;		/* MEM */
	uint64_t val, known;	/* the value (IMM: its bits, all known) */
};

/* Where a value came from. */
enum btsdec_why_from {
	BTSDEC_WHY_INSN,	/* instruction insn wrote it */
	BTSDEC_WHY_BEFORE,	/* no instruction of the trace wrote it: held
				 * since before the trace began (a register),
				 * or a slot the trace never wrote (memory:
				 * what the core holds) */
	BTSDEC_WHY_SYSCALL,	/* the kernel, at syscall insn */
	BTSDEC_WHY_GAP,		/* code the trace does not show (entry insn) */
	BTSDEC_WHY_ALIAS,	/* insn stored at an address not known, wrote
				 * memory the engine does not bound, or is not
				 * modelled: it may have written it */
	BTSDEC_WHY_NOT_FOLLOWED,	/* memory outside what the engine
					 * follows (another thread's) */
};

#define BTSDEC_WHY_MAX_OPS 4

/* One link of a chain: value `what` before instruction `at` (at == nr:
 * the final state), where it came from, and the operands the defining
 * instruction read (sources: those the value was computed from, their
 * own links follow when the chain goes deep enough). */
struct btsdec_why_step {
	size_t parent;		/* the step whose operand this explains;
				 * SIZE_MAX for the first */
	unsigned depth;		/* 0 for the first */
	size_t at;
	struct btsdec_why_value what;
	enum btsdec_why_from from;
	size_t insn;		/* the instruction (all but BEFORE,
				 * NOT_FOLLOWED) */
	uint64_t pc;		/* its address (0 for a gap) */
	bool maybe;		/* a register: insn may not have written it (a
				 * cmovcc whose condition is not known, an
				 * instruction not modelled): an older writer
				 * may have made the value */
	bool partial;		/* memory: insn wrote only some of its bytes
				 * (the newest writer of any of them) */
	char text[192];		/* its disassembly ("" for a gap) */
	unsigned nr_ops;
	struct btsdec_why_value ops[BTSDEC_WHY_MAX_OPS];	/* before insn */
	bool source[BTSDEC_WHY_MAX_OPS];	/* the value came from it */
};

struct btsdec_why {
	size_t nr;
	struct btsdec_why_step *steps;	/* newest first: breadth-first from
					 * the value asked about */
	size_t nr_insns;		/* the engine's sequence */
	bool truncated;			/* max_steps reached */
};

/* Parses a register ("rdx", "$edx", "ah", "rip", "eflags") or memory
 * ("*ADDR": 8 bytes, "*ADDR,SIZE" or "ADDR,SIZE", SIZE 1, 2, 4 or 8) into
 * v (kind, size, reg/shift or addr).  0, or -EINVAL. */
int btsdec_why_parse(const char *s, struct btsdec_why_value *v);
struct btsdec_sym;
/* A C expression (lib/why-expr.c, libdw): a variable (a local or
 * parameter of the function running at instruction at, or a global of its
 * compilation unit, else the only one of that name in any module; at the
 * final state whose pc is in no such function,
 * a call through NULL, the last instruction run) then .FIELD, ->FIELD and
 * [N], into v: memory (its address, 1 to 8 bytes) or a register (DWARF
 * says the variable lives there), with the registers and memory the
 * engine proves there (a pointer or frame base it cannot prove: no
 * guess).  *point: the instruction the chain should start at (at, or for
 * a register the point whose pc placed it).  0; -ENOENT no such variable
 * or no DWARF there; -EINVAL syntax, a location or type not followed;
 * -ENODATA a value it needs is unknown; the reason in err. */
int btsdec_why_eval(const struct btsdec_recover *r, struct btsdec_sym *sym, const char *expr,
		    size_t at, struct btsdec_why_value *v, size_t *point,
		    struct btsdec_err *err);
/* gdb's name of register operand v ("rdx", "edx", "dh"). */
const char *btsdec_why_reg_name(const struct btsdec_why_value *v);

/* The chain of value `what` (its kind, size, reg/shift or addr) before
 * instruction at (at == btsdec_recover_nr(r): the final state): at most
 * max_depth links deep and max_steps links in all.  0, -ERANGE (at
 * beyond the sequence, or the engine not run), -ENOMEM. */
int btsdec_why_explain(const struct btsdec_recover *r, const struct btsdec_why_value *what,
		       size_t at, unsigned max_depth, size_t max_steps,
		       struct btsdec_why *out);
void btsdec_why_fini(struct btsdec_why *w);

/* The one link alone: where the value came from and the defining
 * instruction's operands (step->parent, depth 0).  0 or -ERANGE. */
int btsdec_why_step(const struct btsdec_recover *r, const struct btsdec_why_value *what,
		    size_t at, struct btsdec_why_step *step);

#endif /* BTSDEC_WHY_API_H */
