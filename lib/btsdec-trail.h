/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, the trail signature: the part of the decoder library's interface
 * that trail.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno.
 */
#ifndef BTSDEC_TRAIL_API_H
#define BTSDEC_TRAIL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btsdec-note.h"
#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-decode.h"

/* The signature hashes the newest BTSDEC_TRAIL_DEPTH function transitions
 * of the faulting thread after repeated runs of up to BTSDEC_TRAIL_CYCLE
 * transitions were collapsed to one (docs/btsdumpd.md "Trail signature"). */
#define BTSDEC_TRAIL_DEPTH	8
#define BTSDEC_TRAIL_CYCLE	8
#define BTSDEC_TRAIL_HEX	32	/* 128 bits, lowercase hex */
#define BTSDEC_TRAIL_SHORT	12	/* the short form btsdumpctl list shows */

/* A function as the signature names it, free of load addresses: its
 * module's build-id (hex; the module's name when it has none) and its
 * symbol.  module NULL: no module holds the address (unmapped, 0x0);
 * func NULL: no symbol (a stripped module counts as one function). */
struct btsdec_trail_fn {
	const char *module;
	const char *func;
};

/* Names the function holding addr. */
typedef void (*btsdec_trail_lookup_fn)(void *arg, uint64_t addr, struct btsdec_trail_fn *fn);

/* What a signature is made of: the program, the fault (the decoder's
 * classification: signal, si_code, how pc relates to the trail, the
 * function holding pc) and the faulting thread's records. */
struct btsdec_trail_in {
	const char *program;		/* the executable's build-id, hex; "" unknown */
	int signo;
	bool has_siginfo;
	int si_code;
	enum btsdec_fault_rel rel;
	uint64_t pc;
	const struct btsdec_trace *t;	/* oldest first; markers skipped */
	btsdec_trail_lookup_fn lookup;
	void *arg;
};

/* The signature of in into hex: 0, or -ENOMEM. */
int btsdec_trail_sign(const struct btsdec_trail_in *in, char hex[BTSDEC_TRAIL_HEX + 1]);

struct btsdec_model;

/* The signature of a model's faulting thread (symbols through sym, the
 * program's build-id at AT_ENTRY of core's auxv): 0, -ENODATA when that
 * thread has no trace or no registers, or -ENOMEM. */
int btsdec_model_trail(const struct btsdec_model *m, struct btsdec_core *core,
		       struct btsdec_sym *sym, char hex[BTSDEC_TRAIL_HEX + 1]);

/* The same for a core not decoded yet (btsdumpctl, for entries stored
 * before the signature existed): symbolizer, classifier and model made
 * and freed here.  0, -ENODATA, or the first step's error. */
int btsdec_core_trail(struct btsdec_core *core, const struct btsdec_symopts *so,
		      char hex[BTSDEC_TRAIL_HEX + 1]);

#endif /* BTSDEC_TRAIL_API_H */
