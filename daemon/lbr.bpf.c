// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The stock-kernel collector's BPF program: at the signal_generate
 * tracepoint (raw), when a core-dumping signal is raised by a thread for itself
 * (a user fault's force_sig_fault, or abort()'s tgkill), copies the CPU's
 * LBR with bpf_get_branch_snapshot(), with how many of its entries perf's
 * read kept, and hands it to btsdumpd through a ring buffer
 * (docs/btsdumpd.md "Stock kernels").  Runs in the faulting
 * thread's context, in the kernel; loaded by lbr-collector.c, which also
 * runs btsdumpd_lbr_probe once (BPF_PROG_TEST_RUN) in its own context.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "lbr-snapshot.h"

char LICENSE[] SEC("license") = "GPL";

/* 256 KiB: about 300 snapshots (a crash storm while the collector is
 * starved of CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} snapshots SEC(".maps");

/* snapshots the ring had no room for (read by the collector) */
__u64 lost = 0;

/* the signals whose default action dumps core (signal(7)) */
#define CORE_SIGNALS	((1U << 3) | (1U << 4) | (1U << 5) | (1U << 6) | (1U << 7) | \
			 (1U << 8) | (1U << 11) | (1U << 24) | (1U << 25) | (1U << 31))

/* the record is built here (larger than the BPF stack), then copied out */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct btsdumpd_lbr_snap);
} scratch SEC(".maps");

/* Of perf's per-CPU state (arch/x86/events/perf_event.h), relocated
 * against the running kernel's BTF: how many entries its last LBR read
 * kept.  The helper copies every slot of cpu_hw_events.lbr_entries; the
 * read fills only the first lbr_stack.nr of them (Architectural LBR stops
 * at the first empty entry, intel_pmu_store_lbr; perf's filter drops
 * entries), and the slots beyond keep what an older read, maybe another
 * task's, left there. */
struct perf_branch_stack {
	__u64 nr;
} __attribute__((preserve_access_index));

struct cpu_hw_events {
	struct perf_branch_stack lbr_stack;
} __attribute__((preserve_access_index));

extern struct cpu_hw_events cpu_hw_events __ksym;

/* lbr_stack.nr of this CPU, -1 when unreadable (read soon after the
 * snapshot: a PMI in between that read the LBR again would change it) */
static __always_inline __s32 lbr_kept(void)
{
	struct cpu_hw_events *c = bpf_this_cpu_ptr(&cpu_hw_events);
	__u64 nr;

	if (bpf_core_read(&nr, sizeof(nr), &c->lbr_stack.nr) || nr > BTSDUMPD_LBR_MAX)
		return -1;
	return (__s32)nr;
}

/* Whether this kernel takes a branch snapshot on this CPU at all: the
 * helper's return (bytes, or -ENOENT where perf has no snapshot for the
 * CPU's LBR: AMD's before Linux 6.10).  Never attached, only test-run. */
SEC("raw_tp")
int btsdumpd_lbr_probe(void *ctx)
{
	struct btsdumpd_lbr_snap *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	return bpf_get_branch_snapshot(s->e, sizeof(s->e), 0);
}

/* A raw tracepoint: no tracefs needed to attach.  Its arguments are
 * TP_PROTO(int sig, struct kernel_siginfo *info, struct task_struct *task,
 * int group, int result) in include/trace/events/signal.h, the same on 6.1
 * and 6.12; only sig and task are read, task compared with current (no
 * field of a kernel struct is read but lbr_kept()'s).  kept: whether to
 * read lbr_stack.nr (btsdumpd_lbr_signal) or not (_blind). */
static __always_inline int lbr_signal(__u64 *ctx, int kept)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct btsdumpd_lbr_snap *s;
	__u32 zero = 0;
	int sig;
	long n;

	/* the signals kept are checked first: a snapshot costs an MSR read
	 * per LBR entry (96 on a 32-deep Intel stack), and every signal in
	 * the system comes here.  The LBR still holds the fault's user
	 * branches: with the collector's user-only branch filter the
	 * kernel's path to here and this program's own branches are not
	 * recorded (vm-collector*: each note equal to the model's log) */
	sig = (int)ctx[0];
	if (sig <= 0 || sig > 31 || !(CORE_SIGNALS & (1U << sig)) ||
	    ctx[2] != bpf_get_current_task())
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	n = bpf_get_branch_snapshot(s->e, sizeof(s->e), 0);
	s->magic = BTSDUMPD_LBR_MAGIC;
	s->tid = (__u32)id;
	s->tgid = id >> 32;
	s->sig = sig;
	s->time_ns = bpf_ktime_get_ns();
	s->nr = n < 0 ? n : n / sizeof(s->e[0]);
	s->kept = kept ? lbr_kept() : -1;
	s->cpu = bpf_get_smp_processor_id();
	if (bpf_ringbuf_output(&snapshots, s, sizeof(*s), 0))
		__sync_fetch_and_add(&lost, 1);
	return 0;
}

/* The program lbr-collector.c attaches: with the count perf's read kept
 * where the verifier finds cpu_hw_events (a kernel with
 * CONFIG_KALLSYMS_ALL, as Debian's), else _blind (lbr-note.c guesses). */
SEC("raw_tp/signal_generate")
int btsdumpd_lbr_signal(__u64 *ctx)
{
	return lbr_signal(ctx, 1);
}

SEC("raw_tp/signal_generate")
int btsdumpd_lbr_signal_blind(__u64 *ctx)
{
	return lbr_signal(ctx, 0);
}
