#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Real perf takes BTS from the per-CPU kernel BTS ring and gives it back
# (issues 25 §3, 26 §3): the test kernel on the PMU model with BTS
# (VM_PMU_CPU), 2 CPUs, every CPU's kernel ring recording
# (bts_crash.cpu_records).  For each of perf's BTS users, intel_bts full,
# intel_bts snapshot and the BTS sampling event (branches:u -c 1), perf
# (on CPU 1) records perfgap on CPU 0: perfgap turns perf's events on
# through perf's control FIFO, loops, turns them off and oopses at once;
# the report prints CPU 0's kernel ring over perf's holding.  The model
# logs every record (bts.log); a host-side watcher keeps each session's
# CPU 0 records (bts-MODE.log) and empties the log between sessions, the
# guest waiting for its word on a third serial port at each step.
# check-perf-bts-kernel.py (TAP): perf's data equal to the model's user
# records, the ring's records a stretch of its kernel ones with a
# suspend and a gap marker (reason perf) exactly where perf held BTS,
# recording again from perf's release to the oops, no WARNING.
# A fourth session, lbr, is perf's LBR class on the other half of the
# debug hardware: `perf record -j any,u` (user branch stacks on cycles:u
# samples) and, while it holds the LBR, bpfsnap hold's bpf_get_branch_snapshot()
# at perfgap's getppid(); the model logs its user LBR pushes and the stack
# at each NMI (lbr.log): perf's stacks and the snapshot equal to it, the
# kernel ring recording on across the hold with no marker.
# Env: QEMU (else built).  Usage: perf-bts-kernel.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export BTSCRASH_BACKEND=hw
. "$src/tests/vm/vm-lib.sh"
vm_guest "$out" /usr/bin/perf
gcc -static -O1 -o "$work/root/bin/perfgap" "$src/tests/vm/perfgap.c"
nm "$work/root/bin/perfgap" > "$out/perfgap.syms"
vm_init "$work/root/init" debugfs nopanic
cat >> "$work/root/init" <<'INIT'
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent	# as perf-oops-test.sh
# perf reads /proc/kallsyms, every kernel symbol formatted: hundreds of
# millions of kernel branches recorded and logged, minutes of TCG (seen,
# kptr_restrict or not); its user-mode data needs no kernel symbol
: > /tmp/nokallsyms
mount -o bind /tmp/nokallsyms /proc/kallsyms
# the whole ring in the report: the gap and every branch after it
cat /sys/module/bts_crash/parameters/print_records
echo 8192 > /sys/module/bts_crash/parameters/print_records
taskset -p 2 $$ > /dev/null	# this shell, perf and the rest on CPU 1
cd /tmp
mkfifo /tmp/ctl /tmp/ack
# the host's watcher says "ack" here when it has emptied the model's log
# (a session begins) or kept CPU 0's records (it ends): a loaded host's
# watcher once took longer than the guest's sleeps, and one session's
# records went into the other's log
exec 4< /dev/ttyS2
for mode in full snap event lbr; do
	case $mode in
	full) ev='-e intel_bts//u -m ,64' ;;
	snap) ev='-Se -e intel_bts//u -m ,8' ;;
	event) ev='-e branches:u -c 1 -d' ;;
	# 16 samples over perfgap's loop (-c: user instructions)
	lbr) ev='-e cycles:u -c 499 -j any,u'
		taskset 2 bpfsnap hold > /tmp/bpfsnap.out 2>&1 &
		bpfsnap=$!
		while ! grep -q ready /tmp/bpfsnap.out && kill -0 $bpfsnap; do sleep 1; done ;;
	esac
	mkfifo /tmp/go.$mode
	# shellcheck disable=SC2086
	perf record --per-thread -D -1 --control=fifo:/tmp/ctl,/tmp/ack $ev \
		-o /tmp/$mode.data -- taskset 1 perfgap /tmp/ctl /tmp/ack 2000 \
		< /tmp/go.$mode > /tmp/$mode.out 2>&1 &
	p=$!
	exec 3> /tmp/go.$mode
	sleep 2
	echo "PBK-BEGIN $mode"
	read -t 900 -r ack <&4	# the host emptied the model's log
	# CPU 0's kernel ring refilled after that (a few hundred syscalls,
	# ~100k branches): the report's 8192 records all in the kept log.
	# An idle CPU 0 once recorded fewer, and the ring's oldest 189 were
	# from before the emptying (a CI run's intel_bts snapshot)
	taskset 1 dd if=/dev/zero of=/dev/null bs=1 count=200 2> /dev/null
	printf g >&3
	wait $p || true
	exec 3>&-
	sed "s/^/PBK-SAID: $mode /" /tmp/$mode.out
	if [ $mode = lbr ]; then
		kill -TERM $bpfsnap
		wait $bpfsnap
		echo "PBK-SNAP-RC: $?"
	fi
	sleep 2
	echo "PBK-END $mode"
	read -t 900 -r ack <&4	# the host kept CPU 0's records of the session
done
for mode in full snap; do
	perf report -D -i /tmp/$mode.data 2>/dev/null |
		sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PBK-PERF: $mode \1 \2/p" > /dev/ttyS1
	echo "PBK-TRUNCATED: $mode $(perf report -D -i /tmp/$mode.data 2>/dev/null |
		grep -c 'PERF_RECORD_AUX .*\[[A-Z]*T')" > /dev/ttyS1
done
perf script -i /tmp/event.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PBK-PERF: event \1 \2/p" > /dev/ttyS1
perf report -D -i /tmp/lbr.data 2>/dev/null |
	grep -E '^\.\.\. [a-zA-Z]|^\.\.\.\.\. +[0-9]+:' | sed 's/^/LBRP-lbr: /' > /dev/ttyS1
sed 's/^/PBK-SNAP: /' /tmp/bpfsnap.out > /dev/ttyS1
echo PBK-DATA-DONE > /dev/ttyS1
sleep 1
echo PBK-DONE
poweroff -f
INIT
# not compressed: with every kernel branch recorded and logged, inflating
# perf and its libraries (33 MB) at boot took minutes of TCG
(cd "$work/root" && find . | cpio -o -H newc --quiet) > "$work/initrd"
# the LBR log: user pushes only (perf's -j any,u; the kernel ring uses
# BTS, not the LBR) and the stack at each NMI
VM_CPU_EXTRA=",lbr=on,pmu=on,lbr-log=$out/lbr.log,lbr-log-cpl=3,lbr-log-nmi=on" \
	vm_machine "$out"
rm -f "$out/console.log" "$out"/bts-*.log "$out/data.log" "$out/lbr.log" "$out/cost.log"
# the guest's ttyS2 reads $work/ack.in (QEMU's pipe chardev): held open
# here for writing, so QEMU's open of it does not wait for a writer
mkfifo "$work/ack.in"
: > "$work/ack.out"
exec 5<> "$work/ack.in"
# the model logs every record, hundreds of MB a minute: emptied when a
# session begins, CPU 0's records of it kept when it ends
(
	for mode in full snap event lbr; do
		for mark in BEGIN END; do
			while ! grep -qs "PBK-$mark $mode" "$out/console.log"; do
				sleep 1
				[ $mark = END ] || : > "$out/bts.log"	# the boot's GBs
			done
			# each session's cost: QEMU's CPU ticks (utime + stime)
			q=$(pgrep -f -- "bts-log=$out/bts.log" | head -n 1)
			echo "$mode $mark $(awk '{ print $14 + $15 }' "/proc/$q/stat") $(getconf CLK_TCK)" >> "$out/cost.log"
			[ $mark = BEGIN ] || python3 "$src/tests/vm/check-perf-bts-kernel.py" \
				--keep "$out/bts.log" "$out/bts-$mode.log"
			: > "$out/bts.log"
			echo ack >&5
		done
	done
) &
watcher=$!
# nokaslr: the checker reads the printed symbols' addresses from vmlinux;
# no_timer_check, nosoftlockup: as in pmu-vm.sh (a loaded host's TCG);
# mitigations=off: no return thunks (fewer kernel branches to record)
vm_boot "$obj" "$work/initrd" "$out" 'PBK-DONE' 3000 \
	"pti=off nokaslr no_timer_check nosoftlockup mitigations=off bts_crash.cpu_records=8192" \
	-m 512M -smp 2 -serial mon:stdio -serial "file:$out/data.log" \
	-serial "pipe:$work/ack"
kill "$watcher" 2>/dev/null || true
rm -f "$out/bts.log"
nm "$obj/vmlinux" > "$out/vmlinux.syms"
python3 "$src/tests/vm/check-perf-bts-kernel.py" "$out"
