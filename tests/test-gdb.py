#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of gdb/bts.py: real gdb (-batch -nx) on the cores in
# tests/fixtures and on cores made here with `btsdump add-note` (markers,
# a wrapped ring, a thread without a trace): info bts, bts list (numbering,
# ranges, paging, /r), bts function-call-history /c, thread apply all, the
# error messages, and the branches cross-checked against `btsdump --json`.
# Usage: test-gdb.py BTSDUMP.  TAP; exit 77 (skip) without gdb's Python.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BTSDUMP = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
EXE = os.path.join(FIX, "crasher")
SCRIPT = os.path.join(SRC, "gdb", "bts.py")
GDB = shutil.which("gdb")
MARK = "@@bts-test@@"
NO_TRACE = ("bts: this core has no branch trace (the process was not traced, "
            "or its kernel lacks btscrash)")
results = []


def check(cond, what, detail=""):
    results.append(bool(cond))
    print("%s %d - %s" % ("ok" if cond else "not ok", len(results), what))
    if not cond and detail:
        for line in str(detail).splitlines():
            print("# " + line)


def fix(name):
    return os.path.join(FIX, name)


def gdb(core, *cmds, exe=EXE, env=None):
    """Runs gdb on EXE and CORE; returns each command's output (stdout and
    stderr together), split at markers echoed between the commands."""
    args = [GDB, "-batch", "-nx", "-iex", "source " + SCRIPT]
    args += [exe] if exe else []
    args += ["-c", core] if core else []
    args += ["-ex", "echo %s\\n" % MARK]
    for c in cmds:
        args += ["-ex", c, "-ex", "echo %s\\n" % MARK]
    e = dict(os.environ, BTSDUMP=BTSDUMP, LC_ALL="C", TERM="dumb")
    e.update(env or {})
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=e, cwd=SRC, stdin=subprocess.DEVNULL)
    parts = p.stdout.split(MARK + "\n")
    return [s.rstrip("\n") for s in parts[1:1 + len(cmds)]] + \
        [""] * (len(cmds) + 1 - len(parts))


def btsdump_json(core):
    p = subprocess.run([BTSDUMP, "--json", "--calls", core, EXE],
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def lines(out):
    return [l for l in out.splitlines() if l.strip()]


def branch_fields(line):
    """(number, kind, from, to) of a `bts list` line; None for others."""
    m = re.match(r"\s*(\d+)\s+(\w+)\s+0x([0-9a-f]{16})\s.*=> 0x([0-9a-f]{16})",
                 line)
    return m and (int(m[1]), m[2], int(m[3], 16), int(m[4], 16))


def by_thread(out):
    """thread apply all output: {LWP: [lines]}."""
    res, cur = {}, None
    for l in out.splitlines():
        m = re.match(r"Thread \d+ \(.*LWP (\d+)\)\):", l)
        if m:
            cur = res.setdefault(int(m[1]), [])
        elif cur is not None and l.strip():
            cur.append(l)
    return res


def test_null():
    core = fix("crasher-null.core")
    want = btsdump_json(core)["threads"][0]
    n = len(want["branches"])
    info, last3, calls, plain, again, start, raw, alone = gdb(
        core, "info bts", "bts list 3", "bts function-call-history /c",
        "bts list", "bts list", "bts list", "bts list /r 1", "bts 1")
    row = [l for l in lines(info) if l.startswith("*")]
    check(row and row[0].split()[1:5] == ["1", str(want["tid"]), "SIGSEGV",
                                          "emulation"]
          and row[0].split()[5:7] == [str(n), "4096"],
          "info bts lists the faulting thread", info)
    l3 = lines(last3)
    f = [branch_fields(l) for l in l3]
    check(len(l3) == 3 and [x and x[0] for x in f] == [n - 2, n - 1, n],
          "bts list 3: the newest three, numbered like btsdump", last3)
    check(f[-1] and f[-1][1] == "call" and f[-1][3] == 0
          and re.search(r"dispatch\+0x[0-9a-f]+\s+=> 0x0{16} \?\?$", l3[-1]),
          "bts list 3 ends with the call from dispatch to 0x0", last3)
    got = [(len(m[1]) // 2, m[2]) for m in
           (re.match(r"\d+\t( *)(\S+)", l) for l in lines(calls)) if m]
    check(got == [(0, "main"), (1, "serve"), (2, "parse_request"),
                  (3, "checksum"), (2, "parse_request"), (3, "dispatch"),
                  (4, "0x0")],
          "function-call-history /c: main -> ... -> dispatch, indented", calls)
    nums = [[branch_fields(l)[0] for l in lines(o)] for o in (plain, again)]
    check(nums == [list(range(n - 9, n + 1)), list(range(1, n - 9))],
          "bts list pages back when repeated", "%s\n%s" % (plain, again))
    check(start == "bts: at the start of the branch trace",
          "bts list at the start says so", start)
    check(re.fullmatch(r"%d  call +0x[0-9a-f]{16} => 0x0{16}" % n, raw),
          "bts list /r 1: the newest branch, addresses only", raw)
    check(branch_fields(alone) and branch_fields(alone)[0] == n,
          "bts alone is bts list", alone)


def test_threads():
    core = fix("crasher-threads.core")
    want = {t["tid"]: t for t in btsdump_json(core)["threads"]}
    worker = next(t for t in want.values() if t["faulting"])
    out, = gdb(core, "thread apply all bts list 2")
    got = by_thread(out)
    check(sorted(got) == sorted(want) and all(len(v) == 2 for v in got.values()),
          "thread apply all bts list 2: two branches of each thread", out)
    last = branch_fields((got.get(worker["tid"]) or [""])[-1])
    check(last and last[3] == 0 and last[0] == len(worker["branches"]),
          "the worker's last branch targets 0", out)
    main = [t for t in want.values() if not t["faulting"]][0]
    check(got.get(main["tid"]) and "pthread_create@plt" in got[main["tid"]][-1],
          "the main thread's trail ends at pthread_create", out)


def test_cross_check():
    """Every branch gdb shows is btsdump's: numbers, kinds, from, to."""
    for name in ("null", "smash", "abort", "threads"):
        core = fix("crasher-%s.core" % name)
        want = btsdump_json(core)
        out, raw = gdb(core, "thread apply all bts list 100",
                       "thread apply all bts list /r 100")
        for text, what in ((out, "bts list 100"), (raw, "bts list /r 100")):
            got = {tid: [branch_fields(l) for l in ls]
                   for tid, ls in by_thread(text).items()}
            exp = {t["tid"]: [(b["index"] + 1, b["kind"], int(b["from"], 16),
                               int(b["to"], 16)) for b in t["branches"]][-100:]
                   for t in want["threads"]}
            check(got == exp, "%s: %s equals btsdump --json" % (name, what),
                  "got %s\nwant %s" % (got, exp))


def test_errors(tmp):
    out, = gdb(fix("crasher-notrace.core"), "bts list")
    check(out == NO_TRACE, "a core without trace: the clear error", out)
    a, b = gdb(None, "info bts", "bts list")
    check(a == b == "bts: no core file loaded", "no core: the clear error",
          a + "\n" + b)
    empty = os.path.join(tmp, "empty-path")
    os.mkdir(empty)
    out, = gdb(fix("crasher-null.core"), "info bts",
               env={"BTSDUMP": "/nonexistent/btsdump", "PATH": empty})
    check(out.startswith("bts: btsdump not found (tried $BTSDUMP=/nonexistent/"
                         "btsdump, btsdump in PATH)"),
          "btsdump missing: says which paths were tried", out)
    fake = os.path.join(tmp, "btsdump-fails")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho 'btsdump: something broke' >&2\nexit 2\n")
    os.chmod(fake, 0o755)
    out, = gdb(fix("crasher-null.core"), "bts list", env={"BTSDUMP": fake})
    check(out == "bts: %s cannot read the core: btsdump: something broke" % fake,
          "btsdump failing: its stderr", out)
    a, b, c = gdb(fix("crasher-null.core"), "bts list 0", "bts list 3,1",
                  "bts list /x")
    check(a.startswith("bts: ") and b.startswith("bts: ")
          and c.startswith("bts: invalid modifier"), "bad arguments", a + b + c)


def add_note(tmp, name, records, *opts):
    rec = os.path.join(tmp, name + ".records")
    with open(rec, "w") as f:
        f.write("\n".join(records) + "\n")
    core = os.path.join(tmp, name + ".core")
    subprocess.run([BTSDUMP, "add-note", *opts, "-o", core,
                    fix("crasher-notrace.core"), rec], check=True)
    return core


def test_made_cores(tmp):
    with open(fix("crasher-null.records")) as f:
        recs = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    core = add_note(tmp, "markers", recs[:2] + [
        "switch-out 1000000000 1", "switch-in 1000200000 0",
        "gap 1 2000000000 5000"] + recs[-1:], "-w", "-l", "7")
    info, out = gdb(core, "info bts", "bts list")
    ls = lines(out)
    check(len(ls) == 7 and "older branches are gone (7 lost, the ring wrapped)"
          in ls[0], "a wrapped ring says older branches are gone", out)
    check(ls[3:6] == ["3  -- switch-out cpu 1 at 1.000000000s --",
                      "4  -- switch-in cpu 0 at 1.000200000s --",
                      "5  -- gap (perf), resumed at 2.000000000s after 5000 ns --"],
          "markers print as -- ... -- lines", out)
    check(re.search(r"^\* 1 +\d+ +SIGSEGV +emulation +6 +4096 +yes +7 +0$",
                    info, re.M), "info bts: wrapped, lost", info)
    core = add_note(tmp, "other", recs[-2:], "-t", "9999")
    info, out = gdb(core, "info bts", "bts list")
    check(re.search(r"^\* 1 +\d+ +SIGSEGV +none", info, re.M)
          and re.search(r"^ +- +9999 +- +emulation +2 ", info, re.M),
          "info bts: a thread without trace, a trace without thread", info)
    check(re.fullmatch(r"bts: thread 1 \(LWP \d+\) has no branch trace in this "
                       r"core", out), "a thread without trace: the error", out)


def main():
    if not GDB or subprocess.run([GDB, "-batch", "-nx", "-ex", "python 1"],
                                 capture_output=True).returncode:
        print("1..0 # SKIP gdb with Python not found")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        test_null()
        test_threads()
        test_cross_check()
        test_errors(tmp)
        test_made_cores(tmp)
    print("1..%d" % len(results))
    return 0 if all(results) else 1


sys.exit(main())
