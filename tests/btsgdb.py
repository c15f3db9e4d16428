# SPDX-License-Identifier: GPL-2.0-or-later
# For the tests that drive gdb with gdb/bts.py on a core (tests/test-gdb.py,
# tests/test-fixtures.py, tests/test-gdbstub.py, tests/vm/check-vm.py): one batch gdb run with each
# command's output apart, and `thread apply all` output split per thread.
import os
import re
import shutil
import subprocess

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(SRC, "gdb", "bts.py")
MARK = "@@bts-test@@"
GDB = shutil.which("gdb") or "gdb"     # found once: tests run it with PATH changed


# gdb/bts.py's message for a core without a trace (docs/gdb.md)
NO_TRACE = ("bts: this core has no branch trace (the process was not traced, "
            "or its kernel lacks btscrash)")


def run(exe, core, cmds, btsdump, pre=(), env=None, status=None, timeout=300):
    """Runs `gdb -batch -nx` with gdb/bts.py on EXE and CORE (either may be
    None) and BTSDUMP as $BTSDUMP; returns each of CMDS' output (stdout and
    stderr together, without trailing newlines), split at markers echoed
    between the commands.  PRE: commands run before the files load; ENV:
    more environment; STATUS: a list that gets gdb's exit status."""
    args = [GDB, "-batch", "-nx", "-iex", "source " + SCRIPT]
    for c in pre:
        args += ["-iex", c]
    args += [exe] if exe else []
    args += ["-c", core] if core else []
    args += ["-ex", "echo %s\\n" % MARK]
    for c in cmds:
        args += ["-ex", c, "-ex", "echo %s\\n" % MARK]
    e = dict(os.environ, BTSDUMP=btsdump, LC_ALL="C", TERM="dumb")
    e.update(env or {})
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="surrogateescape", env=e, cwd=SRC,
                       stdin=subprocess.DEVNULL,
                       timeout=timeout)
    if status is not None:
        status.append(p.returncode)
    parts = p.stdout.split(MARK + "\n")
    return [s.rstrip("\n") for s in parts[1:1 + len(cmds)]] + \
        [""] * (len(cmds) + 1 - len(parts))


def by_thread(out):
    """`thread apply all` output: {LWP: [its non-empty lines]}; threads
    named "Thread PID.TID" as well (through the stub, multiprocess)."""
    res, cur = {}, None
    for line in out.splitlines():
        m = (re.match(r"Thread \d+ \((?:.*\()?LWP (\d+)\)\)?:", line) or
             re.match(r"Thread \d+ \(Thread \d+\.(\d+)[ )].*:$", line))
        if m:
            cur = res.setdefault(int(m[1]), [])
        elif cur is not None and line.strip():
            cur.append(line)
    return res


def truth(name, fixdir=os.path.join(SRC, "tests", "fixtures")):
    """{tid: [pc, ...]}: the instructions gdb single-stepped when the
    fixture NAME was made (its *.records*.insns files), the thread's pc at
    the end last: the truth test-gdb.py and test-gdbstub.py compare with."""
    res = {}
    for f in sorted(os.listdir(fixdir)):
        if f.startswith(name + ".records") and f.endswith(".insns"):
            with open(os.path.join(fixdir, f)) as fh:
                ls = [l.strip() for l in fh if l.strip()]
            tid = int([l for l in ls if l.startswith("# tid ")][0].split()[2])
            res[tid] = [int(l, 16) for l in ls if not l.startswith("#")]
    return res


# ---- gdb's own record through the stub (btsdump gdbserver) ---------------


def history(out):
    """Addresses of a `record instruction-history` listing, in order."""
    return [int(m[1], 16) for m in
            re.finditer(r"^\s*\d+\t(?:=> |   )?0x([0-9a-f]+)", out, re.M)]


def calls(out):
    """(depth, function) of each `record function-call-history /c` line."""
    res = []
    for line in out.splitlines():
        m = re.match(r"\d+\t( *)(\S+)", line)
        if m:
            res.append((len(m[1]) // 2, m[2]))
    return res


def expected(tr, branches):
    """The instructions gdb can know: from the oldest branch's target on,
    the stop pc (current, not history) left out."""
    first = [b for b in branches if "marker" not in b][0]
    i = tr.index(int(first["from"], 16))
    return tr[i + 1:-1]


def norm(f):
    """A function's name as both name it: gdb says __GI_abort (DWARF),
    btsdump abort (the ELF symbol), pthread_kill@@GLIBC_2.34; gdb leaves
    a clone's number off (get_common_indices.constprop, .constprop.0) and
    says ?? where btsdump has no name."""
    if not f:
        return "??"
    f = re.sub(r"(\.\d+|_ifunc)$", "", f.split("@@")[0].lstrip("_"))
    return f[3:].lstrip("_") if f.startswith("GI_") else f


def known_calls(t, tail=False):
    """btsdump's call segments gdb can know: not one that holds only the
    oldest branch's source (the code before it is unknown) nor, after the
    newest branch, one that holds only the stop pc (gdb's current
    instruction, not history) -- unless TAIL: gdb's history runs on past
    the newest branch (a thread stopped in straight code after it) -- nor
    code that does not reach the stop pc (fault relation unrelated: the
    stub sends a gap there, gdb a decode error in place of the function;
    the LBR collector's note of a call to 0 that perf dropped, whose call
    btsdump infers: the stub serves recorded branches only)."""
    brs = [b["number"] for b in t["branches"] if "marker" not in b]
    segs = t["calls"]
    if segs and segs[0]["last_branch"] == brs[0]:
        segs = segs[1:]
    f = t["fault"]
    if segs and segs[-1]["first_branch"] is None and (
            (not tail and (not f or f["relation"] == "target")) or
            (f and (f["relation"] == "unrelated" or f.get("inferred")))):
        segs = segs[:-1]
    return [(c["depth"], norm(c["function"])) for c in segs]


def relative(cs, depth):
    """Depths from the shallowest; gdb counts a jump into another function
    (a PLT entry) as a call and btsdump does not, so with PLT jumps only
    the names and their order are compared."""
    base = min((d for d, _ in cs), default=0)
    return [(d - base if depth else 0, f) for d, f in cs]


def aliases(exe):
    """{name: one name for all at its address} from EXE's symbols (nm), as
    norm() writes them: gdb and btsdump may pick different names for one
    address (memcpy and __new_memcpy, getrlimit and getrlimit64)."""
    p = subprocess.run(["nm", "--defined-only", exe], capture_output=True, text=True)
    at = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            at.setdefault(f[0], set()).add(norm(f[2]))
    return {n: min(ns) for ns in at.values() for n in ns}


def kernel_breaks(lines):
    """The addresses of a `bts instruction-history` and where in them the
    kernel took over at a syscall (a signal handler, sigreturn): gdb's
    record has a gap there."""
    addrs, breaks = [], []
    for line in lines:
        if "the kernel took over" in line:
            breaks.append(len(addrs))
        addrs += history(line)
    return addrs, breaks


def subsequence(needle, hay):
    it = iter(hay)
    return all(x in it for x in needle)


def stub_histories(exe, core, btsdump, doc, pre=()):
    """One gdb session on CORE: gdb/bts.py's `bts instruction-history` of
    every thread, then `bts target` (the stub, with the whole ring) and
    gdb's own `record instruction-history` and `record
    function-call-history /c`.  doc: btsdump --json --calls of CORE.
    Returns [(ok, what, detail)], two a traced thread: its record
    history = the bts history from the oldest branch's target on (the
    stop pc left out), its call history = btsdump's (known_calls).  A
    branch btsdump inferred (at most one, the last) is not the stub's:
    its trace ends at the newest recorded branch, as a recording that
    stopped before the thread did."""
    out = run(exe, core, ["thread apply all bts instruction-history 1,100000000",
                          "set record btrace bts buffer-size unlimited",
                          "set record instruction-history-size unlimited",
                          "set record function-call-history-size unlimited",
                          "bts target",
                          "thread apply all -s record instruction-history",
                          "thread apply all -s record function-call-history /c",
                          "info record"], btsdump, pre=pre)
    bts, rec, fch = by_thread(out[0]), by_thread(out[5]), by_thread(out[6])
    res = []
    for t in doc["threads"]:
        brs = [b for b in t["branches"] if "marker" not in b]
        inferred = [i for i, b in enumerate(brs) if "inferred" in b]
        if inferred:
            res.append((inferred == [len(brs) - 1] and brs[-1]["inferred"] is True and
                        len(brs) > 1, "thread %d: btsdump inferred one branch, the last"
                        % t["tid"], str(inferred)))
            brs = brs[:-1]
        if not brs:
            continue
        tid = t["tid"]
        got = history("\n".join(rec.get(tid, [])))
        whole, breaks = kernel_breaks(bts.get(tid, []))
        want = expected(whole, t["branches"])
        # a thread whose recording stopped before it did: gdb's trace ends
        # in a gap at the newest branch, whose source it may leave out
        if inferred:
            # the stub's trace ends at the newest recorded branch's source:
            # its code does not reach the pc without the inferred one
            cut = int(brs[-1]["from"], 16)
            want = want[:len(want) - want[::-1].index(cut)] if cut in want else want
        elif any("no trace from here" in l for l in bts.get(tid, [])) and \
                len(got) >= len(want) - 1:
            want = want[:len(got)]
        res.append((got == want and want,
                    "thread %d: record instruction-history through the stub = bts "
                    "instruction-history (%d instructions, %d kernel transfers)"
                    % (tid, len(want), len(breaks)), "got %d, want %d\n%s\n%s"
                    % (len(got), len(want), out[4], "\n".join(rec.get(tid, [])[-20:]))))
        text = "\n".join(fch.get(tid, []))
        alias = aliases(exe)
        got_calls = [(d, alias.get(norm(f), norm(f))) for d, f in calls(text)
                     if not f.startswith("[")]
        tail = bool(got) and got[-1] != int(brs[-1]["from"], 16)
        want_calls = [(d, alias.get(f, f)) for d, f in known_calls(t, tail)]
        # gdb nests a jump into another function (a PLT entry, libc's
        # setjmp into sigsetjmp) as a call, btsdump does not: names, order
        # where the kernel moved the thread, gdb has a segment for the one
        # instruction after the gap (the next branch's source) that
        # btsdump's call history folds into its neighbour
        g, w = relative(got_calls, False), relative(want_calls, False)
        res.append((g == w or (breaks and subsequence(w, g) and
                               len(g) - len(w) <= len(breaks)),
                    "thread %d: record function-call-history /c = btsdump --calls "
                    "(%d functions, order)" % (tid, len(want_calls)),
                    "got %s\nwant %s" % (got_calls, want_calls)))
    return res
