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
# LBR user (-j any,u), released in both orders, then intel_bts in
# snapshot mode, then bpf_get_branch_snapshot() (bpfsnap) at its SIGSEGV
# while its ring records, then a traced task moving between CPU 0 and 1
# with and without perf holding its BTS (pmu-mig.sh), then perf's
# intel_bts attaching to a traced task while it runs, never blocking,
# and detaching (pmu-attach.sh), then the BTS event turned into a
# counting event by PERF_EVENT_IOC_PERIOD and closed (iocperiod); the cores and perf's
# records sent on a second serial port (data.log: no kernel message can cut into it).  The
# model logs every user-mode BTS record (bts-log, CPL 3), every LBR push
# (lbr-log) and every MSR access and PMI (pmu-log).  check-pmu-vm.py checks (TAP):
# Linux's Intel PMU driver found, cpu and intel_bts event sources, 32 LBR
# entries, the NMI watchdog on with its NMIs arriving, perf's counts
# equal to pmuloop's, perf's BTS data and the
# recorder's rings (with gap markers, reason perf) equal to the logs, on
# both CPUs for the migrating task and for the running one perf attached
# to, and the BPF program's LBR snapshot equal to the LBR log.
# Usage: pmu-vm.sh OUTDIR [QEMU]
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
mkdir -p "$out"
rm -f "$out/bts.log" "$out/pmu.log" "$out/lbr.log" "$out/data.log"	# the model appends
QEMU=${2:-${QEMU:-}}
vm_setup "$out"
q=$QEMU
vm_busybox "$root"
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
# the migration phase (pmu-mig.sh): migloop and its witness, one program
# at two addresses
for p in migloop:0xc00000 migwit:0xe00000; do
	gcc -static -nostdlib -Wl,-Ttext=${p#*:} -o "$root/bin/${p%:*}" \
		"$src/tests/vm/migloop.S"
	nm "$root/bin/${p%:*}" > "$out/${p%:*}.syms"
done
cp "$src/tests/vm/pmu-mig.sh" "$root/bin/pmu-mig.sh"
# the attach phase (pmu-attach.sh): spinloop, never blocking
gcc -static -nostdlib -Wl,-Ttext=0x1000000 -o "$root/bin/spinloop" \
	"$src/tests/vm/spinloop.S"
nm "$root/bin/spinloop" > "$out/spinloop.syms"
cp "$src/tests/vm/pmu-attach.sh" "$root/bin/pmu-attach.sh"
gcc -static -O1 -o "$root/bin/iocperiod" "$src/tests/vm/iocperiod.c"
vm_prog "$root" btsrun vmbench bpfsnap
vm_init "$root/init" debugfs
cat >> "$root/init" <<'INIT'
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
# the recorder meets perf: recloop traced (a BTS ring of 8192 records:
# its five phases a, c, e, g, i of 900 each) on
# CPU 0; its phase b runs while perf's intel_bts on it (per thread: 6.1's
# intel_bts has no per-CPU mode) takes BTS whenever it runs, its phase d
# under perf's BTS event (branches -c 1); phases a, c and e around them
# (each go one byte: recloop reads one per phase; f to i below)
ulimit -c unlimited
echo /tmp/rec.core > /proc/sys/kernel/core_pattern
mkfifo /tmp/go
taskset 1 btsrun 8192 /bin/recloop < /tmp/go > /tmp/rec.out 2>&1 &
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
sleep 1
# phase h under intel_bts in snapshot mode (-Se: the AUX buffer circular,
# taken at perf's exit; 4 pages hold 682 records of h's 900)
perf record --per-thread -p $rec -Se -e intel_bts//u -m ,4 -o /tmp/snap-h.data \
	-- sh -c 'sleep 1; printf h >&3; sleep 2' > /tmp/snap-h.out 2>&1
echo "PMU-REC-SNAP-RC: $?"
sed "s/^/PMU-REC-SNAP-SAID: /" /tmp/snap-h.out
sleep 1
# phase i while perf's LBR users (bpfsnap's per-CPU events) record: its
# BPF program takes bpf_get_branch_snapshot() at recloop's SIGSEGV
taskset 2 bpfsnap signal 300 > /tmp/bpf.out 2> /tmp/bpf.err &
bpf=$!
while ! grep -q armed /tmp/bpf.out && kill -0 $bpf 2> /dev/null; do sleep 1; done
printf i >&3
wait $rec
echo "PMU-REC-RC: $?"
wait $bpf
echo "PMU-BPF-RC: $?"
echo "PMU-REC-PID: $rec"
sed "s/^/PMU-BPF-SAID: /" /tmp/bpf.err
exec 3>&-
sed "s/^/PMU-REC-SAID: /" /tmp/rec.out
perf report -D -i /tmp/sys.data 2>/dev/null |
	sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-REC-PERF: \1 \2/p" > /dev/ttyS1
perf report -D -i /tmp/snap-h.data 2>/dev/null |
	sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-REC-SNAP: \1 \2/p" > /dev/ttyS1
sed "s/^/PMU-BPF: /" /tmp/bpf.out > /dev/ttyS1
perf script -i /tmp/ev.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PMU-REC-EVENT: \1 \2/p" > /dev/ttyS1
perf script -i /tmp/ev-f.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PMU-REC-EVENT-F: \1 \2/p" > /dev/ttyS1
for p in d f; do
	perf script -i /tmp/lbr-$p.data -F brstack 2>/dev/null |
		sed "s/^/PMU-REC-LBR-$p: /" > /dev/ttyS1
done
base64 /tmp/rec.core | sed "s/^/PMU-REC-CORE: /" > /dev/ttyS1
# a traced task migrating while perf holds its BTS, and without perf
/bin/pmu-mig.sh
# perf attaching to a traced task while it runs on CPU 1, and detaching
taskset 1 /bin/pmu-attach.sh
# the BTS event's period changed to 1000, then closed: the recorder has
# the BTS half of CPU 0 back (perf's holders 0 in ds/bts_buffers)
taskset 1 /bin/iocperiod
echo "PMU-IOCPERIOD-RC: $?"
echo "PMU-IOCPERIOD: $(grep '^cpu 0 ' /sys/kernel/debug/ds/bts_buffers)"
echo PMU-DATA-DONE > /dev/ttyS1
sleep 1
echo PMU-VM-DONE
poweroff -f
INIT
vm_pack "$root" "$work/initrd.gz"
# pti=off: Linux 6.1 registers intel_bts only without page-table isolation
# (arch/x86/events/intel/bts.c bts_init(): BTS writes through the kernel
# map), and this Intel CPU is not marked immune to Meltdown.
# no_timer_check: on a loaded host TCG is too slow for the boot's IO-APIC
# timer check, which then panics ("IO-APIC + timer doesn't work!"; seen)
# watchdog_thresh=1: the NMI watchdog's period down to 2.3 x 10^9 cycles;
# nosoftlockup: its soft half (now 2 s) would take a host stall of the
# VM for a lockup
# timeout: 172 QEMU CPU seconds unloaded-equivalent before the migration
# phase (phases h and i: +20; migration: about +36; the attach phase
# not measured, about a minute of wall time loaded), 21 minutes of wall
# time seen under a load of 25 on 2 cores
vm_guard "$out/console.log" timeout 1800 "$q" -L /usr/share/seabios -L /usr/share/qemu -nic none \
	-accel tcg,thread=single -m 512 -smp 2 \
	-cpu "$VM_PMU_CPU,bts-log=$out/bts.log,bts-log-cpl=3,pmu-log=$out/pmu.log,lbr-log=$out/lbr.log,lbr-log-cpl=3" \
	-nographic -serial mon:stdio -serial "file:$out/data.log" -no-reboot -kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$work/initrd.gz" -append "console=ttyS0 panic=-1 pti=off no_timer_check watchdog_thresh=1 nosoftlockup" \
	> "$out/console.log" 2>&1 || true
python3 "$src/tests/vm/check-pmu-vm.py" "$out/console.log" "$out/bts.log" \
	"$out/pmu.log" "$out/recloop.syms" "$out/data.log" "$out/lbr.log"
