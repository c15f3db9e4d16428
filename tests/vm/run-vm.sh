#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots the btscrash test kernel under QEMU TCG (nested KVM hangs here) with
# an initramfs of busybox, the crasher and btsrun (all static), runs
# tests/vm/init.sh in it and extracts the results (cores, logs, dmesg) into
# OUTDIR.  With BTSDUMPD set, also btsdumpd as the core_pattern handler.
# BTSCRASH_BACKEND=hw (and QEMU, BTS_MODEL_CPU): on the BTS model, the
# hardware backend recording (tests/vm/vm-lib.sh vm_machine).  VM_SMP: vCPUs
# (default 2).  VM_CPU_EXTRA, VM_PMU_LOG: vm_machine's; VM_PERF: perf too.
# Usage: run-vm.sh OBJDIR OUTDIR [EXTRA KERNEL ARGS...]
set -eu
obj=$1 out=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
. "$src/tests/vm/vm-lib.sh"
vm_root "$root"
# btsdumpd as the core_pattern handler of the daemon scenario (env BTSDUMPD)
if [ -n "${BTSDUMPD:-}" ] && [ -x "$BTSDUMPD" ]; then
	vm_add_dynamic "$root" "$BTSDUMPD"
	mkdir -p "$root/usr/libexec"
	mv "$root$BTSDUMPD" "$root/usr/libexec/btsdumpd"
fi
# VM_PERF=1: Debian's perf in the root (bench/vm-bench.sh's perf part)
[ "${VM_PERF:-0}" = 0 ] || vm_add_dynamic "$root" /usr/bin/perf
mkdir -p "$out"
# user cores are checked: log user-mode branches (VM_ORACLE_CPL: another CPL)
vm_machine "$out" "${VM_ORACLE_CPL:-3}"
cp "$root/bin/crasher" "$out/crasher"	# the exact binary, for symbols
cp "$root/bin/crasher32" "$out/crasher32"
cp "$root/bin/btsabi" "$root/bin/btsabi-hi" "$out/"
vm_pack "$root" "$work/initrd.gz"
truncate -s 64M "$work/results.img"
# 1500 s: at a load of 20-27 on the 2 cores, 600 s ended vm-lbr-zen5's boot
# and two bench boots with perf mid-run (the vm tests' meson timeout: 1800)
# shellcheck disable=SC2086
vm_guard "$out/console.log" timeout 1500 $vm_qemu -m 512 -smp "${VM_SMP:-2}" \
	-nographic -no-reboot -kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$work/initrd.gz" \
	-drive "file=$work/results.img,format=raw,if=virtio" \
	-append "console=ttyS0 panic=-1 printk.devkmsg=on $vm_backend_args $*" \
	> "$out/console.log" 2>&1 || true
# the BTS model stops the VM with one line when the guest breaks its rules
grep -h 'bts-model:' "$out/console.log" >&2 && exit 1
grep -q BTSCRASH-VM-DONE "$out/console.log" ||
	{ tail -40 "$out/console.log" >&2; echo "run-vm: the VM did not finish" >&2; exit 1; }
tar -xf "$work/results.img" -C "$out"
