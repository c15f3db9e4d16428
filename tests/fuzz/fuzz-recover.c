// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the value-recovery engine (lib/recover.c,
 * lib/recover-insn.c): any bytes as the final registers, an instruction
 * sequence (gaps among them) and the final memory image.  The engine must
 * run to its fixed point and answer every question without a crash, a
 * leak or undefined behaviour, and report no bit it does not know; where
 * a value came from (lib/why.c) names only an earlier instruction that
 * may write it.
 * Input: 144 bytes of register values, 3 bytes saying which are known,
 * then the code: a byte whose low 4 bits are 0 is a gap, else the
 * instruction decoded there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btsdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x401000ull
#define HEAD (BTSDEC_REG__MAX * 8 + 3)

struct image {
	const uint8_t *p;
	size_t n;
};

/* The input itself is the memory at BASE - HEAD. */
static size_t read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = arg;
	uint64_t off = addr - (BASE - HEAD);

	if (off >= im->n)
		return 0;
	if (len > im->n - off)
		len = im->n - off;
	memcpy(buf, im->p + off, len);
	return len;
}

/* The chain of register k (and of the memory at rsp) before i: every
 * link's defining instruction comes before the point it explains. */
static void why(struct btsdec_recover *r, size_t i, int k, uint64_t rsp)
{
	struct btsdec_why_value v = { .kind = BTSDEC_WHY_REG, .size = 8, .reg = k };
	struct btsdec_why w;

	if (k == BTSDEC_REG__MAX)
		v = (struct btsdec_why_value){ .kind = BTSDEC_WHY_MEM, .size = 8,
					       .addr_known = true, .addr = rsp };
	if (btsdec_why_explain(r, &v, i, 4, 16, &w))
		__builtin_trap();
	for (size_t n = 0; n < w.nr; n++) {
		const struct btsdec_why_step *s = &w.steps[n];

		if ((s->from == BTSDEC_WHY_INSN || s->from == BTSDEC_WHY_SYSCALL) &&
		    s->insn >= s->at)
			__builtin_trap();
		for (unsigned o = 0; o < s->nr_ops; o++)
			if (s->ops[o].val & ~s->ops[o].known)
				__builtin_trap();
	}
	btsdec_why_fini(&w);
}

/* The input's last bytes as what btsdump why is asked about: parsed
 * as a register or memory form, or refused. */
static void parse_tail(const uint8_t *data, size_t size)
{
	struct btsdec_why_value v;
	char s[24];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;

	memcpy(s, data + size - n, n);
	s[n] = 0;
	if (!btsdec_why_parse(s, &v) && v.kind == BTSDEC_WHY_REG &&
	    (v.reg >= BTSDEC_REG__MAX || !btsdec_why_reg_name(&v)))
		__builtin_trap();
}

static void ask(struct btsdec_recover *r, size_t i)
{
	struct btsdec_regs s;
	uint8_t buf[16];
	bool known[16];

	if (btsdec_recover_regs_at(r, i, &s))
		__builtin_trap();
	for (int k = 0; k < BTSDEC_REG__MAX; k++)
		if (s.val[k] & ~s.known[k])	/* unknown bits read 0 */
			__builtin_trap();
	btsdec_recover_mem_at(r, i, s.val[BTSDEC_REG_RSP] - 8, sizeof(buf), buf, known);
	btsdec_recover_mem_at(r, i, BASE, sizeof(buf), buf, known);
	why(r, i, (int)(i % (BTSDEC_REG__MAX + 1)), s.val[BTSDEC_REG_RSP] - 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im = { data, size };
	struct btsdec_recover *r;
	struct btsdec_regs f;
	struct btsdec_err err;
	size_t off = HEAD;
	uint64_t addr = BASE;

	if (size < HEAD)
		return 0;
	for (int k = 0; k < BTSDEC_REG__MAX; k++) {
		memcpy(&f.val[k], data + 8 * k, 8);
		f.known[k] = data[144 + k / 8] >> (k % 8) & 1 ? ~0ull : 0;
	}
	if (btsdec_recover_new(&f, read_image, &im, &r, &err))
		abort();
	while (off < size && btsdec_recover_nr(r) < 4096) {
		int n = (data[off] & 0xf) ? btsdec_recover_add(r, addr, data + off, size - off)
					  : btsdec_recover_add_gap(r);

		if (n == -ENOMEM)
			abort();
		n = n > 0 ? n : 1;
		off += n;
		addr += n;
	}
	if (data[146] & 0x80)		/* sometimes: several threads */
		btsdec_recover_limit_mem(r, f.val[BTSDEC_REG_RSP] - 4096,
					 f.val[BTSDEC_REG_RSP] + 4096);
	if (btsdec_recover_run(r))
		abort();
	for (size_t i = 0; i <= btsdec_recover_nr(r); i += 1 + i / 4)
		ask(r, i);
	ask(r, btsdec_recover_nr(r));
	parse_tail(data, size);
	btsdec_recover_free(r);
	return 0;
}
