#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm-bench.sh's default part: what the patches cost as shipped.  The
# patched kernel booted with no btscrash parameter against Linux ($KERNEL)
# without them (scripts/kernel-build.sh vanilla: the same options), on the
# BTS model and on the LBR model, each with pti=off and pti=on: guest
# instructions per context switch, per loop branch and per core dump
# (tests/vm/vmbench.c, btscrash.bench=base: the untraced runs only).
# The CPUs have the PMU model too (pmu=on: a real server's PMU; the NMI
# watchdog off, nmi_watchdog=0, so that nothing else uses it) and log every
# MSR access (pmu-log): bench/msr-per-unit.py counts them per switch, per
# branch and per core dump between vmbench's marks.
# Prints one row per model, PTI and bench, and whether every row is within
# the issue 26 goal of 1 %.  Called by vm-bench.sh, which exports the
# QEMU/icount environment.  Usage: vm-bench-default.sh OUTDIR PATCHED_OBJDIR
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$1 patched=$2
vanilla=$("$src/scripts/kernel-build.sh" vanilla 2>/dev/null | tail -n 1)
rm -rf "$out"
. "$src/bench/vm-bench-lib.sh"
for model in hw lbr; do
	for pti in off on; do
		for kernel in patched vanilla; do
			obj=$patched
			[ "$kernel" = patched ] || obj=$vanilla
			VM_DEFAULTS=1 bench_boot "$model" "$obj" \
				"$out/$model-pti$pti-$kernel" "pti=$pti"
		done
	done
done
bench_wait
# per unit as vm-bench.sh: ping-pong rounds are 2 switches
awk '
$1 == "RESULT" {
	n = split(FILENAME, p, "/"); run = p[n - 1]
	unit = $2 == "pingpong" ? 2 * 2000 : $2 == "branches" ? 200000 : 1
	t[run "/" $2] = $4 / unit
}
$1 == "MSR" { n = split(FILENAME, p, "/"); m[p[n - 1] "/" $2] = $4 }
END {
	printf "%-5s %-4s %-9s %14s %14s %8s %11s %11s\n", "model", "pti", "bench", \
		"insns patch", "insns vanil", "ratio", "MSR patch", "MSR vanil"
	split("hw lbr", ms, " "); split("off on", ps, " ")
	split("pingpong branches coredump", bs, " ")
	for (i = 1; i <= 2; i++) for (j = 1; j <= 2; j++) for (k = 1; k <= 3; k++) {
		run = ms[i] "-pti" ps[j]
		a = t[run "-patched/" bs[k]]; b = t[run "-vanilla/" bs[k]]
		if (!a || !b) { printf "%-5s %-4s %-9s missing\n", ms[i], ps[j], bs[k]; bad = 1; continue }
		printf "%-5s %-4s %-9s %14.1f %14.1f %8.4f %11s %11s\n", ms[i], ps[j], bs[k], a, b, a / b,
			m[run "-patched/" bs[k]], m[run "-vanilla/" bs[k]]
		if (a / b > 1.01) over = 1
	}
	print over ? "goal (within 1 % of unpatched on every row): NOT met" \
		   : "goal (within 1 % of unpatched on every row): met"
	exit bad
}' "$out"/*/bench.out "$out"/*/msr.out
