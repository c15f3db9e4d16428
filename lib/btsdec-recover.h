/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, value recovery (issue 40): the registers and memory of a thread
 * at each instruction of its trace, recovered from the core's final state
 * by inverting instructions backward and emulating them forward to a fixed
 * point (REPT, OSDI 2018; our own).  recover.c, recover-insn.c implement
 * it; renderers and the gdb stub read it.  Process context.
 *
 * A value is reported only when proven: unknown is allowed, wrong never
 * is.  Modelled (outputs computed forward; where marked *, also inverted
 * backward), on 8/16/32/64-bit general-purpose operands:
 *   mov* (register, immediate, load, store), movabs, movzx*, movsx*,
 *   movsxd*, lea*, add*, sub*, xor*, and*, or*, inc*, dec*, neg*, not*,
 *   cmp, test, adc, sbb (with a known carry), shl*, shr*, sar* (a known
 *   count), imul (two and three operands), cdqe*, cdq, cqo, xchg*
 *   (registers), push*, pop*, call*, ret*, leave*, jmp (through a register:
 *   it held the target*), jcc (its outcome, known from the trace, proves
 *   the flag it tests alone: OF, CF, ZF, SF or PF), cmovcc* and setcc*
 *   (when the flags they test are known), stos* and movs* (rep or not:
 *   rdi, rsi and rcx, and the memory they write, up to 4 KiB, when the
 *   direction flag is known clear and rcx known; stos's values), nop,
 *   endbr64, pause, syscall (rax, rcx, r11 and rflags unknown after it;
 *   memory too, but for the calls known to write none, and
 *   rt_sigprocmask's old set alone).
 * A load proves the memory it read where its result is known (pop, ret,
 * leave and indirect calls and jumps too: the trace gives their target);
 * add, sub, xor, inc, dec, neg and not on memory are inverted to what it
 * held.
 * The arithmetic flags (CF PF AF ZF SF OF) are computed as the SDM defines
 * them; a flag it calls undefined is unknown; RF is set by the CPU, not by
 * instructions, so it is known only in the final state.  Every other
 * instruction makes all it may write unknown: the registers capstone says
 * it writes (and those it may leave out: mul, div, cpuid, rdtsc, ...),
 * all its register operands, the arithmetic flags, and the memory of its
 * memory operands (read or not: capstone 4 mislabels some stores).  Other
 * string and rep instructions, xsave, enter, cmpxchg8b, pushf and the like
 * make all registers and all memory unknown; a store through an address not
 * known (or fs:/gs:) all memory; so does a gap in the trace, and all
 * registers.
 * Memory is assumed written only by the thread's own instructions and by
 * the kernel at its syscalls and gaps (not modelled: the kernel's rseq
 * cpu_id updates after a migration); with several threads in the core,
 * only the thread's stack mapping is followed (btsdec_recover_limit_mem).
 */
#ifndef BTSDEC_RECOVER_API_H
#define BTSDEC_RECOVER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"
#include "btsdec-decode.h"

/* The registers recovered, in gdb's amd64 order. */
enum btsdec_reg {
	BTSDEC_REG_RAX, BTSDEC_REG_RBX, BTSDEC_REG_RCX, BTSDEC_REG_RDX,
	BTSDEC_REG_RSI, BTSDEC_REG_RDI, BTSDEC_REG_RBP, BTSDEC_REG_RSP,
	BTSDEC_REG_R8, BTSDEC_REG_R9, BTSDEC_REG_R10, BTSDEC_REG_R11,
	BTSDEC_REG_R12, BTSDEC_REG_R13, BTSDEC_REG_R14, BTSDEC_REG_R15,
	BTSDEC_REG_RIP, BTSDEC_REG_RFLAGS,
	BTSDEC_REG__MAX,
};

/* "rax", ..., "rip", "eflags" (gdb's names). */
const char *btsdec_reg_name(enum btsdec_reg r);

/* Register values with the bits known: val is meaningful where known has
 * a 1 (a register is known when known is ~0). */
struct btsdec_regs {
	uint64_t val[BTSDEC_REG__MAX];
	uint64_t known[BTSDEC_REG__MAX];
};

/* Reads the memory the process held at the end (the core): bytes read,
 * 0 where nothing is known. */
typedef size_t (*btsdec_recover_read_fn)(void *arg, uint64_t addr, void *buf,
					 size_t len);

struct btsdec_recover;

/* An empty engine over the final state: registers (known says which; rip
 * the stop pc) and memory through read(arg, ...) (NULL: none).  Add the
 * instructions oldest first, then run. */
int btsdec_recover_new(const struct btsdec_regs *final, btsdec_recover_read_fn read,
		       void *arg, struct btsdec_recover **out,
		       struct btsdec_err *err);
/* Appends the instruction at addr, decoded from code (len bytes, at least
 * its own): its length, or -EINVAL when it does not decode (added as a
 * gap then), -ENOMEM. */
int btsdec_recover_add(struct btsdec_recover *r, uint64_t addr,
		       const uint8_t *code, size_t len);
/* Appends a gap: code the trace does not show ran here.  0 or -ENOMEM. */
int btsdec_recover_add_gap(struct btsdec_recover *r);
/* The instruction at the final pc, which faulted (code: its bytes, len at
 * least its own): a rep string instruction faults after the iterations it
 * completed, so the final state is part-way through it.  Appended then,
 * as an instruction that changed rax, rcx, rsi, rdi, the arithmetic flags
 * and any memory: 1; 0 when it did nothing before faulting (every other
 * instruction: x86 faults are precise) or cannot be decoded; -ENOMEM. */
int btsdec_recover_add_fault(struct btsdec_recover *r, uint64_t addr,
			     const uint8_t *code, size_t len);
/* Memory outside [lo, hi) is never known: in a core with several threads
 * another may have written it between any two instructions of this one,
 * so only the thread's own stack mapping is followed (btsdec_recover_open
 * does this).  Call before btsdec_recover_run. */
void btsdec_recover_limit_mem(struct btsdec_recover *r, uint64_t lo, uint64_t hi);
/* Iterates backward and forward until nothing more is learned.  0. */
int btsdec_recover_run(struct btsdec_recover *r);

/* The most instructions btsdec_recover_open follows: the newest of a
 * longer trace (about 550 bytes of memory each). */
#define BTSDEC_RECOVER_MAX_INSNS 200000

/* The engine for thread th of core (its trace's instructions as gdb's
 * BTS blocks give them, btsdec_blocks_walk(), at most the newest
 * BTSDEC_RECOVER_MAX_INSNS; code and final memory read through sym), run.
 * -ENODATA when the thread has no registers or no trace, -ENOMEM. */
int btsdec_recover_open(struct btsdec_core *core, struct btsdec_sym *sym,
			struct btsdec_classifier *cls,
			const struct btsdec_thread *th,
			struct btsdec_recover **out, struct btsdec_err *err);
void btsdec_recover_free(struct btsdec_recover *r);

/* Instructions in the sequence (gaps included), oldest first.  Adding
 * more drops the results until btsdec_recover_run runs again. */
size_t btsdec_recover_nr(const struct btsdec_recover *r);
/* The address of instruction i (< nr): 0, or -ENODATA for a gap. */
int btsdec_recover_insn(const struct btsdec_recover *r, size_t i, uint64_t *addr);
/* The registers before instruction i ran (i == nr: the final state).
 * 0, or -ERANGE. */
int btsdec_recover_regs_at(const struct btsdec_recover *r, size_t i,
			   struct btsdec_regs *out);
/* Memory before instruction i ran (i <= nr): len bytes at addr into buf,
 * known[k] set for each byte proven; returns the bytes known, or
 * -ERANGE. */
ssize_t btsdec_recover_mem_at(const struct btsdec_recover *r, size_t i,
			      uint64_t addr, size_t len, uint8_t *buf, bool *known);
/* The memory instruction i (< nr) writes, as proven: 0 with [*addr,
 * *addr + *len) (*len 0: none), -ENODATA when it may write where the
 * engine cannot tell (a gap, a store through an address not known, a
 * syscall writing what is not modelled, an unmodelled string
 * instruction), or -ERANGE. */
int btsdec_recover_store(const struct btsdec_recover *r, size_t i,
			 uint64_t *addr, size_t *len);
/* The most ranges btsdec_recover_access reports for one instruction. */
#define BTSDEC_RECOVER_MAX_ACCESS 4
/* All the memory instruction i (< nr) reads or writes, as proven: how
 * many ranges [addr[k], addr[k] + len[k]) (at most
 * BTSDEC_RECOVER_MAX_ACCESS; 0: none), -ENODATA when it may touch memory
 * where the engine cannot tell (as btsdec_recover_store, and a syscall,
 * a movs, an operand whose address is not known), or -ERANGE. */
int btsdec_recover_access(const struct btsdec_recover *r, size_t i,
			  uint64_t *addr, size_t *len);
/* Bits two ways of recovery disagreed on (the model does not match the
 * run: another writer, a kernel change): kept as first proven; a test of
 * the engine expects 0. */
size_t btsdec_recover_conflicts(const struct btsdec_recover *r);

#endif /* BTSDEC_RECOVER_API_H */
