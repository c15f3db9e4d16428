// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fallback decoder (lib/insn-zydis.h): Zydis 4 for what capstone 4
 * cannot decode.  Every operand Zydis marks written, explicit or hidden,
 * counts: a general register is written whole (never a partial write
 * proven), memory at an address of 64-bit registers and a displacement
 * up to 64 bytes is a store there, anything else (VSIB scatters, AMX
 * tiles, fs:/gs:, sizes past 64 bytes) is a store anywhere.  Process
 * context.
 */
#include <Zydis/Zydis.h>
#include <string.h>

#include "btsdec-recover.h"
#include "insn-zydis.h"

/* Zydis' 64-bit general registers, in BTSDEC_REG_* order. */
static const ZydisRegister gpr64[16] = {
	ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
	ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP,
	ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
	ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
};

/* BTSDEC_REG_* of a general register of any width, or ZY_NOREG. */
static uint8_t gpr_of(ZydisRegister r)
{
	ZydisRegister q;

	switch (ZydisRegisterGetClass(r)) {
	case ZYDIS_REGCLASS_GPR8: case ZYDIS_REGCLASS_GPR16:
	case ZYDIS_REGCLASS_GPR32: case ZYDIS_REGCLASS_GPR64:
		break;
	default:
		return ZY_NOREG;
	}
	q = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	for (uint8_t i = 0; i < 16; i++)
		if (gpr64[i] == q)
			return i;
	return ZY_NOREG;
}

/* An address register: BTSDEC_REG_* of a 64-bit one, ZY_NOREG for none;
 * *bad for any other. */
static uint8_t addr_reg(ZydisRegister r, bool *bad)
{
	if (r == ZYDIS_REGISTER_NONE)
		return ZY_NOREG;
	if (ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR64) {
		*bad = true;
		return ZY_NOREG;
	}
	return gpr_of(r);
}

static void store(struct zy_insn *z, const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *o, uint64_t addr)
{
	const ZydisDecodedOperandMem *m = &o->mem;
	bool bad = false;

	if (z->store || m->type != ZYDIS_MEMOP_TYPE_MEM || !o->size || o->size > 512 ||
	    o->size % 8 || m->segment == ZYDIS_REGISTER_FS ||
	    m->segment == ZYDIS_REGISTER_GS) {
		z->store_any = true;
		return;
	}
	z->disp = m->disp.has_displacement ? m->disp.value : 0;
	if (m->base == ZYDIS_REGISTER_RIP) {
		z->base = ZY_NOREG;
		z->disp += (int64_t)(addr + in->length);
	} else {
		z->base = addr_reg(m->base, &bad);
	}
	z->index = addr_reg(m->index, &bad);
	z->scale = m->scale;
	if (bad) {
		z->store_any = true;
		return;
	}
	z->store = true;
	z->st_size = (uint8_t)(o->size / 8);
}

static bool decode(const uint8_t *code, size_t len, ZydisDecodedInstruction *in,
		   ZydisDecodedOperand *ops)
{
	ZydisDecoder dec;

	return len && ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
						    ZYDIS_STACK_WIDTH_64)) &&
	       ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, in, ops));
}

bool zy_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t size)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisFormatter fmt;

	return decode(code, len, &in, ops) &&
	       ZYAN_SUCCESS(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL)) &&
	       ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &in, ops,
			in.operand_count_visible, buf, size, addr, NULL));
}

bool zy_decode(const uint8_t *code, size_t len, uint64_t addr, struct zy_insn *z)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	const ZydisAccessedFlags *f;
	uint64_t w;

	memset(z, 0, sizeof(*z));
	z->base = z->index = ZY_NOREG;
	if (!decode(code, len, &in, ops))
		return false;
	z->len = in.length;
	z->branch = in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE;
	switch (in.meta.category) {
	case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR: case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET: case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSTEM:
		z->branch = true;
		break;
	case ZYDIS_CATEGORY_AMX_TILE: case ZYDIS_CATEGORY_STRINGOP:
		z->all = true;
		break;
	default:
		break;
	}
	for (unsigned k = 0; k < in.operand_count; k++) {
		const ZydisDecodedOperand *o = &ops[k];
		uint8_t r;

		if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (o->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			store(z, &in, o, addr);
		} else if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			r = gpr_of(o->reg.value);
			if (r != ZY_NOREG)
				z->gpr |= 1u << r;
			else if (o->reg.value == ZYDIS_REGISTER_RIP ||
				 o->reg.value == ZYDIS_REGISTER_EIP)
				z->branch = true;
			else if (o->reg.value == ZYDIS_REGISTER_RFLAGS ||
				 o->reg.value == ZYDIS_REGISTER_EFLAGS ||
				 o->reg.value == ZYDIS_REGISTER_FLAGS)
				z->flags = ~0ull;
		}
	}
	f = in.cpu_flags;
	w = f ? (uint64_t)(f->modified | f->set_0 | f->set_1 | f->undefined) : 0;
	z->flags |= w;
	return true;
}
