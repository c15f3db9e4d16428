#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reader of the PMU model's oracle log (QEMU -cpu ...,pmu-log=FILE).

The patched QEMU (qemu/patches 0012, scripts/qemu-build.sh) appends
one 96-byte little-endian entry per event, all vCPUs in one file, in the
order the events happened:

    u64 value;          kind 0/1: the value written; 2: the value read;
                        3: the counters that wrapped (GLOBAL_* bits);
                        4: the LVT performance-counter entry as it was
    u64 rip;            linear address of the RDMSR/WRMSR; 0 otherwise
    u64 global_status;  IA32_PERF_GLOBAL_STATUS after the event
    u64 counter[7];     PMC0-3, FIXED_CTR0-2 after the event (an AMD
                        CPU, patch 0014: PERF_CTR0-5, then 0)
    u32 msr;            the MSR (kinds 0-2), the PMI's reason (kind 4:
                        0 counter overflow, 1 BTINT), 0 otherwise
    u32 cpu;            QEMU cpu_index of the vCPU
    u32 kind;           0 wrmsr, 1 wrmsr refused with #GP, 2 rdmsr,
                        3 overflow, 4 pmi
    u32 flags;          kind 4: bit 0 delivered (LVTPC not masked)

Import it by path (the name has a dash), as bts-log.py:
    for e in pmulog.read(path): e.kind_name, e.msr, e.value, e.counter...
or run it: `pmu-log.py [--cpu N] [--kind K] [--msr-counts] FILE` prints
one entry per line, or with --msr-counts the number of accesses per MSR
and kind.  Exit 0; 1 on an unreadable or malformed file (length not a
multiple of 96); 2 on bad usage.
"""

import argparse
import collections
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modellog  # noqa: E402  (the logs' shared reader, beside this file)
from modellog import FormatError  # noqa: E402,F401

ENTRY = struct.Struct("<QQQ7QIIII")
ENTRY_SIZE = ENTRY.size  # 96
KINDS = {0: "wrmsr", 1: "wrmsr-gp", 2: "rdmsr", 3: "overflow", 4: "pmi"}
REASONS = {0: "overflow", 1: "btint"}
DELIVERED = 1
COUNTERS = ("pmc0", "pmc1", "pmc2", "pmc3", "fixed0", "fixed1", "fixed2")


class Entry:
    """One event the model logged."""

    __slots__ = ("value", "rip", "status", "counter", "msr", "cpu", "kind",
                 "flags")

    def __init__(self, t):
        self.value, self.rip, self.status = t[0:3]
        self.counter = tuple(t[3:10])
        self.msr, self.cpu, self.kind, self.flags = t[10:14]

    @property
    def kind_name(self):
        return KINDS.get(self.kind, str(self.kind))

    @property
    def is_msr(self):
        return self.kind in (0, 1, 2)

    @property
    def delivered(self):
        return self.kind == 4 and bool(self.flags & DELIVERED)

    def __str__(self):
        if self.is_msr:
            what = "%#x %#x @%#x" % (self.msr, self.value, self.rip)
        elif self.kind == 4:
            what = "%s lvtpc %#x %s" % (
                REASONS.get(self.msr, str(self.msr)), self.value,
                "delivered" if self.delivered else "masked")
        else:
            what = "%#x" % self.value
        return "%d %s %s status %#x counters %s" % (
            self.cpu, self.kind_name, what, self.status,
            " ".join(str(c) for c in self.counter))

    def __repr__(self):
        return "Entry(%s)" % self


def parse(data):
    """Entries of a log's bytes; FormatError if the length is not 96*N."""
    return modellog.parse(data, ENTRY, lambda *t: Entry(t))


def read(path):
    """Entries of the log file at path, in the order they happened."""
    return modellog.read(path, ENTRY, lambda *t: Entry(t))


def msr_counts(entries):
    """Counter {(kind_name, msr): accesses} over the MSR entries."""
    return collections.Counter((e.kind_name, e.msr) for e in entries
                               if e.is_msr)


def main(argv=None):
    ap = argparse.ArgumentParser(description="print a PMU model oracle log")
    ap.add_argument("--cpu", type=int, help="only this vCPU")
    ap.add_argument("--kind", choices=sorted(KINDS.values()),
                    help="only this kind of entry")
    ap.add_argument("--msr-counts", action="store_true",
                    help="accesses per kind and MSR instead of entries")
    ap.add_argument("file")
    args = ap.parse_args(argv)
    try:
        entries = read(args.file)
    except (OSError, FormatError) as e:
        print("pmu-log: %s" % e, file=sys.stderr)
        return 1
    if args.cpu is not None:
        entries = [e for e in entries if e.cpu == args.cpu]
    if args.kind is not None:
        entries = [e for e in entries if e.kind_name == args.kind]
    try:
        if args.msr_counts:
            for (kind, msr), n in sorted(msr_counts(entries).items()):
                print("%s %#x %d" % (kind, msr, n))
        else:
            for e in entries:
                print(e)
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
