#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs a libFuzzer target for a bounded time on a scratch corpus seeded from
# the given directories (read-only), then removes the scratch corpus.  Exit
# 77 (skip) when the fuzzer was not built (no clang with libFuzzer); a finding
# is kept in the current directory.  Usage: run-fuzzer.sh FUZZER SECONDS SEEDDIR...
set -eu
fuzzer=$1 secs=$2
shift 2
[ -x "$fuzzer" ] || { echo "fuzzer $fuzzer not built: skipped"; exit 77; }
fuzzer=$(realpath "$fuzzer")
seeds=
for d in "$@"; do seeds="$seeds $(realpath "$d")"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first corpus directory is the only one libFuzzer writes to.  Its exit
# status on a finding is 77 by default, hence the explicit exit 1 below.
prefix="$PWD/$(basename "$fuzzer")-"
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
	-print_final_stats=1 -artifact_prefix="$prefix" "$work" $seeds || {
	for f in "$prefix"crash-* "$prefix"leak-* "$prefix"timeout-* \
		 "$prefix"oom-*; do
		[ -f "$f" ] && { echo "reproducer $f:"; od -A x -t x1z "$f" | head -40; }
	done
	exit 1
}
