// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the vmcore reader (lib/vmcore.c): the input is
 * written to a memfd and opened through /proc/self/fd as an ELF or
 * kdump-compressed vmcore; VMCOREINFO is queried, the CPU notes and the
 * per-CPU rings are read.  Every refusal must say why; every ring read
 * must hold together (records <= capacity, an error message when not read).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btsdec.h"
#include "fuzz-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct btsdec_cpu_ring *rings;
	struct btsdec_vmcore *vc;
	struct btsdec_err err;
	size_t i, nr;
	char buf[64];
	uint8_t mem[64];
	int ret;

	if (!path)
		return 0;
	err.msg[0] = '\0';
	ret = btsdec_vmcore_open(path, &vc, &err);
	if (ret) {
		if (ret >= 0 || !err.msg[0])
			__builtin_trap();
		return 0;
	}
	btsdec_vmcore_info(vc, "BTS_CRASH_TABLE_PA", buf, sizeof(buf));
	for (i = 0; i < btsdec_vmcore_nr_cpu_notes(vc); i++) {
		const struct btsdec_trace *t = btsdec_vmcore_cpu_note(vc, i);

		if (!t || t->type != NT_BTSCRASH_CPU || t->nr > t->capacity)
			__builtin_trap();
	}
	if (btsdec_vmcore_cpu_note(vc, i))
		__builtin_trap();
	btsdec_vmcore_read_phys(vc, 0x100000, mem, sizeof(mem), &err);
	err.msg[0] = '\0';
	ret = btsdec_vmcore_cpu_rings(vc, &rings, &nr, &err);
	if (ret && (ret > 0 || !err.msg[0] || rings || nr))
		__builtin_trap();
	for (i = 0; i < nr; i++) {
		if (rings[i].status && !rings[i].err.msg[0])
			__builtin_trap();
		if (!rings[i].status && rings[i].trace.nr > rings[i].trace.capacity)
			__builtin_trap();
	}
	btsdec_cpu_rings_free(rings, nr);
	btsdec_vmcore_close(vc);
	return 0;
}
