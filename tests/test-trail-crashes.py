#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The trail signature on real crashes (issue 41 item 2): the crasher just
# built, run under gdb with ASLR on and single-stepped into its fault
# (tests/fixtures/gdb-record-branches.py, as make-fixtures.sh does), its
# branches added to the core as a trace note (btsdump add-note), the core
# fed to btsdumpd --direct.  The same bug after 2 and after 60 rounds of a
# loop that calls, at two load bases, must give one TRAIL and one group in
# btsdumpctl list --group; the other bug in the same function (a store
# through NULL, not a call) another.  TAP.
# Usage: test-trail-crashes.py CRASHER BTSDUMP BTSDUMPD BTSDUMPCTL
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap, skip_all  # noqa: E402

crasher, btsdump, daemon, ctl = map(os.path.abspath, sys.argv[1:5])
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not shutil.which("gdb"):
    skip_all("gdb not installed")
T = Tap()
check = T.check


def crash(tmp, name, mode, rounds):
    """A core of `crasher MODE ROUNDS` with its trail as a note; the
    records' first address (where the program was loaded)."""
    core, recs = os.path.join(tmp, name + ".core"), os.path.join(tmp, name + ".records")
    env = dict(os.environ, BTS_RECORDS=recs, BTS_CORE=core, BTS_THREADS="0")
    p = subprocess.run(["gdb", "-batch", "-nx", "-q", "-x",
                        os.path.join(src, "tests/fixtures/gdb-record-branches.py"),
                        "--args", crasher, mode, str(rounds)],
                       env=env, capture_output=True, text=True, timeout=120)
    lines = open(recs).read().splitlines() if os.path.exists(recs) else []
    tid = next((l.split()[2] for l in lines if l.startswith("# tid ")), None)
    a = subprocess.run([btsdump, "add-note", "--tid", str(tid), core, recs],
                       capture_output=True, text=True) if tid else None
    ok = check(p.returncode == 0 and a and a.returncode == 0,
               "%s: gdb recorded `crasher %s %d`, btsdump add-note" % (name, mode, rounds),
               p.stdout[-2000:] + p.stderr[-2000:] + (a.stderr if a else ""))
    branches = [l for l in lines if not l.startswith("#")]
    return ok, int(branches[0].split()[0], 16) if branches else 0, len(branches)


def store(tmp, name, pid, ts):
    """The core through btsdumpd --direct; the entry's meta."""
    st = os.path.join(tmp, "store")
    with open(os.path.join(tmp, name + ".core"), "rb") as f:
        p = subprocess.run([daemon, "--store", st, "--config", os.path.join(tmp, "conf"),
                            "--direct", "--log", "stderr", str(pid), "1000", "1000", "11",
                            str(ts), "crasher", "host-%d" % (pid % 100)],
                           stdin=f, capture_output=True, timeout=120)
    m = {}
    for e in os.listdir(st) if os.path.isdir(st) else []:
        if e.startswith("%d.%d." % (ts, pid)):
            with open(os.path.join(st, e, "meta")) as f:
                m = dict(l.rstrip("\n").partition("=")[::2] for l in f)
    check(p.returncode == 0 and m.get("TRACE") == "present",
          "%s: btsdumpd stored it with its trace" % name, p.stderr.decode(errors="replace"))
    return m


with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o755)
    with open(os.path.join(tmp, "conf"), "w") as f:
        f.write("[Store]\n")
    few = crash(tmp, "few", "rounds", 2)
    many = crash(tmp, "many", "rounds", 60)
    write = crash(tmp, "write", "write", 3)
    if not (few[0] and many[0] and write[0]):
        sys.exit(T.done())
    check(few[1] != many[1] and few[2] < many[2],
          "two load bases (ASLR), two loop counts", (hex(few[1]), hex(many[1]), few[2], many[2]))
    # PIDs no process has (pid_max is at most 2^22): btsdumpd --direct
    # reads /proc/PID for what it can
    m = {n: store(tmp, n, pid, 1700000000 + pid % 100)
         for n, pid in (("few", 999999901), ("many", 999999902), ("write", 999999903))}
    check("consume" in m["few"].get("FAULT", "") and
          "consume" in m["write"].get("LAST_BRANCHES", "") + m["write"].get("FAULT", ""),
          "the analysis had the program's symbols", m)
    trails = {n: m[n].get("TRAIL", "") for n in m}
    check(len(trails["few"]) == 32 and trails["few"] == trails["many"],
          "the same bug after 2 and 60 rounds, at two load bases: one TRAIL", trails)
    check(len(trails["write"]) == 32 and trails["write"] != trails["few"],
          "the other bug in the same function: another TRAIL", trails)
    p = subprocess.run([ctl, "--store", os.path.join(tmp, "store"), "--json", "list",
                        "--group"], capture_output=True, text=True)
    try:
        groups = [(g["trail"], g["count"], g["hosts"]) for g in json.loads(p.stdout)]
    except (ValueError, KeyError, TypeError):
        groups = []
    check(groups == [(trails["few"], 2, 2), (trails["write"], 1, 1)],
          "btsdumpctl list --group: two groups, the call through NULL twice",
          p.stdout + p.stderr)
sys.exit(T.done())
