// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The JSON report's cache of locations: each distinct address's symbol,
 * line, module and module offset as json-c text, made once while the
 * branches are written (report-json.c), found through lib/addrindex.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrindex.h"
#include "btsdec.h"
#include "grow.h"
#include "report.h"

struct json_object *btsdec_json_module_offset(const struct btsdec_loc *l)
{
	return l->module ? btsdec_json_hex(l->mod_off) : NULL;
}

/* The four strings of l, each through json-c, in one allocation. */
int btsdec_jloc_make(struct jloc *e, uint64_t addr, const struct btsdec_loc *l)
{
	struct json_object *o[4];
	const char *t[4];
	size_t n[4], i;
	char buf[256], *p;
	int ret = 0;

	o[0] = btsdec_json_str(btsdec_loc_format(l, addr, buf, sizeof(buf)));
	o[1] = btsdec_json_str(btsdec_report_line(l, buf, sizeof(buf)));
	o[2] = btsdec_json_str(l->module);
	o[3] = btsdec_json_module_offset(l);
	for (i = 0; i < 4; i++) {
		t[i] = o[i] ? json_object_to_json_string_ext(o[i], BTSDEC_JSON_FLAGS) : "null";
		n[i] = t[i] ? strlen(t[i]) + 1 : 0;
		if (!t[i])
			ret = -ENOMEM;
	}
	p = ret ? NULL : malloc(n[0] + n[1] + n[2] + n[3]);
	if (p) {
		e->addr = addr;
		e->sym = memcpy(p, t[0], n[0]);
		e->line = memcpy(p + n[0], t[1], n[1]);
		e->module = memcpy(p + n[0] + n[1], t[2], n[2]);
		e->mod_off = memcpy(p + n[0] + n[1] + n[2], t[3], n[3]);
	}
	for (i = 0; i < 4; i++)
		json_object_put(o[i]);
	return p ? 0 : -ENOMEM;
}

static int jloc_grow(struct jloc_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024;
	uint32_t *n = addr_index_build(c->ent, c->used, sizeof(*c->ent), cap);

	if (!n)
		return -ENOMEM;
	free(c->slots);
	c->slots = n;
	c->cap = cap;
	return 0;
}

const struct jloc *btsdec_jloc_get(struct jloc_cache *c, uint64_t addr,
				   const struct btsdec_loc *l)
{
	size_t i;

	if (c->used * 2 >= c->cap && jloc_grow(c))
		return NULL;
	for (i = addr_slot(addr, c->cap); c->slots[i]; i = (i + 1) & (c->cap - 1))
		if (c->ent[c->slots[i] - 1].addr == addr)
			return &c->ent[c->slots[i] - 1];
	if (c->used >= UINT32_MAX / 2 || btsdec_grow(&c->ent, &c->room, c->used + 1))
		return NULL;
	if (btsdec_jloc_make(&c->ent[c->used], addr, l))
		return NULL;
	c->slots[i] = (uint32_t)++c->used;
	return &c->ent[c->used - 1];
}

void btsdec_jloc_free(struct jloc_cache *c)
{
	for (size_t i = 0; i < c->used; i++)
		free(c->ent[i].sym);
	free(c->ent);
	free(c->slots);
}
