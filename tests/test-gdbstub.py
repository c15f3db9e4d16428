#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of `btsdump gdbserver` (lib/gdbstub.c): real gdb (batch,
# then MI) through the stub on the cores in tests/fixtures and on cores
# made here with `btsdump add-note`: gdb's own `record
# instruction-history` equals the instructions single-stepped when the
# fixtures were made (tests/fixtures/*.insns), `record
# function-call-history` equals btsdump's call history (functions, depth,
# order), `record goto` lands on btsdump's branches, `reverse-stepi` walks
# back to the first instruction, `bt` while replaying has btsdump's depth,
# a gap marker is a gap, hostile cores and packets get clear errors.
# Usage: test-gdbstub.py BTSDUMP.  TAP; exit 77 (skip) without gdb.
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile

BTSDUMP = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
from tap import Tap, skip_all  # noqa: E402
import btsgdb  # noqa: E402  (tests/btsgdb.py: shared with test-gdb.py)
EXE = os.path.join(FIX, "crasher")
GDB = shutil.which("gdb")
MARK = "@@stub-test@@"
T = Tap(detail_lines=60)
check = T.check


def fix(name):
    return os.path.join(FIX, name)


def gdb(core, cmds, exe=EXE, status=None):
    """gdb -batch connected to the stub on CORE: each command's output."""
    args = [GDB, "-batch", "-nx", "-iex", "set pagination off",
            "-iex", "set record instruction-history-size unlimited",
            "-iex", "set record function-call-history-size unlimited",
            "-ex", "target remote | %s gdbserver %s %s" % (BTSDUMP, core, exe),
            "-ex", "record btrace bts", "-ex", "echo %s\\n" % MARK]
    for c in cmds:
        args += ["-ex", c, "-ex", "echo %s\\n" % MARK]
    args += [exe]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=dict(os.environ, LC_ALL="C", TERM="dumb"),
                       stdin=subprocess.DEVNULL, timeout=300)
    if status is not None:
        status.append(p.returncode)
    parts = p.stdout.split(MARK + "\n")
    return ([s.rstrip("\n") for s in parts[1:1 + len(cmds)]] +
            [""] * (len(cmds) + 1 - len(parts)), parts[0])




def btsdump_json(core):
    p = subprocess.run([BTSDUMP, "--json", "--calls", core, EXE],
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def threads_of(name):
    doc = btsdump_json(fix(name + ".core"))
    return doc, {t["tid"]: t for t in doc["threads"]}


history, calls, expected = btsgdb.history, btsgdb.calls, btsgdb.expected
norm, known_calls, relative = btsgdb.norm, btsgdb.known_calls, btsgdb.relative


def test_histories(name):
    """Per thread: instruction history = truth, call history = btsdump."""
    doc, by_tid = threads_of(name)
    tr = btsgdb.truth(name)
    for i, t in enumerate(doc["threads"]):
        if not t["branches"]:
            continue
        out, _ = gdb(fix(name + ".core"),
                     ["thread %d" % (i + 1), "record instruction-history",
                      "record function-call-history /c", "info record"])
        got = history(out[1])
        if t["tid"] in tr:
            want = expected(tr[t["tid"]], t["branches"])
            # a thread whose recording stopped before it did ends in a gap
            if not t["faulting"] and "gaps)" in out[3] and "(0 gaps)" not in out[3]:
                want = want[:len(got)]
            check(got == want, "%s thread %d: instruction-history = the %d "
                  "single-stepped instructions" % (name, t["tid"], len(want)),
                  "got %d, want %d\n%s" % (len(got), len(want), out[1]))
        want_calls = known_calls(t)
        got_calls = [(d, norm(f)) for d, f in calls(out[2]) if not f.startswith("[")]
        depth = "@plt" not in out[2]
        check(relative(got_calls, depth) == relative(want_calls, depth),
              "%s thread %d: function-call-history /c = btsdump --calls "
              "(functions, order%s)" % (name, t["tid"], ", depth" if depth else ""),
              "got %s\nwant %s" % (got_calls, want_calls))


def test_goto_and_bt(name):
    """record goto N lands on btsdump's branch targets; bt there has
    btsdump's call depth + 1 frames (the thread's stack below main
    aside)."""
    doc, _ = threads_of(name)
    t = doc["threads"][0]
    out, _ = gdb(fix(name + ".core"), ["record instruction-history"])
    hist = history(out[0])
    # the instruction number where each branch's target starts: after
    # the end of the block before it (its `from`), in history order
    starts, pos = [], 0
    brs = [b for b in t["branches"] if "marker" not in b]
    for k, b in enumerate(brs):
        if k == 0:
            starts.append((1, b))
            continue
        pos = hist.index(int(b["from"], 16), pos)
        if pos + 1 < len(hist):
            starts.append((pos + 2, b))
    cmds = []
    for n, b in starts:
        cmds += ["record goto %d" % n, "p/x $pc", "bt"]
    out, _ = gdb(fix(name + ".core"), cmds)
    ok, bad = 0, []
    depth_ok, dbad = 0, []
    seg_depth = {}
    for c in t["calls"]:
        # null bounds: the segment the trace ends in, after its newest branch
        lo = c["first_branch"] or t["branches"][-1]["number"] + 1
        for i in range(lo, (c["last_branch"] or lo) + 1):
            seg_depth[i] = c["depth"]
    for i, (n, b) in enumerate(starts):
        pc = out[3 * i + 1]
        if pc.endswith("= 0x%x" % int(b["to"], 16)):
            ok += 1
        else:
            bad.append((n, b["number"], b["to"], pc))
        frames = len(re.findall(r"^#\d+", out[3 * i + 2], re.M))
        d = seg_depth.get(b["number"] + 1)
        if d is None or frames >= d + 1:
            depth_ok += 1
        else:
            dbad.append((n, d, out[3 * i + 2]))
    check(ok == len(starts) and starts, "%s: record goto N lands on each of "
          "btsdump's %d branch targets" % (name, len(starts)), bad)
    check(depth_ok == len(starts), "%s: bt while replaying has btsdump's call "
          "depth" % name, dbad)


def test_reverse(name):
    """reverse-stepi from the stop back to the first instruction."""
    doc, _ = threads_of(name)
    out, _ = gdb(fix(name + ".core"), ["record instruction-history"])
    hist = history(out[0])
    script = ("python\nn = 0\nwhile True:\n"
              "  try:\n    gdb.execute('reverse-stepi', to_string=True)\n"
              "  except gdb.error as e:\n    print('ERR ' + str(e)); break\n"
              "  n += 1\n"
              "  if n > %d: break\n"
              "  if gdb.selected_frame().pc() == %d and n >= %d:\n"
              "    print('AT-FIRST %%d' %% n); break\nend" %
              (len(hist) + 5, hist[0], len(hist)))
    out, _ = gdb(fix(name + ".core"), [script, "reverse-stepi",
                                       "record function-call-history /c 1,1"])
    check("AT-FIRST %d" % len(hist) in out[0] and "ERR" not in out[0],
          "%s: %d reverse-stepi walk back to the first instruction without "
          "an error" % (name, len(hist)), out[0])
    check("No more reverse-execution history" in out[1],
          "%s: one more reverse-stepi: no more history" % name, out[1])


def test_session():
    """The commands of docs/gdb.md's session."""
    out, head = gdb(fix("crasher-null.core"), [
        "info record", "record goto end", "reverse-stepi", "bt",
        "reverse-finish", "record goto begin", "frame", "record goto end",
        "stepi", "continue", "info registers fs_base", "x/2i $pc",
        "p $_siginfo.si_signo"])
    check("Recorded 139 instructions in 6 functions (0 gaps)" in out[0],
          "record btrace bts finds the trace: 139 instructions, 6 functions",
          head + out[0])
    check("dispatch" in out[3] and "parse_request" in out[3] and "main" in out[3],
          "bt while replaying: dispatch <- parse_request <- serve <- main", out[3])
    check("parse_request" in out[4], "reverse-finish returns to the caller", out[4])
    check("main" in out[6], "record goto begin: in main", out[6])
    check("cannot run or change" in out[9] or "Remote failure" in out[9] or
          "error" in out[9].lower(), "continue past the end is refused", out[9])
    check(re.search(r"fs_base\s+0x[0-9a-f]{6,}", out[10]), "fs_base served", out[10])


def test_buffer_size():
    """gdb's `set record btrace bts buffer-size`: the newest records that
    fit (200 bytes: 8 records of 24), and all again when unlimited."""
    recs = [int(l.split()[1], 16) for l in open(fix("crasher-null.records"))
            if l.strip() and not l.startswith("#")]
    out, head = gdb(fix("crasher-null.core"), [
        "record stop", "set record btrace bts buffer-size 200",
        "record btrace bts", "record instruction-history", "info record",
        "record stop", "set record btrace bts buffer-size unlimited",
        "record btrace bts", "info record"])
    hist = history(out[3])
    check(hist and hist[0] == recs[-8] and "Buffer size: 200." in out[4],
          "buffer-size 200: the history starts at the 8th newest branch's target",
          out[3] + out[4])
    check("Recorded 139 instructions" in out[8], "buffer-size unlimited: all again",
          out[8])
    st = []
    out, head = gdb(fix("crasher-null.core"), ["info record"], status=st)
    check("Target is recording" not in head,
          "connecting, gdb finds no recording until `record btrace bts`", head)


def test_threads_switch():
    out, _ = gdb(fix("crasher-threads.core"), ["info threads"])
    check(out[0].count("Thread ") >= 2 and "faulting, Segmentation fault" in out[0],
          "two threads, the faulting one named", out[0])
    names = re.findall(r"Thread 21286\.(\d+)(?: \"([^\"]*)\")? \(", out[0])
    check(sorted(names) == [("21286", "crasher"), ("21289", "")],
          "qXfer:threads:read: the process's name (NT_PRPSINFO) on its "
          "leader thread 21286, none on the faulting thread 21289", out[0])


def test_mi():
    cmds = ['-target-select remote | %s gdbserver %s %s' %
            (BTSDUMP, fix("crasher-null.core"), EXE),
            '-interpreter-exec console "record btrace bts"',
            '-interpreter-exec console "record function-call-history"',
            "-exec-step-instruction --reverse",
            "-stack-list-frames",
            "-exec-finish --reverse",
            "-list-thread-groups",
            "-gdb-exit"]
    p = subprocess.run([GDB, "-nx", "-q", "-i=mi", EXE], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LC_ALL="C"))
    o = p.stdout
    check("^connected" in o, "MI: -target-select remote through the stub", o)
    check(re.search(r'\*stopped,reason="no-history"|\*stopped,.*dispatch', o) and
          'func="dispatch"' in o and 'func="parse_request"' in o,
          "MI: reverse step and stack frames while replaying", o)
    check(p.returncode == 0 and "^error" not in o and "dispatch" in
          o.split("^connected")[-1].split("*running")[0],
          "MI: console commands through MI, no error, a clean exit", o)
    check('=thread-group-started,id="i1",pid="21252"' in o and
          re.search(r'\^done,groups=\[\{id="i1",type="process",pid="21252"', o)
          and 'pid="42000"' not in o,
          "MI: the thread group's pid is the core's (multiprocess), not gdb's "
          "placeholder", o)


def test_gap(tmp):
    """A gap marker between two branches: a gap in gdb, never a line."""
    recs = [l.split() for l in open(fix("crasher-null.records"))
            if l.strip() and not l.startswith("#")]
    path = os.path.join(tmp, "gap.records")
    with open(path, "w") as f:
        for i, r in enumerate(recs):
            if i == 6:
                f.write("gap 1 2000000000 5000\n")
            if i == 3:
                f.write("switch-out 1000000000 1\nswitch-in 1000200000 0\n")
            f.write("%s %s\n" % (r[0], r[1]))
    core = os.path.join(tmp, "gap.core")
    p = subprocess.run([BTSDUMP, "add-note", "--gaps", "1", "-o", core,
                        fix("crasher-notrace.core"), path], capture_output=True, text=True)
    check(p.returncode == 0, "add-note with markers", p.stderr)
    out, _ = gdb(core, ["info record", "record instruction-history"])
    hist = history(out[1])
    gap_to, gap_from = int(recs[5][1], 16), int(recs[6][0], 16)
    full, _ = gdb(fix("crasher-null.core"), ["record instruction-history"])
    check("(1 gaps)" in out[0], "the gap marker is one gdb gap", out[0])
    check(len(hist) < len(history(full[0])) and gap_to not in hist[
        hist.index(int(recs[5][0], 16)) + 1:hist.index(int(recs[6][1], 16))]
          if int(recs[6][1], 16) in hist else False,
          "no instruction is made up across the gap", out[1])
    check(history(full[0])[:hist.index(int(recs[5][0], 16)) + 1] ==
          hist[:hist.index(int(recs[5][0], 16)) + 1],
          "switch markers leave the thread's straight code whole", out[1])


def test_lost_branch(tmp):
    """A branch the trace does not hold (as where the kernel moved the
    thread at a syscall: a signal handler, sigreturn) between two it
    holds: a gap in gdb, never a straight line through the code between
    (here past checksum()'s ret into the code after it)."""
    recs = [l.split() for l in open(fix("crasher-null.records"))
            if l.strip() and not l.startswith("#")]
    ret = int(recs[12][0], 16)          # checksum's ret to parse_request
    path = os.path.join(tmp, "lost.records")
    with open(path, "w") as f:
        f.writelines("%s %s\n" % (r[0], r[1]) for i, r in enumerate(recs) if i != 12)
    core = os.path.join(tmp, "lost.core")
    p = subprocess.run([BTSDUMP, "add-note", "-o", core, fix("crasher-notrace.core"),
                        path], capture_output=True, text=True)
    check(p.returncode == 0, "add-note without one branch", p.stderr)
    out, _ = gdb(core, ["info record", "record instruction-history"])
    full, _ = gdb(fix("crasher-null.core"), ["record instruction-history"])
    hist, whole = history(out[1]), history(full[0])
    check("(1 gaps)" in out[0] and ret not in hist and len(hist) < len(whole),
          "a lost branch between two: a gdb gap, no line through the ret "
          "(%d instructions, %d with every branch)" % (len(hist), len(whole)),
          out[0] + "\n" + out[1][-1500:])


def test_inferred(tmp):
    """The call to 0 dropped from the note (perf's LBR filter) and inferred
    by btsdump: the stub serves the recorded branches only, its history
    ending at the newest of them as gdb/bts.py's does before the inferred
    one (btsgdb.stub_histories, the comparison the VM's collector cores
    get)."""
    recs = [l for l in open(fix("crasher-null.records"))
            if l.strip() and not l.startswith("#")]
    path = os.path.join(tmp, "dropped.records")
    with open(path, "w") as f:
        f.writelines(recs[:-1])
    core = os.path.join(tmp, "dropped.core")
    p = subprocess.run([BTSDUMP, "add-note", "--source", "lbr", "--capacity", "32", "-o",
                        core, fix("crasher-notrace.core"), path],
                       capture_output=True, text=True)
    doc = btsdump_json(core)
    brs = doc["threads"][0]["branches"]
    check(p.returncode == 0 and brs[-1].get("inferred") is True and len(brs) == len(recs),
          "add-note without the call to 0: btsdump infers it", p.stderr)
    res = btsgdb.stub_histories(EXE, core, BTSDUMP, doc)
    for ok, what, detail in res:
        check(ok, "inferred call: " + what, detail[-1500:])
    out, _ = gdb(core, ["info record"])
    check(len(res) == 3 and re.search(r"Recorded \d+ instructions in \d+ functions \(1 gaps\)",
                                       out[0]), "the stub: the recorded branches, a gap after "
          "the newest (no inferred block)", out[0])


def test_bts_target():
    """gdb/bts.py's `bts target`: from `gdb EXE CORE`, one command."""
    st = []
    out = btsgdb.run(EXE, fix("crasher-null.core"),
                     ["bts target", "info record", "reverse-stepi", "bt",
                      "bts target", "bts list 2", "info bts",
                      "bts function-call-history 2", "bts instruction-history 1"],
                     BTSDUMP, status=st)
    check("Recorded 139 instructions in 6 functions (0 gaps)" in out[1],
          "bts target: gdb's own record on the core", "\n".join(out))
    check("dispatch" in out[2] and "#3 " in out[3] and "main" in out[3],
          "bts target: reverse-stepi and bt while replaying", "\n".join(out))
    check(out[4] == "bts: the core is served already (bts target)",
          "bts target twice: says the core is served already", out[4])
    # the bts commands stay (docs/gdb.md): both sets in one session
    lst = out[5].splitlines()
    check(len(lst) == 3 and "call*" in lst[1] and "dispatch+51" in lst[1]
          and lst[2].strip() == "faulted at 0x0 = target of #16 (indirect call "
          "in dispatch)", "bts target: bts list after it, kinds and the fault line",
          out[5])
    check(re.search(r"^\* 1 +\d+ +SIGSEGV +emulation +16 ", out[6], re.M),
          "bts target: info bts after it", out[6])
    check(out[7].splitlines()[-2:] == ["6\tdispatch", "7\t??"] and
          re.fullmatch(r"141\t=> 0x0+:\t<Cannot access memory at address 0x0>",
                       out[8]),
          "bts target: bts function-call-history and instruction-history after "
          "it, to the core's pc while replaying", out[7] + "\n" + out[8])
    out = btsgdb.run(EXE, None, ["bts target"], BTSDUMP)
    check("no core file loaded" in out[0], "bts target without a core", out[0])
    st = []
    out = btsgdb.run(EXE, fix("crasher-notrace.core"), ["bts target", "info record"],
                     BTSDUMP, status=st)
    check(out[0] == btsgdb.NO_TRACE and "Recorded" not in out[1] and st == [0],
          "bts target on a core without a trace: says so, as bts list does",
          "\n".join(out))


def stub_raw(core, data):
    p = subprocess.run([BTSDUMP, "gdbserver", core, EXE], input=data,
                       capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def frame(s):
    return b"$%s#%02x" % (s, sum(s) & 0xff)


def test_hostile_packets():
    pkts = [b"m", b"m,", b"mzz,1", b"m0,ffffffffffffffffff", b"p999", b"pz",
            b"g", b"Hgzz", b"Hg99999", b"qXfer:", b"qXfer:btrace:read:all:zz",
            b"qXfer:features:read:target.xml:0", b"qXfer:auxv:write::0:00",
            b"qXfer:" + b"a" * 5000 + b":read::0,10", b"Qbtrace:pt",
            b"qThreadExtraInfo,", b"M0,1:00", b"c", b"vCont;c", b"Z1,0,1",
            b"T-5", b"\x01\x02\x03", b"m0,0", b"qSupported:" + b"x" * 100000]
    data = b"+" + b"".join(frame(p) for p in pkts) + b"$m0#00" + b"}" * 10 + \
        b"$" + b"A" * 200000 + b"#00" + frame(b"D")
    rc, out, err = stub_raw(fix("crasher-null.core"), data)
    replies = re.findall(rb"\$([^#]*)#", out)
    check(rc == 0 and len(replies) == len(pkts) + 1,
          "hostile packets: one reply each, the stub ends cleanly on D",
          "rc %d, %d replies, stderr %r\n%r" % (rc, len(replies), err, out[:2000]))
    bad = [r for r in replies[:len(pkts) - 1] if r and not r.startswith(b"E")
           and r not in (b"l", b"OK") and not re.match(rb"^[0-9a-fx]*$", r)]
    check(not bad, "hostile packets: errors or empty replies", bad)
    check(out.count(b"-") >= 2, "bad checksums and an overlong packet get '-'", out[-200:])
    # multiprocess, as gdb offers it: thread ids carry the core's pid
    pkts = [b"qSupported:multiprocess+;swbreak+", b"qC", b"?", b"Hgp5304.5304",
            b"Hgp1.5304", b"Hgp5304.-1", b"Tp5304.5304", b"Tp5304", b"Tp5304x",
            b"Hgp-1.-1"]
    data = b"+" + b"".join(frame(p) for p in pkts) + frame(b"D;5304")
    rc, out, err = stub_raw(fix("crasher-null.core"), data)
    replies = re.findall(rb"\$([^#]*)#", out)
    check(rc == 0 and b"multiprocess+" in replies[0] and replies[1:] ==
          [b"QCp5304.5304", b"T0bthread:p5304.5304;", b"OK",
           b"E.no such thread in the core", b"OK", b"OK", b"OK",
           b"E.no such thread in the core", b"OK", b"OK"],
          "multiprocess: pPID.TID ids with the core's pid, another pid refused",
          replies)


def unescape(b):
    return re.sub(rb"}(.)", lambda m: bytes([m.group(1)[0] ^ 0x20]), b, flags=re.S)


def test_binary_read():
    """The `x` packet (gdb's binary-upload): the same bytes `m` reads, as
    binary, announced in qSupported; an error where the core has none."""
    main = 0x555857175150   # crasher-null's main (its PIE at 0x555857174000)
    pkts = [b"qSupported", b"m%x,100" % main, b"x%x,100" % main, b"x0,10",
            b"x0,0", b"x%x,1fffff" % main, b"xzz,1", b"D"]
    rc, out, err = stub_raw(fix("crasher-null.core"),
                            b"+" + b"".join(frame(p) for p in pkts))
    rep = [unescape(r) for r in re.findall(rb"\$([^#]*)#", out, re.S)]
    check(rc == 0 and len(rep) == len(pkts) and b"binary-upload+" in rep[0],
          "x: binary-upload+ in qSupported", rep[:1])
    check(len(rep) > 2 and rep[2][:1] == b"b" and len(rep[1]) == 0x200 and
          rep[2][1:] == bytes.fromhex(rep[1].decode()),
          "x: the bytes m reads, as binary after 'b'", rep[1:3])
    check(len(rep) == len(pkts) and rep[3].startswith(b"E") and rep[4] == b"b" and
          0 < len(rep[5]) - 1 <= 0x10000 and rep[6].startswith(b"E"),
          "x: unmapped an error, length 0 an empty 'b', long reads cut to "
          "fit the packet, malformed an error", rep[3:7])


def test_port():
    """--port: one connection on a TCP port, loopback unless told, the
    port announced as gdbserver does; a bad address a clear error."""
    p = subprocess.Popen([BTSDUMP, "gdbserver", "--port", "0", fix("crasher-null.core"),
                          EXE], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.match(r"Listening on port (\d+)$", line.strip())
    check(m, "--port 0: the port announced", line)
    if not m:
        p.kill()
        p.wait()
        return
    peers = [l.split()[3] for l in open("/proc/net/tcp").readlines()[1:]
             if l.split()[1].endswith(":%04X" % int(m.group(1)))]
    check(peers == ["0A"] and all(l.split()[1].startswith("0100007F")
                                  for l in open("/proc/net/tcp").readlines()[1:]
                                  if l.split()[1].endswith(":%04X" % int(m.group(1)))),
          "--port: listening on 127.0.0.1 only", peers)
    r = subprocess.run([GDB, "-batch", "-nx", "-ex", "target remote 127.0.0.1:" +
                        m.group(1), "-ex", "record btrace bts", "-ex", "info record",
                        "-ex", "reverse-stepi", "-ex", "bt", EXE],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LC_ALL="C"))
    check("Recorded 139 instructions in 6 functions" in r.stdout and
          "parse_request" in r.stdout, "--port: gdb's record through TCP",
          r.stdout + r.stderr)
    check(p.wait(timeout=60) == 0, "--port: the stub ends when gdb detaches")
    p.stderr.close()
    r = subprocess.run([BTSDUMP, "gdbserver", "--port", "nosuch.invalid:x",
                        fix("crasher-null.core")], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    check(r.returncode == 2 and "--port nosuch.invalid:x:" in r.stderr,
          "--port: a bad address, a clear error, exit 2", r.stderr)


def test_stderr_released():
    """On a pipe, gdb reads the stub's stderr without blocking after every
    byte (gdb's ser-base.c): once the session runs the stub lets go of it,
    so gdb reads its end once, not a failed read(2) per byte."""
    p = subprocess.Popen([BTSDUMP, "gdbserver", fix("crasher-null.core"), EXE],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"+" + frame(b"?"))
    p.stdin.flush()
    reply = p.stdout.read(1 + 4)
    ready = select.select([p.stderr], [], [], 10)[0]
    eof = ready and p.stderr.read() == b""
    alive = p.poll() is None
    p.stdin.write(frame(b"D"))
    p.stdin.close()
    check(reply.startswith(b"+$T") and eof and alive and p.wait(timeout=60) == 0,
          "stdio: the stub closes its stderr once the session runs",
          "reply %r, eof %r, alive %r" % (reply, eof, alive))


def xstate_desc(data):
    """The offset of the first NT_X86_XSTATE descriptor in an ELF core."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phnum, = struct.unpack_from("<H", data, 0x38)
    for i in range(phnum):
        ptype, _, off, _, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data,
                                                               phoff + 56 * i)
        at = off
        while ptype == 4 and at < off + filesz:
            namesz, descsz, ntype = struct.unpack_from("<III", data, at)
            desc = at + 12 + ((namesz + 3) & ~3)
            if ntype == 0x202:
                return desc
            at = desc + ((descsz + 3) & ~3)
    return None


def test_avx(tmp):
    """NT_X86_XSTATE: the AVX halves described and served when the core
    has them, equal to what gdb's own core reader shows on the same core
    (ymm3 and ymm15 given a pattern; with XSTATE_BV's AVX bit clear, the
    initial zeros); without the note, no AVX in the description."""
    data = bytearray(open(fix("crasher-null.core"), "rb").read())
    x = xstate_desc(data)
    check(x is not None, "the fixture has an NT_X86_XSTATE note")
    if x is None:
        return
    data[x + 576 + 48:x + 576 + 64] = bytes(range(0x30, 0x40))
    data[x + 576 + 240:x + 576 + 256] = bytes(range(0xf0, 0x100))
    cases = {"set": bytes(data)}
    d = bytearray(data); d[x + 512] &= ~4 & 0xff
    cases["init"] = bytes(d)
    cmds = ["p/x $ymm3.v2_int128", "p/x $ymm15.v2_int128", "p/x $ymm0.v2_int128"]
    for name, blob in cases.items():
        core = os.path.join(tmp, "avx-%s.core" % name)
        open(core, "wb").write(blob)
        out, head = gdb(core, cmds)
        p = subprocess.run([GDB, "-batch", "-nx"] + sum((["-ex", c] for c in cmds), []) +
                           [EXE, core], capture_output=True, text=True, timeout=120)
        native = [l for l in p.stdout.splitlines() if l.startswith("$")]
        stub = [o.strip() for o in out]
        check(len(native) == 3 and stub == native and
              ("0x3f3e3d3c3b3a39383736353433323130" in native[0]) == (name == "set"),
              "AVX (%s): the stub's ymm registers are gdb's own core reader's" % name,
              "stub %r\nnative %r" % (stub, native))
    d = bytearray(data); struct.pack_into("<I", d, x - 12 - 8 + 8, 0x2ff)
    core = os.path.join(tmp, "avx-none.core")
    open(core, "wb").write(bytes(d))
    out, head = gdb(core, ["p $ymm0", "info registers rip"])
    check("void" in out[0] and "rip" in out[1],
          "no NT_X86_XSTATE: no AVX registers described", out)


def test_hostile_cores(tmp):
    data = bytearray(open(fix("crasher-null.core"), "rb").read())
    i = data.find(b"BTSN\x01\x00\x40\x00")
    cases = {}
    d = bytearray(data); d[i + 64:i + 72] = (0xb75c000000000009).to_bytes(8, "little")
    cases["marker"] = d
    d = bytearray(data); d[i - 20:i - 16] = (0xfffffff0).to_bytes(4, "little")
    cases["descsz"] = d
    cases["cut"] = data[:i + 100]
    cases["notelf"] = b"\x7fELF" + b"\0" * 60
    for name, blob in cases.items():
        core = os.path.join(tmp, name + ".core")
        open(core, "wb").write(blob)
        st = []
        out, head = gdb(core, ["info record", "record instruction-history", "bt"],
                        status=st)
        text = head + "\n".join(out)
        check(st[0] in (0, 1) and "internal-error" not in text and
              ("btsdump gdbserver:" in text or "Recorded" in text or
               "No recording" in text or "not" in text),
              "hostile core %s: a clear error, gdb survives (exit %d)" % (name, st[0]),
              text)


def main():
    if not GDB:
        skip_all("no gdb")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("crasher-null", "crasher-smash", "crasher-abort",
                     "crasher-threads"):
            test_histories(name)
        for name in ("crasher-null", "crasher-abort"):
            test_goto_and_bt(name)
            test_reverse(name)
        test_session()
        test_threads_switch()
        test_buffer_size()
        test_mi()
        test_bts_target()
        test_gap(tmp)
        test_lost_branch(tmp)
        test_inferred(tmp)
        test_hostile_packets()
        test_binary_read()
        test_port()
        test_stderr_released()
        test_avx(tmp)
        test_hostile_cores(tmp)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
