#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What the stock-kernel LBR collector (btsdumpd --lbr-collector) costs, on
# Debian's stock kernel on the PMU model (one vCPU under -icount
# shift=0,sleep=off: vmbench's "ns" are guest instructions, repeatable;
# every MSR access in the model's pmu-log): per context switch (pipe
# ping-pong: perf resets the LBR at each switch-in for the collector's
# system-wide event), per core dump (48 MiB to a file: the BPF program at
# the signal, the collector waking to write the snapshot; the handler's
# note is user space after the dump and not in it) and over 10 s of idle
# (its checks every 250 ms: guest instructions system-wide from perf stat,
# MSR accesses between vmbench's marks) and per signal that is not a
# crash (vmbench signals: SIGUSR1, handled; the BPF program runs at each
# one's generation), without the collector, with it
# armed, and without it again after it stopped ("after": the baseline
# held), in one boot (tests/vm/run-collector-vm.sh CASE bench).
# Prints the table bench/README.md quotes.  VM_STOCK_KERNEL: the kernel's
# meta package (default linux-image-6.12-amd64; linux-image-amd64: 6.1).
# Usage: vm-bench-collector.sh BTSDUMPD BTSDUMPCTL OUTDIR
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$3
VM_STOCK_KERNEL=${VM_STOCK_KERNEL:-linux-image-6.12-amd64}
export VM_STOCK_KERNEL
"$src/tests/vm/run-collector-vm.sh" "$1" "$2" "$out" bench >&2
python3 "$src/bench/msr-per-unit.py" "$out/bench.out" "$out/pmu.log" > "$out/msr.out"
rm -f "$out/pmu.log"
echo "$(cat "$out/kernel"), the PMU model, one vCPU, -icount"
awk '
$1 == "RESULT" && FILENAME ~ /bench.out$/ {
	unit = $2 == "pingpong" ? 2 * 2000 : $2 == "signals" ? 1000 : 1
	t[$3 "/" $2] = $4 / unit
}
$1 == "IDLE" { t[$2 "/idle"] = $3 }
$1 == "MSR" { m[$3 "/" $2] = $4; w[$3 "/" $2] = $5 " " $6 " " $7 }
END {
	printf "%-9s %-10s %14s %8s %9s  %s\n", "bench", "collector", "guest insns", "ratio", "MSR", "most frequent MSRs per unit"
	split("pingpong coredump idle signals", bs, " ")
	split("without collector after", vs, " ")
	for (j = 1; j <= 4; j++) for (i = 1; i <= 3; i++) {
		v = vs[i]
		key = v "/" bs[j]; base = t["without/" bs[j]]
		if (!(key in t) || !base) { printf "%-9s %-10s missing\n", bs[j], v; bad = 1; continue }
		printf "%-9s %-10s %14.1f %8.4f %9s  %s\n", bs[j], v, t[key], t[key] / base, m[key], w[key]
	}
	exit bad
}' "$out/bench.out" "$out/msr.out"
