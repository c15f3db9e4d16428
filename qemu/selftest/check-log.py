#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The oracle log must hold exactly the records the guest expected, in order:
kind, from, to, slot (paging off: linear == physical == slot) and the
buffer base the record was written under.
Usage: check-log.py CONSOLE_OUTPUT BTS_LOG"""
import importlib.util
import os
import sys
spec = importlib.util.spec_from_file_location("btslog", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bts-log.py"))
btslog = importlib.util.module_from_spec(spec); spec.loader.exec_module(btslog)
exp = []
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("exp "):
        k, f, t, s, b = line.split()[1:6]
        exp.append((int(k), int(f, 16), int(t, 16), int(s, 16), int(s, 16),
                    int(b, 16)))
got = [(e.kind, e.frm, e.to, e.linear, e.phys, e.base)
       for e in btslog.read(sys.argv[2])]
bad = [i for i, (a, b) in enumerate(zip(exp, got)) if a != b]
if len(exp) != len(got) or bad:
    print("FAIL: oracle log: %d entries, %d expected, first mismatch at %s"
          % (len(got), len(exp), bad[:1]))
    for i in bad[:3]:
        print("  want", [hex(x) for x in exp[i]], "got", [hex(x) for x in got[i]])
    sys.exit(1)
if any(e.cpu != 0 or e.flags != 0 for e in btslog.read(sys.argv[2])):
    print("FAIL: oracle log: cpu or flags not 0"); sys.exit(1)
print("ok - oracle log: %d entries, each as expected" % len(got))
