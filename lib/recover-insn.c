// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The value-recovery engine's instructions (btsdec-recover.h lists what is
 * modelled): decoded once with capstone into operands and a meaning, then
 * stepped forward (what the state before proves of the state after) and
 * backward (what the state after proves of the state before).  Called by
 * lib/recover.c only; process context.
 */
#include <errno.h>
#include <string.h>

#include "insn-zydis.h"
#include "recover-int.h"

/* ---- Decoding ------------------------------------------------------------- */

/* capstone's general-purpose registers: which of ours, at which bit. */
static const struct { uint16_t cs; uint8_t reg, shift, size; } gpr_map[] = {
#define Q(r, q, d, w, b) { X86_REG_##q, BTSDEC_REG_##r, 0, 8 }, \
	{ X86_REG_##d, BTSDEC_REG_##r, 0, 4 }, { X86_REG_##w, BTSDEC_REG_##r, 0, 2 }, \
	{ X86_REG_##b, BTSDEC_REG_##r, 0, 1 }
	Q(RAX, RAX, EAX, AX, AL), Q(RBX, RBX, EBX, BX, BL), Q(RCX, RCX, ECX, CX, CL),
	Q(RDX, RDX, EDX, DX, DL), Q(RSI, RSI, ESI, SI, SIL), Q(RDI, RDI, EDI, DI, DIL),
	Q(RBP, RBP, EBP, BP, BPL), Q(RSP, RSP, ESP, SP, SPL),
	Q(R8, R8, R8D, R8W, R8B), Q(R9, R9, R9D, R9W, R9B), Q(R10, R10, R10D, R10W, R10B),
	Q(R11, R11, R11D, R11W, R11B), Q(R12, R12, R12D, R12W, R12B),
	Q(R13, R13, R13D, R13W, R13B), Q(R14, R14, R14D, R14W, R14B),
	Q(R15, R15, R15D, R15W, R15B),
#undef Q
	{ X86_REG_AH, BTSDEC_REG_RAX, 8, 1 }, { X86_REG_BH, BTSDEC_REG_RBX, 8, 1 },
	{ X86_REG_CH, BTSDEC_REG_RCX, 8, 1 }, { X86_REG_DH, BTSDEC_REG_RDX, 8, 1 },
};

static bool gpr(unsigned cs, uint8_t *reg, uint8_t *shift, uint8_t *size)
{
	for (size_t i = 0; i < sizeof(gpr_map) / sizeof(gpr_map[0]); i++)
		if (gpr_map[i].cs == cs) {
			*reg = gpr_map[i].reg;
			*shift = gpr_map[i].shift;
			*size = gpr_map[i].size;
			return true;
		}
	return false;
}

static uint64_t mask_of(unsigned size)
{
	return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

/* The bits a write of register operand o changes: a 32-bit write clears
 * the upper half. */
static uint64_t wbits(const struct xop *o)
{
	return o->size >= 4 ? ~0ull : mask_of(o->size) << o->shift;
}

/* A 64-bit register as a memory operand's base or index. */
static uint8_t addr_reg(unsigned cs, bool *bad)
{
	uint8_t reg = NOREG, shift, size;

	if (cs == X86_REG_INVALID)
		return NOREG;
	if (!gpr(cs, &reg, &shift, &size) || size != 8)
		*bad = true;
	return reg;
}

static bool decode_op(const cs_insn *ci, const cs_x86_op *o, struct xop *x)
{
	uint8_t size;

	memset(x, 0, sizeof(*x));
	x->size = o->size;
	switch (o->type) {
	case X86_OP_REG:
		x->kind = OP_REG;
		if (!gpr(o->reg, &x->reg, &x->shift, &size))
			return false;
		x->size = size;
		return true;
	case X86_OP_IMM:
		x->kind = OP_IMM;
		x->imm = o->imm;
		return true;
	case X86_OP_MEM:
		x->kind = OP_MEM;
		x->imm = o->mem.disp;
		x->scale = o->mem.scale;
		x->fsgs = o->mem.segment == X86_REG_FS || o->mem.segment == X86_REG_GS;
		if (o->mem.base == X86_REG_RIP) {
			x->base = NOREG;
			x->imm += ci->address + ci->size;
		} else {
			x->base = addr_reg(o->mem.base, &x->bad);
		}
		x->index = addr_reg(o->mem.index, &x->bad);
		return true;
	default:
		return false;
	}
}

/* condition codes, in the hardware's order (tttn) */
enum { CC_O, CC_NO, CC_B, CC_AE, CC_E, CC_NE, CC_BE, CC_A,
       CC_S, CC_NS, CC_P, CC_NP, CC_L, CC_GE, CC_LE, CC_G, CC_NONE };

static int cc_of(unsigned id)
{
	switch (id) {
	case X86_INS_JO: case X86_INS_CMOVO: case X86_INS_SETO: return CC_O;
	case X86_INS_JNO: case X86_INS_CMOVNO: case X86_INS_SETNO: return CC_NO;
	case X86_INS_JB: case X86_INS_CMOVB: case X86_INS_SETB: return CC_B;
	case X86_INS_JAE: case X86_INS_CMOVAE: case X86_INS_SETAE: return CC_AE;
	case X86_INS_JE: case X86_INS_CMOVE: case X86_INS_SETE: return CC_E;
	case X86_INS_JNE: case X86_INS_CMOVNE: case X86_INS_SETNE: return CC_NE;
	case X86_INS_JBE: case X86_INS_CMOVBE: case X86_INS_SETBE: return CC_BE;
	case X86_INS_JA: case X86_INS_CMOVA: case X86_INS_SETA: return CC_A;
	case X86_INS_JS: case X86_INS_CMOVS: case X86_INS_SETS: return CC_S;
	case X86_INS_JNS: case X86_INS_CMOVNS: case X86_INS_SETNS: return CC_NS;
	case X86_INS_JP: case X86_INS_CMOVP: case X86_INS_SETP: return CC_P;
	case X86_INS_JNP: case X86_INS_CMOVNP: case X86_INS_SETNP: return CC_NP;
	case X86_INS_JL: case X86_INS_CMOVL: case X86_INS_SETL: return CC_L;
	case X86_INS_JGE: case X86_INS_CMOVGE: case X86_INS_SETGE: return CC_GE;
	case X86_INS_JLE: case X86_INS_CMOVLE: case X86_INS_SETLE: return CC_LE;
	case X86_INS_JG: case X86_INS_CMOVG: case X86_INS_SETG: return CC_G;
	}
	return CC_NONE;
}

static enum sem sem_of(unsigned id)
{
	switch (id) {
	case X86_INS_NOP: case X86_INS_ENDBR64: case X86_INS_PAUSE: return S_NOP;
	case X86_INS_MOV: case X86_INS_MOVABS: return S_MOV;
	case X86_INS_MOVZX: return S_MOVZX;
	case X86_INS_MOVSX: case X86_INS_MOVSXD: return S_MOVSX;
	case X86_INS_LEA: return S_LEA;
	case X86_INS_ADD: return S_ADD;
	case X86_INS_SUB: return S_SUB;
	case X86_INS_ADC: return S_ADC;
	case X86_INS_SBB: return S_SBB;
	case X86_INS_AND: return S_AND;
	case X86_INS_OR: return S_OR;
	case X86_INS_XOR: return S_XOR;
	case X86_INS_CMP: return S_CMP;
	case X86_INS_TEST: return S_TEST;
	case X86_INS_INC: return S_INC;
	case X86_INS_DEC: return S_DEC;
	case X86_INS_NEG: return S_NEG;
	case X86_INS_NOT: return S_NOT;
	case X86_INS_SHL: case X86_INS_SAL: return S_SHL;
	case X86_INS_SHR: return S_SHR;
	case X86_INS_SAR: return S_SAR;
	case X86_INS_IMUL: return S_IMUL;
	case X86_INS_CDQE: return S_CDQE;
	case X86_INS_CDQ: return S_CDQ;
	case X86_INS_CQO: return S_CQO;
	case X86_INS_XCHG: return S_XCHG;
	case X86_INS_PUSH: return S_PUSH;
	case X86_INS_POP: return S_POP;
	case X86_INS_CALL: return S_CALL;
	case X86_INS_RET: return S_RET;
	case X86_INS_LEAVE: return S_LEAVE;
	case X86_INS_JMP: return S_JMP;
	case X86_INS_SYSCALL: return S_SYSCALL;
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
		return S_STOS;
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
		return S_MOVS;	/* movsd: SSE's too, told apart by its operands */
	}
	if (id >= X86_INS_CMOVA && id <= X86_INS_CMOVS && cc_of(id) != CC_NONE)
		return S_CMOV;
	if (id >= X86_INS_SETAE && id <= X86_INS_SETS)
		return S_SETCC;
	if (cc_of(id) != CC_NONE)
		return S_JCC;
	return S_OTHER;
}

#define K(x) (1u << (x))
/* Which operand kinds each operand may have, per meaning (0: absent). */
static bool ops_fit(const struct xinsn *x)
{
	const unsigned R = K(OP_REG), I = K(OP_IMM), M = K(OP_MEM);
	unsigned k0 = x->nops > 0 ? K(x->op[0].kind) : K(OP_NONE);
	unsigned k1 = x->nops > 1 ? K(x->op[1].kind) : K(OP_NONE);
	unsigned n = x->nops;

	for (unsigned k = 0; k < n; k++)	/* a size the arithmetic knows */
		if (x->op[k].kind != OP_IMM && x->op[k].size != 1 && x->op[k].size != 2 &&
		    x->op[k].size != 4 && x->op[k].size != 8 &&
		    !(x->op[k].kind == OP_MEM && (x->sem == S_LEA || x->sem == S_NOP)))
			return false;
	switch (x->sem) {
	case S_NOP: case S_SYSCALL: case S_JCC: return true;
	case S_MOV: return n == 2 && (k0 & (R | M)) && (k1 & (R | I | M)) && !(k0 & k1 & M);
	case S_MOVZX: case S_MOVSX: case S_CMOV:
		return n == 2 && (k0 & R) && (k1 & (R | M));
	case S_LEA: return n == 2 && (k0 & R) && (k1 & M) && x->op[0].size >= 4;
	case S_ADD: case S_SUB: case S_ADC: case S_SBB: case S_AND: case S_OR:
	case S_XOR: case S_CMP: case S_TEST:
		return n == 2 && (k0 & (R | M)) && (k1 & (R | I | M)) && !(k0 & k1 & M);
	case S_INC: case S_DEC: case S_NEG: case S_NOT: return n == 1 && (k0 & (R | M));
	case S_SHL: case S_SHR: case S_SAR:
		return (n == 1 || (n == 2 && ((k1 & I) || (x->op[1].reg == BTSDEC_REG_RCX &&
			x->op[1].size == 1 && !x->op[1].shift)))) && (k0 & (R | M));
	case S_IMUL: return (n == 2 || (n == 3 && x->op[2].kind == OP_IMM)) && (k0 & R) &&
			    (k1 & (R | M));
	case S_CDQE: case S_CDQ: case S_CQO: case S_LEAVE: return n == 0;
	case S_XCHG: return n == 2 && (k0 & R) && (k1 & R);
	case S_PUSH: return n == 1 && (k0 & (R | I | M)) && x->op[0].size == 8;
	case S_POP: return n == 1 && (k0 & R) && x->op[0].size == 8;
	case S_CALL: case S_JMP: return n == 1 && (k0 & (R | I | M));
	case S_RET: return n == 0 || (n == 1 && (k0 & I));
	case S_SETCC: return n == 1 && (k0 & (R | M)) && x->op[0].size == 1;
	case S_STOS: case S_MOVS:	/* es:[rdi], and rax or [rsi] */
		return n == 2 && (k0 & M) && x->op[0].base == BTSDEC_REG_RDI &&
		       x->op[0].index == NOREG && !x->op[0].bad && !x->op[0].fsgs &&
		       x->op[0].size <= 8 && (x->sem == S_STOS ? (k1 & R) :
		       (k1 & M) && x->op[1].base == BTSDEC_REG_RSI && !x->op[1].bad &&
		       !x->op[1].fsgs);
	}
	return false;
}
#undef K

static void set_all(uint64_t *wmask)
{
	for (int k = 0; k < NREG; k++)
		wmask[k] = ~0ull;
}

/* What an instruction that writes memory the operands do not bound, or
 * registers capstone may not list: everything. */
static bool clobbers_all(const cs_insn *ci)
{
	const cs_x86 *d = &ci->detail->x86;

	if (d->prefix[0] == X86_PREFIX_REP || d->prefix[0] == X86_PREFIX_REPNE)
		return true;
	/* bts, btr, btc on memory with a register's bit offset: anywhere */
	if ((ci->id == X86_INS_BTS || ci->id == X86_INS_BTR || ci->id == X86_INS_BTC) &&
	    d->op_count == 2 && d->operands[0].type == X86_OP_MEM &&
	    d->operands[1].type == X86_OP_REG)
		return true;
	switch (ci->id) {
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSQ:
	case X86_INS_ENTER: case X86_INS_PUSHF: case X86_INS_PUSHFQ: case X86_INS_POPF:
	case X86_INS_POPFQ: case X86_INS_CPUID: case X86_INS_INT: case X86_INS_INT3:
	case X86_INS_INT1: case X86_INS_SYSENTER: case X86_INS_CMPXCHG8B:
	case X86_INS_CMPXCHG16B: case X86_INS_PUSH: case X86_INS_POP:
	case X86_INS_CALL: case X86_INS_RET: case X86_INS_LCALL: case X86_INS_LJMP:
	case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETQ:
	case X86_INS_MASKMOVDQU: case X86_INS_VMASKMOVDQU: case X86_INS_MASKMOVQ:
	case X86_INS_STD:
	case X86_INS_CLD: case X86_INS_SAHF: case X86_INS_UD2:
		return true;
	}
	return false;
}

/* The processor-state saves and restores (ld.so's lazy binding runs
 * xsavec and xrstor on every first call through a PLT slot): x87, SSE,
 * AVX, AVX-512, PKRU, AMX state to or from memory, never a general
 * register or rflags (SDM Vol. 1 ch. 13, Vol. 2 XSAVE/XRSTOR/FXSAVE).
 * 1: a save, to memory of a size XCR0 decides (anywhere, here); 2: a
 * restore, writing nothing the engine follows; 0: neither. */
static int state_save_restore(unsigned id)
{
	switch (id) {
	case X86_INS_XSAVE: case X86_INS_XSAVE64: case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64: case X86_INS_XSAVEOPT: case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES: case X86_INS_XSAVES64: case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64: case X86_INS_FNSAVE: case X86_INS_FNSTENV:
		return 1;
	case X86_INS_XRSTOR: case X86_INS_XRSTOR64: case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64: case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
	case X86_INS_FRSTOR: case X86_INS_FLDENV:
		return 2;
	}
	return 0;
}

/* Registers written implicitly that capstone may leave out. */
static void implicit_writes(unsigned id, uint64_t *wmask)
{
	switch (id) {
	case X86_INS_MUL: case X86_INS_DIV: case X86_INS_IDIV: case X86_INS_IMUL:
	case X86_INS_RDTSC: case X86_INS_RDTSCP: case X86_INS_XGETBV: case X86_INS_CWD:
		wmask[BTSDEC_REG_RAX] = wmask[BTSDEC_REG_RDX] = ~0ull;
		wmask[BTSDEC_REG_RCX] |= id == X86_INS_RDTSCP ? ~0ull : 0;
		break;
	case X86_INS_CMPXCHG: case X86_INS_LAHF: case X86_INS_CBW: case X86_INS_CWDE:
	case X86_INS_XLATB:
		wmask[BTSDEC_REG_RAX] = ~0ull;
		break;
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		wmask[BTSDEC_REG_RCX] = ~0ull;
		break;
	}
}

/* Instruction not modelled: everything it may write is unknown. */
static void decode_other(csh cs, const cs_insn *ci, struct xinsn *x)
{
	const cs_x86 *d = &ci->detail->x86;
	cs_regs rr, rw;
	uint8_t nr, nw, reg, shift, size;

	x->sem = S_OTHER;
	x->store = ST_NONE;
	x->load = LD_NONE;
	switch (state_save_restore(ci->id)) {
	case 1:
		x->store = ST_ANY;
		return;
	case 2:
		return;
	}
	if (clobbers_all(ci)) {
		set_all(x->wmask);
		x->store = ST_ANY;
		return;
	}
	x->wmask[RFL] |= F_ARITH;
	implicit_writes(ci->id, x->wmask);
	if (cs_regs_access(cs, ci, rr, &nr, rw, &nw) != CS_ERR_OK) {
		set_all(x->wmask);	/* what it writes is not known */
	} else {
		for (unsigned k = 0; k < nw; k++)
			if (gpr(rw[k], &reg, &shift, &size))
				x->wmask[reg] |= size >= 4 ? ~0ull : mask_of(size) << shift;
			/* EFLAGS: the arithmetic flags, as above; the others
			 * change only by what clobbers_all() lists (popf,
			 * iret, cld, std, sahf) or in the kernel */
	}
	/* Every operand may be written: capstone 4 says read for some stores
	 * (movups, movdqa, vmovdqu to memory). */
	for (unsigned k = 0; k < d->op_count; k++) {
		const cs_x86_op *o = &d->operands[k];
		struct xop xo;

		if (o->type == X86_OP_REG && gpr(o->reg, &reg, &shift, &size))
			x->wmask[reg] |= size >= 4 ? ~0ull : mask_of(size) << shift;
		if (o->type != X86_OP_MEM || ci->id == X86_INS_LEA || ci->id == X86_INS_NOP)
			continue;
		decode_op(ci, o, &xo);
		if (x->store != ST_NONE || xo.bad || xo.fsgs || !o->size || o->size > 64) {
			x->store = ST_ANY;
			continue;
		}
		x->store = ST_OP;
		x->st_size = o->size;
		x->op[0] = xo;
	}
}

/* The bits the modelled instruction x may write, its loads and stores. */
static void effects(struct xinsn *x)
{
	const struct xop *o0 = &x->op[0];
	bool flags = true, w0 = true;

	switch (x->sem) {
	case S_NOP: case S_JMP: case S_JCC: case S_CALL: case S_RET: case S_PUSH:
	case S_POP: case S_LEAVE: case S_CDQE: case S_CDQ: case S_CQO: case S_XCHG:
	case S_SETCC: case S_CMOV: case S_MOV: case S_MOVZX: case S_MOVSX: case S_LEA:
		flags = false;
		break;
	case S_NOT:
		flags = false;
		break;
	case S_INC: case S_DEC:
		x->wmask[RFL] |= F_ARITH & ~F_CF;
		flags = false;
		break;
	case S_CMP: case S_TEST:
		w0 = false;
		break;
	case S_SYSCALL:
		x->wmask[BTSDEC_REG_RAX] = x->wmask[BTSDEC_REG_RCX] = ~0ull;
		x->wmask[BTSDEC_REG_R11] = x->wmask[RFL] = ~0ull;
		x->store = ST_SYSCALL;
		return;
	case S_STOS: case S_MOVS:
		x->wmask[BTSDEC_REG_RDI] = ~0ull;
		x->wmask[BTSDEC_REG_RSI] |= x->sem == S_MOVS ? ~0ull : 0;
		x->wmask[BTSDEC_REG_RCX] |= x->rep ? ~0ull : 0;
		x->store = ST_STRING;
		x->st_size = o0->size;
		return;
	default:
		break;
	}
	if (flags)
		x->wmask[RFL] |= F_ARITH;
	switch (x->sem) {
	case S_NOP: case S_JMP: case S_JCC: case S_RET: case S_POP: case S_LEAVE:
	case S_CALL: case S_PUSH: case S_CDQE: case S_CDQ: case S_CQO: case S_XCHG:
		w0 = false;
		break;
	default:
		break;
	}
	if (w0 && x->nops && o0->kind == OP_REG)
		x->wmask[o0->reg] |= wbits(o0);
	if (w0 && x->nops && o0->kind == OP_MEM) {
		x->store = o0->bad || o0->fsgs ? ST_ANY : ST_OP;
		x->st_size = o0->size;
	}
	switch (x->sem) {
	case S_PUSH: case S_CALL:
		x->wmask[RSP] = ~0ull;
		x->store = ST_PUSH;
		x->st_size = 8;
		x->load = o0->kind == OP_MEM && x->sem == S_CALL ? LD_OP0 : LD_NONE;
		break;
	case S_POP: case S_RET:
		x->wmask[RSP] = ~0ull;
		if (x->sem == S_POP)
			x->wmask[o0->reg] = ~0ull;
		x->load = LD_RSP;
		break;
	case S_LEAVE:
		x->wmask[RSP] = x->wmask[BTSDEC_REG_RBP] = ~0ull;
		x->load = LD_RBP;
		break;
	case S_JMP:
		x->load = o0->kind == OP_MEM ? LD_OP0 : LD_NONE;
		break;
	case S_MOV: case S_MOVZX: case S_MOVSX:
		x->load = x->op[1].kind == OP_MEM && o0->kind == OP_REG ? LD_OP : LD_NONE;
		break;
	case S_ADD: case S_SUB: case S_XOR: case S_INC: case S_DEC: case S_NEG: case S_NOT:
		x->load = o0->kind == OP_MEM && x->store == ST_OP ? LD_RMW : LD_NONE;
		break;
	case S_CDQE:
		x->wmask[BTSDEC_REG_RAX] = ~0ull;
		break;
	case S_CDQ: case S_CQO:
		x->wmask[BTSDEC_REG_RDX] = ~0ull;
		break;
	case S_XCHG:
		x->wmask[o0->reg] |= wbits(o0);
		x->wmask[x->op[1].reg] |= wbits(&x->op[1]);
		break;
	default:
		break;
	}
	if (x->store == ST_OP && x->st_size > 8)
		x->store = ST_ANY;
}

bool rec_partial(struct btsdec_recover *r, uint64_t addr, const uint8_t *code,
		 size_t len, uint8_t *size)
{
	uint8_t p;

	if (!len || !cs_disasm_iter(r->cs, &code, &len, &addr, r->ci))
		return false;
	*size = r->ci->size;
	p = r->ci->detail->x86.prefix[0];
	return (p == X86_PREFIX_REP || p == X86_PREFIX_REPNE) && clobbers_all(r->ci) &&
	       r->ci->id != X86_INS_RET && r->ci->id != X86_INS_CALL &&
	       r->ci->id != X86_INS_JMP && cc_of(r->ci->id) == CC_NONE;
}

/* What capstone 4 cannot decode, from Zydis (lib/insn-zydis.c): not
 * modelled, everything it may write unknown; a branch is refused. */
static int decode_zydis(const uint8_t *code, size_t len, struct xinsn *x)
{
	struct zy_insn z;

	if (!zy_decode(code, len, x->addr, &z) || z.branch)
		return -EINVAL;
	x->len = z.len;
	x->sem = S_OTHER;
	x->wmask[RIP] = ~0ull;
	x->wmask[RFL] = F_RF | z.flags;
	if (z.all) {
		set_all(x->wmask);
		x->store = ST_ANY;
		return x->len;
	}
	for (int k = 0; k < 16; k++)
		if (z.gpr & 1u << k)
			x->wmask[k] = ~0ull;
	if (z.store_any) {
		x->store = ST_ANY;
	} else if (z.store) {
		x->store = ST_OP;
		x->st_size = z.st_size;
		x->op[0] = (struct xop){
			.kind = OP_MEM, .size = z.st_size, .scale = z.scale, .imm = z.disp,
			.base = z.base == ZY_NOREG ? NOREG : z.base,
			.index = z.index == ZY_NOREG ? NOREG : z.index,
		};
	}
	return x->len;
}

int rec_decode(struct btsdec_recover *r, uint64_t addr, const uint8_t *code,
	       size_t len, struct xinsn *x)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	const cs_x86 *d;
	bool ok = true;

	memset(x, 0, sizeof(*x));
	x->addr = addr;
	if (!len || !cs_disasm_iter(r->cs, &p, &len, &a, r->ci))
		return decode_zydis(code, len, x);
	x->len = r->ci->size;
	d = &r->ci->detail->x86;
	x->sem = sem_of(r->ci->id);
	x->cc = cc_of(r->ci->id);
	x->nops = d->op_count > 3 ? 3 : d->op_count;
	for (unsigned k = 0; k < x->nops; k++)
		ok &= decode_op(r->ci, &d->operands[k], &x->op[k]);
	/* rep ret, bnd jmp: the prefix changes nothing; rep stos, rep movs:
	 * modelled; elsewhere it repeats */
	x->rep = d->prefix[0] == X86_PREFIX_REP;
	if (x->sem == S_STOS || x->sem == S_MOVS)
		ok &= d->prefix[0] != X86_PREFIX_REPNE;
	else if (x->sem != S_RET && x->sem != S_CALL && x->sem != S_JMP && x->sem != S_JCC &&
		 (d->prefix[0] == X86_PREFIX_REP || d->prefix[0] == X86_PREFIX_REPNE))
		ok = false;
	x->wmask[RIP] = ~0ull;
	x->wmask[RFL] = F_RF;
	if (x->sem == S_OTHER || d->op_count > 3 || !ok || !ops_fit(x)) {
		memset(x->op, 0, sizeof(x->op));
		x->nops = 0;
		decode_other(r->cs, r->ci, x);
		return x->len;
	}
	effects(x);
	return x->len;
}

/* ---- Values --------------------------------------------------------------- */

static const struct rval unknown;

static bool full(struct rval a, unsigned size)
{
	return (a.k & mask_of(size)) == mask_of(size);
}

static struct rval known(uint64_t v, unsigned size)
{
	return (struct rval){ v & mask_of(size), mask_of(size) };
}

static int64_t sext(uint64_t v, unsigned size)
{
	unsigned sh = 64 - 8 * size;

	return (int64_t)(v << sh) >> sh;
}

bool rec_addr(const struct btsdec_recover *r, const struct xinsn *x,
	      const struct xop *o, const struct rval *st, uint64_t *addr)
{
	uint64_t a = (uint64_t)o->imm;

	if (o->bad || o->fsgs)
		return false;
	if (o->base != NOREG) {
		if (st[o->base].k != ~0ull)
			return false;
		a += st[o->base].v;
	}
	if (o->index != NOREG) {
		if (st[o->index].k != ~0ull)
			return false;
		a += st[o->index].v * o->scale;
	}
	*addr = a;
	return true;
}

/* Operand o's value in state st (instruction i's), in its low bits. */
static struct rval get(struct btsdec_recover *r, size_t i, const struct xop *o,
		       const struct rval *st)
{
	uint64_t m = mask_of(o->size), a;

	switch (o->kind) {
	case OP_REG:
		return (struct rval){ (st[o->reg].v >> o->shift) & m,
				      (st[o->reg].k >> o->shift) & m };
	case OP_IMM:
		return known((uint64_t)o->imm, o->size);
	case OP_MEM:
		if (rec_addr(r, &r->in[i], o, st, &a))
			return rec_mem(r, i, a, o->size);
		return unknown;
	}
	return unknown;
}

/* Writes v (its low bits) into register operand o of out. */
static void put_reg(struct rval *out, const struct xop *o, struct rval v)
{
	uint64_t m = mask_of(o->size);
	struct rval *d = &out[o->reg];

	v.v &= m;
	v.k &= m;
	if (o->size == 8) {
		*d = v;
	} else if (o->size == 4) {
		*d = (struct rval){ v.v, v.k | ~m };
	} else {
		d->v = (d->v & ~(m << o->shift)) | (v.v << o->shift);
		d->k = (d->k & ~(m << o->shift)) | (v.k << o->shift);
	}
}

/* The low size bytes of v as what instruction x stores. */
static void store_bytes(struct xinsn *x, struct rval v, unsigned size)
{
	for (unsigned b = 0; b < size && b < 8; b++) {
		x->st[b] = v.v >> 8 * b & 0xff;
		if ((v.k >> 8 * b & 0xff) == 0xff)
			x->st_known |= 1u << b;
	}
}

/* Writes v to operand o: a register of out, or instruction x's stored
 * bytes. */
static void put(struct xinsn *x, struct rval *out, const struct xop *o, struct rval v)
{
	if (o->kind == OP_REG) {
		put_reg(out, o, v);
		return;
	}
	store_bytes(x, v, o->size);
}

/* ---- Flags ---------------------------------------------------------------- */

static uint64_t zsp(uint64_t res, unsigned size)
{
	uint64_t f = 0;

	res &= mask_of(size);
	if (!res)
		f |= F_ZF;
	if (res >> (8 * size - 1))
		f |= F_SF;
	if (!(__builtin_popcountll(res & 0xff) & 1))
		f |= F_PF;
	return f;
}

/* Sets the flags in mask to f (known), the rest of which unknown. */
static void set_flags(struct rval *out, uint64_t which, uint64_t f, uint64_t unk)
{
	out[RFL].v = (out[RFL].v & ~which) | (f & which);
	out[RFL].k = (out[RFL].k | which) & ~unk;
}

/* a + b + c (sub: a - b - c) with its flags. */
static uint64_t addsub(uint64_t a, uint64_t b, unsigned c, bool sub, unsigned size,
		       uint64_t *f)
{
	unsigned top = 8 * size - 1;
	uint64_t m = mask_of(size), r;

	a &= m;
	b &= m;
	r = (sub ? a - b - c : a + b + c) & m;
	*f = zsp(r, size) | (((a ^ b ^ r) & 0x10) ? F_AF : 0);
	if (sub) {
		*f |= (c ? a <= b : a < b) ? F_CF : 0;
		*f |= (((a ^ b) & (a ^ r)) >> top) & 1 ? F_OF : 0;
	} else {
		*f |= (c ? r <= a : r < a) ? F_CF : 0;
		*f |= (((a ^ r) & (b ^ r)) >> top) & 1 ? F_OF : 0;
	}
	return r;
}

/* Whether condition cc holds under the flags fl: 1, 0, or -1 unknown. */
static int cond(struct rval fl, unsigned cc)
{
	uint64_t need, v = fl.v;
	int t;

	switch (cc & ~1u) {
	case CC_O: need = F_OF; t = !!(v & F_OF); break;
	case CC_B: need = F_CF; t = !!(v & F_CF); break;
	case CC_E: need = F_ZF; t = !!(v & F_ZF); break;
	case CC_BE: need = F_CF | F_ZF; t = !!(v & (F_CF | F_ZF)); break;
	case CC_S: need = F_SF; t = !!(v & F_SF); break;
	case CC_P: need = F_PF; t = !!(v & F_PF); break;
	case CC_L: need = F_SF | F_OF; t = !(v & F_SF) != !(v & F_OF); break;
	case CC_LE: need = F_SF | F_OF | F_ZF;
		t = (v & F_ZF) || !(v & F_SF) != !(v & F_OF); break;
	default: return -1;
	}
	if ((fl.k & need) != need)
		return -1;
	return cc & 1 ? !t : t;
}

/* The one flag a condition tests alone, or 0. */
static uint64_t cond_flag(unsigned cc)
{
	switch (cc & ~1u) {
	case CC_O: return F_OF;
	case CC_B: return F_CF;
	case CC_E: return F_ZF;
	case CC_S: return F_SF;
	case CC_P: return F_PF;
	}
	return 0;
}

/* What `cc is t` proves of the flags: into fl. */
static void cond_learn(struct rval *fl, unsigned cc, int t)
{
	uint64_t f = cond_flag(cc);

	if (!f || t < 0)
		return;
	if (cc & 1)
		t = !t;
	fl->v = t ? fl->v | f : fl->v & ~f;
	fl->k |= f;
}

/* ---- Forward -------------------------------------------------------------- */

static void fwd_alu(struct btsdec_recover *r, size_t i, const struct rval *st,
		    struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0], *o1 = &x->op[1];
	unsigned size = o0->size, c = 0;
	struct rval a = get(r, i, o0, st), b = get(r, i, o1, st), res = unknown;
	bool same = o0->kind == OP_REG && o1->kind == OP_REG && o0->reg == o1->reg &&
		    o0->shift == o1->shift && o0->size == o1->size;
	bool sub = x->sem == S_SUB || x->sem == S_SBB || x->sem == S_CMP;
	uint64_t f = 0;

	if (o1->kind == OP_IMM)
		b = known((uint64_t)o1->imm, size);
	switch (x->sem) {
	case S_AND: case S_TEST:
		res.v = a.v & b.v;
		res.k = (a.k & b.k) | (a.k & ~a.v) | (b.k & ~b.v);
		break;
	case S_OR:
		res.v = a.v | b.v;
		res.k = (a.k & b.k) | (a.k & a.v) | (b.k & b.v);
		break;
	case S_XOR:
		res = same ? known(0, size) : (struct rval){ a.v ^ b.v, a.k & b.k };
		break;
	default:
		if ((x->sem == S_ADC || x->sem == S_SBB)) {
			if (!(st[RFL].k & F_CF))
				break;
			c = !!(st[RFL].v & F_CF);
		}
		if (same && x->sem == S_SUB)
			a = b = known(0, size);
		if (full(a, size) && full(b, size)) {
			res = known(addsub(a.v, b.v, c, sub, size, &f), size);
			set_flags(out, F_ARITH, f, 0);
		}
		break;
	}
	res.v &= res.k;
	if (x->sem == S_AND || x->sem == S_TEST || x->sem == S_OR || x->sem == S_XOR) {
		if (full(res, size))
			set_flags(out, F_ARITH, zsp(res.v, size), F_AF);
	}
	if (x->sem != S_CMP && x->sem != S_TEST)
		put(x, out, o0, res);
}

static void fwd_unary(struct btsdec_recover *r, size_t i, const struct rval *st,
		      struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0];
	unsigned size = o0->size;
	struct rval a = get(r, i, o0, st), res = unknown;
	uint64_t f;

	if (x->sem == S_NOT) {
		put(x, out, o0, (struct rval){ ~a.v & a.k, a.k });
		return;
	}
	if (full(a, size)) {
		if (x->sem == S_NEG) {
			res = known(addsub(0, a.v, 0, true, size, &f), size);
			f = (f & ~F_CF) | (a.v & mask_of(size) ? F_CF : 0);
			set_flags(out, F_ARITH, f, 0);
		} else {
			res = known(addsub(a.v, 1, 0, x->sem == S_DEC, size, &f), size);
			set_flags(out, F_ARITH & ~F_CF, f, 0);
		}
	}
	put(x, out, o0, res);
}

static void fwd_shift(struct btsdec_recover *r, size_t i, const struct rval *st,
		      struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0];
	unsigned size = o0->size, bits = 8 * size, c;
	struct rval a = get(r, i, o0, st), cnt = x->nops == 2 ? get(r, i, &x->op[1], st)
							       : known(1, 1);
	uint64_t m = mask_of(size), f, cf;
	struct rval res;

	if ((cnt.k & 0xff) != 0xff) {
		put(x, out, o0, unknown);
		return;
	}
	c = cnt.v & (size == 8 ? 0x3f : 0x1f);
	if (c == 0) {		/* nothing changes, the flags neither */
		put(x, out, o0, a);
		out[RFL] = st[RFL];
		return;
	}
	if (c >= bits) {
		put(x, out, o0, unknown);
		return;
	}
	if (x->sem == S_SHL) {
		res = (struct rval){ (a.v << c) & m, ((a.k << c) | ((1ull << c) - 1)) & m };
	} else {
		uint64_t hi = m & ~(m >> c);

		res = (struct rval){ (a.v & m) >> c, (a.k & m) >> c };
		if (x->sem == S_SHR) {
			res.k |= hi;
		} else if (a.k >> (bits - 1) & 1) {
			res.k |= hi;
			res.v |= a.v >> (bits - 1) & 1 ? hi : 0;
		}
	}
	put(x, out, o0, res);
	if (!full(a, size))
		return;
	if (x->sem == S_SHL)
		cf = a.v >> (bits - c) & 1;
	else
		cf = (uint64_t)(x->sem == S_SAR ? sext(a.v, size) : (int64_t)(a.v & m)) >> (c - 1) & 1;
	f = zsp(res.v, size) | (cf ? F_CF : 0);
	if (c == 1 && x->sem == S_SHL)
		f |= (res.v >> (bits - 1) & 1) != cf ? F_OF : 0;
	else if (c == 1 && x->sem == S_SHR)
		f |= a.v >> (bits - 1) & 1 ? F_OF : 0;
	set_flags(out, F_ARITH, f, F_AF | (c == 1 ? 0 : F_OF));
}

static void fwd_imul(struct btsdec_recover *r, size_t i, const struct rval *st,
		     struct rval *out)
{
	struct xinsn *x = &r->in[i];
	unsigned size = x->op[0].size;
	struct rval a = get(r, i, &x->op[x->nops == 3 ? 1 : 0], st);
	struct rval b = x->nops == 3 ? known((uint64_t)x->op[2].imm, size)
				     : get(r, i, &x->op[1], st);
	__int128 p;
	uint64_t res;

	if (!full(a, size) || !full(b, size)) {
		put(x, out, &x->op[0], unknown);
		return;
	}
	p = (__int128)sext(a.v, size) * sext(b.v, size);
	res = (uint64_t)p & mask_of(size);
	put(x, out, &x->op[0], known(res, size));
	set_flags(out, F_CF | F_OF, (__int128)sext(res, size) != p ? F_CF | F_OF : 0,
		  F_ARITH & ~(F_CF | F_OF));
}

static void fwd_move(struct btsdec_recover *r, size_t i, const struct rval *st,
		     struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0], *o1 = &x->op[1];
	struct rval a = get(r, i, o1, st), b;
	unsigned sz = o1->size;
	int t;

	switch (x->sem) {
	case S_MOV:
		put(x, out, o0, o1->kind == OP_IMM ? known((uint64_t)o1->imm, o0->size) : a);
		return;
	case S_MOVZX:
		put(x, out, o0, (struct rval){ a.v, a.k | (mask_of(o0->size) & ~mask_of(sz)) });
		return;
	case S_MOVSX:
		b = (struct rval){ a.v & mask_of(sz), a.k & mask_of(sz) };
		if (a.k >> (8 * sz - 1) & 1) {
			b.k |= ~mask_of(sz);
			b.v = (uint64_t)sext(a.v, sz);
		}
		put(x, out, o0, b);
		return;
	case S_LEA: {
		uint64_t addr;

		struct xop m = *o1;

		m.fsgs = false;	/* lea ignores the segment */
		put(x, out, o0, rec_addr(r, x, &m, st, &addr) ? known(addr, o0->size) : unknown);
		return;
	}
	case S_CMOV:
		t = cond(st[RFL], x->cc);
		b = get(r, i, o0, st);
		if (t == 1)
			b = a;
		else if (t < 0)
			b = (struct rval){ a.v, a.k & b.k & ~(a.v ^ b.v) };
		put(x, out, o0, b);
		return;
	case S_SETCC:
		t = cond(st[RFL], x->cc);
		put(x, out, o0, t < 0 ? unknown : known(t, 1));
		return;
	case S_XCHG:
		b = get(r, i, o0, st);
		put_reg(out, o0, a);
		put_reg(out, o1, b);
		return;
	default:
		return;
	}
}

static void fwd_stack(struct btsdec_recover *r, size_t i, const struct rval *st,
		      struct rval *out)
{
	struct xinsn *x = &r->in[i];
	bool rsp = st[RSP].k == ~0ull;
	struct rval v = unknown, *rbp = &out[BTSDEC_REG_RBP];
	uint64_t a;

	switch (x->sem) {
	case S_PUSH: case S_CALL:
		out[RSP] = rsp ? known(st[RSP].v - 8, 8) : unknown;
		if (x->sem == S_CALL)
			v = known(x->addr + x->len, 8);
		else if (!(x->op[0].kind == OP_REG && x->op[0].reg == RSP))
			v = get(r, i, &x->op[0], st);
		else if (rsp)
			v = known(st[RSP].v, 8);
		store_bytes(x, v, 8);
		return;
	case S_POP:
		out[RSP] = rsp ? known(st[RSP].v + 8, 8) : unknown;
		put_reg(out, &x->op[0], rsp ? rec_mem(r, i, st[RSP].v, 8) : unknown);
		return;
	case S_RET:
		out[RSP] = rsp ? known(st[RSP].v + 8 + (x->nops ? (uint64_t)x->op[0].imm : 0), 8)
			       : unknown;
		return;
	case S_LEAVE:
		*rbp = unknown;
		out[RSP] = unknown;
		if (st[BTSDEC_REG_RBP].k != ~0ull)
			return;
		a = st[BTSDEC_REG_RBP].v;
		out[RSP] = known(a + 8, 8);
		*rbp = rec_mem(r, i, a, 8);
		return;
	default:
		return;
	}
}

static void fwd_extend(const struct xinsn *x, const struct rval *st, struct rval *out)
{
	struct rval a = st[BTSDEC_REG_RAX];

	switch (x->sem) {
	case S_CDQE:
		if (a.k >> 31 & 1)
			out[BTSDEC_REG_RAX] = (struct rval){ (uint64_t)sext(a.v, 4),
							     a.k | ~0xffffffffull };
		else
			out[BTSDEC_REG_RAX] = (struct rval){ a.v & 0xffffffff, a.k & 0x7fffffff };
		return;
	case S_CDQ:
		if (a.k >> 31 & 1)
			out[BTSDEC_REG_RDX] = known(a.v >> 31 & 1 ? 0xffffffff : 0, 8);
		return;
	case S_CQO:
		if (a.k >> 63 & 1)
			out[BTSDEC_REG_RDX] = known(a.v >> 63 ? ~0ull : 0, 8);
		return;
	default:
		return;
	}
}

/* stos, movs: the bytes they move in state st (rcx elements with rep,
 * else one), when the direction flag is known clear and the count known. */
#define F_DF 0x400ull
static bool string_bytes(const struct xinsn *x, const struct rval *st, uint64_t *n)
{
	const struct rval *rcx = &st[BTSDEC_REG_RCX];
	uint64_t count = 1;

	if (!(st[RFL].k & F_DF) || st[RFL].v & F_DF)
		return false;
	if (x->rep) {
		if (rcx->k != ~0ull || rcx->v > (UINT64_MAX >> 4))
			return false;
		count = rcx->v;
	}
	*n = count * x->st_size;
	return true;
}

static void fwd_string(struct btsdec_recover *r, size_t i, const struct rval *st,
		       struct rval *out)
{
	struct xinsn *x = &r->in[i];
	uint64_t n;

	if (x->rep)
		out[BTSDEC_REG_RCX] = known(0, 8);	/* when it completed */
	if (x->sem == S_STOS)
		store_bytes(x, get(r, i, &x->op[1], st), x->st_size);
	if (!string_bytes(x, st, &n))
		return;
	for (int k = BTSDEC_REG_RSI; k <= BTSDEC_REG_RDI; k++)
		if ((k == BTSDEC_REG_RDI || x->sem == S_MOVS) && st[k].k == ~0ull)
			out[k] = known(st[k].v + n, 8);
}

int rec_cmov_taken(const struct btsdec_recover *r, size_t j)
{
	return r->in[j].sem == S_CMOV ? cond(state(r, j)[RFL], r->in[j].cc) : 1;
}

void rec_forward(struct btsdec_recover *r, size_t i, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct rval *st = state(r, i);

	for (int k = 0; k < NREG; k++)
		out[k] = (struct rval){ st[k].v, st[k].k & ~x->wmask[k] };
	x->st_known = 0;
	switch (x->sem) {
	case S_ADD: case S_SUB: case S_ADC: case S_SBB: case S_AND: case S_OR:
	case S_XOR: case S_CMP: case S_TEST:
		fwd_alu(r, i, st, out);
		break;
	case S_INC: case S_DEC: case S_NEG: case S_NOT:
		fwd_unary(r, i, st, out);
		break;
	case S_SHL: case S_SHR: case S_SAR:
		fwd_shift(r, i, st, out);
		break;
	case S_IMUL:
		fwd_imul(r, i, st, out);
		break;
	case S_MOV: case S_MOVZX: case S_MOVSX: case S_LEA: case S_CMOV:
	case S_SETCC: case S_XCHG:
		fwd_move(r, i, st, out);
		break;
	case S_PUSH: case S_CALL: case S_POP: case S_RET: case S_LEAVE:
		fwd_stack(r, i, st, out);
		break;
	case S_CDQE: case S_CDQ: case S_CQO:
		fwd_extend(x, st, out);
		break;
	case S_STOS: case S_MOVS:
		fwd_string(r, i, st, out);
		break;
	default:
		break;
	}
	out[RFL].k &= ~F_RF;
	out[RIP] = unknown;
}

/* ---- Backward ------------------------------------------------------------- */

/* Operand o's bits (its low bits in v) proven in out, the state before. */
static void learn(struct rval *out, const struct xop *o, struct rval v, unsigned size)
{
	uint64_t m = mask_of(size);

	if (o->kind != OP_REG)
		return;
	v.k &= m;
	out[o->reg].v = (out[o->reg].v & ~(v.k << o->shift)) | ((v.v & v.k) << o->shift);
	out[o->reg].k |= v.k << o->shift;
}

/* Register operand o's value after the instruction (state st1). */
static struct rval after(const struct xop *o, const struct rval *st1)
{
	uint64_t m = mask_of(o->size);

	return (struct rval){ (st1[o->reg].v >> o->shift) & m, (st1[o->reg].k >> o->shift) & m };
}

static bool same_reg(const struct xop *a, const struct xop *b)
{
	return a->kind == OP_REG && b->kind == OP_REG && a->reg == b->reg;
}

/* A read-modify-write of memory, inverted: what its memory operand held,
 * from what it holds after (b: the other operand) into x->ld. */
static void bwd_rmw(struct btsdec_recover *r, size_t i, const struct rval *st0)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0], *o1 = &x->op[1];
	unsigned size = o0->size;
	struct rval aft, b = known(1, size), bef;
	uint64_t a;

	if (x->load != LD_RMW || !rec_addr(r, x, o0, st0, &a))
		return;
	aft = rec_mem(r, i + 1, a, size);
	if (x->nops == 2)
		b = o1->kind == OP_IMM ? known((uint64_t)o1->imm, size) : get(r, i, o1, st0);
	switch (x->sem) {
	case S_XOR: bef = (struct rval){ aft.v ^ b.v, aft.k & b.k }; break;
	case S_NOT: bef = (struct rval){ ~aft.v, aft.k }; break;
	default:
		if (!full(aft, size) || !full(b, size))
			return;
		bef = known(x->sem == S_ADD || x->sem == S_INC ? aft.v - b.v :
			    x->sem == S_NEG ? -aft.v : aft.v + b.v, size);
		break;
	}
	for (unsigned k = 0; k < size && k < 8; k++)
		if ((bef.k >> 8 * k & 0xff) == 0xff) {
			x->ld[k] = bef.v >> 8 * k & 0xff;
			x->ld_known |= 1u << k;
		}
}

static void bwd_alu(struct btsdec_recover *r, size_t i, const struct rval *st0,
		    const struct rval *st1, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0], *o1 = &x->op[1];
	unsigned size = o0->size;
	struct rval b, aft, bef;
	uint64_t m = mask_of(size);

	if (o0->kind != OP_REG || same_reg(o0, o1))
		return;
	aft = after(o0, st1);
	b = o1->kind == OP_IMM ? known((uint64_t)o1->imm, size) : get(r, i, o1, st0);
	bef = get(r, i, o0, st0);
	switch (x->sem) {
	case S_ADD: case S_SUB:
		if (full(aft, size) && full(b, size))
			learn(out, o0, known(x->sem == S_ADD ? aft.v - b.v : aft.v + b.v, size),
			      size);
		if (full(aft, size) && full(bef, size))
			learn(out, o1, known(x->sem == S_ADD ? aft.v - bef.v : bef.v - aft.v,
					     size), size);
		return;
	case S_XOR:
		learn(out, o0, (struct rval){ aft.v ^ b.v, aft.k & b.k }, size);
		learn(out, o1, (struct rval){ aft.v ^ bef.v, aft.k & bef.k }, size);
		return;
	case S_AND:		/* where b has a 1, a kept its bit */
		learn(out, o0, (struct rval){ aft.v, aft.k & b.k & b.v & m }, size);
		return;
	case S_OR:
		learn(out, o0, (struct rval){ aft.v, aft.k & b.k & ~b.v & m }, size);
		return;
	default:
		return;
	}
}

static void bwd_unary(struct btsdec_recover *r, size_t i, const struct rval *st0,
		      const struct rval *st1, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0];
	unsigned size = o0->size, c;
	struct rval aft, cnt;

	if (o0->kind != OP_REG)
		return;
	aft = after(o0, st1);
	switch (x->sem) {
	case S_NOT:
		learn(out, o0, (struct rval){ ~aft.v, aft.k }, size);
		return;
	case S_NEG: case S_INC: case S_DEC:
		if (full(aft, size))
			learn(out, o0, known(x->sem == S_NEG ? -aft.v : x->sem == S_INC ?
					     aft.v - 1 : aft.v + 1, size), size);
		return;
	case S_SHL: case S_SHR: case S_SAR:
		cnt = x->nops == 2 ? get(r, i, &x->op[1], st0) : known(1, 1);
		if ((cnt.k & 0xff) != 0xff)
			return;
		c = cnt.v & (size == 8 ? 0x3f : 0x1f);
		if (c >= 8 * size)
			return;
		if (!c) {	/* nothing moved */
			learn(out, o0, aft, size);
			return;
		}
		if (x->sem == S_SHL)
			learn(out, o0, (struct rval){ aft.v >> c, (aft.k >> c) &
					(mask_of(size) >> c) }, size);
		else
			learn(out, o0, (struct rval){ aft.v << c, (aft.k << c) &
					(mask_of(size) & ~(mask_of(size) >> (8 * size - c))) &
					mask_of(size) }, size);
		return;
	default:
		return;
	}
}

static void bwd_move(struct btsdec_recover *r, size_t i, const struct rval *st0,
		     const struct rval *st1, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0], *o1 = &x->op[1];
	uint64_t a, idx = 0;
	struct rval aft;
	int t;

	switch (x->sem) {
	case S_MOV:
		if (o0->kind == OP_MEM && o1->kind == OP_REG && rec_addr(r, x, o0, st0, &a))
			learn(out, o1, rec_mem(r, i + 1, a, o1->size), o1->size);
		else if (o0->kind == OP_REG && o1->kind == OP_REG && !same_reg(o0, o1))
			learn(out, o1, after(o0, st1), o1->size);
		return;
	case S_MOVZX: case S_MOVSX:
		if (o1->kind == OP_REG && !same_reg(o0, o1))
			learn(out, o1, after(o0, st1), o1->size);
		return;
	case S_LEA:
		aft = after(o0, st1);
		if (!full(aft, o0->size) || o1->base == NOREG || o1->base == o1->index)
			return;
		if (o1->index != NOREG) {
			if (st0[o1->index].k != ~0ull)
				return;
			idx = st0[o1->index].v * o1->scale;
		}
		learn(out, &(struct xop){ .kind = OP_REG, .reg = o1->base },
		      known(aft.v - idx - (uint64_t)o1->imm, o0->size), o0->size);
		return;
	case S_CMOV:
		t = cond(st0[RFL], x->cc);
		if (t == 0 && o0->size == 8)
			learn(out, o0, after(o0, st1), 8);
		else if (t == 1 && o1->kind == OP_REG && !same_reg(o0, o1))
			learn(out, o1, after(o0, st1), o1->size);
		return;
	case S_SETCC:
		if (o0->kind == OP_REG && (after(o0, st1).k & 1))
			cond_learn(&out[RFL], x->cc, after(o0, st1).v & 1);
		return;
	case S_XCHG:
		learn(out, o0, after(o1, st1), o0->size);
		learn(out, o1, after(o0, st1), o1->size);
		return;
	case S_CDQE:
		learn(out, &(struct xop){ .kind = OP_REG, .reg = BTSDEC_REG_RAX },
		      st1[BTSDEC_REG_RAX], 4);
		return;
	default:
		return;
	}
}

/* rip after instruction i, when the next entry is code (not a gap). */
static bool next_rip(const struct btsdec_recover *r, size_t i, uint64_t *pc)
{
	const struct rval *st1 = state(r, i + 1);

	if (st1[RIP].k != ~0ull)
		return false;
	*pc = st1[RIP].v;
	return true;
}

static void bwd_stack(struct btsdec_recover *r, size_t i, const struct rval *st0,
		      const struct rval *st1, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct xop *o0 = &x->op[0];
	bool rsp1 = st1[RSP].k == ~0ull;
	uint64_t pc, a;

	switch (x->sem) {
	case S_PUSH: case S_CALL:
		if (rsp1)
			out[RSP] = known(st1[RSP].v + 8, 8);
		if (x->sem == S_PUSH && o0->kind == OP_REG && o0->reg != RSP &&
		    (st0[RSP].k == ~0ull || rsp1)) {
			a = rsp1 ? st1[RSP].v : st0[RSP].v - 8;
			learn(out, o0, rec_mem(r, i + 1, a, 8), 8);
		}
		if (x->sem == S_CALL && o0->kind == OP_REG && next_rip(r, i, &pc))
			learn(out, o0, known(pc, 8), 8);
		return;
	case S_JMP:
		if (o0->kind == OP_REG && next_rip(r, i, &pc))
			learn(out, o0, known(pc, 8), 8);
		return;
	case S_POP:
		if (rsp1 && o0->reg != RSP)
			out[RSP] = known(st1[RSP].v - 8, 8);
		return;
	case S_RET:
		if (rsp1)
			out[RSP] = known(st1[RSP].v - 8 - (x->nops ? (uint64_t)o0->imm : 0), 8);
		return;
	case S_LEAVE:
		if (rsp1)
			out[BTSDEC_REG_RBP] = known(st1[RSP].v - 8, 8);
		return;
	case S_JCC:
		if (o0->kind == OP_IMM && next_rip(r, i, &pc) &&
		    (uint64_t)o0->imm != x->addr + x->len)
			cond_learn(&out[RFL], x->cc, pc == (uint64_t)o0->imm);
		return;
	default:
		return;
	}
}

static void bwd_string(struct btsdec_recover *r, size_t i, const struct rval *st0,
		       const struct rval *st1, struct rval *out)
{
	const struct xinsn *x = &r->in[i];
	uint64_t n;

	if (!string_bytes(x, st0, &n))
		return;
	for (int k = BTSDEC_REG_RSI; k <= BTSDEC_REG_RDI; k++)
		if ((k == BTSDEC_REG_RDI || x->sem == S_MOVS) && st1[k].k == ~0ull)
			out[k] = known(st1[k].v - n, 8);
}

void rec_backward(struct btsdec_recover *r, size_t i, struct rval *out)
{
	struct xinsn *x = &r->in[i];
	const struct rval *st0 = state(r, i), *st1 = state(r, i + 1);

	for (int k = 0; k < NREG; k++)
		out[k] = (struct rval){ st1[k].v, st1[k].k & ~x->wmask[k] };
	bwd_rmw(r, i, st0);
	switch (x->sem) {
	case S_ADD: case S_SUB: case S_XOR: case S_AND: case S_OR:
		bwd_alu(r, i, st0, st1, out);
		break;
	case S_INC: case S_DEC: case S_NEG: case S_NOT: case S_SHL: case S_SHR: case S_SAR:
		bwd_unary(r, i, st0, st1, out);
		break;
	case S_MOV: case S_MOVZX: case S_MOVSX: case S_LEA: case S_CMOV: case S_SETCC:
	case S_XCHG: case S_CDQE:
		bwd_move(r, i, st0, st1, out);
		break;
	case S_PUSH: case S_CALL: case S_JMP: case S_POP: case S_RET: case S_LEAVE:
	case S_JCC:
		bwd_stack(r, i, st0, st1, out);
		break;
	case S_STOS: case S_MOVS:
		bwd_string(r, i, st0, st1, out);
		break;
	default:
		break;
	}
	out[RIP] = unknown;
}

/* ---- Memory accesses ------------------------------------------------------ */

/* Linux x86-64 syscalls that write no user memory (their numbers, from
 * arch/x86/entry/syscalls/syscall_64.tbl): write, close, lseek, mprotect,
 * sched_yield, getpid, kill, getuid, getgid, geteuid, getegid, getppid,
 * exit, tkill, gettid, exit_group, tgkill. */
static bool syscall_writes_nothing(uint64_t nr)
{
	static const uint16_t none[] = { 1, 3, 8, 10, 24, 39, 60, 62, 102, 104, 107,
					 108, 110, 186, 200, 231, 234 };

	for (size_t k = 0; k < sizeof(none) / sizeof(none[0]); k++)
		if (none[k] == nr)
			return true;
	return false;
}

#define SYS_RT_SIGPROCMASK 14

/* What syscall j writes in user memory, from its registers in S(j):
 * nothing, rt_sigprocmask's old set (rdx, r10 bytes), or anything. */
static enum store syscall_store(const struct rval *st, uint64_t *addr, unsigned *size)
{
	const struct rval *rax = &st[BTSDEC_REG_RAX], *rdx = &st[BTSDEC_REG_RDX];
	const struct rval *r10 = &st[BTSDEC_REG_R10];

	if (rax->k != ~0ull)
		return ST_ANY;
	if (syscall_writes_nothing(rax->v))
		return ST_NONE;
	if (rax->v != SYS_RT_SIGPROCMASK || rdx->k != ~0ull || r10->k != ~0ull)
		return ST_ANY;
	if (!rdx->v)
		return ST_NONE;
	if (r10->v > 8)
		return ST_ANY;
	*addr = rdx->v;
	*size = r10->v;
	return ST_OP;
}

/* The most a stos or movs may store for the engine to follow it. */
#define MAX_STRING 4096

static enum store store_at(const struct btsdec_recover *r, size_t j, uint64_t *addr,
			   unsigned *size)
{
	const struct xinsn *x = &r->in[j];
	const struct rval *st = state(r, j);
	uint64_t n;

	*size = x->st_size;
	switch (x->store) {
	case ST_NONE:
		return ST_NONE;
	case ST_OP:
		return rec_addr(r, x, &x->op[0], st, addr) ? ST_OP : ST_ANY;
	case ST_PUSH:
		if (st[RSP].k == ~0ull) {
			*addr = st[RSP].v - 8;
			return ST_OP;
		}
		if (state(r, j + 1)[RSP].k == ~0ull) {
			*addr = state(r, j + 1)[RSP].v;
			return ST_OP;
		}
		return ST_ANY;
	case ST_SYSCALL:
		return syscall_store(st, addr, size);
	case ST_STRING:
		if (!string_bytes(x, st, &n) || st[BTSDEC_REG_RDI].k != ~0ull ||
		    n > MAX_STRING)
			return ST_ANY;
		*addr = st[BTSDEC_REG_RDI].v;
		*size = n;
		return n ? ST_OP : ST_NONE;
	default:
		return ST_ANY;
	}
}

bool rec_load_at(const struct btsdec_recover *r, size_t j, uint64_t *addr,
		 unsigned *size)
{
	const struct xinsn *x = &r->in[j];
	const struct rval *st = state(r, j);
	int reg = x->load == LD_RSP ? RSP : BTSDEC_REG_RBP;

	*size = x->load == LD_OP ? x->op[1].size : x->load == LD_RMW ? x->op[0].size : 8;
	switch (x->load) {
	case LD_OP:
		return rec_addr(r, x, &x->op[1], st, addr);
	case LD_RMW:
		return rec_addr(r, x, &x->op[0], st, addr);
	case LD_OP0:
		return rec_addr(r, x, &x->op[0], st, addr);
	case LD_RSP: case LD_RBP:
		*addr = st[reg].v;
		return st[reg].k == ~0ull;
	default:
		return false;
	}
}

enum store rec_store_at(const struct btsdec_recover *r, size_t j, uint64_t *addr,
			unsigned *size)
{
	enum store st = store_at(r, j, addr, size);

	/* across the top of the address space: the index cannot hold it */
	return st == ST_OP && *addr + *size - 1 < *addr ? ST_ANY : st;
}

/* Where instruction j loads (state S(j)) and what its result holds of
 * the loaded bytes: false when it proves nothing. */
static bool load_of(const struct btsdec_recover *r, size_t j, uint64_t *addr,
		    unsigned *size, struct rval *v)
{
	const struct xinsn *x = &r->in[j];
	const struct rval *st = state(r, j), *st1 = state(r, j + 1);
	uint64_t pc;

	switch (x->load) {
	case LD_OP:
		*size = x->op[1].size;
		*v = after(&x->op[0], st1);
		return rec_addr(r, x, &x->op[1], st, addr);
	case LD_RMW:
		*size = x->op[0].size;
		*v = (struct rval){ 0, 0 };
		for (unsigned k = 0; k < 8; k++)
			if (x->ld_known >> k & 1) {
				v->v |= (uint64_t)x->ld[k] << 8 * k;
				v->k |= 0xffull << 8 * k;
			}
		return rec_addr(r, x, &x->op[0], st, addr);
	case LD_OP0:
		*size = 8;
		if (!next_rip(r, j, &pc))
			return false;
		*v = known(pc, 8);
		return rec_addr(r, x, &x->op[0], st, addr);
	case LD_RSP:
		*size = 8;
		if (x->sem == S_POP) {
			if (x->op[0].reg == RSP)
				return false;
			*v = st1[x->op[0].reg];
		} else if (next_rip(r, j, &pc)) {
			*v = known(pc, 8);
		} else {
			return false;
		}
		if (st[RSP].k != ~0ull)
			return false;
		*addr = st[RSP].v;
		return true;
	case LD_RBP:
		*size = 8;
		*v = st1[BTSDEC_REG_RBP];
		if (st[BTSDEC_REG_RBP].k != ~0ull)
			return false;
		*addr = st[BTSDEC_REG_RBP].v;
		return true;
	default:
		return false;
	}
}

bool rec_loaded_byte(const struct btsdec_recover *r, size_t j, uint64_t addr,
		     uint8_t *byte)
{
	uint64_t a, off;
	unsigned size;
	struct rval v;

	if (!load_of(r, j, &a, &size, &v) || addr - a >= size)
		return false;
	off = addr - a;
	if ((v.k >> 8 * off & 0xff) != 0xff)
		return false;
	*byte = v.v >> 8 * off & 0xff;
	return true;
}
