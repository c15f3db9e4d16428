#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark: btsdump decoding (classify + symbolize + JSON) a 1 M-record trace
# against eu-addr2line resolving the same 2 M addresses on the same core, in
# one run: CPU time (user+sys; the machine is shared, wall time is not
# comparable), wall time, records/s, peak RSS of both, and the ratio of CPU
# times.  No pass/fail.
# Usage: run-bench.sh BUILD_DIR [RECORDS]; environment BENCH_CALLGRIND=N,
# BENCH_LIBC_BRANCHES=K and BENCH_BASELINE=BTSDUMP (an older btsdump measured
# in the same run) as in bench/README.md.
set -euo pipefail

usage() { echo "usage: $0 BUILD_DIR [RECORDS]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
build=$(realpath "$1")
n=${2:-1000000}
cg=${BENCH_CALLGRIND:-0}
src=$(cd "$(dirname "$0")/.." && pwd)
fix=$src/tests/fixtures
exe=$fix/crasher
btsdump=$build/tools/btsdump
tid=999999	# not the fixture's thread: one note per id (docs/format.md §2.2)

for tool in "$btsdump" eu-addr2line /usr/bin/time python3; do
	command -v "$tool" >/dev/null || { echo "run-bench: $tool not found" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/btsbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The trace and its core.  Capacity: 2^20 slots, or more for a larger N.
cap=$(( n > 1048576 ? n : 1048576 ))
python3 "$src/bench/make-trace.py" -n "$n" \
	--libc-branches "${BENCH_LIBC_BRANCHES:-2000}" "$work/recs" "$work/addrs"
"$btsdump" add-note --tid "$tid" --capacity "$cap" -o "$work/big.core" \
	"$fix/crasher-abort.core" "$work/recs"

# Warm the page cache: the inputs, and every file each tool opens (the
# executable, glibc and its separate debuginfo) by a small run of each.
cat "$work/big.core" "$work/recs" "$work/addrs" "$exe" >/dev/null
"$btsdump" --json "$fix/crasher-abort.core" "$exe" >/dev/null
head -n 2000 "$work/addrs" |
	eu-addr2line --core="$work/big.core" -e "$exe" -f -s >/dev/null

bench_name=run-bench
# shellcheck source=bench/measure.sh
. "$src/bench/measure.sh"

measure btsdump "$btsdump" --json --thread "$tid" "$work/big.core" "$exe"
a=$REPLY
base=${BENCH_BASELINE:-}
if [ -n "$base" ]; then
	"$base" --json "$fix/crasher-abort.core" "$exe" >/dev/null
	measure baseline "$base" --json --thread "$tid" "$work/big.core" "$exe"
	c=$REPLY
fi
# shellcheck disable=SC2016 # expanded by the inner sh
measure eu-addr2line sh -c 'exec eu-addr2line --core="$1" -e "$2" -f -s < "$3"' \
	sh "$work/big.core" "$exe" "$work/addrs"
b=$REPLY

echo
echo "trace: $n records ($((2 * n)) addresses, $(sort -u "$work/addrs" | wc -l) distinct)," \
	"$(date -u +%F), $(nproc) CPUs, $(eu-addr2line --version | head -n 1)"
printf '%-14s %8s %8s %12s %13s %12s\n' tool "CPU s" "wall s" records/s \
	addresses/s "peak RSS MB"
row() {	# label "cpu_seconds maxrss_kb wall_seconds"
	echo "$2" | awk -v l="$1" -v n="$n" '{
		r = $1 > 0 ? n / $1 : 0
		printf "%-14s %8.2f %8.2f %12.0f %13.0f %12.1f\n", l, $1, $3, r, 2 * r, $2 / 1024 }'
}
row "btsdump --json" "$a"
[ -z "$base" ] || row "baseline" "$c"
row "eu-addr2line" "$b"
awk -v a="${a%% *}" -v b="${b%% *}" 'BEGIN {
	if (a > 0)
		printf "ratio eu-addr2line / btsdump, CPU time: %.1f\n", b / a
	else
		print "ratio: btsdump too fast to time (0.00 s)" }'
[ -z "$base" ] || awk -v a="${a%% *}" -v c="${c%% *}" 'BEGIN {
	if (a > 0)
		printf "ratio baseline / btsdump, CPU time: %.1f\n", c / a }'

# Optional: instruction counts under callgrind on a smaller trace (the first
# BENCH_CALLGRIND records).  Three runs separate the costs: 1 record (start-up:
# libdwfl reporting the modules), each distinct branch once (plus the first
# lookup of every distinct address), the whole trace (plus cached repeats).
if [ "$cg" != 0 ]; then
	command -v valgrind >/dev/null || { echo "run-bench: valgrind not found" >&2; exit 1; }
	cg_ir() {	# NAME RECORDS_FILE: prints btsdump's total Ir on that trace
		"$btsdump" add-note --tid "$tid" -o "$work/cg.core" \
			"$fix/crasher-abort.core" "$2"
		valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" -q \
			"$btsdump" --json --thread "$tid" "$work/cg.core" "$exe" >/dev/null
		sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$work/cg.$1"
	}
	sed -n "2,$((cg + 1))p" "$work/recs" >"$work/cg.n"
	sort -u "$work/cg.n" >"$work/cg.d"
	head -n 1 "$work/cg.n" >"$work/cg.1"
	d=$(wc -l <"$work/cg.d")
	u=$(tr ' ' '\n' <"$work/cg.d" | sort -u | wc -l)
	ir1=$(cg_ir one "$work/cg.1")
	ird=$(cg_ir distinct "$work/cg.d")
	irn=$(cg_ir all "$work/cg.n")
	echo
	echo "callgrind, btsdump --json, instructions (Ir):"
	awk -v n="$cg" -v d="$d" -v u="$u" -v a="$ir1" -v b="$ird" -v c="$irn" 'BEGIN {
		printf "  %-46s %10.1f M\n", "start-up (1 record)", a / 1e6
		printf "  %-46s %10.2f M\n", "first lookup, per distinct address (" u ")", (b - a) / u / 1e6
		printf "  %-46s %10.0f\n", "per record once cached (" n - d " repeats)", (c - b) / (n - d)
		printf "  %-46s %10.1f M\n", "total, " n " records", c / 1e6 }'
	echo "  where they go (inclusive, whole trace):"
	callgrind_annotate --inclusive=yes "$work/cg.all" 2>/dev/null |
		awk '/btsdec_report/ { on = 1 }
		     on && NF { sub(/ \[.*/, ""); sub(/[^ ]*\//, "")
				if (!seen[$0]++) print "   " $0; if (k++ == 20) exit }'
fi
