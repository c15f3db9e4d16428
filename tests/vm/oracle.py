#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The BTS model's log as an oracle for the VM tests: which ring of the
guest a trace (a core's thread note, a vmcore's CPU ring) came from, and
whether it holds exactly the newest records the model wrote there.
Used by check-vm.py and kdump-test.py; the log's format is read by
tests/qemu/bts-log.py, its one reader."""
import importlib.util
import os

TASK_SIZE_MAX = (1 << 47) - 4096          # x86-64, 4-level paging
MARKER_TAG, MARKER_MASK = 0xb75c << 48, 0xffff << 48

_spec = importlib.util.spec_from_file_location("bts_log", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "qemu", "bts-log.py"))
bts_log = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bts_log)


def read_log(res):
    """The entries of RES/bts.log, oldest first; None when the run had no
    model (the emulation backend)."""
    path = os.path.join(res, "bts.log")
    if not os.path.exists(path):
        return None
    return bts_log.read(path)


class Oracle:
    """Where the records of one thread note came from in the model's log.

    A thread's ring is physically contiguous (alloc_pages_exact), page
    aligned, CAPACITY 24-byte slots; the CPU writes each record into the
    slot after the previous one (the kernel's markers fill slots in
    between and are not in the log), back at the base after the last.  So
    the ring's user records, as a dump sees them, are the newest
    user-address records the model wrote into [base, base + 24 * capacity).
    The log does not say when a ring was freed and its pages reused by the
    next process's ring: a write that does not continue the ring's
    sequence (a lower slot that is no wrap) starts a new life of it."""

    def __init__(self, log):
        self.log = log
        self.by_ft = {}
        self.by_page = {}
        for i, e in enumerate(log):
            self.by_ft.setdefault((e.frm, e.to), []).append(i)
            self.by_page.setdefault(e.phys >> 12, []).append(i)

    @staticmethod
    def user(e):
        return e.frm < TASK_SIZE_MAX and e.to < TASK_SIZE_MAX

    @staticmethod
    def any(e):
        return True

    def writes(self, base, capacity):
        """Positions in the log of the model's writes into one ring, in order."""
        end = base + 24 * capacity
        pos = []
        for page in range(base >> 12, (end + 4095) >> 12):
            pos += [i for i in self.by_page.get(page, ())
                    if base <= self.log[i].phys < end and
                    (self.log[i].phys - base) % 24 == 0]
        return sorted(pos)

    def later(self, ring, last, base, capacity, keep):
        """Writes KEEP keeps after LAST in the same life of the ring."""
        slot = (self.log[last].phys - base) // 24
        out = []
        for i in ring:
            if i <= last:
                continue
            s = (self.log[i].phys - base) // 24
            if s <= slot and not (slot >= capacity - 8 and s < 8):
                break           # a new life: the pages hold another ring
            slot = s
            if keep(self.log[i]):
                out.append(i)
        return out

    def match(self, recs, capacity, keep=None):
        """(the ring's writes up to the note's last record, writes after
        it), of those KEEP keeps (default: user-address records, what a
        user core holds), for the records RECS ((from, to, flags), oldest
        first, markers skipped); None if no ring of the log ends with them."""
        keep = keep or self.user
        want = [(f, t) for f, t, _ in recs if (f & MARKER_MASK) != MARKER_TAG]
        if not want:
            return None
        for last in reversed(self.by_ft.get(want[-1], [])):
            e = self.log[last]
            for j in range(capacity):   # the page-aligned bases holding e
                base = e.phys - 24 * j
                if base % 4096:
                    continue
                ring = self.writes(base, capacity)
                upto = [i for i in ring if i <= last and keep(self.log[i])]
                got = [(self.log[i].frm, self.log[i].to) for i in upto[-len(want):]]
                if got == want:
                    return upto, self.later(ring, last, base, capacity, keep)
        return None
