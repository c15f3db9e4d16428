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
                       text=True, env=e, cwd=SRC, stdin=subprocess.DEVNULL,
                       timeout=timeout)
    if status is not None:
        status.append(p.returncode)
    parts = p.stdout.split(MARK + "\n")
    return [s.rstrip("\n") for s in parts[1:1 + len(cmds)]] + \
        [""] * (len(cmds) + 1 - len(parts))


def by_thread(out):
    """`thread apply all` output: {LWP: [its non-empty lines]}."""
    res, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"Thread \d+ \(.*LWP (\d+)\)\):", line)
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
