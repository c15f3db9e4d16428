#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the seed corpus of fuzz-note (corpus-note/): one selector byte
# (bit 0: CPU note) followed by a note descriptor per docs/format.md, for the
# edge cases: empty, one record, full, wrapped, markers, larger header.
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus-note")
os.makedirs(out, exist_ok=True)
MARK = 0xb75c000000000000


def desc(recs, cap=16, flags=4, hdr=64, source=2, tid=42):
    h = struct.pack("<IHHIIQQQQIHHQ", 0x4e535442, 1, hdr, 24, flags, tid, cap,
                    len(recs), 0, 0, source, 0, 0)
    h += b"\0" * (hdr - 64)
    return h + b"".join(struct.pack("<QQQ", *r) for r in recs)


seeds = {
    "empty": b"\0" + desc([]),
    "one": b"\0" + desc([(0x401000, 0x401100, 0)]),
    "full": b"\0" + desc([(0x401000 + i, 0x402000, 16) for i in range(16)], flags=4 | 1),
    "markers": b"\0" + desc([(0x401000, 0x401100, 0), (MARK | 1, 1000, 1),
                             (MARK | 2, 2000, 0), (MARK | 3 | 1 << 16, 3000, 50)]),
    "cpu-kernel": b"\1" + desc([(0xffffffff81000000, 0xffffffff81000100, 0)] * 3,
                               flags=8, source=1),
    "hdr72": b"\0" + desc([(0x401000, 0x401100, 0)], hdr=72),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
