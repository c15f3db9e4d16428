#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""MSR accesses per benchmark unit, from the PMU model's pmu-log of a
bench boot (bench/vm-bench.sh): tests/vm/vmbench.c brackets every timed
run with two marks (an event-select write of 0x5100c4, then one of
0x5200c4) after one empty bracket that measures the marks' own accesses.
The RESULT lines of bench.out say, in order, which benchmark and how many
runs each vmbench made; each consumed 1 + runs brackets of the log.
Prints per RESULT line: bench variant accesses-per-unit and the MSRs that
make it (the most frequent first, per unit; the LBR stack's 32 FROM, TO
and INFO MSRs each counted as one name).  Exit 1 when the log's
brackets do not match bench.out (no PMU, no marks: nothing to count).
Usage: msr-per-unit.py BENCH_OUT PMU_LOG"""
import collections
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location("pmu_log", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "qemu",
    "pmu-log.py"))
pmu_log = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pmu_log)

# IA32_PERFEVTSEL0-3; AMD's PERF_CTL0-5 (qemu/ patches 0013-0014)
EVENTSEL = set(range(0x186, 0x18a)) | set(range(0xc0010200, 0xc001020c, 2))
MARK = {0x5100c4: "begin", 0x5200c4: "end"}
# units per run, as vm-bench.sh: ping-pong rounds are 2 switches
# and signals 1000 SIGUSR1s (collector-init.sh)
UNITS = {"pingpong": 2 * 2000, "branches": 200000, "coredump": 1, "idle": 1,
         "signals": 1000}


# names for the table, the LBR stack's 32 entries of each kind as one
# and AMD's (PerfMonV2, LbrExtV2), whose pairs alternate: PERF_CTL n and
# PERF_CTR n at 0xc0010200 + 2n, + 2n + 1; LBR_FROM n and LBR_TO n at
# 0xc0010300 + 2n, + 2n + 1 (16 of each, one name each)
NAMES = {0x1d9: "DEBUGCTL", 0x1c8: "LBR_SELECT", 0x1c9: "LBR_TOS",
         0x600: "DS_AREA", 0x38d: "FIXED_CTR_CTRL", 0x38e: "GLOBAL_STATUS",
         0x38f: "GLOBAL_CTRL", 0x390: "GLOBAL_OVF_CTRL",
         0xc000010e: "AMD_LBR_SELECT", 0xc000010f: "DBG_EXTN_CFG",
         0xc0000300: "AMD_GLOBAL_STATUS", 0xc0000301: "AMD_GLOBAL_CTL",
         0xc0000302: "AMD_GLOBAL_STATUS_CLR",
         0xc0000303: "AMD_GLOBAL_STATUS_SET"}
RANGES = ((0x680, "LBR_FROM"), (0x6c0, "LBR_TO"), (0xdc0, "LBR_INFO"))
PAIRS = ((0xc0010200, 12, "PERFEVTSEL", "PERF_CTR"),
         (0xc0010300, 32, "AMD_LBR_FROM", "AMD_LBR_TO"))


def msr_name(msr):
    """DEBUGCTL, LBR_FROM (any of the 32), ... or the number in hex."""
    for base, name in RANGES:
        if base <= msr < base + 32:
            return name
    for base, n, even, odd in PAIRS:
        if base <= msr < base + n:
            return odd if msr & 1 else even
    if msr in EVENTSEL:
        return "PERFEVTSEL"
    return NAMES.get(msr, "%#x" % msr)


def brackets(entries):
    """Counters {(kind, msr): n} of the accesses between each begin and
    end mark, in log order (the marks' writes themselves not counted)."""
    out, cur = [], None
    for e in entries:
        mark = MARK.get(e.value) if e.kind == 0 and e.msr in EVENTSEL else None
        if mark == "begin":
            cur = collections.Counter()
        elif mark == "end" and cur is not None:
            out.append(cur)
            cur = None
        elif cur is not None and e.is_msr:
            cur[(e.kind_name, msr_name(e.msr))] += 1
    return out


def per_unit(results, found):
    """[(bench, variant, per-unit total, {(kind, msr): per unit})]."""
    rows, i = [], 0
    for bench, variant, runs in results:
        if i + 1 + runs > len(found):
            raise ValueError("%d brackets in the log, bench.out needs more"
                             % len(found))
        empty, runs_c = found[i], found[i + 1:i + 1 + runs]
        i += 1 + runs
        total = collections.Counter()
        for c in runs_c:
            total.update(c)
        total.subtract({k: v * runs for k, v in empty.items()})
        n = runs * UNITS.get(bench, 1)
        each = {k: v / n for k, v in total.items() if v / n >= 0.0005}
        rows.append((bench, variant, sum(total.values()) / n, each))
    if i != len(found):
        raise ValueError("%d brackets in the log, bench.out accounts for %d"
                         % (len(found), i))
    return rows


def main(argv):
    if len(argv) != 3:
        print(__doc__.rsplit("\n", 1)[-1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        results = [(w[1], w[2], int(w[4])) for w in
                   (line.split() for line in f) if w and w[0] == "RESULT"]
    try:
        rows = per_unit(results, brackets(pmu_log.read(argv[2])))
    except (OSError, ValueError, pmu_log.FormatError) as e:
        print("msr-per-unit: %s" % e, file=sys.stderr)
        return 1
    for bench, variant, total, each in rows:
        top = sorted(each.items(), key=lambda kv: -kv[1])[:6]
        print("MSR %s %s %.3f %s" % (bench, variant, total, " ".join(
            "%s:%s=%.3f" % (k[0], k[1], v) for k, v in top)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
