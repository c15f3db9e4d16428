#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of run-collector-vm.sh CASE signals (the PMU model) and
signals-amd (the AMD model), Debian's stock kernel, the collector armed:
the BPF program at signal_generate takes a branch snapshot only for the
signals it keeps.  From the model's log of MSR accesses (pmu.log) between
vmbench's marks (bench/msr-per-unit.py): a signal that is not a crash
(SIGUSR1, handled) reads nothing of the LBR stack; a core dump (the
SIGSEGV, then the parent's SIGCHLD) reads it exactly once, the whole
stack (Intel: 32 FROM, TO and INFO; AMD's LbrExtV2: 16 FROM and TO).
TAP on stdout.
Usage: check-collector-signals.py RESULTS_DIR"""

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (load())
collector = importlib.import_module("check-collector")   # its TAP, its checks
cv = collector.cv
check = cv.check
msr = oracle.load("msr_per_unit", "bench", "msr-per-unit.py")
# one snapshot's reads of the stack: bpf_get_branch_snapshot() reads
# every entry (intel_pmu_lbr_read_64(), amd_pmu_lbr_read())
SNAPSHOT = {"signals": {"LBR_FROM": 32, "LBR_TO": 32, "LBR_INFO": 32},
            "signals-amd": {"AMD_LBR_FROM": 16, "AMD_LBR_TO": 16}}


def stack_reads(each, names):
    """{name: reads per unit} of the LBR stack's MSRs NAMES."""
    return {n: round(v, 3) for (kind, n), v in each.items()
            if kind == "rdmsr" and n in names}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-collector-signals.py RESULTS_DIR")
    res = sys.argv[1]
    case = cv.read(os.path.join(res, "case")).strip()
    check(case in SNAPSHOT, "a signals case ran", case)
    collector.check_cpu_time(res)
    log = cv.read(os.path.join(res, "collector.log"))
    check("LBR collector armed" in log, "the collector armed", log)
    bench = os.path.join(res, "bench.out")
    try:
        rows = msr.per_unit(
            [(w[1], w[2], int(w[4])) for w in
             (ln.split() for ln in open(bench)) if w and w[0] == "RESULT"],
            msr.brackets(msr.pmu_log.read(os.path.join(res, "pmu.log"))))
    except (OSError, ValueError, msr.pmu_log.FormatError) as e:
        check(False, "vmbench's runs and their marks in the model's log", str(e))
        sys.exit(cv.tap.done())
    got = {bench: (total, each) for bench, _, total, each in rows}
    check(set(got) == {"signals", "coredump"}, "vmbench's runs and their marks "
          "in the model's log", cv.read(bench))
    names = SNAPSHOT.get(case, {})
    total, each = got.get("signals", (0, {}))
    check(not stack_reads(each, names), "a signal that is not a crash (SIGUSR1): "
          "no snapshot (no read of the LBR stack)",
          f"per signal: {total:.3f} MSR accesses, {stack_reads(each, names)}")
    total, each = got.get("coredump", (0, {}))
    check(stack_reads(each, names) == names, "a core dump (SIGSEGV, the "
          "parent's SIGCHLD): one snapshot of the whole stack",
          f"per dump: {total:.3f} MSR accesses, {stack_reads(each, names)}, "
          f"one snapshot: {names}")
    sys.exit(cv.tap.done(prune=res))


if __name__ == "__main__":
    main()
