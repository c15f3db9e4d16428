// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A C expression placed for btsdec_why (btsdec-why.h): a variable (a local
 * or parameter of the function running at a point of the recovery engine's
 * sequence, or a global: of its compilation unit, else the one of that
 * name in any module) then .FIELD, ->FIELD and
 * [N], located with libdw (DW_AT_location, DW_AT_frame_base, the CFA from
 * the module's CFI) using the registers and memory the engine proves
 * there; nothing unproven is used.  Called by btsdump why; process context.
 */
#include <ctype.h>
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "recover-int.h"
#include "btsdec-why.h"

#define MAX_NAME 128

/* DWARF's x86-64 register numbers (the psABI's), as ours. */
static const uint8_t dwarf_regs[17] = {
	BTSDEC_REG_RAX, BTSDEC_REG_RDX, BTSDEC_REG_RCX, BTSDEC_REG_RBX, BTSDEC_REG_RSI,
	BTSDEC_REG_RDI, BTSDEC_REG_RBP, BTSDEC_REG_RSP, BTSDEC_REG_R8, BTSDEC_REG_R9,
	BTSDEC_REG_R10, BTSDEC_REG_R11, BTSDEC_REG_R12, BTSDEC_REG_R13, BTSDEC_REG_R14,
	BTSDEC_REG_R15, BTSDEC_REG_RIP,
};

/* Where the expression is evaluated. */
struct place {
	const struct btsdec_recover *r;
	size_t at;		/* the state used */
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	uint64_t pc;
	struct btsdec_err *err;
};

static int reg_of(const struct place *p, unsigned dw, uint64_t *v)
{
	const struct rval *st;

	if (dw >= sizeof(dwarf_regs))
		return btsdec_fail(p->err, -EINVAL, "DWARF register %u not followed", dw);
	st = &state(p->r, p->at)[dwarf_regs[dw]];
	if (st->k != ~0ull)
		return btsdec_fail(p->err, -ENODATA, "%s is not known there",
				   btsdec_reg_name(dwarf_regs[dw]));
	*v = st->v;
	return 0;
}

/* The canonical frame address at the pc, from the module's CFI. */
static int cfa(const struct place *p, uint64_t *out)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(p->mod, &bias);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t n;
	int rc;

	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(p->mod, &bias);
	/* libdw gives a register-plus-offset rule as DW_OP_bregx */
	if (!cfi || dwarf_cfi_addrframe(cfi, p->pc - bias, &fr) || dwarf_frame_cfa(fr, &ops, &n) ||
	    n != 1 || ops[0].atom != DW_OP_bregx) {
		free(fr);
		return btsdec_fail(p->err, -EINVAL, "no CFA rule understood at 0x%llx",
				   (unsigned long long)p->pc);
	}
	rc = reg_of(p, ops[0].number, out);
	*out += ops[0].number2;
	free(fr);
	return rc;
}

/* Location expression of attribute name of die at the pc, one operation
 * (a register, an address, a register or the frame base plus an offset). */
static int locate(const struct place *p, Dwarf_Die *die, Dwarf_Die *fn,
		  struct btsdec_why_value *v)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops, *fops;
	size_t n, fn_n;
	uint64_t base;
	int rc;

	if (!dwarf_attr_integrate(die, DW_AT_location, &at) ||
	    dwarf_getlocation_addr(&at, p->pc - p->bias, &ops, &n, 1) != 1 || n != 1)
		return btsdec_fail(p->err, -EINVAL, "%s: no location at 0x%llx (optimized out?)",
				   dwarf_diename(die), (unsigned long long)p->pc);
	v->kind = BTSDEC_WHY_MEM;
	v->addr_known = true;
	if (ops[0].atom == DW_OP_addr) {
		v->addr = ops[0].number + p->bias;
		return 0;
	}
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg16) {
		v->kind = BTSDEC_WHY_REG;
		v->reg = dwarf_regs[ops[0].atom - DW_OP_reg0];
		return 0;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg16) {
		rc = reg_of(p, ops[0].atom - DW_OP_breg0, &v->addr);
		v->addr += ops[0].number;
		return rc;
	}
	if (ops[0].atom != DW_OP_fbreg || !fn ||
	    !dwarf_attr_integrate(fn, DW_AT_frame_base, &at) ||
	    dwarf_getlocation_addr(&at, p->pc - p->bias, &fops, &fn_n, 1) != 1 || fn_n != 1)
		return btsdec_fail(p->err, -EINVAL, "%s: location not understood",
				   dwarf_diename(die));
	if (fops[0].atom == DW_OP_call_frame_cfa)
		rc = cfa(p, &base);
	else if (fops[0].atom >= DW_OP_breg0 && fops[0].atom <= DW_OP_breg16)
		rc = reg_of(p, fops[0].atom - DW_OP_breg0, &base), base += fops[0].number;
	else
		rc = btsdec_fail(p->err, -EINVAL, "frame base not understood");
	v->addr = base + ops[0].number;
	return rc;
}

/* The type of die with typedefs and qualifiers peeled. */
static bool type_of(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute at;

	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
		return false;
	while (dwarf_tag(type) == DW_TAG_typedef || dwarf_tag(type) == DW_TAG_const_type ||
	       dwarf_tag(type) == DW_TAG_volatile_type || dwarf_tag(type) == DW_TAG_restrict_type)
		if (!dwarf_attr_integrate(type, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
			return false;
	return true;
}

/* The next name of s into name: its length, 0 if none. */
static size_t ident(const char *s, char name[MAX_NAME])
{
	size_t n = 0;

	while ((isalnum((unsigned char)s[n]) || s[n] == '_') && n < MAX_NAME - 1)
		n++;
	if (!n || isdigit((unsigned char)s[0]) || isalnum((unsigned char)s[n]) || s[n] == '_')
		return 0;
	memcpy(name, s, n);
	name[n] = 0;
	return n;
}

/* The 8-byte pointer at v, proven at the point. */
static int deref(const struct place *p, struct btsdec_why_value *v)
{
	struct rval m;

	if (v->kind != BTSDEC_WHY_MEM)
		return btsdec_fail(p->err, -EINVAL, "a pointer in a register: ask for the register");
	m = rec_mem(p->r, p->at, v->addr, 8);
	if (m.k != ~0ull)
		return btsdec_fail(p->err, -ENODATA, "the pointer at 0x%llx is not known there",
				   (unsigned long long)v->addr);
	v->addr = m.v;
	return 0;
}

/* .FIELD of the struct or union type (type becomes the field's). */
static int member(const struct place *p, Dwarf_Die *type, const char *name,
		  struct btsdec_why_value *v)
{
	Dwarf_Die child;
	Dwarf_Attribute at;
	Dwarf_Word off = 0;

	if ((dwarf_tag(type) != DW_TAG_structure_type && dwarf_tag(type) != DW_TAG_union_type) ||
	    dwarf_child(type, &child))
		return btsdec_fail(p->err, -EINVAL, ".%s: not a struct or union", name);
	do {
		const char *n = dwarf_diename(&child);

		if (dwarf_tag(&child) != DW_TAG_member || !n || strcmp(n, name))
			continue;
		if (dwarf_attr_integrate(&child, DW_AT_data_member_location, &at) &&
		    dwarf_formudata(&at, &off))
			return btsdec_fail(p->err, -EINVAL, ".%s: offset not understood", name);
		v->addr += off;
		return type_of(&child, type) ? 0 :
		       btsdec_fail(p->err, -EINVAL, ".%s: no type", name);
	} while (dwarf_siblingof(&child, &child) == 0);
	return btsdec_fail(p->err, -ENOENT, "no member %s", name);
}

/* How many subranges (dimensions) array type has. */
static int dimensions(Dwarf_Die *type)
{
	Dwarf_Die child;
	int n = 0;

	if (dwarf_child(type, &child))
		return 0;
	do
		n += dwarf_tag(&child) == DW_TAG_subrange_type;
	while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* The postfix operators of s on v of type type. */
static int postfix(const struct place *p, const char *s, Dwarf_Die *type,
		   struct btsdec_why_value *v)
{
	char name[MAX_NAME], *end;
	Dwarf_Word size;
	unsigned long long n;
	size_t len;
	int rc;

	while (*s) {
		if (v->kind != BTSDEC_WHY_MEM)
			return btsdec_fail(p->err, -EINVAL, "a variable in a register: ask for "
					   "the register");
		if (*s == '[') {
			n = strtoull(s + 1, &end, 0);
			if (!isdigit((unsigned char)s[1]) || *end != ']')
				return btsdec_fail(p->err, -EINVAL, "[N]: N a number");
			if (dwarf_tag(type) == DW_TAG_array_type && dimensions(type) != 1)
				return btsdec_fail(p->err, -EINVAL, "[]: an array of several "
						   "dimensions is not followed");
			if (dwarf_tag(type) == DW_TAG_pointer_type && (rc = deref(p, v)))
				return rc;
			else if (dwarf_tag(type) != DW_TAG_pointer_type &&
				 dwarf_tag(type) != DW_TAG_array_type)
				return btsdec_fail(p->err, -EINVAL, "[]: not an array or pointer");
			if (!type_of(type, type) || dwarf_aggregate_size(type, &size))
				return btsdec_fail(p->err, -EINVAL, "[]: element size not known");
			v->addr += n * size;
			s = end + 1;
		} else if (*s == '.' || (s[0] == '-' && s[1] == '>')) {
			if (*s == '-') {
				if (dwarf_tag(type) != DW_TAG_pointer_type)
					return btsdec_fail(p->err, -EINVAL, "->: not a pointer");
				if ((rc = deref(p, v)) || !type_of(type, type))
					return rc ? rc : btsdec_fail(p->err, -EINVAL, "->: void *");
				s++;
			}
			if (!(len = ident(s + 1, name)))
				return btsdec_fail(p->err, -EINVAL, "a field name after %c", *s);
			if ((rc = member(p, type, name, v)))
				return rc;
			s += 1 + len;
		} else {
			return btsdec_fail(p->err, -EINVAL, "'%c': only .FIELD, ->FIELD and [N] "
					   "follow a variable", *s);
		}
	}
	return 0;
}

/* A global variable name with a location, in any compilation unit of
 * any module (not in the scopes at the pc): the one, or none when none
 * or several define it (static variables of two files, two libraries:
 * which one is meant cannot be told). */
struct global {
	const char *name;
	Dwarf_Die var;
	Dwarf_Addr bias;
	int found;
};

static void global_in_cu(struct global *g, Dwarf_Die *cu, Dwarf_Addr bias)
{
	Dwarf_Die child;
	const char *n;

	if (dwarf_child(cu, &child))
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_variable || !(n = dwarf_diename(&child)) ||
		    strcmp(n, g->name) || !dwarf_hasattr(&child, DW_AT_location))
			continue;
		if (!g->found++) {
			g->var = child;
			g->bias = bias;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int global_in_module(Dwfl_Module *mod, void **user, const char *name,
			    Dwarf_Addr start, void *arg)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	(void)user, (void)name, (void)start;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)))
		global_in_cu(arg, cu, bias);
	return DWARF_CB_OK;
}

static int find_global(struct place *p, const char *name, Dwarf_Die *var, struct btsdec_sym *sym)
{
	struct global g = { .name = name };

	dwfl_getmodules(btsdec_sym_dwfl(sym), global_in_module, &g, 0);
	if (g.found > 1)
		return btsdec_fail(p->err, -EINVAL, "%s: %d globals of that name (files or "
				   "libraries): ambiguous", name, g.found);
	if (!g.found)
		return btsdec_fail(p->err, -ENOENT, "no variable %s at 0x%llx", name,
				   (unsigned long long)p->pc);
	*var = g.var;
	p->bias = g.bias;
	return 0;
}

/* The newest point at or before at whose pc a module with DWARF covers:
 * at itself, or (the final pc in no function: a call through NULL) the
 * last instruction run. */
static bool find_place(const struct btsdec_recover *r, struct btsdec_sym *sym, size_t at,
		       struct place *p, Dwarf_Die *cu)
{
	Dwfl *dwfl = btsdec_sym_dwfl(sym);

	for (size_t i = at + 1; i-- > 0 && i + 2 > at;) {
		const struct rval *st = state(r, i);

		if (st[RIP].k != ~0ull || (i < r->nr && r->in[i].sem == S_GAP))
			continue;
		p->pc = st[RIP].v;
		p->at = i;
		p->mod = dwfl ? dwfl_addrmodule(dwfl, p->pc) : NULL;
		if (p->mod && dwfl_module_addrdie(p->mod, p->pc, &p->bias) &&
		    dwfl_module_getdwarf(p->mod, &p->bias)) {
			*cu = *dwfl_module_addrdie(p->mod, p->pc, &p->bias);
			return true;
		}
	}
	return false;
}

int btsdec_why_eval(const struct btsdec_recover *r, struct btsdec_sym *sym, const char *expr,
		    size_t at, struct btsdec_why_value *v, size_t *point,
		    struct btsdec_err *err)
{
	struct place p = { .r = r, .err = err };
	Dwarf_Die cu, var, type, *scopes = NULL, *fn = NULL;
	Dwarf_Word size;
	char name[MAX_NAME];
	size_t len = ident(expr, name);
	int n, k, rc;

	if (!r->s || at > r->nr)
		return btsdec_fail(err, -ERANGE, "no such point");
	if (!len)
		return btsdec_fail(err, -EINVAL, "%s: not a variable name", expr);
	if (!find_place(r, sym, at, &p, &cu))
		return btsdec_fail(err, -ENOENT, "no DWARF for the code at the fault");
	n = dwarf_getscopes(&cu, p.pc - p.bias, &scopes);
	k = n > 0 ? dwarf_getscopevar(scopes, n, name, 0, NULL, 0, 0, &var) : -1;
	for (int i = k; i >= 0 && i < n && !fn; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			fn = &scopes[i];
	memset(v, 0, sizeof(*v));
	/* not in scope there: a global of another file or module, if one */
	rc = k < 0 ? find_global(&p, name, &var, sym) : 0;
	if (!rc)
		rc = !type_of(&var, &type) ? btsdec_fail(err, -EINVAL, "%s: no type", name) :
		     locate(&p, &var, fn, v);
	if (!rc)
		rc = postfix(&p, expr + len, &type, v);
	if (!rc && (dwarf_aggregate_size(&type, &size) || (size != 1 && size != 2 &&
						       size != 4 && size != 8)))
		rc = btsdec_fail(err, -EINVAL, "%s: not of 1, 2, 4 or 8 bytes", expr);
	if (!rc)
		v->size = size;
	free(scopes);
	*point = v->kind == BTSDEC_WHY_REG ? p.at : at;
	return rc;
}
