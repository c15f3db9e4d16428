// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Geometric growth of arrays, the key -> position index and the search of
 * sorted segments of grow.h: one implementation for core.c's threads and
 * segments, model.c's missing modules, vmcore.c's notes and segments, the
 * tools' lists.  Process context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

struct btsdec_index_slot {
	uint64_t key;
	size_t pos1;		/* position + 1; 0: empty */
};

int btsdec_grow_(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t room = *cap;
	void *p;

	if (need <= room)
		return 0;
	room = room < 8 ? 16 : room;
	while (room < need) {
		if (room > SIZE_MAX / 2)
			return -ENOMEM;
		room *= 2;
	}
	if (room > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*arr, room * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = room;
	return 0;
}

/* splitmix64's finalizer: every key bit moves the slot. */
static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return (size_t)key & (cap - 1);
}

static void put(struct btsdec_index_slot *slots, size_t cap, uint64_t key, size_t pos1)
{
	size_t i = slot_of(key, cap);

	while (slots[i].pos1)
		i = (i + 1) & (cap - 1);
	slots[i] = (struct btsdec_index_slot){ key, pos1 };
}

/* Doubles the table. */
static int rehash(struct btsdec_index *x)
{
	size_t cap = x->cap ? 2 * x->cap : 64;
	struct btsdec_index_slot *s;

	if (cap > SIZE_MAX / 2 / sizeof(*s) || !(s = calloc(cap, sizeof(*s))))
		return -ENOMEM;
	for (size_t i = 0; i < x->cap; i++)
		if (x->slots[i].pos1)
			put(s, cap, x->slots[i].key, x->slots[i].pos1);
	free(x->slots);
	x->slots = s;
	x->cap = cap;
	return 0;
}

int btsdec_index_add(struct btsdec_index *x, uint64_t key, size_t pos)
{
	if (pos >= SIZE_MAX - 1)
		return -ENOMEM;
	if ((x->used + 1) * 2 > x->cap && rehash(x))
		return -ENOMEM;
	put(x->slots, x->cap, key, pos + 1);
	x->used++;
	return 0;
}

size_t btsdec_index_next(const struct btsdec_index *x, uint64_t key, size_t *probe)
{
	size_t i;

	if (!x->cap)
		return BTSDEC_INDEX_NONE;
	for (i = (slot_of(key, x->cap) + *probe) & (x->cap - 1); x->slots[i].pos1;
	     i = (i + 1) & (x->cap - 1)) {
		++*probe;
		if (x->slots[i].key == key)
			return x->slots[i].pos1 - 1;
	}
	return BTSDEC_INDEX_NONE;
}

size_t btsdec_index_get(const struct btsdec_index *x, uint64_t key)
{
	size_t probe = 0;

	return btsdec_index_next(x, key, &probe);
}

void btsdec_index_free(struct btsdec_index *x)
{
	free(x->slots);
	*x = (struct btsdec_index){ 0 };
}

size_t btsdec_upper_bound(const void *base, size_t n, size_t size, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, (const char *)base + mid * size, sizeof(key));
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t btsdec_index_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}
