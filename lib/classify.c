// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Branch classification: disassembles the instruction at a record's `from`
 * with capstone and says what kind of branch it is (call, return, jump,
 * conditional, syscall, ...).  An instruction that is no branch means the
 * record is an asynchronous event or a fault.  Process context.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>

#include "btsdec.h"
#include "insn-zydis.h"

struct btsdec_classifier {
	csh cs;
	cs_insn *insn;
};

static const char *const kind_names[BTSDEC_K__MAX] = {
	[BTSDEC_K_UNKNOWN] = "unknown",
	[BTSDEC_K_CALL] = "call",
	[BTSDEC_K_RETURN] = "return",
	[BTSDEC_K_JUMP] = "jump",
	[BTSDEC_K_COND] = "cond",
	[BTSDEC_K_SYSCALL] = "syscall",
	[BTSDEC_K_SYSRET] = "sysret",
	[BTSDEC_K_IRET] = "iret",
	[BTSDEC_K_INTERRUPT] = "interrupt",
	[BTSDEC_K_MARKER] = "marker",
};

const char *btsdec_kind_name(enum btsdec_kind k)
{
	return (unsigned int)k < BTSDEC_K__MAX ? kind_names[k] : "invalid";
}

int btsdec_classifier_new(struct btsdec_classifier **out, struct btsdec_err *err)
{
	struct btsdec_classifier *c = calloc(1, sizeof(*c));

	if (!c)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) != CS_ERR_OK) {
		free(c);
		return btsdec_fail(err, -ENOSYS, "cs_open: capstone without x86");
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	c->insn = cs_malloc(c->cs);
	if (!c->insn) {
		cs_close(&c->cs);
		free(c);
		return btsdec_fail(err, -ENOMEM, "cs_malloc: out of memory");
	}
	*out = c;
	return 0;
}

void btsdec_classifier_free(struct btsdec_classifier *c)
{
	if (!c)
		return;
	cs_free(c->insn, 1);
	cs_close(&c->cs);
	free(c);
}

static bool operand_indirect(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	return x->op_count > 0 && x->operands[0].type != X86_OP_IMM;
}

static enum btsdec_kind kind_of(unsigned int id)
{
	switch (id) {
	case X86_INS_CALL: case X86_INS_LCALL:
		return BTSDEC_K_CALL;
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
		return BTSDEC_K_RETURN;
	case X86_INS_JMP: case X86_INS_LJMP:
		return BTSDEC_K_JUMP;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return BTSDEC_K_COND;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT:
	case X86_INS_INT1: case X86_INS_INT3: case X86_INS_INTO:
		return BTSDEC_K_SYSCALL;
	case X86_INS_SYSRET: case X86_INS_SYSEXIT:
		return BTSDEC_K_SYSRET;
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
		return BTSDEC_K_IRET;
	}
	return BTSDEC_K_INTERRUPT;
}

enum btsdec_kind btsdec_classify_insn(struct btsdec_classifier *c,
				      const uint8_t *code, size_t len, uint64_t addr,
				      bool *indirect, size_t *size)
{
	enum btsdec_kind k;

	*indirect = false;
	*size = 0;
	if (!len || !cs_disasm_iter(c->cs, &code, &len, &addr, c->insn)) {
		struct zy_insn z;

		/* what capstone 4 cannot decode (AVX-512): no branch, or
		 * not classified */
		if (zy_decode(code, len, addr, &z) && !z.branch) {
			*size = z.len;
			return BTSDEC_K_INTERRUPT;
		}
		return BTSDEC_K_UNKNOWN;
	}
	*size = c->insn->size;
	k = kind_of(c->insn->id);
	if (k == BTSDEC_K_CALL || k == BTSDEC_K_JUMP)
		*indirect = operand_indirect(c->insn);
	return k;
}

enum btsdec_kind btsdec_classify(struct btsdec_classifier *c,
				 const uint8_t *code, size_t len, uint64_t addr,
				 bool *indirect)
{
	size_t size;

	return btsdec_classify_insn(c, code, len, addr, indirect, &size);
}

/* ---- where a call or jump goes --------------------------------------- */

/* The index in btsdec_insn_env.gpr of a 64-bit general register, or -1. */
static int gpr_index(x86_reg r)
{
	static const x86_reg gpr[BTSDEC_NR_GPR] = {
		X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
		X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	for (int i = 0; i < BTSDEC_NR_GPR; i++)
		if (gpr[i] == r)
			return i;
	return -1;
}

/* A memory operand's address: base + index * scale + disp, rip-relative
 * from the next instruction.  -ENOENT for a segment override (fs, gs) or
 * a register that is not a 64-bit general one. */
static int mem_address(const cs_insn *insn, const x86_op_mem *m,
		       const struct btsdec_insn_env *env, uint64_t *out)
{
	uint64_t a = (uint64_t)m->disp;
	int b = gpr_index(m->base), x = gpr_index(m->index);

	if (m->segment != X86_REG_INVALID || insn->detail->x86.addr_size != 8)
		return -ENOENT;
	if (m->base == X86_REG_RIP)
		a += insn->address + insn->size;
	else if (m->base != X86_REG_INVALID && b < 0)
		return -ENOENT;
	else if (b >= 0)
		a += env->gpr[b];
	if (m->index != X86_REG_INVALID && x < 0)
		return -ENOENT;
	if (x >= 0)
		a += env->gpr[x] * (uint64_t)m->scale;
	*out = a;
	return 0;
}

int btsdec_branch_target(struct btsdec_classifier *c, const uint8_t *code,
			 size_t len, uint64_t addr, const struct btsdec_insn_env *env,
			 uint64_t *target, size_t *size)
{
	const cs_x86_op *op;
	enum btsdec_kind k;
	uint64_t a;
	int r;

	*size = 0;
	if (!len || !cs_disasm_iter(c->cs, &code, &len, &addr, c->insn))
		return -EINVAL;
	*size = c->insn->size;
	k = kind_of(c->insn->id);
	if (c->insn->id == X86_INS_LCALL || c->insn->id == X86_INS_LJMP ||
	    (k != BTSDEC_K_CALL && k != BTSDEC_K_JUMP) || c->insn->detail->x86.op_count != 1)
		return -EINVAL;
	op = &c->insn->detail->x86.operands[0];
	switch (op->type) {
	case X86_OP_IMM:
		*target = (uint64_t)op->imm;
		return 0;
	case X86_OP_REG:
		r = gpr_index(op->reg);
		if (r < 0)
			return -ENOENT;
		*target = env->gpr[r];
		return 0;
	case X86_OP_MEM:
		if (op->size != 8 || mem_address(c->insn, &op->mem, env, &a) ||
		    env->read(env->arg, a, target, sizeof(*target)) != sizeof(*target))
			return -ENOENT;
		return 0;
	default:
		return -ENOENT;
	}
}
