#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The VM tests' oracle (oracle.py) on logs made here, entry by entry, in
the model's format (qemu/bts-log.py): it must find a trace's ring,
report records the CPU wrote there after the trace's newest, and not take
another ring's records for them -- with the rings reached directly
(linear = direct map) and through a KPTI window (one linear window for
every ring a CPU loads).

The case that made the buffer base part of the log: a ring freed, and a
new one allocated 15 pages further into the same memory (24-byte slots
line up again every 3 pages), whose first records landed just after the
old ring's newest slot; an oracle that guessed rings from page alignment
took them for records the core had missed (vm-hw-pti, once in CI).
Also the two log readers' shared module (qemu/modellog.py): the LBR
log's per-vCPU tail read from the end against the whole log, both readers'
format check and their command line's filters; oracle.lbr_entries (the
LBR log in chunks, a limit, a cut last entry) against the whole log, and
oracle.diff's detail.  And check-lbr-perf's reading of an NMI's stack as
Linux's -b sample: an OTHER_BRANCH entry (an interrupt's) may be missing,
Linux's filter having dropped it; no other entry may (a cold CI run's
vm-lbr-perf-arch, sample 7).  And kdump-test's reading of the panic
report on the console (report_lines).  And check-pmu-vm's ring rule
(check_ring_log): a task's ring against the model's log of its buffer,
which a later task's ring may reuse (a cold CI run's vm-pmu check 29).
And kdump-test's trail_function (a PANIC's 16 entries spent on an
interrupt at panic's entry).  And check-systemd-vm's reading of a crash stored without the LBR note
as perf's reset at a switch-in (perf_reset).  And check-perf-oops's
kmark rule (kmark_split): a kernel message may split a tty line.
Usage: test-oracle.py"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from oracle import Log, Oracle, bts_log, MARKER_TAG, any_record  # noqa: E402
from oracle import diff, lbr_entries, lbr_log as lbrlog, load  # noqa: E402
from tap import Tap  # noqa: E402

QEMU_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "qemu")

T = Tap()
check = T.check
PAGE, CAP = 4096, 4096
DIRECT = 0xffff888000000000
WINDOW = 0xfffffe0000377000       # a CPU's cpu_entry_area window


class Guest:
    """Writes log entries as the model would: ring at guest-physical RING,
    reached through the direct map or through WINDOW (KPTI)."""

    def __init__(self, pti):
        self.pti, self.entries = pti, []

    def write(self, ring, slot, frm, to, cpu=0):
        base = WINDOW if self.pti else DIRECT + ring
        self.entries.append(bts_log.ENTRY.pack(
            frm, to, 0, base + 24 * slot, ring + 24 * slot, base, cpu, 0))
        return len(self.entries) - 1

    def log(self, d):
        path = os.path.join(d, "bts.log")
        with open(path, "wb") as f:
            f.write(b"".join(self.entries))
        return Log(path)


def user_rec(n):
    return 0x401000 + 16 * n, 0x402000 + 16 * n


def build(pti, d, missed):
    """A log: ring A's user records (the core's), then -- when MISSED -- one
    more user record in A the core lacks, the fault's exception record,
    ring B 15 pages into A's memory, and a new ring at A's start.
    Returns (log, the core's records, A, B, index of the core's newest)."""
    g = Guest(pti)
    a, b = 0x1000000, 0x1000000 + 15 * PAGE
    # 2557 user records, two kernel markers' slots skipped (not in the
    # log: the kernel writes markers, not the CPU); A's newest is slot 2558
    core, slot = [], 0
    for n in range(2557):
        if n == 1000:
            slot += 2
        last = g.write(a, slot, *user_rec(n))
        core.append(user_rec(n) + (0,))
        slot += 1
    core.insert(1000, (MARKER_TAG | 1, 0, 0))       # markers in the core
    if missed:
        g.write(a, slot, *user_rec(9999))
        slot += 1
    # the thread faults: the exception record has a kernel destination
    g.write(a, slot, 0, 0xffffffff81000000)
    # A freed; B allocated 15 pages in: its slot 1.. is A's slot 2561..
    for n in range(5):
        g.write(b, 1 + n, *user_rec(5000 + n), cpu=1)
    # A's pages again, a third ring from its start (a new life)
    for n in range(3):
        g.write(a, n, *user_rec(6000 + n))
    return g.log(d), core, a, b, last


def run(pti, d):
    mode = "window (KPTI)" if pti else "direct map"
    log, core, a, b, last = build(pti, d, False)
    m = Oracle(log).match(core, CAP)
    check(m is not None and m[0] == a and m[1] == last,
          f"{mode}: the core's ring and newest record found",
          repr(m and (hex(m[0]), m[1])))
    check(m is not None and m[2] == [],
          f"{mode}: another ring's records in the same pages, slots lined "
          "up, and a new life from the ring's start are not taken for "
          "records the core missed",
          m and [str(log.entry(i)) for i in m[2]])
    check(log.ring(len(log) - 4) == b and log.slot(len(log) - 4) == 5,
          f"{mode}: an entry's ring and slot from the buffer base")
    check(Oracle(log).match(core[:-1] + [user_rec(7777) + (0,)], CAP) is None,
          f"{mode}: a trace no ring ends with: none found")
    # every record kept (kdump's per-CPU rings): the exception record
    # written into A after the newest counts
    m = Oracle(log).match(core, CAP, keep=any_record)
    check(m is not None and m[2] == [last + 1],
          f"{mode}: keeping every record, the later kernel record in A counts",
          m and [str(log.entry(i)) for i in m[2]])
    log.f.close()

    log, core, a, b, last = build(pti, d, True)
    m = Oracle(log).match(core, CAP)
    check(m is not None and m[1] == last and m[2] == [last + 1],
          f"{mode}: a newer user record in the core's ring is reported",
          m and [str(log.entry(i)) for i in m[2]])
    log.f.close()


def readers(d):
    """modellog through both readers: tail = the whole log's last entries
    per vCPU across chunk borders, short logs refused, CLI filters."""
    lbr = os.path.join(d, "lbr.log")
    with open(lbr, "wb") as f:
        for i in range(300):      # vCPU 2 stops after its 10th entry
            cpu = 2 if i < 30 and i % 3 == 2 else i % 2
            f.write(lbrlog.ENTRY.pack(0x1000 + i, 0x2000 + i, i, cpu, i % 32,
                                      0, 3, 2, 0, 0))
    whole = lbrlog.read(lbr)
    want = {c: [str(e) for e in whole if e.cpu == c][-25:] for c in (0, 1, 2)}
    got = lbrlog.tail(lbr, 25, (0, 1, 2), chunk=7 * lbrlog.ENTRY.size)
    check(len(whole) == 300 and {c: [str(e) for e in v] for c, v in got.items()} == want,
          "lbr-log tail: each vCPU's last 25 entries, read from the end", got)
    bad = os.path.join(d, "bad.log")
    for reader, size in ((lbrlog, 40), (bts_log, 56)):
        with open(bad, "wb") as f:
            f.write(bytes(size + 1))
        try:
            reader.read(bad)
            refused = False
        except reader.FormatError:
            refused = True
        check(refused, "a %d-byte entry log of %d bytes is refused" % (size, size + 1))
    out = subprocess.run([sys.executable, os.path.join(QEMU_DIR, "lbr-log.py"), "--cpu",
                          "1", "--cpl", "3", "--tail", "2", lbr],
                         capture_output=True, text=True).stdout.splitlines()
    check(out == [str(e) for e in whole if e.cpu == 1][-2:],
          "lbr-log.py --cpu 1 --cpl 3 --tail 2: the vCPU's last two entries", out)
    p = subprocess.run([sys.executable, os.path.join(QEMU_DIR, "bts-log.py"), bad],
                       capture_output=True, text=True)
    check(p.returncode == 1 and p.stderr == "bts-log: 57 bytes is not a multiple of 56\n",
          "bts-log.py on a malformed log: exit 1, says why", p.stderr)


def chunks(d):
    """oracle.lbr_entries: the whole log's entries across chunk borders, of
    its first LIMIT bytes, a cut last entry left out; diff's detail."""
    lbr = os.path.join(d, "lbr.log")
    whole = [(e.frm, e.to, e.info, e.cpu) for e in lbrlog.read(lbr)]
    with open(lbr, "ab") as f:
        f.write(bytes(17))          # a cut entry, as QEMU's buffer leaves one
    got = [e[:4] for e in lbr_entries(lbr, chunk=7)]
    check(got == whole, "lbr_entries in chunks of 7: every entry, in order, "
          "the cut last one left out", diff(got, whole))
    got = [e[:4] for e in lbr_entries(lbr, limit=40 * 123 + 5, chunk=10)]
    check(got == whole[:123], "lbr_entries of the first 123.1 entries' bytes: "
          "123 entries", diff(got, whole[:123]))
    got = [e[:4] for e in lbr_entries(lbr, limit=0)] + \
        [e[:4] for e in lbr_entries(lbr, limit=1 << 40)]
    check(got == whole, "lbr_entries of 0 bytes: none; of more than the log: "
          "all of it", len(got))
    check(diff([(1, 2), (3, 4)], [(1, 2), (3, 5), (6, 7)]) ==
          "2 got, 3 wanted; first difference at 1: got (3, 4), wanted (3, 5)" and
          diff([(1, 2)], [(1, 2), (26, 27)], lambda r: [hex(x) for x in r]) ==
          "1 got, 2 wanted; first difference at 1: got None, wanted ['0x1a', '0x1b']",
          "diff: the first difference, records shown as they are or by SHOW")


def samples():
    """check-lbr-perf.read_as_sample on a stack with one interrupt entry
    (LBR_INFO.BR_TYPE 8, OTHER_BRANCH) between conditional branches."""
    clp = load("check_lbr_perf", "tests", "vm", "check-lbr-perf.py")
    other = 8 << 56
    stack = [(0x10, 0x20, 0), (0x1c, 0x30, other), (0x0c, 0x1c, 0), (0x04, 0x08, 0)]
    pairs = [(f, t) for f, t, _ in stack]
    check(clp.read_as_sample(stack, pairs) and
          clp.read_as_sample(stack, pairs[:1] + pairs[2:]),
          "an NMI's stack read as a -b sample: whole, or less its interrupt entry")
    check(not clp.read_as_sample(stack, pairs[:2] + pairs[3:]) and
          not clp.read_as_sample(stack, pairs[:-1]),
          "...but never less a branch's entry, nor cut short")
    check(clp.read_as_sample(stack + [(0, 0, 0)] * 2, pairs) and
          not clp.read_as_sample(stack + [(0x40, 0x44, 0)], pairs),
          "...up to the depth or an empty entry")
    last = stack[:3] + [(0x40, 0x48, other)]
    check(clp.read_as_sample(last, pairs[:1] + pairs[2:3]) and
          not clp.read_as_sample(last, pairs[:1]),
          "...an interrupt entry dropped at its end, too (not a branch's)")
    # Skylake's format: an entry with no source (seen in vm-lbr-perf-legacy)
    # is read like any other
    hole = [(0x10, 0x20, 0), (0, 0x30, 0), (0x0c, 0x1c, 0)]
    check(clp.read_as_sample(hole, [(f, t) for f, t, _ in hole]),
          "...an entry with no source inside it read as any other")


def reports():
    """kdump-test's reading of the panic report on the console: another
    CPU's line inside it is set aside (CI, kdump-lbr-PANIC: 15 of 16
    records read), a lost record is not made up."""
    kt = load("kdump_test", "tests", "vm", "kdump-test.py")
    recs = [f" [{i:3}] panic+0x{i:x}/0x2fb -> panic+0x{i + 1:x}/0x2fb" for i in range(4, 0, -1)]
    head = "bts_crash: last 4 kernel branches on CPU 1 (LBR), oldest first:"
    first = "bts_crash: last 2 kernel branches on CPU 0 (LBR), oldest first:\n" + \
        "\n".join(recs[2:]) + "\nok\n"
    tail = "\nCPU: 1 UID: 0 PID: 1 Comm: init\nLinux version 6.12\n" + head + "\n"
    whole = first + head + "\n" + "\n".join(recs) + tail
    check(kt.report_lines(whole.replace("\n", "\r\n")) == (4, recs, []),
          "the panic report: its header's count, the records after the last header "
          "before the capture kernel's boot")
    mixed = first + head + "\n" + "\n".join(recs[:3]) + \
        "\nclocksource: timekeeping watchdog on CPU0\n" + recs[3] + tail
    got = kt.report_lines(mixed)
    check(got[:2] == (4, recs) and got[2][0].startswith("clocksource"),
          "...another CPU's line among its records set aside", got)
    lost = first + head + "\n" + "\n".join(recs[:2] + recs[3:]) + tail
    check(kt.report_lines(lost)[1] == recs[:2] and kt.report_lines("no report")[0] is None,
          "...a lost record not made up: the records stop before it", kt.report_lines(lost))


def panic_trails():
    """kdump-test's trail_function: on a 16-deep LBR, a PANIC's trail that
    an interrupt at panic()'s entry filled (its iret back into panic, no
    lkdtm_PANIC) must reach panic instead; the iret's target printed
    without an offset (taken at panic's first instruction: a CI run's
    kdump-lbr-zen5-PANIC) as with one; an iret elsewhere is no reason."""
    kt = load("kdump_test", "tests", "vm", "kdump-test.py")
    kt.LBR_DEPTH = 16
    d = type("D", (), {"short": False, "kind": "PANIC", "lbr": True})

    def block(to):
        return ("     10  cond      0xffffffff92801948 error_return+0x8             -> "
                "0xffffffff928015fc restore_regs_and_return_to_kernel  [entry_64.S:1098]\n"
                "     11  iret      0xffffffff92801617 native_irq_return_iret       -> "
                f"0xffffffff922686a6 {to}  [entry_64.S:659 -> panic.c:342]\n"
                "     12  cond      0xffffffff922686f6 panic+0x50                   -> "
                "0xffffffff92268700 panic+0x5a  [panic.c:350]\n")
    check(kt.trail_function(d, block("panic")) == "panic" and
          kt.trail_function(d, block("panic+0x4")) == "panic",
          "trail_function: an interrupt at panic's entry (its iret into panic, at "
          "offset 0 or not): the trail reaches panic")
    kt.LBR_DEPTH = 32       # ci8's kdump-lbr-PANIC: a softirq run spent all 32
    check(kt.trail_function(d, block("panic+0x50")) == "panic",
          "...on the 32-deep LBR too")
    check(kt.trail_function(d, block("vpanic+0x14")) == "panic" and
          kt.goes_into("vpanic+0x14", "panic") and kt.goes_into("panic+0x4", "panic") and
          not kt.goes_into("vpanicky", "panic"),
          "...an iret into vpanic (panic's body since 6.12.118): the trail reaches panic")
    check(kt.trail_ends(["lkdtm_PANIC", "panic", "vpanic"], False),
          "trail_ends: the emulation's trail ending in vpanic ends where the freeze is")
    check(kt.trail_function(d, block("do_idle+0x4")) == "lkdtm_PANIC" and
          kt.trail_function(d, block("panic_smp_self_stop+0x4")) == "lkdtm_PANIC",
          "...an iret into another function: lkdtm_PANIC still wanted")


class Checks:
    """A Tap's check() that keeps each result, for a checker's own rules."""

    def __init__(self):
        self.results = []

    def check(self, ok, name, detail=""):
        self.results.append(bool(ok))


def rings():
    """check-pmu-vm.check_ring_log: the ring (user records at slots 0-3 of
    a buffer) equal to the model's log; past it the task's own kernel-bound
    continuation (its fault, slot 4), then the buffer reused by a later
    task's ring whose slot 0 is an interrupt's (kernel-bound), slot 1 a
    user record.  The rule before the cold run's fix looked at the next
    user record only (slot 1) and failed this ring.  A later ring whose
    first logged record is at slot 2 (two markers the kernel wrote before
    it, not logged: another cold run) is another ring too; the rule that
    wanted slot 0 failed it."""
    cpv = load("check_pmu_vm", "tests", "vm", "check-pmu-vm.py")
    base, kern = 0x7f0000000000, 0xffffffff81000000

    def entry(slot, frm, to, at=base):
        return bts_log.Entry(frm, to, 0, at + 24 * slot, 0x1000 + 24 * slot, at, 0, 0)

    mine = [entry(i, 0x401000 + 16 * i, 0x402000 + 16 * i) for i in range(4)]
    fault = entry(4, 0x401100, kern)
    reused = [entry(0, kern + 8, kern + 0x40), entry(1, 0x501000, 0x502000)]
    ring = [(e.frm, e.to, 0) for e in mine] + [(0xb75c << 48 | 1, 0, 0)]

    def verdict(log, ring=ring):
        c = Checks()
        got = cpv.check_ring_log(c, ring, log, "test")
        return c.results == [True], got

    check(verdict(mine + [fault] + reused) == (True, base),
          "check_ring_log: the ring equal to its buffer's log, the task's fault "
          "continuing it, then a later ring's slot 0 (kernel-bound) and 1")
    check(verdict(mine + [fault, entry(2, 0x43af19, 0x40162c), entry(0, kern + 8, kern + 0x40)])
          == (True, base),
          "...a later ring whose first logged record is at slot 2 (markers before it)")
    check(verdict(mine + [entry(4, 0x401200, 0x401300)])[0] is False and
          verdict(mine + [fault, entry(5, 0x401200, 0x401300)])[0] is False,
          "...a user record continuing the ring, at once or after the fault: "
          "one the core missed")
    check(verdict(mine[:3] + [fault])[0] is False and
          verdict(mine, ring[1:])[0] is True and verdict(mine, ring[:2])[0] is False,
          "...a record the log lacks, or a ring that stops short of the log's "
          "newest: not equal; an older record overwritten: equal")
    check(verdict([entry(i, 0x401000 + 16 * i, 0x402000 + 16 * i, base + 0x10000)
                   for i in range(4)])[0] is True and verdict([], ring)[0] is False,
          "...the same records in another buffer found there; an empty log: no ring")


def resets(d):
    """check-systemd-vm.perf_reset: a crash stored without the collector's
    note is taken for perf's LBR reset at a switch-in (and one crash more
    checked instead) only when its own handler said so and that the
    snapshot held no user entry; not for another entry's line, nor for
    a snapshot that held another task's user entries."""
    csv = load("check_systemd_vm", "tests", "vm", "check-systemd-vm.py")
    warn = "E2: no LBR note: the LBR held no branch of the crashing thread"

    def said(*lines):
        with open(os.path.join(d, "journal-btsdumpd.json"), "w") as f:
            for pid, msg in lines:
                f.write(json.dumps({"_PID": pid, "MESSAGE": msg}) + "\n")
        return csv.perf_reset(d, "E2")

    def snap(user):
        return f"LBR snapshot of thread 77 on CPU 0: 32 slots, perf's read kept 0, " \
            f"{user} user entries, none a branch of the core's code"
    check(said((9, snap(0)), (9, warn)) is True,
          "perf_reset: the entry's handler said no branch, its snapshot no user entry")
    check(said((9, snap(3)), (9, warn)) is False and said((8, snap(0)), (9, warn)) is False
          and said((9, snap(0)), (9, warn.replace("E2", "E1"))) is False and
          said((9, snap(0))) is False,
          "...not with user entries, another handler's snapshot, another entry's "
          "line, or no line")


def kmarks():
    """check-perf-oops.kmark_split: a tty line whole before its marker even
    when a kernel message was written into it (a CI run's KMARK-LINE-7,
    which the check that wanted the line unbroken failed); a marker inside
    the tty line, before its end or with x's after it, is wrong."""
    cpo = load("check_perf_oops", "tests", "vm", "check-perf-oops.py")
    x = "x" * 3000

    def con(line, mark="KMARK-1\r\n"):
        return f"boot\r\nKMARK-LINE-1 {line}\r\n{mark}KMARK-LINE-2 {x}\r\nKMARK-2\r\n"
    msg = "tsc: Refined TSC clocksource calibration: 2096.029 MHz\r\n"
    check(cpo.kmark_split(con(x), 1) == "" and cpo.kmark_split(con(x), 2) == "" and
          cpo.kmark_split(con(x[:700] + msg + x[700:]), 1) == "" and
          cpo.kmark_split(con(msg + x), 1) == "",
          "kmark_split: a whole tty line, or one a kernel message split, before "
          "its marker line")
    check(cpo.kmark_split(con(x[:700] + "\r\nKMARK-1\r\n" + x[700:], ""), 1) ==
          "tty line's x's after the marker" and
          cpo.kmark_split(con(x[:700] + "KMARK-1" + x[700:], ""), 1) ==
          "no marker line of its own after the tty line" and
          cpo.kmark_split(con(x[:2999]), 1) == "2999 of the tty line's 3000 x's before the marker"
          and cpo.kmark_split(con(x), 3) == "no tty line",
          "...a marker inside the tty line, cut into it, or a line short: wrong")


def main():
    kmarks()
    samples()
    reports()
    panic_trails()
    rings()
    with tempfile.TemporaryDirectory() as d:
        for pti in (False, True):
            run(pti, d)
        readers(d)
        chunks(d)
        resets(d)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
