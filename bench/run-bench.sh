#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark: decode + classify + symbolize a 1 M-record trace with btsdump
# against eu-addr2line resolving the same 2 M addresses (function and
# file:line) on the same core, side by side in one run; prints both and the
# ratio.  Usage: run-bench.sh BUILD_DIR [RECORDS]
set -euo pipefail
build=$(realpath "${1:-build}")
n=${2:-1000000}
src=$(cd "$(dirname "$0")/.." && pwd)
fix=$src/tests/fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$src/bench/make-trace.py" "$work/recs" "$work/addrs" "$n"
"$build/btsdump" add-note --tid 999999 --capacity "$n" -o "$work/big.core" \
	"$fix/crasher-abort.core" "$work/recs"
cat "$work/big.core" "$work/addrs" "$fix/crasher" >/dev/null	# warm the cache

measure() {	# label, command...: prints "label seconds maxrss_kb"
	local label=$1
	shift
	/usr/bin/time -f "$label %e %M" -o "$work/t" "$@" >/dev/null
	cat "$work/t"
}
a=$(measure btsdump "$build/btsdump" --json --thread 999999 "$work/big.core" "$fix/crasher")
b=$(measure eu-addr2line sh -c "eu-addr2line --core='$work/big.core' -e '$fix/crasher' -f -s < '$work/addrs'")

echo "trace: $n records ($((2 * n)) addresses), $(date -u +%F), $(nproc) CPUs"
printf '%-14s %10s %14s %12s\n' tool seconds addresses/s "peak RSS MB"
for row in "$a" "$b"; do
	read -r name secs rss <<<"$row"
	awk -v n="$name" -v s="$secs" -v r="$rss" -v a=$((2 * n)) \
		'BEGIN { printf "%-14s %10.2f %14.0f %12.1f\n", n, s, (s > 0 ? a / s : 0), r / 1024 }'
done
read -r _ sa _ <<<"$a"
read -r _ sb _ <<<"$b"
awk -v a="$sa" -v b="$sb" 'BEGIN { if (a > 0) printf "ratio eu-addr2line / btsdump: %.2f (btsdump also classifies every branch and writes JSON)\n", b / a }'
