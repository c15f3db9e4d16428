#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One VM test of the `vm` meson suite: builds the kernel if needed
# (scripts/kernel-build.sh, ccache), boots it under QEMU TCG with the
# scenarios of tests/vm/init.sh, then checks what came back with
# tests/vm/check-vm.py (TAP).  Results stay in OUTDIR for a look afterwards.
# BTSCRASH_BACKEND=hw: on the BTS model (scripts/qemu-build.sh, cached).
# Usage: vm-test.sh BTSDUMP OUTDIR [EXTRA KERNEL ARGS...]
set -eu
btsdump=$1 out=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL
obj=$("$src/scripts/kernel-build.sh" 2>"$out.kernel-build.log" | tail -n 1) || {
	tail -n 40 "$out.kernel-build.log" >&2
	echo "vm-test: the kernel did not build (log: $out.kernel-build.log)" >&2
	exit 1
}
if [ "${BTSCRASH_BACKEND:-emul}" != emul ]; then
	QEMU=$("$src/scripts/qemu-build.sh" 2>"$out.qemu-build.log" | tail -n 1) || {
		tail -n 40 "$out.qemu-build.log" >&2
		echo "vm-test: the BTS model (QEMU) did not build (log: $out.qemu-build.log)" >&2
		exit 1
	}
	export QEMU
fi
rm -rf "$out"
"$src/tests/vm/run-vm.sh" "$obj" "$out" "$@"
# the LBR source's VM runs its own scenarios (tests/vm/init.sh)
check=check-vm.py
[ "${BTSCRASH_BACKEND:-emul}" = lbr ] && check=check-lbr.py
exec python3 "$src/tests/vm/$check" "$btsdump" "$out"
