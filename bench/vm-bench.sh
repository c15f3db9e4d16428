#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel-side benchmarks in the test VM, as guest instruction counts and
# ratios against tracing off, side by side in one boot per backend:
#   emul     the emulation backend (Debian's QEMU, AMD -cpu max)
#   hw       the hardware backend on the BTS model (qemu/), pti=off
#   hw-pti   the same with page-table isolation: no hardware backend there
#            since issue 26 (traced tasks on the emulation)
#   lbr      the LBR source on the LBR model (bts_crash.source=lbr): its
#            "untraced" rows are every task's cost (the switch hook reads
#            the TOS and one FROM); compared with hw's untraced-key-off,
#            the same kernel with nothing recording
#   lbr-kernel  bts_crash.source=lbr-kernel on the LBR model: every CPU's
#            kernel branches kept in its LBR for an oops or panic; its
#            untraced rows (no hook at the switch) against the same base
# QEMU runs with -icount shift=0,sleep=off: the guest's clock advances one
# nanosecond per guest instruction, so vmbench's "ns" are guest
# instructions, repeatable and independent of the host's load.  What they
# cannot show: the model writes a BTS record in QEMU, not in guest code, so
# a traced branch costs the hardware backend no guest instruction here
# (a real CPU pays in memory traffic; docs/kernel.md).  Benchmarks, in the
# guest (tests/vm/vmbench.c; medians of several runs): pipe ping-pong
# between two processes (context switches), a loop of taken branches, and
# dumping a 48 MiB core, each (a) untraced before anything was ever traced
# (switch hook patched out), (b) untraced after (hook on), (c) traced.
# PART default: the cost of the patches as shipped, a boot with no btscrash
# parameter against Linux without them (kernel-build.sh vanilla, the same
# options), per switch, per branch and per core dump, on the BTS model and
# the LBR model, each with and without PTI; the goal is 1 % at most.
# PART perf (issue 25, bench/vm-bench-perf.sh): an LBR user's cost at the
# switch, perf record -b system-wide, the recorder's LBR source, both,
# nothing, on the LBR model with the PMU model.
# PART amd (issue 31): the same on the AMD model as a Zen 4 and as a Zen 5
# (PerfMonV2, LbrExtV2: perf -b is AMD's LBR driver), no unpatched boot.
# The kernel: KERNEL (6.1 or 6.12), the VM suite's default
# (tests/vm/vm-lib.sh) unless set.
# Usage: vm-bench.sh [OUTDIR [all|tracing|default|perf|amd]]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/vm-bench}
part=${2:-all}
. "$src/tests/vm/vm-lib.sh"	# KERNEL, exported for kernel-build.sh
obj=$("$src/scripts/kernel-build.sh" 2>/dev/null | tail -n 1)
QEMU=$("$src/scripts/qemu-build.sh" 2>/dev/null | tail -n 1)
# one vCPU: with -icount, QEMU 7.2 hangs bringing up a second one
# no oracle log: nothing checks it here, and a kernel-branch log under
# -icount runs to tens of gigabytes
export QEMU VM_QEMU_EXTRA="-icount shift=0,sleep=off" VM_SMP=1 VM_ORACLE_LOG=0
mkdir -p "$out"
case $part in
default) exec "$src/bench/vm-bench-default.sh" "$out/default" "$obj" ;;
perf) exec "$src/bench/vm-bench-perf.sh" "$out/perf" "$obj" ;;
amd)
	"$src/bench/vm-bench-perf.sh" "$out/amd" "$obj" amd
	exec "$src/bench/vm-bench-perf.sh" "$out/zen5" "$obj" zen5
	;;
all)
	"$src/bench/vm-bench-default.sh" "$out/default" "$obj"
	"$src/bench/vm-bench-perf.sh" "$out/perf" "$obj"
	"$src/bench/vm-bench-perf.sh" "$out/amd" "$obj" amd
	"$src/bench/vm-bench-perf.sh" "$out/zen5" "$obj" zen5
	;;
tracing) ;;
*) echo "vm-bench: PART is all, tracing, default, perf or amd, not $part" >&2; exit 2 ;;
esac
rm -rf "$out"/emul "$out"/hw "$out"/hw-pti "$out"/lbr "$out"/lbr-kernel
for run in emul:emul:pti=off hw:hw:pti=off hw-pti:hw:pti=on lbr:lbr:pti=off \
	   lbr-kernel:lbr-kernel:pti=off; do
	name=${run%%:*} rest=${run#*:}
	# lbr-kernel's rings are the LBR's own (32 records, written at a crash)
	rings=bts_crash.cpu_records=0
	[ "$name" = lbr-kernel ] && rings=
	BTSCRASH_BACKEND=${rest%%:*} "$src/tests/vm/run-vm.sh" "$obj" "$out/$name" \
		$rings btscrash.bench "${rest#*:}" >/dev/null
done
# per unit: ping-pong rounds are 2 switches, branches one per iteration
awk '
$1 == "RESULT" {
	split(FILENAME, p, "/"); be = p[length(p) - 1]
	unit = $2 == "pingpong" ? 2 * 2000 : $2 == "branches" ? 200000 : 1
	t[be "/" $2 "/" $3] = $4 / unit; n[$2] = 1
}
END {
	printf "%-7s %-9s %-17s %16s %8s\n", "backend", "bench", "variant", "guest insns/unit", "ratio"
	split("emul hw hw-pti", bes, " ")
	split("pingpong branches coredump", bs, " ")
	split("untraced-key-off untraced traced", vs, " ")
	for (i = 1; i <= 3; i++) for (j = 1; j <= 3; j++) {
		base = t[bes[i] "/" bs[j] "/untraced-key-off"]
		for (k = 1; k <= 3; k++) {
			key = bes[i] "/" bs[j] "/" vs[k]
			if (!(key in t) || !base) { printf "%-7s %-9s %-17s missing\n", bes[i], bs[j], vs[k]; bad = 1; continue }
			printf "%-7s %-9s %-17s %16.1f %8.2f\n", bes[i], bs[j], vs[k], t[key], t[key] / base
		}
	}
	# the LBR source against nothing recording (hw, switch hook off)
	for (j = 1; j <= 3; j++) {
		base = t["hw/" bs[j] "/untraced-key-off"]
		key = "lbr/" bs[j] "/untraced"
		if (!(key in t) || !base) { printf "%-7s %-9s %-17s missing\n", "lbr", bs[j], "untraced"; bad = 1; continue }
		printf "%-7s %-9s %-17s %16.1f %8.2f  (vs hw untraced-key-off)\n", "lbr", bs[j], "every task", t[key], t[key] / base
		key = "lbr-kernel/" bs[j] "/untraced-key-off"
		if (!(key in t)) { printf "%-7s %-9s %-17s missing\n", "lbr-k", bs[j], "untraced"; bad = 1; continue }
		printf "%-7s %-9s %-17s %16.1f %8.2f  (vs hw untraced-key-off)\n", "lbr-k", bs[j], "every CPU, kernel", t[key], t[key] / base
	}
	exit bad
}' "$out"/emul/bench.out "$out"/hw/bench.out "$out"/hw-pti/bench.out "$out"/lbr/bench.out \
	"$out"/lbr-kernel/bench.out
