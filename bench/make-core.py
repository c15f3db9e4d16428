#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A process core of a given size for the ingest benchmark (ingest-bench.sh):
# an x86-64 ELF core with a PT_NOTE (one NT_PRSTATUS: pid, SIGSEGV) and one
# PT_LOAD of SIZE bytes of memory that compresses as a heap does: a third
# zeros, a third repeated text, a third random (fixed seed, same file every
# run).  Usage: make-core.py SIZE_MIB OUT
import os
import random
import struct
import sys

mib, out = int(sys.argv[1]), sys.argv[2]
size = mib << 20
rng = random.Random(16)
# NT_PRSTATUS: pr_cursig at 12, pr_pid at 32 (struct elf_prstatus, x86-64)
prstatus = bytearray(336)
struct.pack_into("<h", prstatus, 12, 11)
struct.pack_into("<i", prstatus, 32, 4242)
name = b"CORE\0\0\0\0"
note = struct.pack("<III", 5, len(prstatus), 1) + name + bytes(prstatus)
ehsize, phsize = 64, 56
note_off = ehsize + 2 * phsize
load_off = (note_off + len(note) + 4095) & ~4095
with open(out, "wb") as f:
    f.write(struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, bytes(7),
                        4, 62, 1, 0, ehsize, 0, 0, ehsize, phsize, 2, 0, 0, 0))
    f.write(struct.pack("<IIQQQQQQ", 4, 0, note_off, 0, 0, len(note), 0, 4))
    f.write(struct.pack("<IIQQQQQQ", 1, 6, load_off, 0x7f0000000000, 0, size, size, 4096))
    f.write(note)
    f.write(bytes(load_off - note_off - len(note)))
    text = b"GET /index.html HTTP/1.1\r\nHost: example.org\r\n\r\n" * 1400
    chunk = 1 << 20
    for i in range(mib):
        kind = i % 3
        if kind == 0:
            f.write(bytes(chunk))
        elif kind == 1:
            f.write((text * (chunk // len(text) + 1))[:chunk])
        else:
            f.write(rng.randbytes(chunk))
