// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * recover-dump CORE EXECUTABLE: the value-recovery engine (lib/recover.c)
 * run on the faulting thread of CORE, printed for tests/test-recover.py:
 * a line "nr N conflicts C", then one line per instruction, oldest first,
 * and the final state last: "I ADDR" (or "I gap") and every register with
 * a known bit as NAME=VALUE/KNOWN (hex) — the registers before it ran —
 * then, when rsp is known, "mem=ADDR:BYTES": the memory from 64 bytes
 * below it to 64 above, "??" for a byte not known.
 */
#include <inttypes.h>
#include <stdio.h>

#include "btsdec.h"

static void print_regs(const struct btsdec_recover *r, size_t i)
{
	struct btsdec_regs s;
	uint64_t addr = 0;

	btsdec_recover_regs_at(r, i, &s);
	if (i == btsdec_recover_nr(r))
		printf("%zu end", i);
	else if (btsdec_recover_insn(r, i, &addr))
		printf("%zu gap", i);
	else
		printf("%zu 0x%" PRIx64, i, addr);
	for (int k = 0; k < BTSDEC_REG__MAX; k++)
		if (s.known[k])
			printf(" %s=%" PRIx64 "/%" PRIx64, btsdec_reg_name(k),
			       s.val[k], s.known[k]);
	if (s.known[BTSDEC_REG_RSP] == ~0ull) {
		uint64_t lo = s.val[BTSDEC_REG_RSP] - 64;
		uint8_t buf[128];
		bool known[128];

		btsdec_recover_mem_at(r, i, lo, sizeof(buf), buf, known);
		printf(" mem=%" PRIx64 ":", lo);
		for (size_t b = 0; b < sizeof(buf); b++)
			known[b] ? printf("%02x", buf[b]) : printf("??");
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	struct btsdec_symopts so = { 0 };
	struct btsdec_core *core;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
	struct btsdec_recover *r;
	struct btsdec_err err;

	if (argc != 3) {
		fprintf(stderr, "usage: recover-dump CORE EXECUTABLE\n");
		return 2;
	}
	so.executable = argv[2];
	if (btsdec_core_open(argv[1], &core, &err) ||
	    btsdec_sym_open_core(core, &so, &sym, &err) ||
	    btsdec_classifier_new(&cls, &err) ||
	    btsdec_recover_open(core, sym, cls, btsdec_core_thread(core, 0), &r, &err)) {
		fprintf(stderr, "recover-dump: %s\n", err.msg);
		return 1;
	}
	printf("nr %zu conflicts %zu\n", btsdec_recover_nr(r), btsdec_recover_conflicts(r));
	for (size_t i = 0; i <= btsdec_recover_nr(r); i++)
		print_regs(r, i);
	btsdec_recover_free(r);
	btsdec_classifier_free(cls);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
	return 0;
}
