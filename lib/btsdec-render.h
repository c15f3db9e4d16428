/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, renderers of the model: the part of the decoder library's
 * interface that report-text.c and report-json.c implement.  Included
 * through btsdec.h, the library's one public header, which includes every
 * module's.  Process context; errors as negative errno plus struct
 * btsdec_err.
 */
#ifndef BTSDEC_RENDER_API_H
#define BTSDEC_RENDER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-decode.h"
#include "btsdec-model.h"

struct btsdec_render_opts {
	bool calls;		/* call/return history instead of branch list */
	size_t last;		/* 0 = all; else the newest N records (segments with calls) */
};

/* The text report (docs/btsdump.md) and the JSON document (docs/json.md).
 * 0, or -EIO / -ENOMEM with err set. */
int btsdec_render_text(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err);
int btsdec_render_json(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err);
/* The body of a trace in the text report: its branches (the newest
 * o->last), or with o->calls its call history; the lines a core's thread
 * and, decoded with vmlinux, a vmcore's CPU show under their heading. */
void btsdec_render_text_trail(FILE *out, const struct btsdec_decoded *d,
			      const struct btsdec_render_opts *o);
/* A kernel ring decoded with vmlinux (btsdump vmcore, crash> bts): the
 * ring's heading (lib/ringtext.c), then its newest `last` branches (0: all)
 * or with calls its call history, in the lines above. */
struct btsdec_ring_text;
void btsdec_render_ring_decoded(FILE *out, const struct btsdec_ring_text *v,
				const struct btsdec_decoded *d, size_t last, bool calls);
/* One branch or marker as the text report writes it, numbered #i + 1, the
 * number right-aligned in width columns (the widest of the lines shown):
 * the journal's LAST_BRANCHES lines.  No newline. */
void btsdec_render_branch_line(FILE *out, int width, size_t i, const struct btsdec_branch *b);
/* "faulted at 0x0 = target of #16 (indirect call in dispatch)": the
 * faulting thread's fault tied to its trail (th->has_fault), no newline. */
void btsdec_render_fault_line(FILE *out, const struct btsdec_model_thread *th);

#endif /* BTSDEC_RENDER_API_H */
