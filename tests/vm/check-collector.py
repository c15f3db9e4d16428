#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of run-collector-vm.sh (Debian's stock 6.1 or 6.12 kernel on the
PMU model): perf's user branch stacks are the model's pushes; btsdumpd's
LBR collector armed, and each crash nobody traced is stored with one
thread note, source lbr, equal entry for entry to the newest user entries
the model pushed on that CPU before the fault (qemu/lbr-log.py); with
CASE nopmu, one line says why there is no collector and the crash is
stored as before.  CASE amd (the AMD model, LbrExtV2, as a Zen 4) and
zen5 (as a Zen 5): Linux's own detection found that CPU, AMD's PMU
driver with six counters and the 16-deep LbrExtV2, and the same with 16
entries on 6.12; on a kernel before 6.10, one line saying it cannot
snapshot AMD's LBR.  CASE arch (the Architectural LBR model): as pmu,
with Linux's "Architectural LBR".  Every reader shows each crasher note as it is:
btsdump, `btsdumpctl info`, gdb's bts commands and gdb's own record
commands through `bts target` (btsdump gdbserver).  TAP on stdout.
Usage: check-collector.py BTSDUMP BTSDUMPCTL RESULTS_DIR"""

import collections
import importlib
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle  # noqa: E402  (the LBR log in chunks)
lbr = importlib.import_module("check-lbr")     # its note reader, check-vm's helpers
cv = lbr.cv
check = cv.check
MODES = ("null", "abort", "smash", "handler", "threads", "pingpong", "perfb", "hotplug")
# the AMD model's run: the first six (collector-init.sh; its LBR log grew
# to 15 GB with perfb and hotplug too)
AMD_MODES = MODES[:6]
AMD_CPUS = lbr.AMD_CPUS    # the AMD model's CPUs, as Linux's smpboot line names them
# more of the model's log than this the check does not read into memory
# (a 24 GB machine): the run failed its purpose, say so
LOG_MAX = 6 << 30
NULL_CALLS = ("null", "handler", "threads", "pingpong", "perfb", "hotplug")   # a call to 0
# where gdb's history says the kernel moved the thread at a syscall: the
# handler's note of 32 (Intel) opens in the handler, so only __restore_rt's
# rt_sigreturn; one of 16 (AMD) opens after it, so none
GDB_TRANSFERS = {"handler": 1}


def log_limit(res):
    """How much of the model's log to read: up to the storm (its hundred
    crashes grow the log to gigabytes the checks do not need), as
    collector-test.sh noted when the console said STORM-BEGIN."""
    n = cv.read(os.path.join(res, "storm-offset")).strip()
    return int(n) if n.isdigit() else -1


def log_by_cpu(path, limit):
    """The model's pushes of user branches, per vCPU, oldest first: [(from,
    to)] (not the returns from the kernel, sysret or iret, which the LBR
    holds and perf's filter and the collector leave out).  Read in chunks,
    one tuple per distinct branch (the log repeats loops' branches
    millions of times: gigabytes as tuples of their own)."""
    seqs = collections.defaultdict(list)
    same = {}
    size = os.path.getsize(path) if limit < 0 else limit
    if size > LOG_MAX:
        raise OSError(f"{path}: {size} bytes to read, over {LOG_MAX}: the run "
                      "pushed far more user branches than its crashes need")
    user = cv.TASK_SIZE_MAX     # lbr.user(), inline: called per entry
    for frm, to, cpu in oracle.lbr_entries(path, limit, entry=oracle.lbr_log.BRANCH):
        if frm < user:
            e = (frm, to)
            seqs[cpu].append(same.setdefault(e, e))
    return seqs


def contiguous_in(run, seqs, index):
    """Whether run (oldest first) is a contiguous stretch of one CPU's log."""
    for cpu, i in index.get(run[0], []):
        if seqs[cpu][i:i + len(run)] == run:
            return True
    return False


def index_of(seqs, keys):
    """Where on which CPU each of keys was pushed: {key: [(cpu, i)]}."""
    idx = collections.defaultdict(list)
    for cpu, seq in seqs.items():
        for i, e in enumerate(seq):
            if e in keys:
                idx[e].append((cpu, i))
    return idx


def check_perf(res, seqs, depth):
    """perf record -j any,u: each sample's stack (newest first) is, read
    backwards, a stretch of the model's pushes."""
    samples = []
    for line in cv.read(os.path.join(res, "perf-brstack.txt")).splitlines():
        ents = re.findall(r"(0x[0-9a-f]+)/(0x[0-9a-f]+)/", line)
        if ents:
            samples.append([(int(f, 16), int(t, 16)) for f, t in reversed(ents)])
    index = index_of(seqs, {s[0] for s in samples})
    bad = [s for s in samples if not contiguous_in(s, seqs, index)]
    check(samples and not bad and all(0 < len(s) <= depth for s in samples),
          f"perf: {len(samples)} samples of `perf record -j any,u`, each a stack of "
          f"at most {depth} that is a stretch of the model's user pushes on one vCPU",
          (len(samples), [[(hex(f), hex(t)) for f, t in s[-3:]] for s in bad[:3]]))


def entries_by_mode(res):
    """{mode: [entry directory]} from init's entry-ID files."""
    out = collections.defaultdict(list)
    for name in sorted(os.listdir(res)):
        if name.startswith("entry-"):
            out[cv.read(os.path.join(res, name)).strip()].append(
                os.path.join(res, "store", name[len("entry-"):]))
    return out


def stored_core(entry, dest):
    with open(dest, "wb") as f:
        f.write(subprocess.run(["zstd", "-dc", os.path.join(entry, "core.zst")],
                               capture_output=True, check=True).stdout)
    return dest


def check_crash(tool, ctl, res, mode, entry, seqs, depth):
    m = cv.store_meta(entry)
    check(m.get("CORE") == "stored" and m.get("TRACE") == "present",
          f"{mode}: stored, with a trace (the collector's note)", m)
    try:
        stored_core(entry, os.path.join(res, mode + ".core"))
        notes = lbr.lbr_notes(res, mode)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        check(False, f"{mode}: its stored core is readable", repr(e))
        return
    check(len(notes) == 1 and notes[0][0]["source"] == lbr.SOURCE_LBR and
          notes[0][0]["capacity"] == depth and 0 < len(notes[0][1]) <= depth,
          f"{mode}: one thread note, source lbr, capacity {depth}, at most {depth} "
          "records",
          [(h, len(r)) for h, r in notes])
    if len(notes) != 1 or not notes[0][1]:
        return
    hdr, recs = notes[0]
    numbered = len(recs)	# btsdump numbers the markers too (FAULT's #N)
    recs = [r for r in recs if r[0] >> 48 != 0xb75c]	# no markers
    kernel = [r for r in recs if not lbr.user(r[0]) or not lbr.user(r[1])]
    # a call to 0: perf's filter drops it, unless another LBR user's
    # filter (perf record -b: any branch, no software filter) is in force
    dropped = mode in NULL_CALLS and recs[-1][1] != 0
    check(not kernel, f"{mode}: no kernel address", kernel[:3])
    ok, inferred = [], None
    for cpu, seq in seqs.items():
        for i, e in enumerate(seq):
            if e != recs[-1] or seq[i - len(recs) + 1:i + 1] != recs:
                continue
            # the newest: the fault is the last record's target or in the
            # straight-line run after it (the analysis' FAULT line); a
            # stock kernel's perf drops a branch to 0 (branch_type(): an
            # empty slot), so a call to 0 is the model's next push
            nxt = seq[i + 1] if i + 1 < len(seq) else None
            if (dropped and nxt and nxt[1] == 0) or (
                    not dropped and re.search(
                        rf"(target of|straight-line run after) #{numbered} ",
                        m.get("FAULT", ""))):
                ok.append(cpu)
                inferred = nxt if dropped else None
    check(ok, f"{mode}: its {len(recs)} records are, entry for entry, the model's "
          "newest user pushes on the vCPU before the fault" +
          (" but the call to 0 (perf's filter drops it)" if dropped else ""),
          ([(hex(f), hex(t)) for f, t in recs[-4:]], m.get("FAULT")))
    check_inferred_meta(mode, m, numbered, dropped, inferred)
    if mode != "pingpong":      # btsabi's: not the crasher
        check_readers(tool, ctl, res, mode, entry, recs, inferred,
                      GDB_TRANSFERS.get(mode, 0) if depth == lbr.DEPTH else 0)


def check_inferred_meta(mode, m, numbered, dropped, inferred):
    """btsdumpd's FAULT and LAST_BRANCHES: where perf dropped the call to 0
    (the model-specific LBR; INFERRED: the model's push of it), the readers
    infer it from the core (lib/infer.c), numbered one past the note and
    marked inferred: the fault tied to it, in dispatch; nothing is inferred
    where the note holds every branch (Arch LBR, perf record -b).  btsabi's
    pingpong may also leave it unproven (its code is not the crasher's)."""
    fault, last = m.get("FAULT", ""), m.get("LAST_BRANCHES", "").split("\\n")
    marked = [l for l in last if "inferred" in l]
    inf = re.fullmatch(rf"faulted at 0x0 = target of #{numbered + 1} \(indirect call "
                       rf"in (\S+), inferred\)", fault)
    if not dropped:
        check("inferred" not in fault and not marked,
              f"{mode}: the note holds the branch to the fault: nothing inferred",
              (fault, marked))
        return
    if mode == "pingpong" and not inf and not marked:
        return
    check(inferred and inf and (inf[1] == "dispatch" or mode == "pingpong") and
          marked == last[-1:] and re.match(
              rf"\s*{numbered + 1}  call\* +0x{inferred[0]:012x} .*-> 0x000000000000 .*"
              r"\(inferred: call not recorded\)$", last[-1]),
          f"{mode}: the call to 0 perf dropped is inferred, as the model pushed it: "
          f"#{numbered + 1}, marked in LAST_BRANCHES, the fault tied to it",
          (fault, last[-2:], inferred and hex(inferred[0])))


def check_readers(tool, ctl, res, mode, entry, recs, inferred, transfers):
    """The note as every reader shows it: btsdump's records (source lbr),
    `btsdumpctl info`'s last branches (the newest JournalBranches of
    them), gdb/bts.py's bts list and history (check-vm.py's
    check_gdb_core) and gdb's own record commands through the stub.
    INFERRED: the call to 0 perf dropped, as the model pushed it: every
    reader but the stub shows it after the records, marked inferred (the
    stub serves recorded branches only)."""
    exe = os.path.join(res, "crasher")
    shown_recs = recs + ([inferred] if inferred else [])
    try:
        d = cv.branches_json(tool, os.path.join(res, mode + ".core"), exe)
        th = [t for t in d["threads"] if t.get("trace")]
        brs = [b for t in th for b in t["branches"] if b["kind"] != "marker"]
        got = [(int(b["from"], 16), int(b["to"], 16)) for b in brs]
        marked = [i for i, b in enumerate(brs) if "inferred" in b]
        check(len(th) == 1 and th[0]["trace"]["source"] == "lbr" and got == shown_recs and
              marked == ([len(brs) - 1] if inferred else []) and
              all(brs[i]["inferred"] is True for i in marked),
              f"{mode}: btsdump reads the note (source lbr), its {len(recs)} records" +
              (", then the dropped call inferred" if inferred else ""),
              ([t["trace"] for t in th], marked))
    except (RuntimeError, KeyError, ValueError) as e:
        check(False, f"{mode}: btsdump reads the note", repr(e))
    p = subprocess.run([ctl, "--store", os.path.join(res, "store"), "info",
                        os.path.basename(entry)], capture_output=True, text=True)
    lines = p.stdout.split(" Last Branches:\n")[-1].split("\n        Report:")[0]
    rows = [l for l in lines.splitlines() if re.match(r"\s+\d+  ", l)]
    shown = [tuple(int(a, 16) for a in re.findall(r"0x([0-9a-f]{12})\b", l)) for l in rows]
    marked = [l for l in rows if "inferred" in l]
    check(p.returncode == 0 and shown and shown == shown_recs[-len(shown):] and
          marked == (rows[-1:] if inferred else []),
          f"{mode}: btsdumpctl info shows the newest {len(shown)} of them" +
          (", the last inferred" if inferred else ""),
          p.stdout[-1500:] + p.stderr)
    cv.check_gdb_core(tool, res, exe, mode, transfers, inferred)
    try:
        cv.check_gdb_stub(tool, res, exe, (mode,))
    except (RuntimeError, ValueError) as e:
        check(False, f"gdb stub {mode}: btsdump gdbserver serves the core", repr(e))


def exec_ranges(core):
    """[(start, end)] of a 64-bit core's executable PT_LOADs: the crashing
    process's code (its own, its libraries', the vDSO)."""
    with open(core, "rb") as f:
        data = f.read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        t, flags, _, vaddr, _, _, memsz = struct.unpack_from(
            "<IIQQQQQ", data, phoff + i * phentsize)
        if t == 1 and flags & 1:
            out.append((vaddr, vaddr + memsz))
    return out


def check_pingpong(res, entry, depth):
    """btsabi and btsabi-hi alternated on CPU 0, then btsabi crashed: its
    note holds none of btsabi-hi's branches (perf's reset at switch-in),
    though the CPU's LBR held them shortly before (the model's log); and
    no stale tail: the few entries since its switch-in, every one in
    btsabi's own code, the note neither wrapped nor with a gap where the
    chain check dropped older entries (before lbr.bpf.c read perf's
    count, bpf_get_branch_snapshot's slots past it, another process's
    branches of an older read, came along on AMD: a wrapped note with a
    gap, >=12 dropped)."""
    notes = lbr.lbr_notes(res, "pingpong")
    allrecs = [r for _h, rs in notes for r in rs]
    markers = [r for r in allrecs if r[0] >> 48 == 0xb75c]
    recs = [r for r in allrecs if r[0] >> 48 != 0xb75c]
    foreign = [(hex(f), hex(t)) for f, t in recs
               if lbr.HI_LO <= f < lbr.HI_HI or lbr.HI_LO <= t < lbr.HI_HI]
    check(recs and not foreign and not notes[0][0]["flags"] & 1,
          "pingpong: only its own branches since its switch-in, none of the "
          "partner's that ran on the CPU before it", (len(recs), foreign[:4]))
    code = exec_ranges(os.path.join(res, "pingpong.core"))
    # the call to 0 perf's filter drops: the last entry's to may be 0
    outside = [(hex(f), hex(t)) for f, t in recs
               if not any(a <= f < b for a, b in code) or
               (t and not any(a <= t < b for a, b in code))]
    check(len(notes) == 1 and recs and not outside and not markers and
          len(recs) < depth and not notes[0][0]["flags"] & 1,
          f"pingpong: no stale tail: fewer than {depth} entries, each in btsabi's "
          "own code, not wrapped, no gap", (len(recs), outside[:4],
                                            [hex(m[0]) for m in markers],
                                            [h for h, _ in notes]))
    what = ("pingpong: the CPU's LBR did hold the partner's branches then "
            "(the model's log): perf's reset left them out")
    if not recs:
        check(False, what, f"the note holds no branch record ({len(markers)} markers) "
              "to find in the model's log")
        return
    found = lbr.windows(os.path.join(res, "lbr.log"), {recs[-1]}, depth,
                        log_limit(res))
    held = [e for cpu, w in found.get(recs[-1], [])[-1:] for e in w
            if lbr.HI_LO <= e[0] < lbr.HI_HI]
    check(held, what, f"no partner entry among the {depth} pushes before "
          "the note's last")


def kernel_version(uname):
    """(major, minor) of a uname -r."""
    m = re.match(r"(\d+)\.(\d+)", uname)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_no_collector(res, log, status, byentry, label, why, must):
    """A collector that cannot work on this kernel and CPU: one line
    saying why (holding each of MUST), the same in its status file and in
    `btsdumpctl status` ("no LBR collector: WHY"), exit 0, and the crash
    stored as before, without a trace."""
    lines = [l for l in log.splitlines() if "no LBR collector:" in l]
    check(len(lines) == 1 and all(m in lines[0] for m in must) and
          status.startswith("no LBR collector: " + why) and
          cv.read(os.path.join(res, "collector.status")).strip() == "0",
          f"{label}: the collector says in one line that {why}, exits 0", log + status)
    ctl = cv.read(os.path.join(res, "ctl-status.txt"))
    check(ctl.startswith("no LBR collector: " + why),
          f"{label}: btsdumpctl status says why", ctl)
    e = byentry.get("null")
    m = cv.store_meta(e[0]) if e else {}
    check(m.get("CORE") == "stored" and m.get("TRACE") == "absent",
          f"{label}: the crash is stored as before, without a trace", m)


def check_cannot(res, name, why, what):
    """A collector that cannot work: one line saying why, the same in its
    status file, exit 0."""
    log = cv.read(os.path.join(res, name + ".log"))
    lines = [l for l in log.splitlines() if "no LBR collector:" in l]
    check(len(lines) == 1 and why in lines[0] and
          cv.read(os.path.join(res, name + "-status")).startswith("no LBR collector: " + why) and
          cv.read(os.path.join(res, name + ".status")).strip() == "0",
          f"{what}: the collector says why in one line ({why}), exits 0", log)


def check_hotplug(res, log):
    """CPU 1 went offline and online again (perf removed its event): the
    collector armed it anew before crasher ran there."""
    check(cv.read(os.path.join(res, "hotplug-offline")).strip() == "0" and
          cv.read(os.path.join(res, "hotplug-online")).strip() == "0-1" and
          "LBR collector armed on CPU 1 (it came online)" in log,
          "hotplug: CPU 1 went offline and online; the collector armed it again",
          log)


def storm_outcome(res, entry, null_recs):
    """What became of one stored storm crash: "note" (its core holds one
    note, its own thread's, ending as crasher null's), "no note",
    "other note" (another thread's, or another trail), or "not stored"."""
    m = cv.store_meta(entry)
    if m.get("CORE") != "stored":
        return "not stored", m
    core = os.path.join(res, "storm.core")
    try:
        stored_core(entry, core)
        notes = lbr.lbr_notes(res, "storm")
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        return "other note", repr(e)
    if not notes:
        return "no note", m.get("PID")
    if (len(notes) == 1 and str(notes[0][0]["tid"]) == m.get("PID") and notes[0][1] and
            notes[0][1][-1] == null_recs[-1]):
        return "note", None
    return "other note", (m.get("PID"), [(h["tid"], len(r)) for h, r in notes])


def check_storm(res, null_recs):
    """100 crashes in 10 s against a burst of 12 (storm/): each either
    stored with its own thread's note (the note's tid is the crashing
    PID), the trail of crasher null, or logged as rate-limited; the line
    says how many of each, and any other outcome fails it."""
    store = os.path.join(res, "storm")
    entries = [os.path.join(store, e) for e in cv.store_entries(store)] \
        if os.path.isdir(store) else []
    dmesg = cv.read(os.path.join(res, "dmesg-storm.txt"))
    limited = len(re.findall(r"BTSDUMPD_RATELIMITED=\d+", dmesg))
    kept, detail = collections.Counter(), []
    for entry in entries:
        what, why = storm_outcome(res, entry, null_recs)
        kept[what] += 1
        if what != "note":
            detail.append((os.path.basename(entry), what, why))
    lost = [l for l in cv.read(os.path.join(res, "collector.log")).splitlines()
            if "dropped" in l or "lost" in l]
    # at least the burst stored (more when the storm outlasts the 300 s
    # window, as under TCG on a loaded host)
    check(len(entries) >= 12 and len(entries) + limited == 100 and
          kept["note"] == len(entries),
          f"storm: 100 crashes = {len(entries)} stored ({kept['note']} with their own "
          f"thread's note, {kept['no note']} without, {kept['other note']} with another's, "
          f"{kept['not stored']} without a core) + {limited} logged as rate-limited",
          (detail[:8], lost[:8]))


def check_amd_cpu(res, case):
    """Linux's own detection on the AMD model: the CPU it booted as
    (family, model), AMD's PMU driver with the 16-deep LbrExtV2 and the
    model's six core counters (qemu/ patch 0014)."""
    dmesg = cv.read(os.path.join(res, "dmesg.txt")).splitlines()
    cpu = [l for l in dmesg if "smpboot: CPU0:" in l]
    check(cpu and AMD_CPUS[case] in cpu[0],
          f"{case}: Linux booted the CPU as {AMD_CPUS[case]}", cpu)
    perf = [l for l in dmesg if "Performance Events:" in l]
    check(perf and "16-deep LBR" in perf[0] and "AMD PMU driver" in perf[0],
          f"{case}: Linux found AMD's PMU driver with the 16-deep LbrExtV2", perf)
    regs = [l.split()[-1] for l in dmesg if "generic registers:" in l]
    check(regs == ["6"], f"{case}: perf's AMD driver has six core counters", regs)


def check_cpu_time(res):
    """perf_cpu_time_max_percent 0 from the kernel command line
    (vm-lib.sh VM_PERF_ARGS; check-collector-signals.py's too)."""
    got = cv.read(os.path.join(res, "perf-cpu-time-max-percent")).strip()
    check(got == "0", "perf_cpu_time_max_percent 0 from the kernel command "
          "line (no PMI throttling)", got)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: check-collector.py BTSDUMP BTSDUMPCTL RESULTS_DIR")
    tool, ctl, res = sys.argv[1:]
    case = cv.read(os.path.join(res, "case")).strip()
    check(cv.read(os.path.join(res, "uname")).strip().endswith("-amd64"),
          "Debian's stock kernel ran", cv.read(os.path.join(res, "uname")))
    check_cpu_time(res)
    log = cv.read(os.path.join(res, "collector.log"))
    status = cv.read(os.path.join(res, "collector-status"))
    byentry = entries_by_mode(res)
    uname = cv.read(os.path.join(res, "uname")).strip()
    amd = case in AMD_CPUS
    if amd and kernel_version(uname) < (6, 10):
        # AMD's LbrExtV2 before 6.10: perf drives it, no snapshot of it
        check_no_collector(res, log, status, byentry, "amd before 6.10",
                           "this kernel cannot snapshot", ("cannot snapshot", "6.10"))
        sys.exit(cv.tap.done())
    if case == "nopmu":
        check_no_collector(res, log, status, byentry, "nopmu", "the CPU has no LBR",
                           ("the CPU has no LBR",))
        sys.exit(cv.tap.done())
    check("LBR collector armed" in log and
          status.strip() == "no LBR collector: stopped" and
          cv.read(os.path.join(res, "ctl-status.txt")).strip() == "LBR collector: armed",
          "pmu: the collector armed every CPU's LBR and its BPF program (btsdumpctl "
          "status), and says when it stopped", log + status)
    only = os.path.exists(os.path.join(res, "storm-only"))    # crasher null + the storm
    blind = re.findall(r"perf's count of kept entries unread \((.*?)\)", log)
    check(blind == (["--lbr-no-kept"] if only else []),
          "the BPF program: " + ("without perf's kept count (--lbr-no-kept, as where "
                                 "the kernel lacks CONFIG_KALLSYMS_ALL)" if only else
                                 "with perf's kept count (the kernel's BTF and kallsyms)"),
          blind)
    depth = 16 if amd else lbr.DEPTH
    check(cv.read(os.path.join(res, "lbr-depth")).strip() == str(depth),
          f"perf's cpu PMU: caps/branches {depth}",
          cv.read(os.path.join(res, "lbr-depth")))
    if amd:
        check_amd_cpu(res, case)
    if case == "arch":
        perf = [l for l in cv.read(os.path.join(res, "dmesg.txt")).splitlines()
                if "Performance Events:" in l]
        check(perf and "Architectural LBR" in perf[0] and "32-deep LBR" in perf[0],
              "arch: Linux found Architectural LBR, 32 deep", perf)
    if case in ("pmu", "arch") and not only:
        check_cannot(res, "nocap", "not allowed to use perf's branch stack",
                     "no CAP_PERFMON, perf_event_paranoid 2")
        # perf's pinned -b first (another LBR filter): perf cannot
        # schedule the collector's pinned events
        check_cannot(res, "busy", "the LBR is taken by another perf user",
                     "a pinned perf record -a -b recording first (another filter)")
        # perf's pinned -j any,u first (the collector's filter): perf
        # schedules both, each records
        taken = cv.read(os.path.join(res, "taken.log"))
        pinned = cv.read(os.path.join(res, "pinned-perf.out"))
        samples = re.search(r"perf record: Captured .*\((\d+) samples\)", pinned)
        check("LBR collector armed on 2 CPUs" in taken and "no LBR" not in taken and
              samples and int(samples.group(1)) > 0 and
              cv.read(os.path.join(res, "taken.status")).strip() == "0",
              "a pinned perf record -a -j any,u recording first (the collector's "
              "filter): the collector arms beside it, perf records too (the LBR "
              "shared)", taken[:800] + "\n" + pinned[-400:])
    if not amd and not only:
        check_hotplug(res, log)
    limit = log_limit(res)
    storm = os.path.exists(os.path.join(res, "storm-run"))
    if storm:
        check(limit > 0, "the storm's start in the model's log was noted (storm-offset)",
              limit)
    try:
        seqs = log_by_cpu(os.path.join(res, "lbr.log"), limit)
    except OSError as e:
        check(False, "the model's LBR log is there and of a size to check", str(e))
        sys.exit(cv.tap.done())
    if not only:
        check_perf(res, seqs, depth)
    # perf record -b dies of its child's SIGSEGV too: its core is not the
    # crash's
    byentry["perfb"] = [e for e in byentry.get("perfb", [])
                        if cv.store_meta(e).get("COMM") != "perf"]
    for mode in ("null",) if only else AMD_MODES if amd else MODES:
        if len(byentry.get(mode, [])) != 1:
            check(False, f"{mode}: stored by btsdumpd", sorted(byentry))
            continue
        check_crash(tool, ctl, res, mode, byentry[mode][0], seqs, depth)
    if byentry.get("pingpong"):
        check_pingpong(res, byentry["pingpong"][0], depth)
    if storm:
        null = lbr.lbr_notes(res, "null") if byentry.get("null") else []
        check_storm(res, null[0][1] if null else [(0, 0)])
    sys.exit(cv.tap.done(prune=res))


if __name__ == "__main__":
    main()
