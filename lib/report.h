/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the core report's files share (report.c, report-text.c,
 * report-json.c, report-loc.c): helpers of both renderers and the JSON
 * report's location cache.  Internal to the library.
 */
#ifndef BTSDEC_REPORT_H
#define BTSDEC_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "btsdec.h"

#define BTSDEC_JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The JSON text (json-c's) of one address's location: its symbol, line,
 * module and module offset, in one block (at sym). */
struct jloc {
	uint64_t addr;
	char *sym, *line, *module, *mod_off;
};
_Static_assert(offsetof(struct jloc, addr) == 0, "addr_index_build(): address first");

/* The JSON of each distinct address's location, made once while the
 * branches are written: a trace repeats addresses, and json-c costs
 * ~30 000 instructions a branch object.  Bounded by the distinct
 * addresses: entries packed, found through 4-byte slots kept at most half
 * full. */
struct jloc_cache {
	struct jloc *ent;	/* packed */
	size_t used, room;
	uint32_t *slots;	/* entry index + 1; 0 = free */
	size_t cap;		/* slots, a power of two */
};

/* report.c */
const char *btsdec_report_signal_name(int sig, char *buf, size_t len);
const char *btsdec_report_line(const struct btsdec_loc *l, char *buf, size_t len);
size_t btsdec_report_first(size_t nr, const struct btsdec_render_opts *o);
int btsdec_report_check(const struct btsdec_model *m, FILE *out, struct btsdec_err *err);

/* report-loc.c */
struct json_object *btsdec_json_module_offset(const struct btsdec_loc *l);
/* The four strings of l, each through json-c, in one allocation (e->sym:
 * free() it); 0 or -ENOMEM. */
int btsdec_jloc_make(struct jloc *e, uint64_t addr, const struct btsdec_loc *l);
/* addr's location entry, made from l the first time; NULL if out of
 * memory.  Valid until the next call (the entries may move). */
const struct jloc *btsdec_jloc_get(struct jloc_cache *c, uint64_t addr,
				   const struct btsdec_loc *l);
void btsdec_jloc_free(struct jloc_cache *c);

#endif /* BTSDEC_REPORT_H */
