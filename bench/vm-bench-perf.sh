#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm-bench.sh's perf part (issue 25): what an LBR user costs at the context
# switch, on the LBR model with the PMU model (lbr=on,pmu=on, pti=off,
# nmi_watchdog=0): the patched kernel with nothing using the LBR
# (bts_crash.source=bts, no per-CPU ring), with perf record -b system-wide
# (init.sh btscrash.bench_perf: perf resets the LBR at every switch-in),
# with the recorder's LBR source (bts_crash.source=lbr), with both; and
# Linux without the patches, nothing using the LBR.  Guest instructions
# per switch and per core dump (vmbench, -icount) and MSR accesses per
# switch and per core dump from the pmu-log (bench/msr-per-unit.py), the
# MSRs that make them beside.  Called by vm-bench.sh, which exports the
# QEMU/icount environment.  CPU amd or zen5 (issue 31): the same on the
# AMD model (VM_AMD_CPU, VM_ZEN5_CPU: PerfMonV2 and LbrExtV2), where perf
# -b is AMD's LBR driver; no unpatched boot there.
# Usage: vm-bench-perf.sh OUTDIR PATCHED_OBJDIR [intel|amd|zen5]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$1 patched=$2 cpu=${3:-intel}
. "$src/tests/vm/vm-lib.sh"	# VM_AMD_CPU, VM_ZEN5_CPU
runs=vanilla
case $cpu in
intel) vanilla=$("$src/scripts/kernel-build.sh" vanilla 2>/dev/null | tail -n 1) ;;
amd) export LBR_MODEL_CPU=$VM_AMD_CPU; runs= ;;
zen5) export LBR_MODEL_CPU=$VM_ZEN5_CPU; runs= ;;
*) echo "vm-bench-perf: CPU is intel, amd or zen5, not $cpu" >&2; exit 2 ;;
esac
rm -rf "$out"
. "$src/bench/vm-bench-lib.sh"
nothing="bts_crash.source=bts bts_crash.cpu_records=0"
for run in "nothing:$nothing" "perf:$nothing btscrash.bench_perf" \
	   "lbr:bts_crash.source=lbr" "both:bts_crash.source=lbr btscrash.bench_perf" \
	   ${runs:+"vanilla:"}; do
	name=${run%%:*} args=${run#*:}
	obj=$patched
	[ "$name" != vanilla ] || obj=$vanilla
	# shellcheck disable=SC2086
	VM_DEFAULTS=1 VM_PERF=1 bench_boot lbr "$obj" "$out/$name" pti=off $args
done
bench_wait
awk '
$1 == "RESULT" || $1 == "MSR" { n = split(FILENAME, p, "/"); run = p[n - 1] }
$1 == "RESULT" {
	unit = $2 == "pingpong" ? 2 * 2000 : $2 == "branches" ? 200000 : 1
	t[run "/" $2] = $4 / unit
}
$1 == "MSR" { m[run "/" $2] = $4; w[run "/" $2] = $5 " " $6 " " $7 }
END {
	printf "%-8s %-9s %14s %8s %9s  %s\n", "LBR user", "bench", "guest insns", "ratio", "MSR", "most frequent MSRs per unit"
	nr = split("nothing perf lbr both " runs, rs, " ")
	split("pingpong coredump", bs, " ")
	for (j = 1; j <= 2; j++) for (i = 1; i <= nr; i++) {
		key = rs[i] "/" bs[j]; base = t["nothing/" bs[j]]
		if (!(key in t) || !base) { printf "%-8s %-9s missing\n", rs[i], bs[j]; bad = 1; continue }
		printf "%-8s %-9s %14.1f %8.4f %9s  %s\n", rs[i], bs[j], t[key], t[key] / base, m[key], w[key]
	}
	exit bad
}' runs="$runs" "$out"/*/bench.out "$out"/*/msr.out
