#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Real perf takes the LBR from the recorder and gives it back (issue 26
# §3, issue 25 §3): the test kernel on the LBR and PMU model
# (lbr=on,pmu=on), two CPUs (the init and perf on CPU 1, what oopses on
# CPU 0), booted with no btscrash parameter: the default, the LBR as each
# CPU's kernel tail (lbr-kernel).  Debian's perf runs `perf record -a -j
# any,u` (LBR user branch stacks, A) and a per-task one (B) over it on a
# shell that oopses; an oops under A alone; one after both ended.  Then
# the other order: C system-wide, D per task on a shell spinning on CPU 0,
# C ends while D's event is on there, an oops under D alone, one after
# both.  The held ones must print the kernel ring's gap marker (reason
# perf) as a gap, never as a branch: the recorder must not take the LBR
# back while one perf user still holds it; those after both print the
# oops's own kernel branches, a stretch of the model's pushes (its log);
# perf's samples hold user branches only, none of the recorder's.
# bpf_get_branch_snapshot() (bpfsnap.c, run) on CPU 0 under A returns the
# model's newest pushes; without a perf LBR user (before the oops after
# A and B) nothing, the recorder's LBR left on; first, kmark's markers
# (vm-lib.sh) each a line of its own after the tty's lines, CPU 0 busy
# (check-perf-oops.py, TAP).  Env: QEMU (else built).  Usage: perf-oops-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export BTSCRASH_BACKEND=lbr-kernel
. "$src/tests/vm/vm-lib.sh"
vm_guest "$out" /usr/bin/perf
vm_init "$work/root/init" debugfs nopanic
cat >> "$work/root/init" <<'INIT'
# 0 from the kernel command line (vm-lib.sh VM_PERF_ARGS): else a perf
# that read the old rate opens its default 4000 Hz event with EINVAL
# ("Invalid event (cycles) in per-thread mode"; seen under host load)
echo "PERF-OOPS-CPU-TIME: $(cat /proc/sys/kernel/perf_cpu_time_max_percent)"
# this shell and perf on CPU 1; what oopses or snapshots on CPU 0
taskset -p 2 $$ > /dev/null
# kmark (vm-lib.sh) sends the tty's output first: long tty lines, each
# followed by a marker, CPU 0 (the UART's interrupt) kept busy meanwhile
taskset 1 sh -c 'while :; do :; done' &
spin=$!
long=$(head -c 3000 /dev/zero | tr '\0' x)
for i in 1 2 3 4 5 6 7 8; do
	echo "KMARK-LINE-$i $long"
	kmark "KMARK-$i"
done
kill $spin
# perf's parse of /proc/kallsyms: minutes of TCG per perf start, every
# kernel branch of it recorded (as perf-bts-kernel.sh); user branch
# stacks need no kernel symbol
: > /tmp/nokallsyms
mount -o bind /tmp/nokallsyms /proc/kallsyms
cd /tmp
mkfifo /tmp/go
oops='echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
# mark M: the console line M, then time for the host's log watcher
# (a second's poll, late on a loaded host).  Every line that splits the
# oops reports is a kmark (vm-lib.sh): in order with them
mark() {
	kmark "$1"
	sleep 5
}
# on FILE: waits until FILE exists (a perf's workload wrote it: the
# perf's events are on) or its perf (pid PERF) is gone
on() {
	while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null; do
		sleep 1
	done
}
# A: system-wide, user branches, 10 samples a second, until /tmp/go is
# written; perf enables a system-wide session's events before it starts
# the workload
perf record -a -F 10 -j any,u -o /tmp/a.data -- sh -c 'touch /tmp/a-on; read x < /tmp/go' > /tmp/a.out 2>&1 &
a=$!
on /tmp/a-on $a
mark PERF-OOPS-1	# the host empties the model's log (the boot's and perf's start's pushes)
# bpf_get_branch_snapshot() on CPU 0 under A: the LBR is perf's
taskset 1 /bin/bpfsnap run | sed 's/^/HELD-/' > /dev/ttyS1
mark PERF-OOPS-SNAP	# the host keeps the log (lbr-snap.log)
# B: per task, over A, on the shell that oopses
perf record -j any,u -o /tmp/b.data -- taskset 1 sh -c "$oops" > /tmp/b.out 2>&1
echo "PERF-OOPS-B-RC: $?"
kmark PERF-OOPS-2
taskset 1 sh -c "$oops"
kill -0 $a 2>/dev/null && echo x > /tmp/go	# (a perf that failed reads no fifo)
wait $a
echo "PERF-OOPS-A-RC: $?"
mark PERF-OOPS-3	# the host empties the log again
# a snapshot with no perf LBR user: the LBR is the recorder's, and
# must stay on for the oops that follows
taskset 1 /bin/bpfsnap run | sed 's/^/FREE-/' > /dev/ttyS1
taskset 1 sh -c "$oops"
mark PERF-OOPS-3-END	# the host keeps the log's tail (lbr-oops3.log)
# the other order: C system-wide, D per task on a shell spinning on
# CPU 0 (its event on there) while C ends; then an oops under D alone
perf record -a -F 10 -j any,u -o /tmp/c.data -- sh -c 'touch /tmp/c-on; read x < /tmp/go' > /tmp/c.out 2>&1 &
c=$!
on /tmp/c-on $c
# (a per-task session's events come on at its workload's exec)
perf record -F 10 -j any,u -o /tmp/d.data -- taskset 1 sh -c \
	"touch /tmp/d-on; while [ ! -e /tmp/c-gone ]; do :; done; $oops" > /tmp/d.out 2>&1 &
d=$!
on /tmp/d-on $d
sleep 2		# D's shell spins on CPU 0
kill -0 $c 2>/dev/null && echo x > /tmp/go
wait $c
echo "PERF-OOPS-C-RC: $?"
kmark PERF-OOPS-4
touch /tmp/c-gone
wait $d
echo "PERF-OOPS-D-RC: $?"
mark PERF-OOPS-5	# the host empties the log again
taskset 1 sh -c "$oops"
mark PERF-OOPS-END	# the host keeps the log's tail (lbr-oops5.log)
for w in a b c d; do
	sed "s/^/PERF-OOPS-$w-SAID: /" /tmp/$w.out
done
# perf's branch stacks on the second serial port (data.log)
for w in a b c d; do
	perf script -i /tmp/$w.data -F brstack 2>/dev/null | sed "s/^/BRSTACK-$w: /" > /dev/ttyS1
done
echo PERF-OOPS-DONE
poweroff -f
INIT
vm_pack "$work/root" "$work/initrd.gz"
# every push logged (the recorder's kernel ones, perf's user ones)
VM_DEFAULTS=1 VM_CPU_EXTRA=",pmu=on" vm_machine "$out"
# The model's log would grow by gigabytes a minute (every kernel branch
# while the recorder holds the LBR): emptied at the init's marks, its
# tail (128 MiB) kept at some: MARK:FILE keeps it and empties the log,
# MARK: empties it every second until MARK comes.
# QEMU appends (O_APPEND), so emptying the file under it is safe.
rm -f "$out/console.log" "$out"/lbr-*.log
(
	for m in PERF-OOPS-1: PERF-OOPS-SNAP:lbr-snap.log PERF-OOPS-3: \
		PERF-OOPS-3-END:lbr-oops3.log PERF-OOPS-4: PERF-OOPS-5: \
		PERF-OOPS-END:lbr-oops5.log; do
		while ! grep -qs "^${m%%:*}" "$out/console.log"; do
			sleep 1
			# what comes before a mark that only empties: none kept
			[ -n "${m#*:}" ] || : > "$out/lbr.log"
		done
		# a mark that keeps: the tail, and the log emptied; one that
		# empties: what came since the last second kept
		[ -z "${m#*:}" ] || { tail -c 134217728 "$out/lbr.log" > "$out/${m#*:}"
			: > "$out/lbr.log"; }
	done
	while sleep 1; do	# perf script's and poweroff's pushes: none kept
		: > "$out/lbr.log"
	done
) &
watcher=$!
# nokaslr: the checker reads the printed symbols' addresses from vmlinux;
# no_timer_check, nosoftlockup: as in pmu-vm.sh (a loaded host's TCG)
# 2400 s: two CPUs recording every kernel branch, four perf starts; a
# loaded host (load 20 on 2 cores) ran out of 1200 s after the third oops
vm_boot "$obj" "$work/initrd.gz" "$out" 'PERF-OOPS-DONE' 2400 \
	"pti=off nokaslr no_timer_check nosoftlockup $VM_PERF_ARGS $vm_backend_args" -m 512M -smp 2 \
	-serial mon:stdio -serial "file:$out/data.log"
kill "$watcher" 2>/dev/null || true
rm -f "$out/lbr.log"
nm "$obj/vmlinux" > "$out/vmlinux.syms"
python3 "$src/tests/vm/check-perf-oops.py" "$out"
