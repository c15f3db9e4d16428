#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The test command of the README and of CI: installs what is needed, builds
# with every part (-Dcomplete: a missing dependency fails configuration,
# naming its package), runs every meson test suite (unit, tool, fixtures,
# fuzz, vm) and the unit suite under valgrind, and beside them the unit and
# tool suites again under AddressSanitizer+UBSan.  Every pass runs even when an earlier
# one failed; a skipped test counts as a failure (nothing is left out
# silently).  Exit status non-zero on any failure, with a summary.
set -u
cd "$(dirname "$0")/.."
# everything, the kernel's and the VM's packages (crash's defs.h among
# them) included, before meson looks for it
scripts/install-deps.sh kernel || exit 1
export BTSCRASH_COMPLETE=1	# tests that would skip a part fail instead

# Disk: a full run from empty caches takes about 20 GB at its peak (the
# caches about 11: model, kernels, crash, ccache; two VM tests at a time,
# up to 3.5 GB of oracle logs each until their checks pass).  Refuse to
# start without it, rather than fail an hour in with ENOSPC.
need=${BTSCRASH_MIN_FREE_GB:-20}
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
mkdir -p "$cache"
for d in . "$cache"; do
	# shellcheck disable=SC2046
	set -- $(df -P -BG "$d" | awk 'NR == 2 { sub("G", "", $4); print $4, $6 }')
	if [ "$1" -lt "$need" ]; then
		echo "test.sh: $1 GB free on $2 ($d), a full run needs $need GB (BTSCRASH_MIN_FREE_GB)" >&2
		exit 1
	fi
done

# setup BUILDDIR OPTIONS...: configure, or reconfigure a directory another
# command (scripts/demo.sh, a developer) set up with other options.
setup() {
	dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$@" "$dir"
	else
		meson setup "$@" "$dir"
	fi >/dev/null
}

failed=
# pass NAME BUILDDIR LOG MESON-TEST-ARGS...: one meson test run; its
# failures and its skipped tests (from its test log) are remembered.
pass() {
	name=$1 dir=$2 log=$3
	shift 3
	echo "== $name"
	meson test -C "$dir" --print-errorlogs "$@" || failed="$failed $name"
	skipped=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        print(t["name"])' "$dir/meson-logs/$log" 2>/dev/null)
	if [ -n "$skipped" ]; then
		echo "$name: skipped, which a full run does not allow:" $skipped
		failed="$failed $name(skipped)"
	fi
}

# The sanitizer pass runs beside the main one, one test at a time, its
# output kept and shown at the end: run after it, it was the last minutes
# of a cold run with a core mostly idle (tests/README.md "CI time").
# The load is the VM suite's, so its timeouts are given room.
asan_log=$(mktemp)
(
	if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			pass asan build-asan testlog.json --suite unit --suite tool \
			--num-processes 1 --timeout-multiplier 3
	else
		failed="$failed configure-asan"
	fi
	[ -z "$failed" ] || echo "$failed" > "$asan_log.failed"
) > "$asan_log" 2>&1 &
asan_pid=$!
if setup build -Dcomplete=true; then
	pass tests build testlog.json
	pass valgrind build testlog-valgrind.json --setup valgrind --suite unit
else
	failed="$failed configure"
fi
wait "$asan_pid"
cat "$asan_log"
[ ! -s "$asan_log.failed" ] || failed="$failed $(cat "$asan_log.failed")"
rm -f "$asan_log" "$asan_log.failed"
if [ -n "$failed" ]; then
	echo "test.sh: FAILED:$failed"
	exit 1
fi
echo "test.sh: every pass succeeded"
