#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of perf-oops-test.sh (the LBR as the kernel tail on the PMU
model, real perf taking it and giving it back, issue 26 §3, issue 25
§3): oopses under two overlapping `perf record -j any,u` (LBR users),
under the system-wide one alone after the per-task one ended, and under
the per-task one alone after the system-wide one ended while the
per-task one's event was on, print the kernel ring's gap marker as a gap
(reason perf), never as a branch from its tag; the oopses after both
left (each order) print their own kernel branches, a stretch of the
model's kernel pushes on CPU 0 (lbr-oops3.log, lbr-oops5.log, the log's
tails the test kept); bpf_get_branch_snapshot() under the system-wide
user returns 32 entries equal to the model's newest user pushes on CPU 0
(lbr-snap.log), and without a perf LBR user none (-ENOENT), the
recorder's LBR left on (the third oops); every perf sample's branch
stack holds user branches only, none of the recorder's (data.log);
perf_cpu_time_max_percent 0 from the kernel command line; vm-lib.sh's
kmark markers are lines of their own after the tty's whole lines.  TAP.
Usage: check-perf-oops.py RESULTS_DIR"""

import importlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
lbr = importlib.import_module("check-lbr")     # the LBR log's reader, check-vm's helpers
cv, lbrlog = lbr.cv, lbr.lbrlog
check = cv.check
# a record as the oops report prints it: " [  n] TEXT"
LINE = re.compile(r"^\s*\[\s*(\d+)\] (.*?)\s*$")
SYM = re.compile(r"^(\w[\w.]*)\+0x([0-9a-f]+)/0x[0-9a-f]+$")


def segment(console, first, last):
    """The console between the init's marker lines first and last."""
    m = re.search(rf"^{first}\r?$(.*?)^{last}\r?$", console, re.M | re.S)
    return m.group(1) if m else ""


def report(seg):
    """The records the oops report printed after its header, oldest first."""
    lines, on = [], False
    for ln in seg.splitlines():
        text = re.sub(r"^\[[ 0-9.]+\] ", "", ln)     # the printk time
        if "kernel branches on CPU" in text:
            lines, on = [], True
        elif on:
            m = LINE.match(text)
            if not m:
                on = False
                continue
            lines.append(m.group(2))
    return lines


def check_held(seg, n, what):
    recs = report(seg)
    check("lkdtm_EXCEPTION" in seg and len(recs) == 1 and
          re.match(r"gap \(perf\), resumed at \d+\.\d{6}s after \d+ ns$", recs[0]),
          f"oops {n} ({what}): the report prints the kernel ring's one record, "
          "its gap marker (reason perf), as a gap", recs)


def address(sym, syms):
    m = SYM.match(sym)
    return syms[m.group(1)] + int(m.group(2), 16) if m and m.group(1) in syms else None


def log_pushes(path):
    """CPU 0's pushes in the kept tail of the model's log: [(from, to)]."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    data = aligned(data)
    return [(frm, to) for frm, to, _i, cpu, *_ in lbrlog.ENTRY.iter_unpack(data) if cpu == 0]


def aligned(data):
    """DATA from its first whole entry to its last: the log is written in
    buffered chunks, not entries, so a copy or an emptying of the file
    under QEMU may cut one at either end.  The first offset from which 64
    entries read as entries (vCPU 0 or 1, a known kind and format)."""
    size = lbrlog.ENTRY.size
    for off in range(size):
        head = data[off:off + 64 * size]
        if len(head) == 64 * size and all(
                e[3] < 2 and e[8] < 3 and e[9] < 6 for e in lbrlog.ENTRY.iter_unpack(head)):
            data = data[off:]
            return data[:len(data) - len(data) % size]
    return b""


def check_own(res, seg, n, log):
    """An oops after perf left: the LBR is the recorder's again; its
    branches into the oops are the model's last kernel pushes (LOG, the
    log's kept tail), one contiguous stretch."""
    recs = report(seg)
    syms = {}
    for ln in cv.read(os.path.join(res, "vmlinux.syms")).splitlines():
        p = ln.split()
        if len(p) == 3:
            syms.setdefault(p[2], int(p[0], 16))
    pairs = [r.split(" -> ") for r in recs]
    run = [(address(p[0], syms), address(p[1], syms)) for p in pairs if len(p) == 2]
    check(len(recs) == 16 and len(run) == 16 and "exc_page_fault" in " ".join(recs) and
          "oops_begin" in " ".join(recs[-6:]),
          f"oops {n} (perf gone): the recorder has the LBR back, the report prints "
          "16 branches (print_records' default) from the fault into oops_begin", recs)
    seq = log_pushes(os.path.join(res, log))
    k = len(run)
    found = k and all(a and b for a, b in run) and \
        any(seq[i:i + k] == run for i in range(len(seq) - k, -1, -1))
    check(found, f"oops {n}: its branches are a contiguous stretch of the model's "
          f"kernel pushes on CPU 0 ({log})", [(hex(a or 0), hex(b or 0)) for a, b in run[-4:]])


def snapshot(data, who):
    """`bpfsnap run`'s output on the data port (WHO: HELD or FREE): the
    helper's return and the entries, newest first."""
    ret = re.search(rf"^{who}-LBRSNAP: ret (-?\d+)$", data, re.M)
    ents = [(int(f, 16), int(t, 16)) for f, t in
            re.findall(rf"^{who}-LBRSNAP: \d+ (0x[0-9a-f]+) (0x[0-9a-f]+)$", data, re.M)]
    return (int(ret.group(1)) if ret else None), ents


def check_snapshots(res, data):
    """bpf_get_branch_snapshot() on CPU 0: under the system-wide perf
    user, the 32 entries perf read, equal to the model's newest 32
    pushes there (user ones: perf's filter); with no perf LBR user, none
    (the stack is the recorder's; check_own's third oops: still on)."""
    ret, ents = snapshot(data, "HELD")
    pushes = [p for p in log_pushes(os.path.join(res, "lbr-snap.log"))
              if lbr.user(p[0]) and lbr.user(p[1])]
    want = ents[::-1]
    k = len(want)
    found = k == lbrlog.DEPTH and any(pushes[i:i + k] == want
                                      for i in range(len(pushes) - k, -1, -1))
    check(ret == 24 * lbrlog.DEPTH and found,
          f"bpf_get_branch_snapshot under perf's LBR user: {lbrlog.DEPTH} entries, "
          "the model's newest user pushes on CPU 0 (lbr-snap.log), newest first",
          (ret, [(hex(f), hex(t)) for f, t in ents[:3]], len(pushes)))
    ret, ents = snapshot(data, "FREE")
    check(ret == -2 and not ents,
          "bpf_get_branch_snapshot with no perf LBR user: none (-ENOENT), the "
          "recorder's stack neither read nor stopped", (ret, ents[:3]))


def check_perf(data):
    """Every perf session kept its samples, each branch stack user
    branches only (-j any,u): none of the recorder's kernel entries."""
    for who, what in (("a", "system-wide"), ("b", "per task, over the oops"),
                      ("c", "system-wide, ended first"),
                      ("d", "per task, over the oops, ended last")):
        stacks = [re.findall(r"(0x[0-9a-f]+)/(0x[0-9a-f]+)/", ln)
                  for ln in re.findall(rf"^BRSTACK-{who}: (.*)$", data, re.M)]
        stacks = [s for s in stacks if s]
        bad = [s for s in stacks if len(s) > lbrlog.DEPTH or
               any(not lbr.user(int(a, 16)) for e in s for a in e)]
        check(stacks and not bad, f"perf {who} ({what}): {len(stacks)} samples with "
              f"branch stacks of at most {lbrlog.DEPTH} user branches, none of the recorder's",
              bad[:2])


def kmark_split(console, i, width=3000):
    """"" if init's tty line KMARK-LINE-i (width x's) is whole and its marker
    KMARK-i a line of its own after it, else what is wrong.  The kernel's
    other console messages (an "input:" probe, "tsc: Refined TSC ...",
    perf's NMI notes) are written to the UART between the tty's characters
    and may split the tty line anywhere (a CI run: KMARK-LINE-7 cut by
    one); their text is not the tty's, and a line's x's up to its first
    other character are."""
    head = f"KMARK-LINE-{i} "
    start = console.find(head)
    if start < 0:
        return "no tty line"
    m = re.compile(rf"^KMARK-{i}\r?$", re.M).search(console, start)
    if not m:
        return "no marker line of its own after the tty line"
    nxt = console.find(f"KMARK-LINE-{i + 1} ", m.end())
    after = console[m.end():nxt if nxt >= 0 else len(console)]
    if re.search(r"^x+\r?$", after, re.M):
        return "tty line's x's after the marker"
    pieces = console[start + len(head):m.start()].split("\n")
    xs = sum(len(p) - len(p.lstrip("x")) for p in pieces)
    return "" if xs == width else f"{xs} of the tty line's {width} x's before the marker"


def check_kmark(console):
    """vm-lib.sh's kmark sends the tty's output first: each of the init's
    long tty lines is whole, and its marker a line of its own after it."""
    bad = [(i, why) for i in range(1, 9) if (why := kmark_split(console, i))]
    lines = [f"{ln[:16]}...{ln[-24:]}" if len(ln) > 40 else ln
             for ln in console.splitlines() if "KMARK" in ln or "x" * 40 in ln]
    check(not bad, "kmark: 8 markers each a line of its own, after the whole tty "
          "line before it (CPU 0 busy)", (bad, lines[:24]))


def main():
    res = sys.argv[1]
    console = cv.read(os.path.join(res, "console.log"))
    check("PERF-OOPS-DONE" in console, "the VM ran the five oopses and perf to the end",
          console[-2000:])
    check(re.search(r"^PERF-OOPS-CPU-TIME: 0\r?$", console, re.M),
          "perf_cpu_time_max_percent 0 from the kernel command line (no PMI throttling)",
          [ln for ln in console.splitlines() if "CPU-TIME" in ln])
    check_kmark(console)
    check_held(segment(console, "PERF-OOPS-SNAP", "PERF-OOPS-2"), 1,
               "two overlapping perf users hold the LBR")
    check_held(segment(console, "PERF-OOPS-2", "PERF-OOPS-3"), 2,
               "the per-task one left, the system-wide one holds it")
    check_held(segment(console, "PERF-OOPS-4", "PERF-OOPS-5"), 4,
               "the system-wide one left while the per-task one's event was on, "
               "the per-task one holds it")
    check("0xb75c" not in console, "no marker printed as a branch (its tag 0xb75c...)",
          [ln for ln in console.splitlines() if "0xb75c" in ln][:3])
    check_own(res, segment(console, "PERF-OOPS-3", "PERF-OOPS-3-END"), 3, "lbr-oops3.log")
    check_own(res, segment(console, "PERF-OOPS-5", "PERF-OOPS-END"), 5, "lbr-oops5.log")
    data = cv.read(os.path.join(res, "data.log")).replace("\r", "")
    check_snapshots(res, data)
    check_perf(data)
    cv.check_no_warnings(console)
    sys.exit(cv.tap.done(prune=res))


if __name__ == "__main__":
    main()
