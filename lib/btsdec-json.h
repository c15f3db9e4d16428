/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, JSON (the documents: docs/json.md): the part of the decoder
 * library's interface that json.c implements.  Included through btsdec.h,
 * the library's one public header, which includes every module's.  Process
 * context; errors as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_JSON_API_H
#define BTSDEC_JSON_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"
#include "btsdec-classify.h"
#include "btsdec-decode.h"

/* Schema names and version of the documents the library writes. */
#define BTSDEC_JSON_SCHEMA_CORE		"btscrash-core"
#define BTSDEC_JSON_SCHEMA_VMCORE	"btscrash-vmcore"
#define BTSDEC_JSON_SCHEMA_ERROR	"btscrash-error"
#define BTSDEC_JSON_SCHEMA_WHY		"btscrash-why"
#define BTSDEC_JSON_SCHEMA_REGS		"btscrash-regs"
#define BTSDEC_JSON_VERSION		7

/* Pieces of the documents, shared by report-json.c and vmreport.c: the trace
 * facts object, a branch object's common keys (number, from, to, flags,
 * kind, cycles, and the marker keys for a marker). */
struct json_object *btsdec_json_trace(const struct btsdec_trace *t);
struct json_object *btsdec_json_record(size_t i, const struct btsdec_record *r,
				       enum btsdec_kind kind);
/* A decoded branch's whole object (docs/json.md "Branch objects"): a
 * core's thread, or a vmcore's CPU decoded with vmlinux.  The text of
 * both is report-json.c's one branch writer, the core report streams. */
struct json_object *btsdec_json_branch(size_t i, const struct btsdec_branch *b);
/* s as JSON: a string if s is valid UTF-8, else the array of its byte
 * values (docs/json.md "Strings": lossless); NULL (JSON null) for NULL. */
struct json_object *btsdec_json_str(const char *s);
/* An address as a "0x..." string. */
struct json_object *btsdec_json_hex(uint64_t v);
/* Writes doc on one line, then drops the reference; -ENOMEM if doc is NULL. */
int btsdec_json_write(FILE *out, struct json_object *doc, struct btsdec_err *err);
/* Writes s as one JSON string literal (null for NULL). */
void btsdec_json_string(FILE *out, const char *s);
/* The error document btsdumpd stores when a report cannot be made:
 * {"schema":"btscrash-error","version":N,"error":why}. */
int btsdec_json_error(FILE *out, const char *why, struct btsdec_err *err);

#endif /* BTSDEC_JSON_API_H */
