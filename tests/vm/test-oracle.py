#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The VM tests' oracle (oracle.py) on logs made here, entry by entry, in
the model's format (qemu/bts-log.py): it must find a trace's ring,
report records the CPU wrote there after the trace's newest, and not take
another ring's records for them -- with the rings reached directly
(linear = direct map) and through a KPTI window (one linear window for
every ring a CPU loads).

The case that made the buffer base part of the log: a ring freed, and a
new one allocated 15 pages further into the same memory (24-byte slots
line up again every 3 pages), whose first records landed just after the
old ring's newest slot; an oracle that guessed rings from page alignment
took them for records the core had missed (vm-hw-pti, once in CI).
Usage: test-oracle.py"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from oracle import Log, Oracle, bts_log, MARKER_TAG, any_record  # noqa: E402
from tap import Tap  # noqa: E402

T = Tap()
check = T.check
PAGE, CAP = 4096, 4096
DIRECT = 0xffff888000000000
WINDOW = 0xfffffe0000377000       # a CPU's cpu_entry_area window


class Guest:
    """Writes log entries as the model would: ring at guest-physical RING,
    reached through the direct map or through WINDOW (KPTI)."""

    def __init__(self, pti):
        self.pti, self.entries = pti, []

    def write(self, ring, slot, frm, to, cpu=0):
        base = WINDOW if self.pti else DIRECT + ring
        self.entries.append(bts_log.ENTRY.pack(
            frm, to, 0, base + 24 * slot, ring + 24 * slot, base, cpu, 0))
        return len(self.entries) - 1

    def log(self, d):
        path = os.path.join(d, "bts.log")
        with open(path, "wb") as f:
            f.write(b"".join(self.entries))
        return Log(path)


def user_rec(n):
    return 0x401000 + 16 * n, 0x402000 + 16 * n


def build(pti, d, missed):
    """A log: ring A's user records (the core's), then -- when MISSED -- one
    more user record in A the core lacks, the fault's exception record,
    ring B 15 pages into A's memory, and a new ring at A's start.
    Returns (log, the core's records, A, B, index of the core's newest)."""
    g = Guest(pti)
    a, b = 0x1000000, 0x1000000 + 15 * PAGE
    # 2557 user records, two kernel markers' slots skipped (not in the
    # log: the kernel writes markers, not the CPU); A's newest is slot 2558
    core, slot = [], 0
    for n in range(2557):
        if n == 1000:
            slot += 2
        last = g.write(a, slot, *user_rec(n))
        core.append(user_rec(n) + (0,))
        slot += 1
    core.insert(1000, (MARKER_TAG | 1, 0, 0))       # markers in the core
    if missed:
        g.write(a, slot, *user_rec(9999))
        slot += 1
    # the thread faults: the exception record has a kernel destination
    g.write(a, slot, 0, 0xffffffff81000000)
    # A freed; B allocated 15 pages in: its slot 1.. is A's slot 2561..
    for n in range(5):
        g.write(b, 1 + n, *user_rec(5000 + n), cpu=1)
    # A's pages again, a third ring from its start (a new life)
    for n in range(3):
        g.write(a, n, *user_rec(6000 + n))
    return g.log(d), core, a, b, last


def run(pti, d):
    mode = "window (KPTI)" if pti else "direct map"
    log, core, a, b, last = build(pti, d, False)
    m = Oracle(log).match(core, CAP)
    check(m is not None and m[0] == a and m[1] == last,
          f"{mode}: the core's ring and newest record found",
          repr(m and (hex(m[0]), m[1])))
    check(m is not None and m[2] == [],
          f"{mode}: another ring's records in the same pages, slots lined "
          "up, and a new life from the ring's start are not taken for "
          "records the core missed",
          m and [str(log.entry(i)) for i in m[2]])
    check(log.ring(len(log) - 4) == b and log.slot(len(log) - 4) == 5,
          f"{mode}: an entry's ring and slot from the buffer base")
    check(Oracle(log).match(core[:-1] + [user_rec(7777) + (0,)], CAP) is None,
          f"{mode}: a trace no ring ends with: none found")
    # every record kept (kdump's per-CPU rings): the exception record
    # written into A after the newest counts
    m = Oracle(log).match(core, CAP, keep=any_record)
    check(m is not None and m[2] == [last + 1],
          f"{mode}: keeping every record, the later kernel record in A counts",
          m and [str(log.entry(i)) for i in m[2]])
    log.f.close()

    log, core, a, b, last = build(pti, d, True)
    m = Oracle(log).match(core, CAP)
    check(m is not None and m[1] == last and m[2] == [last + 1],
          f"{mode}: a newer user record in the core's ring is reported",
          m and [str(log.entry(i)) for i in m[2]])
    log.f.close()


def main():
    with tempfile.TemporaryDirectory() as d:
        for pti in (False, True):
            run(pti, d)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
