/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, kernel symbols: the part of the decoder library's interface that
 * ksym.c implements.  Included through btsdec.h, the library's one public
 * header, which includes every module's.  Process context; errors as
 * negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_KSYM_API_H
#define BTSDEC_KSYM_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"

/* From System.map or vmlinux's .symtab, moved by the KASLR offset. */
struct btsdec_ksyms;
int btsdec_ksyms_open(const char *path, uint64_t kaslr_offset,
		      struct btsdec_ksyms **out, struct btsdec_err *err);
void btsdec_ksyms_close(struct btsdec_ksyms *ks);
/* Name of the function holding addr and the offset into it; NULL if none. */
const char *btsdec_ksyms_lookup(const struct btsdec_ksyms *ks, uint64_t addr,
				uint64_t *off);
/* Whether ks came from a vmlinux (ELF), not a System.map. */
bool btsdec_ksyms_from_vmlinux(const struct btsdec_ksyms *ks);

#endif /* BTSDEC_KSYM_API_H */
