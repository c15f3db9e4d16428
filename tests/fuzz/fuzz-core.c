// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for core reading (lib/core.c with libelf): the input is
 * written to a memfd and opened as a core through /proc/self/fd; every
 * thread's trace is decoded without symbols (lib/decode.c).  Hostile ELF
 * must give an error with a message, or a core whose contents hold together.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btsdec.h"
#include "fuzz-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_segment(void *arg, size_t i, const struct btsdec_segment *s)
{
	const struct btsdec_decoded *d = arg;

	if (i >= d->nr_seg || s->depth < 0 ||
	    (s->first == BTSDEC_SEG_NONE) != (s->last == BTSDEC_SEG_NONE) ||
	    (s->first != BTSDEC_SEG_NONE && (s->first > s->last || s->last >= d->nr)) ||
	    (!s->file && (s->line_lo || s->line_hi)))
		__builtin_trap();
	return 0;
}

static void check_decoded(const struct btsdec_trace *t,
			  const struct btsdec_decoded *d)
{
	struct btsdec_branch b;

	if (d->nr != t->nr || d->nr_seg > d->nr + 1)
		__builtin_trap();
	for (size_t i = 0; i < d->nr; i++) {
		struct btsdec_record r = btsdec_trace_at(t, i);

		btsdec_decoded_branch(d, i, &b);
		if (b.depth < 0 || memcmp(&b.rec, &r, sizeof(r)))
			__builtin_trap();
	}
	btsdec_decoded_segments(d, 0, check_segment, (void *)d);
}

static void check_thread(const struct btsdec_core *core,
			 const struct btsdec_thread *t)
{
	struct btsdec_decoded d;
	uint8_t buf[16];

	if (!t->has_trace)
		return;
	if (t->trace.type != NT_BTSCRASH_THREAD ||
	    t->trace.id != (uint64_t)t->tid || t->trace.nr > t->trace.capacity)
		__builtin_trap();
	if (btsdec_decode(NULL, NULL, &t->trace, &d, NULL))
		return;	/* out of memory */
	check_decoded(&t->trace, &d);
	btsdec_decoded_free(&d);
	for (size_t i = 0; i < t->trace.nr && i < 4; i++) {
		if (btsdec_core_read(core, btsdec_trace_at(&t->trace, i).from, buf,
				     sizeof(buf)) > sizeof(buf) ||
		    btsdec_core_read(core, btsdec_trace_at(&t->trace, i).to, buf, 1) > 1)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct btsdec_core *core;
	struct btsdec_err err;
	size_t i, j, traces = 0;
	int ret;

	if (!path)
		return 0;
	err.msg[0] = '\0';
	ret = btsdec_core_open(path, &core, &err);
	if (ret) {
		if (ret >= 0 || !err.msg[0])
			__builtin_trap();	/* every refusal says why */
		return 0;
	}
	if (strcmp(btsdec_core_path(core), path) || !btsdec_core_elf(core) ||
	    (btsdec_core_truncated(core) && btsdec_core_truncated(core) <= size))
		__builtin_trap();
	for (i = 0; i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *t = btsdec_core_thread(core, i);

		if (!t)
			__builtin_trap();
		for (j = 0; j < i; j++)
			if (btsdec_core_thread(core, j)->tid == t->tid)
				__builtin_trap();	/* one entry per thread */
		traces += t->has_trace;
		check_thread(core, t);
	}
	if (btsdec_core_thread(core, i) || traces != btsdec_core_nr_traces(core))
		__builtin_trap();
	for (i = 0; i < btsdec_core_nr_rejects(core); i++)
		if (!btsdec_core_reject(core, i) || !btsdec_core_reject(core, i)[0])
			__builtin_trap();
	if (btsdec_core_reject(core, i))
		__builtin_trap();
	btsdec_core_close(core);
	return 0;
}
