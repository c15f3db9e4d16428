#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reader of the LBR model's oracle log (QEMU -cpu ...,lbr=on,lbr-log=FILE).

The patched QEMU (qemu/patches, scripts/qemu-build.sh) appends one
40-byte little-endian entry per LBR entry it pushes onto a vCPU's stack:

    u64 from; u64 to; u64 info;    Intel: the entry as written (FROM_IP,
                                   TO_IP, LBR_INFO); AMD LbrExtV2: the
                                   branch's linear addresses, and info:
                                   LBR_FROM's mispredict at bit 63, LBR_TO's
                                   valid at bit 1, spec at bit 0
    u32 cpu;                       QEMU cpu_index of the vCPU
    u8 tos;                        the index written (MSR_LASTBRANCH_TOS after
                                   the push; 0 on LbrExtV2, entry 0 newest)
    u8 src_cpl;                    CPL of the branch's source
    u8 cpl;                        CPL the branch ended in (LBR_SELECT's)
    u8 type;                       the MSR_LBR_SELECT bit that would suppress
                                   it: 2 jcc, 3 near_rel_call, 4
                                   near_ind_call, 5 near_ret, 6 near_ind_jmp,
                                   7 near_rel_jmp, 8 far
    u32 kind;                      as in the BTS log: 0 near branch, 1 far
                                   transfer, 2 interrupt/exception
    u32 format;                    what the entry is: 0 a push onto
                                   Intel's model-specific LBR (a TOS ring
                                   of 32), 1 onto AMD's LbrExtV2 (16
                                   entries, each push shifts them down),
                                   2 onto Architectural LBR (entry 0
                                   newest, pushes shift; info: LBR_INFO
                                   with BR_TYPE); 3 an Arch LBR call-stack
                                   pop (from/to: the RET's), 5 a
                                   model-specific call-stack pop (tos: the
                                   new TOS); 4 (lbr-log-nmi=on) one entry
                                   of the stack when an NMI was delivered:
                                   tos its index from the newest, type the
                                   stack's format (0-2), from/to/info as
                                   the MSRs held them, the whole depth,
                                   empty entries too

Import it by path (the name has a dash), as bts-log.py:
    for e in lbrlog.read(path): e.frm, e.to, e.info, e.cpu, e.tos, ...
or run it: `lbr-log.py [--cpu N] [--cpl N] [--tail N] FILE` prints one
entry per line as `cpu tos type kind src_cpl>cpl from -> to info`.  Exit 0;
1 on an unreadable or malformed file (length not a multiple of 40); 2 on
bad usage.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modellog  # noqa: E402  (the logs' shared reader, beside this file)
from modellog import FormatError, KINDS  # noqa: E402,F401

ENTRY = struct.Struct("<QQQIBBBBII")
ENTRY_SIZE = ENTRY.size  # 40
# from, to and cpu of each entry, the rest skipped: what the VM checks scan
# gigabytes of logs for (a third less CPU than ENTRY and its unused fields)
BRANCH = struct.Struct("<QQ8xI12x")
assert BRANCH.size == ENTRY_SIZE
# the same with the format word last (from, to, cpu, format): the scans
# that must skip the stacks logged at NMIs (lbr-log-nmi=on)
BRANCH_FMT = struct.Struct("<QQ8xI8xI")
assert BRANCH_FMT.size == ENTRY_SIZE
TYPES = {2: "jcc", 3: "near_rel_call", 4: "near_ind_call", 5: "near_ret",
         6: "near_ind_jmp", 7: "near_rel_jmp", 8: "far"}
DEPTH = 32
FORMAT_INTEL, FORMAT_AMD_V2, FORMAT_ARCH = 0, 1, 2
FORMAT_ARCH_POP, FORMAT_NMI, FORMAT_INTEL_POP = 3, 4, 5
DEPTHS = {FORMAT_INTEL: 32, FORMAT_AMD_V2: 16}


class Entry:
    """One LBR entry the model pushed."""

    __slots__ = ("frm", "to", "info", "cpu", "tos", "src_cpl", "cpl", "type",
                 "kind", "format")

    def __init__(self, frm, to, info, cpu, tos, src_cpl, cpl, type_, kind,
                 format_):
        self.frm = frm
        self.to = to
        self.info = info
        self.cpu = cpu
        self.tos = tos
        self.src_cpl = src_cpl
        self.cpl = cpl
        self.type = type_
        self.kind = kind
        self.format = format_

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


def parse(data):
    """Entries of a log's bytes; FormatError if the length is not 40*N."""
    return modellog.parse(data, ENTRY, Entry)


def read(path):
    """Entries of the log file at path, in the order they were pushed."""
    return modellog.read(path, ENTRY, Entry)


def tail(path, n, cpus, chunk=1 << 20):
    """{cpu: [Entry, ...]}: the last N entries each vCPU in CPUS pushed,
    oldest first (modellog.tail)."""
    return modellog.tail(path, n, cpus, ENTRY, Entry, 3, chunk)


def stack(entries, cpu=0):
    """What a vCPU's stack holds after ENTRIES (and no MSR writes): index ->
    Entry.  Intel: the newest push at each index; LbrExtV2: the newest 16
    pushes, index 0 the newest."""
    st, amd = {}, []
    for e in entries:
        if e.cpu != cpu:
            continue
        if e.format == FORMAT_AMD_V2:
            amd.append(e)
        else:
            st[e.tos] = e
    if amd:
        return dict(enumerate(reversed(amd[-DEPTHS[FORMAT_AMD_V2]:])))
    return st


def nmi_stacks(entries, cpu=0):
    """The stacks a vCPU held at each NMI (lbr-log-nmi=on), in order: a
    list of [(from, to, info), ...], newest first, the whole depth."""
    stacks = []
    for e in entries:
        if e.cpu != cpu or e.format != FORMAT_NMI:
            continue
        if e.tos == 0:
            stacks.append([])
        if stacks:
            stacks[-1].append((e.frm, e.to, e.info))
    return stacks


def main(argv=None):
    cpl = ("--cpl", {"type": int, "help": "only branches ending at this CPL"},
           lambda e, v: e.cpl == v)
    return modellog.main(argv, "lbr-log", "print an LBR model oracle log",
                         read, [cpl])


if __name__ == "__main__":
    sys.exit(main())
