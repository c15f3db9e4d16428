#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A core of 10 000 threads (issue 30 §3): made by make-threads-core from
# tests/fixtures/crasher-abort.core (an NT_PRSTATUS and a trace note per
# thread, appended by the library's writer), read by btsdump in JSON, text
# and --thread modes.  Checks every thread is found, in note order after
# the faulting one, with its own records and facts, and that btsdump's peak
# RSS (getrusage of the child, from wait4) stays under 100 MB; before the
# fix each thread cost ~100 KB (1 GB).  Every btsdump runs before any
# output is parsed: a child's ru_maxrss includes the RSS of the process it
# was forked from, before exec, so this script stays small (~10 MB) then.  Time is not asserted: see
# bench/threads-bench.sh.  Usage: test-threads.py BTSDUMP MAKE-THREADS-CORE.
# TAP.
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap  # noqa: E402
BTSDUMP, MAKE = (os.path.abspath(a) for a in sys.argv[1:3])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(SRC, "tests", "fixtures", "crasher-abort.core")
EXE = os.path.join(SRC, "tests", "fixtures", "crasher")
N = 10000
TID_BASE, CAP_BASE, PREFIX_MOD = 1000000, 100000, 4   # make-threads-core.c
RSS_MAX_MB = 100
T = Tap()
check = T.check


def sanitized(path):
    """Whether the binary was built with AddressSanitizer (test.sh's asan
    pass): its shadow memory and quarantine make peak RSS meaningless, so
    the memory bound is checked in the plain build and skipped here."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


SANITIZED = sanitized(BTSDUMP)


def check_rss(rss, what):
    if SANITIZED:
        T.skip("%s peak RSS %.1f MB: AddressSanitizer build, the bound "
               "holds for the plain build" % (what, rss))
        return
    check(rss <= RSS_MAX_MB, "%s peak RSS %.1f MB <= %d MB" % (what, rss, RSS_MAX_MB))


def run(args, out_path):
    """Runs args with stdout to out_path: (exit status, stderr, peak RSS MB)."""
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(args, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read().decode(errors="replace"), ru.ru_maxrss / 1024


def thread_ok(t, k, base):
    """Thread k (1..N) of make-threads-core: its tid, capacity, records."""
    nr = 1 + k % PREFIX_MOD
    b = t["branches"]
    return (t["tid"] == TID_BASE + k and not t["faulting"] and
            t["trace"]["capacity"] == CAP_BASE + k and t["trace"]["records"] == nr and
            len(b) == nr and b[0]["from"] == hex(0x100000 + 16 * k) and
            b[0]["to"] == hex(0x100008 + 16 * k) and
            all((b[i]["from"], b[i]["to"]) == (base[i - 1]["from"], base[i - 1]["to"])
                for i in range(1, nr)))


def test_json(tmp, status, err, rss):
    check(status == 0, "btsdump --json on %d threads exits 0" % (N + 1), err)
    check_rss(rss, "btsdump --json")
    with open(os.path.join(tmp, "out.json")) as f:
        doc = json.load(f) if status == 0 else {"threads": []}
    th = doc["threads"]
    check(len(th) == N + 1, "every thread found (%d)" % len(th))
    if len(th) != N + 1:
        return
    check(th[0]["tid"] == 21275 and th[0]["faulting"] and len(th[0]["branches"]) == 15,
          "the faulting thread first, with its 15 branches")
    bad = [k for k in range(1, N + 1) if not thread_ok(th[k], k, th[0]["branches"])]
    check(not bad, "threads 1..%d in note order, each with its own records" % N,
          "wrong: %s" % bad[:10])


def test_text(tmp, status, err, rss):
    out = os.path.join(tmp, "out.txt")
    check(status == 0, "btsdump (text) exits 0", err)
    check_rss(rss, "btsdump (text)")
    with open(out) as f:
        heads = [l.split()[1] for l in f if l.startswith("thread ")]
    want = ["21275"] + [str(TID_BASE + k) for k in range(1, N + 1)]
    check(heads == want, "text: a section per thread, in order (%d)" % len(heads))


def test_one_thread(tmp, status, err, rss):
    k = N - 1
    out = os.path.join(tmp, "one.json")
    with open(out) as f:
        th = json.load(f)["threads"] if status == 0 else []
    check(status == 0 and len(th) == 1 and th[0]["tid"] == TID_BASE + k,
          "--thread picks thread %d of %d" % (k, N), err)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        core = os.path.join(tmp, "threads.core")
        p = subprocess.run([MAKE, BASE, str(N), core], capture_output=True, text=True)
        check(p.returncode == 0, "make-threads-core writes %d threads" % N, p.stderr)
        if p.returncode == 0:
            read_all(core, tmp)
    return T.done()


def read_all(core, tmp):
    """btsdump in each mode, all run first, then their outputs checked."""
    runs = [run(args, os.path.join(tmp, out)) for args, out in (
        ([BTSDUMP, "--json", core, EXE], "out.json"),
        ([BTSDUMP, core, EXE], "out.txt"),
        ([BTSDUMP, "--json", "--thread", str(TID_BASE + N - 1), core, EXE], "one.json"))]
    print("# this script's own peak RSS while they ran: %.1f MB" %
          (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    test_json(tmp, *runs[0])
    test_text(tmp, *runs[1])
    test_one_thread(tmp, *runs[2])


if __name__ == "__main__":
    sys.exit(main())
