# shellcheck shell=bash disable=SC2154 # work, bench_name: the caller's
# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benchmarks (run-bench.sh, threads-bench.sh): measure()
# times one command with /usr/bin/time.  Needs $work (a scratch directory)
# and $bench_name (for messages).

# measure LABEL CMD...: runs CMD (stdout to /dev/null), fails if it fails,
# sets REPLY to "cpu_seconds maxrss_kb wall_seconds".
measure() {
	local label=$1 rc=0
	shift
	/usr/bin/time -f "%U %S %M %e" -o "$work/time" "$@" >/dev/null || rc=$?
	if [ "$rc" != 0 ]; then
		echo "$bench_name: $label exited with $rc" >&2
		exit 1
	fi
	REPLY=$(tail -n 1 "$work/time" | awk '{ printf "%.2f %s %s", $1 + $2, $3, $4 }')
}
