#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of the btsdump CLI on the real gdb cores in
# tests/fixtures: golden text/JSON output, exit codes, hostile and truncated
# notes, the fault tied to the trail, smashed stacks, indirect branches,
# an executable not found (module+offset, its build-id), a call or jump
# to 0 the trace lacks inferred from the core (and not when the core does
# not prove it), and `btsdump add-note` producing cores that readelf, eu-readelf and
# gdb still read.  Usage: test-btsdump.py BTSDUMP [--update-golden]
import json
import re
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap  # noqa: E402

BTSDUMP = os.path.abspath(sys.argv[1])
UPDATE = "--update-golden" in sys.argv
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = "tests/fixtures"
GOLDEN = os.path.join(SRC, "tests", "golden")
T = Tap()
check = T.check


def run(*args, cwd=SRC):
    p = subprocess.run([BTSDUMP, *args], cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def golden(name, args):
    rc, out, err = run(*args)
    check(rc == 0, "%s: exit %d, stderr %s" % (name, rc, err))
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write("# btsdump %s\n" % " ".join(args))
            f.write(out)
        return
    with open(path) as f:
        want = f.read().split("\n", 1)[1]
    check(out == want, "golden %s differs:\n--- want\n%s--- got\n%s" % (name, want, out))


def records(name):
    recs = []
    with open(os.path.join(SRC, FIX, name)) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                a, b = line.split()
                recs.append((int(a, 16), int(b, 16)))
    return recs


def test_golden():
    for mode in ("null", "smash"):
        core = "%s/crasher-%s.core" % (FIX, mode)
        golden("crasher-%s.txt" % mode, [core, FIX + "/crasher"])
        golden("crasher-%s.calls.txt" % mode, ["--calls", core, FIX + "/crasher"])
        golden("crasher-%s.json" % mode, ["--json", core, FIX + "/crasher"])


def test_json_shape():
    rc, out, _ = run("--json", "--calls", FIX + "/crasher-null.core", FIX + "/crasher")
    check(rc == 0, "json exit %d" % rc)
    doc = json.loads(out)
    th = doc["threads"]
    check(len(th) == 1 and th[0]["faulting"] and th[0]["signal_name"] == "SIGSEGV",
          "json thread header")
    br = th[0]["branches"]
    want = records("crasher-null.records")
    check([(int(b["from"], 16), int(b["to"], 16)) for b in br] == want,
          "json branches equal the recorded ones, oldest first")
    check([b["number"] for b in br] == list(range(1, len(want) + 1)),
          "json numbers ascend from 1, as the text's")
    for key in ("from", "to", "kind", "from_symbol", "to_symbol"):
        check(all(key in b for b in br), "json key %s" % key)
    check(br[-1]["kind"] == "call" and br[-1]["indirect"] and br[-1]["to"] == "0x0",
          "json last branch is the indirect call to 0")
    check(br[-1]["from_symbol"].startswith("dispatch+"), "json faulting caller")
    calls = th[0]["calls"]
    check([c["function"] for c in calls] ==
          ["main", "serve", "parse_request", "checksum", "parse_request", "dispatch", None],
          "json call history")
    # issue 41: the segment the trace ends in (at 0) has no branch taken
    # from it and no line: null, not numbers past the trace or 0
    bounds = [(c["first_branch"], c["last_branch"]) for c in calls]
    check(bounds[-1] == (None, None) and all(
        1 <= f <= l <= len(br) for f, l in bounds[:-1]),
        "json call bounds are branch numbers, null past the trace", str(bounds))
    check(all((c["line_min"] is None) == (c["file"] is None) and
              (c["line_max"] is None) == (c["file"] is None) for c in calls) and
          calls[-1]["line_min"] is None, "json call lines null when unknown")
    rc, out, _ = run("--json", "--last", "3", FIX + "/crasher-null.core")
    check(len(json.loads(out)["threads"][0]["branches"]) == 3, "--last 3 in json")
    # -n 0 is "all", for cores as for vmcores (issue 16: one set of options)
    rc0, all0, _ = run("-n", "0", FIX + "/crasher-null.core")
    rc1, dflt, _ = run(FIX + "/crasher-null.core")
    check(rc0 == 0 and all0 == dflt, "-n 0 prints every branch, as the default")
    rc, _, err = run("vmcore", "--calls", FIX + "/crasher-null.core")
    check(rc == 1 and "needs VMLINUX" in err, "vmcore --calls without vmlinux: usage error")


def test_no_symbols():
    """--no-symbols: the same branches, kinds and depths from the one
    model, without symbols or lines (what gdb, which symbolizes itself,
    asks for)."""
    args = [FIX + "/crasher-null.core", FIX + "/crasher"]
    full = json.loads(run("--json", *args)[1])["threads"][0]["branches"]
    rc, out, _ = run("--json", "--no-symbols", *args)
    bare = json.loads(out)["threads"][0]["branches"] if rc == 0 else []
    check(len(bare) == len(full) and
          all((a["from"], a["kind"], a["indirect"], a["depth"]) ==
              (b["from"], b["kind"], b["indirect"], b["depth"]) for a, b in zip(bare, full)) and
          all(b["from_symbol"] == b["from"] and b["from_line"] is None for b in bare),
          "--no-symbols: same branches and kinds, addresses for symbols: %s" % out[:300])


def test_abort_through_libc():
    rc, out, _ = run("--json", FIX + "/crasher-abort.core", FIX + "/crasher")
    check(rc == 0, "abort exit %d" % rc)
    th = json.loads(out)["threads"][0]
    check(th["signal_name"] == "SIGABRT", "abort signal")
    tos = [b["to_symbol"] for b in th["branches"]]
    check("check_invariant" in tos, "abort trail enters check_invariant")
    check("abort" in tos and "raise" in tos, "abort trail runs through libc: %s" % tos)
    check("abort@plt" in tos, "PLT entry named like gdb names it: %s" % tos)
    mods = {b["to_module"] for b in th["branches"]}
    check("libc.so.6" in mods and "crasher" in mods, "modules resolved: %s" % mods)


def test_threads():
    rc, out, _ = run("--json", FIX + "/crasher-threads.core", FIX + "/crasher")
    doc = json.loads(out)
    th = doc["threads"]
    check(rc == 0 and len(th) == 2, "threads: two traced threads")
    worker, main = th
    check(worker["faulting"] and not main["faulting"], "faulting thread first")
    check([(int(b["from"], 16), int(b["to"], 16)) for b in worker["branches"]] ==
          records("crasher-threads.records.worker"), "worker trail")
    check([(int(b["from"], 16), int(b["to"], 16)) for b in main["branches"]] ==
          records("crasher-threads.records"), "main trail")
    check(worker["branches"][-1]["to"] == "0x0" and
          main["branches"][-1]["to_symbol"] == "pthread_create@plt", "trail ends")
    rc, out, _ = run("--json", "--thread", str(main["tid"]), FIX + "/crasher-threads.core")
    sel = json.loads(out)["threads"]
    check(rc == 0 and len(sel) == 1 and sel[0]["tid"] == main["tid"], "--thread picks")


def test_exit_codes():
    rc, out, err = run(FIX + "/crasher-notrace.core")
    check(rc == 3 and "no branch trace" in err and not out, "no-trace core: %d %s" % (rc, err))
    rc, out, _ = run("--json", FIX + "/crasher-notrace.core")
    check(rc == 3 and json.loads(out)["threads"][0]["trace"] is None, "no-trace json")
    rc, _, err = run(FIX + "/crasher")
    check(rc == 2 and "not a core file" in err, "executable as core: %d %s" % (rc, err))
    rc, _, err = run(FIX + "/nonexistent.core")
    check(rc == 2 and "No such file" in err, "missing core: %d" % rc)
    rc, _, _ = run()
    check(rc == 1, "no arguments is a usage error")
    rc, _, _ = run("--last", "x", FIX + "/crasher-null.core")
    check(rc == 1, "bad --last is a usage error")
    rc, _, err = run("--thread", "1", FIX + "/crasher-null.core")
    check(rc == 5 and "no trace for thread 1" in err, "unknown thread: %d" % rc)
    tid = json.loads(run("--json", FIX + "/crasher-null.core")[1])["threads"][0]["tid"]
    rc, out, _ = run("--thread", str(tid), "--last", "2", FIX + "/crasher-null.core")
    check(rc == 0 and out.count("\n      ") == 0 and len([l for l in out.splitlines()
          if l.strip()[:1].isdigit()]) == 2, "--thread + --last 2")


def note_offset(data):
    i = data.find(b"BTSN\x01\x00\x40\x00")
    assert i > 0, "note magic not found"
    return i


def hostile(tmp, name, mutate, want_rc, want_err):
    core = os.path.join(tmp, name + ".core")
    data = bytearray(open(os.path.join(SRC, FIX, "crasher-null.core"), "rb").read())
    mutate(data, note_offset(data))
    open(core, "wb").write(data)
    rc, out, err = run(core, os.path.join(SRC, FIX, "crasher"))
    check(rc == want_rc and want_err in err,
          "hostile %s: exit %d (want %d), stderr %r" % (name, rc, want_rc, err))


def test_hostile_notes(tmp):
    def magic(d, o): d[o] ^= 0xff
    def count(d, o): d[o + 32:o + 40] = struct.pack("<Q", 2**61)
    def capacity(d, o): d[o + 24:o + 32] = struct.pack("<Q", 0)
    def kaddr(d, o): d[o + 64 + 8:o + 72 + 8] = struct.pack("<Q", 0xffffffff81000000)
    def marker(d, o): d[o + 64:o + 72] = struct.pack("<Q", 0xb75c000000000009)
    def hdrsize(d, o): d[o + 6:o + 8] = struct.pack("<H", 0xfff8)
    def descsz(d, o): d[o - 20:o - 16] = struct.pack("<I", 0xfffffff0)
    hostile(tmp, "magic", magic, 4, "bad magic")
    hostile(tmp, "count", count, 4, "do not fill")
    hostile(tmp, "capacity", capacity, 4, "capacity 0 out of range")
    hostile(tmp, "kaddr", kaddr, 4, "kernel address")
    hostile(tmp, "marker", marker, 4, "unknown marker kind 9")
    hostile(tmp, "hdrsize", hdrsize, 4, "header size")
    # a descriptor size running off the note segment: libelf stops walking
    hostile(tmp, "descsz", descsz, 4, "malformed note header")
    # truncated inside the note segment (gdb writes notes at the end)
    data = open(os.path.join(SRC, FIX, "crasher-null.core"), "rb").read()
    cut = os.path.join(tmp, "cut.core")
    open(cut, "wb").write(data[:note_offset(data) + 100])
    rc, _, err = run(cut)
    check(rc == 2 and "truncated" in err, "truncated core: %d %s" % (rc, err))


def test_add_note(tmp):
    core = os.path.join(tmp, "added.core")
    shutil.copy(os.path.join(SRC, FIX, "crasher-notrace.core"), core)
    recs = os.path.join(tmp, "recs.txt")
    want = records("crasher-null.records")
    with open(recs, "w") as f:
        f.write("# hand-written with markers\n")
        f.write("0x%x 0x%x\n" % want[0])
        f.write("switch-out 1000000000 1\nswitch-in 1000200000 0\n")
        f.write("gap 1 2000000000 5000\n")
        for a, b in want[1:]:
            f.write("0x%x 0x%x 0x10\n" % (a, b))
    rc, _, err = run("add-note", "--source", "hw", "--gaps", "1", core, recs)
    check(rc == 0, "add-note: %d %s" % (rc, err))
    rc, out, _ = run(core, os.path.join(SRC, FIX, "crasher"))
    check(rc == 0 and "switch-out cpu 1 at 1.000000000s" in out and
          "gap (perf)" in out and "trace: hardware" in out, "markers printed:\n" + out)
    doc = json.loads(run("--json", core)[1])
    br = doc["threads"][0]["branches"]
    check(len(br) == len(want) + 3 and br[1]["marker"] == "switch-out" and
          br[3]["reason"] == "perf", "markers in json")
    for tool in (["readelf", "-n"], ["eu-readelf", "-n"]):
        p = subprocess.run(tool + [core], capture_output=True, text=True)
        check(p.returncode == 0 and "BTSCRASH" in p.stdout, "%s reads the core" % tool[0])
    p = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt",
                        os.path.join(SRC, FIX, "crasher"), core],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "dispatch" in p.stdout, "gdb reads the core: " + p.stdout)
    # an LBR note whose last record carries a cycle count (format.md §1)
    lbr = os.path.join(tmp, "lbr.core")
    with open(recs, "w") as f:
        for a, b in want[-4:-1]:
            f.write("0x%x 0x%x 0x10\n" % (a, b))
        f.write("0x%x 0x%x 0x%x\n" % (want[-1] + (0x10 | 0x20 | 123 << 32,)))
    rc, _, err = run("add-note", "--source", "lbr", "--capacity", "32", "-o", lbr,
                     os.path.join(SRC, FIX, "crasher-notrace.core"), recs)
    rc2, out, _ = run(lbr, os.path.join(SRC, FIX, "crasher"))
    last = [l for l in out.splitlines() if re.match(r"\s*4 ", l)]
    doc = json.loads(run("--json", lbr, os.path.join(SRC, FIX, "crasher"))[1])
    br = doc["threads"][0]["branches"]
    check(rc == 0 and rc2 == 0 and "trace: lbr" in out and last and
          last[0].endswith("(123 cycles)") and out.count("cycles)") == 1 and
          br[-1].get("cycles") == 123 and all("cycles" not in b for b in br[:-1]),
          "an LBR record's cycle count: text '(123 cycles)', json 'cycles' only where "
          "present: %d %s\n%s" % (rc, err, out))
    with open(recs, "a") as f:
        f.write("not a record\n")
    rc, _, err = run("add-note", core, recs)
    check(rc == 1 and "cannot parse" in err, "bad records file: %d %s" % (rc, err))


def elf_note(name, ntype, desc):
    n = name.encode() + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(n), len(desc), ntype) + pad(n) + pad(desc)


def prstatus_note(tid, rip=0, sig=11, regs=()):
    """NT_PRSTATUS as Linux lays out struct elf_prstatus on x86-64:
    pr_cursig at 12, pr_pid at 32, pr_reg at 112 (user_regs_struct, rip
    its 17th word); regs: (word, value) pairs of pr_reg."""
    p = bytearray(336)
    struct.pack_into("<h", p, 12, sig)                # pr_cursig
    struct.pack_into("<i", p, 32, tid)                # pr_pid
    struct.pack_into("<Q", p, 112 + 16 * 8, rip)      # pr_reg.rip
    for word, value in regs:
        struct.pack_into("<Q", p, 112 + 8 * word, value)
    return elf_note("CORE", 1, bytes(p))


def siginfo_note(signo, code, addr):
    """NT_SIGINFO: si_signo, si_errno, si_code, then si_addr at 16."""
    return elf_note("CORE", 0x53494749, struct.pack("<iii4xQ", signo, 0, code, addr) +
                    b"\0" * 104)


def trace_note(tid, recs):
    hdr = struct.pack("<IHHIIQQQQIHHQ", 0x4e535442, 1, 64, 24, 4 | 2, tid,
                      64, len(recs), 0, 0, 2, 0, 0)
    body = b"".join(struct.pack("<QQQ", f, t, 0) for f, t in recs)
    return elf_note("BTSCRASH", 0x42540001, hdr + body)


def kernel_style_core(path, tid, recs, cut=None, notes=None, code=b""):
    """A core laid out as Linux's binfmt_elf writes it (notes first, then
    page-aligned loads: 8 KiB of nops at 0x400000, code first), with a trace note built
    from docs/format.md alone: an independent writer of the format."""
    if notes is None:
        notes = prstatus_note(tid) + trace_note(tid, recs)
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9,
                       4, 62, 1, 0, 64, 0, 0, 64, 56, 2, 0, 0, 0)
    note_off, load_off = 64 + 2 * 56, 0x1000 * (1 + (64 + 2 * 56 + len(notes)) // 0x1000)
    ph = struct.pack("<IIQQQQQQ", 4, 0, note_off, 0, 0, len(notes), 0, 4)
    ph += struct.pack("<IIQQQQQQ", 1, 5, load_off, 0x400000, 0, 0x2000, 0x2000, 0x1000)
    data = ehdr + ph + notes
    data += b"\0" * (load_off - len(data)) + code + b"\x90" * (0x2000 - len(code))
    open(path, "wb").write(data[:cut] if cut else data)


def test_fault_by_tid(tmp):
    """Each thread's NT_PRSTATUS is matched by pr_pid, also when the trace
    notes named the threads first; the first NT_PRSTATUS is the faulting
    thread, reported first, its pc tied to its trail."""
    core = os.path.join(tmp, "order.core")
    a, b = [(0x401000, 0x401100)], [(0x401200, 0x401300), (0x401305, 0x401500)]
    kernel_style_core(core, 0, [], notes=trace_note(77, a) + trace_note(78, b) +
                      prstatus_note(78, rip=0x401510) + prstatus_note(77, rip=0x401100, sig=0))
    rc, out, err = run("--json", core)
    th = json.loads(out)["threads"] if rc == 0 else []
    check(len(th) == 2 and th[0]["tid"] == 78 and th[0]["faulting"] and
          th[0]["signal"] == 11 and not th[1]["faulting"] and th[1]["fault"] is None,
          "PRSTATUS matched by TID after the trace notes: %d %s %s" % (rc, err, out))
    f = th[0].get("fault") or {} if th else {}
    check(f.get("pc") == "0x401510" and f.get("relation") == "run" and
          f.get("branch") == 2 and f.get("run_bytes") == 0x10 and f.get("si_code") is None,
          "faulting pc 0x10 bytes into the nops after #2: %s" % f)
    rc, out, _ = run(core)
    check("faulted at 0x401510 = 0x10 bytes into the straight-line run after #2" in out,
          "fault line in text:\n" + out)


def test_fault_and_smash():
    """The fault object and the smashed-stack flag on the fixtures."""
    def doc(name):
        rc, out, err = run("--json", "%s/crasher-%s.core" % (FIX, name), FIX + "/crasher")
        check(rc == 0, "%s: exit %d %s" % (name, rc, err))
        return json.loads(out)["threads"][0] if rc == 0 else {"branches": [], "fault": {}}
    null, smash, abort = doc("null"), doc("smash"), doc("abort")
    check(not any(b.get("smashed_stack") for b in null["branches"]),
          "null core: no smashed stack")
    check([b["number"] for b in smash["branches"] if b.get("smashed_stack")] ==
          [len(smash["branches"])] and smash["branches"][-1]["to"] == "0x414141414141",
          "smash core: the ret into 0x414141414141, and only it, is flagged")
    for t, rel in ((null, "target"), (smash, "target"), (abort, "run")):
        f, last = t["fault"] or {}, t["branches"][-1] if t["branches"] else {}
        check(f.get("relation") == rel and f.get("branch") == last.get("number"),
              "fault relation %s: %s" % (rel, f))
    f, last = abort["fault"] or {}, abort["branches"][-1]
    check(int(f["pc"], 16) - int(last["to"], 16) == f["run_bytes"] > 0 and
          f["address"] is None and f["si_code"] < 0,
          "abort: pc in the run after the newest branch, no si_addr (tgkill): %s" % f)
    check(null["fault"]["address"] == "0x0" and null["fault"]["pc"] == "0x0",
          "null: pc and si_addr 0: %s" % null["fault"])
    rc, out, _ = run(FIX + "/crasher-smash.core", FIX + "/crasher")
    lines = out.splitlines()
    check([l for l in lines if "smashed stack" in l] ==
          [l for l in lines if "0x414141414141 ??" in l] and
          any("faulted at 0x414141414141 = target of #11 (return in smash_victim)" in l
              for l in lines), "smash text:\n" + out)
    rc, out, _ = run(FIX + "/crasher-null.core", FIX + "/crasher")
    check("smashed stack" not in out, "null text: no smashed-stack marker")


def last_dropped(tmp, mode, patch=None, tail=()):
    """crasher-MODE.core as perf's LBR filter leaves a call to 0: its
    trace note hidden (renamed) and a new one written by add-note without
    the newest record (then the add-note lines of tail); patch(data) may
    change the core first."""
    data = bytearray(open(os.path.join(SRC, FIX, "crasher-%s.core" % mode), "rb").read())
    i = data.index(b"BTSCRASH\0")
    data[i:i + 8] = b"BTSCRASX"
    if patch:
        patch(data)
    hidden, recs = os.path.join(tmp, "hidden.core"), os.path.join(tmp, "dropped.records")
    core = os.path.join(tmp, "%s-dropped.core" % mode)
    open(hidden, "wb").write(data)
    with open(recs, "w") as f:
        f.writelines("0x%x 0x%x\n" % r for r in records("crasher-%s.records" % mode)[:-1])
        f.writelines(line + "\n" for line in tail)
    rc, _, err = run("add-note", "--source", "lbr", "--capacity", "32", "-o", core,
                     hidden, recs)
    check(rc == 0, "add-note %s without its newest record: %d %s" % (mode, rc, err))
    return core


def thread_doc(core, exe=FIX + "/crasher"):
    rc, out, err = run("--json", core, *([exe] if exe else []))
    check(rc == 0, "%s: exit %d %s" % (core, rc, err))
    return json.loads(out)["threads"][0] if rc == 0 else {"branches": [], "fault": {}}


PR_REG = 112            # struct elf_prstatus's pr_reg on x86-64
REG_RAX, REG_RDX, REG_RSP = 10, 12, 19   # their words in user_regs_struct


def prstatus_reg(data, word, value=None):
    """The first NT_PRSTATUS's register `word` (the faulting thread's);
    set to value if given."""
    o = data.index(struct.pack("<III", 5, 336, 1) + b"CORE\0\0\0\0") + 20
    o += PR_REG + 8 * word
    if value is not None:
        struct.pack_into("<Q", data, o, value)
    return struct.unpack_from("<Q", data, o)[0]


def core_offset(data, addr):
    """The file offset of addr in the core's PT_LOAD segments."""
    phoff, = struct.unpack_from("<Q", data, 32)
    for k in range(struct.unpack_from("<H", data, 56)[0]):
        typ, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + 56 * k)
        if typ == 1 and vaddr <= addr < vaddr + filesz:
            return off + addr - vaddr
    raise KeyError(hex(addr))


def test_inferred_call(tmp):
    """A trail whose newest record, the call to 0, was dropped (perf's LBR
    filter): the call in dispatch is inferred from the core, marked so
    in text and JSON; never when the core does not prove it."""
    full = records("crasher-null.records")
    core = last_dropped(tmp, "null")
    t = thread_doc(core)
    f, last = t["fault"] or {}, t["branches"][-1] if t["branches"] else {}
    check(f.get("relation") == "target" and f.get("inferred") is True and
          f.get("branch") == len(full) == last.get("number") and last.get("inferred") is True and
          (int(last["from"], 16), int(last["to"], 16)) == full[-1] and
          last["kind"] == "call" and last["indirect"] and
          not any(b.get("inferred") for b in t["branches"][:-1]),
          "JSON: the call to 0 inferred as #%d: %s %s" % (len(full), f, last))
    rc, out, _ = run(core, FIX + "/crasher")
    check(rc == 0 and "faulted at 0x0 = target of #16 (indirect call in dispatch, inferred)"
          in out and re.search(r"\n +16  call\* .*dispatch\+0x33 .*\(inferred: call not "
                               r"recorded\)\n", out), "text: #16 and the fault inferred:\n" + out)
    rc, out, _ = run("--calls", core, FIX + "/crasher")
    check(rc == 0 and "inferred)" in out and "not recorded" not in out,
          "--calls: the fault line says inferred, the history has recorded calls only")
    rc, out, _ = run(FIX + "/crasher-null.core", FIX + "/crasher")
    t = thread_doc(FIX + "/crasher-null.core")
    check("inferred" not in out and t["fault"]["inferred"] is False and
          not any("inferred" in b for b in t["branches"]),
          "the recorded call to 0: nothing inferred")
    t = thread_doc(FIX + "/crasher-smash.core")
    check(t["fault"]["inferred"] is False, "smash: nothing inferred")
    t = thread_doc(last_dropped(tmp, "smash"))
    check(t["fault"]["relation"] == "unrelated" and t["fault"]["inferred"] is False and
          not any("inferred" in b for b in t["branches"]),
          "smash without the wild ret: no inference: %s" % t["fault"])

    def rdx(d):
        prstatus_reg(d, REG_RDX, 8)

    def stack_word(d):
        o = core_offset(d, prstatus_reg(d, REG_RSP))
        d[o:o + 8] = struct.pack("<Q", struct.unpack_from("<Q", d, o)[0] + 1)
    for name, patch in (("rdx not 0", rdx), ("no return address at rsp", stack_word)):
        t = thread_doc(last_dropped(tmp, "null", patch))
        check(t["fault"]["relation"] == "unrelated" and t["fault"]["inferred"] is False,
              "%s: no inference: %s" % (name, t["fault"]))
    t = thread_doc(last_dropped(tmp, "null", tail=["gap 1 2000000000 5000"]))
    check(t["fault"]["relation"] == "unrelated" and t["fault"]["inferred"] is False,
          "a gap after the newest branch: no inference: %s" % t["fault"])
    t = thread_doc(last_dropped(tmp, "null", tail=["switch-out 1000000000 1",
                                                   "switch-in 1000200000 0"]))
    check(t["fault"]["inferred"] is True and t["fault"]["branch"] == 18,
          "switch markers after the newest branch: inferred as #18: %s" % t["fault"])


def test_inferred_jump(tmp):
    """A jmp *%rax to 0 the trace lacks: inferred from rax in the core,
    as the jump it was; not when rax is not pc."""
    core = os.path.join(tmp, "jump.core")
    recs = [(0x400100, 0x400000)]
    for rax, want in ((0, True), (8, False)):
        kernel_style_core(core, 0, [], code=b"\x90\x90\xff\xe0", notes=(
            prstatus_note(5, rip=0, regs=[(REG_RAX, rax)]) + siginfo_note(11, 1, 0) +
            trace_note(5, recs)))
        t = thread_doc(core, exe=None)
        last = t["branches"][-1] if t["branches"] else {}
        got = (t["fault"] or {}).get("inferred"), last.get("inferred", False)
        check(got == (want, want) and (not want or (
              last["from"], last["to"], last["kind"], last["indirect"], last["number"]) ==
              ("0x400002", "0x0", "jump", True, 2)),
              "jmp *%%rax, rax 0x%x: inferred %s: %s %s" % (rax, want, t["fault"], last))


def test_indirect_without_symbols(tmp):
    """call* / jump* come from the instruction bytes: a stripped executable
    (no symbols at all) still has them."""
    exe = os.path.join(tmp, "stripped")
    subprocess.run(["objcopy", "--strip-all", os.path.join(SRC, FIX, "crasher"), exe],
                   check=True)
    rc, out, _ = run(FIX + "/crasher-null.core", exe)
    last = [l for l in out.splitlines() if l.strip().startswith("16 ")]
    check(rc == 0 and "dispatch" not in out and last and " call* " in last[0],
          "indirect call marked without symbols:\n" + out)
    rc, out, _ = run("--no-symbols", FIX + "/crasher-null.core", FIX + "/crasher")
    check(rc == 0 and " jump* " in out and " call* " in out, "--no-symbols: marked:\n" + out)


def test_kernel_layout(tmp):
    recs = [(0x401000, 0x401100), (0x401105, 0x7f0000001000)]
    core = os.path.join(tmp, "k.core")
    kernel_style_core(core, 77, recs)
    rc, out, err = run("--json", core)
    th = json.loads(out)["threads"][0] if rc == 0 else {}
    check(rc == 0 and th.get("tid") == 77 and th["signal"] == 11 and
          [(int(b["from"], 16), int(b["to"], 16)) for b in th["branches"]] == recs,
          "kernel-layout core: %d %s %s" % (rc, err, out))
    kernel_style_core(core, 77, recs, cut=0x1800)
    rc, out, err = run(core)
    check(rc == 0 and "is truncated (12288 bytes expected)" in err and
          "0x000000401105" in out, "truncated kernel-layout core: %d %s" % (rc, err))


def test_separate_debuginfo(tmp):
    """A stripped executable: symbols and lines come from its separate
    debuginfo, found by build-id under --debuginfo-path."""
    exe = os.path.join(tmp, "crasher")
    dbg = os.path.join(tmp, "crasher.debug")
    subprocess.run(["objcopy", "--only-keep-debug", os.path.join(SRC, FIX, "crasher"), dbg],
                   check=True)
    subprocess.run(["objcopy", "--strip-all", os.path.join(SRC, FIX, "crasher"), exe],
                   check=True)
    notes = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
    bid = notes.split("Build ID:")[1].split()[0]
    root = os.path.join(tmp, "debug")
    os.makedirs(os.path.join(root, ".build-id", bid[:2]))
    os.rename(dbg, os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug"))
    core = os.path.join(SRC, FIX, "crasher-null.core")
    last = lambda out: json.loads(out)["threads"][0]["branches"][-1]
    rc, out, _ = run("--json", core, exe)
    check(rc == 0 and last(out)["from_symbol"].startswith("0x"),
          "stripped without debuginfo: no symbol (%s)" % last(out)["from_symbol"])
    rc, out, err = run("--json", "--debuginfo-path", root, core, exe)
    b = last(out) if rc == 0 else {}
    with open(os.path.join(SRC, "tests", "crasher.c")) as f:
        null_call = [i for i, l in enumerate(f, 1) if "call through NULL" in l][0]
    check(b.get("from_symbol") == "dispatch+0x33" and
          b.get("from_line") == "crasher.c:%d" % null_call,
          "separate debuginfo by build-id: %s %s" % (b, err))


def test_missing_module(tmp):
    """The executable found neither where the core's NT_FILE says nor where
    the command line says: its addresses print as module+offset, and one
    line names its path and build-id (the build-id readelf reads from the
    executable itself)."""
    data = open(os.path.join(SRC, FIX, "crasher-null.core"), "rb").read()
    # the mapped files' directory (tests/fixtures/README.md: /build/src),
    # renamed to one that does not exist, the length kept
    old, new = b"/build/src/build-d/tests/crasher", b"/nonexistent/dir/tests/crasher"
    new = new.replace(b"dir", b"d" * (3 + len(old) - len(new)))
    check(data.count(old) > 0 and len(new) == len(old), "fixture core names %s" % old)
    core = os.path.join(tmp, "hidden.core")
    open(core, "wb").write(data.replace(old, new))
    new = new.decode()
    notes = subprocess.run(["readelf", "-n", os.path.join(SRC, FIX, "crasher")],
                           capture_output=True, text=True).stdout
    bid = notes.split("Build ID:")[1].split()[0]
    rc, out, err = run(core, os.path.join(tmp, "no-such-exe"))
    missing = [l for l in out.splitlines() if l.startswith("missing:")]
    # (the EXECUTABLE given does not exist: said, status 7, report still printed)
    check(rc == 7 and "EXECUTABLE not used" in err and missing == ["missing: %s, build-id %s "
                                  "(addresses in it as crasher+OFFSET)" % (new, bid)],
          "one line names the missing module and its build-id: %d %s\n%s" % (rc, err, out))
    found = json.loads(run("--json", FIX + "/crasher-null.core", FIX + "/crasher")[1])
    doc = json.loads(run("--json", core)[1])
    br, want = doc["threads"][0]["branches"], found["threads"][0]["branches"]
    check([(b["from_module"], b["from_module_offset"]) for b in br] ==
          [(b["from_module"], b["from_module_offset"]) for b in want] and
          all(b["from_symbol"] == b["from"] for b in br),
          "module offsets as with the executable found, no symbols: %s" % br[-1])
    check(doc["missing_modules"] == [{"module": "crasher", "path": new,
                                      "build_id": bid}] and found["missing_modules"] == [],
          "json missing_modules: %s" % doc["missing_modules"])
    last = [l for l in out.splitlines() if l.strip().startswith("16 ")]
    off = int(want[-1]["from_module_offset"], 16)
    check(last and "crasher+0x%x" % off in last[0] and "??" not in last[0].split("->")[0] and
          "(indirect call at crasher+0x%x)" % off in out,
          "module+offset instead of ??:\n" + out)


def json_bytes(v):
    """A JSON string of docs/json.md "Strings" as the bytes it stands for:
    a string is UTF-8, an array its byte values."""
    return bytes(v) if isinstance(v, list) else v.encode("utf-8")


def test_json_utf8(tmp):
    """A core whose path is not UTF-8 (byte 0xE9, Latin-1 e-acute; 0xFF)
    still gives valid UTF-8 JSON that round-trips the path: it is written
    as the array of its bytes (docs/json.md "Strings"), valid UTF-8 paths
    stay strings, and the document carries its schema and version."""
    name = os.fsencode(tmp) + b"/caf\xe9-\xff.core"
    shutil.copy(os.path.join(SRC, FIX, "crasher-null.core"), name)
    p = subprocess.run([os.fsencode(BTSDUMP), b"--json", name,
                        os.fsencode(os.path.join(SRC, FIX, "crasher"))],
                       capture_output=True)
    try:
        doc = json.loads(p.stdout.decode("utf-8", errors="strict"))
        ok = (doc["schema"] == "btscrash-core" and doc["version"] == 7 and
              json_bytes(doc["core"]) == name and isinstance(doc["executable"], str) and
              doc["threads"][0]["branches"])
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as e:
        ok, p.stdout = False, repr(e).encode() + p.stdout[:300]
    check(p.returncode == 0 and ok,
          "non-UTF-8 core path: valid UTF-8 JSON, the path round-trips: %r" % p.stdout[:300])


# A path and a file name that would drive a terminal: clear the screen
# (ESC[2J), ring the bell, forge a line; 0xFF is not UTF-8.
HOSTILE = b"\x1b[2J\x07\nforged line\xff"


def no_raw_control(out):
    """True if the bytes hold no control byte but newlines and tabs (the
    call history's columns), and no C1."""
    return not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", out)


def test_hostile_names(tmp):
    """A core whose NT_FILE path and whose own file name carry ESC[2J, BEL,
    a newline and 0xFF: the text report shows them escaped (\\x1b), one
    line each, nothing raw reaches stdout or stderr; the JSON report gives
    the same bytes back (issue 30)."""
    data = open(os.path.join(SRC, FIX, "crasher-null.core"), "rb").read()
    old = b"/build/src/build-d/tests/crasher"
    new = b"/nonexistent/" + HOSTILE
    new += b"x" * (len(old) - len(new))
    check(data.count(old) > 0 and len(new) == len(old), "fixture core names %s" % old)
    core = os.fsencode(tmp) + b"/core-" + HOSTILE
    open(core, "wb").write(data.replace(old, new))
    p = subprocess.run([os.fsencode(BTSDUMP), core, b"/no-such-exe"], capture_output=True)
    out = p.stdout
    esc = rb"\x1b[2J\x07\x0aforged line\xff"
    check(p.returncode == 7 and no_raw_control(out) and no_raw_control(p.stderr) and
          b"forged line" not in out.replace(esc, b"") and
          (b"core: " + os.fsencode(tmp) + b"/core-" + esc + b"\n") in out and
          (b"missing: /nonexistent/" + esc) in out,
          "hostile names escaped in the text report: %d %r %r" %
          (p.returncode, out[:400], p.stderr[:300]))
    p = subprocess.run([os.fsencode(BTSDUMP), b"--json", core, b"/no-such-exe"],
                       capture_output=True)
    try:
        doc = json.loads(p.stdout.decode("utf-8", errors="strict"))
        mods = doc["missing_modules"]
        ok = (json_bytes(doc["core"]) == core and len(mods) == 1 and
              json_bytes(mods[0]["path"]) == new)
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as e:
        ok, p.stdout = False, repr(e).encode() + p.stdout[:300]
    check(p.returncode == 7 and ok and no_raw_control(p.stdout.rstrip(b"\n")),
          "hostile names: the JSON gives the bytes back: %r" % p.stdout[:400])


def test_hostile_symbol(tmp):
    """A symbol name with ESC[2J, a newline and 0xFF (objcopy renames
    dispatch): the branch list, the call history and the fault line show
    it escaped; JSON gives its bytes back (issue 30)."""
    exe = os.path.join(tmp, "crasher-hostile-sym")
    name = b"dis" + HOSTILE + b"patch"
    subprocess.run([b"objcopy", b"--redefine-sym", b"dispatch=" + name,
                    os.fsencode(os.path.join(SRC, FIX, "crasher")), os.fsencode(exe)], check=True)
    core = os.path.join(SRC, FIX, "crasher-null.core")
    esc = rb"dis\x1b[2J\x07\x0aforged line\xffpatch"
    for args in ([], ["--calls"]):
        p = subprocess.run([BTSDUMP, *args, core, exe], capture_output=True)
        check(p.returncode == 0 and no_raw_control(p.stdout) and
              b"(indirect call in " + esc + b")" in p.stdout and
              (esc + b"+0x33" in p.stdout or esc + b"\tat crasher.c:29" in p.stdout),
              "hostile symbol %s: escaped: %r" % (args, p.stdout[-500:]))
    p = subprocess.run([BTSDUMP, "--json", core, exe], capture_output=True)
    try:
        last = json.loads(p.stdout)["threads"][0]["branches"][-1]
        ok = json_bytes(last["from_symbol"]) == name + b"+0x33"
    except (ValueError, KeyError, IndexError, TypeError) as e:
        ok, last = False, repr(e)
    check(p.returncode == 0 and ok, "hostile symbol: the JSON gives the bytes back: %r" % (last,))


def test_demangle(tmp):
    """C++ and Rust names demangled (libiberty), --no-demangle keeps the
    ELF's: the fixture's dispatch renamed (objcopy) to an Itanium C++ name,
    a Rust legacy and a Rust v0 one.  Before: the mangled name, always."""
    core = os.path.join(SRC, FIX, "crasher-null.core")
    for i, (mangled, want) in enumerate((("_ZN2ns8dispatchEPFviE", "ns::dispatch(void (*)(int))"),
                          ("_ZN7crasher3net8dispatch17h0123456789abcdefE",
                           "crasher::net::dispatch"),
                          ("_RNvNtCs1234_7crasher3net8dispatch", "crasher::net::dispatch"))):
        exe = os.path.join(tmp, "crasher-mangled%d" % i)
        subprocess.run(["objcopy", "--redefine-sym", "dispatch=" + mangled,
                        os.path.join(SRC, FIX, "crasher"), exe], check=True)
        rc, out, err = run(core, exe)
        check(rc == 0 and "(indirect call in %s)" % want in out and mangled not in out,
              "demangled %s: %d %s %s" % (mangled, rc, err, out[-300:]))
        rc, out, err = run("--calls", core, exe)
        check(rc == 0 and want in out, "demangled in the call history: %s" % out[-300:])
        doc = json.loads(run("--json", core, exe)[1])
        check(doc["threads"][0]["branches"][-1]["from_symbol"] == want + "+0x33",
              "demangled in JSON: %s" % doc["threads"][0]["branches"][-1]["from_symbol"])
        rc, out, err = run("--no-demangle", core, exe)
        check(rc == 0 and "(indirect call in %s)" % mangled in out,
              "--no-demangle keeps %s: %d %s" % (mangled, rc, out[-300:]))


def main():
    test_golden()
    test_json_shape()
    test_no_symbols()
    test_abort_through_libc()
    test_threads()
    test_exit_codes()
    test_fault_and_smash()
    with tempfile.TemporaryDirectory() as tmp:
        test_hostile_notes(tmp)
        test_add_note(tmp)
        test_kernel_layout(tmp)
        test_fault_by_tid(tmp)
        test_inferred_call(tmp)
        test_inferred_jump(tmp)
        test_indirect_without_symbols(tmp)
        test_missing_module(tmp)
        test_separate_debuginfo(tmp)
        test_json_utf8(tmp)
        test_hostile_names(tmp)
        test_hostile_symbol(tmp)
        test_demangle(tmp)
    return T.done()


sys.exit(main())
