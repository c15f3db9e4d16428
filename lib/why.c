// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a value came from (btsdec-why.h): the instruction that last
 * defined a register or memory before a point of the value-recovery
 * engine's sequence, the operands it read with their recovered values,
 * and the chain of those followed back.  Reads the engine's state
 * (recover-int.h), stores nothing in it.  Called by btsdump why (and so
 * gdb's bts why); process context.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "insn-zydis.h"
#include "recover-int.h"
#include "btsdec-why.h"

/* rflags' RF is set by the CPU at a fault, by no instruction: every
 * decoded instruction "may write" it, so it names no definer. */
#define RFL_DEFINED (~F_RF)

/* gdb's names of the general-purpose registers' parts, by size. */
static const char *const names[16][4] = {
	{ "rax", "eax", "ax", "al" }, { "rbx", "ebx", "bx", "bl" },
	{ "rcx", "ecx", "cx", "cl" }, { "rdx", "edx", "dx", "dl" },
	{ "rsi", "esi", "si", "sil" }, { "rdi", "edi", "di", "dil" },
	{ "rbp", "ebp", "bp", "bpl" }, { "rsp", "esp", "sp", "spl" },
	{ "r8", "r8d", "r8w", "r8l" }, { "r9", "r9d", "r9w", "r9l" },
	{ "r10", "r10d", "r10w", "r10l" }, { "r11", "r11d", "r11w", "r11l" },
	{ "r12", "r12d", "r12w", "r12l" }, { "r13", "r13d", "r13w", "r13l" },
	{ "r14", "r14d", "r14w", "r14l" }, { "r15", "r15d", "r15w", "r15l" },
};
static const char *const high[4] = { "ah", "bh", "ch", "dh" };

static unsigned size_slot(unsigned size)
{
	return size >= 8 ? 0 : size == 4 ? 1 : size == 2 ? 2 : 3;
}

static uint64_t mask_of(unsigned size)
{
	return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

const char *btsdec_why_reg_name(const struct btsdec_why_value *v)
{
	if (v->reg == RIP)
		return "rip";
	if (v->reg == RFL)
		return "eflags";
	if (v->reg >= 16)
		return "?";
	if (v->shift == 8 && v->reg < 4)
		return high[v->reg];
	return names[v->reg][size_slot(v->size)];
}

static int parse_reg(const char *s, struct btsdec_why_value *v)
{
	static const struct { const char *name; uint8_t reg; } alias[] = {
		{ "rip", RIP }, { "pc", RIP }, { "eflags", RFL }, { "rflags", RFL },
		{ "fp", BTSDEC_REG_RBP },
	};

	memset(v, 0, sizeof(*v));
	v->kind = BTSDEC_WHY_REG;
	v->size = 8;
	for (size_t k = 0; k < sizeof(alias) / sizeof(alias[0]); k++)
		if (!strcasecmp(s, alias[k].name)) {
			v->reg = alias[k].reg;
			return 0;
		}
	for (unsigned k = 0; k < 4; k++)
		if (!strcasecmp(s, high[k])) {
			v->reg = k;
			v->size = 1;
			v->shift = 8;
			return 0;
		}
	for (unsigned g = 0; g < 16; g++)
		for (unsigned z = 0; z < 4; z++) {
			char alt[8];

			/* r8b..r15b: Intel's names of gdb's r8l..r15l */
			snprintf(alt, sizeof(alt), "r%ub", g);
			if (!strcasecmp(s, names[g][z]) || (z == 3 && g >= 8 && !strcasecmp(s, alt))) {
				v->reg = g;
				v->size = z == 0 ? 8 : z == 1 ? 4 : z == 2 ? 2 : 1;
				return 0;
			}
		}
	return -EINVAL;
}

static int parse_num(const char *s, const char *end, uint64_t *out)
{
	char buf[32], *e;

	if (end - s <= 0 || (size_t)(end - s) >= sizeof(buf) || *s == '-' || *s == '+')
		return -EINVAL;
	memcpy(buf, s, end - s);
	buf[end - s] = 0;
	errno = 0;
	*out = strtoull(buf, &e, 0);
	return errno || *e ? -EINVAL : 0;
}

int btsdec_why_parse(const char *s, struct btsdec_why_value *v)
{
	const char *comma;
	uint64_t size = 8;
	bool star = *s == '*';

	if (*s == '$')
		s++;
	if (!star && !strchr(s, ','))
		return parse_reg(s, v);
	memset(v, 0, sizeof(*v));
	v->kind = BTSDEC_WHY_MEM;
	v->addr_known = true;
	s += star;
	comma = strchr(s, ',');
	if (comma && (parse_num(comma + 1, comma + strlen(comma), &size) ||
		      (size != 1 && size != 2 && size != 4 && size != 8)))
		return -EINVAL;
	v->size = size;
	return parse_num(s, comma ? comma : s + strlen(s), &v->addr);
}

/* ---- One link ------------------------------------------------------------- */

static struct btsdec_why_value reg_value(const struct btsdec_recover *r, size_t at,
					 unsigned reg, unsigned size, unsigned shift)
{
	const struct rval *st = state(r, at);
	uint64_t m = mask_of(size);

	return (struct btsdec_why_value){
		.kind = BTSDEC_WHY_REG, .size = size, .reg = reg, .shift = shift,
		.val = (st[reg].v & st[reg].k) >> shift & m, .known = st[reg].k >> shift & m,
	};
}

static void mem_value(const struct btsdec_recover *r, size_t at, struct btsdec_why_value *v)
{
	struct rval m = { 0, 0 };

	if (v->addr_known)
		m = rec_mem(r, at, v->addr, v->size > 8 ? 8 : v->size);
	v->val = m.v & m.k;
	v->known = m.k;
}

static void add_op(struct btsdec_why_step *s, struct btsdec_why_value v, bool source)
{
	if (s->nr_ops == BTSDEC_WHY_MAX_OPS)
		return;
	s->source[s->nr_ops] = source;
	s->ops[s->nr_ops++] = v;
}

static void add_reg(const struct btsdec_recover *r, struct btsdec_why_step *s,
		    unsigned reg, unsigned size, unsigned shift, bool source)
{
	add_op(s, reg_value(r, s->insn, reg, size, shift), source);
}

/* Operand o of instruction j as read before it: a memory operand's
 * address registers follow it (not rsp, rbp: the frame, not the data). */
static void add_xop(const struct btsdec_recover *r, struct btsdec_why_step *s,
		    const struct xop *o, bool source)
{
	const struct xinsn *x = &r->in[s->insn];
	struct btsdec_why_value v = { .kind = BTSDEC_WHY_MEM, .size = o->size };

	switch (o->kind) {
	case OP_REG:
		add_reg(r, s, o->reg, o->size, o->shift, source);
		return;
	case OP_IMM:
		add_op(s, (struct btsdec_why_value){ .kind = BTSDEC_WHY_IMM, .size = o->size,
			.val = (uint64_t)o->imm & mask_of(o->size ? o->size : 8),
			.known = mask_of(o->size ? o->size : 8) }, false);
		return;
	case OP_MEM:
		v.addr_known = rec_addr(r, x, o, state(r, s->insn), &v.addr);
		if (v.size > 8)
			v.size = 8;
		mem_value(r, s->insn, &v);
		add_op(s, v, source);
		if (o->base != NOREG && o->base != RSP && o->base != BTSDEC_REG_RBP)
			add_reg(r, s, o->base, 8, 0, source);
		if (o->index != NOREG && o->index != RSP && o->index != BTSDEC_REG_RBP)
			add_reg(r, s, o->index, 8, 0, source);
		return;
	default:
		return;
	}
}

/* An implicit 8-byte load at a register (pop, ret: rsp; leave: rbp). */
static void add_at_reg(const struct btsdec_recover *r, struct btsdec_why_step *s,
		       unsigned reg)
{
	struct xop o = { .kind = OP_MEM, .size = 8, .base = reg, .index = NOREG };

	add_xop(r, s, &o, true);
	add_reg(r, s, reg, 8, 0, false);
}

static bool zeroing(const struct xinsn *x)
{
	return (x->sem == S_XOR || x->sem == S_SUB) && x->op[0].kind == OP_REG &&
	       x->op[1].kind == OP_REG && x->op[0].reg == x->op[1].reg;
}

/* The operands an arithmetic instruction read (all sources). */
static void alu_ops(const struct btsdec_recover *r, struct btsdec_why_step *s)
{
	const struct xinsn *x = &r->in[s->insn];
	bool src = !zeroing(x);
	unsigned first = x->sem == S_IMUL && x->nops == 3 ? 1 : 0;

	for (unsigned k = first; k < x->nops; k++)
		add_xop(r, s, &x->op[k], src);
}

/* The sources of what arithmetic, setcc and syscall write, the same for
 * a register and for memory (a read-modify-write: op[0] is both). */
static void common_sources(const struct btsdec_recover *r, struct btsdec_why_step *s)
{
	switch (r->in[s->insn].sem) {
	case S_ADD: case S_SUB: case S_ADC: case S_SBB: case S_AND: case S_OR: case S_XOR:
	case S_CMP: case S_TEST: case S_INC: case S_DEC: case S_NEG: case S_NOT:
	case S_SHL: case S_SHR: case S_SAR: case S_IMUL:
		alu_ops(r, s);
		return;
	case S_SETCC:
		add_reg(r, s, RFL, 8, 0, true);
		return;
	case S_SYSCALL:	/* its number: the kernel made the value */
		add_reg(r, s, BTSDEC_REG_RAX, 8, 0, false);
		return;
	default:
		return;
	}
}

/* The sources of register reg written by instruction s->insn. */
static void reg_sources(const struct btsdec_recover *r, struct btsdec_why_step *s,
			unsigned reg)
{
	const struct xinsn *x = &r->in[s->insn];

	if (reg == RIP) {
		if (x->sem == S_RET)
			add_at_reg(r, s, RSP);
		else if ((x->sem == S_CALL || x->sem == S_JMP) && x->op[0].kind != OP_IMM)
			add_xop(r, s, &x->op[0], true);
		else if (x->sem == S_JCC)
			add_reg(r, s, RFL, 8, 0, true);
		return;
	}
	switch (x->sem) {
	case S_MOV: case S_MOVZX: case S_MOVSX:
		add_xop(r, s, &x->op[1], true);
		return;
	case S_CMOV:
		add_xop(r, s, &x->op[1], true);
		add_reg(r, s, RFL, 8, 0, false);
		if (s->maybe)
			add_xop(r, s, &x->op[0], true);
		return;
	case S_LEA:
		if (x->op[1].base != NOREG)
			add_reg(r, s, x->op[1].base, 8, 0, true);
		if (x->op[1].index != NOREG)
			add_reg(r, s, x->op[1].index, 8, 0, true);
		return;
	case S_CDQE: case S_CDQ: case S_CQO:
		add_reg(r, s, BTSDEC_REG_RAX, x->sem == S_CQO ? 8 : 4, 0, true);
		return;
	case S_XCHG:
		add_xop(r, s, &x->op[x->op[0].reg == reg ? 1 : 0], true);
		return;
	case S_POP:
		if (reg == RSP)
			add_reg(r, s, RSP, 8, 0, true);
		else
			add_at_reg(r, s, RSP);
		return;
	case S_LEAVE:
		if (reg == BTSDEC_REG_RBP)
			add_at_reg(r, s, BTSDEC_REG_RBP);
		else
			add_reg(r, s, BTSDEC_REG_RBP, 8, 0, true);
		return;
	case S_PUSH: case S_CALL: case S_RET:
		add_reg(r, s, RSP, 8, 0, true);
		return;
	case S_STOS: case S_MOVS:
		add_reg(r, s, reg, 8, 0, true);
		if (x->rep && reg != BTSDEC_REG_RCX)
			add_reg(r, s, BTSDEC_REG_RCX, 8, 0, true);
		return;
	default:
		common_sources(r, s);
		return;
	}
}

/* The sources of the memory instruction s->insn stored. */
static void mem_sources(const struct btsdec_recover *r, struct btsdec_why_step *s)
{
	const struct xinsn *x = &r->in[s->insn];

	switch (x->sem) {
	case S_MOV:
		add_xop(r, s, &x->op[1], true);
		return;
	case S_PUSH:
		add_xop(r, s, &x->op[0], true);
		return;
	case S_CALL:	/* the return address */
		add_op(s, (struct btsdec_why_value){ .kind = BTSDEC_WHY_IMM, .size = 8,
			.val = x->addr + x->len, .known = ~0ull }, false);
		return;
	case S_STOS:
		add_reg(r, s, BTSDEC_REG_RAX, x->st_size, 0, true);
		return;
	case S_MOVS:
		add_at_reg(r, s, BTSDEC_REG_RSI);
		return;
	default:
		common_sources(r, s);
		return;
	}
}

static void disasm(const struct btsdec_recover *r, struct btsdec_why_step *s)
{
	uint8_t code[16];
	const uint8_t *p = code;
	size_t len;
	uint64_t a = s->pc;

	s->text[0] = 0;
	if (r->in[s->insn].sem == S_GAP || !r->read)
		return;
	len = r->read(r->arg, s->pc, code, r->in[s->insn].len ? r->in[s->insn].len : 15);
	if (len && cs_disasm_iter(r->cs, &p, &len, &a, r->ci))
		snprintf(s->text, sizeof(s->text), "%s%s%s", r->ci->mnemonic,
			 r->ci->op_str[0] ? " " : "", r->ci->op_str);
	else if (!zy_text(code, len, s->pc, s->text, sizeof(s->text)))
		s->text[0] = 0;
}

/* The newest instruction before at that may write bits m of reg. */
static bool reg_writer(const struct btsdec_recover *r, size_t at, unsigned reg,
		       uint64_t m, size_t *j, bool *maybe)
{
	int taken;

	for (size_t k = at; k-- > 0;) {
		if (!(r->in[k].wmask[reg] & m))
			continue;
		taken = r->in[k].sem == S_GAP ? 1 : rec_cmov_taken(r, k);
		if (!taken)	/* a cmovcc that did not move */
			continue;
		*j = k;
		/* a cmovcc that may not have moved; an instruction not
		 * modelled, which may only have read the register */
		*maybe = taken < 0 || r->in[k].sem == S_OTHER;
		return true;
	}
	return false;
}

/* The newest instruction before at that wrote, or may have written, any
 * byte of memory value v. */
static enum btsdec_why_from mem_writer(const struct btsdec_recover *r, size_t at,
				       const struct btsdec_why_value *v, size_t *j,
				       bool *partial)
{
	enum store kind[8], best = ST_NONE;
	size_t who[8], newest = 0;
	unsigned n = v->size > 8 ? 8 : v->size;

	for (unsigned k = 0; k < n; k++) {
		if (v->addr + k < r->mem_lo || v->addr + k >= r->mem_hi)
			return BTSDEC_WHY_NOT_FOLLOWED;
		kind[k] = rec_mem_writer(r, at, v->addr + k, &who[k]);
		if (kind[k] != ST_NONE && (best == ST_NONE || who[k] > newest)) {
			best = kind[k];
			newest = who[k];
		}
	}
	*partial = false;
	for (unsigned k = 0; k < n; k++)
		*partial |= best != ST_NONE && (kind[k] == ST_NONE || who[k] != newest);
	*j = newest;
	if (best == ST_NONE)
		return BTSDEC_WHY_BEFORE;
	if (r->in[newest].sem == S_GAP)
		return BTSDEC_WHY_GAP;
	if (r->in[newest].sem == S_SYSCALL)
		return BTSDEC_WHY_SYSCALL;
	/* an instruction not modelled may only have read its memory operand
	 * (capstone 4 cannot tell): it may have written it, no more */
	return best == ST_OP && r->in[newest].sem != S_OTHER ? BTSDEC_WHY_INSN :
	       BTSDEC_WHY_ALIAS;
}

static enum btsdec_why_from kind_of(const struct xinsn *x)
{
	return x->sem == S_GAP ? BTSDEC_WHY_GAP : x->sem == S_SYSCALL ? BTSDEC_WHY_SYSCALL :
	       BTSDEC_WHY_INSN;
}

int btsdec_why_step(const struct btsdec_recover *r, const struct btsdec_why_value *what,
		    size_t at, struct btsdec_why_step *s)
{
	uint64_t m;

	if (!r->s || at > r->nr || (what->kind == BTSDEC_WHY_REG && what->reg >= NREG))
		return -ERANGE;
	memset(s, 0, sizeof(*s));
	s->parent = SIZE_MAX;
	s->at = at;
	s->what = *what;
	if (what->kind == BTSDEC_WHY_REG) {
		s->what = reg_value(r, at, what->reg, what->size, what->shift);
		m = mask_of(what->size) << what->shift;
		if (what->reg == RFL)
			m &= RFL_DEFINED;
		s->from = reg_writer(r, at, what->reg, m, &s->insn, &s->maybe) ?
			  kind_of(&r->in[s->insn]) : BTSDEC_WHY_BEFORE;
	} else {
		mem_value(r, at, &s->what);
		s->from = !what->addr_known ? BTSDEC_WHY_NOT_FOLLOWED :
			  mem_writer(r, at, &s->what, &s->insn, &s->partial);
	}
	if (s->from == BTSDEC_WHY_BEFORE || s->from == BTSDEC_WHY_NOT_FOLLOWED)
		return 0;
	s->pc = r->in[s->insn].addr;
	disasm(r, s);
	if (s->from == BTSDEC_WHY_GAP || s->from == BTSDEC_WHY_ALIAS)
		return 0;
	if (what->kind == BTSDEC_WHY_REG)
		reg_sources(r, s, what->reg);
	else
		mem_sources(r, s);
	return 0;
}

/* ---- The chain ------------------------------------------------------------ */

static bool seen(const struct btsdec_why *w, const struct btsdec_why_value *v, size_t at)
{
	for (size_t k = 0; k < w->nr; k++) {
		const struct btsdec_why_value *o = &w->steps[k].what;

		if (w->steps[k].at == at && o->kind == v->kind && o->size == v->size &&
		    (v->kind == BTSDEC_WHY_REG ? o->reg == v->reg && o->shift == v->shift :
		     o->addr == v->addr))
			return true;
	}
	return false;
}

static int push(struct btsdec_why *w, const struct btsdec_recover *r,
		const struct btsdec_why_value *v, size_t at, size_t parent, unsigned depth)
{
	struct btsdec_why_step *n;
	int rc;

	if (seen(w, v, at))
		return 0;
	n = realloc(w->steps, (w->nr + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	w->steps = n;
	rc = btsdec_why_step(r, v, at, &w->steps[w->nr]);
	if (rc)
		return rc;
	w->steps[w->nr].parent = parent;
	w->steps[w->nr].depth = depth;
	w->nr++;
	return 0;
}

int btsdec_why_explain(const struct btsdec_recover *r, const struct btsdec_why_value *what,
		       size_t at, unsigned max_depth, size_t max_steps,
		       struct btsdec_why *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->nr_insns = r->nr;
	rc = push(out, r, what, at, SIZE_MAX, 0);
	for (size_t k = 0; !rc && k < out->nr; k++) {
		const struct btsdec_why_step s = out->steps[k];

		if (s.from != BTSDEC_WHY_INSN || s.depth >= max_depth)
			continue;
		for (unsigned o = 0; o < s.nr_ops && !rc; o++) {
			if (!s.source[o] || s.ops[o].kind == BTSDEC_WHY_IMM ||
			    (s.ops[o].kind == BTSDEC_WHY_MEM && !s.ops[o].addr_known))
				continue;
			if (out->nr >= max_steps) {
				out->truncated = true;
				return 0;
			}
			rc = push(out, r, &s.ops[o], s.insn, k, s.depth + 1);
		}
	}
	if (rc)
		btsdec_why_fini(out);
	return rc;
}

void btsdec_why_fini(struct btsdec_why *w)
{
	free(w->steps);
	w->steps = NULL;
	w->nr = 0;
}
