#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host tests of the handler's side of the stock-kernel LBR collector
(daemon/lbr-note.c, docs/btsdumpd.md "Stock kernels"): a snapshot file
as btsdumpd --lbr-collector writes it (daemon/lbr-snapshot.h), made here
from the fixture crasher's real branches (tests/fixtures/crasher-null.records,
the addresses of crasher-notrace.core), piped with that core through
btsdumpd --direct --lbr-dir.  Checks the note written (source lbr, oldest
first, empty slots, perf's leftover copies and returns from the kernel left
out), a snapshot that comes late (the handler waits while the collector's
progress is behind the crash; not for a killed collector, nor past the
crash), a chain broken by a backward step, a from outside executable
code or a from that decodes to no branch instruction (older entries
dropped behind a gap marker), a kernel-written note
never replaced, and no note from a stale snapshot or without a collector.
Usage: test-btsdumpd-lbr.py BTSDUMPD"""
import importlib
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
sys.path.insert(0, os.path.join(SRC, "tests", "vm"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
cv = importlib.import_module("check-vm")        # elf_notes, trace_records, tap
lbrsnap = importlib.import_module("lbrsnap")    # the snapshot file
check = cv.check
daemon = sys.argv[1]
DEPTH = lbrsnap.DEPTH
records, snapshot = lbrsnap.records, lbrsnap.snapshot
MARKER = 0xb75c


def core_tid(core):
    return lbrsnap.core_tid(cv.elf_notes(core))


def write_late(lbr, name, snap, delay):
    """As a collector starved of CPU: the snapshot, then the progress past
    it, written delay seconds late."""
    time.sleep(delay)
    with open(os.path.join(lbr, name), "wb") as f:
        f.write(snap)
    lbrsnap.progress(lbr, time.clock_gettime_ns(time.CLOCK_MONOTONIC))


def run(label, core, snap, armed=True, late=None, ago=0):
    """The core through the handler with snap as its thread's snapshot;
    (header, records) of each thread note of the stored core, or None.
    armed: a running collector (True), none (False), or "killed": its
    armed file left, unlocked.  late: seconds after which the snapshot
    and the collector's progress come.  ago: the crash (the handler's %t)
    was that many seconds ago."""
    d = tempfile.mkdtemp(prefix="lbr-", dir=tmp)
    lbr = os.path.join(d, "lbr")
    os.mkdir(lbr)
    lock = lbrsnap.arm(lbr, settled=late is None) if armed is True else None
    if armed == "killed":
        open(os.path.join(lbr, "armed"), "w").close()
    writer = None
    if snap is not None and late is not None:
        writer = threading.Thread(target=write_late, args=(lbr, str(core_tid(core)), snap, late))
        writer.start()
    elif snap is not None:
        with open(os.path.join(lbr, str(core_tid(core))), "wb") as f:
            f.write(snap)
    store = os.path.join(d, "store")
    with open(core, "rb") as f:
        data = f.read()
    r = subprocess.run([daemon, "--store", store, "--config", "/nonexistent", "--direct",
                        "--log", "stderr", "--lbr-dir", lbr, str(sleeper.pid),
                        str(os.getuid()), str(os.getgid()), "11",
                        str(int(time.time()) - ago), "crasher"],
                       input=data, capture_output=True, timeout=120)
    if writer:
        writer.join()
    run.err = r.stderr.decode()         # the handler's log, for the caller
    if lock:
        lock.close()
    es = [e for e in os.listdir(store) if not e.startswith(".")] if os.path.isdir(store) else []
    if r.returncode or len(es) != 1:
        check(False, f"{label}: stored", r.stderr.decode())
        return None
    out = os.path.join(d, "core")
    with open(out, "wb") as f:
        f.write(subprocess.run(["zstd", "-dc", os.path.join(store, es[0], "core.zst")],
                               capture_output=True, check=True).stdout)
    notes = []
    for t, n, desc in cv.elf_notes(out):
        if n == "BTSCRASH" and t == cv.NT_BTSCRASH_THREAD:
            flags, = struct.unpack_from("<I", desc, 12)
            tid, cap, _nr, lost = struct.unpack_from("<QQQQ", desc, 16)
            gaps, source = struct.unpack_from("<IH", desc, 48)
            notes.append(({"flags": flags, "tid": tid, "capacity": cap, "lost": lost,
                           "gaps": gaps, "source": source},
                          [(f, to) for f, to, _ in cv.trace_records(desc)]))
    return notes


tmp = tempfile.mkdtemp(prefix="test-btsdumpd-lbr-")
sleeper = subprocess.Popen(["sleep", "600"])
NOTRACE = os.path.join(FIX, "crasher-notrace.core")
trail = records(os.path.join(FIX, "crasher-null.records"))   # oldest first
tid = core_tid(NOTRACE)
newest = list(reversed(trail))
KERNEL = (0xffffffff81000000, trail[3][1])  # a sysret back to user mode

# the whole trail, with a return from the kernel among it and, in the
# oldest slots of the full stack, the copies perf's filter leaves when it
# drops entries (intel_pmu_lbr_filter moves the newer ones down)
snap = newest[:5] + [KERNEL] + newest[5:]
snap += [newest[-1]] * (DEPTH - len(snap))
notes = run("trail", NOTRACE, snapshot(tid, snap))
check(notes and len(notes) == 1 and notes[0][0]["source"] == 3 and
      notes[0][0]["capacity"] == DEPTH and notes[0][0]["tid"] == tid and
      notes[0][1] == trail and not notes[0][0]["gaps"] and notes[0][0]["flags"] & 1,
      "the snapshot is the faulting thread's note, source lbr, oldest first, "
      "wrapped (a full stack); the kernel's return and perf's leftover copies left out",
      notes and [(h, [(hex(f), hex(t)) for f, t in r]) for h, r in notes])

# AMD's LbrExtV2 (depth 16, the helper copies 16): the newest 16 of the
# trail, capacity 16, wrapped; what lies beyond slot 16 is not read
amd = newest[:16] + [(0x1000, 0x2000)] * (DEPTH - 16)
notes = run("amd", NOTRACE, snapshot(tid, amd, nr=16, depth=16))
check(notes and len(notes) == 1 and notes[0][0]["capacity"] == 16 and
      notes[0][1] == trail[-16:] and notes[0][0]["flags"] & 1,
      "an AMD snapshot (depth 16): the newest 16, capacity 16, wrapped; "
      "nothing from beyond slot 16",
      notes and [(h, len(r)) for h, r in notes])

# Architectural LBR: perf's read stops at the first empty entry
# (intel_pmu_store_lbr), the helper copies all 32 slots, and the ones past
# the read's 10 (kept: cpu_hw_events.lbr_stack.nr) hold an older read's
# entries, here ones that chain on (another thread at the same addresses):
# the note is the 10, not wrapped
stale = newest + [(0, 0)] * (DEPTH - len(newest))
notes = run("arch", NOTRACE, snapshot(tid, stale, kept=10))
check(notes and len(notes) == 1 and notes[0][1] == trail[-10:] and
      not notes[0][0]["gaps"] and not notes[0][0]["flags"] & 1,
      "an Architectural LBR snapshot: the 10 entries perf's read kept, none of "
      "the older read's left in the slots beyond, not wrapped",
      notes and [(h, len(r)) for h, r in notes])
# a full LBR (AMD's 16) whose read dropped one entry (a return from the
# kernel): perf's filter left a copy of the oldest kept in the last slot
full = newest[:15] + [newest[14]] + [(0x1000, 0x2000)] * (DEPTH - 16)
notes = run("full", NOTRACE, snapshot(tid, full, nr=16, depth=16, kept=15))
check(notes and len(notes) == 1 and notes[0][1] == trail[-15:] and
      notes[0][0]["flags"] & 1,
      "a full LBR, one entry dropped by perf's filter: the 15 kept, wrapped",
      notes and [(h, len(r)) for h, r in notes])

# a backward step between two entries: the older ones go, a gap marks it
broken = list(trail)
broken[8] = (broken[8][0], broken[9][0] + 1)     # its target after the next from
notes = run("break", NOTRACE, snapshot(tid, reversed(broken)))
rec = notes[0][1] if notes else []
check(notes and rec[0][0] >> 48 == MARKER and rec[1:] == trail[9:] and
      notes[0][0]["gaps"] == 1 and notes[0][0]["lost"] == 9 and
      not notes[0][0]["flags"] & 1,
      "a chain broken by a backward step: the 9 older entries dropped behind a "
      "gap (not wrapped: empty slots)",
      notes)

# a from outside executable code (the stack)
bad = list(trail)
bad[4] = (0x7ffd00001000, bad[4][1])
notes = run("stack", NOTRACE, snapshot(tid, reversed(bad)))
rec = notes[0][1] if notes else []
check(notes and rec[0][0] >> 48 == MARKER and rec[1:] == trail[5:],
      "a from outside the core's executable mappings: it and the older ones dropped",
      notes)

# a from in the program's code, in the chain, but no branch: parse_request's
# `mov %rax,%rdi` (crasher+0x123c) before its call to checksum (+0x123f),
# decoded as btsdump decodes a BTS record's from
mov = list(trail)
mov[4] = (mov[4][0] - 3, mov[4][1])
notes = run("not a branch", NOTRACE, snapshot(tid, reversed(mov)))
rec = notes[0][1] if notes else []
check(notes and rec[0][0] >> 48 == MARKER and rec[1:] == trail[5:] and
      notes[0][0]["lost"] == 5,
      "a from that decodes to no branch (a mov): it and the older ones dropped "
      "behind a gap", notes)

# a kernel-written note (the fixture's) is never replaced
NULL = os.path.join(FIX, "crasher-null.core")
orig = [(t, d) for t, n, d in cv.elf_notes(NULL) if n == "BTSCRASH"]
notes = run("kernel note", NULL, snapshot(core_tid(NULL), [(0x1000, 0x2000)]))
check(notes is not None and len(notes) == len(orig) == 1 and notes[0][0]["source"] != 3,
      "a core with a kernel-written note keeps it, without the collector's", notes)

notes = run("stale", NOTRACE, snapshot(tid, newest, age_ns=120 * 10**9))
check(notes == [], "a snapshot taken 2 minutes before the crash: no note", notes)
# a handler starved of CPU in a crash storm reaches the note 90 s after the
# crash: the snapshot taken at the crash is still its own
notes = run("starved", NOTRACE, snapshot(tid, newest, age_ns=90 * 10**9), ago=90)
check(notes and len(notes) == 1 and notes[0][1] == trail,
      "a crash handled 90 s late: the snapshot taken at the crash gives the note", notes)
notes = run("after", NOTRACE, snapshot(tid, newest), ago=90)
check(notes == [], "a snapshot taken 90 s after the crash (a reused thread id's): no note",
      notes)
t0 = time.monotonic()
notes = run("no collector", NOTRACE, snapshot(tid, newest), armed=False)
check(notes == [] and time.monotonic() - t0 < 30,
      "no collector armed: no note, no wait", notes)
t0 = time.monotonic()
notes = run("killed collector", NOTRACE, snapshot(tid, newest), armed="killed")
check(notes == [] and time.monotonic() - t0 < 30,
      "a killed collector (its armed file left, unlocked): no note, no wait", notes)
t0 = time.monotonic()
notes = run("not taken", NOTRACE, None)
check(notes == [] and time.monotonic() - t0 < 30,
      "no snapshot, the collector past the crash (a signal it does not take: sent by "
      "another process): no note, no waiting for one", notes)
# a collector starved of CPU (a crash storm under TCG): its snapshot and its
# progress come 5 s after the handler began waiting; the handler waits for
# them, as its progress is behind the crash
notes = run("late", NOTRACE, snapshot(tid, newest), late=5)
check(notes and len(notes) == 1 and notes[0][1] == trail[-len(notes[0][1]):] and
      len(notes[0][1]) >= 16,
      "a snapshot written 5 s late by a starved collector, its progress behind the "
      "crash until then: the handler waited, the note is written", notes)
# the LBR reset by perf at a switch-in after the thread's last branch (a
# cold CI run's systemd-vm-6.1-lbr): every slot empty; the log says so,
# with what the snapshot held (it said "No data available")
notes = run("empty", NOTRACE, snapshot(tid, [], kept=DEPTH))
check(notes == [] and "no LBR note: the LBR held no branch of the crashing thread" in run.err
      and f"{DEPTH} slots, perf's read kept {DEPTH}, 0 user entries" in run.err,
      "a snapshot with every slot empty (perf's reset): no note; the journal says so, "
      "with the snapshot's slots, kept count and user entries", run.err)
notes = run("helper error", NOTRACE, snapshot(tid, newest, nr=-95))
check(notes == [], "a snapshot the helper could not take (-EOPNOTSUPP): no note", notes)

# the collector itself on this machine: armed (stopped by SIGTERM), or one
# line saying why not and exit 0 (a VM without a PMU, as here)
lbr = os.path.join(tmp, "collector")
p = subprocess.Popen([daemon, "--log", "stderr", "--lbr-collector", "--lbr-dir", lbr],
                     stderr=subprocess.PIPE)
for _ in range(100):
    if p.poll() is not None or os.path.exists(os.path.join(lbr, "armed")):
        break
    time.sleep(0.1)
if p.poll() is None:
    p.terminate()
err = p.communicate(timeout=60)[1].decode()
status = open(os.path.join(lbr, "status")).read() if os.path.exists(
    os.path.join(lbr, "status")) else ""
lines = [l for l in err.splitlines() if "no LBR collector:" in l]
check(p.returncode == 0 and (
    ("LBR collector armed" in err and not lines and not os.path.exists(
        os.path.join(lbr, "armed"))) or
    (len(lines) == 1 and status.startswith("no LBR collector: "))),
      "the collector here: armed and stopped cleanly, or one line and its status "
      "saying why not, exit 0", (p.returncode, err, status))

sleeper.kill()
sleeper.wait()
subprocess.run(["rm", "-rf", tmp])
sys.exit(cv.tap.done())
