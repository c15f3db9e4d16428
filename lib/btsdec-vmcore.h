/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, vmcores: the part of the decoder library's interface that
 * vmcore.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_VMCORE_API_H
#define BTSDEC_VMCORE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"

/* A kernel dump: ELF (/proc/vmcore, makedumpfile -E) or kdump-compressed. */
struct btsdec_vmcore;

int btsdec_vmcore_open(const char *path, struct btsdec_vmcore **out,
		       struct btsdec_err *err);
void btsdec_vmcore_close(struct btsdec_vmcore *vc);
bool btsdec_vmcore_is_kdump(const struct btsdec_vmcore *vc);
/* VMCOREINFO value of key into buf; false if absent. */
bool btsdec_vmcore_info(const struct btsdec_vmcore *vc, const char *key,
			char *buf, size_t len);
/* The dump's NT_BTSCRASH_CPU notes (malformed ones skipped, see rejects). */
size_t btsdec_vmcore_nr_cpu_notes(const struct btsdec_vmcore *vc);
const struct btsdec_trace *btsdec_vmcore_cpu_note(const struct btsdec_vmcore *vc, size_t i);
/* Why each malformed CPU note was skipped (the library prints nothing). */
size_t btsdec_vmcore_nr_rejects(const struct btsdec_vmcore *vc);
const char *btsdec_vmcore_reject(const struct btsdec_vmcore *vc, size_t i);
/* Physical memory: 0, -ENOENT (not in the dump), -EIO, -ENOTSUP. */
int btsdec_vmcore_read_phys(struct btsdec_vmcore *vc, uint64_t pa, void *buf,
			    size_t len, struct btsdec_err *err);

/* A CPU's full ring, found through VMCOREINFO (docs/format.md §4). */
struct btsdec_cpu_ring {
	uint64_t cpu;
	bool panic;		/* the CPU that ran the crash path */
	bool frozen;
	uint64_t freeze_ts;
	int status;		/* 0, or why the ring is unreadable (err) */
	struct btsdec_err err;
	struct btsdec_trace trace;	/* ordered records when status is 0 */
};
/* Every CPU that has a ring; -ENOENT when the kernel kept none. */
int btsdec_vmcore_cpu_rings(struct btsdec_vmcore *vc, struct btsdec_cpu_ring **out,
			    size_t *nr, struct btsdec_err *err);
void btsdec_cpu_rings_free(struct btsdec_cpu_ring *r, size_t n);

#endif /* BTSDEC_VMCORE_API_H */
