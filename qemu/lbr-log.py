#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reader of the LBR model's oracle log (QEMU -cpu ...,lbr=on,lbr-log=FILE).

The patched QEMU (qemu/patches, scripts/qemu-build.sh) appends one
40-byte little-endian entry per LBR entry it pushes onto a vCPU's stack:

    u64 from; u64 to; u64 info;    the entry as written (FROM_IP, TO_IP,
                                   LBR_INFO)
    u32 cpu;                       QEMU cpu_index of the vCPU
    u8 tos;                        the index written (MSR_LASTBRANCH_TOS after
                                   the push)
    u8 src_cpl;                    CPL of the branch's source
    u8 cpl;                        CPL the branch ended in (LBR_SELECT's)
    u8 type;                       the MSR_LBR_SELECT bit that would suppress
                                   it: 2 jcc, 3 near_rel_call, 4
                                   near_ind_call, 5 near_ret, 6 near_ind_jmp,
                                   7 near_rel_jmp, 8 far
    u32 kind;                      as in the BTS log: 0 near branch, 1 far
                                   transfer, 2 interrupt/exception
    u32 reserved;                  0

Import it by path (the name has a dash), as bts-log.py:
    for e in lbrlog.read(path): e.frm, e.to, e.info, e.cpu, e.tos, ...
or run it: `lbr-log.py [--cpu N] [--cpl N] [--tail N] FILE` prints one
entry per line as `cpu tos type kind src_cpl>cpl from -> to info`.  Exit 0;
1 on an unreadable or malformed file (length not a multiple of 40); 2 on
bad usage.
"""

import argparse
import struct
import sys

ENTRY = struct.Struct("<QQQIBBBBII")
ENTRY_SIZE = ENTRY.size  # 40
TYPES = {2: "jcc", 3: "near_rel_call", 4: "near_ind_call", 5: "near_ret",
         6: "near_ind_jmp", 7: "near_rel_jmp", 8: "far"}
KINDS = {0: "near", 1: "far", 2: "int"}
DEPTH = 32


class Entry:
    """One LBR entry the model pushed."""

    __slots__ = ("frm", "to", "info", "cpu", "tos", "src_cpl", "cpl", "type",
                 "kind", "reserved")

    def __init__(self, frm, to, info, cpu, tos, src_cpl, cpl, type_, kind,
                 reserved):
        self.frm = frm
        self.to = to
        self.info = info
        self.cpu = cpu
        self.tos = tos
        self.src_cpl = src_cpl
        self.cpl = cpl
        self.type = type_
        self.kind = kind
        self.reserved = reserved

    @property
    def type_name(self):
        return TYPES.get(self.type, str(self.type))

    @property
    def kind_name(self):
        return KINDS.get(self.kind, str(self.kind))

    @property
    def mispredicted(self):
        return bool(self.info >> 63)

    def __str__(self):
        return "%d %2d %s %s %d>%d %#018x -> %#018x %#x" % (
            self.cpu, self.tos, self.type_name, self.kind_name, self.src_cpl,
            self.cpl, self.frm, self.to, self.info)

    def __repr__(self):
        return "Entry(%s)" % self


class FormatError(ValueError):
    pass


def parse(data):
    """Entries of a log's bytes; FormatError if the length is not 40*N."""
    if len(data) % ENTRY_SIZE:
        raise FormatError("%d bytes is not a multiple of %d"
                          % (len(data), ENTRY_SIZE))
    return [Entry(*ENTRY.unpack_from(data, off))
            for off in range(0, len(data), ENTRY_SIZE)]


def read(path):
    """Entries of the log file at path, in the order they were pushed."""
    with open(path, "rb") as f:
        return parse(f.read())


def tail(path, n, cpus, chunk=1 << 20):
    """{cpu: [Entry, ...]}: the last N entries each vCPU in CPUS pushed,
    oldest first, read from the end of the log at PATH (a kernel-branch
    log runs to gigabytes; only as much of its end as needed is read: a
    vCPU that stopped early, as one frozen by an oops while the others
    ran on, is further back).  A vCPU with fewer than N in the whole log
    gets what there is.  FormatError if the length is not 40*N."""
    import os
    size = os.path.getsize(path)
    if size % ENTRY_SIZE:
        raise FormatError("%d bytes is not a multiple of %d" % (size, ENTRY_SIZE))
    per, end = {c: [] for c in cpus}, size
    chunk -= chunk % ENTRY_SIZE
    with open(path, "rb") as f:
        while end > 0 and any(len(v) < n for v in per.values()):
            start = max(0, end - chunk)
            f.seek(start)
            data = f.read(end - start)
            for t in reversed(list(ENTRY.iter_unpack(data))):
                got = per.get(t[3])
                if got is not None and len(got) < n:
                    got.append(Entry(*t))
            end = start
    return {c: v[::-1] for c, v in per.items()}


def stack(entries, cpu=0):
    """What a vCPU's stack holds after ENTRIES (and no MSR writes): index ->
    Entry, the newest push at each index."""
    st = {}
    for e in entries:
        if e.cpu == cpu:
            st[e.tos] = e
    return st


def main(argv=None):
    ap = argparse.ArgumentParser(description="print an LBR model oracle log")
    ap.add_argument("--cpu", type=int, help="only this vCPU")
    ap.add_argument("--cpl", type=int, help="only branches ending at this CPL")
    ap.add_argument("--tail", type=int, help="only the last N entries")
    ap.add_argument("file")
    args = ap.parse_args(argv)
    try:
        entries = read(args.file)
    except (OSError, FormatError) as e:
        print("lbr-log: %s" % e, file=sys.stderr)
        return 1
    if args.cpu is not None:
        entries = [e for e in entries if e.cpu == args.cpu]
    if args.cpl is not None:
        entries = [e for e in entries if e.cpl == args.cpl]
    if args.tail is not None:
        entries = entries[-args.tail:] if args.tail else []
    try:
        for e in entries:
            print(e)
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
