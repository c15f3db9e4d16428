#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux on the PMU model (qemu/, VM_PMU_CPU): boots the test kernel
# (scripts/kernel-build.sh) with a busybox initramfs holding Debian's perf
# (linux-perf) and pmuloop (exact known counts); the guest lists its PMUs
# and LBR depth and runs `perf stat` on pmuloop; `perf record -e
# intel_bts//u` on btsloop in full mode (BTS interrupts) and snapshot mode;
# the NMI watchdog (perf's first user) runs through all of it;
# then the recorder meets perf: a traced recloop's ring on CPU 0 while
# perf's intel_bts on it holds BTS, then twice the BTS event beside an
# LBR user (-j any,u), released in both orders, its core and perf's
# records sent on a second serial port (data.log: no kernel message can cut into it).  The
# model logs every user-mode BTS record (bts-log, CPL 3)
# and every MSR access and PMI (pmu-log).  check-pmu-vm.py checks (TAP):
# Linux's Intel PMU driver found, cpu and intel_bts event sources, 32 LBR
# entries, the NMI watchdog on with its NMIs arriving, perf's counts
# equal to pmuloop's, perf's BTS data and the
# recorder's ring (with its gap marker, reason perf) equal to the logs.
# Usage: pmu-vm.sh OUTDIR [QEMU]
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
mkdir -p "$out"
rm -f "$out/bts.log" "$out/pmu.log" "$out/data.log"	# the model appends
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
gcc -static -nostdlib -Wl,-Ttext=0xa00000 -o "$root/bin/recloop" \
	"$src/tests/vm/recloop.S"
nm "$root/bin/recloop" > "$out/recloop.syms"
# the same loop twice, at addresses that tell their records apart
gcc -static -nostdlib -Wl,-Ttext=0x600000 -o "$root/bin/btsloop-full" \
	"$src/tests/vm/btsloop.S"
gcc -static -nostdlib -Wl,-Ttext=0x800000 -o "$root/bin/btsloop-snap" \
	"$src/tests/vm/btsloop.S"
vm_add_dynamic "$root" /usr/bin/perf
for prog in btsrun vmbench; do
	gcc -static -O2 -I"$src/include/uapi/linux" -o "$root/bin/$prog" \
		"$src/tests/vm/$prog.c"
done
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
# the NMI watchdog, perf's own first user (a pinned cycles counter on each
# CPU, in use through everything below): on, and its NMIs arriving while
# CPU 0 runs 10^9 loop iterations (about 6 x 10^9 instructions; with
# watchdog_thresh=1 an NMI every cpu_khz x 1000 cycles, and the model's
# cycles are instructions)
echo "PMU-WATCHDOG: $(cat /proc/sys/kernel/nmi_watchdog)"
echo "PMU-NMI-BEFORE: $(grep 'NMI:' /proc/interrupts)"
taskset 1 vmbench branches untraced 1000000000 1 > /dev/null
echo "PMU-NMI-AFTER: $(grep 'NMI:' /proc/interrupts)"
# perf record -e intel_bts//u: full trace (BTINT drains the 8-page AUX
# buffer) and snapshot at exit (circular); every record perf stored, from
# its raw dump (perf report -D)
cd /tmp
for mode in full snap; do
	opt=; [ $mode = snap ] && opt=-Se
	perf record --per-thread $opt -o /tmp/$mode.data -e intel_bts//u -m ,8 \
		-- /bin/btsloop-$mode > /tmp/$mode.out 2>&1
	echo "PMU-BTS-RC: $mode $?"
	sed "s/^/PMU-BTS-SAID: $mode /" /tmp/$mode.out
	perf report -D -i /tmp/$mode.data 2>/dev/null |
		sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-BTS: $mode \1 \2/p" > /dev/ttyS1
	# the AUX records perf wrote: [T] marks one truncated (the buffer was
	# full, intel_bts stopped until perf drained it: records never written)
	echo "PMU-BTS-TRUNCATED: $mode $(perf report -D -i /tmp/$mode.data 2>/dev/null |
		grep -c 'PERF_RECORD_AUX .*\[[A-Z]*T')"
done
# the recorder meets perf: recloop traced (a BTS ring of 4096 records) on
# CPU 0; its phase b runs while perf's intel_bts on it (per thread: 6.1's
# intel_bts has no per-CPU mode) takes BTS whenever it runs, its phase d
# under perf's BTS event (branches -c 1); phases a, c and e around them
# (each go one byte: recloop reads one per phase)
ulimit -c unlimited
echo /tmp/rec.core > /proc/sys/kernel/core_pattern
mkfifo /tmp/go
taskset 1 btsrun 4096 /bin/recloop < /tmp/go > /tmp/rec.out 2>&1 &
rec=$!
exec 3> /tmp/go
printf a >&3
sleep 1
perf record --per-thread -p $rec -e intel_bts//u -m ,64 -o /tmp/sys.data \
	-- sh -c 'sleep 1; printf b >&3; sleep 2' > /tmp/sys.out 2>&1
echo "PMU-REC-PERF-RC: $?"
sed "s/^/PMU-REC-PERF-SAID: /" /tmp/sys.out
printf c >&3
sleep 1
# phases d and f: the BTS event beside an LBR user on the same task
# (perf lets them coexist: both of x86_add_exclusive()'s LBR class), each
# holding its half; over d the LBR user starts first and lets go last,
# over f the BTS event does (both orders of release)
# (a sample every 101 user cycles: phase d is 1200 instructions; no
# throttling of PMIs that TCG makes look slow)
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
ev='-e branches:u -c 1 -d' lbr='-e cycles:u -c 101 -j any,u'
perf record --per-thread -p $rec $lbr -o /tmp/lbr-d.data -- sh -c "sleep 1;
	perf record --per-thread -p $rec $ev -o /tmp/ev.data \
		-- sh -c 'sleep 1; printf d >&3; sleep 2' > /tmp/ev.out 2>&1
	echo \$? > /tmp/ev.rc; sleep 1" > /tmp/lbr-d.out 2>&1
echo "PMU-REC-LBR-RC: d $?"
echo "PMU-REC-EVENT-RC: $(cat /tmp/ev.rc)"
sed "s/^/PMU-REC-EVENT-SAID: /" /tmp/ev.out
printf e >&3
sleep 1
perf record --per-thread -p $rec $ev -o /tmp/ev-f.data -- sh -c "sleep 1;
	perf record --per-thread -p $rec $lbr -o /tmp/lbr-f.data \
		-- sh -c 'sleep 1; printf f >&3; sleep 2' > /tmp/lbr-f.out 2>&1
	echo \$? > /tmp/lbr-f.rc; sleep 1" > /tmp/ev-f.out 2>&1
echo "PMU-REC-EVENT-F-RC: $?"
echo "PMU-REC-LBR-RC: f $(cat /tmp/lbr-f.rc)"
sed "s/^/PMU-REC-EVENT-SAID: /" /tmp/ev-f.out /tmp/lbr-d.out /tmp/lbr-f.out
printf g >&3
wait $rec
echo "PMU-REC-RC: $?"
exec 3>&-
sed "s/^/PMU-REC-SAID: /" /tmp/rec.out
perf report -D -i /tmp/sys.data 2>/dev/null |
	sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-REC-PERF: \1 \2/p" > /dev/ttyS1
perf script -i /tmp/ev.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PMU-REC-EVENT: \1 \2/p" > /dev/ttyS1
perf script -i /tmp/ev-f.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PMU-REC-EVENT-F: \1 \2/p" > /dev/ttyS1
for p in d f; do
	perf script -i /tmp/lbr-$p.data -F brstack 2>/dev/null |
		sed "s/^/PMU-REC-LBR-$p: /" > /dev/ttyS1
done
base64 /tmp/rec.core | sed "s/^/PMU-REC-CORE: /" > /dev/ttyS1
echo PMU-DATA-DONE > /dev/ttyS1
sleep 1
echo PMU-VM-DONE
poweroff -f
INIT
chmod +x "$root/init"
vm_pack "$root" "$work/initrd.gz"
# pti=off: Linux 6.1 registers intel_bts only without page-table isolation
# (arch/x86/events/intel/bts.c bts_init(): BTS writes through the kernel
# map), and this Intel CPU is not marked immune to Meltdown.
# no_timer_check: on a loaded host TCG is too slow for the boot's IO-APIC
# timer check, which then panics ("IO-APIC + timer doesn't work!"; seen)
# watchdog_thresh=1: the NMI watchdog's period down to 2.3 x 10^9 cycles;
# nosoftlockup: its soft half (now 2 s) would take a host stall of the
# VM for a lockup
timeout 1200 "$q" -L /usr/share/seabios -L /usr/share/qemu -nic none \
	-accel tcg,thread=single -m 512 -smp 2 \
	-cpu "$VM_PMU_CPU,bts-log=$out/bts.log,bts-log-cpl=3,pmu-log=$out/pmu.log" \
	-nographic -serial mon:stdio -serial "file:$out/data.log" -no-reboot -kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$work/initrd.gz" -append "console=ttyS0 panic=-1 pti=off no_timer_check watchdog_thresh=1 nosoftlockup" \
	> "$out/console.log" 2>&1 || true
exec python3 "$src/tests/vm/check-pmu-vm.py" "$out/console.log" "$out/bts.log" \
	"$out/pmu.log" "$out/recloop.syms" "$out/data.log"
