// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for core reading (lib/core.c with libelf): the input is
 * written to a memfd and opened as a core; every thread's trace is decoded
 * without symbols.  Hostile ELF must give an error or a clean read.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btsdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct btsdec_core *core;
	uint8_t buf[16];

	if (fd < 0) {
		fd = memfd_create("fuzz-core", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (btsdec_core_open(path, &core, NULL))
		return 0;
	for (size_t i = 0; i < btsdec_core_nr_threads(core); i++) {
		const struct btsdec_thread *t = btsdec_core_thread(core, i);
		struct btsdec_decoded d;

		if (t->has_trace && !btsdec_decode(NULL, NULL, &t->trace, &d, NULL))
			btsdec_decoded_free(&d);
		if (t->has_trace && t->trace.nr)
			btsdec_core_read(core, t->trace.recs[0].from, buf, sizeof(buf));
	}
	for (size_t i = 0; i < btsdec_core_nr_rejects(core); i++)
		if (!btsdec_core_reject(core, i))
			__builtin_trap();
	btsdec_core_close(core);
	return 0;
}
