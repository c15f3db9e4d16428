#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks what one boot of the test VM (tests/vm/run-vm.sh) brought back.

Usage: check-vm.py BTSDUMP RESULTS_DIR

RESULTS_DIR holds console.log, the crasher binary and, per scenario of
tests/vm/init.sh, NAME.status / NAME.out / NAME.core.  Checks, each printed
as a TAP line: KUnit ran and every case passed; the NULL-call crash has the
real call chain from main to a call whose target is 0; the smashed return
is the last branch, into 0x414141414141; a multithreaded crash has one note
per thread, faulting thread first, with context-switch markers; an
untraced crash has no note (btsdump exit 3); a too-small RLIMIT_MEMLOCK
makes the prctl fail with ENOMEM and the program still runs; an LKDTM oops
report prints the CPU's last kernel branches, symbolized, ending in the
fault path from lkdtm_EXCEPTION; and no record
in any core has a kernel address (read from the raw ELF notes, without the
decoder, so a decoder bug cannot hide a leak).
"""
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import btsgdb  # noqa: E402  (tests/btsgdb.py)

TASK_SIZE_MAX = (1 << 47) - 4096          # x86-64, 4-level paging
MARKER_TAG, MARKER_MASK = 0xb75c << 48, 0xffff << 48
NT_BTSCRASH_THREAD, NT_PRSTATUS = 0x42540001, 1
# note header flags and the GAP marker's kind (include/uapi/linux/bts_crash.h)
NOTE_F_WRAPPED, NOTE_F_TRUNCATED, GAP_KIND = 1 << 0, 1 << 3, 3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402

from oracle import Oracle, read_log  # noqa: E402
from kwarn import kernel_warnings  # noqa: E402
from recovery import parse_engine  # noqa: E402

tap = Tap()
check = tap.check
BACKEND = "emul"        # or "hw": RESULTS_DIR/backend (tests/vm/vm-lib.sh)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def read_report(path):
    """A btsdumpd report (path without .zst): PATH.zst decompressed, as
    btsdumpd stores it; "" when there is none."""
    r = subprocess.run(["zstd", "-dc", path + ".zst"], capture_output=True)
    return r.stdout.decode(errors="replace") if r.returncode == 0 else ""


def status(res, name):
    s = read(os.path.join(res, name + ".status")).strip()
    return int(s) if s.isdigit() else None


def elf_notes(path):
    """(type, name, desc) of every note in the PT_NOTE segments of a core
    (ELF64, or ELF32 for a 32-bit program's core)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2):
        raise ValueError(f"{path}: not an ELF file")
    if data[4] == 2:
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)

        def phdr(at):   # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz
            t, _, off, _, _, size = struct.unpack_from("<IIQQQQ", data, at)
            return t, off, size
    else:
        phoff, = struct.unpack_from("<I", data, 0x1c)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x2a)

        def phdr(at):   # p_type, p_offset, p_vaddr, p_paddr, p_filesz
            t, off, _, _, size = struct.unpack_from("<IIIII", data, at)
            return t, off, size
    notes = []
    for i in range(phnum):
        p_type, p_offset, p_filesz = phdr(phoff + i * phentsize)
        if p_type != 4:
            continue
        off, end = p_offset, p_offset + p_filesz
        while off + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, off)
            off += 12
            name = data[off:off + namesz].rstrip(b"\0").decode(errors="replace")
            off += (namesz + 3) & ~3
            notes.append((ntype, name, data[off:off + descsz]))
            off += (descsz + 3) & ~3
    return notes


def trace_records(desc):
    """Records of a BTSCRASH thread or CPU note (layout: docs/format.md).
    Its nr_gaps counts every GAP marker the ring was written: those in the
    note, and where the ring wrapped or the note is its newest part only,
    at least those."""
    hdr_size, rec_size = struct.unpack_from("<HI", desc, 6)
    flags, = struct.unpack_from("<I", desc, 12)
    nr, = struct.unpack_from("<Q", desc, 32)
    nr_gaps, = struct.unpack_from("<I", desc, 48)
    if rec_size != 24 or hdr_size + nr * rec_size > len(desc):
        raise ValueError(f"thread note: {nr} records of {rec_size} bytes "
                         f"at {hdr_size} do not fit in {len(desc)} bytes")
    recs = []
    for i in range(nr):
        recs.append(struct.unpack_from("<QQQ", desc, hdr_size + i * rec_size))
    gaps = sum(r[0] & MARKER_MASK == MARKER_TAG and r[0] & 0xffff == GAP_KIND for r in recs)
    whole = not flags & (NOTE_F_WRAPPED | NOTE_F_TRUNCATED)
    if nr_gaps < gaps or (whole and nr_gaps != gaps):
        raise ValueError(f"note: nr_gaps {nr_gaps}, {gaps} GAP markers in its "
                         f"{'whole ring' if whole else 'newest records'}")
    return recs


def btsdump(tool, core, exe, *opts):
    p = subprocess.run([tool, *opts, core, exe], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def branches_json(tool, core, exe):
    rc, out, err = btsdump(tool, core, exe, "--json")
    if rc != 0:
        raise RuntimeError(f"btsdump --json {core}: exit {rc}: {err}")
    return json.loads(out)


def sym(s):
    return (s or "").split("+")[0]


def real(branches):
    return [b for b in branches if b["kind"] != "marker"]


def calls_to(branches):
    return [sym(b["to_symbol"]) for b in branches if b["kind"] == "call"]


def subsequence(needle, hay):
    it = iter(hay)
    return all(any(x == h for h in it) for x in needle)


def check_kunit(console):
    results = re.findall(r"^\s*(ok|not ok) \d+ (\S+)", console, re.M)
    suites = re.findall(r"# Subtest: (\S+)", console)
    for want in ("bts_crash", "x86_ds"):
        check(want in suites, f"KUnit suite {want} ran", "suites: %s" % suites)
    bad = [n for r, n in results if r == "not ok"]
    check(results and not bad, "every KUnit case passed (%d results)" % len(results),
          "failed: %s" % bad)


def check_no_warnings(console):
    """No kernel warning: the recorder's invariants are WARN_ON_ONCE (a
    ring loaded before its task publishes it, for one)."""
    warns = kernel_warnings(console)
    check(not warns, "the kernel printed no WARNING", "\n".join(warns[:5]))


def check_null(tool, res, exe):
    name = "null"
    check(status(res, name) == 139, f"{name}: the traced crasher died of SIGSEGV",
          "status %s\n%s" % (status(res, name), read(os.path.join(res, name + ".out"))))
    d = branches_json(tool, os.path.join(res, name + ".core"), exe)
    t = d["threads"][0]
    br = real(t["branches"])
    check(t.get("signal_name") == "SIGSEGV" and t.get("faulting"),
          f"{name}: faulting thread first, SIGSEGV", t.get("signal_name"))
    want = "hardware" if BACKEND == "hw" else "emulation"
    check(t["trace"]["source"] == want, f"{name}: trace from the {want} backend",
          t["trace"])
    last = br[-1] if br else {}
    check(last.get("kind") == "call" and int(last.get("to", "1"), 16) == 0 and
          sym(last.get("from_symbol")) == "dispatch",
          f"{name}: last branch is dispatch's call to 0", last)
    chain = calls_to(br)
    check(subsequence(["serve", "parse_request", "checksum", "dispatch"], chain),
          f"{name}: call chain main -> serve -> parse_request -> checksum, dispatch",
          chain[-20:])
    check(any(b["kind"] == "call" and sym(b["from_symbol"]) == "main" and
              sym(b["to_symbol"]) == "serve" for b in br),
          f"{name}: the trail starts in main", chain[-20:])


def check_uprobe(tool, res, exe):
    """A uprobe on checksum() of the traced crasher (tracefs): it fired,
    the program died of its SIGSEGV (not of a SIGTRAP meant for a
    debugger), and its trail is as complete as without the probe."""
    name = "uprobe"
    prof = read(os.path.join(res, name + ".profile"))
    hits = re.search(r"\bchecksum\s+(\d+)", prof)
    check(hits and int(hits.group(1)) >= 1, f"{name}: the probe fired", prof)
    check(status(res, name) == 139, f"{name}: the traced crasher died of SIGSEGV, not SIGTRAP",
          "status %s\n%s" % (status(res, name), read(os.path.join(res, name + ".out"))))
    d = branches_json(tool, os.path.join(res, name + ".core"), exe)
    br = real(d["threads"][0]["branches"])
    last = br[-1] if br else {}
    check(last.get("kind") == "call" and int(last.get("to", "1"), 16) == 0 and
          subsequence(["serve", "parse_request", "checksum", "dispatch"], calls_to(br)),
          f"{name}: the trail goes through the probed checksum() to the call to 0",
          calls_to(br)[-20:])


def check_movss(res):
    """A load of SS holds the step trap for one instruction: no record may
    start at the mov to SS (tests/vm/btsabi.c movss), raw from the core."""
    name = "movss"
    m = re.search(r"MOVSS=0x([0-9a-f]+)", read(os.path.join(res, name + ".out")))
    check(m and status(res, name) == 139, f"{name}: the traced program ran and crashed",
          read(os.path.join(res, name + ".out")))
    if not m:
        return
    at = int(m.group(1), 16)
    # branches only: markers (switch, gap) carry a non-canonical `from` and
    # may follow the call to 0 (the task switched out before the fault)
    recs = [r for t, n, d in elf_notes(os.path.join(res, name + ".core"))
            if n == "BTSCRASH" and t == NT_BTSCRASH_THREAD for r in trace_records(d)
            if r[0] < 1 << 47]
    near = [(hex(f), hex(t)) for f, t, _ in recs if f == at]
    check(recs and recs[-1][1] == 0 and not near,
          f"{name}: no branch recorded at the mov to SS, the call to 0 is last", near)


def check_late_enable(res):
    """ENABLE reaches a thread already running in user mode without a
    system call (tests/vm/btsabi.c late-enable): its core note holds its
    100 calls after ENABLE and ends at its call to 0, raw from the core."""
    name = "lateenable"
    check(status(res, name) == 139, f"{name}: the program crashed", status(res, name))
    notes = [d for t, n, d in elf_notes(os.path.join(res, name + ".core"))
             if n == "BTSCRASH" and t == NT_BTSCRASH_THREAD]
    # branches only: markers (switch, gap) carry a non-canonical `from`
    recs = [[r for r in trace_records(d) if r[0] < 1 << 47] for d in notes]
    fault = [r for r in recs if r and r[-1][1] == 0]
    check(len(notes) == 2 and len(fault) == 1 and len(fault[0]) >= 200,
          f"{name}: both threads traced; the spinning one's trail holds its calls "
          "made after ENABLE and ends at the call to 0",
          [len(r) for r in recs])


def check_recovery(tool, res, exe):
    """Value recovery (lib/recover.c) on the cores the kernel wrote, against
    what the trace itself proves: the engine's two directions never
    disagree (no conflict), and at every return the trail shows (from the
    ret to its target) where the engine knows rsp and the 8 bytes there,
    those bytes are the return's target (the hardware's, or the model's,
    record of where ret went).  recover-dump is built beside btsdump."""
    dump = os.path.join(os.path.dirname(os.path.dirname(tool)), "tests", "recover-dump")
    if not os.access(dump, os.X_OK):
        check(False, "recovery: %s is built (meson: tests/recover-dump)" % dump)
        return
    abi = os.path.join(res, "btsabi")
    for name, prog in (("null", exe), ("smash", exe), ("threads", exe),
                       ("handler", exe), ("wrap", exe), ("fork", exe),
                       ("movss", abi), ("lateenable", abi)):
        core = os.path.join(res, name + ".core")
        if not os.path.exists(core):
            continue    # its own check says why
        doc = json.loads(subprocess.run([tool, "--json", core, prog], capture_output=True,
                                        text=True, check=True).stdout)
        t = [t for t in doc["threads"] if t.get("faulting")][0]
        ret_list = [(int(b["from"], 16), int(b["to"], 16)) for b in t.get("branches", [])
                    if b["kind"] == "return"]
        rets = set(ret_list)
        p = subprocess.run([dump, core, prog], capture_output=True, text=True)
        if p.returncode:
            check(False, "recovery: %s: recover-dump ran" % name, p.stderr)
            continue
        conflicts, ent = parse_engine(p.stdout)
        checked, bad = 0, []
        for i in range(len(ent) - 1):
            a, regs, mem = ent[i]
            b = ent[i + 1][0]
            if a in ("gap", "end") or b in ("gap", "end") or \
               (int(a, 16), int(b, 16)) not in rets or \
               regs.get("rsp", (0, 0))[1] != 2**64 - 1:
                continue
            sp = regs["rsp"][0]
            if any(sp + k not in mem for k in range(8)):
                continue
            checked += 1
            v = sum(mem[sp + k] << 8 * k for k in range(8))
            if v != int(b, 16):
                bad.append("entry %d: ret at %s to %s, the engine's [rsp] %#x"
                           % (i, a, b, v))
        check(conflicts == 0 and not bad and (checked or not rets),
              "recovery: %s: no conflict, the return address the engine "
              "recovers at %d of the trail's %d returns is where ret went"
              % (name, checked, len(ret_list)),
              "conflicts %d\n%s" % (conflicts, "\n".join(bad[:10])))


def branch_insns(exe, bits):
    """Address -> mnemonic of every instruction of exe's code (objdump)."""
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M",
                        "i386" if bits == 32 else "x86-64", exe],
                       capture_output=True, text=True, check=True)
    insns = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
        if m:
            insns[int(m.group(1), 16)] = m.group(2)
    return insns


def check_null32(tool, res):
    """A 32-bit program (compat task), traced from exec: its ELF32 core's
    trace note holds its branches, every one recorded at a branch
    instruction of its code as a 32-bit disassembler reads it (a 64-bit
    decode of its code would not), main -> serve -> parse_request ->
    checksum -> dispatch, ending with dispatch's call to 0.  btsdump reads
    x86-64 cores only and says so."""
    name, exe = "null32", os.path.join(res, "crasher32")
    core = os.path.join(res, name + ".core")
    check(status(res, name) == 139, f"{name}: the 32-bit program crashed", status(res, name))
    with open(core, "rb") as f:
        cls = f.read(5)[4:]
    notes = [d for t, n, d in elf_notes(core) if n == "BTSCRASH" and t == NT_BTSCRASH_THREAD]
    check(cls == b"\x01" and len(notes) == 1, f"{name}: an ELF32 core with one trace note",
          (cls, len(notes)))
    if not notes:
        return
    recs = [r for r in trace_records(notes[0]) if r[0] < 1 << 47]
    syms = {}
    for line in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms[int(f[0], 16)] = f[2]
    insns = branch_insns(exe, 32)
    lo, hi = min(insns), max(insns)
    ours = [(f, t) for f, t, _ in recs if lo <= f <= hi]
    bad = [(hex(f), hex(t), insns.get(f)) for f, t in ours
           if not re.match(r"(j|call|ret|loop|iret|int|sysenter|syscall)", insns.get(f, "?"))]
    check(recs and len(ours) > 50 and not bad,
          f"{name}: each of its branches is recorded at a branch instruction "
          "(decoded in 32-bit mode)", f"{len(ours)} in its code, wrong: {bad[:5]}")
    calls = [syms[t] for f, t in ours if t in syms]
    dispatch = [a for a, n in syms.items() if n == "dispatch"]
    check(subsequence(["serve", "parse_request", "checksum", "dispatch"], calls) and
          recs[-1][1] == 0 and dispatch and 0 < recs[-1][0] - dispatch[0] < 0x100,
          f"{name}: the trail goes serve -> parse_request -> checksum -> dispatch "
          "and ends with dispatch's call to 0", (calls[-8:], hex(recs[-1][0]), hex(recs[-1][1])))
    rc, out, err = btsdump(tool, core, exe)
    check(rc != 0 and "not an x86-64" in err,
          f"{name}: btsdump refuses a 32-bit core with a clear error", (rc, err))


def check_smash(tool, res, exe):
    name = "smash"
    check(status(res, name) == 139, f"{name}: died of SIGSEGV", status(res, name))
    d = branches_json(tool, os.path.join(res, name + ".core"), exe)
    br = real(d["threads"][0]["branches"])
    last = br[-1] if br else {}
    check(last.get("kind") == "return" and last.get("to") == "0x414141414141" and
          sym(last.get("from_symbol")) == "smash_victim",
          f"{name}: last branch is smash_victim's ret into 0x414141414141", last)
    check(subsequence(["smash_victim", "fill"], calls_to(br)) and
          any(b["kind"] == "return" and sym(b["from_symbol"]) == "fill" for b in br),
          f"{name}: trail shows main -> smash_victim -> fill and fill's return",
          calls_to(br)[-10:])


# bts_crash.perf_rings=1 (vm-hw-perf-rings): each ring is a perf
# intel_bts event's AUX buffer, a power of two of pages, with no switch
# markers (perf keeps none yet).
PERF_RINGS = os.environ.get("VM_PERF_RINGS") == "1"


def ring_capacity(records):
    """The records a ring asked for with records holds."""
    if not PERF_RINGS:
        return records
    pages = -(-records * 24 // 4096)
    return (1 << (pages - 1).bit_length()) * 4096 // 24


def check_no_markers(name, branches):
    """A perf ring's trace: branches only, no marker."""
    marks = [b for b in branches if b["kind"] == "marker"]
    check(branches and not marks, f"{name}: no markers in a ring on perf "
          "(intel_bts records branches only)", marks[:4])


def check_threads(tool, res, exe):
    name = "threads"
    core = os.path.join(res, name + ".core")
    check(status(res, name) == 139, f"{name}: died of SIGSEGV", status(res, name))
    notes = elf_notes(core)
    nprs = sum(1 for t, n, _ in notes if t == NT_PRSTATUS and n == "CORE")
    ntr = sum(1 for t, n, _ in notes if t == NT_BTSCRASH_THREAD and n == "BTSCRASH")
    check(nprs == 2 and ntr == nprs, f"{name}: one trace note per thread",
          f"{nprs} threads, {ntr} trace notes")
    d = branches_json(tool, core, exe)
    first = d["threads"][0]
    br = real(first["branches"])
    last = br[-1] if br else {}
    check(first.get("faulting") and last.get("kind") == "call" and
          int(last.get("to", "1"), 16) == 0,
          f"{name}: faulting thread first, its last branch a call to 0", last)
    check(subsequence(["serve", "parse_request", "checksum", "dispatch"], calls_to(br)),
          f"{name}: the faulting thread's trail is worker's call chain",
          calls_to(br)[-20:])
    # Markers follow the schedule, which the test does not choose: a
    # thread may run from its first to its last record without being
    # switched.  What always holds: switches alternate in/out, in time
    # order, on a real CPU; a thread made by clone (the worker) has an
    # empty ring when it first runs, so its trace opens with that run's
    # switch-in; the exec'd main thread's ring started over at execve
    # while it was running, so its trace opens at _start, not at a switch.
    if PERF_RINGS:
        for t in d["threads"]:
            check_no_markers(f"{name}: thread {t['tid']}", t["branches"])
    for t in ([] if PERF_RINGS else d["threads"]):
        marks = [b for b in t["branches"] if b["kind"] == "marker"]
        kinds = [b["marker"] for b in marks if b["marker"].startswith("switch-")]
        stamps = [b["timestamp_ns"] for b in marks]
        check(marks and stamps == sorted(stamps) and
              all(a != b for a, b in zip(kinds, kinds[1:])) and
              all(b.get("cpu", 99) < 4 for b in marks),
              f"{name}: thread {t['tid']}: switch markers alternate in/out, "
              "timestamps in order", marks[:6])
    worker = first["branches"]
    opened = PERF_RINGS or (worker and worker[0].get("marker") == "switch-in")
    check(not first["trace"]["wrapped"] and worker and opened,
          f"{name}: the new thread's ring starts empty" +
          ("" if PERF_RINGS else " and its first run is marked (its trace opens "
           "with a switch-in)"), worker[:2])
    main = [t for t in d["threads"] if not t.get("faulting")]
    opening = real(main[0]["branches"])[:1] if main else []
    check(opening and sym(opening[0].get("from_symbol")) == "_start",
          f"{name}: the exec'd main thread's trace opens at _start", opening)


def check_handler(tool, res, exe):
    """A SIGUSR1 handler ran (raise()) before the call through NULL: the
    trace goes into the handler and back, as BTS would record it: the
    handler's own branches (its call of checksum), no record for the
    kernel's transfers into it and back."""
    name = "handler"
    check(status(res, name) == 139, f"{name}: died of SIGSEGV", status(res, name))
    br = real(branches_json(tool, os.path.join(res, name + ".core"), exe)
              ["threads"][0]["branches"])
    calls = calls_to(br)
    check(subsequence(["raise", "checksum", "serve", "parse_request", "dispatch"], calls)
          and any((b.get("from_symbol") or "").startswith("on_usr1") for b in br),
          f"{name}: the trail runs through the signal handler (on_usr1 calls "
          "checksum), then to the NULL call", calls[-12:])
    into = [b for b in br if b.get("to_symbol") == "on_usr1"]
    check(not into, f"{name}: no record for the kernel's transfer into the "
          "handler (BTS has none: it comes from CPL 0)", into)


def check_wrap(tool, res, exe):
    """A 256-record ring under a ~2000-branch trail: wrapped, the newest
    records in order up to the NULL call; the emulation counts what it
    lost, the hardware does not say (and the core does not pretend)."""
    name = "wrap"
    check(status(res, name) == 139, f"{name}: died of SIGSEGV", status(res, name))
    t = branches_json(tool, os.path.join(res, name + ".core"), exe)["threads"][0]
    tr, br = t["trace"], real(t["branches"])
    last = br[-1] if br else {}
    cap = ring_capacity(256)
    check(tr["wrapped"] and tr["capacity"] == cap and cap - 56 < tr["records"] <= cap,
          f"{name}: the ring wrapped, its newest records kept", tr)
    check(last.get("kind") == "call" and int(last.get("to", "1"), 16) == 0 and
          sym(last.get("from_symbol")) == "dispatch",
          f"{name}: still ends with dispatch's call to 0", last)
    if BACKEND == "hw":
        check(not tr["lost_exact"], f"{name}: the hardware's loss is not claimed "
              "exact", tr)
    else:
        check(tr["lost_exact"] and tr["lost"] > 1000,
              f"{name}: the emulation counts the records it overwrote", tr)


def check_notrace(tool, res, exe):
    name = "notrace"
    check(status(res, name) == 139, f"{name}: untraced crasher died of SIGSEGV",
          status(res, name))
    core = os.path.join(res, name + ".core")
    rc, out, err = btsdump(tool, core, exe)
    check(rc == 3 and "no branch trace" in (out + err),
          f"{name}: core without a trace note, btsdump says so (exit 3)",
          f"exit {rc}: {err}{out}")


def check_memlock(res):
    name = "memlock"
    out = read(os.path.join(res, name + ".out"))
    check("ENOMEM" in out and "errno 12" in out,
          f"{name}: prctl refused with ENOMEM over RLIMIT_MEMLOCK", out)
    check(status(res, name) == 2, f"{name}: the program still ran (its exit 2)",
          status(res, name))
    check(not os.path.exists(os.path.join(res, name + ".core")),
          f"{name}: no crash, no core")


def check_inherited(tool, res, exe):
    """Tracing reaches a forked child and the system-wide default; a user
    over RLIMIT_MEMLOCK runs untraced, told why in the log."""
    for name, how in (("fork", "a child of a traced shell"),
                      ("sysdefault", "traced by kernel.bts_crash_task_records")):
        d = branches_json(tool, os.path.join(res, name + ".core"), exe)
        br = real(d["threads"][0]["branches"])
        last = br[-1] if br else {}
        check(last.get("kind") == "call" and int(last.get("to", "1"), 16) == 0 and
              subsequence(["serve", "parse_request", "dispatch"], calls_to(br)),
              f"{name}: {how}: the core's trail ends in the call to 0", last)
        first = br[0] if br else {}
        check((first.get("from_symbol") or "").startswith("_start"),
              f"{name}: the ring started over at execve: the first record is "
              f"the new program's (_start), not its parent's", first)
    name = "sysdefault-memlock"
    check(status(res, name) == 139, f"{name}: untraced over the limit, still crashed",
          status(res, name))
    rc, out, err = btsdump(tool, os.path.join(res, name + ".core"), exe)
    check(rc == 3, f"{name}: its core has no trace (btsdump exit 3)", f"exit {rc}: {err}")
    dmesg = read(os.path.join(res, "dmesg"))
    check(re.search(r"bts_crash: crasher\[\d+\]: not traced: -12", dmesg) is not None,
          f"{name}: the log says why it is not traced",
          "\n".join(l for l in dmesg.splitlines() if "bts_crash" in l))


# bts_crash's report in an oops or panic: kernel branches (BTS) or, from
# the emulation, function entries with reconstructed call sites
REPORT = re.compile(r"bts_crash: last (\d+) kernel (branches|function entries) on CPU (\d+)"
                    r"(?: \([^)]*\))?, oldest first:\n((?:.*\[ *\d+\] .* -> .*\n)+)")


def check_panic_on_oops(console):
    """panic_on_oops without kdump (the end of tests/vm/init.sh): the panic
    report shows the oops's last kernel branches, not the printing's."""
    tail = console.split("BTSCRASH-PANIC-ON-OOPS", 1)
    check(len(tail) == 2 and "Kernel panic - not syncing: Fatal exception" in tail[1],
          "panic_on_oops: the oops panicked", tail[-1][-2000:])
    if len(tail) != 2:
        return
    after = tail[1].split("Kernel panic - not syncing", 1)[-1]
    text = re.sub(r"^\[ *\d+\.\d+\] ", "", after, flags=re.M)   # printk times
    m = REPORT.search(text)
    check(m is not None, "panic_on_oops: the panic report prints the last kernel branches",
          after[:2000])
    if m:
        check("lkdtm_EXCEPTION" in m.group(4),
              "panic_on_oops: they are the oops's (lkdtm_EXCEPTION), not the report's",
              m.group(4))


def check_abi(res):
    """tests/vm/btsabi.c: prctl, sysctl, charging and exec rules, one line
    per check, run inside the VM."""
    out = read(os.path.join(res, "abi.out"))
    lines = [l for l in out.splitlines() if re.match(r"(not )?ok - ", l)]
    check("btsabi: done" in out and len(lines) >= 20,
          "abi: btsabi ran to the end", out[-2000:])
    for l in lines:
        ok = l.startswith("ok - ")
        what, _, detail = l.split(" - ", 1)[1].partition(": ")
        gap = PERF_RINGS and next((why for key, why in PERF_RINGS_ABI_GAPS
                                   if key in detail), None)
        if gap and not ok:
            tap.skip(f"abi: {what}: {detail.split(':')[0]} ({gap})")
            continue
        check(ok, "abi: " + what, detail)


# What rings on perf do not do yet (bts_crash.perf_rings=1): a failing
# btsabi line holding the first string is a SKIP for the second.
PERF_RINGS_ABI_GAPS = (
    ("keeps the ring", "the old ring goes before the new one is made: "
     "perf takes one intel_bts event per task"),
    ("charges both threads' rings at once", "perf charges perf_mlock, not VmPin"),
    ("kB of VmPin", "perf charges perf_mlock, not VmPin"),
    ("for its two threads changes neither", "another thread's ring on perf is "
     "made and charged when that thread takes it: ENABLE cannot refuse for it"),
    ("after mlock() of the whole limit", "perf's charge does not count mlock()ed pages"),
    ("a child traced with the whole limit", "a ring on perf is a power of two of "
     "pages and perf's user page: 4096 records take 33 pages, past 96 KiB"),
)


def check_oops(res, console):
    """The LKDTM oops report carries this CPU's last kernel branches."""
    check("per-CPU kernel rings of 4096 records" in console,
          "oops: per-CPU kernel rings are recording",
          "\n".join(l for l in console.splitlines() if "bts_crash" in l))
    dmesg = read(os.path.join(res, "dmesg"))
    m = REPORT.search(dmesg)
    check(m is not None, "oops: the report prints the last kernel branches",
          dmesg[-3000:])
    if not m:
        return
    lines = m.group(4).splitlines()
    what = "branches" if BACKEND == "hw" else "function entries"
    check(m.group(2) == what, f"oops: the report says it prints kernel {what}", m.group(0)[:200])
    # 16 by default; the hardware records every branch, not function
    # entries, so its VM prints more (bts_crash.print_records, vm-lib.sh)
    want = re.search(r"bts_crash\.print_records=(\d+)", read(os.path.join(res, "cmdline")))
    want = int(want.group(1)) if want else 16
    check(len(lines) == int(m.group(1)) == want, f"oops: {want} branches printed", lines)
    check(any("lkdtm" in l for l in lines) and "lkdtm_EXCEPTION" in " ".join(lines),
          "oops: the trail reaches lkdtm_EXCEPTION", "\n".join(lines))
    check(all(re.search(r"\] \S+\+0x[0-9a-f]+/0x[0-9a-f]+ -> \S+\+0x[0-9a-f]+/0x[0-9a-f]+$", l)
              for l in lines), "oops: every branch symbolized both ends (%pS)",
          "\n".join(lines))
    check(status(res, "oops") not in (None, 0), "oops: the writing process died",
          status(res, "oops"))


def store_meta(d):
    m = {}
    for line in read(os.path.join(d, "meta")).splitlines():
        k, _, v = line.partition("=")
        m[k] = v
    return m


def store_entries(store):
    if not os.path.isdir(store):
        return []
    return sorted((e for e in os.listdir(store) if not e.startswith(".")),
                  key=lambda e: int(e.split(".")[0]))


def check_daemon(tool, res, exe, dmesg):
    """btsdumpd as the kernel's core_pattern handler (init.sh): the traced
    crash's entry has btsdump's trail; a core cut by ProcessSizeMax keeps
    its trail; the storm's 101 crashes are each stored or logged as
    rate-limited (burst 12)."""
    store = os.path.join(res, "store")
    if not os.path.isdir(store):
        print("# no btsdumpd scenario in this run (BTSDUMPD unset)")
        return
    es = store_entries(store)
    check(len(es) >= 1, "btsdumpd: the store has entries", read(os.path.join(res, "store.ls")))
    traced = [e for e in es if store_meta(os.path.join(store, e)).get("TRACE") == "present"]
    check(len(traced) == 1, "btsdumpd: one entry with a trace (the traced crash)", str(traced))
    first = os.path.join(store, traced[0] if traced else es[0])
    m = store_meta(first)
    check(m.get("EXE") == "/bin/crasher" and m.get("TRACE") == "present" and
          m.get("CORE") == "stored", "btsdumpd: the traced crash is stored with its trace", str(m))
    last = m.get("LAST_BRANCHES", "").split("\\n")[-1]
    check("dispatch+" in last and "0x000000000000" in last,
          "btsdumpd: the journal summary ends in dispatch's call to 0", last)
    core = os.path.join(res, "daemon-null.core")
    with open(core, "wb") as f:
        f.write(subprocess.run(["zstd", "-dc", os.path.join(first, "core.zst")],
                               capture_output=True, check=True).stdout)
    stored = json.loads(read_report(os.path.join(first, "report.json")))
    ref = branches_json(tool, core, exe)
    check([b["branches"] for b in stored["threads"]] == [b["branches"] for b in ref["threads"]],
          "btsdumpd: its report = btsdump's on the stored core")
    check(os.stat(first).st_mode & 0o777 == 0o750 and m.get("ACL") in ("set", "unsupported", "root"),
          "btsdumpd: the entry is not world-readable", oct(os.stat(first).st_mode))
    cut = store_entries(os.path.join(res, "store-cut"))
    mc = store_meta(os.path.join(res, "store-cut", cut[0])) if cut else {}
    txt = read_report(os.path.join(res, "store-cut", cut[0], "report.txt")) if cut else ""
    check(mc.get("CORE_TRUNCATED") == "1" and mc.get("TRACE") == "present" and
          "-> 0x414141414141" in mc.get("LAST_BRANCHES", "").split("\\n")[-1] and
          "smash_victim" in txt,
          "btsdumpd: a core cut at 200K (of ~400K) still has the smashed-return trail", str(mc))
    storm = [e for e in es if e not in traced]
    limited = len(re.findall(r"BTSDUMPD_RATELIMITED=\d+", dmesg))
    check(len(es) == 12 and limited == 89,
          f"btsdumpd: 101 crashes = {len(es)} stored + {limited} logged as rate-limited",
          read(os.path.join(res, "store.ls")))
    check(all(store_meta(os.path.join(store, e)).get("TRACE") == "absent" for e in storm),
          "btsdumpd: the untraced storm's entries say there is no trace")


def sysroot(res, exe):
    """gdb's commands for a core of the VM: its files are found under a
    sysroot that holds the crasher as /bin/crasher, as gdb needs to read
    the code of the core's file mappings (`set sysroot`, docs/gdb.md)."""
    root = os.path.join(res, "sysroot")
    os.makedirs(os.path.join(root, "bin"), exist_ok=True)
    link = os.path.join(root, "bin", "crasher")
    if not os.path.lexists(link):
        os.symlink(os.path.abspath(exe), link)
    return [f"set sysroot {os.path.abspath(root)}"]


def gdb_bts(tool, res, exe, core, *cmds):
    """Runs gdb with gdb/bts.py on a core of the VM (sysroot()); returns
    each command's output."""
    return btsgdb.run(os.path.abspath(exe), os.path.abspath(core), cmds,
                      os.path.abspath(tool), pre=sysroot(res, exe))


def check_gdb_stub(tool, res, exe, names):
    """gdb's own record commands on the VM's kernel-written cores, through
    `bts target` (btsdump gdbserver): each traced thread's `record
    instruction-history` is gdb/bts.py's rebuilt history (gaps where the
    kernel moved the thread at a syscall), its `record
    function-call-history` btsdump's call history (btsgdb.stub_histories)."""
    for name in names:
        core = os.path.join(res, name + ".core")
        rc, out, err = btsdump(tool, core, exe, "--json", "--calls")
        if rc != 0:
            raise RuntimeError(f"btsdump --json --calls {core}: exit {rc}: {err}")
        doc = json.loads(out)
        for ok, what, detail in btsgdb.stub_histories(
                os.path.abspath(exe), os.path.abspath(core), os.path.abspath(tool),
                doc, pre=sysroot(res, exe)):
            check(ok, f"gdb stub {name}: {what}", detail[-1500:])


def check_gdb_core(tool, res, exe, name, transfers=0, inferred=None):
    """bts-aware gdb (gdb/bts.py) on NAME's core: every thread's branches
    are btsdump's, and its instruction history rebuilds from the first
    record to the thread's pc without a break: each run of code between two
    recorded branches leads straight to the next one, and each recorded
    branch is a branch of its kind in the code.  TRANSFERS: how many times
    the history says the kernel moved the thread at a syscall; INFERRED:
    (from, to) of the branch the source left out (perf's LBR filter drops
    a call to 0), which btsdump infers from the core: the one branch
    marked inferred, the faulting thread's last, and the history notes it
    just before the pc; without INFERRED no branch may be inferred."""
    core = os.path.join(res, name + ".core")
    ref = branches_json(tool, core, exe)
    check_inferred(name, ref, inferred)
    lst, hist = gdb_bts(tool, res, exe, core,
                        "thread apply all bts list /r 1,1000000",
                        "thread apply all bts instruction-history 1,100000000")
    got = {tid: [tuple(int(x, 16) for x in re.findall(r"0x([0-9a-f]{16})", l))
                 for l in ls if re.match(r"\s*\d+  (?!--)", l)]
           for tid, ls in btsgdb.by_thread(lst).items()}
    want = {t["tid"]: [(int(b["from"], 16), int(b["to"], 16))
                       for b in t["branches"] if b["kind"] != "marker"]
            for t in ref["threads"] if t.get("trace")}
    # a thread without a note (the LBR collector's cores: only the
    # faulting thread's) is said to have none
    bare = [tid for tid, r in got.items() if not r]
    got = {tid: r for tid, r in got.items() if r}
    # an inferred branch: listed last, marked (gdb/bts.py, as btsdump)
    marked = {tid: [l for l in ls if re.match(r"\s*\d+  (?!--)", l)]
              for tid, ls in btsgdb.by_thread(lst).items()}
    marked = sorted((tid, i) for tid, ls in marked.items() for i, l in enumerate(ls)
                    if "(inferred: " in l)
    check(got == want and want and
          marked == sorted((t["tid"], len(want[t["tid"]]) - 1) for t in ref["threads"]
                           if any("inferred" in b for b in t["branches"])) and
          all(f"(LWP {tid}) has no branch trace in this core" in lst for tid in bare),
          f"gdb {name}: bts list of every thread = btsdump's records "
          f"({sum(map(len, want.values()))}; {len(bare)} threads without; "
          f"{len(marked)} inferred, marked, last)", lst[-800:])
    threads = {tid: ls for tid, ls in btsgdb.by_thread(hist).items() if tid in want}
    broken = [l for ls in threads.values() for l in ls
              if "does not lead" in l or "differs from" in l or
              "no trace from here" in l or "cannot read" in l]
    notes = [(tid, l.strip()) for tid, ls in threads.items() for l in ls
             if "inferred from the core" in l]
    inf = [(t["tid"], b) for t in ref["threads"] for b in t["branches"] if "inferred" in b]
    want_notes = [(tid, f"-- branch {b['number']} inferred from the core: the "
                   f"{b['kind']} was not recorded --") for tid, b in inf]
    check(notes == want_notes and
          all(threads[tid][-2].strip() == n for tid, n in notes),
          f"gdb {name}: the history notes {len(want_notes)} inferred branch"
          f"{'es' if len(want_notes) != 1 else ''}, just before the pc",
          "\n".join(n for _, n in notes) + "\n" + hist[-800:])
    # the kernel's transfers into a handler and back: not in a branch
    # trace, so the history says so, at the two syscalls (raise's
    # tgkill, __restore_rt's rt_sigreturn)
    kernel = [l for ls in threads.values() for l in ls
              if "the kernel took over at the syscall" in l]
    check(len(kernel) == transfers,
          f"gdb {name}: the history says where the kernel moved the "
          f"thread ({len(kernel)} syscalls)", "\n".join(kernel))
    nums = {tid: [int(l.split()[0]) for l in ls if re.match(r"\s*\d+\t", l)]
            for tid, ls in threads.items()}
    check(sorted(threads) == sorted(want) and not broken and
          all(n == list(range(1, len(n) + 1)) for n in nums.values()),
          f"gdb {name}: instruction history rebuilt without a break "
          f"({sum(map(len, nums.values()))} instructions)",
          "\n".join(broken[:8]) or hist[-800:])


def check_inferred(name, ref, inferred):
    """btsdump's branches marked inferred: none without INFERRED; with it
    exactly one, (from, to) = INFERRED, the faulting thread's last branch,
    numbered one past its records, the fault tied to it."""
    inf = [(t, b) for t in ref["threads"] for b in t["branches"] if "inferred" in b]
    if inferred is None:
        check(not inf, f"{name}: btsdump infers no branch (the trace holds them all)",
              [b for _, b in inf])
        return
    t, b = inf[0] if len(inf) == 1 else ({}, {})
    f = t.get("fault") or {}
    check(len(inf) == 1 and t["faulting"] and b is t["branches"][-1] and
          b["inferred"] is True and
          (int(b["from"], 16), int(b["to"], 16)) == tuple(inferred) and
          b["number"] == t["trace"]["records"] + 1 and f.get("inferred") is True and
          f.get("relation") == "target" and f.get("branch") == b["number"],
          f"{name}: btsdump infers the one branch the source left out "
          f"({inferred[0]:#x} -> {inferred[1]:#x}), last, the fault tied to it",
          [(b, t.get("fault")) for t, b in inf])


def check_gdb(tool, res, exe):
    """gdb/bts.py on the kernel-written cores (check_gdb_core)."""
    for name in ("null", "smash", "threads", "handler", "fork", "sysdefault"):
        check_gdb_core(tool, res, exe, name, 2 if name == "handler" else 0)
    calls, = gdb_bts(tool, res, exe, os.path.join(res, "null.core"),
                     "bts function-call-history 2")
    check(re.search(r"dispatch\n\s*\d+\t\?\?\s*$", calls),
          "gdb: the kernel's null core's call history ends: dispatch, then ??",
          calls[-400:])


def check_no_kernel_addresses(res):
    cores = sorted(f for f in os.listdir(res) if f.endswith(".core"))
    seen = 0
    for c in cores:
        for ntype, name, desc in elf_notes(os.path.join(res, c)):
            if name != "BTSCRASH":
                continue
            for frm, to, _ in trace_records(desc):
                seen += 1
                if (frm & MARKER_MASK) == MARKER_TAG:
                    continue
                if frm >= TASK_SIZE_MAX or to >= TASK_SIZE_MAX:
                    check(False, f"no kernel address in {c}",
                          "record 0x%x -> 0x%x" % (frm, to))
                    return
    check(seen > 0, "no record in any user core has a kernel address "
          f"({seen} records in {len(cores)} cores)")


SWITCH_OUT, SWITCH_IN = 1, 2


def check_own_records(res):
    """A thread's ring holds only what ran while it was on a CPU: after its
    switch-out marker, the next record is its switch-in (or a gap marker),
    never a branch (another task's, written into a ring left loaded)."""
    if PERF_RINGS:
        print("# own records: no switch markers in rings on perf; "
              "check_hw's oracle matches each note to its ring")
        return
    cores = sorted(f for f in os.listdir(res) if f.endswith(".core"))
    notes = bad = pairs = 0
    for c in cores:
        for ntype, name, desc in elf_notes(os.path.join(res, c)):
            if name != "BTSCRASH" or ntype != NT_BTSCRASH_THREAD:
                continue
            notes += 1
            out = False
            for frm, to, _ in trace_records(desc):
                marker = (frm & MARKER_MASK) == MARKER_TAG
                if marker and frm & 0xffff == SWITCH_OUT:
                    out = True
                elif marker:
                    pairs += out and frm & 0xffff == SWITCH_IN
                    out = False
                elif out:
                    bad += 1
                    check(False, f"{c}: only the thread's own records",
                          "branch 0x%x -> 0x%x while switched out" % (frm, to))
                    break
    check(notes > 0 and pairs > 0 and not bad,
          f"every thread note holds only its thread's records ({notes} notes, "
          f"{pairs} switch-out/in pairs)")


CEA_BASE, CEA_END = 0xfffffe0000000000, 0xfffffe8000000000   # cpu_entry_area


def check_hw(res, console):
    """The hardware backend ran on the BTS model, and every core's trace
    is what the model wrote: its records are the newest user records the
    CPU stored into that thread's ring, none missing at the end."""
    check("ds: BTS hardware backend on" in console,
          "hw: the kernel runs the BTS hardware backend on the model",
          "\n".join(l for l in console.splitlines() if "ds:" in l or "BTS" in l))
    cmdline = read(os.path.join(res, "cmdline"))
    check("ds." not in cmdline and "bts_crash.cpu_records=4096" in cmdline and
          "per-CPU kernel rings of 4096 records on 2 CPUs (BTS: kernel branches)" in console,
          "hw: BTS records, and every CPU keeps its kernel branches when "
          "bts_crash.cpu_records asks (opt-in)", cmdline)
    log = read_log(res)
    check(log, "hw: the model logged the records it wrote (oracle)",
          "no bts.log" if log is None else "empty bts.log")
    if not log:
        return
    in_cea = sum(1 for a in log.linear if CEA_BASE <= a < CEA_END)
    check(not in_cea, "hw: records go straight into the rings, none through "
          "the cpu_entry_area", "%d of %d in the cpu_entry_area" % (in_cea, len(log)))
    oracle = Oracle(log)
    cores = sorted(f for f in os.listdir(res) if f.endswith(".core"))
    for c in cores:
        for ntype, name, desc in elf_notes(os.path.join(res, c)):
            if name != "BTSCRASH" or ntype != NT_BTSCRASH_THREAD:
                continue
            tid, = struct.unpack_from("<Q", desc, 16)
            capacity, = struct.unpack_from("<Q", desc, 24)
            recs = trace_records(desc)
            m = oracle.match(recs, capacity)
            check(m and not m[2], f"hw oracle: {c} thread {tid}: its {len(recs)} "
                  "records are the newest the model wrote into its ring",
                  "no ring of the model's log ends with these records" if not m else
                  "%d newer user records in the ring after the core's last: %s" %
                  (len(m[2]), [str(log.entry(i)) for i in m[2][:4]]))


# a page-table dump's line (arch/x86/mm/dump_pagetables.c): range, size, flags
PTDUMP_LINE = re.compile(r"^0x([0-9a-f]+)-0x([0-9a-f]+)\s+\d+[KMGTP]\s+(.*)$")


def present_ranges(ptdump):
    """The [start, end) ranges a page-table dump shows present: a present
    entry prints RW or ro, a hole no flag at all."""
    out = []
    for line in ptdump.splitlines():
        m = PTDUMP_LINE.match(line)
        if m and re.search(r"\b(RW|ro)\b", m.group(3)):
            out.append((int(m.group(1), 16), int(m.group(2), 16)))
    return out


def ring_ranges(buffers):
    """debugfs ds/bts_buffers: "cpu N [bts A B] [kernel A B] [ring A B]
    [perf MASK]", each range [A, B) where a ring is written (empty ranges
    left out; the pair at the end is no range)."""
    out = []
    for line in buffers.splitlines():
        f = line.split()
        for i in range(2, len(f) - 2, 3):
            a, b = int(f[i + 1], 16), int(f[i + 2], 16)
            if b > a:
                out.append((f"cpu {f[1]} {f[i]}", a, b))
    return out


def check_pti(res):
    """Under PTI the user page tables map no page of any ring: not the
    buffer any CPU's DS area points at (a traced program spins on a CPU
    meanwhile, init.sh), not any CPU's kernel ring, whatever address it
    is written at.  A Meltdown-style read from any process would see it."""
    pt = read(os.path.join(res, "pti-user-pt"))
    buffers = read(os.path.join(res, "pti-buffers"))
    check(pt and buffers, "pti: user page tables and ring addresses read "
          "(debugfs page_tables/current_user, ds/bts_buffers)",
          "pti-user-pt %d bytes, pti-buffers %d bytes" % (len(pt), len(buffers)))
    if not (pt and buffers):
        return
    mapped, rings = present_ranges(pt), ring_ranges(buffers)
    hits = ["%s 0x%x-0x%x in mapped 0x%x-0x%x" % (n, a, b, lo, hi)
            for n, a, b in rings for lo, hi in mapped if a < hi and lo < b]
    check(mapped and rings and not hits, "pti: the user page tables map no ring "
          f"page ({len(rings)} ring ranges, {len(mapped)} mapped ranges)",
          "\n".join(hits[:8]) or buffers)


def check_hw_pti(res, console):
    """On the BTS model with PTI the hardware backend stays off (its rings
    would be mapped in user page tables): traced tasks get the emulation
    and the CPU writes no record at all."""
    check("ds: page-table isolation: BTS hardware backend off" in console,
          "hw pti: the hardware backend is off under page-table isolation",
          "\n".join(l for l in console.splitlines() if "ds:" in l))
    log = read_log(res)
    check(log is not None and len(log) == 0,
          "hw pti: the CPU wrote no BTS record (the model's log is empty)",
          "no bts.log" if log is None else "%d records" % len(log))


def check_defaults(res, console):
    """A boot with no bts_crash. or ds. parameter on the BTS model records
    nothing costly: no per-CPU kernel ring, and the CPU writes no record of
    a branch taken at CPL 0 (the model logs only those here: a kernel ring
    would log gigabytes); only the traced program's ring records."""
    cmdline = read(os.path.join(res, "cmdline"))
    check("bts_crash." not in cmdline and "ds." not in cmdline,
          "defaults: no bts_crash. or ds. parameter", cmdline)
    check("ds: BTS hardware backend on" in console,
          "defaults: the hardware backend is on (for traced tasks)",
          "\n".join(l for l in console.splitlines() if "ds:" in l))
    check("per-CPU kernel rings of" not in console,
          "defaults: no per-CPU kernel ring",
          "\n".join(l for l in console.splitlines() if "bts_crash" in l))
    params = re.findall(r"^DEFAULTS-PARAMS: (.*?)\r?$", console, re.M)
    check(re.search(r"^DEFAULTS-SYSCTL: 0\r?$", console, re.M) and params and
          "cpu_records" in params[0].split() and "task_records" not in params[0].split(),
          "defaults: kernel.bts_crash_task_records 0, the system-wide default's one "
          "knob (no bts_crash.task_records beside it)",
          [l for l in console.splitlines() if l.startswith("DEFAULTS-")])
    log = read_log(res)
    check(log is not None and len(log) == 0, "defaults: the CPU wrote no "
          "record of a branch taken at CPL 0 (the model's log, CPL 0 only)",
          "no bts.log" if log is None else [str(log.entry(i)) for i in range(min(4, len(log)))])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-vm.py BTSDUMP RESULTS_DIR")
    tool, res = sys.argv[1:]
    global BACKEND
    BACKEND = read(os.path.join(res, "backend")).strip() or "emul"
    pti = "pti=on" in read(os.path.join(res, "cmdline"))
    model = BACKEND
    if BACKEND == "hw" and pti:
        BACKEND = "emul"        # no hardware backend under PTI (check_hw_pti)
    print("# backend: " + BACKEND)
    exe = os.path.join(res, "crasher")
    console = read(os.path.join(res, "console.log"))
    check(console != "", "the VM's console log is there")
    print("# kernel command line: " + read(os.path.join(res, "cmdline")).strip())
    steps = [lambda: check_kunit(console), lambda: check_no_warnings(console),
             lambda: check_null(tool, res, exe),
             lambda: check_smash(tool, res, exe), lambda: check_threads(tool, res, exe),
             lambda: check_handler(tool, res, exe),
             lambda: check_wrap(tool, res, exe),
             lambda: check_notrace(tool, res, exe), lambda: check_memlock(res),
             lambda: check_inherited(tool, res, exe),
             lambda: check_oops(res, console),
             lambda: check_panic_on_oops(console),
             lambda: check_abi(res),
             lambda: check_movss(res),
             lambda: check_late_enable(res),
             lambda: check_null32(tool, res),
             lambda: check_uprobe(tool, res, exe),
             lambda: check_gdb(tool, res, exe),
             lambda: check_recovery(tool, res, exe),
             lambda: check_gdb_stub(tool, res, exe, ("null", "smash", "threads",
                                                      "handler", "fork")),
             lambda: check_daemon(tool, res, exe, read(os.path.join(res, "dmesg"))),
             lambda: check_no_kernel_addresses(res),
             lambda: check_own_records(res)]
    if "btscrash.defaults" in read(os.path.join(res, "cmdline")):
        steps = steps[:3] + [lambda: check_notrace(tool, res, exe),
                             lambda: check_defaults(res, console)]
    elif BACKEND == "hw":
        steps.append(lambda: check_hw(res, console))
    if model == "hw" and pti:
        steps.append(lambda: check_hw_pti(res, console))
    if pti:
        steps.append(lambda: check_pti(res))
    for step in steps:
        try:
            step()
        except (OSError, ValueError, RuntimeError, KeyError, IndexError,
                struct.error, json.JSONDecodeError) as e:
            check(False, "checker step raised", repr(e))
    sys.exit(tap.done(prune=res))


if __name__ == "__main__":
    main()
