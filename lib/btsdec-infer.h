/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, the inferred branch: the part of the decoder library's interface
 * that infer.c implements (the one branch a filtered trail may lack, proven
 * from the core; model.c asks once per faulting thread).  Included through
 * btsdec.h, the library's one public header.  Process context.
 */
#ifndef BTSDEC_INFER_API_H
#define BTSDEC_INFER_API_H

#include <stdbool.h>

#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"
#include "btsdec-decode.h"

/* A trail whose filter dropped the call or jump to the fault's pc (perf's
 * LBR filter drops a branch to 0): when f is UNRELATED, the instruction
 * that ends the straight-line run after the newest branch is a call or
 * jump whose target, evaluated with th's registers and memory from core,
 * is pc (a call also left its return address at rsp), pc faulted on its
 * fetch (si_addr == pc: nothing ran after the branch) and no gap follows
 * the newest branch, makes f TARGET of that branch, inferred (infer.c). */
void btsdec_fault_infer(struct btsdec_core *core, const struct btsdec_thread *th,
			struct btsdec_sym *sym, struct btsdec_classifier *cls,
			const struct btsdec_decoded *d, bool symbols,
			struct btsdec_fault *f);

#endif /* BTSDEC_INFER_API_H */
