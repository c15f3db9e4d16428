#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots the btscrash test kernel under QEMU TCG with kdump loaded (kexec -p,
# the same bzImage as capture kernel), provokes a panic with LKDTM while a
# traced process runs, lets the capture kernel save the dump with
# makedumpfile -F -d 31 onto a virtio disk, and reassembles it on the host
# (makedumpfile -R) as OUTDIR/vmcore (kdump-compressed), with the console
# log and the traced process's pid (OUTDIR/traced.pid).  The capture kernel
# also prints btsdump's report of /proc/vmcore (ELF) on the console, between
# BTSCRASH-REPORT-BEGIN/END (env BTSDUMP, default build/tools/btsdump).
# BTSCRASH_BACKEND=hw (QEMU, BTS_MODEL_CPU): on the BTS model, the hardware
# backend's per-CPU kernel rings (tests/vm/vm-lib.sh vm_machine).
# Usage: run-kdump.sh OBJDIR OUTDIR LKDTM_TYPE [EXTRA KERNEL ARGS...]
set -eu
obj=$1 out=$2 type=$3
shift 3
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"
vm_workdir
root=$work/root
vm_root "$root"
vm_add_dynamic "$root" /usr/sbin/kexec /usr/bin/makedumpfile
# btsdump for the capture kernel's own report (BTSDUMP, or build/tools/btsdump)
btsdump=${BTSDUMP:-$src/build/tools/btsdump}
if [ -x "$btsdump" ]; then
	vm_add_dynamic "$root" "$btsdump"
	mv "$root$btsdump" "$root/usr/bin/btsdump" 2>/dev/null ||
		{ mkdir -p "$root/usr/bin" && mv "$root$btsdump" "$root/usr/bin/btsdump"; }
fi
vm_pack "$root" "$work/capture.gz"	# the capture kernel's initramfs
mkdir -p "$root/boot" "$out"
cp "$obj/arch/x86/boot/bzImage" "$work/capture.gz" "$root/boot/"
vm_pack "$root" "$work/initrd.gz"
cp "$root/bin/crasher" "$out/crasher"
truncate -s 256M "$work/disk.img"
vm_machine "$out"
# no_timer_check: on a loaded host TCG is too slow for the boot's IO-APIC
# timer check, which then panics ("IO-APIC + timer doesn't work!"; seen at a
# load of 19 on the 2 cores), as in pmu-vm.sh; the capture kernel too (init.sh)
: > "$out/console.log"	# before vm_wait looks (vm-lib.sh vm_boot)
# shellcheck disable=SC2086
$vm_qemu -m 1G -smp 2 \
	-nographic -no-reboot -kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$work/initrd.gz" \
	-drive "file=$work/disk.img,format=raw,if=virtio" \
	-append "console=ttyS0 no_timer_check $vm_backend_args crashkernel=256M btscrash.kdump=$type $*" \
	> "$out/console.log" 2>&1 &
qemu_pid=$!
# The capture kernel's poweroff/reboot can hang: end QEMU on the marker.
# 1200 s: at a load of 19 on the 2 cores 600 s ended a run in its crash path
vm_wait "$qemu_pid" "$out/console.log" 'BTSCRASH-KDUMP-\(SAVED\|FAILED\)' 1200
qemu_pid=
vm_log_done "$out"	# VM_LBR_LOG_TAIL: the log's end written
sed -n 's/.*BTSCRASH-TRACED-PID \([0-9]*\).*/\1/p' "$out/console.log" | head -n 1 > "$out/traced.pid"
grep 'bts-model:' "$out/console.log" >&2 && exit 1
grep -q 'BTSCRASH-KDUMP-SAVED rc=0' "$out/console.log" || {
	tail -n 40 "$out/console.log" >&2
	echo "run-kdump: no dump was saved ($type)" >&2
	exit 1
}
rm -f "$out/vmcore"
makedumpfile -R "$out/vmcore" < "$work/disk.img" >/dev/null
echo "$out/vmcore"
