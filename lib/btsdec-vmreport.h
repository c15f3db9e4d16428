/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, vmcore reports: the part of the decoder library's interface that
 * vmreport.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_VMREPORT_API_H
#define BTSDEC_VMREPORT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-vmcore.h"

struct btsdec_vmreport_opts {
	const char *cpus;	/* only these CPUs, comma list; NULL = all */
	size_t last;		/* the newest N branches per CPU; 0 = all */
	bool json;		/* JSON instead of text */
	bool raw;		/* no symbols */
	bool calls;		/* text: call/return history (decoded, vmlinux) */
	const char *symbols;	/* vmlinux (decoded) or System.map (names);
				 * NULL = addresses only */
	const char *prog;	/* warnings are "PROG: ..." lines; NULL = bare */
};

struct btsdec_vmreport_result {
	size_t cpus_shown;	/* CPUs whose trace was printed */
	size_t rings_unreadable; /* CPUs whose ring was unreadable: warned,
				  * and their crash note shown if they have one */
};

/* Writes each selected CPU's last kernel branches from the open vmcore vc
 * (named name in the report) to out, its full ring or, when that is
 * unreadable, its crash note; one open vmcore serves several reports.
 * Warnings go to warn, one line each (NULL: dropped), malformed CPU notes
 * first.  Returns 0 when some CPU's trace was printed (rings_unreadable > 0
 * means some were incomplete); -ENODATA when the vmcore holds no branch
 * trace (the header, in JSON the whole empty document, is still written);
 * another negative errno when the symbols cannot be read (nothing
 * written).  err says why; res (may be NULL) is filled in every case.
 * Errors writing to out are left to the caller (ferror). */
int btsdec_vmcore_report(FILE *out, struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o,
			 struct btsdec_vmreport_result *res, FILE *warn,
			 struct btsdec_err *err);

/* A vmcore's report decoded once (vmreport.c): the selected CPUs' traces
 * (full ring, or crash note when the ring is unreadable) and the kernel
 * symbols, rendered as often as needed.  The model reads vc, which must
 * outlive it.  Warnings (rejected CPU notes, unreadable rings) go to warn
 * once, at build.  Build fails only when the symbols cannot be read. */
struct btsdec_vmmodel;

int btsdec_vmmodel_build(struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o, FILE *warn,
			 struct btsdec_vmmodel **out, struct btsdec_err *err);
/* Text or JSON (docs/json.md), the newest `last` records per CPU (0: all);
 * returns as btsdec_vmcore_report does (-ENODATA: no CPU had a trace). */
int btsdec_vmmodel_render(FILE *out, const struct btsdec_vmmodel *m, bool json,
			  size_t last, struct btsdec_vmreport_result *res,
			  struct btsdec_err *err);
void btsdec_vmmodel_free(struct btsdec_vmmodel *m);

#endif /* BTSDEC_VMREPORT_API_H */
