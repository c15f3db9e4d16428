#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reader of the BTS model's oracle log (QEMU -cpu ...,bts-log=FILE).

The patched QEMU (qemu/patches, scripts/qemu-build.sh) appends one
56-byte little-endian entry per BTS record it writes into a guest's buffer:

    u64 from; u64 to; u64 flags;   the record as written
    u64 linear;                    linear address of the record's slot
    u64 phys;                      guest-physical address of the slot
    u64 base;                      the DS BTS buffer base (linear) it was
                                   written under
    u32 cpu;                       QEMU cpu_index of the vCPU
    u32 kind;                      0 near branch, 1 far transfer (far
                                   call/jmp/ret, iret, syscall, sysret,
                                   sysenter, sysexit), 2 interrupt/exception

Import it by path (the name has a dash):
    spec = importlib.util.spec_from_file_location("btslog", ".../bts-log.py")
    btslog = importlib.util.module_from_spec(spec); spec.loader.exec_module(btslog)
    for e in btslog.read(path): e.frm, e.to, e.linear, e.phys, e.base, e.cpu, e.kind
    e.buffer_phys(), e.slot()   the record's buffer (guest-physical start)
                                and slot index in it; the same from raw
                                values: btslog.buffer_phys(linear, phys,
                                base), btslog.slot(linear, base)
or run it: `bts-log.py [--cpu N] [--kind near|far|int] [--tail N] FILE`
prints one entry per line as `cpu kind from -> to @linear phys
buffer+slot`.  Exit 0; 1 on an unreadable or malformed file (length not a
multiple of 56); 2 on bad usage.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modellog  # noqa: E402  (the logs' shared reader, beside this file)
from modellog import FormatError, KINDS  # noqa: E402,F401

ENTRY = struct.Struct("<QQQQQQII")
ENTRY_SIZE = ENTRY.size  # 56
RECORD_SIZE = 24          # a 64-bit DS save area's BTS record
KIND_NEAR, KIND_FAR, KIND_INTERRUPT = 0, 1, 2


def buffer_phys(linear, phys, base):
    """Guest-physical start of the buffer a record at LINEAR (PHYS) went
    into, written under buffer base BASE (the buffer is physically
    contiguous, as the test kernel's rings are)."""
    return phys - (linear - base)


def slot(linear, base):
    """Index of the slot at LINEAR in the buffer at BASE."""
    return (linear - base) // RECORD_SIZE


class Entry:
    """One record the model wrote, with where it wrote it."""

    __slots__ = ("frm", "to", "flags", "linear", "phys", "base", "cpu", "kind")

    def __init__(self, frm, to, flags, linear, phys, base, cpu, kind):
        self.frm = frm
        self.to = to
        self.flags = flags
        self.linear = linear
        self.phys = phys
        self.base = base
        self.cpu = cpu
        self.kind = kind

    @property
    def kind_name(self):
        return KINDS.get(self.kind, str(self.kind))

    def buffer_phys(self):
        """Guest-physical start of the buffer the record went into."""
        return buffer_phys(self.linear, self.phys, self.base)

    def slot(self):
        """Index of the record's slot in its buffer."""
        return slot(self.linear, self.base)

    def record(self):
        """The 24 bytes the guest's buffer holds at `linear`."""
        return struct.pack("<QQQ", self.frm, self.to, self.flags)

    def __str__(self):
        return "%d %s %#018x -> %#018x @%#018x %#x %#x+%d" % (
            self.cpu, self.kind_name, self.frm, self.to, self.linear,
            self.phys, self.buffer_phys(), self.slot())

    def __repr__(self):
        return "Entry(%s)" % self


def parse(data):
    """Entries of a log's bytes; FormatError if the length is not 56*N."""
    return modellog.parse(data, ENTRY, Entry)


def read(path):
    """Entries of the log file at path, in the order they were written."""
    return modellog.read(path, ENTRY, Entry)


def main(argv=None):
    kind = ("--kind", {"choices": sorted(KINDS.values()),
                       "help": "only entries of this kind"},
            lambda e, v: e.kind_name == v)
    return modellog.main(argv, "bts-log", "print a BTS model oracle log",
                         read, [kind])


if __name__ == "__main__":
    sys.exit(main())
