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
	if (!len || !cs_disasm_iter(c->cs, &code, &len, &addr, c->insn))
		return BTSDEC_K_UNKNOWN;
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
