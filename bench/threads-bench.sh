#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark: btsdump on cores of many threads (1 k, 10 k, 50 k by default),
# each thread an NT_PRSTATUS and a trace note of 1-4 records
# (tests/helpers/make-threads-core.c, from tests/fixtures/crasher-abort.core), with
# eu-stack unwinding every thread of the same core as the anchor: CPU time
# (user+sys), wall time, threads/s, peak RSS, and the ratio of CPU times.
# No pass/fail (tests/test-threads.py asserts the memory bound).
# Usage: threads-bench.sh BUILD_DIR [THREADS...]; BENCH_BASELINE=BTSDUMP
# measures an older btsdump in the same run, as run-bench.sh.
set -euo pipefail

if [ $# -lt 1 ]; then echo "usage: $0 BUILD_DIR [THREADS...]" >&2; exit 2; fi
build=$(realpath "$1")
shift
counts=("$@")
[ $# -gt 0 ] || counts=(1000 10000 50000)
src=$(cd "$(dirname "$0")/.." && pwd)
fix=$src/tests/fixtures
exe=$fix/crasher
btsdump=$build/tools/btsdump
make=$build/tests/make-threads-core
base=${BENCH_BASELINE:-}

for tool in "$btsdump" "$make" eu-stack /usr/bin/time ${base:+"$base"}; do
	command -v "$tool" >/dev/null || { echo "threads-bench: $tool not found" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/btsthreads.XXXXXX")
trap 'rm -rf "$work"' EXIT
bench_name=threads-bench
# shellcheck source=bench/measure.sh
. "$src/bench/measure.sh"

row() {	# label threads "cpu_seconds maxrss_kb wall_seconds"
	echo "$3" | awk -v l="$1" -v n="$2" '{
		printf "%-15s %8d %8.2f %8.2f %12.0f %12.1f\n", l, n, $1, $3,
			($1 > 0 ? n / $1 : 0), $2 / 1024 }'
}

echo "threads: $(date -u +%F), $(nproc) CPUs, $(eu-stack --version | head -n 1)"
printf '%-15s %8s %8s %8s %12s %12s\n' tool threads "CPU s" "wall s" threads/s \
	"peak RSS MB"
for n in "${counts[@]}"; do
	"$make" "$fix/crasher-abort.core" "$n" "$work/t.core"
	cat "$work/t.core" "$exe" >/dev/null	# warm the page cache
	"$btsdump" --json "$fix/crasher-abort.core" "$exe" >/dev/null
	measure btsdump "$btsdump" --json "$work/t.core" "$exe"
	a=$REPLY
	row "btsdump --json" "$n" "$a"
	measure btsdump "$btsdump" "$work/t.core" "$exe"
	row "btsdump (text)" "$n" "$REPLY"
	if [ -n "$base" ]; then
		measure baseline "$base" --json "$work/t.core" "$exe"
		row "baseline" "$n" "$REPLY"
	fi
	measure eu-stack eu-stack --core="$work/t.core" -e "$exe"
	b=$REPLY
	row "eu-stack" "$n" "$b"
	awk -v a="${a%% *}" -v b="${b%% *}" 'BEGIN {
		if (a > 0)
			printf "ratio eu-stack / btsdump --json, CPU time: %.1f\n", b / a
		else
			print "ratio: btsdump too fast to time (0.00 s)" }'
	rm -f "$work/t.core"
done
