#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm-pmu's migration phase (pmu-vm.sh's init runs it on the PMU model, 2
# CPUs): migloop, traced (a BTS ring of 16384 records), moves itself
# between CPU 0 and CPU 1 at known points (migloop.S: one byte per phase,
# the CPU to run it on): phases a-c without perf (the control), d-g while
# perf's intel_bts (per thread) holds BTS on it, h-i after, j-l while the
# BTS event (-e branches:u -c 1) holds it, m after; migwit (the same
# program at another address, traced) runs its phases a-e on CPU 0, 1,
# 0, 1, 0: on the CPU migloop left while perf holds BTS on migloop (a, b,
# e) and after each hold (c, d): that CPU's BTS half must be the
# recorder's again.  Both die of SIGSEGV with their rings in
# their cores; perf's data and the cores go to the data port (ttyS1) for
# check-pmu-vm.py's check_migration().
# Usage (in the guest): pmu-mig.sh; pmu-mig.sh hold-bts|hold-event (perf's
# workload: the phases under the hold)

# step FD_IN FD_OUT CPU: one phase of migloop (5, 6) or migwit (7, 8) on CPU
step() {
	printf %s "$3" >&"$1"
	head -c 1 <&"$2" > /dev/null
}
mig() { step 5 6 "$1"; echo "PMU-MIG-STEP: migloop $1"; }
wit() { step 7 8 "$1"; echo "PMU-MIG-STEP: migwit $1"; }

case "${1:-}" in
hold-bts)	# d on CPU 0, e on 1, f on 0, g on 1; migwit on the CPU left
	sleep 1; mig 0; mig 1; wit 0; mig 0; wit 1; mig 1; sleep 1
	exit 0 ;;
hold-event)	# j on CPU 0, k on 1, l on 0; migwit on CPU 0 while k held
	sleep 1; mig 0; mig 1; wit 0; mig 0; sleep 1
	exit 0 ;;
esac

echo "/tmp/%e.core" > /proc/sys/kernel/core_pattern
mkfifo /tmp/ml.in /tmp/ml.out /tmp/mw.in /tmp/mw.out
btsrun 16384 /bin/migloop < /tmp/ml.in > /tmp/ml.out 2> /tmp/ml.err &
ml=$!
btsrun 8192 /bin/migwit < /tmp/mw.in > /tmp/mw.out 2> /tmp/mw.err &
mw=$!
exec 5> /tmp/ml.in 6< /tmp/ml.out 7> /tmp/mw.in 8< /tmp/mw.out
# the control: a on CPU 0, b on 1, c on 0, no perf user
mig 0; mig 1; mig 0
perf record --per-thread -p $ml -e intel_bts//u -m ,64 -o /tmp/mig-bts.data \
	-- /bin/pmu-mig.sh hold-bts > /tmp/mig-bts.out 2>&1
echo "PMU-MIG-PERF-RC: bts $?"
# after perf let go: h on CPU 1, i on CPU 0; migwit c on 0, d on 1
mig 1; mig 0; wit 0; wit 1
perf record --per-thread -p $ml -e branches:u -c 1 -d -o /tmp/mig-ev.data \
	-- /bin/pmu-mig.sh hold-event > /tmp/mig-ev.out 2>&1
echo "PMU-MIG-PERF-RC: event $?"
mig 1	# m on CPU 1
printf x >&5; printf x >&7
wait $ml
echo "PMU-MIG-RC: migloop $?"
wait $mw
echo "PMU-MIG-RC: migwit $?"
exec 5>&- 6<&- 7>&- 8<&-
sed "s/^/PMU-MIG-SAID: /" /tmp/mig-bts.out /tmp/mig-ev.out /tmp/ml.err /tmp/mw.err
perf report -D -i /tmp/mig-bts.data 2>/dev/null |
	sed -n "s/^\.  *[0-9a-f]*: .* \([0-9a-f]*\) -> \([0-9a-f]*\) [a-z]*\$/PMU-MIG-BTS: \1 \2/p" > /dev/ttyS1
perf script -i /tmp/mig-ev.data -F ip,addr 2>/dev/null |
	sed -n "s/^ *\([0-9a-f]*\) *=> *\([0-9a-f]*\)\$/PMU-MIG-EVENT: \1 \2/p" > /dev/ttyS1
for p in migloop migwit; do
	base64 /tmp/$p.core | sed "s/^/PMU-MIG-CORE-$p: /" > /dev/ttyS1
done
