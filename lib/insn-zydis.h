/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Instructions capstone 4 (Debian 12's) cannot decode, decoded by Zydis 4
 * (libzydis): AVX-512's EVEX forms on ymm16-31 with mask registers, which
 * glibc's string functions (strcmp-evex, memmove-evex, ...) run on every
 * CPU with AVX-512.  Without them a walk between two branches stops at
 * the first such instruction and leaves a gap.  What is asked here: the
 * length, whether it branches, and what it may write, conservatively.
 * Private to lib/; no state.
 */
#ifndef BTSDEC_INSN_ZYDIS_H
#define BTSDEC_INSN_ZYDIS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZY_NOREG 0xff

struct zy_insn {
	uint8_t len;
	bool branch;		/* changes rip (jump, call, ret, syscall, ...) */
	bool all;		/* may write more than the fields below say */
	uint32_t gpr;		/* general registers it may write, whole:
				 * 1 << BTSDEC_REG_* */
	uint64_t flags;		/* rflags bits it may write */
	bool store;		/* writes st_size bytes at base + index *
				 * scale + disp (rip-relative folded in) */
	bool store_any;		/* writes memory it cannot place */
	uint8_t st_size;
	uint8_t base, index, scale;	/* BTSDEC_REG_* or ZY_NOREG */
	int64_t disp;
};

/* Decodes the instruction at code (len bytes, at addr): false if Zydis
 * cannot either. */
bool zy_decode(const uint8_t *code, size_t len, uint64_t addr, struct zy_insn *z);
/* The same instruction as text, Intel syntax (capstone's style), into
 * buf: false if Zydis cannot decode or format it. */
bool zy_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t size);

#endif
