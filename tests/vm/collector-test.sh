#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The stock-kernel LBR collector's VM test (meson: vm-collector,
# vm-collector-nopmu, vm-collector-6.12, vm-collector-amd, -amd-6.1,
# vm-collector-zen5, vm-collector-arch and -arch-6.1 on Architectural LBR):
# run-collector-vm.sh, then check-collector.py (TAP) with this build's
# btsdump and btsdumpctl reading the stored cores; vm-collector-signals,
# -signals-amd: check-collector-signals.py on the model's MSR log.
# Usage: collector-test.sh BTSDUMPD BTSDUMPCTL BTSDUMP OUTDIR
#   pmu|nopmu|amd|zen5|arch|signals|signals-amd
set -u
here=$(dirname "$0")
# the model's log's size when the storm begins (STORM-BEGIN on the
# console): check-collector.py reads no further (the storm's crashes grow
# it to gigabytes)
rm -f "$4/console.log"
(
	sleep 10	# run-collector-vm.sh empties OUTDIR first
	while ! grep -qs 'STORM-BEGIN' "$4/console.log"; do
		sleep 1
	done
	stat -c %s "$4/lbr.log" > "$4/storm-offset"
) &
watcher=$!
trap 'kill $watcher 2>/dev/null' EXIT
if ! "$here/run-collector-vm.sh" "$1" "$2" "$4" "$5" >&2; then
	echo "not ok 1 - run-collector-vm.sh: the VM ran to its end"
	echo "1..1"
	exit 1
fi
kill $watcher 2>/dev/null
case $5 in
signals*) python3 "$here/check-collector-signals.py" "$4" ;;
*) python3 "$here/check-collector.py" "$3" "$2" "$4" ;;
esac
rc=$?
# the storm's model log runs to gigabytes: not kept
[ "${VM_COLLECTOR_STORM:-0}" = 0 ] || rm -f "$4/lbr.log"
exit $rc
