#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of the stub's replay mode (`btsdump gdbserver --replay`,
# lib/gdbreplay.c) through gdb/bts.py's `bts replay`, with real gdb (batch,
# then MI): reverse-stepi shows the engine's registers (recover-dump on the
# same core), and on a crash recorded here under gdb-record-regs.py every
# register gdb shows while reverse-stepping is the one the program really
# had, and so is every stack word it reads (an -O0 and an -O2 build);
# reverse-finish out of the faulting function, the NULL pointer's
# value, `info locals` in the caller (values or <unavailable>, never a
# wrong one), a breakpoint hit by reverse-continue, a watchpoint on a
# stack slot stopping at the instruction that wrote it (and an access
# watchpoint at the one that read it; on the smash, the iteration that
# wrote the return address), stepping forward
# back to the fault, the start of the history, two threads moving apart,
# `bts why` at the replay point, and `bts target` unchanged.
# Usage: test-gdb-replay.py BTSDUMP RECOVER-DUMP CRASHER CRASHER-O2.  TAP;
# 77 without gdb.
import os
import re
import shutil
import subprocess
import sys
import tempfile

BTSDUMP, RECOVER_DUMP, CRASHER, CRASHER_O2 = (os.path.abspath(a) for a in sys.argv[1:5])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
from tap import Tap, skip_all  # noqa: E402
import btsgdb  # noqa: E402
import recovery  # noqa: E402  (tests/helpers/recovery.py)
from recovery import GPRS  # noqa: E402
EXE = os.path.join(FIX, "crasher")
CORE = os.path.join(FIX, "crasher-null.core")
GDB = shutil.which("gdb")
T = Tap(detail_lines=60)
check = T.check
STEPS = 40


def replay(cmds, exe=EXE, core=CORE):
    return btsgdb.run(exe, core, ["bts replay"] + cmds, BTSDUMP,
                      pre=["set pagination off"])[1:]


def engine(core, exe):
    out = subprocess.run([RECOVER_DUMP, core, exe], capture_output=True, text=True,
                         check=True)
    return recovery.parse_engine(out.stdout)[1]


def regs_shown(text):
    """`info registers` output: {name: int, or None for <unavailable>}."""
    res = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 2 and w[0] in GPRS + ["rip"]:
            res[w[0]] = None if w[1] == "<unavailable>" else int(w[1], 16)
    return res


def test_registers_engine():
    """reverse-stepi k times: every register gdb shows is the engine's at
    instruction nr - k, and shown exactly when the engine knows it."""
    ent = engine(CORE, EXE)
    out = replay(["reverse-stepi", "info registers"] * STEPS)
    bad, shown = [], 0
    for k in range(1, STEPS + 1):
        what, regs, _ = ent[len(ent) - 1 - k]
        got = regs_shown(out[2 * k - 1])
        if got.get("rip") != int(what, 16):
            bad.append("step %d: rip %s, engine at %s" % (k, got.get("rip"), what))
        for g in GPRS:
            v, kn = regs.get(g, (0, 0))
            want = v if kn == 2**64 - 1 else None
            if got.get(g, "missing") != want:
                bad.append("step %d %s: gdb %s, engine %s" % (k, g, got.get(g), want))
            shown += want is not None
    check(not bad, "bts replay: %d reverse-stepi, rip and the 16 registers = the "
          "engine's, <unavailable> where it knows nothing (%d values shown)"
          % (STEPS, shown), "\n".join(bad[:20]))


def words_shown(text):
    """`x/NXg` output: {address: 8-byte value} for the words gdb printed
    (it stops at the first it cannot read)."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"(0x[0-9a-f]+)(?: <[^>]*>)?:\s+(.*)", line)
        if m:
            for i, w in enumerate(m.group(2).split()):
                if not re.fullmatch(r"0x[0-9a-f]+", w):
                    break   # "Cannot access memory at address ..."
                res[int(m.group(1), 16) + 8 * i] = int(w, 16)
    return res


def word_of(mem, addr):
    """The 8-byte word at addr from the truth's bytes, or None."""
    if any(addr + i not in mem for i in range(8)):
        return None
    return sum(mem[addr + i] << 8 * i for i in range(8))


def test_registers_truth(tmp, exe, label):
    """On a crash recorded here: every register and stack word shown while
    reverse-stepping to the first instruction is what the program had."""
    try:
        core, recs = recovery.record(tmp, exe, ["null"], "main")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        check(False, "%s recorded under gdb" % label, str(e)[-2000:])
        return
    tid = [ln.split()[2] for ln in open(recs) if ln.startswith("# tid")][0]
    subprocess.run([BTSDUMP, "add-note", "--tid", tid, core, recs], check=True,
                   capture_output=True)
    truth = recovery.parse_truth(recs + ".regs")
    n = len(truth) - 1
    out = replay(["reverse-stepi", "info registers", "x/8xg $rsp - 32"] * n +
                 ["reverse-stepi"], exe=exe, core=core)
    bad, shown, words, back = [], 0, 0, 0
    for k in range(1, n + 1):
        if "No more reverse-execution history" in out[3 * k - 3]:
            break   # the trace starts after main's first instructions
        back = k
        pc, real, mem = truth[n - k]
        got = regs_shown(out[3 * k - 2])
        if got.get("rip") != pc:
            bad.append("step %d: rip %s, gdb stepped 0x%x" % (k, got.get("rip"), pc))
            break
        for g in GPRS:
            if got.get(g) is not None:
                shown += 1
                if got[g] != real[g]:
                    bad.append("step %d (0x%x) %s: shown %x, truth %x"
                               % (k, pc, g, got[g], real[g]))
        for a, v in words_shown(out[3 * k - 1]).items():
            w = word_of(mem, a)
            words += w is not None
            if w is not None and w != v:
                bad.append("step %d (0x%x) memory at 0x%x: shown %x, truth %x"
                           % (k, pc, a, v, w))
    check(not bad and shown and words and back > 40, "bts replay on a recorded "
          "crash (%s): every register and stack word shown at each of %d "
          "instructions back is the truth (%d registers, %d words shown, %d wrong)"
          % (label, back, shown, words, len(bad)), "\n".join(bad[:20]))
    check("No more reverse-execution history" in out[-1],
          "bts replay (%s): reverse-stepi past the first instruction: no more "
          "history" % label, out[-1])


def test_session():
    out = replay(["reverse-stepi", "p h", "p kind", "reverse-finish", "bt 1",
                  "info locals", "p/x $pc"])
    check(re.search(r"= \(handler_fn\) 0x0$", out[1]) is not None,
          "bts replay: p of the pointer that was NULL, in dispatch: 0x0", out[1])
    check(out[2] == "$2 = 15", "bts replay: p kind in dispatch: 15", out[2])
    check(re.search(r"^#0 .* in parse_request \(n=2\)", out[4], re.M) is not None,
          "bts replay: reverse-finish out of dispatch into parse_request "
          "(its argument known)", out[3] + "\n" + out[4])
    # the caller's frame at the crash holds the truth: dispatch writes none
    # of it (plain gdb on the core, frame 2)
    plain = btsgdb.run(EXE, CORE, ["frame 2", "info locals"], BTSDUMP)[1]
    want = dict(ln.split(" = ", 1) for ln in plain.splitlines() if " = " in ln)
    got = dict(ln.split(" = ", 1) for ln in out[5].splitlines() if " = " in ln)
    wrong = {k: v for k, v in got.items()
             if v != "<unavailable>" and want.get(k) != v}
    check(got and not wrong and set(got) == set(want),
          "bts replay: info locals in the caller: the core's values or "
          "<unavailable>, none wrong", "replay:\n%s\ncore:\n%s" % (out[5], plain))
    bt = btsgdb.run(EXE, CORE, ["bt"], BTSDUMP)[0]
    ret = int(re.search(r"^#2 +0x([0-9a-f]+) in parse_request", bt, re.M).group(1), 16)
    check(out[6].endswith("0x%x" % (ret - 5)),
          "bts replay: reverse-finish stops at the call (5 bytes before the "
          "return address)", out[6])


def test_why_follows():
    """`bts why` under `bts replay` explains the value at the replay
    point (the stub's `monitor bts-where`), not the fault's: after three
    reverse-stepi, rsp is the one gdb shows there, as btsdump why --back 3
    says."""
    out = replay(["reverse-stepi"] * 3 + ["monitor bts-where", "p $rsp", "bts why $rsp"])
    check(re.fullmatch(r"thread \d+ back 3", out[3]) is not None,
          "monitor bts-where after three reverse-stepi: back 3", out[3])
    rsp = out[4].split()[-1]
    lines = out[5].splitlines()
    cli = subprocess.run([BTSDUMP, "why", "--back", "3", CORE, EXE, "rsp"],
                         capture_output=True, text=True).stdout.splitlines()
    check(len(lines) > 1 and lines[0].startswith(
              "$rsp, 3 instructions before the fault (the replay point)") and
          lines[1].startswith("rsp = %s <- " % rsp) and len(cli) > 1 and
          cli[1].split(" in ")[0] == lines[1].split(" in ")[0],   # +4 / +0x4
          "bts why $rsp at the replay point: gdb's rsp there (%s), as btsdump why "
          "--back 3" % rsp, "\n".join(lines[:3] + cli[:2]))


def test_watch_smash():
    """On the stack smash: a watchpoint on the smashed return address
    (the slot ret read 0x414141414141 from) stops reverse-continue at the
    store in fill() that wrote it, in the iteration i = 3."""
    core = os.path.join(FIX, "crasher-smash.core")
    out = replay(["reverse-stepi", "p/x *(long *)$rsp", "watch -l *(long *)$rsp",
                  "reverse-continue", "x/i $pc", "p i"], core=core)
    check(out[1] == "$1 = 0x414141414141" and
          "Old value = %d" % 0x414141414141 in out[3] and
          re.search(r"in fill \(p=0x[0-9a-f]+, n=4\)", out[3]) is not None and
          re.search(r"mov +%rcx,\(%rax\)", out[4]) is not None and out[5] == "$2 = 3",
          "bts replay on the smash: a watchpoint on the smashed return address stops "
          "at fill()'s store, i = 3", "\n".join(out[1:6]))


def test_break_watch_forward():
    out = replay(["break checksum", "reverse-continue", "p/x $pc",
                  "delete", "continue", "reverse-stepi", "p &h",
                  "watch -l h", "reverse-continue", "x/i $pc",
                  "delete", "stepi 1000", "p/x $pc"])
    check("Breakpoint 1, checksum" in out[1],
          "bts replay: reverse-continue stops at a breakpoint (checksum)", out[1])
    check("Program received signal SIGSEGV" in out[4],
          "bts replay: continue forward to the end: the core's signal", out[4])
    check(re.search(r"Hardware watchpoint 2: -location h\s+Old value = "
                    r"\(.*\) 0x0\s+New value = ", out[8]) is not None,
          "bts replay: a watchpoint on a stack slot stops reverse-continue",
          out[8])
    check(re.search(r"mov +%rax,-0x8\(%rbp\)", out[9]) is not None,
          "bts replay: ... at the instruction that wrote it (h's store)", out[9])
    check("Program received signal SIGSEGV" in out[11] and out[12] == "$3 = 0x0",
          "bts replay: stepi forward back to the faulting state", "\n".join(out[10:]))


def test_mi():
    cmds = ['-interpreter-exec console "source %s"' % btsgdb.SCRIPT,
            '-interpreter-exec console "bts replay"',
            "-exec-step-instruction --reverse",
            "-data-evaluate-expression h",
            "-exec-finish --reverse",
            "-exec-next --reverse",
            "-exec-next --reverse",
            "-exec-step --reverse",
            "-data-evaluate-expression sum",
            "-break-insert checksum",
            "-exec-continue --reverse",
            "-stack-list-frames",
            "-exec-continue",
            "-break-delete",
            "-exec-continue --reverse",
            "-gdb-exit"]
    p = subprocess.run([GDB, "-nx", "-q", "-i=mi", "-ex", "set pagination off", EXE,
                        CORE], input="\n".join(cmds) + "\n", capture_output=True,
                       text=True, timeout=120,
                       env=dict(os.environ, LC_ALL="C", BTSDUMP=BTSDUMP))
    o = p.stdout
    check('*stopped,reason="end-stepping-range"' in o and 'func="dispatch"' in o
          and '^done,value="0x0"' in o,
          "MI: reverse step into dispatch, h evaluated (0x0)", o)
    check(re.search(r'\*stopped,reason="[a-z-]+",frame=\{addr="0x0*555857175259",'
                    r'func="parse_request"', o) is not None and
          re.search(r'\*stopped,reason="end-stepping-range",frame=\{addr="[^"]*",'
                    r'func="parse_request".*line="40"', o) is not None and
          re.search(r'\*stopped,reason="end-stepping-range",frame=\{addr="[^"]*",'
                    r'func="checksum"', o) is not None and '^done,value="15"' in o,
          "MI: -exec-finish, -exec-next and -exec-step --reverse; sum = 15", o)
    check('*stopped,reason="breakpoint-hit"' in o and 'func="checksum"' in o,
          "MI: -exec-continue --reverse to a breakpoint", o)
    check('*stopped,reason="signal-received",signal-name="SIGSEGV"' in o,
          "MI: -exec-continue forward to the core's signal", o)
    check("No more reverse-execution history" in o.split("-exec-continue")[-1] and
          p.returncode == 0,
          "MI: reverse to the start of the history: no-history, clean exit", o)


def test_access_watch():
    """awatch and rwatch (gdb builds rwatch of Z4): reverse-continue stops
    at the load of h, then at its store; forward, after the load."""
    out = replay(["reverse-stepi", "awatch -l h", "reverse-continue", "x/i $pc",
                  "reverse-continue", "x/i $pc", "delete", "rwatch -l h", "continue",
                  "x/i $pc"])
    check("Hardware access (read/write) watchpoint 1: -location h" in out[2] and
          re.search(r"mov +-0x8\(%rbp\),%rdx", out[3]) is not None,
          "bts replay: awatch, reverse-continue stops at h's load", out[2] + out[3])
    check(re.search(r"mov +%rax,-0x8\(%rbp\)", out[5]) is not None,
          "bts replay: awatch, reverse-continue again stops at h's store", out[5])
    check("Hardware read watchpoint 2: -location h" in out[8] and
          re.search(r"<dispatch\+49>", out[9]) is not None,
          "bts replay: rwatch, continue stops just after h's load", out[8] + out[9])


def test_watch_across_gap(tmp):
    """crasher-null's trace with a gap where parse_request stores kind:
    the write cannot be placed, so reverse-continue with kind watched
    stops without a reason (gdb: SIGTRAP) at the gap's far side, the
    return from checksum, never claiming a watchpoint hit."""
    recs = [ln.split() for ln in open(os.path.join(FIX, "crasher-null.records"))
            if ln.strip() and not ln.startswith("#")]
    path = os.path.join(tmp, "gap.records")
    with open(path, "w") as f:
        for i, r in enumerate(recs):
            if i == 13:     # before "cond parse_request+0x3b"
                f.write("gap 1 2000000000 5000\n")
            f.write("%s %s\n" % (r[0], r[1]))
    core = os.path.join(tmp, "gap.core")
    p = subprocess.run([BTSDUMP, "add-note", "--gaps", "1", "-o", core,
                        os.path.join(FIX, "crasher-notrace.core"), path],
                       capture_output=True, text=True)
    check(p.returncode == 0, "add-note with a gap", p.stderr)
    out = replay(["reverse-stepi", "up", "watch -l kind", "reverse-continue",
                  "p/x $pc"], core=core)
    ret = int(recs[12][0], 16)      # checksum's ret: the gap's far side
    check("Program received signal SIGTRAP" in out[3] and "Old value" not in out[3]
          and out[4].endswith("0x%x" % ret),
          "bts replay: a write the gap hides stops reverse-continue without a "
          "reason, at the gap's far side", "\n".join(out))


def test_source_steps():
    """reverse-next over a line, reverse-step into the function that line
    called (checksum, its local known), next forward again."""
    out = replay(["reverse-stepi", "reverse-finish", "reverse-next", "reverse-next",
                  "reverse-step", "bt 1", "info locals", "next", "next"])
    check(re.match(r"40\t", out[3].splitlines()[-1]) is not None,
          "bts replay: reverse-next to the line before (40)", out[3])
    check(out[4].startswith("checksum (v=0x") and out[6] == "sum = 15",
          "bts replay: reverse-step into checksum, at its return, sum = 15",
          "\n".join(out[4:7]))
    check(re.match(r"42\t", out[8].splitlines()[-1]) is not None,
          "bts replay: next forward again (line 42)", out[8])


def test_threads():
    """crasher-threads: each thread moves alone, keeps its own point, and
    its registers are its own after a stop of another."""
    core = os.path.join(FIX, "crasher-threads.core")
    out = replay(["reverse-stepi", "p $pc", "thread 2", "p $pc", "reverse-stepi",
                  "p $pc", "thread 1", "p $pc", "thread 2", "stepi", "p $pc",
                  "thread 1", "p $pc", "stepi", "p $pc"], core=core)
    pcs = [re.sub(r"^\$\d+ = \(void \(\*\)\(\)\) ", "", out[i])
           for i in (1, 3, 5, 7, 10, 12, 14)]
    want = ["<dispatch+51>", "<__futex_abstimed_wait_common+198>",
            "<run_threads+32>", "<dispatch+51>",
            "<__futex_abstimed_wait_common+198>", "<dispatch+51>", "0x0"]
    check(all(p.endswith(w) for p, w in zip(pcs, want)),
          "bts replay, two threads: each moves alone (the main thread across "
          "its trace's gap), each keeps its point", "\n".join(out))


def test_code_before_syscalls():
    """crasher-abort's trace runs through abort's syscalls: at its oldest
    point the code still reads (the engine follows it across them).  The
    read-only-mapping path of lib/gdbreplay.c is not reached here."""
    out = replay(["reverse-continue", "x/2i $pc", "x/8xb $sp+0x100000"],
                 core=os.path.join(FIX, "crasher-abort.core"))
    check("No more reverse-execution history" in out[0] and
          re.search(r"=> 0x[0-9a-f]+ <main\+\d+>:\s+mov", out[1]) is not None,
          "bts replay: code reads at the start of a trace with syscalls", out[1])
    check("Cannot access memory" in out[2],
          "bts replay: memory nothing proves is an error there", out[2])


def packets(*pkts):
    return b"".join(b"$%s#%02x" % (p, sum(p) & 0xff) for p in pkts)


def test_hostile_cores(tmp):
    """test-gdbstub's damaged cores, moved along in replay mode: the stub
    answers or refuses, never dies of a signal."""
    data = bytearray(open(CORE, "rb").read())
    i = data.find(b"BTSN\x01\x00\x40\x00")
    cases = {"marker": bytearray(data), "descsz": bytearray(data),
             "cut": data[:i + 100], "notelf": b"\x7fELF" + b"\0" * 60}
    cases["marker"][i + 64:i + 72] = (0xb75c000000000009).to_bytes(8, "little")
    cases["descsz"][i - 20:i - 16] = (0xfffffff0).to_bytes(4, "little")
    data = packets(b"qSupported:multiprocess+", b"bs", b"g", b"Z2,7ffcbc4ff838,8",
                   b"bc", b"m7ffcbc4ff838,8", b"Z4,7ffcbc4ff838,8", b"vCont;c",
                   b"bc", b"bs", b"s", b"c", b"D")
    for name, blob in cases.items():
        core = os.path.join(tmp, name + ".core")
        open(core, "wb").write(blob)
        p = subprocess.run([BTSDUMP, "gdbserver", "--replay", core, EXE], input=data,
                           capture_output=True, timeout=60)
        check(p.returncode in (0, 2), "hostile core %s in replay mode: served or "
              "refused, exit %d" % (name, p.returncode), p.stderr.decode(errors="replace"))


def test_modes():
    out = btsgdb.run(EXE, CORE, ["bts replay", "bts replay", "record btrace bts",
                                 "reverse-stepi", "bts list 2", "info bts"], BTSDUMP)
    check("served already" in out[1], "bts replay twice: served already", out[1])
    check("faulted at 0x0 = target of #16" in out[4] and
          re.search(r"^\* 1 +21252 +SIGSEGV ", out[5], re.M) is not None,
          "bts replay: the bts commands still read the core", out[4] + out[5])
    check("not support" in out[2] or "ould not" in out[2],
          "bts replay: no branch trace for gdb's record (that is bts target)", out[2])
    out = btsgdb.run(EXE, CORE, ["bts target", "info record", "reverse-stepi",
                                 "p $rdx"], BTSDUMP)
    check("Recorded 139 instructions" in out[1] and "<unavailable>" in out[3],
          "bts target: gdb's btrace as before, values unavailable there",
          "\n".join(out))


def main():
    if not GDB:
        skip_all("no gdb")
    test_registers_engine()
    test_session()
    test_why_follows()
    test_watch_smash()
    test_break_watch_forward()
    test_mi()
    test_access_watch()
    test_source_steps()
    test_threads()
    test_code_before_syscalls()
    test_modes()
    with tempfile.TemporaryDirectory() as tmp:
        test_watch_across_gap(tmp)
        test_hostile_cores(tmp)
    for exe, label in ((CRASHER, "-O0"), (CRASHER_O2, "-O2")):
        with tempfile.TemporaryDirectory() as tmp:
            test_registers_truth(tmp, exe, label)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
