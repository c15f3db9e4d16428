#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm-pmu's attach phase (pmu-vm.sh's init runs it on the PMU model, 2
# CPUs): perf starts and stops on a traced task that is running.
# spinloop, traced (a BTS ring of 16384 records), spins on CPU 1 as
# SCHED_FIFO (RT throttling off) and never blocks while perf's intel_bts
# (per thread, on CPU 0) attaches to it in its phase a and detaches in
# phase b: perf's enable and disable reach it by IPI while it runs
# (kernel/events/core.c event_function_call()), so ds_bts_request() and
# ds_bts_release() run with its ring loaded and no context switch to
# save it; phase c after, then SIGSEGV (a core with its ring).  (The
# stopper, migration/1, still preempts it now and then: about 200 times
# over perf's run in one run, as often as migration/0 ran; the fair
# server off changed nothing.)  Its context-switch counts before
# and after perf, perf's data and the core go to check-pmu-vm.py's
# check_attach() (the data port, ttyS1, for the bulk).
# Usage (in the guest): pmu-attach.sh
ulimit -c unlimited
echo "/tmp/%e.core" > /proc/sys/kernel/core_pattern
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
echo -1 > /proc/sys/kernel/sched_rt_runtime_us
btsrun 16384 /bin/spinloop > /tmp/sl.out 2>&1 &
sl=$!
switches() { grep ctxt_switches /proc/$sl/status | tr -s '\t ' ' ' | tr '\n' ' '; }
sleep 1	# phase a, the ring recording
echo "PMU-ATT-SWITCHES-BEFORE: $(switches)"
perf record --per-thread -p $sl -e intel_bts//u -m ,64 -o /tmp/att.data \
	-- sh -c "sleep 1; kill -USR1 $sl; sleep 1" > /tmp/att.out 2>&1
echo "PMU-ATT-PERF-RC: $?"
echo "PMU-ATT-SWITCHES-AFTER: $(switches)"
sleep 1	# the rest of phase b, perf gone
kill -USR1 $sl
sleep 1	# phase c
kill -USR1 $sl
wait $sl
echo "PMU-ATT-RC: $?"
echo "$rt" > /proc/sys/kernel/sched_rt_runtime_us
sed "s/^/PMU-ATT-SAID: /" /tmp/att.out /tmp/sl.out
perf report -D -i /tmp/att.data 2>/dev/null |
	sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-ATT-BTS: \1 \2/p" > /dev/ttyS1
base64 /tmp/spinloop.core | sed "s/^/PMU-ATT-CORE: /" > /dev/ttyS1
