#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# perf's LBR users on the LBR models (qemu/): boots the test kernel
# (scripts/kernel-build.sh, KERNEL) with a busybox initramfs holding
# Debian's perf and lbrcalls (a known call chain, pinned to CPU 0) on
# MODEL "arch" (VM_ARCH_LBR_CPU: Architectural LBR) or "legacy"
# (VM_PMU_CPU: the model-specific Skylake stack); the guest runs `perf
# record -b` (every branch, user and kernel, frozen on PMI) and `perf
# record --call-graph lbr` (user call stacks, call-stack mode) and sends
# perf's raw samples (perf report -D) on a second serial port.  The model
# logs the whole LBR stack at each NMI (lbr-log-nmi=on: Linux's PMI is an
# NMI; the pushes only of user branches, lbr-log-cpl=3).  check-lbr-perf.py checks (TAP): Linux's PMU driver and its LBR
# (Architectural LBR or not), no warning, the recorder's LBR source
# refusing Arch LBR with its one line, and each of perf's samples equal,
# in order, to the stack the model held at an NMI; the call stacks three
# calls deep in lbrcalls.  Two runs where the LBR tail (the recorder's
# kernel source, perf's arch/x86/events/lbr_tail.c, on by default on the
# model-specific stack) meets perf: cgs, the call stacks of lbrcalls-yield
# switching against a spinning shell on CPU 0 (the tail records between
# its switch-out and switch-in: perf must restore the task's stack, not
# read the tail's); w, `perf record -b -C 0` across an LKDTM WARNING on
# CPU 0 (the recorder's bug trap must leave perf's LBR alone).  And n:
# `perf record -b` samples in nullcall's SIGSEGV handler hold its calls
# through a NULL pointer (perf keeps a branch to address 0: patch 0022).
# Usage: lbr-perf-vm.sh MODEL OUTDIR [QEMU]
set -eu
model=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
case $model in
arch) cpu=$VM_ARCH_LBR_CPU ;;
legacy) cpu=$VM_PMU_CPU ;;
*) echo "lbr-perf-vm: MODEL is arch or legacy, not $model" >&2; exit 2 ;;
esac
mkdir -p "$out"
rm -f "$out/lbr.log" "$out/data.log"	# the model appends
QEMU=${3:-${QEMU:-}}
vm_setup "$out"
q=$QEMU
vm_busybox "$root"
gcc -static -nostdlib -o "$root/bin/lbrcalls" "$src/tests/vm/lbrcalls.S"
nm "$root/bin/lbrcalls" > "$out/lbrcalls.syms"
gcc -static -nostdlib -DLBRCALLS_YIELD -o "$root/bin/lbrcalls-yield" "$src/tests/vm/lbrcalls.S"
nm "$root/bin/lbrcalls-yield" > "$out/lbrcalls-yield.syms"
gcc -static -O1 -o "$root/bin/nullcall" "$src/tests/vm/nullcall.c"
nm "$root/bin/nullcall" > "$out/nullcall.syms"
vm_add_dynamic "$root" /usr/bin/perf
vm_init "$root/init" debugfs nopanic
cat >> "$root/init" <<'INIT'
# on the data port: a kernel message on the console can cut into a line
# (seen: "LBRP-BRANCHES: 3perf: Dynamic interrupt throttling disabled")
echo "LBRP-BRANCHES: $(cat /sys/devices/cpu/caps/branches 2>&1)" > /dev/ttyS1
cd /tmp
# 0 from the kernel command line (vm-lib.sh VM_PERF_ARGS): without it
# the kernel lowers the sample rate until perf keeps a handful of samples
echo "LBRP-CPU-TIME: $(cat /proc/sys/kernel/perf_cpu_time_max_percent)" > /dev/ttyS1
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
# a sample every 12007 cycles (the model's cycles are instructions):
# about 80 in lbrcalls' 10^6 instructions
taskset 1 perf record -b -e cycles -c 12007 -o /tmp/b.data \
	-- /bin/lbrcalls > /tmp/b.out 2>&1
echo "LBRP-RC: b $?"
taskset 1 perf record --call-graph lbr -e cycles:u -c 12007 -o /tmp/cg.data \
	-- /bin/lbrcalls > /tmp/cg.out 2>&1
echo "LBRP-RC: cg $?"
taskset 1 sh -c 'while :; do :; done' &
spin=$!
taskset 1 perf record --call-graph lbr -e cycles:u -c 12007 -o /tmp/cgs.data \
	-- /bin/lbrcalls-yield > /tmp/cgs.out 2>&1
echo "LBRP-RC: cgs $?"
kill $spin
taskset 1 perf record -b -C 0 -e cycles -c 12007 -o /tmp/w.data -- taskset 1 sh -c \
	'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT; /bin/lbrcalls' \
	> /tmp/w.out 2>&1
echo "LBRP-RC: w $?"
# perf on CPU 1, nullcall alone on CPU 0: perf's wakeups switch nothing in
taskset 2 perf record -b -e instructions:u -c 50 -o /tmp/n.data -- \
	taskset 1 /bin/nullcall > /tmp/n.out 2>&1
echo "LBRP-RC: n $?"
sed 's/^/LBRP-SAID: /' /tmp/b.out /tmp/cg.out /tmp/cgs.out /tmp/w.out /tmp/n.out
for r in b cg cgs w n; do
	perf report -D -i /tmp/$r.data 2>/dev/null |
		grep -E '^\.\.\. [a-zA-Z]|^\.\.\.\.\. +[0-9]+:' |
		sed "s/^/LBRP-$r: /" > /dev/ttyS1
done
echo LBRP-DATA-DONE > /dev/ttyS1
sleep 1
echo LBRP-VM-DONE
poweroff -f
INIT
vm_pack "$root" "$work/initrd.gz"
# nmi_watchdog=0: perf's samples the only PMIs (the check tolerates others);
# no_timer_check: as pmu-vm.sh (a loaded host and the IO-APIC timer check)
vm_qemu=$q
vm_boot "$obj" "$work/initrd.gz" "$out" LBRP-VM-DONE 900 \
	"no_timer_check nmi_watchdog=0 $VM_PERF_ARGS" \
	-L /usr/share/seabios -L /usr/share/qemu -nic none \
	-accel tcg,thread=single -m 512 -smp 2 \
	-cpu "$cpu,lbr-log=$out/lbr.log,lbr-log-cpl=3,lbr-log-nmi=on" \
	-serial mon:stdio -serial "file:$out/data.log"
python3 "$src/tests/vm/check-lbr-perf.py" "$model" "$out/console.log" \
	"$out/data.log" "$out/lbr.log" "$out/lbrcalls.syms" "$out/lbrcalls-yield.syms" \
	"$out/nullcall.syms"
