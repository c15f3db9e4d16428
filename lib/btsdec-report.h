/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, reports: build, render, free: the part of the decoder library's
 * interface that report.c implements.  Included through btsdec.h, the
 * library's one public header, which includes every module's.  Process
 * context; errors as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_REPORT_API_H
#define BTSDEC_REPORT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"

struct btsdec_report_opts {
	bool json;
	bool calls;		/* call/return history instead of branch list */
	bool have_tid;
	pid_t tid;		/* only this thread */
	size_t last;		/* 0 = all; else the newest N branches */
	bool no_symbols;	/* btsdec_model_opts.no_symbols */
	const char *executable;	/* for the header line */
};

/* Writes the report of every thread of core (text or JSON): a model built
 * and rendered once.  Returns 0, or a negative errno; err says why. */
int btsdec_report(FILE *out, struct btsdec_core *core, struct btsdec_sym *sym,
		  struct btsdec_classifier *cls,
		  const struct btsdec_report_opts *o, struct btsdec_err *err);

#endif /* BTSDEC_REPORT_API_H */
