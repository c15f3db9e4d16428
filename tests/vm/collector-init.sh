#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of run-collector-vm.sh (Debian's stock kernel on the PMU model):
# perf's user branch stack on a crash; the collector where it cannot work
# (no CAP_PERFMON at perf_event_paranoid 2, a pinned perf LBR user first);
# then btsdumpd's LBR collector and crashes nobody traced (one after two
# processes alternated on a CPU, one under `perf record -b`, one on a CPU
# taken offline and back online, a storm of 100) stored by btsdumpd as
# the core_pattern handler; collector.case=nopmu: the model without a
# PMU; amd: the AMD model as a Zen 4, zen5: as a Zen 5; arch: the
# Architectural LBR model, as pmu; signals, signals-amd: what the BPF
# program snapshots; bench: the collector's cost.  Without an armed
# collector only the first crash runs.  Results as a base64'd tar on ttyS1 between COLLECTOR-BEGIN and
# COLLECTOR-END.
# It runs after vm-lib.sh's vm_init preamble (busybox, /proc, /sys, /dev;
# vm_init_file puts it there).
mount -t tmpfs tmpfs /tmp
mkdir -p /run
mount -t tmpfs tmpfs /run
R=/tmp/results
S=$R/store
mkdir -p $R $S
case=$(sed -n 's/.*collector\.case=\([a-z0-9-]*\).*/\1/p' /proc/cmdline)
echo "$case" > $R/case
# collector.storm=1 (VM_COLLECTOR_STORM=1): the crash storm too (meson:
# vm-collector-storm, with only)
# collector.storm=only: crasher null and the storm alone
storm=$(sed -n 's/.*collector\.storm=\([01]\|only\).*/\1/p' /proc/cmdline)
[ "$storm" = only ] && echo only > $R/storm-only
uname -r > $R/uname
# 0 from the kernel command line (vm-lib.sh VM_PERF_ARGS), checked
cat /proc/sys/kernel/perf_cpu_time_max_percent > $R/perf-cpu-time-max-percent
cat /sys/devices/cpu/caps/branches > $R/lbr-depth 2>&1
btsdumpd=/usr/libexec/btsdumpd

# results_out: the results on ttyS1, then off
results_out() {
	echo COLLECTOR-BEGIN > /dev/ttyS1
	tar -czf - -C $R . | base64 > /dev/ttyS1
	echo COLLECTOR-END > /dev/ttyS1
	poweroff -f
}

# collector_start: btsdumpd --lbr-collector in the background (its pid
# in $collector), until it armed (at most 120 s).  collector.storm=only:
# with --lbr-no-kept, the BPF program a kernel without
# CONFIG_KALLSYMS_ALL gets (the others run the one that reads perf's kept
# count)
collector_start() {
	nokept=
	[ "$storm" = only ] && nokept=--lbr-no-kept
	$btsdumpd --log stderr --lbr-collector $nokept > $R/collector.log 2>&1 &
	collector=$!
	n=0
	while [ ! -e /run/btsdumpd-lbr/armed ] && kill -0 $collector 2>/dev/null && [ $n -lt 120 ]; do
		sleep 1; n=$((n + 1))
	done
}

# collector.case=signals, signals-amd (check-collector-signals.py): with
# the collector armed, signals that are not crashes (vmbench signals:
# SIGUSR1, handled) and core dumps (a SIGSEGV, the parent's SIGCHLD),
# each run between two marks in the model's pmu-log: the LBR stack's
# reads there are the BPF program's snapshots
case $case in signals*)
	mkdir -p /bench && export VMBENCH_CORE_DIR=/bench
	echo "/bench/core.%p" > /proc/sys/kernel/core_pattern
	collector_start
	{
		vmbench signals collector 1000 3
		vmbench coredump collector 1 3
	} > $R/bench.out 2>&1
	kill $collector; wait $collector
	results_out
esac

# collector.case=bench (bench/vm-bench-collector.sh, one vCPU under
# -icount): context switches, core dumps (to a file: the kernel's side,
# the BPF program and the collector's wake-up) and 10 s of idle, without
# the collector, with it armed, and without it again once it stopped (the
# first and the last agree: nothing else moved); the idle's guest
# instructions from perf stat (system-wide), the MSR accesses from the
# model's pmu-log.  The boot's own work settles first (sleep: no guest
# instructions under sleep=off).
if [ "$case" = bench ]; then
	mkdir -p /bench && export VMBENCH_CORE_DIR=/bench
	echo "/bench/core.%p" > /proc/sys/kernel/core_pattern
	bench() {
		vmbench pingpong "$1" 2000 7
		vmbench coredump "$1" 48 5
		vmbench idle "$1" 10 3
		vmbench signals "$1" 1000 5
		perf stat -a -x, -e instructions -- sleep 10 2>&1 >/dev/null |
			sed -n "s/^\([0-9]*\),.*instructions.*/IDLE $1 \1/p"
	}
	sleep 30
	{
		bench without
		collector_start
		bench collector
		kill $collector; wait $collector
		sleep 5
		bench after
	} > $R/bench.out 2>&1
	cat $R/bench.out $R/collector.log > /dev/console
	results_out
fi

# perf_running PID: until perf record PID started its workload (a sleep;
# perf record -a enables its events before it starts it), at most 120 s
perf_running() {
	n=0
	while [ $n -lt 120 ]; do
		for s in /proc/[0-9]*/status; do
			grep -q "^PPid:[[:space:]]*$1\$" "$s" 2>/dev/null &&
				grep -q "^Name:[[:space:]]*sleep\$" "$s" 2>/dev/null && return 0
		done
		sleep 1; n=$((n + 1))
	done
}

# collector_try NAME: btsdumpd's LBR collector (lbr dir /tmp/lbr-NAME) until
# it ends by itself (the LBR taken) or has armed, then stopped (SIGTERM, its
# exit 0); $R/NAME.log, NAME.status, NAME-status.  Arming is waited for, at
# most 300 s, not timed: under CI's load loading its BPF program took over
# 20 s once, and a fixed timeout then killed it before it armed.
collector_try() {
	$btsdumpd --log stderr --lbr-collector --lbr-dir /tmp/lbr-$1 > $R/$1.log 2>&1 &
	cpid=$!
	n=0
	while kill -0 $cpid 2>/dev/null && ! grep -q "LBR collector armed" $R/$1.log &&
		[ $n -lt 300 ]; do
		sleep 1; n=$((n + 1))
	done
	kill -TERM $cpid 2>/dev/null
	wait $cpid
	echo $? > $R/$1.status
	cp /tmp/lbr-$1/status $R/$1-status 2>/dev/null
}

# beside_perf NAME PERF-OUT PERF-ARGS...: a system-wide perf record with
# PERF-ARGS, its events on (perf_running), then collector_try NAME beside
# it; perf stopped after it (SIGINT: perf writes its data and says how
# many samples, in $R/PERF-OUT)
beside_perf() {
	name=$1 pout=$2
	shift 2
	perf record -a "$@" -o /tmp/$name.data -- sleep 600 > $R/$pout 2>&1 &
	perfpid=$!
	perf_running $perfpid
	collector_try $name
	kill -INT $perfpid 2>/dev/null
	wait $perfpid
	rm -f /tmp/$name.data
}

# wait_store N [SECONDS]: until N entries are committed (at most 120 s)
wait_store() {
	n=0
	while [ "$(ls $S | grep -cv '^\.')" -lt "$1" ] && [ $n -lt "${2:-120}" ]; do
		sleep 1; n=$((n + 1))
	done
}

if [ "$case" != nopmu ] && [ "$storm" != only ]; then
	# perf's own LBR user: every sample's branch stack (check-collector.py
	# finds each in the model's log)
	(cd /tmp && perf record -j any,u -c 997 -e instructions:u -o /tmp/perf.data \
		/bin/crasher null > $R/perf-record.out 2>&1)
	perf script -i /tmp/perf.data -F brstack > $R/perf-brstack.txt 2>> $R/perf-record.out
	rm -f /tmp/perf.data /tmp/core*
fi

if { [ "$case" = pmu ] || [ "$case" = arch ]; } && [ "$storm" != only ]; then
	# where it cannot work: an unprivileged user (no CAP_PERFMON) at
	# paranoid 2 (Debian's default 3 refuses even more; util-linux's
	# setpriv, not busybox's); a pinned system-wide LBR user with another
	# filter (perf's cycles:D, -b: any branch, user and kernel) recording
	# first: one LBR_SELECT, so perf cannot schedule the collector's
	# pinned events ("taken"); then one with the collector's own filter
	# (-j any,u, cycles:uD) first: perf schedules both, the LBR shared.
	# Which came first used to be a race (a sleep 3) that a slower model
	# gave to the collector, perf's then recording nothing: perf_running
	# waits until perf's events are on.
	cat /proc/sys/kernel/perf_event_paranoid > $R/paranoid-default
	echo 2 > /proc/sys/kernel/perf_event_paranoid
	mkdir -m 0777 /tmp/lbr-nobody
	/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		$btsdumpd --log stderr --lbr-collector --lbr-dir /tmp/lbr-nobody \
		> $R/nocap.log 2>&1
	echo $? > $R/nocap.status
	cp /tmp/lbr-nobody/status $R/nocap-status 2>/dev/null
	beside_perf busy busy-perf.out -b -e cycles:D
	beside_perf taken pinned-perf.out -j any,u -e cycles:uD
	cat $R/nocap.log $R/busy.log $R/taken.log > /dev/console	# the console log tells too
fi
collector_start
btsdumpctl status > $R/ctl-status.txt 2>&1
echo "|$btsdumpd --direct --log kmsg --store $S --dump-mode=%d %P %u %g %s %t %e" \
	> /proc/sys/kernel/core_pattern
# new_entries MODE: the store's new entries are MODE's
new_entries() {
	ls $S | grep -v '^\.' | while read -r e; do
		[ -e $R/entry-$e ] || echo $1 > $R/entry-$e
	done
}
i=0
# pingpong: two processes alternating on CPU 0 (btsabi and btsabi-hi,
# linked elsewhere), then btsabi's call through NULL; perfb: crasher null
# under `perf record -b` (any branch, user and kernel: another filter);
# hotplug: crasher null on CPU 1 after it went offline and online again
for mode in null abort smash handler threads pingpong perfb hotplug; do
	[ ! -e /run/btsdumpd-lbr/armed ] && [ $mode != null ] && continue
	[ "$storm" = only ] && [ $mode != null ] && continue
	# the AMD model: the first six (check-collector.py's AMD_MODES)
	case $case in amd|zen5) [ $mode = perfb ] || [ $mode = hotplug ] && continue ;; esac
	case $mode in
	pingpong) /bin/btsabi lbr-pingpong > $R/crash-$mode.out 2>&1 ;;
	perfb)
		(cd /tmp && perf record -b -o /tmp/perfb.data /bin/crasher null \
			> $R/crash-$mode.out 2>&1)
		perf report -i /tmp/perfb.data --stdio -D 2>/dev/null |
			grep -c 'PERF_RECORD_SAMPLE' > $R/perfb-samples
		rm -f /tmp/perfb.data ;;
	hotplug)
		echo 0 > /sys/devices/system/cpu/cpu1/online
		cat /sys/devices/system/cpu/online > $R/hotplug-offline
		echo 1 > /sys/devices/system/cpu/cpu1/online
		cat /sys/devices/system/cpu/online > $R/hotplug-online
		sleep 3		# the collector checks its CPUs once a second
		taskset -c 1 /bin/crasher null > $R/crash-$mode.out 2>&1 ;;
	*) /bin/crasher $mode > $R/crash-$mode.out 2>&1 ;;
	esac
	echo $? > $R/crash-$mode.status
	i=$((i + 1))
	# perf record dies of its child's signal too: its own core
	[ $mode = perfb ] && i=$((i + 1))
	wait_store $i
	new_entries $mode
done
dmesg > $R/dmesg.txt
cat $R/collector.log > /dev/console
if [ "$case" = pmu ] && { [ "$storm" = 1 ] || [ "$storm" = only ]; }; then
	echo 1 > $R/storm-run
	# a storm: 100 crashes in 10 s into a store of their own, against a
	# burst of 12: each stored with its own thread's snapshot, or logged
	# as rate-limited (dmesg-storm.txt)
	printf '[Store]\nRateLimitIntervalSec=300\nRateLimitBurst=12\n' > /tmp/storm.conf
	mkdir $R/storm
	echo STORM-BEGIN > /dev/console		# collector-test.sh notes the log's size
	sleep 2
	dmesg -c > /dev/null
	echo "|$btsdumpd --direct --log kmsg --store $R/storm --config /tmp/storm.conf --dump-mode=%d %P %u %g %s %t %e" \
		> /proc/sys/kernel/core_pattern
	n=0 pids=
	while [ $n -lt 100 ]; do
		/bin/crasher null > /dev/null 2>&1 &
		pids="$pids $!"
		usleep 100000
		n=$((n + 1))
	done
	wait $pids	# not the collector
	n=0
	while pidof btsdumpd | grep -qv "^$collector\$" && [ $n -lt 400 ]; do
		sleep 1; n=$((n + 1))
	done
	dmesg > $R/dmesg-storm.txt
fi
kill $collector 2>/dev/null
wait $collector
echo $? > $R/collector.status
cp /run/btsdumpd-lbr/status $R/collector-status 2>/dev/null
results_out
