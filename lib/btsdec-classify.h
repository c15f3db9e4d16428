/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, classification: the part of the decoder library's interface that
 * classify.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_CLASSIFY_API_H
#define BTSDEC_CLASSIFY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"

enum btsdec_kind {
	BTSDEC_K_UNKNOWN = 0,	/* no code at `from` to look at */
	BTSDEC_K_CALL,
	BTSDEC_K_RETURN,
	BTSDEC_K_JUMP,		/* unconditional jump */
	BTSDEC_K_COND,		/* conditional jump, loop, jrcxz */
	BTSDEC_K_SYSCALL,	/* syscall, sysenter, int n */
	BTSDEC_K_SYSRET,	/* sysret, sysexit */
	BTSDEC_K_IRET,		/* iret */
	BTSDEC_K_INTERRUPT,	/* `from` is no branch: asynchronous event or fault */
	BTSDEC_K_MARKER,	/* a marker record */
	BTSDEC_K__MAX,
};

const char *btsdec_kind_name(enum btsdec_kind k);

struct btsdec_classifier;

int btsdec_classifier_new(struct btsdec_classifier **out, struct btsdec_err *err);
void btsdec_classifier_free(struct btsdec_classifier *c);
/* Classifies the instruction in code[0..len) located at addr. */
enum btsdec_kind btsdec_classify(struct btsdec_classifier *c,
				 const uint8_t *code, size_t len, uint64_t addr,
				 bool *indirect);
/* The same, with the instruction's length: 0 when it does not decode. */
enum btsdec_kind btsdec_classify_insn(struct btsdec_classifier *c,
				      const uint8_t *code, size_t len, uint64_t addr,
				      bool *indirect, size_t *size);

/* The general registers in the encoding's order (rax, rcx, rdx, rbx, rsp,
 * rbp, rsi, rdi, r8 ... r15), as NT_PRSTATUS holds them. */
#define BTSDEC_NR_GPR	16
#define BTSDEC_GPR_RSP	4

/* The machine state an operand is evaluated in (btsdec_branch_target):
 * the registers before the instruction and the memory it reads. */
struct btsdec_insn_env {
	uint64_t gpr[BTSDEC_NR_GPR];
	/* Reads len bytes at addr: bytes read; fewer means unknown. */
	size_t (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
};

/* Where the call or jump in code[0..len) at addr goes, its operand
 * evaluated in env (a direct one's target needs none): 0 and *target,
 * *size its length; -ENOENT when the operand cannot be evaluated (a
 * segment or 32-bit address, memory env cannot read), -EINVAL when it is
 * no call or jump. */
int btsdec_branch_target(struct btsdec_classifier *c, const uint8_t *code,
			 size_t len, uint64_t addr, const struct btsdec_insn_env *env,
			 uint64_t *target, size_t *size);

#endif /* BTSDEC_CLASSIFY_API_H */
