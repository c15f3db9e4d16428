#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of the LBR source's VM run (BTSCRASH_BACKEND=lbr, tests/vm/init.sh
with bts_crash.source=lbr on the LBR model): programs nobody chose to trace
crash, and each core carries its dumping thread's last user branches, read
back by btsdump and compared entry for entry with the model's log of every
entry it pushed (qemu/lbr-log.py, lbr.log).  VM_LBR_CPU=amd: the same on
the AMD model's LbrExtV2 (16 entries, not 32), as a Zen 4; zen5: the same
model as a Zen 5 (Linux booted it as that CPU); and where perf was in the
VM (VM_PERF=1), perf record -b holding the stack at a crash.  TAP on
stdout.
Usage: check-lbr.py BTSDUMP RESULTS_DIR"""

import collections
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (load(), the LBR log in chunks)

cv = oracle.load("checkvm", "tests", "vm", "check-vm.py")
lbrlog = oracle.lbr_log
check = cv.check
# the AMD model's CPUs (tests/vm/vm-lib.sh): what Linux's smpboot line says
AMD_CPUS = {"amd": "family: 0x19, model: 0x11",        # VM_AMD_CPU, Zen 4
            "zen5": "family: 0x1a, model: 0x2"}        # VM_ZEN5_CPU, Zen 5
CPU = os.environ.get("VM_LBR_CPU", "intel")
AMD = CPU in AMD_CPUS
SOURCE_LBR, DEPTH = 3, 16 if AMD else 32
STACK = "LbrExtV2" if AMD else "model-specific LBR in the Skylake format"
GAP_PERF = cv.MARKER_TAG | 1 << 16 | 3      # BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF)
HI_LO, HI_HI = 0x20000000, 0x30000000      # btsabi-hi's code (vm-lib.sh)


def user(a):
    return a < cv.TASK_SIZE_MAX


def lbr_notes(res, name):
    """(header fields, records) of each BTSCRASH thread note of NAME's core."""
    out = []
    for t, n, d in cv.elf_notes(os.path.join(res, name + ".core")):
        if n != "BTSCRASH" or t != cv.NT_BTSCRASH_THREAD:
            continue
        flags, = struct.unpack_from("<I", d, 12)
        tid, capacity = struct.unpack_from("<QQ", d, 16)
        source, = struct.unpack_from("<H", d, 52)
        out.append(({"flags": flags, "tid": tid, "capacity": capacity,
                     "source": source}, [(f, to) for f, to, _ in cv.trace_records(d)]))
    return out


def windows(log_path, ends, depth=DEPTH, limit=-1):
    """For each (from, to) in ENDS: the windows of the DEPTH entries the
    model pushed on one vCPU up to and including such an entry (in the
    log's first LIMIT bytes, read in chunks)."""
    found = collections.defaultdict(list)
    last = collections.defaultdict(lambda: collections.deque(maxlen=depth))
    for frm, to, cpu, fmt in oracle.lbr_entries(log_path, limit, entry=lbrlog.BRANCH_FMT):
        if fmt == lbrlog.FORMAT_NMI:    # a stack logged at an NMI, no push
            continue
        e = (frm, to)
        last[cpu].append(e)
        if e in ends:
            found[e].append((cpu, list(last[cpu])))
    return found


def check_daemon(tool, res, exe):
    """btsdumpd as core_pattern handler (init.sh): an untraced crash is
    stored with its LBR note; the stored report is btsdump's on the stored
    core, and the journal summary and the fault line end at dispatch's
    call to 0."""
    store = os.path.join(res, "store")
    es = cv.store_entries(store)
    check(len(es) == 1, "lbr daemon: btsdumpd stored the untraced crash", es)
    if not es:
        return
    entry = os.path.join(store, es[0])
    m = cv.store_meta(entry)
    last = m.get("LAST_BRANCHES", "").split("\\n")[-1]
    check(m.get("EXE") == "/bin/crasher" and m.get("TRACE") == "present" and
          m.get("CORE") == "stored" and "dispatch+" in last and
          "0x000000000000" in last and "dispatch" in m.get("FAULT", ""),
          "lbr daemon: stored with its trace (the LBR note); the journal summary "
          "and the fault line end at dispatch's call to 0", str(m))
    core = os.path.join(res, "daemon-lbr.core")
    with open(core, "wb") as f:
        f.write(cv.subprocess.run(["zstd", "-dc", os.path.join(entry, "core.zst")],
                                  capture_output=True, check=True).stdout)
    stored = cv.json.loads(cv.read_report(os.path.join(entry, "report.json")))
    ref = cv.branches_json(tool, core, exe)
    check([t["trace"]["source"] for t in stored["threads"]] == ["lbr"] and
          [t["branches"] for t in stored["threads"]] ==
          [t["branches"] for t in ref["threads"]],
          "lbr daemon: its report (source lbr) = btsdump's on the stored core",
          [t["trace"] for t in stored["threads"]])


def check_perf(res, log):
    """perf record -b on a crasher (init.sh): perf's LBR user held the
    stack at the fault, so the core's note is one gap marker (reason perf)
    and no entry; perf's samples carry branch stacks that are the model's
    pushes (the stack was perf's, and perf's filter, user only, worked)."""
    try:
        ns = lbr_notes(res, "lbr-perf.crasher")
    except (OSError, ValueError) as e:
        check(False, "lbr-perf: the crasher under perf record -b dumped core", repr(e))
        return
    check(len(ns) == 1 and [f for f, _ in ns[0][1]] == [GAP_PERF],
          "lbr-perf: perf's LBR user held the stack at the fault: the note is "
          "one gap marker (reason perf), no entry of perf's",
          [(h, [(hex(f), hex(t)) for f, t in r]) for h, r in ns])
    report = cv.read(os.path.join(res, "lbr-perf.report"))
    stacks = cv.re.findall(r"branch stack: nr:(\d+)", report)
    pairs = {(int(f, 16), int(t, 16)) for f, t in cv.re.findall(
        r"^\.{5}\s+\d+: ([0-9a-f]{16}) -> ([0-9a-f]{16})", report, cv.re.M)}
    pushed, nmis = set(), []
    if os.path.exists(log):
        pushed, nmis = log_pushes_nmis(log)
    bad = [(hex(f), hex(t)) for f, t in pairs
           if (f, t) not in pushed or not user(f) or not user(t)]
    check(stacks and max(map(int, stacks)) > 0 and pairs and not bad,
          f"lbr-perf: perf's samples carry branch stacks ({len(stacks)} samples, "
          f"{len(pairs)} branches), user branches the model pushed",
          (stacks[:4], bad[:4], report[-400:]))
    if nmis:
        check_perf_nmi(report, nmis)
    snap = cv.read(os.path.join(res, "lbrsnap.out"))
    check("LBRSNAP: ret -2\n" in snap, "lbr-afterperf: bpf_get_branch_snapshot with no "
          "perf LBR user before it, on its CPU: none (-ENOENT), the LBR source's stack "
          "left on (its note: checked with the others)", snap[-300:])


def report_samples(report):
    """perf report -D's branch stacks, in order: lists of (from, to)."""
    out = []
    for ln in report.splitlines():
        if "branch stack: nr:" in ln:
            out.append([])
            continue
        m = cv.re.match(r"^\.{5}\s+\d+: ([0-9a-f]{16}) -> ([0-9a-f]{16})", ln)
        if m and out:
            out[-1].append((int(m.group(1), 16), int(m.group(2), 16)))
    return out


def log_pushes_nmis(log):
    """One pass over the model's log: the (from, to) pairs it pushed, and
    the stacks each vCPU held at each NMI (lbr-log-nmi=on), in the order
    the NMIs came, whichever vCPU took them."""
    pushed, stacks, cur = set(), [], {}
    for frm, to, _info, cpu, index, *_, fmt in oracle.lbr_entries(log):
        if fmt != oracle.lbr_log.FORMAT_NMI:
            pushed.add((frm, to))
            continue
        if index == 0:
            cur[cpu] = []
            stacks.append(cur[cpu])
        if cpu in cur:
            cur[cpu].append((frm, to))
    return pushed, stacks


def as_sample(stack):
    """What perf record -b -e cycles:u reads of STACK: the entries up to
    the first empty one, less those of a branch out of the kernel
    (perf's software filter of a user-only sample drops them: the
    hardware's CPL filter keeps a branch that ends in user mode)."""
    k = next((i for i, (f, _) in enumerate(stack) if not f), len(stack))
    return [(f, t) for f, t in stack[:k] if user(f) and user(t)]


def check_perf_nmi(report, stacks):
    """With lbr-log-nmi=on (Intel): each of perf's samples is the stack
    the model held at a PMI (an NMI: STACKS), in order."""
    got = [s for s in report_samples(report) if s]
    j, miss = 0, None
    for i, s in enumerate(got):
        while j < len(stacks) and as_sample(stacks[j]) != s:
            j += 1
        if j == len(stacks):
            miss = i
            break
        j += 1
    check(got and miss is None,
          f"lbr-perf: each of perf's {len(got)} branch stacks is the stack the model "
          f"held at an NMI, in order ({len(stacks)} NMIs logged)",
          (miss, [(hex(f), hex(t)) for f, t in got[miss][:3]] if miss is not None else None))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-lbr.py BTSDUMP RESULTS_DIR")
    tool, res = sys.argv[1:]
    console = cv.read(os.path.join(res, "console.log"))
    check(f"ds: LBR source on: {DEPTH} entries per CPU, user branches of every "
          f"task ({STACK})" in console,
          f"lbr: the kernel found the model's LBR ({STACK}, {DEPTH} entries)",
          "\n".join(line for line in console.splitlines() if "ds:" in line))
    if AMD:
        cpu = [l for l in console.splitlines() if "smpboot: CPU0:" in l]
        check(cpu and AMD_CPUS[CPU] in cpu[0],
              f"lbr: Linux booted the model as {CPU} ({AMD_CPUS[CPU]})", cpu)
    cv.check_no_warnings(console)
    exe = os.path.join(res, "crasher")
    notes = {}
    perf = os.path.exists(os.path.join(res, "lbr-perf.out"))
    names = ("lbr-null", "lbr-smash", "lbr-threads", "lbr-pingpong") + \
        (("lbr-afterperf",) if perf else ())
    for name in names:
        check(cv.status(res, name) == 139, f"{name}: crashed (SIGSEGV)",
              cv.status(res, name))
        try:
            notes[name] = lbr_notes(res, name)
        except (OSError, ValueError) as e:
            check(False, f"{name}: its core is readable", repr(e))
            notes[name] = []
    for name, ns in notes.items():
        check(len(ns) == 1 and ns[0][0]["source"] == SOURCE_LBR and
              ns[0][0]["capacity"] == DEPTH and 0 < len(ns[0][1]) <= DEPTH,
              f"{name}: one LBR thread note (the dumping thread's), at most {DEPTH} "
              "records, though nobody traced the program",
              [(h, len(r)) for h, r in ns])
        kernel = [(hex(f), hex(t)) for h, r in ns for f, t in r
                  if not user(f) or not user(t)]
        check(not kernel, f"{name}: no kernel address", kernel[:4])
    null = notes["lbr-null"][0][1] if notes["lbr-null"] else []
    check(null and null[-1][1] == 0, "lbr-null: the last record is the call to 0",
          null[-3:])
    # btsdump renders it as any trace, source "lbr"
    try:
        d = cv.branches_json(tool, os.path.join(res, "lbr-null.core"), exe)
        th = d["threads"][0]
        br = cv.real(th["branches"])
        check(th["trace"]["source"] == "lbr" and br and br[-1]["kind"] == "call" and
              cv.sym(br[-1].get("from_symbol")) == "dispatch",
              "lbr-null: btsdump reads it (source lbr), ending with dispatch's call to 0",
              (th["trace"], br[-2:]))
        check(len(br) == len(null) and
              cv.subsequence(["checksum", "dispatch"], [cv.sym(b.get("from_symbol"))
                                                       for b in br]),
              "lbr-null: its records are the end of the trail: checksum, then dispatch",
              [cv.sym(b.get("from_symbol")) for b in br])
    except (RuntimeError, KeyError, IndexError, ValueError) as e:
        check(False, "lbr-null: btsdump reads it", repr(e))

    # gdb's bts commands read it as any trace (gdb/bts.py)
    try:
        calls, insns = cv.gdb_bts(tool, res, exe, os.path.join(res, "lbr-null.core"),
                                  "bts function-call-history",
                                  "bts instruction-history")
        check(cv.re.search(r"dispatch\n\s*\d+\t\?\?\s*$", calls) and
              "=> 0x0000000000000000" in insns and "--" not in insns,
              "lbr-null: gdb's bts commands: the calls end in dispatch, then ??; "
              "the instruction history rebuilds without a break to the pc 0",
              calls[-300:] + insns[-300:])
    except (RuntimeError, OSError, ValueError) as e:
        check(False, "lbr-null: gdb's bts commands", repr(e))

    # gdb's own record commands through the stub on the LBR source's cores
    cv.check_gdb_stub(tool, res, exe, ("lbr-null", "lbr-threads"))

    check_daemon(tool, res, exe)

    # the oracle: each note is what the model pushed, oldest first, the
    # user entries of the 32 ending at the fault (more than 32 branches
    # since the switch-in: the stack went round)
    log = os.path.join(res, "lbr.log")
    ends = {ns[0][1][-1] for ns in notes.values() if ns and ns[0][1]}
    found = windows(log, ends, DEPTH) if os.path.exists(log) else {}
    check(found, "lbr: the model logged the entries it pushed (oracle)", log)
    for name in ("lbr-null", "lbr-smash", "lbr-threads") + names[4:]:
        if not notes[name]:
            continue
        hdr, recs = notes[name][0]
        if not recs:
            check(False, f"{name}: its records are the model's last pushes", "no record")
            continue
        # wrapped: all 32 pushes are the thread's; else those since its
        # switch-in, the newest of them
        ok = [cpu for cpu, w in found.get(recs[-1], [])
              if [e for e in w if user(e[0])][-len(recs):] == recs and
              (not hdr["flags"] & 1 or [e for e in w if user(e[0])] == recs)]
        check(ok, f"{name}: its {len(recs)} records are the model's newest pushes "
              "before the fault (user ones)" +
              (f", all {DEPTH} (wrapped)" if hdr["flags"] & 1 else ", since its switch-in"),
              "no window of the log matches")
    # two processes alternating on CPU 0: only the dumping one's entries
    if notes["lbr-pingpong"]:
        hdr, recs = notes["lbr-pingpong"][0]
        recs = recs or [(0, -1)]
        foreign = [(hex(f), hex(t)) for f, t in recs
                   if HI_LO <= f < HI_HI or HI_LO <= t < HI_HI]
        check(recs and recs[-1][1] == 0 and not foreign and len(recs) < DEPTH and
              not hdr["flags"] & 1,
              "lbr-pingpong: only its own branches since its switch-in, none of "
              "the partner that ran on the CPU before it", (len(recs), foreign[:4]))
        w = [w for cpu, w in found.get(recs[-1], [])]
        held = [e for e in (w[-1] if w else []) if HI_LO <= e[0] < HI_HI]
        check(held, "lbr-pingpong: the CPU's stack did hold the partner's "
              "branches then (the model's log): the kernel left them out",
              f"no partner entry among the {DEPTH} before the fault")
    if perf:
        check_perf(res, log)
    sys.exit(cv.tap.done(prune=res))


if __name__ == "__main__":
    main()
