#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The stock-kernel LBR collector's VM test (meson: vm-collector,
# vm-collector-nopmu): run-collector-vm.sh, then check-collector.py (TAP)
# with this build's btsdump and btsdumpctl reading the stored cores.
# Usage: collector-test.sh BTSDUMPD BTSDUMPCTL BTSDUMP OUTDIR pmu|nopmu
set -u
here=$(dirname "$0")
if ! "$here/run-collector-vm.sh" "$1" "$2" "$4" "$5" >&2; then
	echo "not ok 1 - run-collector-vm.sh: the VM ran to its end"
	echo "1..1"
	exit 1
fi
exec python3 "$here/check-collector.py" "$3" "$2" "$4"
