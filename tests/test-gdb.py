#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of gdb/bts.py: real gdb (-batch -nx) on the cores in
# tests/fixtures and on cores made here with `btsdump add-note` (markers,
# a wrapped ring, a thread without a trace, code that does not match):
# info bts, bts list / branch-history (numbering, ranges, paging, /r, /s,
# gdb's own symbols, separate debuginfo), bts function-call-history
# (/c /i /l), bts instruction-history (/m /r /f, paging) checked against
# the instructions gdb single-stepped when the fixtures were made
# (tests/fixtures/*.insns), thread apply all, the messages, a call to 0
# the trace lacks shown as btsdump inferred it, and the
# branches cross-checked against `btsdump --json`.
# Usage: test-gdb.py BTSDUMP.  TAP; exit 77 (skip) without gdb's Python.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import btsgdb
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap, skip_all  # noqa: E402

BTSDUMP = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
EXE = os.path.join(FIX, "crasher")
GDB = btsgdb.GDB if shutil.which("gdb") else None
NO_TRACE = btsgdb.NO_TRACE
T = Tap(detail_lines=200)
check = T.check


def fix(name):
    return os.path.join(FIX, name)


def gdb(core, *cmds, exe=EXE, env=None, status=None, pre=()):
    """gdb with gdb/bts.py on EXE and CORE: each command's output
    (btsgdb.run)."""
    return btsgdb.run(exe, core, cmds, BTSDUMP, pre=pre, env=env, status=status)


def btsdump_json(core):
    p = subprocess.run([BTSDUMP, "--json", "--calls", core, EXE],
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def lines(out):
    return [l for l in out.splitlines() if l.strip()]


def insn_fields(line):
    """(number, current, address, symbol, text) of a `bts
    instruction-history` line; None for others."""
    m = re.match(r"\s*(\d+)\t(=> |   )0x([0-9a-f]{16})(?: <([^>]*)>)?:\t(.*)$",
                 line)
    return m and (int(m[1]), m[2] == "=> ", int(m[3], 16), m[4], m[5])




def source_line(n):
    with open(os.path.join(SRC, "tests", "crasher.c")) as f:
        return f.read().splitlines()[n - 1]


def fixture_sources():
    """gdb commands that make it read tests/crasher.c of this checkout for
    the committed fixture: its DWARF names the file ../tests/crasher.c
    relative to the build directory it was compiled in (DW_AT_comp_dir),
    a path of one particular checkout.  Rewritten to this checkout's tests/
    (../tests/crasher.c then resolves inside it), whichever clone runs."""
    p = subprocess.run(["readelf", "--debug-dump=info", EXE],
                       capture_output=True, text=True, check=True)
    comp_dir = re.search(r"DW_AT_comp_dir\s*:.*?:\s*(\S+)\s*$", p.stdout, re.M)[1]
    return ["set substitute-path %s %s" % (comp_dir, os.path.join(SRC, "tests"))]


def null_call_line():
    """The line of tests/crasher.c with dispatch()'s call through NULL."""
    with open(os.path.join(SRC, "tests", "crasher.c")) as f:
        return [i for i, l in enumerate(f, 1) if "call through NULL" in l][0]


def branch_fields(line):
    """(number, kind, from, to) of a `bts list` line; None for others."""
    m = re.match(r"\s*(\d+)\s+(\w+)\*?\s+0x([0-9a-f]{16})\s.*=> 0x([0-9a-f]{16})",
                 line)
    return m and (int(m[1]), m[2], int(m[3], 16), int(m[4], 16))


def branch_lines(out):
    """The branch lines of `bts list` output (not its fault line)."""
    return [l for l in lines(out) if branch_fields(l)]


def fault_line(out):
    """The fault line `bts list` ends with when it shows the newest branch."""
    fl = [l.strip() for l in lines(out) if l.strip().startswith("faulted at ")]
    return fl[-1] if fl else None


def btsdump_fault(core):
    """btsdump's own fault line (its text report) for the faulting thread."""
    p = subprocess.run([BTSDUMP, core, EXE], capture_output=True, text=True)
    fl = [l.strip() for l in p.stdout.splitlines() if l.strip().startswith("faulted at ")]
    return fl[0] if fl else None


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
    l3 = branch_lines(last3)
    f = [branch_fields(l) for l in l3]
    check(len(l3) == 3 and len(lines(last3)) == 4 and
          [x and x[0] for x in f] == [n - 2, n - 1, n],
          "bts list 3: the newest three, numbered like btsdump, then the fault line",
          last3)
    check(f[-1] and f[-1][1] == "call" and f[-1][3] == 0 and
          re.match(r"\s*\d+  call\* ", l3[-1])
          and re.search(r"<dispatch\+\d+>\s+=> 0x0{16}$", l3[-1]),
          "bts list 3 ends with the indirect call (call*) from dispatch to 0x0", last3)
    check(fault_line(last3) == "faulted at 0x0 = target of #%d (indirect call in dispatch)"
          % n == btsdump_fault(core),
          "bts list: the fault tied to the trail, as btsdump says it", last3)
    got = [(len(m[1]) // 2, m[2]) for m in
           (re.match(r"\d+\t( *)(\S+)", l) for l in lines(calls)) if m]
    check(got == [(0, "main"), (1, "serve"), (2, "parse_request"),
                  (3, "checksum"), (2, "parse_request"), (3, "dispatch"),
                  (4, "??")],
          "function-call-history /c: main -> ... -> dispatch, indented", calls)
    nums = [[branch_fields(l)[0] for l in branch_lines(o)] for o in (plain, again)]
    check(nums == [list(range(n - 9, n + 1)), list(range(1, n - 9))],
          "bts list pages back when repeated", "%s\n%s" % (plain, again))
    check(start == "bts: at the start of the branch trace",
          "bts list at the start says so", start)
    check(re.fullmatch(r"%d  call\* +0x[0-9a-f]{16} => 0x0{16}" % n, lines(raw)[0]),
          "bts list /r 1: the newest branch, addresses only", raw)
    check(branch_fields(alone) and branch_fields(alone)[0] == n,
          "bts alone is bts list", alone)


def test_threads():
    core = fix("crasher-threads.core")
    want = {t["tid"]: t for t in btsdump_json(core)["threads"]}
    worker = next(t for t in want.values() if t["faulting"])
    out, = gdb(core, "thread apply all bts list 2")
    got = btsgdb.by_thread(out)
    got = {tid: [l for l in ls if branch_fields(l)] for tid, ls in got.items()}
    check(sorted(got) == sorted(want) and all(len(v) == 2 for v in got.values()),
          "thread apply all bts list 2: two branches of each thread", out)
    last = branch_fields(([l for l in got.get(worker["tid"], []) if branch_fields(l)]
                          or [""])[-1])
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
            got = {tid: [branch_fields(l) for l in ls if branch_fields(l)]
                   for tid, ls in btsgdb.by_thread(text).items()}
            exp = {t["tid"]: [(b["number"], b["kind"], int(b["from"], 16),
                               int(b["to"], 16)) for b in t["branches"]][-100:]
                   for t in want["threads"]}
            check(got == exp, "%s: %s equals btsdump --json" % (name, what),
                  "got %s\nwant %s" % (got, exp))


def test_symbols():
    """bts list's symbols are gdb's (as `x/i` prints them: full symbols
    before minimal ones, so glibc's __GI_abort where `info symbol` says
    abort), and name the same functions btsdump's do in the executable;
    `bts branch-history` is `bts list`."""
    core = fix("crasher-abort.core")
    want = btsdump_json(core)["threads"][0]["branches"]
    out, alias = gdb(core, "bts list 100", "bts branch-history 100")
    check(out == alias and len(branch_lines(out)) == len(want),
          "bts branch-history is bts list", alias)
    ls = lines(out)
    addrs = []
    for l in ls:
        m = re.search(r"0x([0-9a-f]{16}) <([^>]+)>\s+=> 0x([0-9a-f]{16})(?: <([^>]+)>)?",
                      l)
        if m:
            addrs += [(int(m[1], 16), m[2]), (int(m[3], 16), m[4])]
    cmds = ["x/i 0x%x" % a for a, _ in addrs]
    infos = gdb(core, *cmds)
    bad = []
    for (a, sym), info in zip(addrs, infos):
        m = re.search(r"0x[0-9a-f]+(?: <([^>]+)>)?:", info)
        if not m or m[1] != sym:
            bad.append("0x%x: bts list %s, x/i %s" % (a, sym, info))
    check(addrs and not bad, "every symbol bts list prints is gdb's (x/i; "
          "%d addresses, libc included)" % len(addrs), "\n".join(bad))
    names = [(re.sub(r"\+\d+$", "", sym or ""),
              re.sub(r"\+0x[0-9a-f]+$", "", b.get("from_symbol") or ""))
             for (_, sym), b in zip(addrs[0::2], want)
             if b.get("from_module") == "crasher"]
    check(len(names) > 3 and all(g == w for g, w in names),
          "in the executable, gdb and btsdump name the same functions", names)


def test_separate_debuginfo(tmp):
    """A stripped executable with its debuginfo in a separate file (gnu
    debuglink): gdb finds it, so bts list /s and instruction-history /m
    show source lines although btsdump, given only the stripped file,
    knows no line."""
    d = os.path.join(tmp, "debuglink")
    os.mkdir(d)
    exe = os.path.join(d, "crasher")
    # where only gdb looks: DEBUG-FILE-DIRECTORY/EXE's DIRECTORY/DEBUGLINK
    root = os.path.join(tmp, "debugroot")
    os.makedirs(root + d)
    dbg = os.path.join(root + d, "crasher.debug")
    subprocess.run(["objcopy", "--only-keep-debug", EXE, dbg], check=True)
    subprocess.run(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + dbg,
                    EXE, exe], check=True)
    core = fix("crasher-null.core")
    p = subprocess.run([BTSDUMP, "--json", core, exe], capture_output=True,
                       text=True)
    last = json.loads(p.stdout)["threads"][0]["branches"][-2]
    lst, insns = gdb(core, "bts list /s 2", "bts instruction-history /m 3",
                     exe=exe, pre=["set debug-file-directory " + root] + fixture_sources())
    want = null_call_line()
    check(last.get("from_line") is None and
          "[../tests/crasher.c:%d -> ?]" % want in lst,
          "separate debuginfo: gdb's source lines where btsdump has none",
          "%s\n%s" % (last, lst))
    check(re.search(r"^%d\t.*call through NULL" % want, insns, re.M),
          "separate debuginfo: instruction-history /m shows the source", insns)


def check_history(name, out, want, note_ok=()):
    """OUT, `thread apply all bts instruction-history 1,1000000`, against
    the single-stepped truth WANT {tid: [pc]}: each thread's numbered
    instructions are the truth's last ones, numbered from 1, the last one
    marked as the pc; -- lines only those NOTE_OK allows."""
    got = btsgdb.by_thread(out)
    check(sorted(got) == sorted(want), "%s: every thread has a history" % name,
          out[-1500:])
    for tid, ls in got.items():
        f = [insn_fields(l) for l in ls]
        notes = [l.strip() for l, x in zip(ls, f) if not x]
        f = [x for x in f if x]
        pcs = [x[2] for x in f]
        t = want.get(tid, [])
        if notes and all(any(n.startswith(ok) for ok in note_ok) for n in notes):
            pcs = pcs[:-1]          # the pc after the untraced stretch
        check(f and [x[0] for x in f] == list(range(1, len(f) + 1)) and
              [x[1] for x in f] == [False] * (len(f) - 1) + [True],
              "%s LWP %d: instructions numbered 1..%d, the last is the pc"
              % (name, tid, len(f)), "\n".join(ls[-5:]))
        check(pcs and len(pcs) <= len(t) and t[-len(pcs):] == pcs and
              all(any(n.startswith(ok) for ok in note_ok) for n in notes),
              "%s LWP %d: the %d instructions are the ones gdb single-stepped"
              % (name, tid, len(pcs)),
              "notes %s\ngot  %s\nwant %s" % (notes, [hex(x) for x in pcs[-8:]],
                                              [hex(x) for x in t[-8:]]))


def test_instruction_history():
    for name in ("null", "smash", "threads"):
        core = fix("crasher-%s.core" % name)
        out, = gdb(core, "thread apply all bts instruction-history 1,1000000")
        check_history(name, out, btsgdb.truth("crasher-" + name),
                      ["-- no trace from here to the thread's pc"])
    core = fix("crasher-null.core")
    want = btsdump_json(core)["threads"][0]
    n = len(want["branches"])
    calls, all_, paged, back, fwd = gdb(
        core, "bts function-call-history /ci 100",
        "bts instruction-history 1,1000000", "bts instruction-history",
        "bts instruction-history", "bts instruction-history +")
    f = [insn_fields(l) for l in lines(all_)]
    total = len(f)
    by_addr = {}
    for x in f:
        by_addr.setdefault(x[2], x)
    kinds = {"call": "call", "return": "ret", "jump": "jmp", "cond": "j"}
    bad = [(b["number"], b["kind"], by_addr.get(int(b["from"], 16)))
           for b in want["branches"]
           if not (by_addr.get(int(b["from"], 16)) and
                   by_addr[int(b["from"], 16)][4].startswith(kinds[b["kind"]]))]
    check(not bad, "every branch of btsdump's is an instruction of its kind "
          "in gdb's disassembly (%d branches)" % n, bad)
    check(f[-1][1:] == (True, 0, None, "<Cannot access memory at address 0x0>")
          and f[-2][3].startswith("dispatch+") and f[-2][4].startswith("call"),
          "instruction-history ends: dispatch's call, then => 0x0 unreadable",
          "\n".join(lines(all_)[-2:]))
    got = [x and x[0] for x in map(insn_fields, lines(paged) + lines(back))]
    check(got == list(range(total - 9, total + 1)) +
          list(range(total - 19, total - 9)),
          "instruction-history: the newest ten, repeated the ten before",
          paged + "\n" + back)
    got = [x and x[0] for x in map(insn_fields, lines(fwd))]
    check(got == list(range(total - 9, total + 1)),
          "instruction-history +: the ten after", fwd)
    segs = [re.match(r"\s*(\d+)\t( *)(\S+)\tinst (\d+),(\d+)$", l)
            for l in lines(calls)]
    rng = [(int(m[4]), int(m[5])) for m in segs if m]
    check(all(segs) and rng[0][0] == 1 and rng[-1][1] == total and
          all(a[1] + 1 == b[0] for a, b in zip(rng, rng[1:])),
          "function-call-history /i: inst ranges follow each other, 1..%d"
          % total, calls)
    check(all(in_function(f, int(m[4]), int(m[5]), m[3]) for m in segs[:-1] if m),
          "function-call-history /i: each range's instructions are in its "
          "function", calls)
    ln, = gdb(core, "bts function-call-history /l 2")
    m = re.search(r"dispatch\tat \.\./tests/crasher\.c:(\d+),(\d+)$", ln, re.M)
    want_line = null_call_line()
    # the prologue is on the line of its `{`, right after the definition
    check(m and int(m[2]) == want_line and
          "dispatch(int kind)" in source_line(int(m[1]) - 1),
          "function-call-history /l: dispatch's lines, up to the NULL call", ln)


def in_function(f, first, last, fn):
    """Whether instructions FIRST..LAST of the insn_fields() list F all
    print as being in function FN."""
    return all(x[3] and x[3].split("+")[0] == fn for x in f[first - 1:last])


def test_instruction_modifiers():
    core = fix("crasher-null.core")
    m, r, nofn = gdb(core, "bts instruction-history /m 6",
                     "bts instruction-history /r 3",
                     "bts instruction-history /f 2",
                     pre=fixture_sources())
    src = [l for l in lines(m) if not insn_fields(l)]
    check(src and all(re.match(r"(\d+)\t", l) and
                      l.split("\t", 1)[1] == source_line(int(l.split("\t")[0]))
                      for l in src) and any("call through NULL" in l for l in src),
          "/m: source lines of tests/crasher.c between the instructions", m)
    raw = [re.match(r".*>:\t((?:[0-9a-f]{2} ?)+)\t", l) for l in lines(r)[:-1]]
    f = [insn_fields(l) for l in lines(r)]
    check(all(raw) and all(len(x[1].split()) == b[2] - a[2] for x, a, b in
                           zip(raw[:-1], f, f[1:])) and
          raw[-1][1].split() == ["ff", "d2"],
          "/r: the raw bytes of each instruction (call *%rdx: ff d2)", r)
    check(all(insn_fields(l) and insn_fields(l)[3] is None for l in lines(nofn)),
          "/f: no function names", nofn)
    out, = gdb(core, "set record instruction-history-size 3",
               "bts instruction-history")[1:]
    check(len(lines(out)) == 3, "record instruction-history-size is honored",
          out)


def test_smash():
    core = fix("crasher-smash.core")
    bt, lst, ins, calls = gdb(core, "bt", "bts list 1", "bts instruction-history 2",
                              "bts function-call-history /c 2")
    check("0x0000414141414141" in bt and "smash_victim" not in bt,
          "smash: gdb's bt is garbage (no smash_victim)", bt)
    f = branch_fields(lst)
    check(f and f[1] == "return" and f[3] == 0x414141414141 and
          "<smash_victim+" in lst and
          branch_lines(lst)[0].endswith("<- smashed stack? no call returns here"),
          "smash: bts list shows smash_victim's ret to 0x414141414141, flagged "
          "as a probable smashed stack", lst)
    check(fault_line(lst) and fault_line(lst) == btsdump_fault(core) and
          fault_line(lst).startswith("faulted at 0x414141414141 = target of #"),
          "smash: the fault line: the pc is the smashed ret's target", lst)
    x = [insn_fields(l) for l in lines(ins)]
    check(len(x) == 2 and x[0][3].startswith("smash_victim+") and
          x[0][4] == "ret" and x[1][1:3] == (True, 0x414141414141) and
          "Cannot access memory" in x[1][4],
          "smash: instruction-history: ret, then => the garbage address", ins)
    check(re.search(r"^\d+\t +smash_victim\n\d+\t *\?\?$", calls, re.M),
          "smash: function-call-history ends in smash_victim, then ??", calls)


def test_threads_history():
    core = fix("crasher-threads.core")
    want = {t["tid"]: t for t in btsdump_json(core)["threads"]}
    worker = next(t for t in want.values() if t["faulting"])["tid"]
    t1, t2, sel = gdb(core, "bts instruction-history 1", "thread 2",
                      "bts instruction-history 3")
    check(insn_fields(t1) and insn_fields(t1)[2] == 0,
          "threads: thread 1 (the worker) ends at 0x0", t1)
    ls = lines(sel)
    check(len(ls) == 4 and "pthread_create@plt" in ls[1] and
          ls[2].strip().startswith("-- no trace from here to the thread's pc")
          and insn_fields(ls[3])[1] and "LWP %d" % worker not in t2,
          "threads: thread 2 (main): the call into pthread_create@plt, "
          "then its pc", sel)


def test_errors(tmp):
    st = []
    outs = gdb(fix("crasher-notrace.core"), "bts list", "bts branch-history",
               "bts function-call-history", "bts instruction-history",
               "info bts", status=st)
    check(outs == [NO_TRACE] * 5 and st == [0],
          "a core without trace: every command says so, the batch session "
          "exits 0", "%s exit %s" % (outs, st))
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


def test_path_bytes(tmp):
    """A core whose file name is not UTF-8 and holds an ESC: read by every
    command, shown as lib/escape.c shows it (docs/btsdump.md)."""
    raw = os.path.join(os.fsencode(tmp), b"caf\xe9\x1b[7m.core")
    shutil.copy(fix("crasher-null.core"), raw)
    core = os.fsdecode(raw)
    shown = os.fsencode(tmp).decode() + "/caf\\xe9\\x1b[7m.core"
    outs = gdb(core, "info bts", "bts list 1", "bts target", "info record")
    info, lst, _, rec = outs
    check(info.startswith("Branch trace of %s (decoded by " % shown),
          "info bts: a non-UTF-8 core path with an ESC, escaped", info)
    check("dispatch+51" in lst and "Recorded 139 instructions" in rec,
          "bts list and bts target on a non-UTF-8 core path", "\n".join(outs))
    check(not any("\x1b" in o or "\udce9" in o for o in outs),
          "no raw ESC or non-UTF-8 byte of the path reaches the terminal",
          "\n".join(map(ascii, outs)))
    esc = os.path.join(tmp, "\x1b[2J.core")      # valid UTF-8, an ESC
    shutil.copy(fix("crasher-null.core"), esc)
    info, = gdb(esc, "info bts")
    check(info.startswith("Branch trace of %s/\\x1b[2J.core (" % tmp)
          and "\x1b" not in info, "info bts: an ESC in the core's name, escaped",
          ascii(info))
    # the same rules as lib/escape.c: what btsdump says of a missing path
    odd = os.path.join(os.fsencode(tmp), b"a\\b\xc2\x85c\xe2\x82(\xed\xa0\x80"
                       b"\x7f\xf0\x9f\x98\x80\x1b\xff\n.core")
    err = subprocess.run([BTSDUMP, odd], capture_output=True).stderr.decode()
    want = err[len("btsdump: "):err.index(": No such file")]
    got, = gdb(None, "python print(_bts_escape(bytes.fromhex('%s')))" % odd.hex())
    check(got == want, "_bts_escape escapes as btsdump does", "%r\n%r" % (got, want))


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
    check(len(ls) == 8 and "older branches are gone (7 lost, the ring wrapped)"
          in ls[0] and ls[-1].strip().startswith("faulted at 0x0 = target of #6"),
          "a wrapped ring says older branches are gone; the fault line last", out)
    check(ls[3:6] == ["3  -- switch-out cpu 1 at 1.000000000s --",
                      "4  -- switch-in cpu 0 at 1.000200000s --",
                      "5  -- gap (perf), resumed at 2.000000000s after 5000 ns --"],
          "markers print as -- ... -- lines", out)
    check(re.search(r"^\* 1 +\d+ +SIGSEGV +emulation +6 +4096 +yes +7 +1$",
                    info, re.M), "info bts: wrapped, lost, the gap counted", info)
    hist, = gdb(core, "bts instruction-history 1,1000")
    notes = [l.strip() for l in lines(hist) if not insn_fields(l)]
    f = [insn_fields(l) for l in lines(hist) if insn_fields(l)]
    check(notes == ["-- older instructions are gone (7 branches lost, the ring "
                    "wrapped) --",
                    "-- switch-out cpu 1 at 1.000000000s --",
                    "-- switch-in cpu 0 at 1.000200000s --",
                    "-- gap (perf), resumed at 2.000000000s after 5000 ns --"],
          "instruction-history: the wrapped ring, switches and the gap as -- lines",
          hist)
    after_gap = ([i for i, l in enumerate(lines(hist))
                  if l.strip().startswith("-- gap")] or [-1])[0]
    nxt = [insn_fields(l) for l in lines(hist)[after_gap + 1:]]
    check(after_gap > 0 and len(nxt) == 2 and nxt[0][4] == "call   *%rdx" and
          nxt[1][1:3] == (True, 0),
          "instruction-history: after the gap it starts again at the next "
          "branch (dispatch's call), then the pc", hist)
    core = add_note(tmp, "nopath", recs[:1] + recs[6:8])
    hist, = gdb(core, "bts instruction-history 1,1000")
    bad = [l.strip() for l in lines(hist) if not insn_fields(l)]
    check(len(bad) == 2 and "does not lead to the branch" in bad[0] and
          bad[1] == "-- no trace from here to the thread's pc 0x0 --",
          "instruction-history: branches the code cannot connect say so, "
          "and so does a pc the last branch does not lead to", hist)
    diff, = gdb(fix("crasher-null.core"), "python "
                "t = {'trace': {'wrapped': False, 'lost': 0, 'lost_exact': True}, "
                "'branches': [{'number': 1, 'kind': 'return', 'from': hex(gdb."
                "parse_and_eval('&dispatch')), 'to': '0x0'}]}; "
                "h = _bts_rebuild(t, gdb.selected_inferior().architecture(), 0); "
                "print(h.broken, h.notes)")
    check(diff.startswith("1 {1: ['-- branch 1 is a return, but the code at ")
          and "`push   %rbp`: it differs from the traced (" in diff,
          "a branch whose instruction is not of its kind: the code differs", diff)
    core = add_note(tmp, "other", recs[-2:], "-t", "9999")
    info, out = gdb(core, "info bts", "bts list")
    check(re.search(r"^\* 1 +\d+ +SIGSEGV +none", info, re.M)
          and re.search(r"^ +- +9999 +- +emulation +2 ", info, re.M),
          "info bts: a thread without trace, a trace without thread", info)
    check(re.fullmatch(r"bts: thread 1 \(LWP \d+\) has no branch trace in this "
                       r"core", out), "a thread without trace: the error", out)


def test_inferred(tmp):
    """The call to 0 dropped from the note (perf's LBR filter), inferred
    from the core by btsdump: bts list and instruction-history mark it
    inferred and go on to the pc, with no gap before it."""
    with open(fix("crasher-null.records")) as f:
        recs = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    core = add_note(tmp, "dropped", recs[:-1], "-s", "lbr", "--capacity", "32")
    n = len(recs)
    out, hist, raw = gdb(core, "bts list 2", "bts instruction-history 1,1000",
                         "bts list /r 1")
    check(branch_lines(raw)[-1:] and branch_lines(raw)[-1].endswith(
          "=> 0x%016x  (inferred: call not recorded)" % 0),
          "bts list /r: the inferred call marked too", raw)
    ls = branch_lines(out)
    check(len(ls) == 2 and branch_fields(ls[-1])[0] == n and
          ls[-1].endswith("=> 0x%016x  (inferred: call not recorded)" % 0) and
          "inferred" not in ls[0],
          "bts list: the newest branch, the call to 0, marked inferred", out)
    check(fault_line(out) == "faulted at 0x0 = target of #%d (indirect call in "
          "dispatch, inferred)" % n == btsdump_fault(core),
          "bts list: the fault tied to the inferred call, as btsdump says it", out)
    ls = lines(hist)
    check(len(ls) > 3 and insn_fields(ls[-3])[4].startswith("call") and
          ls[-2].strip() == "-- branch %d inferred from the core: the call was "
          "not recorded --" % n and insn_fields(ls[-1])[1:3] == (True, 0) and
          not any("no trace from here" in l for l in ls),
          "instruction-history: dispatch's call, the inferred note, => 0x0",
          "\n".join(ls[-4:]))


def main():
    if not GDB or subprocess.run([GDB, "-batch", "-nx", "-ex", "python 1"],
                                 capture_output=True).returncode:
        skip_all("gdb with Python not found")
    with tempfile.TemporaryDirectory() as tmp:
        test_null()
        test_threads()
        test_cross_check()
        test_symbols()
        test_separate_debuginfo(tmp)
        test_instruction_history()
        test_instruction_modifiers()
        test_smash()
        test_threads_history()
        test_errors(tmp)
        test_path_bytes(tmp)
        test_made_cores(tmp)
        test_inferred(tmp)
    return T.done()


sys.exit(main())
