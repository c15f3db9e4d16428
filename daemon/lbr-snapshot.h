/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record the stock-kernel collector's BPF program (lbr.bpf.c) hands to
 * btsdumpd through its ring buffer, and the file btsdumpd --lbr-collector
 * keeps per thread for the handler (lbr-collector.c, lbr-note.c).  Shared
 * by BPF and user space: fixed-size types only.
 */
#ifndef BTSDUMPD_LBR_SNAPSHOT_H
#define BTSDUMPD_LBR_SNAPSHOT_H

#define BTSDUMPD_LBR_MAX	32	/* the deepest model-specific LBR */
#define BTSDUMPD_LBR_MAGIC	0x3172626cU	/* "lbr1" */

/* one entry as bpf_get_branch_snapshot() writes it (struct
 * perf_branch_entry: from, to, a word of bit fields), newest first */
struct btsdumpd_lbr_entry {
	__u64 from;
	__u64 to;
	__u64 bits;
};

struct btsdumpd_lbr_snap {
	__u32 magic;		/* BTSDUMPD_LBR_MAGIC */
	__u32 tid;		/* the thread the signal was raised for */
	__u32 tgid;
	__u32 sig;
	__u64 time_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__s32 nr;		/* entries, or the helper's -errno */
	__u32 depth;		/* the CPU's LBR depth (perf's caps/branches: 32
				 * Intel, 16 AMD), set by btsdumpd; 0: unknown */
	__u32 cpu;		/* where it was taken (bpf_get_smp_processor_id) */
	__s32 kept;		/* how many of e[] perf's read kept
				 * (cpu_hw_events.lbr_stack.nr): the slots
				 * beyond hold older reads' entries; -1 unknown */
	struct btsdumpd_lbr_entry e[BTSDUMPD_LBR_MAX];
};

#endif /* BTSDUMPD_LBR_SNAPSHOT_H */
