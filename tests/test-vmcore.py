#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# btsdump vmcore on synthetic vmcores made from docs/format.md alone
# (tests/make-vmcore.py): ELF and kdump-compressed (raw pages, and pages
# compressed as makedumpfile -c, -l, -p and -z do: zlib, lzo, snappy, zstd)
# give the same ring in time order; symbols from a System.map; JSON shape;
# and bad input: a corrupted index, a ring page missing from the dump, a
# dump cut short, flattened dumps (read, or refused with a reason),
# garbage, a kernel without rings.
# Usage: test-vmcore.py BTSDUMP COMPRESS_PAGE (tests/helpers/compress-page.c)
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
mv = __import__("make-vmcore")
from tap import Tap  # noqa: E402
tool, helper = sys.argv[1:3]
T = Tap(detail_lines=20)
check = T.check


def run(*args):
    p = subprocess.run([tool, "vmcore", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def rows(out):
    return [tuple(int(x, 16) for x in l.split("]")[1].split()[:3])
            for l in out.splitlines() if l.startswith("  [")]


with tempfile.TemporaryDirectory() as tmp:
    def write(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    want = mv.records()
    for kind, data in (("elf", mv.elf()), ("kdump", mv.kdump()),
                       *(("kdump-" + c, mv.kdump(c, helper)) for c in mv.CODECS)):
        rc, out, err = run("-S", "-n", "0", write(kind, data))
        check(rc == 0 and rows(out) == want and "(panic CPU)" in out,
              f"{kind}: the whole wrapped ring, oldest first", out + err)
    # the heading and lines of lib/ringtext.c (crash> bts prints the same:
    # kdump-test.py compares the two on real vmcores)
    rc, out, err = run("-n", "2", write("elf-text", mv.elf()))
    check(rc == 0 and out.splitlines()[2:5] == [
        "CPU 0 (panic CPU): 2 of 8 records (full ring, ring of 8, wrapped, "
        "frozen at 0.123456 s), emulation; kernel function entries (ftrace), "
        "each from its reconstructed call site",
        "  [   7] ffffffff81000006                              -> ffffffff82000006",
        "  [   8] ffffffff81000007                              -> ffffffff82000007"],
          "text: heading (copy, capacity, wrapped, freeze time, source), numbered from the oldest",
          out + err)
    # a compressed page that does not decompress: said, and the ring not read
    for c in mv.CODECS:
        bad = bytearray(mv.kdump(c, helper))
        pd_off = 4 * mv.PAGE
        off, size = struct.unpack_from("<QI", bad, pd_off)
        bad[off:off + size] = bytes([0x5a]) * size
        rc, out, err = run("-S", "-n", "0", write("bad-" + c, bytes(bad)))
        check(f"bad {c} data" in err and "crash note" in out,
              f"kdump-{c}: a page that does not decompress is named, the CPU note used",
              f"exit {rc}: {err}\n{out[-400:]}")

    # a kernel dump given to `btsdump` (the process-core reader): pointed
    # to `btsdump vmcore`
    for kind, data in (("kdump", mv.kdump()), ("elf", mv.elf())):
        p = subprocess.run([tool, write(kind + ".as-core", data)], capture_output=True, text=True)
        check(p.returncode in (2, 4) and "btsdump vmcore" in p.stderr,
              f"{kind} dump given as a core: says to use btsdump vmcore",
              f"exit {p.returncode}: {p.stderr}")

    smap = write("System.map", b"ffffffff81000000 T start_kernel\n"
                 b"ffffffff81000004 t do_one\nffffffff82000000 T target_fn\n"
                 b"ffffffff83000000 D some_data\n")
    rc, out, err = run("-n", "2", write("elf2", mv.elf()), smap)
    check(rc == 0 and "do_one+0x3" in out and "target_fn+0x7" in out,
          "symbols from System.map (text symbols only)", out + err)
    # a name with ESC[2J and a newline, a vmcore whose file name has them:
    # escaped in every line (lib/escape.c, issue 30)
    evil = write("System.map.evil", b"ffffffff81000000 T start_kernel\n"
                 b"ffffffff81000004 t do_\x1b[2J\x07one\nffffffff82000000 T target_fn\n")
    rc, out, err = run("-n", "2", write("elf2-\x1b[2J\nx", mv.elf()), evil)
    check(rc == 0 and "\x1b" not in out + err and "\x07" not in out and
          "do_\\x1b[2J\\x07one+0x3" in out and "elf2-\\x1b[2J\\x0ax (ELF)" in out,
          "hostile System.map name and vmcore file name: escaped", out + err)

    rc, out, err = run("-j", "-n", "3", write("elf3", mv.elf()))
    try:
        d = json.loads(out)
        c = d["cpus"][0]
        t = c["trace"]
        ok = (d["schema"] == "btscrash-vmcore" and d["version"] == 7 and
              d["format"] == "elf" and c["cpu"] == 0 and c["panic"] and
              c["copy"] == "ring" and t["source"] == "emulation" and
              t["records"] == 8 and t["wrapped"] and
              [int(b["from"], 16) for b in c["branches"]] == [r[0] for r in want[-3:]] and
              [b["number"] for b in c["branches"]] == [6, 7, 8] and
              c["frozen"] and c["freeze_ts_ns"] == 123456789)
    except (ValueError, KeyError, IndexError) as e:
        ok, out = False, repr(e) + out
    check(ok, "JSON: one object per CPU, newest branches last", out)

    # bad index: falls back to the CPU's crash note (its 4 newest records)
    mem = bytearray(mv.memory(index=99))
    data = mv.elf()
    load = data.find(mv.memory())
    bad = data[:load] + bytes(mem) + data[load + len(mem):]
    rc, out, err = run("-S", "-n", "0", write("badindex", bad))
    check(rc == 4 and "corrupt ring" in err and rows(out) == want[-4:] and
          "crash note" in out, "corrupt index: says so, shows the crash note (exit 4)",
          out + err)
    rc, out, err = run("-j", "-n", "0", write("badindex", bad))
    try:
        c = json.loads(out)["cpus"][0]
        ok = (rc == 4 and c["copy"] == "crash_note" and not c["frozen"] and
              c["trace"]["source"] == "emulation" and c["trace"]["truncated"] and
              len(c["branches"]) == 4)
    except (ValueError, KeyError, IndexError) as e:
        ok, out = False, repr(e) + out
    check(ok, "JSON of the fallback: copy is crash_note, source still the backend", out)

    # a ring page missing from a kdump dump (cleared in bitmap2)
    k = bytearray(mv.kdump())
    pfn = mv.RECS // mv.PAGE
    k[3 * mv.PAGE + pfn // 8] &= ~(1 << (pfn % 8)) & 0xff
    rc, out, err = run("-S", write("filtered", bytes(k)))
    check(rc == 4 and "not in the dump" in err and rows(out) == want[-4:],
          "ring page filtered out: says so, shows the crash note", out + err)

    # cut short: the records' page is past the end
    kd = mv.kdump()
    rc, out, err = run(write("short", kd[:5 * mv.PAGE + 100]))
    check(rc in (2, 4) and ("truncated" in err or "cut short" in err or "out of" in err),
          "dump cut short: a clear error", f"exit {rc}: {err}")

    # an ELF dump cut before its memory: the ring table too, the crash notes
    # still there: shown, and the result said to be partial (exit 4)
    data = mv.elf()
    rc, out, err = run("-S", "-n", "0", write("table-cut", data[:data.find(mv.memory())]))
    check(rc == 4 and rows(out) == want[-4:] and "crash note" in out and
          "crash notes instead" in err and "table-cut" in err,
          "ring table cut off: the crash notes shown, said, exit 4", f"exit {rc}: {out}{err}")
    # a kdump header cut short: the file named, a truncated dump suspected
    rc, out, err = run(write("kdump-hdr", mv.kdump()[:300]))
    check(rc == 2 and "kdump-hdr" in err and "truncated dump?" in err,
          "kdump header cut short: the file named, \"a truncated dump?\"", f"exit {rc}: {err}")

    # makedumpfile -F's stream, reassembled on the fly (a later segment wins)
    flat = mv.flatten(mv.kdump("zstd", helper))
    rc, out, err = run("-S", "-n", "0", write("flat", flat))
    check(rc == 0 and rows(out) == want, "flattened kdump dump: the whole ring", out + err)
    # out of order, overlapping, junk written over later: still what
    # makedumpfile -R would give (the segment index, issue 30)
    rc, out, err = run("-r", "-n", "0", write("flat-shuffled", mv.flatten_shuffled(
        mv.kdump("zstd", helper), 30)))
    check(rc == 0 and rows(out) == want, "flattened dump in no order: the whole ring",
          out + err)
    rc, out, err = run(write("flat-elf", mv.flatten(mv.elf())))
    check(rc == 2 and "makedumpfile -R" in err,
          "flattened ELF dump: says to reassemble it first", err)
    rc, out, err = run(write("flat-cut", flat[:len(flat) // 2]))
    check(rc == 2 and "cut short" in err, "flattened dump without its end marker: says so", err)
    bad = bytearray(flat)
    struct.pack_into(">q", bad, 4096, -5)                # the first segment's offset
    rc, out, err = run(write("flat-bad", bytes(bad)))
    check(rc == 2 and "bad segment" in err, "flattened dump with a bad segment: says so", err)
    rc, out, err = run(write("flat-hdr", b"makedumpfile\0\0\0\0" + bytes(4096)))
    check(rc == 2 and "unknown header" in err, "flattened dump with a bad header: says so", err)
    rc, out, err = run(write("garbage", os.urandom(8192)))
    check(rc == 2 and "neither an ELF nor" in err, "garbage: not a vmcore (exit 2)", err)
    rc, out, err = run(write("norings", mv.elf(False)))
    check(rc == 3 and "no BTS_CRASH=1" in err, "kernel without rings: exit 3, says why",
          err)
    hdr = bytearray(mv.kdump())
    struct.pack_into("<i", hdr, 428, 12345)
    rc, out, err = run(write("badblock", bytes(hdr)))
    check(rc == 2 and "block size" in err, "kdump header with a bad block size: exit 2",
          err)

sys.exit(T.done())
