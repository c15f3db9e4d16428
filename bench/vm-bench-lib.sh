# SPDX-License-Identifier: GPL-2.0-or-later
# What the VM benches' parts share (sourced by vm-bench-default.sh and
# vm-bench-perf.sh, with $src set): one bench boot on a model with the PMU
# and its MSR log, its MSR accesses per unit counted (bench/msr-per-unit.py)
# and the log removed; boots VM_BENCH_JOBS at a time (default 2: under
# -icount a boot's counts do not depend on the host's load).

bench_running=0

# bench_boot BACKEND OBJDIR RUNDIR KERNEL_ARGS...: in the background; the
# environment (VM_PERF, VM_DEFAULTS...) passes through to run-vm.sh.
bench_boot() {
	be=$1 obj=$2 run=$3
	shift 3
	(BTSCRASH_BACKEND=$be VM_CPU_EXTRA=,pmu=on VM_PMU_LOG=1 \
		"$src/tests/vm/run-vm.sh" "$obj" "$run" btscrash.bench=base nmi_watchdog=0 \
		"$@" >/dev/null || echo "vm-bench: the boot of $run failed" >&2
	python3 "$src/bench/msr-per-unit.py" "$run/bench.out" "$run/pmu.log" \
		> "$run/msr.out" || echo "vm-bench: no MSR counts for $run" >&2
	rm -f "$run/pmu.log") &
	bench_running=$((bench_running + 1))
	[ "$bench_running" -lt "${VM_BENCH_JOBS:-2}" ] || bench_wait
}

# bench_wait: until every boot started has ended.
bench_wait() {
	wait
	bench_running=0
}
