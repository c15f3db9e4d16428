#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The LBR oracle log must hold exactly the entries the guest expected, in
order: index (TOS after the push), type, kind, source CPL, CPL it ended in,
from, to; vCPU 0.  The format and info of each: given on its "lexp" line
(Architectural LBR: format 2 push, 3 call-stack pop, 4 NMI snapshot, and
the INFO written), or for the whole log by FORMAT: 0 (Intel's stack, INFO
0, the default) or 1 AMD's LbrExtV2 (info 2: valid, not spec, not
mispredicted).
Usage: check-lbr-log.py CONSOLE_OUTPUT LBR_LOG [FORMAT]"""
import importlib.util
import os
import sys
spec = importlib.util.spec_from_file_location("lbrlog", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lbr-log.py"))
lbrlog = importlib.util.module_from_spec(spec); spec.loader.exec_module(lbrlog)
fmt = int(sys.argv[3]) if len(sys.argv) > 3 else lbrlog.FORMAT_INTEL
info = 2 if fmt == lbrlog.FORMAT_AMD_V2 else 0
exp = []
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("lexp "):
        f = line.split()[1:10]
        ef, ei = (int(f[7]), int(f[8], 16)) if len(f) > 7 else (fmt, info)
        exp.append((int(f[0], 16), int(f[1]), int(f[2]), int(f[3]),
                    int(f[4]), int(f[5], 16), int(f[6], 16), ef, ei))
entries = lbrlog.read(sys.argv[2])
got = [(e.tos, e.type, e.kind, e.src_cpl, e.cpl, e.frm, e.to, e.format,
        e.info) for e in entries]
bad = [i for i, (a, b) in enumerate(zip(exp, got)) if a != b]
if len(exp) != len(got) or bad:
    print("FAIL: LBR oracle log: %d entries, %d expected, first mismatch at %s"
          % (len(got), len(exp), bad[:1]))
    for i in bad[:3]:
        print("  want", [hex(x) for x in exp[i]], "got", [hex(x) for x in got[i]])
    sys.exit(1)
if not exp:
    print("FAIL: LBR oracle log: nothing expected (did the LBR tests run?)")
    sys.exit(1)
if any(e.cpu != 0 for e in entries):
    print("FAIL: LBR oracle log: an entry of a vCPU other than 0"); sys.exit(1)
print("ok - LBR oracle log: %d entries, each as expected" % len(got))
