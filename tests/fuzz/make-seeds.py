#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the seed corpora of the fuzzers.  corpus-note/: one selector byte
# (bit 0: CPU note; bits 1-7: ring wrap flag and index for fuzz-note) then a
# note descriptor per docs/format.md.  corpus-core/: small x86-64 ELF cores
# (PT_NOTE with NT_PRSTATUS and btscrash notes, one PT_LOAD) for fuzz-core.
# corpus-ring/: physical memory images (ring table at 0, descriptors,
# slots) for fuzz-ring.  corpus-escape/: names for fuzz-escape.
# Regression seeds found by fuzzing are committed beside these, not made here.
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
MARK = 0xb75c000000000000
NT_THREAD, NT_CPU = 0x42540001, 0x42540002


def desc(recs, cap=16, flags=4, hdr=64, source=2, tid=42, lost=0, gaps=0):
    h = struct.pack("<IHHIIQQQQIHHQ", 0x4e535442, 1, hdr, 24, flags, tid, cap,
                    len(recs), lost, gaps, source, 0, 0)
    h += b"\0" * (hdr - 64)
    return h + b"".join(struct.pack("<QQQ", *r) for r in recs)


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def note(name, ntype, d):
    return struct.pack("<III", len(name) + 1, len(d), ntype) + \
        pad4(name + b"\0") + pad4(d)


def prstatus(pid, sig=0):
    d = bytearray(336)
    struct.pack_into("<h", d, 12, sig)
    struct.pack_into("<i", d, 32, pid)
    return note(b"CORE", 1, bytes(d))


def core(notes, load=b"\x0f\x0b" * 32, vaddr=0x401000, load_size=None):
    """ELF header, PT_NOTE, PT_LOAD; load_size > len(load) cuts the file."""
    notes = b"".join(notes)
    ehdr_size, phdr_size = 64, 56
    note_off = ehdr_size + 2 * phdr_size
    load_off = note_off + len(notes)
    load_size = len(load) if load_size is None else load_size
    eh = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    eh += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, ehdr_size, 0, 0,
                      ehdr_size, phdr_size, 2, 0, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(notes), 0, 4)
    ph += struct.pack("<IIQQQQQQ", 1, 5, load_off, vaddr, 0, load_size,
                      load_size, 0x1000)
    return eh + ph + notes + load


BR = [(0x401000, 0x401010, 0), (0x401012, 0x401000, 16)]

note_seeds = {
    "empty": b"\0" + desc([]),
    "one": b"\0" + desc([(0x401000, 0x401100, 0)]),
    "full": b"\0" + desc([(0x401000 + i, 0x402000, 16) for i in range(16)], flags=4 | 1),
    "markers": b"\0" + desc([(0x401000, 0x401100, 0), (MARK | 1, 1000, 1),
                             (MARK | 2, 2000, 0), (MARK | 3 | 1 << 16, 3000, 50)]),
    "cpu-kernel": b"\1" + desc([(0xffffffff81000000, 0xffffffff81000100, 0)] * 3,
                               flags=8, source=1),
    "hdr72": b"\0" + desc([(0x401000, 0x401100, 0)], hdr=72),
    # ring of 4 slots, index 2, with an unwritten slot (selector 0b10: wrapped)
    "ring-zero-slot": bytes([2 | 2 << 2]) + desc(
        [(0x401000, 0x401100, 0), (0, 0, 0), (0x401200, 0x401300, 0),
         (0x401400, 0x401500, 0)], cap=4, flags=4 | 1 | 2, lost=7),
    "cpu-truncated": b"\1" + desc(
        [(0xffffffff81000000 + 8 * i, 0x401000 + i, 0) for i in range(32)] +
        [(MARK | 3 | 3 << 16, 4000, 0)], cap=1 << 24, flags=8 | 1, source=1,
        tid=3, gaps=5),
}

core_seeds = {
    "one-thread": core([prstatus(100, 11), note(b"BTSCRASH", NT_THREAD,
                                                desc(BR, tid=100))]),
    "two-threads": core([prstatus(100, 6), prstatus(101),
                         note(b"BTSCRASH", NT_THREAD, desc(BR, tid=101)),
                         note(b"BTSCRASH", NT_THREAD,
                              desc(BR + [(MARK | 1, 5, 0)], tid=100))]),
    "no-trace": core([prstatus(100, 11)]),
    # a trace for an unknown thread, a duplicate, a CPU note, a bad magic
    "rejects": core([prstatus(100, 11),
                     note(b"BTSCRASH", NT_THREAD, desc(BR, tid=7)),
                     note(b"BTSCRASH", NT_THREAD, desc(BR, tid=7)),
                     note(b"BTSCRASH", NT_CPU, desc(BR, tid=0, flags=0)),
                     note(b"BTSCRASH", NT_THREAD, b"XXXX" + desc([])[4:])]),
    "truncated": core([prstatus(100, 11), note(b"BTSCRASH", NT_THREAD,
                                               desc(BR, tid=100))],
                      load_size=0x1000),
}



def image(cap, n, flags=0, nr_cpus=2):
    """Physical memory for fuzz-ring: ring table at 0, one descriptor at
    0x100 for CPU 0, cap slots at 0x200 of which n were written."""
    mem = bytearray(0x200 + cap * 24)
    struct.pack_into("<IHHIIQ", mem, 0, 0x54535442, 1, 24, nr_cpus, 8, 0)
    struct.pack_into("<Q", mem, 24, 0x100)
    struct.pack_into("<IHHIIQQQQQIHHQ", mem, 0x100, 0x52535442, 1, 72, 24, flags,
                     0, cap, n % cap, 0x200, max(0, n - cap), 0, 2, 0, 12345)
    for i in range(1, n + 1):
        struct.pack_into("<QQQ", mem, 0x200 + ((i - 1) % cap) * 24,
                         0xffffffff81000000 + i, 0xffffffff82000000 + i, 0)
    return bytes(mem)


ring_seeds = {
    "empty": image(8, 0),
    "partial": image(8, 3, flags=2),
    "wrapped": image(8, 13, flags=3),
    "wrap-flag-lags": image(8, 13, flags=2),
    "markers": image(4, 2) [:0x200] + struct.pack("<QQQ", MARK | 1, 5, 0) +
    struct.pack("<QQQ", MARK | 2, 6, 1) + b"\0" * 48,
    "notes": note(b"BTSCRASH", NT_CPU, desc(BR, tid=0, flags=0)) + image(4, 1)[16:],
}

# corpus-escape/: names as a core may carry them (fuzz-escape.c)
escape_seeds = {
    "ascii": b"/tmp/core.1234",
    "hostile": b"\x1b[2J\x07\nforged\xff\\x41\\\\",
    "utf8": "caf\u00e9 \u20ac \U0001f600 \u0085".encode() + b" \xed\xa0\x80 \xc0\xaf \xf4\x90",
    "nul": b"a\0b\x7f\x9b[2J",
}

for sub, seeds in (("corpus-note", note_seeds), ("corpus-core", core_seeds),
                   ("corpus-ring", ring_seeds), ("corpus-escape", escape_seeds)):
    out = os.path.join(here, sub)
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
