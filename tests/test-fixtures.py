#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Remakes the fixtures from scratch on this machine (the crasher just built,
# real gdb single-stepping, generate-core-file, btsdump add-note) and checks
# that btsdump reads each trail the way the crash happened, and that gdb's
# `bts instruction-history` (gdb/bts.py) rebuilds, from the branches and
# the code alone, exactly the instructions gdb single-stepped (glibc's
# included).  Proves the pipeline behind the committed fixtures, not just
# the files.
# Usage: test-fixtures.py CRASHER BTSDUMP
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

crasher, btsdump = map(os.path.abspath, sys.argv[1:3])
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not shutil.which("gdb"):
    skip_all("gdb not installed")
T = Tap()
check = T.check


with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([os.path.join(src, "tests/fixtures/make-fixtures.sh"),
                        tmp, crasher, btsdump], capture_output=True, text=True)
    if not check(p.returncode == 0, "make-fixtures.sh remakes the fixtures",
                 p.stdout + p.stderr):
        sys.exit(T.done())

    def dump(mode):
        p = subprocess.run([btsdump, "--json", "--calls",
                            os.path.join(tmp, "crasher-%s.core" % mode), crasher],
                           capture_output=True, text=True)
        check(p.returncode == 0, "%s: btsdump exit %d %s" % (mode, p.returncode, p.stderr))
        return json.loads(p.stdout)["threads"][0]

    t = dump("null")
    calls = [c["function"] for c in t["calls"]]
    check(t["signal_name"] == "SIGSEGV", "null: SIGSEGV")
    check(calls == ["main", "serve", "parse_request", "checksum", "parse_request",
                    "dispatch", None], "null: call chain %s" % calls)
    last = t["branches"][-1]
    check(last["kind"] == "call" and last["to"] == "0x0", "null: last branch %s" % last)

    t = dump("smash")
    last = t["branches"][-1]
    check(last["kind"] == "return" and last["to"] == "0x414141414141" and
          last["from_symbol"].startswith("smash_victim+"), "smash: last %s" % last)

    t = dump("abort")
    check(t["signal_name"] == "SIGABRT", "abort: SIGABRT")
    check("abort" in [b["to_symbol"] for b in t["branches"]], "abort: trail enters abort")

    p = subprocess.run([btsdump, "--json", os.path.join(tmp, "crasher-threads.core"),
                        crasher], capture_output=True, text=True)
    th = json.loads(p.stdout)["threads"]
    check(len(th) == 2 and th[0]["faulting"] and th[0]["branches"][-1]["to"] == "0x0" and
          th[1]["branches"][-1]["to_symbol"] == "pthread_create@plt",
          "threads: one trail per thread, faulting first")

    p = subprocess.run([btsdump, os.path.join(tmp, "crasher-notrace.core")],
                       capture_output=True, text=True)
    check(p.returncode == 3, "notrace: exit %d" % p.returncode)

    def history(mode):
        """{tid: ([pc of each numbered line], [-- lines])} of every thread."""
        out, = btsgdb.run(crasher, os.path.join(tmp, "crasher-%s.core" % mode),
                          ["thread apply all bts instruction-history 1,1000000"],
                          btsdump)
        res = {}
        for tid, lines in btsgdb.by_thread(out).items():
            pcs, notes = res.setdefault(tid, ([], []))
            for line in lines:
                m = re.match(r"\s*\d+\t(?:=> |   )0x([0-9a-f]+)", line)
                if m:
                    pcs.append(int(m[1], 16))
                else:
                    notes.append(line.strip())
        return res

    for mode in ("null", "smash", "abort", "threads"):
        got = history(mode)
        for f in sorted(os.listdir(tmp)):
            if not (f.startswith("crasher-%s.records" % mode) and f.endswith(".insns")):
                continue
            with open(os.path.join(tmp, f)) as fh:
                ls = [l.strip() for l in fh if l.strip()]
            tid = int([l for l in ls if l.startswith("# tid ")][0].split()[2])
            want = [int(l, 16) for l in ls if not l.startswith("#")]
            pcs, notes = got.get(tid, ([], []))
            # a thread that ran on untraced (main, once gdb stopped recording
            # it) ends with that note and its pc in the core
            if notes == [n for n in notes if n.startswith("-- no trace from here")][:1] \
                    and notes:
                pcs = pcs[:-1]
            check(pcs and not [n for n in notes if "no trace from here" not in n]
                  and want[-len(pcs):] == pcs,
                  "%s LWP %d: instruction-history = the %d instructions stepped "
                  "(%d rebuilt; notes %s)" % (mode, tid, len(want), len(pcs), notes))

sys.exit(T.done())
