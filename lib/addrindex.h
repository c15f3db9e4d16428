/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The readers' address-keyed hash tables (lib/ only, not installed): the
 * one hash of an address to a slot of a power-of-two table probed
 * linearly, and the build of an index table (entry index + 1 per slot,
 * 0 = free) over packed entries whose first member is their address.
 * Used by decode.c's classification cache, symbol.c's symbol cache and
 * report-loc.c's JSON string cache.
 */
#ifndef BTSDEC_ADDRINDEX_H
#define BTSDEC_ADDRINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline size_t addr_slot(uint64_t addr, size_t cap)
{
	addr ^= addr >> 29;
	addr *= 0xbf58476d1ce4e5b9ULL;
	addr ^= addr >> 32;
	return addr & (cap - 1);
}

/* cap slots indexing the n entries at ent, stride bytes apart, each
 * starting with its uint64_t address; NULL without memory. */
static inline uint32_t *addr_index_build(const void *ent, size_t n, size_t stride,
					 size_t cap)
{
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		uint64_t a;
		size_t j;

		memcpy(&a, (const char *)ent + k * stride, sizeof(a));
		for (j = addr_slot(a, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)k + 1;
	}
	return slots;
}

#endif
