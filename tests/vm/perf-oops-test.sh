#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Real perf takes the LBR from the recorder and gives it back (issue 26
# §3): the test kernel on the LBR and PMU model (lbr=on,pmu=on), one CPU,
# booted with no btscrash parameter: the default, the LBR as each CPU's
# kernel tail (lbr-kernel).  Debian's perf runs `perf record -a -j
# any,u` (LBR user branch stacks) through the whole middle and a
# per-task `perf record -j any,u` over it, overlapping: an LKDTM oops
# under both, one under the system-wide one alone, one after both ended.
# The first two must print the kernel ring's gap marker (reason perf) as
# a gap, never as a branch, and the recorder must not take the LBR back
# while one perf user still holds it; the third prints the oops's own
# kernel branches, a stretch of the model's pushes (its log of kernel
# pushes, lbr-log-cpl=0); perf's samples hold user branches only, none of
# the recorder's (check-perf-oops.py, TAP).  Env: QEMU (else built).  Usage: perf-oops-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export BTSCRASH_BACKEND=lbr-kernel
mkdir -p "$out"
. "$src/tests/vm/vm-lib.sh"
vm_kernel_and_model "$out"
vm_workdir
vm_root "$work/root"
vm_add_dynamic "$work/root" /usr/bin/perf
cat > "$work/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
echo 0 > /proc/sys/kernel/panic_on_oops
# 0 from the kernel command line (vm-lib.sh VM_PERF_ARGS): else a perf
# that read the old rate opens its default 4000 Hz event with EINVAL
# ("Invalid event (cycles) in per-thread mode"; seen under host load)
echo "PERF-OOPS-CPU-TIME: $(cat /proc/sys/kernel/perf_cpu_time_max_percent)"
cd /tmp
mkfifo /tmp/go
oops='echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
# A: system-wide (CPU 0), user branches, 10 samples a second, until
# /tmp/go is written
perf record -a -F 10 -j any,u -o /tmp/a.data -- sh -c 'read x < /tmp/go' > /tmp/a.out 2>&1 &
a=$!
sleep 10	# perf's start (its events on before B's)
echo PERF-OOPS-1
sleep 3		# the host empties the model's log (the boot's and perf's start's pushes)
# B: per task, over A, on the shell that oopses
perf record -j any,u -o /tmp/b.data -- sh -c "$oops" > /tmp/b.out 2>&1
echo "PERF-OOPS-B-RC: $?"
echo PERF-OOPS-2
sh -c "$oops"
kill -0 $a 2>/dev/null && echo x > /tmp/go	# (a perf that failed reads no fifo)
wait $a
echo "PERF-OOPS-A-RC: $?"
sed 's/^/PERF-OOPS-A-SAID: /' /tmp/a.out
sed 's/^/PERF-OOPS-B-SAID: /' /tmp/b.out
# perf's branch stacks on the second serial port (data.log)
for d in a b; do
	perf script -i /tmp/$d.data -F brstack 2>/dev/null | sed "s/^/BRSTACK-$d: /" > /dev/ttyS1
done
echo PERF-OOPS-3
sleep 3		# the host empties the model's log again
sh -c "$oops"
echo PERF-OOPS-END
sleep 3		# the host keeps the log's tail
echo PERF-OOPS-DONE
poweroff -f
INIT
vm_pack "$work/root" "$work/initrd.gz"
# lbr-log-cpl=0: the model logs the kernel's pushes only (the recorder's;
# perf's user-only filter pushes none of those)
VM_DEFAULTS=1 VM_CPU_EXTRA=",pmu=on,lbr-log-cpl=0" vm_machine "$out"
# The model's log would grow by gigabytes a minute (every kernel branch
# while the recorder holds the LBR): emptied once perf holds the LBR and
# before the third oops, its last 128 MiB kept after it (lbr-oops3.log).
# QEMU appends (O_APPEND), so emptying the file under it is safe.
rm -f "$out/console.log" "$out/lbr-oops3.log"
(
	for mark in PERF-OOPS-1 PERF-OOPS-3 PERF-OOPS-END; do
		while ! grep -qs "^$mark" "$out/console.log"; do
			sleep 1
		done
		[ $mark != PERF-OOPS-END ] || tail -c 134217728 "$out/lbr.log" > "$out/lbr-oops3.log"
		: > "$out/lbr.log"
	done
) &
watcher=$!
# nokaslr: the checker reads the printed symbols' addresses from vmlinux;
# no_timer_check, nosoftlockup: as in pmu-vm.sh (a loaded host's TCG)
vm_boot "$obj" "$work/initrd.gz" "$out" 'PERF-OOPS-DONE' 900 \
	"pti=off nokaslr no_timer_check nosoftlockup $VM_PERF_ARGS $vm_backend_args" -m 512M -smp 1 \
	-serial mon:stdio -serial "file:$out/data.log"
kill "$watcher" 2>/dev/null || true
rm -f "$out/lbr.log"
nm "$obj/vmlinux" > "$out/vmlinux.syms"
exec python3 "$src/tests/vm/check-perf-oops.py" "$out"
