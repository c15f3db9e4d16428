#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a VM test leaves on the disk.  The TAP writer prunes the model's
oracle logs (helpers/tap.py, Tap.done(prune=DIR)): after a run whose
checks all passed, bts*.log, lbr*.log and pmu*.log are gone and every
other file stays; a failed run keeps them, and so does
BTSCRASH_KEEP_LOGS=1 (each case runs a checker in a child process on a
scratch directory).  And no VM script leaves its scratch directory in
/tmp: one that makes it (vm_workdir, vm_setup, vm_guest, mktemp -d)
with an EXIT trap must not `exec` its checker, which would skip the trap
(80 MB a run).  Usage: test-vm-leftovers.py"""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "helpers"))
from tap import Tap  # noqa: E402

T = Tap()
check = T.check
LOGS = ["bts.log", "lbr.log", "pmu.log", "bts-full.log", "lbr-oops3.log"]
OTHERS = ["console.log", "data.log", "collector.log", "vmcore", "lbr.logx"]
CHILD = """
import sys
sys.path.insert(0, %r)
from tap import Tap
t = Tap()
t.check(sys.argv[2] == "pass", "the one check")
sys.exit(t.done(prune=sys.argv[1]))
""" % os.path.join(HERE, "helpers")


def run(outcome, keep=False):
    """Files left in a scratch results dir after a checker that passed
    or failed; its exit status."""
    with tempfile.TemporaryDirectory() as d:
        # a results dir named like a glob pattern: escaped, not expanded
        res = os.path.join(d, "vm[1]")
        os.mkdir(res)
        for name in LOGS + OTHERS:
            with open(os.path.join(res, name), "w") as f:
                f.write("x")
        env = dict(os.environ)
        env.pop("BTSCRASH_KEEP_LOGS", None)
        if keep:
            env["BTSCRASH_KEEP_LOGS"] = "1"
        p = subprocess.run([sys.executable, "-c", CHILD, res, outcome],
                           env=env, capture_output=True, text=True)
        return sorted(os.listdir(res)), p.returncode


left, rc = run("pass")
check(rc == 0 and left == sorted(OTHERS),
      "a passing run: the model's logs removed, every other file kept",
      f"exit {rc}, left {left}")
left, rc = run("fail")
check(rc == 1 and left == sorted(LOGS + OTHERS),
      "a failing run: the logs kept to look at", f"exit {rc}, left {left}")
left, rc = run("pass", keep=True)
check(rc == 0 and left == sorted(LOGS + OTHERS),
      "BTSCRASH_KEEP_LOGS=1: a passing run keeps them", f"exit {rc}, left {left}")
t = Tap()
with open(os.devnull, "w") as null:
    out, sys.stdout = sys.stdout, null
    try:
        rc = t.done()
    finally:
        sys.stdout = out
check(rc == 0, "no results dir: nothing pruned, exit 0")

MAKES = re.compile(r"^\s*(vm_workdir|vm_setup|vm_guest)\b|mktemp -d", re.M)
EXEC = re.compile(r"^\s*exec\s+(?![0-9]*[<>])", re.M)   # not a redirection
bad = []
for path in sorted(glob.glob(os.path.join(HERE, "vm", "*.sh"))):
    text = open(path).read()
    if MAKES.search(text) and EXEC.search(text):
        bad.append(os.path.basename(path))
check(not bad, "no VM script that makes a scratch directory execs away its "
      "EXIT trap", " ".join(bad))
sys.exit(T.done())
