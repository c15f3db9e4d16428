#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The models' logs as oracles for the VM tests.  The BTS model's: which
ring of the guest a trace (a core's thread note, a vmcore's CPU ring) came
from, and whether it holds exactly the newest records the model wrote
there (check-vm.py, kdump-test.py); a log is gigabytes when the kernel
rings record every kernel branch, so it is mapped, not parsed: entries are
found with bytes searches and walked by offset, never made into objects.
The LBR model's, read in chunks (lbr_entries: check-lbr.py,
check-collector.py).  Entry layouts come from qemu/bts-log.py and
lbr-log.py, their one reader each; load() imports those (and the checks'
other dashed modules) by path, diff() says where two lists first differ."""
import importlib.util
import mmap
import os
import struct

TASK_SIZE_MAX = (1 << 47) - 4096          # x86-64, 4-level paging
MARKER_TAG, MARKER_MASK = 0xb75c << 48, 0xffff << 48
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load(name, *path):
    """The Python file at PATH (parts under the repository's root: "qemu",
    "bts-log.py") as module NAME: the files with a dash in their name."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, *path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bts_log = load("bts_log", "qemu", "bts-log.py")
lbr_log = load("lbr_log", "qemu", "lbr-log.py")
SIZE = bts_log.ENTRY_SIZE
WORDS = SIZE // 8           # from, to, flags, linear, phys, base, cpu|kind
RECORD = bts_log.RECORD_SIZE
assert bts_log.ENTRY.format == "<QQQQQQII" and SIZE == 56


class Log:
    """RES/bts.log, mapped: entry i is at byte i * 56."""

    def __init__(self, path):
        self.f = open(path, "rb")
        size = os.fstat(self.f.fileno()).st_size
        if size % SIZE:
            raise bts_log.FormatError("%s: %d bytes is not a multiple of %d"
                                      % (path, size, SIZE))
        self.n = size // SIZE
        self.data = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.words = memoryview(self.data).cast("Q") if size else memoryview(b"").cast("Q")
        self.frm = self.words[0::WORDS]
        self.to = self.words[1::WORDS]
        self.linear = self.words[3::WORDS]
        self.phys = self.words[4::WORDS]
        self.base = self.words[5::WORDS]

    def __len__(self):
        return self.n

    def ring(self, i):
        """Guest-physical start of the ring entry I was written into."""
        return bts_log.buffer_phys(self.linear[i], self.phys[i], self.base[i])

    def slot(self, i):
        """Entry I's slot in its ring."""
        return bts_log.slot(self.linear[i], self.base[i])

    def entry(self, i):
        return bts_log.Entry(*bts_log.ENTRY.unpack_from(self.data, i * SIZE))

    def find_last(self, frm, to, before=None):
        """Index of the last entry before BEFORE recording FRM -> TO."""
        pat = struct.pack("<QQ", frm, to)
        end = (self.n if before is None else before) * SIZE
        while True:
            off = self.data.rfind(pat, 0, end)
            if off < 0:
                return None
            if off % SIZE == 0:
                return off // SIZE
            end = off + len(pat) - 1


def read_log(res):
    """The model's log of RES (a run's results), or None when the run had
    no model (the emulation backend)."""
    path = os.path.join(res, "bts.log")
    return Log(path) if os.path.exists(path) else None


def user(log, i):
    return log.frm[i] < TASK_SIZE_MAX and log.to[i] < TASK_SIZE_MAX


def any_record(log, i):
    return True


class Oracle:
    """Where the records of one trace came from in the model's log.

    Every entry names the ring it was written into: the model logs the DS
    buffer base it wrote under, and a ring is physically contiguous
    (alloc_pages_exact, alloc_pages; under KPTI a cpu_entry_area window maps
    it from its first page), so its guest-physical start is phys - (linear -
    base) whatever address the CPU wrote through.  The records a dump sees
    are the newest records of the kind KEEP (user addresses for a user core)
    the model wrote into that ring.  The log does not say when a ring was
    freed and its pages became another ring with the same start: a write
    that does not continue the ring's sequence (a lower slot that is no
    wrap) starts a new life of them."""

    def __init__(self, log):
        self.log = log

    def _ring_back(self, ring, capacity, last, want, keep):
        """Whether the newest writes KEEP keeps into RING, up to LAST,
        newest first, are WANT ((from, to), newest first); stops at the
        first that is not."""
        log, end, k = self.log, ring + RECORD * capacity, 0
        phys, frm, to = log.phys, log.frm, log.to
        i = last
        while i >= 0 and k < len(want):
            # the physical range first: the ring's start only for writes there
            if ring <= phys[i] < end and log.ring(i) == ring and keep(log, i):
                if (frm[i], to[i]) != want[k]:
                    return False
                k += 1
            i -= 1
        return k == len(want)

    def _later(self, ring, capacity, last, keep):
        """Writes KEEP keeps after LAST in the same life of RING."""
        log, end, out = self.log, ring + RECORD * capacity, []
        slot = log.slot(last)
        for i in range(last + 1, len(log)):
            if not (ring <= log.phys[i] < end and log.ring(i) == ring):
                continue
            s = log.slot(i)
            if s <= slot and not (slot >= capacity - 8 and s < 8):
                break           # a new life: the pages hold another ring
            slot = s
            if keep(log, i):
                out.append(i)
        return out

    def match(self, recs, capacity, keep=user):
        """(ring start, index of the newest write, indexes of writes after
        it in the same ring) for the records RECS ((from, to, flags) oldest
        first, markers skipped) of a ring of CAPACITY; None if no ring of
        the log ends with them."""
        want = [(f, t) for f, t, _ in recs if (f & MARKER_MASK) != MARKER_TAG]
        if not want:
            return None
        want.reverse()      # newest first, as the walk goes
        last = self.log.find_last(*want[0])
        while last is not None:
            ring = self.log.ring(last)
            if self._ring_back(ring, capacity, last, want, keep):
                return ring, last, self._later(ring, capacity, last, keep)
            last = self.log.find_last(*want[0], before=last)
        return None


def lbr_entries(path, limit=-1, chunk=1 << 20, entry=lbr_log.ENTRY):
    """The LBR model's log at PATH, oldest first, each entry a tuple of
    ENTRY's fields (lbr_log.ENTRY: from, to, info, cpu, ...; lbr_log.BRANCH
    and BRANCH_FMT unpack fewer, for the scans of gigabytes), of its first
    LIMIT bytes (-1: all), a cut last entry left out.  Read CHUNK entries
    at a time: a log of gigabytes is never in memory at once."""
    size = os.path.getsize(path)
    size = size if limit < 0 else min(size, limit)
    with open(path, "rb") as f:
        size -= size % entry.size
        while size > 0:
            data = f.read(min(chunk * entry.size, size))
            data = data[:len(data) - len(data) % entry.size]
            if not data:
                break
            size -= len(data)
            yield from entry.iter_unpack(data)


def diff(got, want, show=lambda r: r):
    """Where two lists of records first differ, for a failure's detail;
    SHOW formats a record."""
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
             min(len(got), len(want)))
    return (f"{len(got)} got, {len(want)} wanted; first difference at {i}: "
            f"got {show(got[i]) if i < len(got) else None}, "
            f"wanted {show(want[i]) if i < len(want) else None}")
