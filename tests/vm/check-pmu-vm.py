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
held it.
Usage: check-pmu-vm.py CONSOLE BTS_LOG PMU_LOG RECLOOP_SYMS DATA"""
import base64
import binascii
import importlib.util
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "qemu", file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_spec = importlib.util.spec_from_file_location("check_vm", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "check-vm.py"))
check_vm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_vm)     # elf_notes, trace_records
GAP, REASON_PERF = 3, 1                # docs/format.md, markers
bts_log = _load("bts_log", "bts-log.py")
pmu_log = _load("pmu_log", "pmu-log.py")
# btsloop's text (pmu-vm.sh: the full-mode copy linked at 0x600000, the
# snapshot copy at 0x800000): its records, by source address
TEXT = {"full": (0x600000, 0x601000), "snap": (0x800000, 0x801000)}
TASK_SIZE_MAX = check_vm.TASK_SIZE_MAX

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
           if re.search(r"no PMU driver|Broken PMU|WARNING: CPU:|unchecked MSR|"
                        r"BUG:|Oops|bts-model:", ln)]
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
    return t.done()


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


def phases(syms_path):
    """recloop's address -> phase ('a' to 'g', or None) by its
    rl_X_start symbols (pmu-vm.sh wrote `nm recloop`)."""
    starts = []
    for line in open(syms_path):
        addr, _, name = line.split()
        m = re.fullmatch(r"rl_([a-g])_(start|step)|rl_(crash|exit)", name)
        if m:
            starts.append((int(addr, 16), m.group(1)))
    starts.sort()

    def phase(addr):
        if not starts[0][0] <= addr < starts[0][0] + 0x1000:
            return None
        return [p for a, p in starts if a <= addr][-1]
    return phase


def core_ring(t, console):
    """The records of the thread note in recloop's core (sent in base64
    on the data port), [] if there is none."""
    try:
        path = os.path.join(os.path.dirname(sys.argv[1]), "rec.core")
        with open(path, "wb") as f:
            f.write(base64.b64decode("".join(tagged(console, "PMU-REC-CORE:"))))
        notes = [d for ty, n, d in check_vm.elf_notes(path)
                 if n == "BTSCRASH" and ty == check_vm.NT_BTSCRASH_THREAD]
        return check_vm.trace_records(notes[0]) if len(notes) == 1 else []
    except (ValueError, OSError, IndexError, binascii.Error) as e:
        t.check(False, "recloop's core and its trace note", e)
        return []


OWN, PERF = "aceg", "bdf"      # recloop's phases: its ring's, perf's


def check_gaps(t, ring, phase):
    """Phases a, c, e, g in the ring, b, d and f (perf's) not; gap
    markers, all of reason perf, exactly between each two of a, c, e, g."""
    marker = [r[0] >> 48 == 0xb75c for r in ring]
    seen = {phase(r[0]) for r, m in zip(ring, marker) if not m}
    t.check(set(OWN) <= seen and not seen & set(PERF),
            "the ring holds phases a, c, e and g, nothing of b, d and f (perf's)",
            sorted(map(str, seen)))
    gaps = [(r[0] & 0xffff, (r[0] >> 16) & 0xff)
            for r, m in zip(ring, marker) if m and r[0] & 0xffff == GAP]
    t.check(len(gaps) >= 3 and all(g == (GAP, REASON_PERF) for g in gaps),
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
            "gap markers between phase a's records and c's, c's and e's, e's and g's",
            "".join(str(q)[0] for q in where))


def check_recorder(t, console, log, syms_path):
    """The traced recloop's ring and perf on recloop (per thread):
    intel_bts holds BTS over phase b, the BTS event over d; the ring holds
    a, c and e with gap markers (reason perf) between; ring and perf's
    data each equal to the model's log."""
    phase = phases(syms_path)
    for what, tag in (("-e intel_bts//u", "PMU-REC-PERF"),
                      ("-e branches:u -c 1 (the BTS event) over d", "PMU-REC-EVENT"),
                      ("-e branches:u -c 1 over f", "PMU-REC-EVENT-F")):
        t.check(tagged(console, tag + "-RC:") == ["0"],
                f"perf record {what} -p on the traced task ran",
                "\n".join(tagged(console, "PMU-REC-PERF-SAID:" if tag == "PMU-REC-PERF"
                                  else "PMU-REC-EVENT-SAID:")))
    t.check(sorted(tagged(console, "PMU-REC-LBR-RC:")) == ["d 0", "f 0"],
            "perf record -j any,u (an LBR user) -p on the traced task ran over d and f",
            tagged(console, "PMU-REC-LBR-RC:"))
    t.check(tagged(console, "PMU-REC-RC:") == ["139"],
            "the traced recloop ran its seven phases and died of SIGSEGV",
            tagged(console, "PMU-REC-RC:") + tagged(console, "PMU-REC-SAID:"))
    ring = core_ring(t, console)
    check_gaps(t, ring, phase)
    # the ring's buffer in the log: the one its newest record went into;
    # a thread note holds user-mode branches only (no kernel address)
    recs = [r[:2] for r in ring if r[0] >> 48 != 0xb75c]
    base = [e.base for e in log if recs and (e.frm, e.to) == recs[-1]]
    user = [e for e in log if e.frm < TASK_SIZE_MAX and e.to < TASK_SIZE_MAX]
    mine = [(e.frm, e.to) for e in user if base and e.base == base[-1]]
    t.check(recs and recs == mine[-len(recs):],
            f"the ring's {len(recs)} records equal the model's log of its "
            "buffer's user-mode records, the newest last",
            diff(recs, mine[-len(recs):]))
    # intel_bts stores every record; the BTS event drops kernel addresses
    for p, tag, entries in (("b", "PMU-REC-PERF:", log),
                            ("d", "PMU-REC-EVENT:", user),
                            ("f", "PMU-REC-EVENT-F:", user)):
        want = [(e.frm, e.to) for e in entries
                if phase(e.frm) == p and base and e.base != base[-1]]
        got = [r for r in records(tagged(console, tag)) if r != (0, 0)]
        t.check(got and got == want and {phase(f) for f, _ in got} == {p},
                f"perf's {tag[:-1]} data: all {len(want)} records the model "
                f"wrote for phase {p} outside the ring, in order",
                diff(got, want))


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
    """Where two record lists first differ, for a failure's detail."""
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
             min(len(got), len(want)))
    return (f"{len(got)} got, {len(want)} wanted; first difference at {i}: "
            f"got {[hex(x) for x in got[i]] if i < len(got) else None}, "
            f"wanted {[hex(x) for x in want[i]] if i < len(want) else None}")


if __name__ == "__main__":
    sys.exit(main())
