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
# CPU 0 records (bts-MODE.log) and empties the log between sessions.
# check-perf-bts-kernel.py (TAP): perf's data equal to the model's user
# records, the ring's records a stretch of its kernel ones with a
# suspend and a gap marker (reason perf) exactly where perf held BTS,
# recording again from perf's release to the oops, no WARNING.
# Env: QEMU (else built).  Usage: perf-bts-kernel.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export BTSCRASH_BACKEND=hw
mkdir -p "$out"
. "$src/tests/vm/vm-lib.sh"
vm_kernel_and_model "$out"
vm_workdir
vm_root "$work/root"
gcc -static -O1 -o "$work/root/bin/perfgap" "$src/tests/vm/perfgap.c"
vm_add_dynamic "$work/root" /usr/bin/perf
cat > "$work/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
echo 0 > /proc/sys/kernel/panic_on_oops
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
for mode in full snap event; do
	case $mode in
	full) ev='-e intel_bts//u -m ,64' ;;
	snap) ev='-Se -e intel_bts//u -m ,8' ;;
	event) ev='-e branches:u -c 1 -d' ;;
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
	sleep 3		# the host empties the model's log
	printf g >&3
	wait $p || true
	exec 3>&-
	sed "s/^/PBK-SAID: $mode /" /tmp/$mode.out
	sleep 2
	echo "PBK-END $mode"
	sleep 4		# the host keeps CPU 0's records of the session
done
for mode in full snap; do
	perf report -D -i /tmp/$mode.data 2>/dev/null |
		sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PBK-PERF: $mode \1 \2/p" > /dev/ttyS1
	echo "PBK-TRUNCATED: $mode $(perf report -D -i /tmp/$mode.data 2>/dev/null |
		grep -c 'PERF_RECORD_AUX .*\[[A-Z]*T')" > /dev/ttyS1
done
perf script -i /tmp/event.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PBK-PERF: event \1 \2/p" > /dev/ttyS1
echo PBK-DATA-DONE > /dev/ttyS1
sleep 1
echo PBK-DONE
poweroff -f
INIT
chmod +x "$work/root/init"
# not compressed: with every kernel branch recorded and logged, inflating
# perf and its libraries (33 MB) at boot took minutes of TCG
(cd "$work/root" && find . | cpio -o -H newc --quiet) > "$work/initrd"
VM_CPU_EXTRA=",lbr=on,pmu=on" vm_machine "$out"
rm -f "$out/console.log" "$out"/bts-*.log "$out/data.log"
# the model logs every record, hundreds of MB a minute: emptied when a
# session begins, CPU 0's records of it kept when it ends
(
	for mode in full snap event; do
		for mark in BEGIN END; do
			while ! grep -qs "PBK-$mark $mode" "$out/console.log"; do
				sleep 1
				[ $mark = END ] || : > "$out/bts.log"	# the boot's GBs
			done
			[ $mark = BEGIN ] || python3 "$src/tests/vm/check-perf-bts-kernel.py" \
				--keep "$out/bts.log" "$out/bts-$mode.log"
			: > "$out/bts.log"
		done
	done
) &
watcher=$!
# nokaslr: the checker reads the printed symbols' addresses from vmlinux;
# no_timer_check, nosoftlockup: as in pmu-vm.sh (a loaded host's TCG);
# mitigations=off: no return thunks (fewer kernel branches to record)
vm_boot "$obj" "$work/initrd" "$out" 'PBK-DONE' 3000 \
	"pti=off nokaslr no_timer_check nosoftlockup mitigations=off bts_crash.cpu_records=8192" \
	-m 512M -smp 2 -serial mon:stdio -serial "file:$out/data.log"
kill "$watcher" 2>/dev/null || true
rm -f "$out/bts.log"
nm "$obj/vmlinux" > "$out/vmlinux.syms"
exec python3 "$src/tests/vm/check-perf-bts-kernel.py" "$out"
