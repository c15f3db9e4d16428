#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark of gdb/bts.py's instruction history: rebuilding every
# instruction of a full 4096-record ring from its branches and the code,
# against gdb's disassembler alone producing as many instructions (the
# program's .text over and over), and printing them all against gdb's own
# `disassemble` printing as many; side by side in one run, with gdb loading
# the core alone and `bts list` (the records through btsdump) for scale.
# Then gdb's own record commands through `btsdump gdbserver` (lib/gdbstub.c)
# against today's `info bts` + `bts function-call-history` (gdb/bts.py) at
# 4096 and 1 M records: wall time and the peak RSS of gdb with everything
# it runs (the stub, or btsdump), sampled from /proc.
# Reports seconds and ratios, asserts nothing.
# Usage: gdb-bench.py BTSDUMP [RUNS] [--stub-only]
import os
import re
import resource
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


def ring_records(ring=RING):
    """A full ring of real branches of crasher-null's run: its first eight,
    then checksum()'s loop (branches 9 and 10: the jl back to the loop
    head, the jmp over the odd case) over and over, then its last six,
    from the loop's exit to the call through NULL.  Every run of code
    between two of them is real, so all of it rebuilds."""
    with open(os.path.join(FIX, "crasher-null.records")) as f:
        recs = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    head, loop, tail = recs[:8], recs[8:10], recs[10:]
    n = (ring - len(head) - len(tail)) // 2
    return head + loop * n + tail


def timed(args, env):
    t = time.perf_counter()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    return time.perf_counter() - t, p.stdout


def tree_rss(root):
    """Resident kB of root and all its descendants, from /proc."""
    kids, total = {}, 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    todo = [root]
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            with open("/proc/%d/status" % pid) as f:
                total += int([l for l in f if l.startswith("VmRSS:")][0].split()[1])
        except (OSError, IndexError):
            pass
    return total


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_rss(args, env):
    """(wall seconds, peak MB of the process tree, output, CPU seconds of
    the tree: gdb waits for the stub, so its time is counted in gdb's)."""
    out = tempfile.TemporaryFile(mode="w+")
    cpu = cpu_children()
    t = time.perf_counter()
    p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True,
                         env=env, stdin=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        peak = max(peak, tree_rss(p.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - t
    out.seek(0)
    return wall, peak / 1024.0, out.read(), cpu_children() - cpu


def stub_bench(btsdump, tmp, env, runs):
    """gdb's record commands through the stub vs today's bts commands."""
    print("gdb's own record through `btsdump gdbserver` vs gdb/bts.py; "
          "wall seconds and peak RSS of gdb with its children")
    for ring in (RING, 1 << 20):
        rec = os.path.join(tmp, "ring%d.records" % ring)
        with open(rec, "w") as f:
            f.write("\n".join(ring_records(ring)) + "\n")
        core = os.path.join(tmp, "ring%d.core" % ring)
        subprocess.run([btsdump, "add-note", "--capacity", str(ring), "-o", core,
                        os.path.join(FIX, "crasher-notrace.core"), rec],
                       check=True)
        stub = ["gdb", "-batch", "-nx", "-ex", "target remote | %s gdbserver %s %s"
                % (btsdump, core, EXE)]
        whole = ["-ex", "set record btrace bts buffer-size unlimited"]
        rec_cmds = ["-ex", "record btrace bts", "-ex", "info record",
                    "-ex", "record function-call-history"]
        cases = [
            ("today: info bts + bts function-call-history",
             ["gdb", "-batch", "-nx", "-iex", "source " + SCRIPT, "-ex", "info bts",
              "-ex", "bts function-call-history", EXE, core], "calls"),
            ("stub, all: info record + record function-call-history",
             stub + whole + rec_cmds + [EXE], "Recorded"),
            ("stub, all: + record instruction-history",
             stub + whole + rec_cmds + ["-ex", "record instruction-history", EXE],
             "Recorded"),
            ("stub, gdb's default 64 KiB buffer: the same",
             stub + rec_cmds + ["-ex", "record instruction-history", EXE], "Recorded"),
        ]
        n = runs if ring == RING else 1
        res = []
        for name, args, want in cases:
            got = [timed_rss(args, env) for _ in range(n)]
            if want not in got[0][2] and "checksum" not in got[0][2]:
                sys.exit("gdb-bench: %s did not work:\n%s" % (name, got[0][2][-800:]))
            res.append((name, statistics.median(g[0] for g in got),
                        max(g[1] for g in got), statistics.median(g[3] for g in got)))
            m = re.search(r"Recorded \d+ instructions in \d+ functions", got[0][2])
            if m and len(res) == 2:
                info = m.group(0)
        print("%d records (%s), median of %d run(s):" % (ring, info, n))
        print("  %-52s %10s %10s %10s" % ("", "wall", "CPU", "peak RSS"))
        for name, t, mb, cpu in res:
            print("  %-52s %8.3f s %8.3f s %7.1f MB" % (name, t, cpu, mb))
        for i, what in ((1, "all"), (3, "gdb's default buffer")):
            print("  today / stub, %s: %.2fx the wall time, %.2fx the CPU, "
                  "%.1fx the memory" % (what, res[0][1] / res[i][1],
                                        res[0][3] / max(res[i][3], 1e-6),
                                        res[0][2] / max(res[i][2], 1e-6)))


def main():
    args = [a for a in sys.argv[1:] if a != "--stub-only"]
    if len(args) not in (1, 2):
        sys.exit("usage: gdb-bench.py BTSDUMP [RUNS] [--stub-only]")
    btsdump = os.path.abspath(args[0])   # the btsdump binary (meson: its full path)
    runs = int(args[1]) if len(args) == 2 else 5
    if "--stub-only" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            stub_bench(btsdump, tmp, dict(os.environ, BTSDUMP=btsdump, LC_ALL="C"), runs)
        return
    env = dict(os.environ, BTSDUMP=btsdump, LC_ALL="C")
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "ring.records")
        recs = ring_records()
        with open(rec, "w") as f:
            f.write("\n".join(recs) + "\n")
        core = os.path.join(tmp, "ring.core")
        subprocess.run([btsdump, "add-note", "--capacity", str(RING), "-o", core,
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
    with tempfile.TemporaryDirectory() as tmp:
        stub_bench(btsdump, tmp, env, runs)


main()
