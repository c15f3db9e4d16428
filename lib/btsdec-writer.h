/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, writing notes into cores: the part of the decoder library's
 * interface that writer.c implements.  Included through btsdec.h, the
 * library's one public header, which includes every module's.  Process
 * context; errors as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_WRITER_API_H
#define BTSDEC_WRITER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"

/* Copies the core at in_path to out_path with the trace notes appended to
 * its PT_NOTE segment (sections and later segments shifted by whole pages).
 * out_path may equal in_path: the result is written to a temporary file and
 * renamed over it only when complete. */
int btsdec_core_add_notes(const char *in_path, const char *out_path,
			  const struct btsdec_trace *traces, size_t n,
			  struct btsdec_err *err);
/* The same with notes already framed (Elf64_Nhdr, name, descriptor, each
 * padded to 4 bytes): len bytes of them appended as they are. */
int btsdec_core_append_notes(const char *in_path, const char *out_path,
			     const void *notes, size_t len, struct btsdec_err *err);

#endif /* BTSDEC_WRITER_API_H */
