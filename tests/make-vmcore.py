#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes small synthetic vmcores from docs/format.md §3-4 alone, for the
vmcore reader's unit tests and fuzz seeds: the bytes a btscrash kernel
leaves (ring table, one CPU ring descriptor, its records, VMCOREINFO keys,
a CPU note) in the two containers btsdump reads: an ELF vmcore (as
/proc/vmcore) and makedumpfile's kdump-compressed form (raw or zlib pages).

Usage: make-vmcore.py elf|kdump|kdump-zlib|kdump-flat|elf-norings OUT
       make-vmcore.py kdump-lzo|kdump-snappy|kdump-zstd OUT COMPRESS_PAGE
The ring: CPU 0, 8 slots, index 3, wrapped; records i = 0..7 in time order
are from 0xffffffff81000000+i to 0xffffffff82000000+i.
"""
import random
import struct
import subprocess
import sys
import zlib

PAGE = 4096
BASE = 0x100000                  # physical start of the memory we dump
TABLE, DESC, RECS = BASE, BASE + 0x100, BASE + 0x1000
CAP, INDEX = 8, 3
NPAGES = 2


def records():
    """Time-ordered records 0..7; slot k holds record (k - INDEX) % CAP."""
    return [(0xffffffff81000000 + i, 0xffffffff82000000 + i, 0) for i in range(CAP)]


def memory(index=INDEX, capacity=CAP, magic=0x52535442):
    mem = bytearray(NPAGES * PAGE)
    struct.pack_into("<IHHIIQ", mem, TABLE - BASE, 0x54535442, 1, 24, 1, 8, 0)
    struct.pack_into("<Q", mem, TABLE - BASE + 24, DESC)
    struct.pack_into("<IHHIIQQQQQIHHQ", mem, DESC - BASE, magic, 1, 72, 24,
                     0x1 | 0x2 | 0x4, 0, capacity, index, RECS, 5, 0, 2, 0, 123456789)
    recs = records()
    for k in range(CAP):
        struct.pack_into("<QQQ", mem, RECS - BASE + 24 * k, *recs[(k - INDEX) % CAP])
    return bytes(mem)


def vmcoreinfo(rings=True):
    keys = ["OSRELEASE=6.1.0-synthetic", "PAGESIZE=4096", "KERNELOFFSET=0"]
    if rings:
        keys += ["BTS_CRASH=1", "BTS_CRASH_TABLE_PA=%x" % TABLE,
                 "SIZE(bts_crash_ring)=72"]
        keys += ["OFFSET(bts_crash_ring.%s)=%d" % kv for kv in (
            ("flags", 12), ("id", 16), ("capacity", 24), ("index", 32),
            ("records_pa", 40), ("lost", 48), ("nr_gaps", 56), ("source", 60),
            ("freeze_ts", 64))]
        keys += ["SIZE(bts_record)=24"]
    return ("\n".join(keys) + "\n").encode()


def note(name, ntype, desc):
    n = name.encode() + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(n), len(desc), ntype) + pad(n) + pad(desc)


def cpu_note(last=4):
    recs = records()[-last:]
    hdr = struct.pack("<IHHIIQQQQIHHQ", 0x4e535442, 1, 64, 24, 0x1 | 0x2 | 0x8, 0, CAP,
                      len(recs), 5, 0, 2, 0, 0)
    return note("BTSCRASH", 0x42540002, hdr + b"".join(struct.pack("<QQQ", *r) for r in recs))


def notes(rings=True):
    prstatus = note("CORE", 1, bytes(336))
    return prstatus + (cpu_note() if rings else b"") + note("VMCOREINFO", 0, vmcoreinfo(rings))


def elf(rings=True):
    nts, mem = notes(rings), memory()
    phoff, phnum = 64, 2
    note_off = phoff + 56 * phnum
    load_off = (note_off + len(nts) + PAGE - 1) // PAGE * PAGE
    eh = (b"\x7fELF\x02\x01\x01" + bytes(9) +
          struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 64, 0, 0))
    ph = struct.pack("<IIQQQQQQ", 4, 0, note_off, 0, 0, len(nts), len(nts), 4)
    ph += struct.pack("<IIQQQQQQ", 1, 7, load_off, 0xffff888000000000 + BASE, BASE,
                      len(mem), len(mem), PAGE)
    out = eh + ph + nts
    return out + bytes(load_off - len(out)) + mem


# descriptor flags of makedumpfile's page codecs (DUMP_DH_COMPRESSED_*)
CODECS = {"zlib": 0x1, "lzo": 0x2, "snappy": 0x4, "zstd": 0x20}


def compress_page(codec, page, helper):
    """PAGE compressed as makedumpfile does with CODEC: zlib here, the others
    by HELPER (tests/helpers/compress-page.c, built against liblzo2, libsnappy and
    libzstd, as the reader is)."""
    if codec == "zlib":
        return zlib.compress(page)
    return subprocess.run([helper, codec], input=page, capture_output=True,
                          check=True).stdout


def kdump(compress=False, helper=None):
    """makedumpfile's kdump-compressed layout, header version 6, block 4096;
    COMPRESS: False (raw pages), True or "zlib", "lzo", "snappy", "zstd"."""
    codec = "zlib" if compress is True else compress
    nts, info, mem = notes(), vmcoreinfo(), memory()
    max_pfn = BASE // PAGE + NPAGES
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<i", hdr, 8, 6)
    struct.pack_into("<IiiIII", hdr, 424, 0, PAGE, 1, 2, max_pfn, 0)
    bitmap_off, pd_off = 2 * PAGE, 4 * PAGE
    pages_off = pd_off + PAGE
    info_off = pages_off + NPAGES * PAGE + PAGE
    note_off = info_off + len(info)
    sub = bytearray(PAGE)
    struct.pack_into("<QiiQQQQQQ", sub, 0, 0, 31, 0, 0, max_pfn,
                     info_off, len(info), note_off, len(nts))
    bitmap = bytearray(2 * PAGE)             # two blocks: bitmap1 then bitmap2
    for pfn in range(BASE // PAGE, max_pfn):
        bitmap[pfn // 8] |= 1 << (pfn % 8)
        bitmap[PAGE + pfn // 8] |= 1 << (pfn % 8)
    pds, data, off = bytearray(), bytearray(), pages_off
    for i in range(NPAGES):
        page = mem[i * PAGE:(i + 1) * PAGE]
        body, flags = ((compress_page(codec, page, helper), CODECS[codec]) if codec
                       else (page, 0))
        pds += struct.pack("<QIIQ", off, len(body), flags, 0)
        data += body
        off += len(body)
    out = bytearray(hdr) + sub + bitmap + pds + bytes(PAGE - len(pds)) + data
    out += bytes(info_off - len(out)) + info + nts
    return bytes(out)


def flatten(dump, chunk=3000):
    """makedumpfile -F's stream of DUMP: a 4096-byte header ("makedumpfile",
    type 1, version 1, big-endian), then {be64 offset, be64 size, data}
    segments, the end marker -1/-1.  Like makedumpfile, the first block is
    written twice: zeros first, the real header last (a later segment wins)."""
    segs = [(0, bytes(PAGE))]
    segs += [(o, dump[o:o + chunk]) for o in range(PAGE, len(dump), chunk)]
    segs += [(0, dump[:PAGE])]
    return flat_stream(segs)


def flat_stream(segs):
    """The flattened stream of SEGS, [(offset, data)] in file order."""
    out = bytearray(b"makedumpfile\0\0\0\0" + struct.pack(">qq", 1, 1))
    out += bytes(4096 - len(out))
    for off, data in segs:
        out += struct.pack(">qq", off, len(data)) + data
    return bytes(out + struct.pack(">qq", -1, -1))


def flatten_shuffled(dump, seed):
    """DUMP as a flattened stream in no order: 200 segments of random bytes
    at random places first, then the real bytes in pieces of 16 to 3000
    bytes, shuffled, so every garbage byte is written over by a later
    segment and a page read meets from one to over a hundred segments."""
    rng = random.Random(seed)
    segs, off = [], 0
    while off < len(dump):
        n = rng.randint(16, 3000)
        segs.append((off, dump[off:off + n]))
        off += n
    rng.shuffle(segs)
    junk = []
    for _ in range(200):
        o = rng.randrange(len(dump))
        junk.append((o, rng.randbytes(min(rng.randint(1, 9000), len(dump) - o))))
    return flat_stream(junk + segs)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    kind, path = sys.argv[1:3]
    helper = sys.argv[3] if len(sys.argv) == 4 else None
    data = {"elf": lambda: elf(), "elf-norings": lambda: elf(False),
            "kdump": lambda: kdump(), "kdump-zlib": lambda: kdump(True),
            "kdump-flat": lambda: flatten(kdump(True)),
            **{"kdump-" + c: (lambda c=c: kdump(c, helper)) for c in CODECS}}[kind]()
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
