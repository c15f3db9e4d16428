/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The value-recovery engine's state, shared by lib/recover.c (states,
 * memory, the fixed point, the API) and lib/recover-insn.c (instructions
 * decoded once into operations, their forward and backward steps).
 * Private.
 */
#ifndef BTSDEC_RECOVER_INT_H
#define BTSDEC_RECOVER_INT_H

#include <capstone/capstone.h>

#include "btsdec-recover.h"

#define NREG BTSDEC_REG__MAX
#define RSP BTSDEC_REG_RSP
#define RIP BTSDEC_REG_RIP
#define RFL BTSDEC_REG_RFLAGS
#define NOREG 0xff

/* rflags: the arithmetic flags */
#define F_CF 0x001ull
#define F_PF 0x004ull
#define F_AF 0x010ull
#define F_ZF 0x040ull
#define F_SF 0x080ull
#define F_OF 0x800ull
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)
/* the resume flag: set by the CPU at a fault, by no instruction we model */
#define F_RF 0x10000ull

/* A value with the bits known (k). */
struct rval {
	uint64_t v, k;
};

/* An operand: a general-purpose register (its bits at shift), an
 * immediate, or memory base + index * scale + disp (+ the next
 * instruction's address when rip-relative); bad: an address we cannot
 * compute. */
enum opkind { OP_NONE, OP_REG, OP_IMM, OP_MEM };
struct xop {
	uint8_t kind;
	uint8_t size;		/* bytes */
	uint8_t reg, shift;	/* OP_REG */
	uint8_t base, index, scale;	/* OP_MEM; NOREG for none */
	bool bad;		/* a 32-bit or other register in the address */
	bool fsgs;		/* fs: or gs: (lea alone may ignore it) */
	int64_t imm;		/* OP_IMM value, OP_MEM displacement (rip
				 * folded in) */
};

/* What an instruction does, as the engine models it. */
enum sem {
	S_GAP,		/* code the trace does not show: everything unknown */
	S_OTHER,	/* not modelled: what it may write unknown */
	S_NOP, S_MOV, S_MOVZX, S_MOVSX, S_LEA, S_ADD, S_SUB, S_ADC, S_SBB,
	S_AND, S_OR, S_XOR, S_CMP, S_TEST, S_INC, S_DEC, S_NEG, S_NOT,
	S_SHL, S_SHR, S_SAR, S_IMUL, S_CDQE, S_CDQ, S_CQO, S_XCHG,
	S_PUSH, S_POP, S_CALL, S_RET, S_LEAVE, S_JMP, S_JCC,
	S_CMOV, S_SETCC, S_SYSCALL, S_STOS, S_MOVS,
};

/* How an instruction writes memory. */
enum store {
	ST_NONE,
	ST_OP,		/* its memory operand op[0] (size bytes) */
	ST_PUSH,	/* 8 bytes below rsp */
	ST_ANY,		/* anywhere: all memory unknown */
	ST_SYSCALL,	/* what the kernel writes: by the syscall's number */
	ST_STRING,	/* stos, movs: rcx (rep) or 1 elements at rdi */
};

/* How an instruction reads memory, for what its result proves of it. */
enum load {
	LD_NONE,
	LD_OP,		/* op[1] */
	LD_OP0,		/* op[0] (jmp/call through memory, push) */
	LD_RSP,		/* 8 bytes at rsp: pop, ret */
	LD_RBP,		/* 8 bytes at rbp: leave */
	LD_RMW,		/* op[0], read then written: what it held is ld */
};

struct xinsn {
	uint64_t addr;
	uint8_t len;
	uint8_t sem;
	uint8_t cc;		/* condition, X86_INS_* order-free: cc_* below */
	uint8_t nops;
	uint8_t store, load;
	uint8_t st_size;	/* bytes; stos, movs: an element's */
	bool rep;		/* stos, movs: rcx elements */
	struct xop op[3];
	uint64_t wmask[NREG];	/* the bits it may write */
	uint8_t st[8];		/* the bytes it stores (modelled: at most 8;
				 * stos: its element, repeated) */
	uint8_t st_known;	/* which of them are known, a bit each */
	uint8_t ld[8];		/* LD_RMW: the bytes its memory operand held,
				 * proven by inverting it (add, sub, xor, inc,
				 * dec, neg, not) from the bytes after */
	uint8_t ld_known;
};

/* A memory access in the index: granule g (addr / 8) touched by
 * instruction j (a load or a store at a known address). */
struct mem_ev {
	uint64_t g;
	size_t j;
};

struct btsdec_recover {
	csh cs;
	cs_insn *ci;
	size_t nr, cap;
	struct xinsn *in;	/* the sequence, oldest first */
	struct rval *s;		/* (nr + 1) * NREG: the state before each
				 * instruction, the final one last */
	struct btsdec_regs final;
	btsdec_recover_read_fn read;
	void *arg;
	uint64_t mem_lo, mem_hi;	/* the memory followed at all */
	/* The accesses at addresses known when the index was made (at each
	 * pass: addresses only become known), sorted by granule then
	 * instruction, and the instructions that may write anywhere (gaps,
	 * stores at unknown addresses), in order: a byte's search visits
	 * only these.  An index behind the states only proves less. */
	struct mem_ev *ev;
	size_t nr_ev, cap_ev;
	size_t *bar;
	size_t nr_bar, cap_bar;
	size_t conflicts;
};

static inline struct rval *state(const struct btsdec_recover *r, size_t i)
{
	return &r->s[i * NREG];
}

/* Whether the instruction at code repeats (a rep string instruction),
 * so that a fault may stop it part-way. */
bool rec_partial(struct btsdec_recover *r, uint64_t addr, const uint8_t *code,
		 size_t len, uint8_t *size);
/* Decodes code at addr into x: 0, or -EINVAL. */
int rec_decode(struct btsdec_recover *r, uint64_t addr, const uint8_t *code,
	       size_t len, struct xinsn *x);
/* Instruction i's forward step: what S(i) proves of S(i+1), into out
 * (NREG values); its stored bytes into in[i].st. */
void rec_forward(struct btsdec_recover *r, size_t i, struct rval *out);
/* Its backward step: what S(i+1) (and S(i)) prove of S(i), into out. */
void rec_backward(struct btsdec_recover *r, size_t i, struct rval *out);
/* Memory before instruction i: size bytes at addr, little-endian. */
struct rval rec_mem(const struct btsdec_recover *r, size_t i, uint64_t addr,
		    unsigned size);
/* The address of a memory operand in state st: false when unknown. */
bool rec_addr(const struct btsdec_recover *r, const struct xinsn *x,
	      const struct xop *o, const struct rval *st, uint64_t *addr);
/* What instruction j's result proves of the byte at addr it loaded. */
bool rec_loaded_byte(const struct btsdec_recover *r, size_t j, uint64_t addr,
		     uint8_t *byte);
/* Where instruction j loads in state S(j) (its result may prove the
 * bytes): false when it loads nothing or the address is not known. */
bool rec_load_at(const struct btsdec_recover *r, size_t j, uint64_t *addr,
		 unsigned *size);
/* Where instruction j stores in state S(j): ST_NONE, ST_ANY (or an
 * address it cannot compute), or ST_OP with *addr and *size. */
enum store rec_store_at(const struct btsdec_recover *r, size_t j, uint64_t *addr,
			unsigned *size);

/* Whether cmovcc j moved (its flags in S(j)): 1, 0, or -1 when the flags
 * it tests are not known.  For the provenance (why.c). */
int rec_cmov_taken(const struct btsdec_recover *r, size_t j);
/* The newest instruction before i that wrote, or may have written, the
 * byte at addr, into *j: ST_OP (a store there), ST_ANY (a gap, a syscall
 * or a store at an address not known: it may have), ST_NONE (no
 * instruction of the trace before i wrote it).  From the index of
 * accesses the run left: nothing is stored for it (why.c). */
enum store rec_mem_writer(const struct btsdec_recover *r, size_t i, uint64_t addr,
			  size_t *j);

#endif /* BTSDEC_RECOVER_INT_H */
