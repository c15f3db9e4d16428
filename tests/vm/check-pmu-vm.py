#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the console of pmu-vm.sh (Linux on the PMU model) as TAP: the
Intel PMU driver found (Skylake events, full-width counters, 32-deep LBR),
no PMU failure or kernel warning, cpu and intel_bts among the event
sources, LBR depth 32 in /sys/devices/cpu/caps/branches, `perf stat`'s
user-mode counts of pmuloop equal to what pmuloop.S executes; `perf
record -e intel_bts//u` in full mode (BTS interrupts, each a PMI in the
model's pmu-log) and in snapshot mode: every record perf stored equal to
the model's BTS log of that program (all of them; the newest for the
snapshot).
The NMI watchdog, perf's first user, on with its counter counting
and its NMIs arriving (nmi_watchdog, the model's overflows and PMIs,
/proc/interrupts), through all that follows.
Then the recorder meets perf: a traced program's ring and perf's
intel_bts, then perf's BTS event, on that program; perf's data equal to
the model's log of what it wrote while perf held BTS, the ring equal to
the log of its own buffer, with gap markers (reason perf) where perf
held it; perf's intel_bts in snapshot mode the same, its data the newest
of what the model wrote; a BPF program's bpf_get_branch_snapshot() at the
program's SIGSEGV equal to the model's LBR log there, the ring recording
on beside it without a gap.
Usage: check-pmu-vm.py CONSOLE BTS_LOG PMU_LOG RECLOOP_SYMS DATA LBR_LOG"""
import base64
import binascii
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kwarn import kernel_warnings  # noqa: E402
import oracle  # noqa: E402  (load(), diff())

check_vm = oracle.load("check_vm", "tests", "vm", "check-vm.py")   # elf_notes, trace_records
GAP, REASON_PERF = check_vm.GAP_KIND, 1  # docs/format.md, markers
bts_log = oracle.bts_log
pmu_log = oracle.load("pmu_log", "qemu", "pmu-log.py")
lbr_log = oracle.lbr_log
# btsloop's text (pmu-vm.sh: the full-mode copy linked at 0x600000, the
# snapshot copy at 0x800000): its records, by source address
TEXT = {"full": (0x600000, 0x601000), "snap": (0x800000, 0x801000)}
TASK_SIZE_MAX = check_vm.TASK_SIZE_MAX


def user_mode(e):
    """A record of a branch in user mode (from and to below TASK_SIZE_MAX):
    what a thread note holds, and perf's BTS event keeps."""
    return e.frm < TASK_SIZE_MAX and e.to < TASK_SIZE_MAX

PMULOOP_N = 1000000     # pmuloop.S
# branches: the JNZs and the SYSCALL (a far branch, P3 in qemu/README)
EXPECTED = {"instructions:u": 2 * PMULOOP_N + 4,
            "branches:u": PMULOOP_N + 1,
            "cycles:u": 2 * PMULOOP_N + 4}   # the model: one per instruction


def tagged(console, tag):
    return [line.split(tag, 1)[1].strip() for line in console.splitlines()
            if tag in line]


def main():
    console = open(sys.argv[1], errors="replace").read()
    t = Tap()
    # the bulk (perf's records, the core) came on the second serial port
    data = open(sys.argv[5], errors="replace").read().replace("\r", "")
    t.check("PMU-DATA-DONE" in data, "the data port got everything")
    console += "\n" + data
    t.check("PMU-VM-DONE" in console, "the VM ran its init to the end",
            console[-3000:])
    perf = [ln for ln in console.splitlines() if "Performance Events:" in ln]
    line = perf[0] if perf else ""
    t.check("Intel PMU driver" in line,
            "Linux found the Intel PMU driver", line or "no line")
    t.check("Skylake events" in line and "full-width counters" in line and
            "32-deep LBR" in line,
            "Skylake events, full-width counters, 32-deep LBR", line)
    bad = [ln for ln in console.splitlines()
           if re.search(r"no PMU driver|Broken PMU|unchecked MSR|"
                        r"BUG:|Oops|bts-model:", ln)] + kernel_warnings(console)
    t.check(not bad, "no PMU failure, warning or model stop", "\n".join(bad))
    devices = (tagged(console, "PMU-DEVICES:") or [""])[0].split()
    t.check("cpu" in devices and "intel_bts" in devices,
            "cpu and intel_bts in /sys/bus/event_source/devices",
            " ".join(devices))
    t.check(tagged(console, "PMU-BRANCHES:") == ["32"],
            "/sys/devices/cpu/caps/branches: 32",
            tagged(console, "PMU-BRANCHES:"))
    stat = {}
    for row in tagged(console, "PMU-STAT:"):
        f = row.split(",")
        if len(f) > 2 and f[2] in EXPECTED:
            stat[f[2]] = f[0]
    for event, want in EXPECTED.items():
        t.check(stat.get(event) == str(want),
                f"perf stat {event} of pmuloop = {want}",
                f"got {stat.get(event)}; perf said:\n" +
                "\n".join(tagged(console, "PMU-STAT:")))
    pmu = pmu_log.read(sys.argv[3])
    check_watchdog(t, console, pmu)
    log = bts_log.read(sys.argv[2])
    check_bts(t, console, log, pmu)
    check_recorder(t, console, log, sys.argv[4])
    check_lbr_users(t, console, phases(sys.argv[4]))
    check_bpf(t, console, sys.argv[6], phases(sys.argv[4]))
    check_migration(t, console, log)
    check_attach(t, console, log)
    check_iocperiod(t, console)
    return t.done(prune=os.path.dirname(sys.argv[1]))


def check_iocperiod(t, console):
    """Issue 39 M1: the BTS event made a counting event by
    PERF_EVENT_IOC_PERIOD (stopped and started, no del/add) and closed
    gives the BTS half back to the recorder: no perf user holds CPU 0's
    (ds/bts_buffers "perf 0x0"; it said 0x2, DS_USER_BTS_EVENT, and every
    traced crash on the CPU then had no branch)."""
    line = (tagged(console, "PMU-IOCPERIOD:") or [""])[0]
    t.check(tagged(console, "PMU-IOCPERIOD-RC:") == ["0"] and
            line.endswith(" perf 0x0"),
            "the BTS event's period changed by PERF_EVENT_IOC_PERIOD, then "
            "closed: the recorder has CPU 0's BTS half back", line)


def nmi_counts(console, tag):
    """The per-CPU counts of /proc/interrupts' NMI row after tag."""
    row = (tagged(console, tag) or [""])[0].split()
    return [int(n) for n in row[1:] if n.isdigit()]


def check_watchdog(t, console, pmu):
    """The NMI watchdog, perf's first user of the PMU: on (boot message,
    /proc/sys/kernel/nmi_watchdog), its counter (the pinned cycles event,
    on fixed counter 1: GLOBAL_STATUS bit 33) overflowing in the model,
    each overflow a delivered PMI, and CPU 0's NMI count grown over the
    spin (6 x 10^9 cycles, an NMI each cpu_khz x 1000: 2.3 x 10^9 when
    the TSC calibrates right; on a loaded host it has calibrated to 290
    MHz and perf then throttled the watchdog after a 350 ms NMI, so one
    NMI in the spin is what is asked)."""
    on = [ln for ln in console.splitlines() if "NMI watchdog: Enabled" in ln]
    t.check(on and tagged(console, "PMU-WATCHDOG:") == ["1"],
            "the NMI watchdog is on (boot message, nmi_watchdog = 1)",
            "%s; nmi_watchdog %s" % (on, tagged(console, "PMU-WATCHDOG:")))
    over = [i for i, e in enumerate(pmu)
            if e.kind_name == "overflow" and e.value & (1 << 33)]
    pmis = [i for i in over if i + 1 < len(pmu) and pmu[i + 1].delivered]
    t.check(len(over) >= 2 and pmis == over,
            "the watchdog's counter (fixed 1) overflows, each a delivered PMI",
            "%d overflows of fixed 1, %d followed by a delivered PMI"
            % (len(over), len(pmis)))
    before = nmi_counts(console, "PMU-NMI-BEFORE:")
    after = nmi_counts(console, "PMU-NMI-AFTER:")
    t.check(before and after and after[0] > before[0],
            "CPU 0's NMI count grew over the spin",
            "NMI before %s, after %s" % (before, after))


def phases(syms_path, prefix="rl"):
    """recloop's (migloop's: prefix ml) address -> phase ('a', 'b', ...,
    or None) by its rl_X_start symbols (pmu-vm.sh wrote `nm recloop`)."""
    starts = []
    for line in open(syms_path):
        addr, _, name = line.split()
        m = re.fullmatch(rf"{prefix}_([a-z])_(start|step)|{prefix}_(crash|exit)", name)
        if m:
            starts.append((int(addr, 16), m.group(1)))
    starts.sort()

    def phase(addr):
        if not starts[0][0] <= addr < starts[0][0] + 0x1000:
            return None
        return [p for a, p in starts if a <= addr][-1]
    return phase


def core_ring(t, console, name="rec", tag=None):
    """The records of the thread note in recloop's core (sent in base64
    on the data port; NAME's tagged PMU-MIG-CORE-NAME, or TAG), [] if none."""
    tag = tag or ("PMU-REC-CORE:" if name == "rec" else f"PMU-MIG-CORE-{name}:")
    try:
        path = os.path.join(os.path.dirname(sys.argv[1]), name + ".core")
        with open(path, "wb") as f:
            f.write(base64.b64decode("".join(tagged(console, tag))))
        notes = [d for ty, n, d in check_vm.elf_notes(path)
                 if n == "BTSCRASH" and ty == check_vm.NT_BTSCRASH_THREAD]
        return check_vm.trace_records(notes[0]) if len(notes) == 1 else []
    except (ValueError, OSError, IndexError, binascii.Error) as e:
        t.check(False, f"{name}'s core and its trace note", e)
        return []


OWN, PERF = "acegi", "bdfh"    # recloop's phases: its ring's, perf's


def check_gaps(t, ring, phase):
    """Phases a, c, e, g, i in the ring, b, d, f, h (perf's) not; gap
    markers, all of reason perf, exactly between each two of a, c, e, g,
    i (none inside i, under bpf_get_branch_snapshot's LBR users)."""
    marker = [r[0] >> 48 == 0xb75c for r in ring]
    seen = {phase(r[0]) for r, m in zip(ring, marker) if not m}
    t.check(set(OWN) <= seen and not seen & set(PERF),
            "the ring holds phases a, c, e, g and i, nothing of b, d, f and h (perf's)",
            sorted(map(str, seen)))
    gaps = [(r[0] & 0xffff, (r[0] >> 16) & 0xff)
            for r, m in zip(ring, marker) if m and r[0] & 0xffff == GAP]
    t.check(len(gaps) >= len(PERF) and all(g == (GAP, REASON_PERF) for g in gaps),
            f"{len(gaps)} gap markers in the ring, each of reason perf", gaps)
    where = ["gap" if m else phase(r[0]) for r, m in zip(ring, marker)
             if not m or r[0] & 0xffff == GAP]

    def span(p):
        at = [i for i, q in enumerate(where) if q == p]
        return (at[0], at[-1]) if at else (None, None)
    spans = [span(p) for p in OWN]
    gap_at = [i for i, q in enumerate(where) if q == "gap"]
    ok = None not in sum(spans, ())
    between = list(zip([s[1] for s in spans], [s[0] for s in spans[1:]]))
    t.check(ok and all(any(lo < i < hi for lo, hi in between) for i in gap_at) and
            all(any(lo < i < hi for i in gap_at) for lo, hi in between),
            "gap markers between phase a's records and c's, c's and e's, e's "
            "and g's, g's and i's, none elsewhere",
            "".join(str(q)[0] for q in where))


def check_recorder(t, console, log, syms_path):
    """The traced recloop's ring and perf on recloop (per thread):
    intel_bts holds BTS over phase b, the BTS event over d and f,
    intel_bts in snapshot mode over h; the ring holds a, c, e, g and i
    with gap markers (reason perf) between; ring and perf's data each
    equal to the model's log (the snapshot: the newest of it)."""
    phase = phases(syms_path)
    for what, tag in (("-e intel_bts//u", "PMU-REC-PERF"),
                      ("-e branches:u -c 1 (the BTS event) over d", "PMU-REC-EVENT"),
                      ("-e branches:u -c 1 over f", "PMU-REC-EVENT-F"),
                      ("-e intel_bts//u --snapshot over h", "PMU-REC-SNAP")):
        said = {"PMU-REC-PERF": "PMU-REC-PERF-SAID:",
                "PMU-REC-SNAP": "PMU-REC-SNAP-SAID:"}.get(tag, "PMU-REC-EVENT-SAID:")
        t.check(tagged(console, tag + "-RC:") == ["0"],
                f"perf record {what} -p on the traced task ran",
                "\n".join(tagged(console, said)))
    t.check(sorted(tagged(console, "PMU-REC-LBR-RC:")) == ["d 0", "f 0"],
            "perf record -j any,u (an LBR user) -p on the traced task ran over d and f",
            tagged(console, "PMU-REC-LBR-RC:"))
    t.check(tagged(console, "PMU-REC-RC:") == ["139"],
            "the traced recloop ran its nine phases and died of SIGSEGV",
            tagged(console, "PMU-REC-RC:") + tagged(console, "PMU-REC-SAID:"))
    ring = core_ring(t, console)
    check_gaps(t, ring, phase)
    user = [e for e in log if user_mode(e)]
    base = check_ring_log(t, ring, log, "the ring's")
    # intel_bts stores every record; the BTS event drops kernel addresses
    for p, tag, entries in (("b", "PMU-REC-PERF:", log),
                            ("d", "PMU-REC-EVENT:", user),
                            ("f", "PMU-REC-EVENT-F:", user)):
        want = [(e.frm, e.to) for e in entries
                if phase(e.frm) == p and base is not None and e.base != base]
        got = [r for r in records(tagged(console, tag)) if r != (0, 0)]
        t.check(got and got == want and {phase(f) for f, _ in got} == {p},
                f"perf's {tag[:-1]} data: all {len(want)} records the model "
                f"wrote for phase {p} outside the ring, in order",
                diff(got, want))
    check_snapshot(t, console, log, phase, base)


def check_ring_log(t, ring, log, who):
    """The ring's records (markers aside) equal to the newest of the
    model's log of its buffer up to its newest record (a thread note
    holds user-mode branches only), and no user-mode record the model
    wrote after them continuing the ring: one the core missed.  Past the
    ring's newest, the task's own kernel-bound records (its fault, an
    interrupt: not in a user core) continue its slots.  A later task's
    ring in the same memory (freed at the task's exit) starts anywhere:
    slot 0 (a cold CI run's vm-pmu check 29: an interrupt's record
    there), or after markers the kernel wrote (not in the model's log;
    another cold run: slot 2).  WHO names the ring.  Returns that
    buffer's base, None if none."""
    log = list(log)
    user = [i for i, e in enumerate(log) if user_mode(e)]
    recs = [r[:2] for r in ring if r[0] >> 48 != 0xb75c]
    at = [i for i in user if recs and (log[i].frm, log[i].to) == recs[-1]]
    base = log[at[-1]].base if at else None
    mine = [(log[i].frm, log[i].to) for i in user
            if i <= at[-1] and log[i].base == base] if at else []
    rest = [e for e in log[at[-1] + 1:] if e.base == base] if at else []
    nxt = log[at[-1]].slot() + 1 if at else 0
    while rest and rest[0].slot() == nxt and not user_mode(rest[0]):
        rest, nxt = rest[1:], nxt + 1
    missed = [str(rest[0])] if rest and rest[0].slot() == nxt else []
    t.check(recs and recs == mine[-len(recs):] and not missed,
            f"{who} {len(recs)} records equal the model's log of its "
            "buffer's user-mode records, the newest last",
            diff(recs, mine[-len(recs):]) + f"; a record after them continuing "
            f"the ring: {missed}; the buffer's next: {[str(e) for e in rest[:2]]}")
    return base


def check_snapshot(t, console, log, phase, ring_base):
    """intel_bts in snapshot mode over h: the AUX buffer's records (682
    fit its 4 pages) the newest of those the model wrote for phase h
    outside the ring (at RING_BASE), in order."""
    want = [(e.frm, e.to) for e in log
            if phase(e.frm) == "h" and ring_base and e.base != ring_base]
    got = [r for r in records(tagged(console, "PMU-REC-SNAP:")) if r != (0, 0)]
    t.check(got and got == want[-len(got):] and len(got) < len(want) and
            {phase(f) for f, _ in got} == {"h"},
            f"perf's intel_bts snapshot over h: its {len(got)} records the "
            f"newest of the {len(want)} the model wrote for phase h outside "
            "the ring, in order", diff(got, want[-len(got):] if got else want))


def check_lbr_users(t, console, phase):
    """The LBR user beside the BTS event over d and f: samples whose
    branch stacks' branches inside recloop are all of that phase (its
    text: no LBR log in this test), so each half went to its own user."""
    for p in "df":
        stacks = [re.findall(r"0x([0-9a-f]+)/0x([0-9a-f]+)/", ln)
                  for ln in tagged(console, f"PMU-REC-LBR-{p}:")]
        inside = [phase(int(a, 16)) for s in stacks for e in s for a in e
                  if phase(int(a, 16))]
        t.check(inside and set(inside) == {p},
                f"perf's LBR user over {p}: {len(stacks)} branch stacks, the "
                f"branches in recloop all of phase {p}",
                sorted(set(map(str, inside))))


def check_bpf(t, console, path, phase):
    """bpf_get_branch_snapshot() from bpfsnap's program at recloop's
    SIGSEGV (signal_generate, in recloop), while bpfsnap's per-CPU perf
    events keep the LBR on (user branches): 32 entries (768 bytes), newest
    first, equal to the model's last 32 LBR pushes on CPU 0 (recloop's)
    before the fault, all of phase i."""
    said = tagged(console, "PMU-BPF-SAID:")
    t.check(tagged(console, "PMU-BPF-RC:") == ["0"],
            "bpfsnap loaded and attached its program, and it took a snapshot",
            "\n".join(said))
    out = tagged(console, "PMU-BPF:")
    ret = [ln.split()[1] for ln in out if ln.startswith("ret ")]
    pid = [ln.split()[1] for ln in out if ln.startswith("pid ")]
    t.check(ret == [str(32 * 24)] and pid and pid == tagged(console, "PMU-REC-PID:"),
            "bpf_get_branch_snapshot() in recloop's context returned 32 entries",
            f"returned {ret} in pid {pid}, recloop {tagged(console, 'PMU-REC-PID:')}")
    got = records(ln.split(None, 1)[1] for ln in out if ln.startswith("entry "))
    got.reverse()                                   # oldest first
    pushes = [(e.frm, e.to) for e in lbr_log.read(path)
              if e.cpu == 0 and e.format == lbr_log.FORMAT_INTEL]
    last = [i for i, (f, _) in enumerate(pushes) if phase(f) == "i"]
    want = pushes[last[-1] - 31:last[-1] + 1] if last and last[-1] >= 31 else []
    t.check(got and got == want and {phase(f) for f, _ in got} == {"i"},
            f"bpf_get_branch_snapshot(): its {len(got)} entries, in order, the "
            "model's last LBR pushes on CPU 0 before recloop's SIGSEGV (phase i)",
            diff(got, want))


# pmu-mig.sh: each phase's CPU, and who held migloop's BTS over it
MIG_CPU = {"migloop": "0100101100101", "migwit": "01010"}   # a, b, ...
MIG_HELD = {"bts": "defg", "event": "jkl"}
# each ring's phases and gap (perf) markers, repeats squeezed
MIG_RING = {"migloop": "abcGhiGm", "migwit": "abcde"}


def loop_phase(phase, frm, to):
    """The phase of a record of a phase's own loop (CALL, RET, JNZ: both
    ends in it), None for the syscalls' and the crash's."""
    p = phase(frm)
    return p if p and phase(to) == p else None


def check_migration(t, console, log):
    """pmu-mig.sh: migloop, traced, moving itself between CPU 0 and 1
    with no perf user (a-c), under perf's intel_bts (d-g) and BTS event
    (j-l), and after each (h-i, m); migwit, traced, on the CPU migloop
    left.  Each phase's records written on its CPU; perf's data all of
    the held phases' loop records from both CPUs; the rings equal to the
    log, migloop's with `gap` (perf) markers only over the holds, migwit's
    complete and without any."""
    out = os.path.dirname(sys.argv[1])
    t.check(sorted(tagged(console, "PMU-MIG-PERF-RC:")) == ["bts 0", "event 0"],
            "perf record -e intel_bts//u and -e branches:u -c 1 -p on "
            "migloop ran", "\n".join(tagged(console, "PMU-MIG-SAID:")))
    t.check(tagged(console, "PMU-MIG-RC:") == ["migloop 139", "migwit 139"],
            "migloop and migwit ran their phases and died of SIGSEGV",
            tagged(console, "PMU-MIG-RC:") + tagged(console, "PMU-MIG-SAID:"))
    user = [e for e in log if user_mode(e)]
    base = {}
    for name in MIG_CPU:
        phase = phases(os.path.join(out, name + ".syms"), "ml")
        check_mig_cpus(t, user, phase, name)
        base[name] = check_mig_ring(t, console, log, phase, name)
    phase = phases(os.path.join(out, "migloop.syms"), "ml")
    for who, entries, tag in (("bts", log, "PMU-MIG-BTS:"),
                              ("event", user, "PMU-MIG-EVENT:")):
        held = MIG_HELD[who]
        want = [(e.frm, e.to) for e in entries if e.base != base["migloop"]
                and (loop_phase(phase, e.frm, e.to) or "-") in held]
        got = records(tagged(console, tag))
        loops = [r for r in got if loop_phase(phase, *r)]
        cpus = {MIG_CPU["migloop"][ord(p) - ord("a")] for p in held}
        seen = "".join(sorted({loop_phase(phase, *r) for r in loops}))
        t.check(loops and loops == want and seen == held,
                f"perf's {tag[:-1]} data: all {len(want)} loop records the "
                f"model wrote for phases {held} (on CPUs "
                f"{' and '.join(sorted(cpus))}), in order",
                f"phases {seen}; " + diff(loops, want))


def check_mig_cpus(t, user, phase, name):
    """Each phase's loop records were written on the CPU it asked for."""
    want = MIG_CPU[name]
    seen = {}
    for e in user:
        p = loop_phase(phase, e.frm, e.to)
        if p:
            seen.setdefault(p, set()).add(str(e.cpu))
    got = "".join("".join(sorted(seen.get(chr(ord("a") + i), "?")))
                  for i in range(len(want)))
    t.check(got == want, f"{name}'s phases ran on CPUs {want} (the model's log)",
            f"got {got}")


def check_mig_ring(t, console, log, phase, name):
    """NAME's ring: equal to the log of its buffer; its phases in order,
    each whole, gap markers (perf) exactly over perf's
    holds (migloop) or none (migwit).  A phase's loop: 300 CALLs and
    RETs, 299 taken JNZs.  Returns the ring's buffer base."""
    ring = core_ring(t, console, name)
    base = check_ring_log(t, ring, log, f"{name}'s ring: its")
    squeezed, count = ring_phases(ring, phase)
    want = MIG_RING[name]
    t.check(squeezed == want and set(count.values()) == {899},
            f"{name}'s ring: phases and gap (perf) markers {want}, "
            "899 records each",
            f"{squeezed}; {sorted(count.items())}")
    return base


def ring_phases(ring, phase):
    """A ring's loop records by phase and its gap markers (G: reason
    perf, ?: another), repeats squeezed, and each phase's record count."""
    seq, count = [], {}
    for r in ring:
        if r[0] >> 48 == 0xb75c:
            if r[0] & 0xffff == GAP:
                seq.append("G" if (r[0] >> 16) & 0xff == REASON_PERF else "?")
            continue
        p = loop_phase(phase, r[0], r[1])
        if p:
            count[p] = count.get(p, 0) + 1
            seq.append(p)
    return re.sub(r"(.)\1+", r"\1", "".join(seq)), count


SPIN_TEXT = (0x1000000, 0x1001000)     # spinloop's (pmu-vm.sh)


def check_attach(t, console, log):
    """pmu-attach.sh: perf's intel_bts attaching to the traced spinloop
    while it runs on CPU 1 (phase a) and detaching (phase b), spinloop
    never blocking in between: so ds_bts_request() and
    ds_bts_release() themselves save and reload its ring (a request that
    did nothing would leave the ring's index where it was loaded and
    nothing recording after perf's release).  The model wrote
    spinloop's records to its ring, then to perf's buffer, then to the
    ring again; perf's data all of the middle stretch; the ring every
    record of the others (none lost, none of perf's), with one gap
    marker (reason perf) where perf held BTS: phases a, gap, b, c."""
    out = os.path.dirname(sys.argv[1])
    phase = phases(os.path.join(out, "spinloop.syms"), "sl")
    t.check(tagged(console, "PMU-ATT-PERF-RC:") == ["0"],
            "perf record -e intel_bts//u -p on the running spinloop ran",
            "\n".join(tagged(console, "PMU-ATT-SAID:")))
    t.check(tagged(console, "PMU-ATT-RC:") == ["139"],
            "spinloop ran its phases a to c and died of SIGSEGV",
            tagged(console, "PMU-ATT-RC:") + tagged(console, "PMU-ATT-SAID:"))
    # its own switches (it never blocks) and preemptions (the stopper's,
    # migration/1: pmu-attach.sh), which are brief, so perf's IPIs find
    # it running; the counts are shown, the voluntary ones checked
    count = [dict(re.findall(r"(\w+)_ctxt_switches: (\d+)", " ".join(
        tagged(console, f"PMU-ATT-SWITCHES-{w}:")))) for w in ("BEFORE", "AFTER")]
    pre = [int(c.get("nonvoluntary", 0)) for c in count]
    t.check(count[0] and count[0].get("voluntary") == count[1].get("voluntary"),
            "spinloop never blocked from before perf started to after it "
            f"exited (preempted {pre[1] - pre[0]} times)", count)
    lo, hi = SPIN_TEXT
    # on CPU 1 (its first SYSCALL, the move there, went on the CPU it left)
    spin = [e for e in log if lo <= e.frm < hi and e.cpu == 1]
    ring = core_ring(t, console, "spinloop", "PMU-ATT-CORE:")
    recs = [r[:2] for r in ring if r[0] >> 48 != 0xb75c and lo <= r[0] < hi]
    base = [e.base for e in spin if recs and (e.frm, e.to) == recs[-1]]
    where = "".join("R" if base and e.base == base[-1] else "P" for e in spin)
    held = [loop_phase(phase, e.frm, e.to) for e in spin
            if base and e.base != base[-1]]
    held = [p for p in held if p]
    t.check(re.sub(r"(.)\1+", r"\1", where) == "RPR" and held and
            held[0] == "a" and held[-1] == "b",
            "the model wrote spinloop's records to its ring, to perf's "
            "buffer from within phase a to within phase b, then to its ring",
            re.sub(r"(.)\1+", r"\1", where) + " " + "".join(sorted(set(held))))
    mine = [(e.frm, e.to) for e in spin if base and e.base == base[-1] and
            user_mode(e)]
    t.check(recs and recs == mine,
            f"spinloop's ring: its {len(recs)} records all the user-mode "
            "ones the model wrote into it for spinloop, in order",
            diff(recs, mine))
    squeezed, count = ring_phases(ring, phase)
    t.check(squeezed == "aGbc",
            "spinloop's ring: phase a, a gap (perf) marker, phases b and c",
            f"{squeezed}; {sorted(count.items())}")
    want = [(e.frm, e.to) for e in spin if base and e.base != base[-1]]
    got = [r for r in records(tagged(console, "PMU-ATT-BTS:")) if r != (0, 0)]
    t.check(got and got == want,
            f"perf's intel_bts data: all {len(want)} records the model "
            "wrote for spinloop outside its ring, in order", diff(got, want))


def check_bts(t, console, log, pmu):
    """perf's intel_bts records (raw, from `perf report -D`) against the
    model's log: full mode all of the program's, snapshot the newest."""
    said = tagged(console, "PMU-BTS-SAID:")
    for mode in ("full", "snap"):
        rc = [r.split()[1] for r in tagged(console, "PMU-BTS-RC:")
              if r.split()[0] == mode]
        t.check(rc == ["0"], f"perf record -e intel_bts//u ({mode}) ran",
                f"status {rc}; perf said:\n" + "\n".join(said))
        lo, hi = TEXT[mode]
        want = [(e.frm, e.to) for e in log if lo <= e.frm < hi]
        got = records(r.split(None, 1)[1] for r in tagged(console, "PMU-BTS:")
                      if r.split()[0] == mode)
        got = [g for g in got if g != (0, 0)]   # padding perf stores
        if mode == "full":
            trunc = [r.split()[1] for r in tagged(console, "PMU-BTS-TRUNCATED:")
                     if r.split()[0] == mode]
            t.check(trunc == ["0"],
                    "intel_bts full: no AUX record perf wrote is truncated "
                    "(BTS never stopped for a full buffer)",
                    f"truncated AUX records: {trunc}")
            t.check(got == want and len(want) > 2000,
                    f"intel_bts full: perf stored all {len(want)} records "
                    "the model wrote for btsloop, in order",
                    diff(got, want))
        else:
            t.check(got and got == want[-len(got):] and len(got) < len(want),
                    f"intel_bts snapshot: perf's {len(got)} records are the "
                    f"newest of the {len(want)} the model wrote, in order",
                    diff(got, want[-len(got):] if got else want))
    btint = [e for e in pmu if e.kind == 4 and e.msr == 1]
    t.check(len(btint) >= 2 and all(e.delivered for e in btint),
            f"pmu-log: {len(btint)} BTS interrupts, each delivered as a PMI",
            [str(e) for e in btint[:4]])


def records(lines):
    """(from, to) of each "FROM TO" line (hex), (-1, -1) for a line that
    is not one (it then equals no log entry)."""
    out = []
    for line in lines:
        m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+)", line.strip())
        out.append((int(m.group(1), 16), int(m.group(2), 16)) if m
                   else (-1, -1))
    return out


def diff(got, want):
    """Where two record lists first differ (oracle.diff), in hex."""
    return oracle.diff(got, want, lambda r: [hex(x) for x in r])


if __name__ == "__main__":
    sys.exit(main())
