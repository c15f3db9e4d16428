#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kexec leaves no CPU recording (issue 26 §2): on the BTS model with 2
# vCPUs, a traced program spinning on CPU 1 and CPU 0's kernel ring on,
# kexec -l + kexec -e into the same kernel.  The model stops the VM with a
# `bts-model:` line if any CPU writes a record through a DS area the new
# kernel has not set up; the new kernel must boot to its /init.  TAP.
# Env: BTSCRASH_BACKEND (hw, the default here, or lbr), QEMU (else built).
# Usage: kexec-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
export BTSCRASH_BACKEND="${BTSCRASH_BACKEND:-hw}"
obj=$("$src/scripts/kernel-build.sh" 2>"$out.kernel-build.log" | tail -n 1) ||
	{ echo "Bail out! the kernel did not build (log: $out.kernel-build.log)"; exit 1; }
[ -x "${QEMU:-}" ] || QEMU=$("$src/scripts/qemu-build.sh" 2>"$out.qemu-build.log" | tail -n 1) ||
	{ echo "Bail out! the model (QEMU) did not build"; exit 1; }
export QEMU
vm_workdir
root=$work/root
vm_root "$root"
vm_add_dynamic "$root" /usr/sbin/kexec
mkdir -p "$root/boot" "$out"
cp "$obj/arch/x86/boot/bzImage" "$root/boot/"
vm_pack "$root" "$work/initrd.gz"
cp "$work/initrd.gz" "$root/boot/initrd.gz"	# the second kernel's: the same
vm_pack "$root" "$work/initrd.gz"
VM_ORACLE_LOG=0 vm_machine "$out"
# shellcheck disable=SC2086
$vm_qemu -m 1G -smp 2 -nographic -no-reboot \
	-kernel "$obj/arch/x86/boot/bzImage" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 $vm_backend_args btscrash.kexec" \
	> "$out/console.log" 2>&1 &
qemu_pid=$!
vm_wait "$qemu_pid" "$out/console.log" 'BTSCRASH-KEXEC-\(BOOTED\|FAILED\)' 600
qemu_pid=
echo "1..3"
n=0 bad=0
check() {	# description, command...: one TAP line for the command's status
	n=$((n + 1)) what=$1
	shift
	if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; bad=1; fi
}
log=$out/console.log
check "the first kernel ran kexec -e with a traced program on CPU 1" \
	grep -q 'BTSCRASH-KEXEC-STARTING' "$log"
grep 'bts-model:' "$log" | sed 's/^/# /'
check "no CPU wrote a record through the old kernel's DS area (no bts-model: stop)" \
	test -z "$(grep 'bts-model:' "$log")"
check "the second kernel booted to /init" grep -q 'BTSCRASH-KEXEC-BOOTED' "$log"
exit $bad
