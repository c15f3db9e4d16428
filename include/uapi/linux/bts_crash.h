/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * btscrash trace format: the one binary layout shared by the kernel writer
 * (kernel/bts_crash.c, arch/x86/kernel/ds.c) and every reader (lib/,
 * crash-ext/, gdb/).  docs/format.md is the prose contract; change both
 * together.  Everything is little-endian; readers copy fields out with
 * memcpy, they never cast a pointer into a note (4-byte note alignment).
 */
#ifndef _UAPI_LINUX_BTS_CRASH_H
#define _UAPI_LINUX_BTS_CRASH_H

#include <linux/types.h>

/* ---- ELF notes ---------------------------------------------------------- */

/* Owner name of every btscrash note; n_namesz is 9 (NUL included), so the
 * name occupies 12 bytes after the 4-byte padding of ELF notes.
 */
#define BTS_CRASH_NOTE_NAME		"BTSCRASH"
#define BTS_CRASH_NOTE_NAMESZ		9

/* Note types (meaningful only with the owner name above). */
#define NT_BTSCRASH_THREAD		0x42540001 /* one per thread, in process cores */
#define NT_BTSCRASH_CPU			0x42540002 /* one per CPU, in vmcore crash notes */

#define BTS_CRASH_NOTE_MAGIC		0x4e535442 /* "BTSN" */
#define BTS_CRASH_NOTE_VERSION		1

/* Header of a note's descriptor; nr_records records follow at hdr_size. */
struct bts_crash_note_hdr {
	__u32 magic;		/* BTS_CRASH_NOTE_MAGIC */
	__u16 version;		/* BTS_CRASH_NOTE_VERSION */
	__u16 hdr_size;		/* >= 64, multiple of 8: where records start */
	__u32 record_size;	/* sizeof(struct bts_record) == 24 */
	__u32 flags;		/* BTS_NOTE_F_* */
	__u64 id;		/* thread id (THREAD note) or CPU number (CPU note) */
	__u64 capacity;		/* ring capacity in records, >= nr_records */
	__u64 nr_records;	/* records in this note, oldest first */
	__u64 lost;		/* records known lost (see BTS_NOTE_F_LOST_EXACT) */
	__u32 nr_gaps;		/* times recording was suspended (GAP markers) */
	__u16 source;		/* enum bts_crash_source */
	__u16 reserved0;	/* 0 */
	__u64 reserved1;	/* 0 */
};

#define BTS_CRASH_NOTE_HDR_SIZE		64

/* Header flags. */
#define BTS_NOTE_F_WRAPPED	(1U << 0) /* the ring wrapped: older history was overwritten */
#define BTS_NOTE_F_LOST_EXACT	(1U << 1) /* `lost` is exact, not a lower bound */
#define BTS_NOTE_F_USER_ONLY	(1U << 2) /* kernel addresses left out (THREAD notes: always) */
#define BTS_NOTE_F_TRUNCATED	(1U << 3) /* only the newest part of the ring is in the note */
#define BTS_NOTE_F_KNOWN	0xfU

enum bts_crash_source {
	BTS_SOURCE_HW		= 1,	/* Branch Trace Store hardware */
	BTS_SOURCE_EMUL		= 2,	/* ds.c software emulation backend */
	BTS_SOURCE_LBR		= 3,	/* the CPU's Last Branch Record stack (THREAD
					 * notes with source=lbr, CPU notes and rings
					 * with lbr-kernel; capacity = its depth)
					 */
};

/* ---- Records ------------------------------------------------------------ */

/*
 * One record, exactly the 64-bit BTS record of the Intel SDM (Vol. 3B,
 * "Branch Trace Store (BTS)", 64-bit DS format): the kernel copies, never
 * converts.
 */
struct bts_record {
	__u64 from;		/* linear address of the branch instruction (or
				 * the interrupted instruction for async events)
				 */
	__u64 to;		/* linear address of the branch target */
	__u64 flags;		/* bit 4 = branch predicted (BTS, LBR); LBR:
				 * bit 5 = bits 47:32 hold a cycle count;
				 * every other bit 0
				 */
};

#define BTS_RECORD_SIZE		24
#define BTS_REC_F_PREDICTED	(1ULL << 4)
/* LBR only (source 3): LBR_INFO.CYC_CNT, core cycles since the previous
 * LBR entry (saturating at 0xffff), in bits 47:32 when bit 5 is set
 */
#define BTS_REC_F_CYCLES	(1ULL << 5)
#define BTS_REC_CYCLES_SHIFT	32
#define BTS_REC_CYCLES_MASK	0xffffULL

/*
 * Marker records.  `from` carries a tag in bits 63:48 that makes it
 * non-canonical under 4- and 5-level paging, so no branch the hardware
 * records can look like a marker.  Bits 15:0 are the kind; bits 23:16 a
 * kind-specific sub-code; bits 47:24 are zero.
 */
#define BTS_MARKER_TAG		0xb75c000000000000ULL
#define BTS_MARKER_TAG_MASK	0xffff000000000000ULL
#define BTS_MARKER_RSVD_MASK	0x0000ffffff000000ULL
#define BTS_MARKER(kind, sub)	(BTS_MARKER_TAG | ((__u64)(sub) & 0xff) << 16 | \
				 ((__u64)(kind) & 0xffff))
#define BTS_MARKER_KIND(from)	((__u32)((from) & 0xffff))
#define BTS_MARKER_SUB(from)	((__u32)(((from) >> 16) & 0xff))

enum bts_marker_kind {
	/* The thread left the CPU.  to = timestamp (ns, the kernel's
	 * local_clock(), the printk clock); flags = CPU number.
	 */
	BTS_MARK_SWITCH_OUT	= 1,
	/* The thread was scheduled in.  Same payload as SWITCH_OUT. */
	BTS_MARK_SWITCH_IN	= 2,
	/* Recording resumed after a suspension; branches in between were not
	 * recorded.  sub = enum bts_gap_reason; to = timestamp of the resume
	 * (ns); flags = length of the gap in ns (0 if unknown).
	 */
	BTS_MARK_GAP		= 3,
	/* Recording stopped here (per-CPU kernel rings); the GAP marker that
	 * ends the suspension follows when it resumes.  sub = enum
	 * bts_gap_reason; to = timestamp (ns); flags = for BTS_GAP_TASK the
	 * thread id (global TID) of the task whose ring took BTS, else 0.
	 */
	BTS_MARK_SUSPEND	= 4,
	BTS_MARK_MAX		= 4,
};

enum bts_gap_reason {
	BTS_GAP_UNKNOWN		= 0,
	BTS_GAP_PERF		= 1,	/* perf held BTS, LBR or PT */
	BTS_GAP_DISABLED	= 2,	/* tracing was switched off, then on */
	BTS_GAP_OVERFLOW	= 3,	/* records dropped (emulation could not keep up) */
	BTS_GAP_TASK		= 4,	/* a traced task's ring held BTS (kernel rings) */
	BTS_GAP_MAX		= 4,
};

/* Largest ring a reader accepts (records): 2^24 records = 384 MiB. */
#define BTS_CRASH_MAX_CAPACITY	(1ULL << 24)

/* Records a CPU note in the vmcore crash notes carries at most. */
#define BTS_CRASH_CPU_NOTE_RECORDS	32

/* ---- Rings in kernel memory (found in a vmcore through VMCOREINFO) ------ */

#define BTS_CRASH_RING_MAGIC		0x52535442 /* "BTSR" */
#define BTS_CRASH_TABLE_MAGIC		0x54535442 /* "BTST" */
#define BTS_CRASH_RING_VERSION		1

/*
 * Descriptor of one ring (per CPU, or per task).  The records live in
 * physically contiguous memory at records_pa; the kernel (or hardware)
 * writes slot `index` next and wraps to 0 at `capacity`.  Slots are zero
 * until first written.
 */
struct bts_crash_ring {
	__u32 magic;		/* BTS_CRASH_RING_MAGIC */
	__u16 version;		/* BTS_CRASH_RING_VERSION */
	__u16 hdr_size;		/* sizeof(struct bts_crash_ring) */
	__u32 record_size;	/* 24 */
	__u32 flags;		/* BTS_RING_F_* */
	__u64 id;		/* CPU number or thread id */
	__u64 capacity;		/* slots */
	__u64 index;		/* next slot to write; valid when FROZEN */
	__u64 records_pa;	/* physical address of slot 0 */
	__u64 lost;		/* as in the note header */
	__u32 nr_gaps;
	__u16 source;		/* enum bts_crash_source */
	__u16 reserved0;
	__u64 freeze_ts;	/* local_clock() at freeze, 0 while live */
};

#define BTS_RING_F_WRAPPED	(1U << 0) /* index has passed capacity at least once */
#define BTS_RING_F_FROZEN	(1U << 1) /* recording stopped by the crash path */
#define BTS_RING_F_LOST_EXACT	(1U << 2)

/* Table of per-CPU rings; VMCOREINFO's BTS_CRASH_TABLE_PA points here. */
struct bts_crash_table {
	__u32 magic;		/* BTS_CRASH_TABLE_MAGIC */
	__u16 version;		/* BTS_CRASH_RING_VERSION */
	__u16 hdr_size;		/* sizeof(struct bts_crash_table) */
	__u32 nr_entries;	/* nr_cpu_ids */
	__u32 entry_size;	/* 8 */
	__u64 panic_cpu;	/* CPU that ran the crash path, ~0 if none */
	/* nr_entries __u64 at hdr_size: physical address of each CPU's
	 * struct bts_crash_ring, 0 when that CPU has none
	 */
	__u64 entries[];
};

/* ---- prctl ------------------------------------------------------------- */

/*
 * prctl(PR_BTS_CRASH, op, arg, 0, 0): tracing of the calling process
 * (docs/kernel.md).  ENABLE gives every thread of the process a ring of
 * arg records (1..65536) and returns 0: the caller's at once, each other
 * thread's before it runs user code again; threads and children created
 * afterwards inherit it, and it survives exec, except an exec or
 * credential change that makes the task non-dumpable (setuid and the
 * like), which ends it.  All new rings are allocated and charged before
 * any replaces an old one: on any error the process is untouched.
 * DISABLE ends tracing in every thread the same way; GET returns the
 * calling thread's ring size.  DISABLE and GET take no argument (0);
 * arguments 4 and 5 are always 0.
 * Errors: EINVAL (size, or a non-zero unused argument), ENOMEM (over
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK, counting the process's mlock()ed
 * pages, or no memory), EOPNOTSUPP (no BTS and no ds.emulate=1).
 */
#define PR_BTS_CRASH		0x42545343	/* "BTSC" */
#define PR_BTS_CRASH_ENABLE	1	/* arg = ring size in records */
#define PR_BTS_CRASH_DISABLE	2
#define PR_BTS_CRASH_GET	3	/* returns the ring size, 0 if off */
#define PR_BTS_CRASH_ENABLE_BYTES 4	/* as ENABLE, arg = ring size in bytes
					 * (rounded down to whole records)
					 */

#endif /* _UAPI_LINUX_BTS_CRASH_H */
