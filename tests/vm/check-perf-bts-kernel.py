#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of perf-bts-kernel.sh (the per-CPU kernel BTS ring under real
perf, issues 25 §3 and 26 §3), TAP, for each of perf's BTS users
(intel_bts full, intel_bts snapshot, the BTS event): perf's data equal
to the model's log of the user records written on CPU 0 (all of them,
the newest for the snapshot); the oops report's records of CPU 0's
kernel ring a contiguous stretch of the model's kernel records there,
with a suspend and a gap marker (reason perf) exactly where perf's
records are, recording again from perf's release up to the oops; no
WARNING.  `--keep LOG OUT` (the test's watcher) copies CPU 0's entries
of the model's log.
Usage: check-perf-bts-kernel.py RESULTS_DIR | --keep LOG OUT"""

import importlib
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
po = importlib.import_module("check-perf-oops")    # report(), address(), segment()
cv = po.cv
check = cv.check
_spec = importlib.util.spec_from_file_location(
    "btslog", os.path.join(HERE, "..", "..", "qemu", "bts-log.py"))
btslog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(btslog)
USER_MAX = cv.TASK_SIZE_MAX
MODES = {"full": "intel_bts full", "snap": "intel_bts snapshot",
         "event": "the BTS event (branches:u -c 1)"}
SUSPEND, GAP = "S", "G"         # the ring's markers around a perf hold


def entry_at(data, off):
    """True if data holds a plausible log entry at off: CPU 0 or 1, kind
    0 to 2, its slot a whole 24-byte record into its buffer."""
    linear, _phys, base, cpu, kind = struct.unpack_from("<QQQII", data, off + 24)
    return cpu < 2 and kind < 3 and 0 <= linear - base < 1 << 26 and \
        (linear - base) % 24 == 0


def keep(log, out):
    """CPU 0's entries of the model's log (read in pieces: hundreds of
    MB).  The watcher empties the log under QEMU, whose 1 MiB stdio buffer
    ends mid-entry: the first whole entry is found by its fields."""
    size = btslog.ENTRY_SIZE
    with open(log, "rb") as f, open(out, "wb") as o:
        data = f.read(size * 65536)
        start = next((s for s in range(size) if len(data) >= s + 64 * size and
                      all(entry_at(data, s + i * size) for i in range(64))), None)
        if start is None:
            return
        data = data[start:]
        while data:
            whole = len(data) - len(data) % size
            o.write(b"".join(data[i:i + size] for i in range(0, whole, size)
                             if data[i + 48:i + 52] == bytes(4)))
            more = f.read(size * 65536)
            data = data[whole:] + more if more else b""


def expected(data):
    """CPU 0's kernel-ring view of its log (bytes, whole entries): each
    kernel record as (from, to), each run of user records (perf's: the
    kernel ring records no user branch) as a suspend and a gap marker;
    and perf's records, (from, to)."""
    seq, perf = [], []
    for frm, to, *_ in btslog.ENTRY.iter_unpack(data):
        if frm < USER_MAX:
            if not seq or seq[-1] != GAP:
                seq += [SUSPEND, GAP]
            perf.append((frm, to))
        else:
            seq.append((frm, to))
    return seq, perf


def where(text, syms):
    """The addresses a printed end of a branch can be: `name+0xoff/0xsize`
    (every symbol of that name: static functions share names) or a raw
    `0x…` (%pS of a user address)."""
    m = re.fullmatch(r"0x([0-9a-f]+)", text)
    if m:
        return frozenset([int(m.group(1), 16)])
    m = po.SYM.match(text)
    return frozenset(a + int(m.group(2), 16) for a in syms.get(m.group(1), ())) \
        if m else frozenset()


def printed(recs, syms):
    """The report's records: SUSPEND, GAP (markers of reason perf) or a
    branch as the (from, to) address sets it can be; None for any other."""
    out = []
    for r in recs:
        if re.match(r"suspended \(perf\) at \d+\.\d{6}s$", r):
            out.append(SUSPEND)
        elif re.match(r"gap \(perf\), resumed at \d+\.\d{6}s after \d+ ns$", r):
            out.append(GAP)
        else:
            p = r.split(" -> ")
            a = [where(x, syms) for x in p] if len(p) == 2 else [frozenset()]
            out.append(tuple(a) if all(a) else None)
    return out


def same(rec, want):
    """A log's (from, to) or marker against a printed record."""
    if isinstance(want, str) or isinstance(rec, str):
        return rec == want
    return rec[0] in want[0] and rec[1] in want[1]


def find(seq, want):
    """Where want is a contiguous stretch of seq, the last such; -1."""
    n = len(want)
    for i in range(len(seq) - n, -1, -1):
        if n and same(seq[i], want[0]) and all(same(seq[i + k], want[k]) for k in range(n)):
            return i
    return -1


def check_ring(mode, seg, seq, syms):
    """The oops report's records of CPU 0's kernel ring against the log."""
    recs = po.report(seg)
    got = printed(recs, syms)
    what = MODES[mode]
    check("lkdtm_EXCEPTION" in seg and
          re.search(r"last \d+ kernel branches on CPU 0 \(BTS\)", seg),
          f"{what}: perfgap oopsed on CPU 0, the report prints its kernel ring",
          seg[-1500:])
    last_gap = max((i for i, r in enumerate(got) if r == GAP), default=-1)
    check(last_gap > 0 and got[last_gap - 1] == SUSPEND and
          len(got) - last_gap > 1 and None not in got and
          all(isinstance(r, tuple) for r in got[last_gap + 1:]) and
          "oops_begin" in " ".join(recs[-6:]),
          f"{what}: the ring's last marker pair is a suspend and a gap (reason "
          "perf), then branches only, up to oops_begin",
          [r for r in recs if "(perf)" in r] + recs[-3:] +
          [recs[i] for i, r in enumerate(got) if r is None][:3])
    at = find(seq, got)
    check(got and at >= 0 and at + len(got) < len(seq),
          f"{what}: the report's {len(got)} records are a contiguous stretch of "
          "the model's kernel records on CPU 0, suspend+gap exactly where perf's "
          "records are, every kernel branch from perf's release to the oops",
          f"{len(seq)} expected; printed around the last gap: "
          f"{recs[max(0, last_gap - 2):last_gap + 3]}")


def check_perf(mode, data, perf):
    """perf's records (data.log) against the model's user records on CPU 0."""
    what = MODES[mode]
    got = po_records(re.findall(rf"^PBK-PERF: {mode} (.*)$", data, re.M))
    got = [g for g in got if g != (0, 0)]       # padding perf stores
    want = perf
    if mode == "event":     # the BTS event drops kernel addresses
        want = [w for w in want if w[1] < USER_MAX]
    if mode == "snap":
        ok = got and got == want[-len(got):] and len(got) < len(want)
    else:
        ok = got == want and len(want) > 2000
    check(ok, f"{what}: perf's {len(got)} records are the model's "
          f"{'newest ' if mode == 'snap' else ''}user records on CPU 0 "
          f"({len(want)}), in order", diff(got, want))
    if mode == "full":
        check(re.search(r"^PBK-TRUNCATED: full 0$", data, re.M),
              "intel_bts full: no AUX record truncated",
              re.findall(r"^PBK-TRUNCATED: .*$", data, re.M))


def po_records(lines):
    """(from, to) of each "FROM TO" hex pair; (-1, -1) for another line."""
    out = []
    for ln in lines:
        m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+)", ln.strip())
        out.append((int(m.group(1), 16), int(m.group(2), 16)) if m else (-1, -1))
    return out


def diff(got, want):
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
             min(len(got), len(want)))
    return (f"{len(got)} got, {len(want)} wanted; first difference at {i}: "
            f"got {got[i] if i < len(got) else None}, "
            f"wanted {want[i] if i < len(want) else None}")


def main():
    if sys.argv[1] == "--keep":
        keep(sys.argv[2], sys.argv[3])
        return 0
    res = sys.argv[1]
    console = cv.read(os.path.join(res, "console.log"))
    data = cv.read(os.path.join(res, "data.log")).replace("\r", "")
    check("PBK-DONE" in console and "PBK-DATA-DONE" in data,
          "the VM ran the three perf sessions to the end", console[-2000:])
    syms = {}
    for ln in cv.read(os.path.join(res, "vmlinux.syms")).splitlines():
        p = ln.split()
        if len(p) == 3:
            syms.setdefault(p[2], []).append(int(p[0], 16))
    for mode in MODES:
        seg = po.segment(console, f"PBK-BEGIN {mode}", f"PBK-END {mode}")
        path = os.path.join(res, f"bts-{mode}.log")
        data_log = open(path, "rb").read() if os.path.exists(path) else b""
        seq, perf = expected(data_log[:len(data_log) - len(data_log) % btslog.ENTRY_SIZE])
        check_ring(mode, seg, seq, syms)
        check_perf(mode, data, perf)
    bad = [ln for ln in console.splitlines()
           if re.search(r"WARNING:|unchecked MSR|bts-model:|irq loop stuck", ln)]
    check(not bad, "no WARNING, unchecked MSR access or model stop", bad[:5])
    sys.exit(cv.tap.done())


if __name__ == "__main__":
    main()
