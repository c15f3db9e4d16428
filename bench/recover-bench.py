#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark of value recovery (lib/recover.c): accuracy against the truth
# and speed, on the crashes tests/test-recover.py checks (the crasher's
# modes, truth.c, truth-virt.cc; -O0 and -O2) and one long trace (the
# crasher's `rounds N` at -O2, about 40 instructions a round), each
# single-stepped in gdb from main with every register logged.
# Per program: the instructions compared, the wrong values (the goal: 0),
# the share of general-purpose register values recovered over the trace
# and over its last 1,000 instructions (REPT's measure; it reports 92 %),
# `btsdump regs`' wall time and peak RSS (the engine over the whole
# trace, median of RUNS) against `btsdump CORE EXE` (the trail, decoded
# and symbolized) on the same core, side by side: the ratio.  Then gdb's
# reverse-stepi under `bts replay` on the long trace: the first step (the
# stub opens the engine there) and each one after.  Reports numbers,
# asserts nothing (tests/test-recover.py asserts 0 wrong and the floors).
# Usage: recover-bench.py BUILD_DIR [RUNS] [ROUNDS]
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(SRC, "gdb", "bts.py")
STEPS = 200     # reverse-stepi timed on the long trace
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
import recovery  # noqa: E402  (tests/helpers/recovery.py)


def timed(cmd, runs):
    """(median wall seconds, peak RSS in MiB) of cmd over runs runs."""
    walls, rss = [], 0
    with tempfile.NamedTemporaryFile("r") as t:
        for _ in range(runs):
            t0 = time.monotonic()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            walls.append(time.monotonic() - t0)
            t.seek(0)
            rss = max(rss, int(t.read().split()[-1]))
    return statistics.median(walls), rss / 1024


def gdb_time(exe, core, btsdump, steps):
    """Seconds gdb -batch takes for `bts replay` and steps reverse-stepi;
    raises RuntimeError with gdb's last words if it fails."""
    cmd = ["gdb", "-batch", "-nx", "-iex", "source " + SCRIPT, "-ex",
           "set pagination off", exe, core, "-ex", "bts replay"]
    cmd += ["-ex", "reverse-stepi"] * steps
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, BTSDUMP=btsdump))
    if p.returncode:
        raise RuntimeError("gdb exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
    return time.monotonic() - t0


def bench(build, exe, args, label, runs, replay=False):
    btsdump = os.path.join(build, "tools", "btsdump")
    dump = os.path.join(build, "tests", "recover-dump")
    with tempfile.TemporaryDirectory() as tmp:
        core, recs = recovery.record(tmp, exe, args, "main")
        tid = [ln.split()[2] for ln in open(recs) if ln.startswith("# tid")][0]
        subprocess.run([btsdump, "add-note", "--tid", tid, core, recs], check=True,
                       capture_output=True)
        out = subprocess.run([dump, core, exe], capture_output=True, text=True,
                             check=True)
        c = recovery.compare(recovery.parse_truth(recs + ".regs"),
                             recovery.parse_engine(out.stdout)[1])
        rec_s, rec_mb = timed([btsdump, "regs", core, exe], runs)
        trail_s, _ = timed([btsdump, core, exe], runs)
        print("%-24s %7d %5d %6.1f %6.1f %8.3f %8.3f %6.2f %7.1f"
              % (label, c["compared"], len(c["wrong"]), 100 * c["share"],
                 100 * c["last"], rec_s, trail_s, rec_s / trail_s, rec_mb), flush=True)
        if replay:
            try:
                t0, t1, tk = (gdb_time(exe, core, btsdump, k) for k in (0, 1, STEPS))
            except RuntimeError as e:
                print("gdb reverse-stepi under bts replay (%s): failed: %s" % (label, e))
                return
            print("gdb under bts replay (%s): the first reverse-stepi %.2f s (the "
                  "engine opens), then %.1f ms a step (%d steps %.2f s, 1 step %.2f s, "
                  "none %.2f s)" % (label, t1 - t0, 1000 * (tk - t1) / (STEPS - 1),
                                    STEPS, tk, t1, t0))


def main():
    if len(sys.argv) < 2:
        print("usage: recover-bench.py BUILD_DIR [RUNS] [ROUNDS]", file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rounds = sys.argv[3] if len(sys.argv) > 3 else "1000"
    t = os.path.join(build, "tests")
    print("recover-bench: %s, %d CPUs, median of %d runs" %
          (time.strftime("%Y-%m-%d", time.gmtime()), os.cpu_count(), runs))
    print("%-24s %7s %5s %6s %6s %8s %8s %6s %7s"
          % ("program", "insns", "wrong", "gpr%", "last1k", "recov-s", "trail-s",
             "ratio", "rss-MB"))
    for name, opt in (("crasher", "-O0"), ("crasher-o2", "-O2")):
        for args in (["null"], ["abort"], ["rounds", "5"]):
            bench(build, os.path.join(t, name), args,
                  "crasher %s (%s)" % (" ".join(args), opt), runs)
    for o in ("0", "2"):
        for mode in ("uaf", "memcpy", "counter"):
            bench(build, os.path.join(t, "truth-o" + o), [mode],
                  "truth %s (-O%s)" % (mode, o), runs)
        bench(build, os.path.join(t, "truth-virt-o" + o), [],
              "truth-virt (-O%s)" % o, runs)
    bench(build, os.path.join(t, "crasher-o2"), ["rounds", rounds],
          "crasher rounds %s (-O2)" % rounds, runs, replay=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
