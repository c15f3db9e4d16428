#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel-side benchmarks in the test VM (QEMU TCG, emulation backend), as
# ratios against tracing off, side by side in one boot: pipe ping-pong
# between two processes (context switches) and dumping a 48 MiB core, each
# (a) untraced before anything was ever traced (switch hook patched out),
# (b) untraced after (hook on), (c) both ends traced / a full 65536-record
# ring in the core.  Medians of several runs (tests/vm/vmbench.c).  Under
# TCG absolute times mean little; the ratios are what to read.  With the
# emulation backend (c) includes a single-step trap per user instruction.
# Usage: vm-bench.sh [OUTDIR]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/vm-bench}
obj=$("$src/scripts/kernel-build.sh" 2>/dev/null | tail -n 1)
rm -rf "$out"
"$src/tests/vm/run-vm.sh" "$obj" "$out" bts_crash.cpu_records=0 btscrash.bench
awk '
$1 == "RESULT" { t[$2 "/" $3] = $4; n[$2 "/" $3] = $5 }
END {
	printf "%-9s %-17s %14s %5s %8s\n", "bench", "variant", "median ns", "runs", "ratio"
	split("pingpong coredump", b, " ")
	split("untraced-key-off untraced traced", v, " ")
	for (i = 1; i <= 2; i++) {
		base = t[b[i] "/untraced-key-off"]
		for (j = 1; j <= 3; j++) {
			k = b[i] "/" v[j]
			if (!(k in t)) { printf "%-9s %-17s missing\n", b[i], v[j]; bad = 1; continue }
			printf "%-9s %-17s %14d %5d %8.2f\n", b[i], v[j], t[k], n[k], t[k] / base
		}
	}
	exit bad
}' "$out/bench.out"
