#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of perf-bts-kernel.sh (the per-CPU kernel BTS ring under real
perf, issues 25 §3 and 26 §3), TAP, for each of perf's BTS users
(intel_bts full, intel_bts snapshot, the BTS event): perf's data equal
to the model's log of the user records written on CPU 0 (all of them,
the newest for the snapshot); the oops report's records of CPU 0's
kernel ring a contiguous stretch of the model's kernel records there
(a whole ring or more into the log the watcher kept),
with a suspend and a gap marker (reason perf) exactly where perf's
records are, recording again from perf's release up to the oops; no
WARNING.  For perf's LBR user (`-j any,u`) with `bpfsnap hold`'s
bpf_get_branch_snapshot() in its hold (mode lbr): the ring a contiguous
stretch of the model's kernel records on CPU 0 with no marker, the
snapshot and perf's release of the LBR in it, every PMI recorded; each
of perf's branch stacks equal to the stack the model held at an NMI
(lbr.log), full and in perfgap's loop; the snapshot equal to the
model's newest 32 user pushes up to the call to getppid.  `--keep LOG OUT` (the test's watcher) copies CPU 0's entries
of the model's log.
Usage: check-perf-bts-kernel.py RESULTS_DIR | --keep LOG OUT"""

import importlib
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (the models' logs, diff())
from oracle import diff  # noqa: E402
po = importlib.import_module("check-perf-oops")    # report(), address(), segment()
cv = po.cv
check = cv.check
btslog = oracle.bts_log
lbrlog = oracle.lbr_log
clp = importlib.import_module("check-lbr-perf")    # samples(), match()
USER_MAX = cv.TASK_SIZE_MAX
MODES = {"full": "intel_bts full", "snap": "intel_bts snapshot",
         "event": "the BTS event (branches:u -c 1)",
         "lbr": "perf's LBR user (-j any,u) and bpf_get_branch_snapshot"}
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


def oopsed(what, seg):
    check("lkdtm_EXCEPTION" in seg and
          re.search(r"last \d+ kernel branches on CPU 0 \(BTS\)", seg),
          f"{what}: perfgap oopsed on CPU 0, the report prints its kernel ring",
          seg[-1500:])


def check_ring(mode, seg, seq, syms):
    """The oops report's records of CPU 0's kernel ring against the log."""
    recs = po.report(seg)
    got = printed(recs, syms)
    what = MODES[mode]
    oopsed(what, seg)
    last_gap = max((i for i, r in enumerate(got) if r == GAP), default=-1)
    check(last_gap > 0 and got[last_gap - 1] == SUSPEND and
          len(got) - last_gap > 1 and None not in got and
          all(isinstance(r, tuple) for r in got[last_gap + 1:]) and
          "oops_begin" in " ".join(recs[-6:]),
          f"{what}: the ring's last marker pair is a suspend and a gap (reason "
          "perf), then branches only, up to oops_begin",
          [r for r in recs if "(perf)" in r] + recs[-3:] +
          [recs[i] for i, r in enumerate(got) if r is None][:3])
    start, end = find_holds(seq, got, last_gap)
    check(got and end >= 0 and end < len(seq),
          f"{what}: the report's {len(got)} records are a contiguous stretch of "
          "the model's kernel records on CPU 0, suspend+gap exactly where perf's "
          "records are (an earlier pair also where perf wrote none), every "
          "kernel branch from perf's release to the oops",
          f"{len(seq)} expected; printed around the last gap: "
          f"{recs[max(0, last_gap - 2):last_gap + 3]}")
    refilled(what, start, len(got))


def refilled(what, start, ring):
    """The ring's oldest record a whole ring or more into the kept log:
    CPU 0 refilled it after the watcher emptied the log (perf-bts-kernel.sh's
    dd), so no record of it can be older than the log.  A CI run's
    stretches began 2084 and 1510 records in, and one before the log."""
    check(start >= ring, f"{what}: the ring's oldest record is {ring} or more "
          "records into the kept log (refilled after the log was emptied)", start)


def find_holds(seq, got, last_gap):
    """Where GOT is a contiguous stretch of SEQ, the last such; but a
    suspend+gap pair of GOT's before LAST_GAP may also stand where the log has none: perf may
    hold BTS over a stretch in which perfgap writes no user branch (on a
    loaded host, switched in under perf's event and out again before it
    ran: seen in a cold CI run), a hold the model's log cannot show; the
    log's records must then go on across it unbroken.  Where in SEQ the
    match starts and ends; -1, -1."""
    for i in range(len(seq) - 1, -1, -1):
        if not got or not same(seq[i], got[0]):
            continue
        r, j = 0, i
        while r < len(got) and j < len(seq):
            if (got[r] == SUSPEND and r < last_gap - 1 and got[r + 1] == GAP
                    and seq[j] != SUSPEND):
                r += 2                  # an empty hold: nothing in the log
            elif same(seq[j], got[r]):
                r, j = r + 1, j + 1
            else:
                break
        if r == len(got):
            return i, j
    return -1, -1


def entered(rec, name, syms):
    """Whether a log's (from, to) ends at NAME."""
    return rec[1] in syms.get(name, ())


def user_read(stack):
    """An LBR stack ((from, to, ...), newest first) as Linux reads it for a
    user-only branch stack: up to the first empty entry, without the
    entries of kernel addresses (intel_pmu_lbr_filter(); the returns from
    interrupts end in user mode, so LBR_SELECT keeps them), compacted."""
    k = next((i for i, e in enumerate(stack) if not e[0]), len(stack))
    return [(e[0], e[1]) for e in stack[:k] if e[0] < USER_MAX and e[1] < USER_MAX]


def check_ring_lbr(seg, seq, syms, samples):
    """Mode lbr: the ring records on through perf's LBR hold, unmarked."""
    recs = po.report(seg)
    got = printed(recs, syms)
    what = MODES["lbr"]
    oopsed(what, seg)
    check(got and all(isinstance(r, tuple) for r in got) and
          "oops_begin" in " ".join(recs[-6:]),
          f"{what}: the ring's {len(got)} records are branches only, no "
          "suspend or gap marker, up to oops_begin",
          [r for r in recs if "(perf)" in r][:4] + recs[-3:])
    start, end = find_holds(seq, got, -1)     # no marker to stand alone
    check(got and end >= 0 and end < len(seq),
          f"{what}: the report's {len(got)} records are a contiguous stretch "
          "of the model's kernel records on CPU 0", f"{len(seq)} expected")
    refilled(what, start, len(got))
    # 6.12: __intel_pmu_snapshot_branch_stack (6.1: without the __)
    snap = [i for i, r in enumerate(recs) if "intel_pmu_snapshot_branch_stack+" in r]
    rel = [i for i, r in enumerate(recs) if "intel_pmu_lbr_del+" in r]
    check(snap and rel and snap[0] < rel[-1],
          f"{what}: in the ring, unbroken, the BPF snapshot inside perf's "
          "hold (intel_pmu_snapshot_branch_stack) and perf's release of the "
          "LBR after it (intel_pmu_lbr_del)", f"at {snap[:3]} and {rel[:3]}")
    pmis = sum(1 for r in seq if isinstance(r, tuple) and
               entered(r, "intel_pmu_handle_irq", syms))
    check(pmis >= samples > 0,
          f"{what}: the model logged CPU 0's kernel branch into "
          f"intel_pmu_handle_irq {pmis} times, perf has {samples} samples: "
          "the ring recorded every PMI of perf's hold")


def check_lbr(data, entries, gsyms):
    """Mode lbr: perf's branch stacks and the BPF snapshot (data.log)
    against the model's LBR log of CPU 0."""
    what = MODES["lbr"]
    got = clp.samples(data, "lbr")
    stacks = lbrlog.nmi_stacks(entries, 0)
    main_at = gsyms["main"]
    loop = [s for s in got if len(s) == lbrlog.DEPTH and s[:8] == [s[0]] * 8
            and main_at <= s[0][0] < main_at + 0x200]
    check(len(got) >= 5 and len(loop) * 2 >= len(got),
          f"{what}: {len(got)} samples, {len(loop)} of them 32 entries deep "
          "with perfgap's loop branch newest 8 times",
          [[(hex(f), hex(t)) for f, t in s[:2]] for s in got[:3]])
    miss = clp.match(got, stacks, lambda st, s: user_read(st))
    check(got and miss is None,
          f"{what}: each of perf's {len(got)} branch stacks equals the stack "
          f"the model held at an NMI, in order ({len(stacks)} NMIs logged)",
          f"sample {miss} matches no later NMI stack: "
          f"{got[miss][:3] if miss is not None else ''}")
    check(re.search(r"^PBK-SNAP: LBRS-RET: 768 1$", data, re.M),
          f"{what}: bpfsnap hold's program took one snapshot of 32 entries",
          re.findall(r"^PBK-SNAP: .*RET.*$|^PBK-SNAP: bpfsnap.*$", data, re.M))
    snap = po_records(re.findall(r"^PBK-SNAP: LBRS-E: (.*)$", data, re.M))
    pushes = [(e.frm, e.to) for e in entries
              if e.cpu == 0 and e.format == lbrlog.FORMAT_INTEL]
    k = max((i for i, p in enumerate(pushes) if p[1] == gsyms["getppid"]),
            default=-1)
    # the stack then; the helper copies all 32 of perf's slots, of which
    # the read filled those it kept, the rest the last PMI's read left
    want = user_read(pushes[max(0, k - 31):k + 1][::-1] if k >= 0 else [])
    n = len(want)
    left = got[-1][n:lbrlog.DEPTH] if got else []
    check(len(snap) == lbrlog.DEPTH and want and snap[:n] == want and
          snap[n:] == left,
          f"{what}: the BPF snapshot's first {n} entries are the model's "
          "newest user pushes on CPU 0 up to perfgap's call to getppid, "
          f"newest first, the user-to-user ones; its other {len(snap) - n} "
          "what the last PMI's read left", diff(snap, want + left))


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


def read_syms(path):
    """nm's lines: name -> [address, ...]."""
    syms = {}
    for ln in cv.read(path).splitlines():
        p = ln.split()
        if len(p) == 3:
            syms.setdefault(p[2], []).append(int(p[0], 16))
    return syms


def main():
    if sys.argv[1] == "--keep":
        keep(sys.argv[2], sys.argv[3])
        return 0
    res = sys.argv[1]
    console = cv.read(os.path.join(res, "console.log"))
    data = cv.read(os.path.join(res, "data.log")).replace("\r", "")
    check("PBK-DONE" in console and "PBK-DATA-DONE" in data,
          "the VM ran the four perf sessions to the end", console[-2000:])
    syms = read_syms(os.path.join(res, "vmlinux.syms"))
    gsyms = {k: v[0] for k, v in read_syms(os.path.join(res, "perfgap.syms")).items()}
    for mode in MODES:
        seg = po.segment(console, f"PBK-BEGIN {mode}", f"PBK-END {mode}")
        path = os.path.join(res, f"bts-{mode}.log")
        data_log = open(path, "rb").read() if os.path.exists(path) else b""
        seq, perf = expected(data_log[:len(data_log) - len(data_log) % btslog.ENTRY_SIZE])
        if mode == "lbr":
            check(not perf and re.search(r"^PBK-SNAP-RC: 0", console, re.M),
                  f"{MODES[mode]}: no BTS record of perf's, bpfsnap hold exited 0")
            check_ring_lbr(seg, seq, syms, len(clp.samples(data, "lbr")))
            check_lbr(data, lbrlog.read(os.path.join(res, "lbr.log")), gsyms)
            continue
        check_ring(mode, seg, seq, syms)
        check_perf(mode, data, perf)
    bad = [ln for ln in console.splitlines()
           if re.search(r"WARNING:|unchecked MSR|bts-model:|irq loop stuck", ln)]
    check(not bad, "no WARNING, unchecked MSR access or model stop", bad[:5])
    sys.exit(cv.tap.done(prune=res))


if __name__ == "__main__":
    main()
