/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, the decoded model: the part of the decoder library's interface
 * that model.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_MODEL_API_H
#define BTSDEC_MODEL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"
#include "btsdec-core.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"
#include "btsdec-decode.h"

/* One thread of a core, decoded. */
struct btsdec_model_thread {
	pid_t tid;
	int signo;		/* pr_cursig */
	bool faulting;
	bool has_trace;
	struct btsdec_trace facts;	/* the trace's facts; recs is NULL */
	struct btsdec_decoded d;	/* branches and call segments (empty: no trace) */
	bool has_fault;		/* the faulting thread, with its registers */
	struct btsdec_fault fault;	/* its pc tied to the trail */
};

/* A module the trail or the fault touches whose file was not found. */
struct btsdec_missing {
	const char *path;	/* as the core names it (NT_FILE) */
	const char *module;	/* its basename */
	const char *build_id;	/* hex, "" when unknown */
};

/* A core decoded once: what every renderer (text, JSON, journal) reads. */
struct btsdec_model {
	char *core;			/* the core's name */
	char *executable;		/* as given, or NULL */
	size_t nr_missing, cap_missing;
	struct btsdec_missing *missing;	/* modules not found, strings borrowed */
	struct btsdec_index missing_by_path;	/* path -> missing */
	size_t nr_rejects;
	char **rejects;			/* why malformed trace notes were skipped */
	size_t nr_threads;
	struct btsdec_model_thread *threads;	/* faulting thread first */
};

struct btsdec_model_opts {
	bool have_tid;
	pid_t tid;		/* only this thread */
	bool no_symbols;	/* classify, but leave symbols and lines out (gdb) */
	const char *executable;	/* recorded in the model, for the reports */
};

/* Decodes every (selected) thread of core: classified by cls, symbolized
 * by sym (either may be NULL).  The model borrows the records from core
 * and the symbols from sym: free it before closing either.  0, or -ENOMEM / the decoder's error. */
int btsdec_model_build(struct btsdec_core *core, struct btsdec_sym *sym,
		       struct btsdec_classifier *cls, const struct btsdec_model_opts *o,
		       struct btsdec_model **out, struct btsdec_err *err);
void btsdec_model_free(struct btsdec_model *m);
/* A thread's branches as every renderer shows them: its trace's, then the
 * branch inferred from the core (fault.inferred), numbered one past them. */
size_t btsdec_thread_nr_branches(const struct btsdec_model_thread *th);
/* Branch i (< btsdec_thread_nr_branches) of th. */
void btsdec_thread_branch(const struct btsdec_model_thread *th, size_t i,
			  struct btsdec_branch *b);

#endif /* BTSDEC_MODEL_API_H */
