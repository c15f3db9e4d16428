#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One kdump test of the `vm` suite: a real panic, a real vmcore, real crash.

Usage: kdump-test.py BTS_SO BTSDUMP OUTDIR LKDTM_TYPE|notraces

Builds the kernel if needed, boots it with kdump loaded
(tests/vm/run-kdump.sh) while a traced process runs, provokes LKDTM_TYPE,
and checks the saved vmcore (kdump-compressed, makedumpfile -d 31) with
`crash` and the `bts` extension (TAP; one crash for every check of the
vmcore: CrashSession): the panicking CPU is marked and its trail reaches
the LKDTM function; every CPU with a ring shows records; `bts -t PID`
shows the traced process's user branches; the NT_BTSCRASH_CPU note in
the dump equals the ring's newest records; `btsdump vmcore` without
vmlinux reads the same records as crash; and bad input gives clear
errors (a corrupted ring index) or at least no crash (a dump cut short,
which crash itself refuses).
CRASH: the crash binary (default: `crash`, Debian 12's 8.0.2); BTS_SO is
the bts.so built against its defs.h (tests/vm/meson.build pairs them).
A kernel from 6.9 on needs crash 8.0.6 or later: an older one fails the
test before the kernel boots.
`notraces` boots without per-CPU rings: `bts` must say there are none,
and still find the traced process's ring through VMCOREINFO.
BTSCRASH_BACKEND=hw: on the BTS model (qemu/), the per-CPU rings hold
kernel branches the CPU wrote, and each is checked against the model's
log: the vmcore's ring is the newest records the model wrote there, and
nothing was written after the crash path stopped the CPU.
BTSCRASH_BACKEND=lbr-kernel: on the LBR model, bts_crash.source=lbr-kernel
(the traced process on the emulation): each CPU's ring is its LBR stack as
the oops or the crash path froze it, equal to the last 32 entries the
model pushed on that vCPU (nothing after the freeze), the panicking CPU's
ending in the freeze itself and reaching the LKDTM function; the oops
report on the console prints the same branches.  With VM_LBR_CPU=amd the
same on the AMD model's LbrExtV2 (VM_AMD_CPU; zen5: VM_ZEN5_CPU): 16
entries, not 32.  There an EXCEPTION's 16 do not reach lkdtm_EXCEPTION
(the fault entry path with SRSO's return thunks spends them): its trail
must reach the page-fault handler's call into page_fault_oops, end in the
freeze first thing in oops_begin(), and the model's log must show the
fault in lkdtm_EXCEPTION as the entry that path started from.
"""
import bisect
import fcntl
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402
from oracle import Oracle, any_record, read_log  # noqa: E402
from kwarn import kernel_warnings  # noqa: E402
import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location(
    "lbrlog", os.path.join(SRC, "qemu", "lbr-log.py"))
lbrlog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lbrlog)
_spec = importlib.util.spec_from_file_location(     # its AMD_CPUS
    "checklbr", os.path.join(SRC, "tests", "vm", "check-lbr.py"))
checklbr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checklbr)

tap = Tap()
check = tap.check
# the LBR's depth (lbr-kernel): Intel's model-specific stack, or LbrExtV2
LBR_DEPTH = 16 if os.environ.get("VM_LBR_CPU") in ("amd", "zen5") else 32
LKDTM_FN = {"EXCEPTION": "lkdtm_EXCEPTION", "PANIC": "lkdtm_PANIC",
            "BUG": "lkdtm_BUG", "EXEC_NULL": "lkdtm_EXEC_NULL"}
# the source file of the function a trail must reach: LKDTM's, or for an
# EXCEPTION on LbrExtV2 the page-fault handler's (main())
FN_SOURCE = {"page_fault_oops": "fault", "panic": "panic"}
# the panicking CPU's entries an EXCEPTION's check reads from the model's
# log: the 16 of LbrExtV2's ring and the fault entry path before them
FAULT_TRAIL = 256


CRASH = os.environ.get("CRASH", "crash")
# crash's own options for this kernel (main() adds --no_kmem_cache on 6.9+)
CRASH_OPTS = []


def crash_version(prog):
    """(8, 0, 6) from `crash --version` ("crash 8.0.6"), or None."""
    try:
        out = subprocess.run([prog, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except OSError:
        return None
    m = re.search(r"^crash (\d+)\.(\d+)\.(\d+)", out, re.M)
    return tuple(map(int, m.groups())) if m else None


def kernel_release(obj):
    """(6, 1) from the build's include/config/kernel.release."""
    with open(os.path.join(obj, "include", "config", "kernel.release")) as f:
        return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", f.read()).groups())


def readable(release, version):
    """Whether crash VERSION reads x86_64 vmcores of Linux RELEASE: 8.0.5
    and older misread them from 6.9 on (FRED's pt_regs; module_load_offset
    gone in 6.10)."""
    return release < (6, 9) or (version or (0,)) >= (8, 0, 6)


def crash_argv(prog, vmlinux, vmcore):
    return [prog or CRASH, "-s", "--kaslr", "auto", *CRASH_OPTS, vmlinux, vmcore]


def without_warnings(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("WARNING"))


def crash(vmlinux, vmcore, bts_so, *cmds, prog=None):
    """One crash process for CMDS alone: (its exit status, its output)."""
    script = ("extend %s\n" % bts_so if bts_so else "") + "\n".join(cmds) + "\nquit\n"
    p = subprocess.run(crash_argv(prog, vmlinux, vmcore),
                       input=script, capture_output=True, text=True, timeout=300)
    return p.returncode, without_warnings(p.stdout + p.stderr)


class CrashSession:
    """One crash process for every check that reads the same vmlinux,
    vmcore and bts.so: each loads vmlinux's debug information once (5 s of
    CPU on 6.12), not once per check.  run(CMDS) sends CMDS and `echo` of
    a marker line and returns (rc, output): the output between the
    previous marker and this one (an error message of a command is its
    check's), after the start's own output (crash's, and extend's); rc 0
    if crash came back to the marker, else its exit status (a signal:
    negative; -9 after TIMEOUT s, killed).  A crash that died is started
    again for the next run(), as a check had its own crash before."""
    TIMEOUT = 300

    def __init__(self, vmlinux, vmcore, bts_so):
        self.vmlinux, self.vmcore, self.bts_so = vmlinux, vmcore, bts_so
        self.argv, self.p, self.n = crash_argv(None, vmlinux, vmcore), None, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        self.p = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        rc, self.head = self._send(["extend %s" % self.bts_so] if self.bts_so else [])
        return rc

    def _send(self, cmds):
        """CMDS, then the marker: (rc, the output before the marker)."""
        self.n += 1
        mark = b"kdump-test.py %d mark %d" % (os.getpid(), self.n)
        out, deadline = b"", time.monotonic() + self.TIMEOUT
        try:
            self.p.stdin.write(("\n".join(cmds + ["echo %s\n" % mark.decode()])).encode())
            self.p.stdin.flush()
        except OSError:
            pass                                # it died: its status below
        fd, at = self.p.stdout.fileno(), re.compile(rb"(^|\n)%s\n" % re.escape(mark))
        while not at.search(out):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.p.kill()
                out += b"\n(kdump-test.py: no answer in %d s, crash killed)" % self.TIMEOUT
                break
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            out += chunk
        m = at.search(out)
        if m:
            return 0, out[:m.start()].decode(errors="replace")
        rc, self.p = self.p.wait(), None
        return rc, out.decode(errors="replace")

    def run(self, *cmds):
        rc = self._start() if self.p is None else 0
        if self.p is not None:
            rc, text = self._send(list(cmds))
        else:
            text = ""
        return rc, without_warnings("\n".join(t for t in (self.head, text) if t))

    def close(self):
        if self.p is None:
            return
        try:
            self.p.communicate(b"quit\n", timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()
        self.p = None


def crash_by_name(vmlinux, vmcore, bts_so, *cmds):
    """crash with `extend bts.so`, no path: crash looks in its extension
    directory, /usr/lib/crash/extensions, where btscrash-crash installs
    the module (test-debian checks that); here that directory is, in a
    private mount namespace, one holding this build's bts.so."""
    ext = "/usr/lib/crash/extensions"
    d = os.path.join(os.path.dirname(os.path.abspath(vmcore)), "crash-extensions")
    os.makedirs(d, exist_ok=True)
    shutil.copy(bts_so, os.path.join(d, "bts.so"))
    script = "extend bts.so\n" + "\n".join(cmds) + "\nquit\n"
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount --bind "$1" "$2" && cd / && exec "$5" -s --kaslr auto $6 "$3" "$4"',
                        "sh", d, ext, os.path.abspath(vmlinux), os.path.abspath(vmcore),
                        shutil.which(CRASH), " ".join(CRASH_OPTS)],
                       input=script, capture_output=True, text=True, timeout=300)
    return p.returncode, "\n".join(l for l in (p.stdout + p.stderr).splitlines()
                                   if not l.startswith("WARNING"))


def kdump_notes(vmcore):
    """(type, name, desc) of the notes in a kdump-compressed dump's header."""
    with open(vmcore, "rb") as f:
        head = f.read(1 << 20)
    if head[:8] != b"KDUMP   ":
        raise ValueError("not a kdump-compressed dump")
    # makedumpfile's struct disk_dump_header: block_size at 428; the
    # kdump_sub_header is the next block, offset_note/size_note at 48/56
    block = struct.unpack_from("<i", head, 428)[0]
    off_note, size_note = struct.unpack_from("<QQ", head, block + 48)
    notes, out, off = head[off_note:off_note + size_note], [], 0
    while off + 12 <= len(notes):
        n, d, t = struct.unpack_from("<III", notes, off)
        if n == 0 and d == 0:
            break
        name = notes[off + 12:off + 12 + n].rstrip(b"\0").decode(errors="replace")
        o = off + 12 + ((n + 3) & ~3)
        out.append((t, name, notes[o:o + d]))
        off = o + ((d + 3) & ~3)
    return out


def vmcoreinfo_text(vmcore):
    """The VMCOREINFO note of a kdump-compressed dump, as text."""
    return "".join(d.rstrip(b"\0").decode(errors="replace")
                   for t, n, d in kdump_notes(vmcore) if n == "VMCOREINFO")


RAW = r"\] ([0-9a-f]{16}) ([0-9a-f]{16}) ([0-9a-f]{16})"


def per_cpu(text):
    """{cpu: [(from, to, flags), ...]} from `crash> bts -r` or `btsdump
    vmcore -r` output: a "CPU N..." header line, then its records."""
    out, cpu = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*CPU (\d+)\b", line)
        if m:
            cpu = int(m.group(1))
            out.setdefault(cpu, [])
            continue
        r = re.search(RAW, line)
        if r and cpu is not None:
            out[cpu].append(tuple(int(x, 16) for x in r.groups()))
    return out


def goes_into(symbol, fn):
    """Whether a branch's target (btsdump's to_symbol) is FN's entry, or
    for panic anywhere in it or in vpanic(), its body since 6.12.118 (a
    trail can start inside it: check_vmcore())."""
    return symbol == fn or fn == "panic" and re.match(r"v?panic(\+|$)", symbol or "") is not None


def check_decoded(kind, tool, vmcore, vmlinux, ring, fn, branches):
    """With vmlinux, btsdump decodes each CPU's ring as a core's thread
    (lib/decode.c, report.c): the same records under the same numbers, each
    with its kind read from vmlinux's code and file:line from its DWARF; a
    call history where the ring holds real branches (hardware, LBR)."""
    rc, o, e = btsdump(tool, "-n", "0", vmcore, vmlinux)
    dec, cpu = {}, None
    for line in o.splitlines():
        m = re.match(r"CPU (\d+)", line)
        if m:
            cpu = int(m.group(1))
            dec[cpu] = []
        # a branch, or a marker with its text ("gap (unknown), resumed at …")
        m = (re.match(r"\s+(\d+)  (\S+)\s+(?:0x([0-9a-f]+) (.*?) -> 0x([0-9a-f]+) (.*))?$", line)
             or re.match(r"\s+(\d+)  (marker)\s+()()()(.*)$", line))
        if m and cpu is not None:
            dec[cpu].append(m.groups())
    same = set(dec) == set(ring) and all(
        len(dec[c]) == len(ring[c]) and
        all(int(n) == i + 1 and (k == "marker" or
                                 (int(f, 16), int(t, 16)) == ring[c][i][:2])
            for i, (n, k, f, _, t, _) in enumerate(dec[c]))
        for c in dec)
    check(rc == 0 and dec and same,
          f"{kind}: btsdump vmcore with vmlinux: the records crash> bts shows, "
          f"decoded under the same numbers ({sum(len(v) for v in dec.values())} on "
          f"{len(dec)} CPUs)", f"exit {rc}: {e}\n{o[:600]}")
    unknown = [l for v in dec.values() for l in v
               if l[1] == "unknown" and not l[3].startswith("??")]
    check(not unknown, f"{kind}: every branch in vmlinux has its kind, read from "
          "vmlinux's code", unknown[:4])
    src = FN_SOURCE.get(fn, "(bugs|perms)")
    hit = re.search(r"-> 0x[0-9a-f]+ %s\b.*-> %s\.c:\d+\]" % (fn, src), o)
    check(hit is not None, f"{kind}: the branch into {fn}, with its source "
          "line from vmlinux's DWARF", o[-800:])
    rc, o, e = btsdump(tool, "-j", "-n", "0", vmcore, vmlinux)
    try:
        cpus = __import__("json").loads(o)["cpus"]
        into = [b for c in cpus if c["panic"] for b in c["branches"]
                if goes_into(b.get("to_symbol"), fn)]
        ok = rc == 0 and any(re.match(r"%s\.c:\d+$" % src, b["to_line"] or "") and
                             b["to_module"] == "vmlinux" and "depth" in b for b in into)
    except (ValueError, KeyError, IndexError) as ex:
        ok, into = False, repr(ex)
    check(ok, f"{kind}: btsdump vmcore --json with vmlinux: the branch into {fn} "
          "is a core's branch object (line, module, depth)", f"exit {rc}: {e}\n{str(into)[:600]}")
    rc, o, e = btsdump(tool, "-c", "-n", "0", vmcore, vmlinux)
    if branches:
        check(rc == 0 and re.search(r"^\s+\d+\t\s*%s\tat " % fn, o, re.M),
              f"{kind}: btsdump vmcore --calls: the call history reaches {fn}",
              f"exit {rc}: {e}\n{o[-800:]}")
    else:
        check(rc == 0 and "no call history" in o,
              f"{kind}: btsdump vmcore --calls says the emulation has no returns",
              f"exit {rc}: {e}\n{o[:400]}")


def btsdump(tool, *args):
    p = subprocess.run([tool, "vmcore", *args], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def check_ring_id(session, pid, kind):
    """The ring descriptor of a forked child names the child (desc.id),
    not the parent that forked it: read with crash's own debuginfo.  The
    task is found on the task list: crash 8.0.2 does not read 6.1's PID
    IDR ("not found in PID hash"), so `task PID` finds only tasks running
    on a CPU at the panic, which the traced child need not be."""
    rc, text = session.run("list task_struct.tasks -s task_struct.pid,bts_crash -h init_task")
    m = re.search(r"pid = %s,\s*bts_crash = (0x[0-9a-f]+)" % pid, text)
    check(m is not None, f"{kind}: task_struct.bts_crash of the traced child", text)
    if not m:
        return
    rc, text = session.run(f"struct bts_crash_ring.id {m.group(1)}")
    ids = re.findall(r"id = (\d+)", text)
    check(ids == [pid], f"{kind}: the child's ring descriptor carries its own TID {pid}", text)


def check_oracle(kind, out, rings):
    """Each CPU's ring in the vmcore is what the model wrote into it, up
    to its newest record; after that, nothing (the crash path stopped BTS
    on every CPU: the panicking one first, the others in their NMI)."""
    log = read_log(out)
    check(log, f"{kind}: the model logged the records it wrote", out)
    path = os.path.join(out, "bts.log")      # gigabytes of kernel branches: read, gone
    if os.path.exists(path):
        os.unlink(path)
    if not log:
        return
    oracle = Oracle(log)
    for cpu, recs in sorted(rings.items()):
        m = oracle.match(recs, 4096, keep=any_record)
        check(m and not m[2],
              f"{kind}: CPU {cpu}'s ring ({len(recs)} records) is the newest the "
              "model wrote there, and nothing was written after the freeze",
              "no ring of the model's log ends with these records" if not m else
              "%d records written after: %s" % (len(m[2]), [str(log.entry(i)) for i in m[2][:4]]))


def check_lbr_oracle(kind, out, rings, panic_cpu):
    """Each CPU's ring (lbr-kernel) is entries its vCPU's LBR pushed, 32
    (LBR_DEPTH) in a row, in order, MISPRED as "not predicted": the last 32
    it pushed (nothing after the freeze: DEBUGCTL.LBR, LbrExtV2's LBRV2EN,
    cleared) -- except for a BUG on the panicking CPU, whose copy was taken
    at the trap, before report_bug() (patch 0018): there the 32 are found
    further back.  The
    log (a gigabyte or more of kernel branches) is read from its end,
    then removed.  Returns the panicking CPU's entries read (for an
    EXCEPTION, the last FAULT_TRAIL: check_fault_trail())."""
    path = os.path.join(out, "lbr.log")
    depth = {"BUG": 1 << 18, "EXCEPTION": FAULT_TRAIL}.get(kind, LBR_DEPTH)
    try:
        last = lbrlog.tail(path, depth, set(rings))
    except (OSError, lbrlog.FormatError) as e:
        check(False, f"{kind}: the LBR model's log", str(e))
        return []
    finally:
        if os.path.exists(path):
            os.unlink(path)
    want = {c: [(e.frm, e.to, 0 if e.mispredicted else 0x10) for e in v]
            for c, v in last.items()}
    for cpu, recs in sorted(rings.items()):
        got = want.get(cpu, [])
        if kind == "BUG" and cpu == panic_cpu:
            at = [i for i in range(len(got) - len(recs), -1, -1)
                  if got[i:i + len(recs)] == recs]
            d = LBR_DEPTH
            check(len(recs) == d and at and at[0] + d < len(got),
                  f"{kind}: CPU {cpu}'s ring is its LBR as copied at the BUG trap: "
                  f"{d} entries the model pushed in a row, {len(got) - d - at[0] if at else '?'} "
                  "pushed after it (report_bug) before the oops froze it",
                  "ring %s" % [tuple(hex(x) for x in r) for r in recs[-3:]])
            continue
        got = got[-LBR_DEPTH:]
        check(len(recs) == LBR_DEPTH and recs == got,
              f"{kind}: CPU {cpu}'s ring is its LBR as frozen: the last {LBR_DEPTH} entries "
              "the model pushed there, in order, none after",
              "ring %s\nmodel %s" % ([tuple(hex(x) for x in r) for r in recs[-3:]],
                                     [tuple(hex(x) for x in r) for r in got[-3:]]))
    return last.get(panic_cpu, [])


def symbolizer(smap):
    """name(address): the System.map symbol at or below an unrelocated
    address (no offset)."""
    syms = sorted((a, n) for n, addrs in smap.items() for a in addrs)
    starts = [a for a, _ in syms]
    return lambda a: syms[bisect.bisect_right(starts, a) - 1][1] if a >= starts[0] else "?"


def check_fault_trail(entries, smap, slide):
    """An EXCEPTION on LbrExtV2 (16 entries): the ring is the newest end of
    the trail from the NULL write.  In the model's log of the panicking
    CPU (ENTRIES, oldest first, the ring its last LBR_DEPTH), before the
    ring: the call into lkdtm_EXCEPTION, then the fault's own entry
    (lkdtm_EXCEPTION -> asm_exc_page_fault), then only the fault entry
    path (no other exception or interrupt entry: no asm_* target but the
    page fault's); and the ring's end is the freeze first thing in
    oops_begin(): after the call into it, only its call to the hook and
    the hook's own entries (bts_crash_*, ds_*)."""
    name = symbolizer(smap)
    trail = [(name(e.frm - slide), name(e.to - slide)) for e in entries]
    ring0 = len(trail) - LBR_DEPTH
    fault = next((i for i in range(ring0 - 1, 0, -1)
                  if trail[i][0] == "lkdtm_EXCEPTION"), None)
    path = trail[fault + 1:ring0] if fault is not None else []
    ok = (fault is not None and trail[fault][1] == "asm_exc_page_fault" and
          trail[fault - 1][1] == "lkdtm_EXCEPTION" and
          all(t == "asm_exc_page_fault" or not t.startswith("asm_") for _, t in path))
    need = len(trail) - fault + 1 if fault is not None else "?"
    check(ok, f"EXCEPTION: the model's log: the ring ends a trail of {need} entries from "
          f"the call into lkdtm_EXCEPTION and its fault, {len(path)} of the fault entry "
          f"path older than the ring's {LBR_DEPTH}",
          trail[max(0, (fault or ring0) - 2):ring0 + 1])
    ring = trail[ring0:]
    at = max((i for i, (_, t) in enumerate(ring) if t == "oops_begin"), default=None)
    tail = ring[at + 1:] if at is not None else []
    check(at is not None and len(tail) >= 2 and
          tail[0] == ("oops_begin", "bts_crash_oops_begin") and
          all(re.match(r"(bts_crash_|ds_)", n) for f, t in tail[1:] for n in (f, t)),
          f"EXCEPTION: the ring ends in the freeze first thing in oops_begin() "
          f"({len(tail)} entries from its call to the hook)", ring[-6:])


def panic_ring_text(tool, vmcore, obj):
    """The panicking CPU's ring as (from, to) pairs of unrelocated addresses
    (System.map's), oldest first, and System.map as name -> every address
    it has: the kernel's %pS names an alias where System.map has several
    names at one address (__x86_indirect_thunk_array / _rax), and a static
    function's name can stand at several addresses, so reports are
    compared by address and the KASLR slide is taken from a name that
    stands at one address only.  Third, that slide (None: not found)."""
    smap = {}
    with open(os.path.join(obj, "System.map")) as f:
        for line in f:
            a, _, name = line.split()[:3]
            smap.setdefault(name, set()).add(int(a, 16))
    rc, o, e = btsdump(tool, "-j", "-n", "0", vmcore, os.path.join(obj, "System.map"))
    try:
        cpu = [c for c in __import__("json").loads(o)["cpus"] if c["panic"]][0]
    except (ValueError, KeyError, IndexError):
        return [], smap, None
    slide = None
    for b in cpu["branches"]:
        name, _, off = (b.get("to_symbol") or "?").partition("+")
        if len(smap.get(name, ())) == 1:
            slide = int(b["to"], 16) - (next(iter(smap[name])) + int(off or "0", 16))
            break
    if slide is None:
        return [], smap, None
    return [(int(b["from"], 16) - slide, int(b["to"], 16) - slide)
            for b in cpu["branches"]], smap, slide


def report_matches(printed, ring):
    """Each printed (from-candidates, to-candidates) holds the ring entry's
    addresses, in the same order."""
    return len(printed) <= len(ring) and all(
        f in pf and t in pt for (pf, pt), (f, t) in zip(printed, ring[len(ring) - len(printed):]))


def report_lines(console):
    """The crashed kernel's last LBR report on the console: (the count its
    header announced, its record lines oldest first, the other lines
    found among them).  Another CPU's printk can land between two of
    the report's lines (each record is a printk of its own, and until
    the crash kernel stops them the other CPUs run): such lines are set
    aside, and the records are those indexed count down to 1, each once.
    (None, [], []): no report."""
    # the crashed kernel's last report (not init.sh's first oops), before
    # the capture kernel boots; the serial console ends lines with \r\n
    console = console.replace("\r", "").rsplit("\nLinux version", 1)[0]
    lines = console.split("\n")
    head = [i for i, line in enumerate(lines) if re.match(
        r"bts_crash: last \d+ kernel branches on CPU \d+ \(LBR\), oldest first:$", line)]
    if not head:
        return None, [], []
    count = int(re.match(r"bts_crash: last (\d+)", lines[head[-1]]).group(1))
    records, other = [], []
    for line in lines[head[-1] + 1:]:
        m = re.match(r" \[ *(\d+)\] ", line)
        if m and int(m.group(1)) == count - len(records):
            records.append(line)
            if len(records) == count:
                break
        elif line.strip():
            other.append(line)
    return count, records, other


def check_oops_report(kind, console, ring, smap):
    """The oops or panic report on the console prints the panicking CPU's
    newest ring entries, oldest first: the same addresses."""
    count, lines, other = report_lines(console)
    printed, unknown = [], []
    for line in lines:
        f = re.match(r" \[ *\d+\] (\S+)\+(0x[0-9a-f]+)/0x[0-9a-f]+ -> "
                     r"(\S+)\+(0x[0-9a-f]+)/", line)
        if f and f.group(1) in smap and f.group(3) in smap:
            printed.append(({a + int(f.group(2), 16) for a in smap[f.group(1)]},
                            {a + int(f.group(4), 16) for a in smap[f.group(3)]}))
        else:
            unknown.append(line)
    n = len(printed)
    check(count and not unknown and n == count and report_matches(printed, ring),
          f"{kind}: the {'panic' if kind == 'PANIC' else 'oops'} report printed the "
          f"panicking CPU's last {n} LBR branches",
          f"header: {count} records; found {len(lines)}\n"
          f"not a branch in System.map: {unknown[:3]}\n"
          f"other lines among them: {other[:3]}\n"
          f"printed {[(sorted(map(hex, a)), sorted(map(hex, b))) for a, b in printed[-3:]]}\n"
          f"ring {[tuple(map(hex, p)) for p in ring[-3:]]}")


def build_parts(bts_so, tool):
    """crash and bts.so (NINJA_TARGETS), the kernel (vm-lib.sh's KERNEL),
    the model for a hardware backend: a missing part fails, naming what
    brings it (never a skip).  Returns crash's version, the kernel's
    object directory and the environment for run-kdump.sh."""
    if os.environ.get("NINJA_TARGETS"):
        # crash 8.0.6 and its bts.so: built here, not by default (9 min CPU
        # cold).  VM tests run two at a time and ninja takes no lock of its
        # own on a build directory (.ninja_log, .ninja_deps): one at a time.
        root = os.environ["NINJA_ROOT"]
        with open(os.path.join(root, ".kdump-ninja.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            b = subprocess.run(["ninja", "-C", root,
                                *os.environ["NINJA_TARGETS"].split()],
                               capture_output=True, text=True)
        if b.returncode:
            print(b.stdout[-3000:] + b.stderr[-3000:])
            sys.exit(f"{os.environ['NINJA_TARGETS']} did not build (scripts/crash-build.sh)")
    # a missing part fails, naming what brings it (never a skip)
    if not shutil.which(CRASH):
        sys.exit(f"no crash at {CRASH}: " + ("apt-get install crash" if CRASH == "crash"
                                            else "scripts/crash-build.sh builds it"))
    if not os.path.exists(bts_so):
        sys.exit(f"{bts_so} is not built (ninja -C build {bts_so})")
    have = crash_version(CRASH)
    # vm-lib.sh's KERNEL chooses the kernel, as for every VM test
    build = subprocess.run(["sh", "-c", '. "$1/tests/vm/vm-lib.sh" && exec "$1/scripts/kernel-build.sh"',
                            "sh", SRC], capture_output=True, text=True)
    if build.returncode:
        print(build.stderr[-3000:])
        sys.exit("the kernel did not build")
    obj = build.stdout.strip().splitlines()[-1]
    if not readable(kernel_release(obj), have):
        sys.exit(f"{CRASH} is crash {have}: Linux {kernel_release(obj)} vmcores "
                 "need crash 8.0.6 (scripts/crash-build.sh; CRASH=build/crash-ext/crash)")
    # crash 8.0.6 (built without Debian's patches: no .dsc on the mirror)
    # stops in kmem_cache_init() on the 6.12 test kernel ("invalid structure
    # member offset: kmem_cache_s_num"); bts needs no slab caches
    if kernel_release(obj) >= (6, 9):
        CRASH_OPTS.append("--no_kmem_cache")
    print(f"# crash {'.'.join(map(str, have or ()))} ({CRASH} {' '.join(CRASH_OPTS)}), {bts_so}")
    env = dict(os.environ, BTSDUMP=os.path.abspath(tool))
    if os.environ.get("BTSCRASH_BACKEND") in ("hw", "lbr-kernel"):
        qb = subprocess.run([os.path.join(SRC, "scripts/qemu-build.sh")],
                            capture_output=True, text=True)
        if qb.returncode:
            print(qb.stderr[-3000:])
            sys.exit("the BTS/LBR model (QEMU) did not build")
        env["QEMU"] = qb.stdout.strip().splitlines()[-1]
    return have, obj, env


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: kdump-test.py BTS_SO BTSDUMP OUTDIR LKDTM_TYPE|notraces")
    bts_so, tool, out, kind = sys.argv[1:]
    have, obj, env = build_parts(bts_so, tool)
    hw = os.environ.get("BTSCRASH_BACKEND") == "hw"
    lbr = os.environ.get("BTSCRASH_BACKEND") == "lbr-kernel"
    vmlinux = os.path.join(obj, "vmlinux")
    lkdtm = "EXCEPTION" if kind == "notraces" else kind
    extra = ["bts_crash.cpu_records=0"] if kind == "notraces" else []
    if env.get("BTSCRASH_BACKEND") == "hw":
        # the BTS hardware backend is off under PTI (docs/kernel.md), and
        # Linux turns PTI on for the model's Meltdown-affected Skylake-SP;
        # vm-hw-pti checks that fallback, these check the hardware rings
        extra.append("pti=off")
    shutil.rmtree(out, ignore_errors=True)
    run = subprocess.run([os.path.join(SRC, "tests/vm/run-kdump.sh"), obj, out, lkdtm,
                          *extra], capture_output=True, text=True, env=env)
    if not check(run.returncode == 0, f"{kind}: panic, capture kernel, vmcore saved",
                 run.stderr):
        return 1
    vmcore = os.path.join(out, "vmcore")
    with CrashSession(vmlinux, vmcore, bts_so) as session:
        return check_vmcore(session, kind, out, tool, obj, bts_so, have, hw, lbr)


class Dump:
    """One saved vmcore and what its checks share: the crash SESSION
    (CrashSession), the test's KIND, OUT, btsdump TOOL, kernel object
    directory OBJ, BTS_SO, crash's version HAVE, the backend (HW, LBR);
    whether its trail is short (short); then what the panic trail's
    checks found (fn, cpus) and the rings crash read (ring_crash)."""

    def __init__(self, session, kind, out, tool, obj, bts_so, have, hw, lbr):
        self.session, self.kind, self.out, self.tool, self.obj = session, kind, out, tool, obj
        self.bts_so, self.have, self.hw, self.lbr = bts_so, have, hw, lbr
        self.vmlinux, self.vmcore = session.vmlinux, session.vmcore
        self.console = open(os.path.join(out, "console.log"), errors="replace").read()
        self.pid = open(os.path.join(out, "traced.pid")).read().strip()
        # an EXCEPTION's 16 LbrExtV2 entries are its fault entry path's
        # (trail_function())
        self.short = lbr and LBR_DEPTH < 32 and kind == "EXCEPTION"
        self.fn, self.cpus, self.ring_crash = None, [], {}


def check_vmcore(session, kind, out, tool, obj, bts_so, have, hw, lbr):
    """The checks of the saved vmcore: every one that reads it with this
    crash, vmlinux and bts.so in SESSION (CrashSession: one crash)."""
    d = Dump(session, kind, out, tool, obj, bts_so, have, hw, lbr)
    # the whole ring: EXEC_NULL prints a line before it jumps, and printing
    # to the serial console is ~300 function entries
    rc, text = session.run("bts -n 0", "bt")
    if kind == "notraces":
        check_notraces(d, rc, text)
        return tap.done()
    check_panic_trail(d, text)
    check_task_ring(d)
    check_notes(d)
    check_rings(d)
    check_readers(d)
    if kind == "EXCEPTION":
        check_makedumpfile(d)
    check_capture_report(d)
    check_bad_input(d)
    return tap.done()


def check_notraces(d, rc, text):
    """Per-CPU rings off, per-task rings on: VMCOREINFO still says where
    a task's ring is (task_struct.bts_crash), no table."""
    check("per-CPU rings were off" in text,
          "notraces: bts says the per-CPU rings were off", text)
    check(rc == 0, "notraces: crash exits normally", text)
    info = vmcoreinfo_text(d.vmcore)
    check("BTS_CRASH=1" in info and "OFFSET(task_struct.bts_crash)=" in info and
          "BTS_CRASH_TABLE_PA" not in info,
          "notraces: VMCOREINFO has BTS_CRASH=1 and the task offset, no table",
          "\n".join(l for l in info.splitlines() if "BTS" in l or "bts" in l))
    rc, text = d.session.run(f"bts -t {d.pid} -n 8")
    check(re.search(r"PID %s \(crasher\) user branches: \d+ of \d+" % d.pid, text),
          "notraces: bts -t finds the traced process's ring", text)
    rc, o, e = btsdump(d.tool, d.vmcore)
    check(rc == 3 and "per-CPU rings were off" in e, "notraces: btsdump says so, exit 3",
          f"exit {rc}: {e}")


def trail_function(d, panic_block):
    """The function the panicking CPU's trail must reach: the LKDTM one,
    but on LbrExtV2 an EXCEPTION's 16 entries are the fault entry path's
    (SRSO's return thunks: three entries a return) and reach back to the
    page-fault handler's call into page_fault_oops; the model's log shows
    the fault in lkdtm_EXCEPTION before them (check_fault_trail()).  And
    a PANIC's 16 can start inside panic(): an interrupt taken there
    before panic() masks them (its first statements) spends them on its
    entry and exit (SRSO's return thunks, a softirq run), its iret back
    into panic() the oldest of the crash path, lkdtm_PANIC's call before
    it pushed out (seen on zen5 under a loaded host; the ring is the
    model's pushes all the same: check_lbr_oracle()).  The iret's target
    can be panic() itself, printed without an offset: the interrupt taken
    at its first instruction (a CI run's kdump-lbr-zen5-PANIC).  Since
    6.12.118 panic()'s body is vpanic(): an iret into it is the same case."""
    fn = "page_fault_oops" if d.short else LKDTM_FN[d.kind]
    if d.lbr and d.kind == "PANIC" and \
            re.search(r"^ +\d+ +iret .*-> 0x[0-9a-f]{16} v?panic(\+0x[0-9a-f]+)? ", panic_block,
                      re.M) and \
            not re.search(r"-> 0x[0-9a-f]{16} lkdtm_PANIC\b", panic_block):
        fn = "panic"
    return fn


def check_panic_trail(d, text):
    """crash> bts: every online CPU's ring, the panicking CPU's marked and
    reaching the crash's function, ending where the crash path froze it;
    no WARNING on either kernel's console."""
    kind = d.kind
    cpus = re.findall(r"^CPU (\d+)( \(panic CPU\))?: (\d+) of (\d+) records", text, re.M)
    panic_block = text.split("(panic CPU)", 1)[-1].split("\nCPU ", 1)[0]
    d.cpus, d.fn = cpus, trail_function(d, panic_block)
    check(any(p for _, p, _, _ in cpus), f"{kind}: the panicking CPU is marked", text)
    check(cpus and all(int(n) > 0 for _, _, n, _ in cpus),
          f"{kind}: every CPU with a ring has records ({len(cpus)} CPUs)", text)
    amd = os.environ.get("VM_LBR_CPU")
    if d.lbr and amd in checklbr.AMD_CPUS:
        boot = re.search(r"smpboot: CPU0: .*", d.console)
        check(boot and checklbr.AMD_CPUS[amd] in boot.group(0),
              f"{kind}: Linux booted the model as {amd} ({checklbr.AMD_CPUS[amd]})",
              boot.group(0) if boot else "no smpboot line")
    warns = kernel_warnings(d.console)
    check(not warns, f"{kind}: neither kernel printed a WARNING", "\n".join(warns[:5]))
    up = re.search(r"smp: Brought up \d+ nodes?, (\d+) CPUs?", d.console)
    check(up and int(up.group(1)) == len(cpus) >= 2,
          f"{kind}: every online CPU has a ring ({up.group(1) if up else '?'} online, "
          f"{len(cpus)} rings)", up.group(0) if up else "no 'Brought up' line")
    check(re.search(r"-> 0x[0-9a-f]{16} %s\b" % d.fn, panic_block) is not None,
          f"{kind}: the panicking CPU's trail reaches {d.fn}", panic_block)
    names = re.findall(r"-> 0x[0-9a-f]{16} (\S+)", panic_block)
    check(trail_ends(names, d.hw or d.lbr),
          f"{kind}: the trail ends where the crash path froze it ({names[-1:]})",
          panic_block[-1500:])


def trail_ends(names, hardware):
    """Whether the trail's functions NAMES end where the crash path froze
    it: emulation, the last function entered; HARDWARE, the last branch
    before the CPU stopped, inside the freeze (ds.c, bts_crash.c)."""
    # vpanic: panic()'s body since 6.12.118 (panic() only calls it), where
    # the freeze is
    crash_fns = ("oops_begin", "panic", "vpanic", "__crash_kexec")
    last = names[-1:]
    if last and (last[0] in crash_fns or hardware and
                 re.match(r"(ds_|bts_crash_|wrmsrl$|native_(read|write)_msr$)", last[0])):
        return True
    if hardware or not any(n in crash_fns for n in names):
        return False
    # emulation: an interrupt can come between the crash function's ftrace
    # entry and its first statement (the freeze; IRQs are still on): then
    # that interrupt's entries follow it, and nothing else (a softirq run
    # on the interrupt's exit can be long: seen 81)
    i = max(j for j, n in enumerate(names) if n in crash_fns)
    tail = names[i + 1:]
    return any(re.match(r"(__)?sysvec_|irq(entry)?_enter|common_interrupt|asm_", n)
               for n in tail[:4]) and not any(
        re.match(r"_?printk|vprintk|console_|bust_spinlocks|__crash_kexec|"
                 r"crash_kexec|kmsg_dump|smp_send_stop|panic", n) for n in tail)


def check_task_ring(d):
    """crash> bts -t: the traced process's user branches; and on an
    EXCEPTION dump, this bts.so in another crash release, and by name."""
    kind = d.kind
    rc, text = d.session.run(f"bts -t {d.pid} -n 8")
    check(re.search(r"PID %s \(crasher\) user branches: \d+ of \d+" % d.pid, text) and
          re.search(r"\] 00000000004[0-9a-f]{5} \(crasher\) +-> 00000000004[0-9a-f]{5} "
                    r"\(crasher\)", text),
          f"{kind}: bts -t shows the traced process's user branches in its executable",
          text)
    check_ring_id(d.session, d.pid, kind)
    if kind != "EXCEPTION":
        return
    system = shutil.which("crash")
    if system and crash_version(system) not in (d.have, None) \
            and readable(kernel_release(d.obj), crash_version(system)):
        # this bts.so in a crash of another release: refused (its defs.h
        # structures would be misread), not loaded.  Only where that crash
        # reads the kernel's vmcores: Debian 12's 8.0.2 on a 6.12 vmcore
        # dies before its prompt, now and then of heap corruption
        rc, text = crash(d.vmlinux, d.vmcore, d.bts_so, "bts -n 4", prog=system)
        want = "bts.so was built for crash %s, this is crash %s" % (
            ".".join(map(str, d.have)), ".".join(map(str, crash_version(system))))
        check(want in text and "no commands registered" in text and "(panic CPU)" not in text,
              f"{kind}: this bts.so refuses the system's crash (another release)", text)
    if d.hw or d.lbr:
        return
    if os.geteuid() != 0 or not os.path.isdir("/usr/lib/crash/extensions"):
        tap.skip("extend bts.so by name: needs root and /usr/lib/crash/extensions "
                 "(Debian's crash)")
        return
    rc, named = crash_by_name(d.vmlinux, d.vmcore, d.bts_so, "bts -n 4")
    check(rc == 0 and "/usr/lib/crash/extensions/bts.so: shared object loaded" in named
          and "(panic CPU): 4 of" in named,
          "`extend bts.so` without a path loads the module from crash's extension "
          "directory (where btscrash-crash installs it)", named)


def check_notes(d):
    """Each CPU's vmcore note is the tail of its full ring (raw words)."""
    rc, text = d.session.run("bts -r -n 32")
    raw = per_cpu(text)
    notes, bad = {}, []
    for t, n, data in kdump_notes(d.vmcore):
        if n != "BTSCRASH" or t != 0x42540002:
            continue
        try:            # check-vm's reader: nr_gaps against the GAP markers too
            notes[struct.unpack_from("<Q", data, 16)[0]] = checklbr.cv.trace_records(data)
        except ValueError as e:
            bad.append(str(e))
    check(not bad, f"{d.kind}: each CPU's vmcore note reads whole, its nr_gaps "
          "at least its GAP markers", bad)
    check(notes and set(notes) == set(raw) and
          all(recs and recs == raw[c][-len(recs):] for c, recs in notes.items()),
          f"{d.kind}: each CPU's vmcore note ({len(notes)} CPUs) equals the newest "
          "records of its ring",
          "\n".join(f"CPU {c}: note {notes[c][-2:]} ring {raw.get(c, [])[-2:]}"
                    for c in notes))


def check_rings(d):
    """The rings crash reads against the model's logs (BTS, LBR), and on
    LBR the oops reports' trails."""
    kind = d.kind
    rc, text = d.session.run("bts -r -n 0")
    d.ring_crash = per_cpu(text)
    if d.hw:
        check_oracle(kind, d.out, d.ring_crash)
    if not d.lbr:
        return
    panic_cpu = [int(c) for c, p, _, _ in d.cpus if p]
    log = check_lbr_oracle(kind, d.out, d.ring_crash, panic_cpu[0] if panic_cpu else None)
    ring, smap, slide = panic_ring_text(d.tool, d.vmcore, d.obj)
    check_oops_report(kind, d.console, ring, smap)
    if d.short:
        check_fault_trail(log, smap, slide or 0)
    if kind == "EXCEPTION":
        # init.sh's first oops (BUG, not fatal): its report shows its
        # own trail, and LBR recorded again after it (the panic's
        # ring reaches lkdtm_EXCEPTION, checked above)
        first = d.console.replace("\r", "").split("lkdtm: Performing direct entry BUG", 1)[-1]
        first = first.split("lkdtm: Performing direct entry", 1)[0]
        check(re.search(r"kernel branches on CPU \d+ \(LBR\)", first) and
              re.search(r"^ \[ *\d+\] lkdtm_BUG\+0x[0-9a-f]+/0x[0-9a-f]+ -> "
                        r"asm_exc_invalid_op\+0x0/", first, re.M),
              f"{kind}: a first, non-fatal oops (BUG) printed its own LBR trail, "
              "from the trap in lkdtm_BUG", first[-1500:])


def check_readers(d):
    """btsdump, without vmlinux, reads the same rings as crash's
    extension, and prints them in the same lines: crash decodes with its
    vmlinux as btsdump vmcore does with it (lib/decode.c, report.c in
    both); with System.map the same records; --json reaches the function."""
    kind, tool, vmcore, ring_crash = d.kind, d.tool, d.vmcore, d.ring_crash
    rc, o, e = btsdump(tool, "-r", "-n", "0", vmcore)
    ring_tool = per_cpu(o)
    check(rc == 0 and ring_tool and ring_tool == ring_crash,
          f"{kind}: btsdump vmcore (no vmlinux) reads the same records as crash> bts "
          f"({sum(len(r) for r in ring_tool.values())} on {len(ring_tool)} CPUs)",
          f"exit {rc}: {e}\n{o[-800:]}")
    rc, text = d.session.run("bts -n 0")
    d.session.close()                     # its last command: the other dumps' crash next
    rc2, o, e = btsdump(tool, "-n", "0", vmcore, d.vmlinux)
    lines = lambda t: [l for l in t.splitlines() if re.match(r"CPU \d|\s+\d+  \S", l)]
    diff = [(a, b) for a, b in zip(lines(text), lines(o)) if a != b]
    check(rc2 == 0 and lines(o) and len(lines(o)) == len(lines(text)) and not diff,
          f"{kind}: crash> bts and btsdump vmcore (vmlinux) print the same "
          f"{len(lines(o))} decoded lines",
          f"exit {rc2}: {e}\n{len(lines(text))} vs {len(lines(o))} lines; first "
          f"differences: {diff[:4]}")
    # without vmlinux, the same records in ringtext.c's lines (System.map)
    smap = os.path.join(d.obj, "System.map")
    rc2, o, e = btsdump(tool, "-n", "0", vmcore, smap)
    nums = lambda ls: [re.match(r"(CPU \d+)|\s*\[?\s*(\d+)", l).group(1, 2) for l in ls]
    check(rc2 == 0 and nums(lines(text)) ==
          nums(l for l in o.splitlines() if re.match(r"CPU \d|  \[", l)),
          f"{kind}: btsdump vmcore with System.map numbers the same records",
          f"exit {rc2}: {e}\n{o[:400]}")
    check_decoded(kind, tool, vmcore, d.vmlinux, ring_crash, d.fn, d.hw or d.lbr)
    rc, o, e = btsdump(tool, "-j", "-n", "0", vmcore, smap)
    try:
        cpus = __import__("json").loads(o)["cpus"]
        panic = [c for c in cpus if c["panic"]][0]
        ok = rc == 0 and any(goes_into(b.get("to_symbol"), d.fn) for b in panic["branches"])
    except (ValueError, KeyError, IndexError) as ex:
        ok, panic = False, repr(ex)
    check(ok, f"{kind}: btsdump --json with System.map: the panic CPU reaches {d.fn}",
          f"exit {rc}: {e}\n{str(panic)[:800]}")


def check_makedumpfile(d):
    """The same dump refiltered by makedumpfile with lzo pages (-l;
    Debian's makedumpfile has no snappy or zstd: those are
    test-vmcore.py's), and flattened (-F, as a capture kernel sends it
    through a pipe): btsdump reads the same rings."""
    lzo = os.path.join(d.out, "vmcore.lzo")
    flat = os.path.join(d.out, "vmcore.flat")
    with open(flat, "wb") as f:
        made = [("makedumpfile -l (lzo pages)", lzo,
                 subprocess.run(["makedumpfile", "-l", "-d", "31", d.vmcore, lzo],
                                capture_output=True, text=True)),
                ("makedumpfile -F -l (flattened)", flat,
                 subprocess.run(["makedumpfile", "-F", "-l", "-d", "31", d.vmcore],
                                stdout=f, stderr=subprocess.PIPE, text=True))]
    for what, path, mk in made:
        rc, o, e = btsdump(d.tool, "-r", "-n", "0", path)
        check(mk.returncode == 0 and rc == 0 and per_cpu(o) == d.ring_crash,
              f"{d.kind}: {what}: btsdump vmcore reads the same rings",
              f"makedumpfile {mk.returncode}: {mk.stderr[-300:]}\nexit {rc}: {e}\n{o[-400:]}")


def check_capture_report(d):
    """The capture kernel's own report: btsdump on /proc/vmcore (ELF form)."""
    rep = d.console.split("BTSCRASH-REPORT-BEGIN", 1)[-1].split("BTSCRASH-REPORT-END", 1)
    in_vm = per_cpu(rep[0])
    check(len(rep) == 2 and "(ELF)" in rep[0] and "rc=0" in rep[1][:10] and
          in_vm and set(in_vm) == set(d.ring_crash) and
          all(len(r) == min(64, len(d.ring_crash[c])) and r == d.ring_crash[c][-64:]
              for c, r in in_vm.items()),
          f"{d.kind}: in the capture kernel, btsdump read /proc/vmcore (ELF): "
          "the same newest 64 records", rep[0][-1500:])


def check_bad_input(d):
    """Bad input: a corrupted ring index, then a truncated dump."""
    bad = os.path.join(d.out, "vmcore.bad-index")
    data = bytearray(open(d.vmcore, "rb").read())
    hits = [m.start() for m in re.finditer(re.escape(struct.pack("<IHHI", 0x52535442, 1, 72, 24)), data)]
    for h in hits:
        cap = struct.unpack_from("<Q", data, h + 24)[0]
        if cap == (LBR_DEPTH if d.lbr else 4096):
            struct.pack_into("<Q", data, h + 32, 1 << 40)
    open(bad, "wb").write(data)
    rc, text = crash(d.vmlinux, bad, d.bts_so, "bts", "bts -n 1 -c 0")
    check(hits and "corrupt ring" in text and "index 1099511627776" in text and rc == 0,
          "bad index: a clear error, crash goes on", text)
    rc, o, e = btsdump(d.tool, "-r", "-n", "0", bad)
    shown = per_cpu(o)
    check(rc == 4 and "corrupt ring" in e and "crash note" in o and
          set(shown) == set(d.ring_crash) and
          all(len(r) == min(32, len(d.ring_crash[c])) and r == d.ring_crash[c][-32:]
              for c, r in shown.items()),
          "bad index: btsdump says so and falls back to the CPU's crash note (exit 4)",
          f"exit {rc}: {e}\n{o[-600:]}")
    trunc = os.path.join(d.out, "vmcore.truncated")
    with open(d.vmcore, "rb") as f, open(trunc, "wb") as g:
        g.write(f.read(os.path.getsize(d.vmcore) * 2 // 5))
    rc, text = crash(d.vmlinux, trunc, d.bts_so, "bts")
    # crash 8.0.2 itself gives up on a kdump file cut short (exit 1, before
    # any extension runs); what matters here is that nothing dies of a signal
    check(rc >= 0 and "Segmentation" not in text,
          "truncated dump: crash refuses it or bts reports it, nothing crashes",
          f"exit {rc}\n{text[-1500:]}")
    rc, o, e = btsdump(d.tool, trunc)
    check(rc in (0, 2, 3, 4) and (rc == 0 or e.strip()),
          "truncated dump: btsdump reads what is there or says what is missing",
          f"exit {rc}: {e}")

if __name__ == "__main__":
    sys.exit(main())
