/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Arrays that grow geometrically and an index from 64-bit keys to array
 * positions (open addressing), shared by every per-thread, per-note and
 * per-segment table of the library and the tools, so none grows by one
 * element or is searched linearly (issue 30 §3).  Process context.
 */
#ifndef BTSDEC_GROW_H
#define BTSDEC_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for at least `need` elements of `size` bytes in *arr, whose
 * room is *cap elements: doubles (at least 16) and reallocs.  0 or -ENOMEM
 * (on overflow too), *arr unchanged then. */
int btsdec_grow_(void **arr, size_t *cap, size_t need, size_t size);
#define btsdec_grow(arr, cap, need) \
	btsdec_grow_((void **)(arr), (cap), (need), sizeof(**(arr)))

/* key -> position (an index into the caller's array).  Zeroed = empty. */
struct btsdec_index {
	struct btsdec_index_slot *slots;
	size_t cap, used;	/* cap: a power of two, or 0 */
};

#define BTSDEC_INDEX_NONE	SIZE_MAX

/* Adds key -> pos (several positions may share a key).  0 or -ENOMEM. */
int btsdec_index_add(struct btsdec_index *x, uint64_t key, size_t pos);
/* The positions stored under key, one per call, in no set order: *probe
 * starts at 0; BTSDEC_INDEX_NONE when there are no more. */
size_t btsdec_index_next(const struct btsdec_index *x, uint64_t key, size_t *probe);
/* A position stored under key (the only one when keys are unique), or
 * BTSDEC_INDEX_NONE. */
size_t btsdec_index_get(const struct btsdec_index *x, uint64_t key);
void btsdec_index_free(struct btsdec_index *x);
/* In n elements of `size` bytes from base, sorted by the uint64_t at the
 * start of each (base may point at a member of the first: that member is
 * then the key): how many have it <= x.  So element [result - 1], if any,
 * is the last one starting at or below x (a segment that may hold x). */
size_t btsdec_upper_bound(const void *base, size_t n, size_t size, uint64_t x);
/* A 64-bit key for a string (FNV-1a); equal strings, equal keys. */
uint64_t btsdec_index_str(const char *s);

#endif
