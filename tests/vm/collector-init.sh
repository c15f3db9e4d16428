#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of run-collector-vm.sh (Debian's stock kernel on the PMU model):
# perf's user branch stack on a crash, then btsdumpd's LBR collector and
# crashes nobody traced (one after two processes alternated on a CPU)
# stored by btsdumpd as the core_pattern handler;
# collector.case=nopmu: the model without a PMU; amd: the AMD model.
# Without an armed collector only the first crash runs.  Results as a base64'd
# tar on ttyS1 between COLLECTOR-BEGIN and COLLECTOR-END.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mkdir -p /run
mount -t tmpfs tmpfs /run
R=/tmp/results
S=$R/store
mkdir -p $R $S
case=$(sed -n 's/.*collector\.case=\([a-z]*\).*/\1/p' /proc/cmdline)
echo "$case" > $R/case
uname -r > $R/uname
cat /sys/devices/cpu/caps/branches > $R/lbr-depth 2>&1

# wait_store N: until N entries are committed (at most 120 s)
wait_store() {
	n=0
	while [ "$(ls $S | grep -cv '^\.')" -lt "$1" ] && [ $n -lt 120 ]; do
		sleep 1; n=$((n + 1))
	done
}

if [ "$case" != nopmu ]; then
	# perf's own LBR user: every sample's branch stack (check-collector.py
	# finds each in the model's log)
	(cd /tmp && perf record -j any,u -c 997 -e instructions:u -o /tmp/perf.data \
		/bin/crasher null > $R/perf-record.out 2>&1)
	perf script -i /tmp/perf.data -F brstack > $R/perf-brstack.txt 2>> $R/perf-record.out
	rm -f /tmp/perf.data /tmp/core*
fi

btsdumpd=/usr/libexec/btsdumpd
$btsdumpd --log stderr --lbr-collector > $R/collector.log 2>&1 &
collector=$!
n=0
while [ ! -e /run/btsdumpd-lbr/armed ] && kill -0 $collector 2>/dev/null && [ $n -lt 120 ]; do
	sleep 1; n=$((n + 1))
done
btsdumpctl status > $R/ctl-status.txt 2>&1
echo "|$btsdumpd --direct --log kmsg --store $S --dump-mode=%d %P %u %g %s %t %e" \
	> /proc/sys/kernel/core_pattern
i=0
# pingpong: two processes alternating on CPU 0 (btsabi and btsabi-hi,
# linked elsewhere), then btsabi's call through NULL
for mode in null abort smash handler threads pingpong; do
	[ ! -e /run/btsdumpd-lbr/armed ] && [ $mode != null ] && continue
	if [ $mode = pingpong ]; then
		/bin/btsabi lbr-pingpong > $R/crash-$mode.out 2>&1
	else
		/bin/crasher $mode > $R/crash-$mode.out 2>&1
	fi
	echo $? > $R/crash-$mode.status
	i=$((i + 1))
	wait_store $i
	ls $S | grep -v '^\.' | while read -r e; do
		[ -e $R/entry-$e ] || echo $mode > $R/entry-$e
	done
done
kill $collector 2>/dev/null
wait $collector
echo $? > $R/collector.status
cp /run/btsdumpd-lbr/status $R/collector-status 2>/dev/null
dmesg > $R/dmesg.txt
echo COLLECTOR-BEGIN > /dev/ttyS1
tar -czf - -C $R . | base64 > /dev/ttyS1
echo COLLECTOR-END > /dev/ttyS1
poweroff -f
