#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The test command of the README and of CI: installs what is needed, builds
# with every part (-Dcomplete: a missing dependency fails configuration,
# naming its package), runs every meson test suite (unit, tool, fixtures,
# fuzz, vm), then the unit and tool suites again under AddressSanitizer+UBSan
# and the unit suite under valgrind.  Every pass runs even when an earlier
# one failed; a skipped test counts as a failure (nothing is left out
# silently).  Exit status non-zero on any failure, with a summary.
set -u
cd "$(dirname "$0")/.."
# everything, the kernel's and the VM's packages (crash's defs.h among
# them) included, before meson looks for it
scripts/install-deps.sh kernel || exit 1
export BTSCRASH_COMPLETE=1	# tests that would skip a part fail instead

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

if setup build -Dcomplete=true; then
	pass tests build testlog.json
	pass valgrind build testlog-valgrind.json --setup valgrind --suite unit
else
	failed="$failed configure"
fi
if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		pass asan build-asan testlog.json --suite unit --suite tool
else
	failed="$failed configure-asan"
fi
if [ -n "$failed" ]; then
	echo "test.sh: FAILED:$failed"
	exit 1
fi
echo "test.sh: every pass succeeded"
