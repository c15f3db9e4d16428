// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Ring ordering: turns the slots of a circular BTS ring (per-CPU or
 * per-task, as the kernel or the hardware left them) into records in time
 * order, per docs/format.md §4.3.  Pure function; used by the vmcore reader.
 */
#include <errno.h>
#include <string.h>

#include "btsdec.h"

static bool slot_empty(const struct btsdec_record *r)
{
	return !r->from && !r->to && !r->flags;
}

static size_t copy_used(const struct btsdec_record *s, uint64_t lo, uint64_t hi,
			struct btsdec_record *out, size_t n)
{
	for (uint64_t i = lo; i < hi; i++)
		if (!slot_empty(&s[i]))
			out[n++] = s[i];
	return n;
}

ssize_t btsdec_ring_order(const struct btsdec_record *slots, uint64_t capacity,
			  uint64_t index, bool wrapped,
			  struct btsdec_record *out, struct btsdec_err *err)
{
	size_t n = 0;

	if (capacity == 0 || capacity > BTS_CRASH_MAX_CAPACITY)
		return btsdec_fail(err, -EINVAL, "ring capacity %llu out of range",
				   (unsigned long long)capacity);
	if (index >= capacity)
		return btsdec_fail(err, -EINVAL,
				   "ring index %llu out of range (capacity %llu)",
				   (unsigned long long)index,
				   (unsigned long long)capacity);
	/* The flag may lag the hardware: a written slot at index means the
	 * writer has been all the way round. */
	if (!slot_empty(&slots[index]))
		wrapped = true;
	if (wrapped)
		n = copy_used(slots, index, capacity, out, n);
	return copy_used(slots, 0, index, out, n);
}
