# SPDX-License-Identifier: GPL-2.0-or-later
"""The stock-kernel collector's snapshot file (daemon/lbr-snapshot.h,
struct btsdumpd_lbr_snap) made from a fixture's real branches, for the
handler's and the companion's host tests (tests/test-btsdumpd-lbr.py,
tests/test-companion.sh).  As a script: writes the snapshot of CORE's
faulting thread from RECORDS (oldest first) into DIR/TID; with --arm,
also makes DIR a running collector's (arm()) while COMMAND runs.
Usage: lbrsnap.py CORE RECORDS DIR [--arm COMMAND...]"""
import fcntl
import os
import struct
import subprocess
import sys
import time

MAGIC, DEPTH = 0x3172626c, 32


def records(path):
    """(from, to) of a fixture's .records file, oldest first."""
    out = []
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            f, t = line.split()[:2]
            out.append((int(f, 0), int(t, 0)))
    return out


def core_tid(notes):
    """pr_pid of the first NT_PRSTATUS (type 1, name CORE) of NOTES
    [(type, name, desc)]: the faulting thread."""
    return next(struct.unpack_from("<I", d, 32)[0] for t, n, d in notes
                if n == "CORE" and t == 1)


def snapshot(tid, newest_first, age_ns=0, nr=DEPTH, depth=0, cpu=0, kept=-1):
    """struct btsdumpd_lbr_snap: newest first, 32 slots, zeros after;
    depth: the CPU's LBR depth the collector found (0: unknown); kept:
    how many slots perf's read filled (-1: unknown)."""
    ents = (list(newest_first) + [(0, 0)] * DEPTH)[:DEPTH]
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return struct.pack("<IIIIQiIIi", MAGIC, tid, tid, 11, now - age_ns, nr, depth, cpu,
                       kept) + \
        b"".join(struct.pack("<QQQ", f, t, 0) for f, t in ents)


def progress(d, ns):
    """DIR/progress: the collector settled every snapshot taken before ns."""
    with open(os.path.join(d, "progress"), "wb") as f:
        f.write(struct.pack("<Q", ns))


def arm(d, settled=True):
    """DIR as a running collector leaves it: DIR/armed locked (the lock
    held through the returned file, to be kept open), DIR/progress past
    every snapshot (settled) or at 0 (none settled yet)."""
    path = os.path.join(d, "armed")
    open(path, "w").close()
    f = open(path)
    fcntl.flock(f, fcntl.LOCK_EX)
    progress(d, 2**63 - 1 if settled else 0)
    return f


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "vm"))
    cv = __import__("check-vm")
    core, recs, out = sys.argv[1:4]
    tid = core_tid(cv.elf_notes(core))
    with open(os.path.join(out, str(tid)), "wb") as f:
        f.write(snapshot(tid, reversed(records(recs)[-DEPTH:])))
    if sys.argv[4:5] == ["--arm"]:
        lock = arm(out)
        sys.exit(subprocess.run(sys.argv[5:]).returncode)
