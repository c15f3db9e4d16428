#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes a large trace for the benchmark: N records (default 1 M) whose
# addresses are real code addresses of tests/fixtures/crasher-abort.core
# (the PIE executable and glibc at their ASLR addresses), taken from its
# recorded branches and spread over nearby instructions, deterministically.
# Writes the `btsdump add-note` records file and the address list for
# eu-addr2line.  Usage: make-trace.py RECORDS ADDRS [N]
import random
import sys

src = __file__.rsplit("/bench/", 1)[0] + "/tests/fixtures/crasher-abort.records"
records_out, addrs_out = sys.argv[1:3]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
base = []
with open(src) as f:
    for line in f:
        if line.strip() and not line.startswith("#"):
            a, b = line.split()
            base.append((int(a, 16), int(b, 16)))
rng = random.Random(20261122)
with open(records_out, "w") as r, open(addrs_out, "w") as a:
    r.write("# %d records derived from crasher-abort.records (bench/make-trace.py)\n" % n)
    for _ in range(n):
        frm, to = rng.choice(base)
        frm += rng.randrange(0, 48)   # nearby instructions of the same functions
        to += rng.randrange(0, 48)
        r.write("0x%x 0x%x\n" % (frm, to))
        a.write("0x%x\n0x%x\n" % (frm, to))
