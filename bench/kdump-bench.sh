#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Reading a real vmcore, side by side (issue 4's bench): crash's own `bt -a`
# against `bts -n 0` (every CPU's whole ring), each 50 times in one crash
# session, and `btsdump vmcore -n 0` (no vmlinux) against `makedumpfile
# --dump-dmesg` on the same vmcore.  Each timed 5 times after a warm-up,
# median wall seconds; crash sessions include crash's start-up, so a bare
# session (start, quit) is timed too and subtracted for the ratio.
# Usage: kdump-bench.sh BUILDDIR   (makes a vmcore with tests/vm/run-kdump.sh)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=$build/kdump-bench
obj=$("$src/scripts/kernel-build.sh" 2>/dev/null | tail -n 1)
[ -f "$out/vmcore" ] || "$src/tests/vm/run-kdump.sh" "$obj" "$out" EXCEPTION >/dev/null
vmcore=$out/vmcore
median() {	# command...: median wall seconds of 5 runs after one warm-up
	"$@" >/dev/null 2>&1 || true
	for i in 1 2 3 4 5; do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", e - s }' 
	done | sort -n | sed -n 3p
}
session() {	# crash command, run 50 times in one session
	{ echo "extend $build/bts.so"
	  i=0; while [ -n "$1" ] && [ $i -lt 50 ]; do echo "$1"; i=$((i + 1)); done
	  echo quit; } > "$out/cmds"
	crash -s --kaslr auto "$obj/vmlinux" "$vmcore" -i "$out/cmds"
}
bare=$(median session "")
bt=$(median session "bt -a")
bts=$(median session "bts -n 0")
tool=$(median "$build/tools/btsdump" vmcore -n 0 "$vmcore")
dmesg=$(median makedumpfile --dump-dmesg "$vmcore" "$out/dmesg.txt")
echo "vmcore: $vmcore ($(du -h "$vmcore" | cut -f1))"
printf '%-42s %9s\n' "what" "seconds"
printf '%-42s %9.3f\n' "crash: start + quit" "$bare" "crash: start + 50 x bt -a" "$bt" \
	"crash: start + 50 x bts -n 0 (whole rings)" "$bts" \
	"btsdump vmcore -n 0 (no vmlinux)" "$tool" "makedumpfile --dump-dmesg" "$dmesg"
awk -v a="$bare" -v b="$bt" -v c="$bts" -v t="$tool" -v d="$dmesg" 'BEGIN {
	printf "ratio (bts - start) / (bt -a - start): %.2f\n", (c - a) / (b - a)
	printf "ratio btsdump / makedumpfile --dump-dmesg: %.2f\n", t / d }' 
