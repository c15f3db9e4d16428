#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The PMU oracle log (pmu-log=FILE) must hold exactly the overflows and
PMIs the guest expected, in order ("pexp": kind, value, reason, flags,
GLOBAL_STATUS, the count of counter N, N: the entry's counter word N),
and between the two marker writes exactly the MSR accesses the guest
made ("mexp": kind, MSR, value), each at an address in the guest's code,
an RDMSR of a counter logging the value read.  With "amd" (the AMD
guest, which makes no marks): the overflows and PMIs only, on AMD's six
counters (the log's words 0-5 PERF_CTR0-5).
Usage: check-pmu-log.py CONSOLE_OUTPUT PMU_LOG [amd]"""
import importlib.util
import os
import sys
spec = importlib.util.spec_from_file_location("pmulog", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pmu-log.py"))
pmulog = importlib.util.module_from_spec(spec); spec.loader.exec_module(pmulog)
MARK = 0xbad
FIXED0 = 0x309
pexp, mexp = [], []
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if f[:1] == ["pexp"]:
        pexp.append(tuple(int(x, 0) for x in f[1:8]))
    elif f[:1] == ["mexp"]:
        mexp.append(tuple(int(x, 0) for x in f[1:4]))
entries = pmulog.read(sys.argv[2])
fail = 0


def check(cond, what, detail=""):
    global fail
    print(("ok - " if cond else "FAIL: ") + what)
    if not cond:
        fail = 1
        if detail:
            print("  " + str(detail))


amd = sys.argv[3:] == ["amd"]
marks = [i for i, e in enumerate(entries)
         if e.is_msr and e.msr == MARK] or [0]
ctr = pexp[0][6] if pexp else 0
events = [(e.kind, e.value, e.msr, e.flags, e.status, e.counter[ctr], ctr)
          for e in entries if not e.is_msr]
check(pexp and events == pexp,
      "pmu-log: %d overflow/PMI entries, each as expected" % len(pexp),
      "want %s\n  got %s" % ([tuple(map(hex, x)) for x in pexp],
                             [tuple(map(hex, x)) for x in events]))
if amd:
    check(all(e.cpu == 0 for e in entries), "pmu-log: every entry on vCPU 0")
    sys.exit(fail)
check(all(e.rip == 0 for e in entries if not e.is_msr) and
      all(e.rip for e in entries if e.is_msr) and
      all(0x100000 <= e.rip < 0x800000 for e in
          entries[marks[0]:marks[-1] + 1] if e.is_msr),
      "pmu-log: MSR entries at the instruction (the guest's between the "
      "marks, the firmware's before), others without an address")
got = [(e.kind, e.msr, e.value) for e in entries[marks[0]:marks[-1] + 1]
       if e.is_msr] if len(marks) == 2 else []
check(mexp and got == mexp,
      "pmu-log: %d MSR accesses between the marks, each as expected"
      % len(mexp),
      "want %s\n  got %s" % ([tuple(map(hex, x)) for x in mexp],
                             [tuple(map(hex, x)) for x in got]))
reads = [e for e in entries if e.kind == 2 and e.msr == FIXED0]
check(reads and all(e.value == e.counter[4] for e in reads),
      "pmu-log: each RDMSR of FIXED_CTR0 read the count the log holds")
check(all(e.cpu == 0 for e in entries), "pmu-log: every entry on vCPU 0")
sys.exit(fail)
