#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux on the PMU model (tests/qemu/, VM_PMU_CPU): boots the test kernel
# (scripts/kernel-build.sh) with a busybox initramfs holding Debian's perf
# (linux-perf) and pmuloop (exact known counts); the guest lists its PMUs
# and LBR depth and runs `perf stat` on pmuloop; check-pmu-vm.py checks
# the console (TAP): Linux's Intel PMU driver found, cpu and intel_bts
# event sources, 32 LBR entries, perf's counts equal to pmuloop's.
# Usage: pmu-vm.sh OUTDIR [QEMU]
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
mkdir -p "$out"
obj=$("$src/scripts/kernel-build.sh" 2>"$out/kernel-build.log") ||
	{ tail -20 "$out/kernel-build.log" >&2; echo "pmu-vm: no kernel" >&2; exit 1; }
q=${2:-$("$src/scripts/qemu-build.sh" 2>"$out/qemu-build.log" | tail -n 1)}
[ -x "$q" ] || { tail -20 "$out/qemu-build.log" >&2; echo "pmu-vm: no QEMU model" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
gcc -static -nostdlib -o "$root/bin/pmuloop" "$src/tests/vm/pmuloop.S"
vm_add_dynamic "$root" /usr/bin/perf
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo "PMU-DEVICES: $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
echo "PMU-BRANCHES: $(cat /sys/devices/cpu/caps/branches 2>&1)"
perf stat -x, -e instructions:u,branches:u,cycles:u /bin/pmuloop 2>&1 |
	sed 's/^/PMU-STAT: /'
echo PMU-VM-DONE
poweroff -f
INIT
chmod +x "$root/init"
vm_pack "$root" "$work/initrd.gz"
# pti=off: Linux 6.1 registers intel_bts only without page-table isolation
# (arch/x86/events/intel/bts.c bts_init(): BTS writes through the kernel
# map), and this Intel CPU is not marked immune to Meltdown
timeout 600 "$q" -L /usr/share/seabios -L /usr/share/qemu -nic none \
	-accel tcg,thread=single -cpu "$VM_PMU_CPU" -m 512 -smp 2 \
	-nographic -no-reboot -kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$work/initrd.gz" -append "console=ttyS0 panic=-1 pti=off" \
	> "$out/console.log" 2>&1 || true
exec python3 "$src/tests/vm/check-pmu-vm.py" "$out/console.log"
