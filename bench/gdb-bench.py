#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark of gdb/bts.py's instruction history: rebuilding every
# instruction of a full 4096-record ring from its branches and the code,
# against gdb's disassembler alone producing as many instructions (the
# program's .text over and over), and printing them all against gdb's own
# `disassemble` printing as many; side by side in one run, with gdb loading
# the core alone and `bts list` (the records through btsdump) for scale.
# Reports seconds and ratios, asserts nothing.
# Usage: gdb-bench.py BUILD_DIR [RUNS]
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
EXE = os.path.join(FIX, "crasher")
SCRIPT = os.path.join(SRC, "gdb", "bts.py")
RING = 4096
# In gdb: N instructions of the program's .text, disassembled over and over
# (arch.disassemble, or printed by `disassemble` when PRINT).
BASELINE = """python
import gdb
n, want, show = 0, %d, %s
sec = [s for s in gdb.execute("maint info sections", to_string=True).splitlines()
       if ".text " in s and "ALLOC" in s][0]
lo, hi = [int(x, 16) for x in sec.split()[1].split("->")]
arch = gdb.selected_inferior().architecture()
while n < want:
    if show:
        out = gdb.execute("disassemble 0x%%x,0x%%x" %% (lo, hi), to_string=True)
        n += out.count("\\n") - 2
    else:
        n += len(arch.disassemble(lo, hi - 1))
"""


def ring_records():
    """A full ring of real branches of crasher-null's run: its first eight,
    then checksum()'s loop (branches 9 and 10: the jl back to the loop
    head, the jmp over the odd case) over and over, then its last six,
    from the loop's exit to the call through NULL.  Every run of code
    between two of them is real, so all of it rebuilds."""
    with open(os.path.join(FIX, "crasher-null.records")) as f:
        recs = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    head, loop, tail = recs[:8], recs[8:10], recs[10:]
    n = (RING - len(head) - len(tail)) // 2
    return head + loop * n + tail


def timed(args, env):
    t = time.perf_counter()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    return time.perf_counter() - t, p.stdout


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: gdb-bench.py BUILD_DIR [RUNS]")
    btsdump = os.path.join(os.path.abspath(sys.argv[1]), "btsdump")
    runs = int(sys.argv[2]) if len(sys.argv) == 3 else 5
    env = dict(os.environ, BTSDUMP=btsdump, LC_ALL="C")
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "ring.records")
        recs = ring_records()
        with open(rec, "w") as f:
            f.write("\n".join(recs) + "\n")
        core = os.path.join(tmp, "ring.core")
        subprocess.run([btsdump, "add-note", "-C", str(RING), "-o", core,
                        os.path.join(FIX, "crasher-notrace.core"), rec],
                       check=True)
        gdb = ["gdb", "-batch", "-nx", "-iex", "source " + SCRIPT]
        _, out = timed(gdb + ["-ex", "bts instruction-history 1,10000000",
                              EXE, core], env)
        insns = [l for l in out.splitlines() if re.match(r"\s*\d+\t", l)]
        breaks = [l for l in out.splitlines() if l.strip().startswith("--")]
        if not insns or breaks:
            sys.exit("gdb-bench: the ring did not rebuild: %s"
                     % (breaks[:3] or out[-500:]))
        n = len(insns)
        cases = [
            ("gdb loads the core", ["gdb", "-batch", "-nx", EXE, core]),
            ("+ bts list 1 (btsdump decodes the ring)",
             gdb + ["-ex", "bts list 1", EXE, core]),
            ("+ bts instruction-history 1 (rebuild all, print 1)",
             gdb + ["-ex", "bts instruction-history 1", EXE, core]),
            ("+ bts instruction-history 1,%d (rebuild, print all)" % n,
             gdb + ["-ex", "bts instruction-history 1,%d" % n, EXE, core]),
            ("baseline: gdb's disassembler makes %d instructions" % n,
             ["gdb", "-batch", "-nx", "-ex", BASELINE % (n, "False"), EXE, core]),
            ("baseline: gdb's `disassemble` prints %d instructions" % n,
             ["gdb", "-batch", "-nx", "-ex", BASELINE % (n, "True"), EXE, core]),
        ]
        for _, args in cases:       # warm the page cache
            timed(args, env)
        res = []
        for name, args in cases:
            ts = [timed(args, env)[0] for _ in range(runs)]
            res.append((name, statistics.median(ts)))
    print("%d records (a full ring), %d instructions rebuilt; median of %d "
          "runs, wall seconds" % (len(recs), n, runs))
    base_load = res[0][1]
    for name, t in res:
        print("  %-62s %7.3f s" % (name, t))
    rebuild = res[2][1] - res[1][1]
    print("rebuilding %d instructions: %.3f s (%.0f instructions/s)"
          % (n, rebuild, n / rebuild if rebuild > 0 else float("inf")))
    print("ratio, making them: bts instruction-history 1 / disassembler "
          "alone = %.2f" % ((res[2][1] - res[1][1]) / max(res[4][1] - base_load,
                                                            1e-6)))
    print("ratio, printing them: bts instruction-history 1,%d / disassemble "
          "= %.2f" % (n, (res[3][1] - res[1][1]) / max(res[5][1] - base_load,
                                                      1e-6)))


main()
