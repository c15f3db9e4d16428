#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks what the systemd VM (tests/vm/run-systemd-vm.sh) collected, as TAP:
btscrash's .debs installed with dpkg -i put 50-btsdumpd.conf in
/usr/lib/sysctl.d; on Debian's stock kernel, without systemd-coredump and
with no administrator's step, systemd-sysctl applied btsdumpd's
core_pattern, the socket listened before
it, a SIGSEGV of uid 1000 became exactly one entry through a
btsdumpd@.service instance (the socket hand-off, not direct mode), with the
right metadata (stock kernel: TRACE=absent, core stored), one structured
journal entry, an ACL letting uid 1000 read it and uid 1001 not; the
harvest unit made a kernel entry of the synthetic vmcore; a plain gdb has
the bts commands; no unit failed.  In both modes, root's crash of a
program in a mode-0700 directory is an entry root alone can read (a user's
is readable by that user), and the fleet: the VM's
systemd-journal-upload.service shipped its journal to journal-remote on
this machine, where the packaged btsdumpctl -D lists the VM's crash with
its host, the fields byte for byte, the core left on the VM.

In companion mode (the VM booted with `run-systemd-vm.sh OUTDIR companion`):
the patched kernel on the BTS model, every program traced from boot by
the shipped 60-btscrash-trace.conf; systemd-coredump stays the handler and
stores the core, btsdumpd.service (enabled by the package) reports on it,
linked by COREDUMP_PID and COREDUMP_TIMESTAMP to systemd-coredump's journal
entry, with the crash's last branches symbolized: in its entry, in a plain
gdb on systemd-coredump's core, and on the central host.

In lbr mode (lean): Debian's stock kernel on the PMU model, no
systemd-coredump, no administrator's step: the stock-kernel LBR collector
armed, the crash's stored core carries its last branches (source lbr) in
report, journal entry, btsdumpctl info and gdb; purging btscrash-daemon
hands core_pattern back to "core" and stops the collector, and dpkg -i
under the running systemd takes core_pattern again at once, arms the
collector, and the next crash has its note (or, when the journal says
it met perf's LBR reset at a switch-in, the one after it).  In companion-lbr mode
(lean): the same kernel and model beside systemd-coredump, no
administrator's step: its 50-coredump.conf wins, btsdumpd.service reports
on its core with the collector's snapshot (source lbr) in its entry and
journal entry, and keeps the note for systemd-coredump's core: gdb with
the package's gdbinit on that core, and `coredumpctl debug`, show the
crash's last branches.

Usage: check-systemd-vm.py [--run [MODE]] OUTDIR
With --run, boots the VM first (run-systemd-vm.sh, its output on stderr).
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402

MESSAGE_ID = "6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"
# the one line of systemd/50-btsdumpd.conf that sets it
PATTERN = next(line.split("=", 1)[1] for line in open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "systemd", "50-btsdumpd.conf"))
    if line.startswith("kernel.core_pattern=")).strip()


def read(out, name, default=""):
    try:
        with open(os.path.join(out, name), errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_report(out, name):
    """A btsdumpd report copied from the VM (name without .zst), decompressed
    as btsdumpd stores it: NAME.zst; "" when there is none."""
    r = subprocess.run(["zstd", "-dc", os.path.join(out, name + ".zst")], capture_output=True)
    return r.stdout.decode(errors="replace") if r.returncode == 0 else ""


def store_list(out):
    """The entries of the store copied from the VM (OUT/store), sorted."""
    store = os.path.join(out, "store")
    return sorted(os.listdir(store)) if os.path.isdir(store) else []


def store_entry(out, suffix):
    """The store's entries ending in SUFFIX, and the meta of the one such
    entry ({} unless there is exactly one)."""
    ents = [e for e in store_list(out) if e.endswith(suffix)]
    return ents, parse_meta(read(out, f"store/{ents[0]}/meta")) if len(ents) == 1 else {}


def parse_hashes(text):
    """{path: sha256} from "HASH PATH" lines (btscrash-sd-test.sh's patches.txt)."""
    return dict(reversed(line.split(" ", 1)) for line in text.splitlines()
                if re.match(r"[0-9a-f]{64} \S", line))


def exported_series(version, name):
    """{NAME/file: sha256 without Date: lines} of scripts/kernel-patches.sh's
    series for VERSION, exported from this tree as debian/rules does."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(src, "scripts", "kernel-patches.sh"), tmp],
                       env={**os.environ, "KERNEL": version}, check=True,
                       stdout=subprocess.DEVNULL)
        hashes = {}
        for f in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, f), "rb") as fh:
                body = b"".join(ln for ln in fh if not ln.startswith(b"Date: "))
            hashes[f"{name}/{f}"] = hashlib.sha256(body).hexdigest()
        return hashes


def parse_meta(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def json_lines(out, name):
    """The entries of a `journalctl -o json` file; bad lines skipped."""
    entries = []
    for line in read(out, name).splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            pass
    return entries


def check_ended(t, out, journal):
    """No unit failed, none of btsdumpd's in the journal; a clean poweroff.
    On the PMU model (lbr, companion-lbr) a btsdumpd@ instance may start
    later than the handler's 10 s: the handler then stores the crash itself
    (once: the hand-off test of tests/test-btsdumpd.py), said, not failed."""
    failed = read(out, "failed.txt", None)
    t.check(failed is not None and not failed.strip(), "systemctl --failed: none",
            failed or "(not collected)")
    slow = read(out, "mode").strip() in ("lbr", "companion-lbr")
    bad = [ln for ln in journal.splitlines() if re.search(
        r"btsdumpd.*(failed|Failed)|Failed to .*btsdumpd", ln) and not (
        slow and re.search(r"hand-off to \S+ failed: Connection timed out; collecting here", ln))]
    for ln in journal.splitlines():
        if slow and "hand-off" in ln and "timed out" in ln:
            print(f"# the PMU model: {ln.strip()}")
    t.check(not bad, "no systemd failure about btsdumpd's units in the journal",
            "\n".join(bad))
    console = read(out, "console.log")
    t.check("reboot: Power down" in console, "the VM powered off cleanly",
            "\n".join(console.splitlines()[-15:]))
    return t.done()


def journal_time(journal, pattern):
    """Monotonic time of the first journal line matching pattern."""
    for line in journal.splitlines():
        m = re.match(r"\[\s*([0-9.]+)\]", line)
        if m and re.search(pattern, line):
            return float(m.group(1))
    return None


def check_kernel(t, out):
    """The VM ran a kernel of the version run-systemd-vm.sh chose (KERNEL)."""
    want = read(out, "kernel.txt").split(" ", 1)[0]
    uname = read(out, "uname.txt").split()
    release = uname[2] if len(uname) > 2 else ""
    t.check(want and release.startswith(want + "."),
            f"the VM ran Linux {want or '(KERNEL unknown)'}: uname -r {release or '(none)'}",
            read(out, "kernel.txt") + read(out, "uname.txt"))


def check_packages(t, out):
    """What dpkg -i did, and a plain gdb's bts (both modes)."""
    status = read(out, "dpkg-status.txt")
    pkgs = {"btscrash-tools", "btscrash-daemon", "btscrash-gdb", "btscrash-crash",
            "btscrash-kernel-patches"}
    t.check(all(re.search(r"^%s \S+ install ok installed$" % p, status, re.M) for p in pkgs),
            "dpkg -i installed the five packages (their dependencies in the root)",
            status + read(out, "dpkg.log")[-1500:])
    after = read(out, "sysctl-d-after-dpkg.txt")
    etc, _, lib = after.partition("/usr/lib/sysctl.d:")
    t.check("50-btsdumpd.conf" in lib.split() and "btsdumpd" not in etc,
            "installing btscrash-daemon put 50-btsdumpd.conf in /usr/lib/sysctl.d "
            "(nothing in /etc/sysctl.d)", after)
    t.check("bts.so" in read(out, "crash-ext.txt"),
            "crash's extension directory has bts.so", read(out, "crash-ext.txt"))
    installed = parse_hashes(read(out, "patches.txt"))
    want = {**exported_series("6.1", "btscrash-patches"),
            **exported_series("6.12", "btscrash-patches-6.12")}
    t.check(installed == want and len(want) > 40,
            "btscrash-kernel-patches installed both kernel series, 6.1 in "
            "/usr/src/btscrash-patches and 6.12 in /usr/src/btscrash-patches-6.12, each "
            "file kernel-patches.sh's export of the tree (Date: aside)",
            "\n".join(f"{k}: VM {installed.get(k)}, tree {want.get(k)}"
                       for k in sorted(set(installed) | set(want))
                       if installed.get(k) != want.get(k)))
    gdb = read(out, "gdb-bts.txt")
    mode = read(out, "mode").strip()
    if mode == "lbr":
        t.check("exit 0" in read(out, "dump.txt") and "Undefined command" not in gdb and
                re.search(r"<parse_request\+\d+> *=> 0x[0-9a-f]+ <dispatch>", gdb),
                "a plain gdb on the stored core has bts (gdbinit.d): the collector's note, "
                "the crash's last branches through parse_request into dispatch",
                read(out, "dump.txt") + gdb)
    elif mode == "companion-lbr":
        # the collector's note is in btsdumpd's entry, found by the core's
        # SHA-256 (COREDUMP_SHA256) by the package's bts.py
        entry = os.path.basename(read(out, "entry-path").strip()) or "?"
        kept = f"kept by btsdumpd's companion in its entry {entry} (LBR collector)"
        chain = r"<parse_request\+\d+> *=> 0x[0-9a-f]+ <dispatch>"
        t.check("exit 0" in read(out, "dump.txt") and "Undefined command" not in gdb and
                kept in gdb and re.search(chain, gdb),
                "a plain gdb on systemd-coredump's core (coredumpctl dump) has bts "
                "(gdbinit.d): the collector's note from btsdumpd's entry, the crash's last "
                "branches through parse_request into dispatch", read(out, "dump.txt") + gdb)
        debug = read(out, "coredumpctl-debug.txt")
        t.check("exit 0" in debug and "Undefined command" not in debug and
                kept in debug and re.search(chain, debug),
                "coredumpctl debug crasher: the gdb it starts shows the same last branches",
                debug)
    elif mode == "companion":
        # the patched kernel: the call chain into NULL, symbolized
        t.check("exit 0" in read(out, "dump.txt") and "Undefined command" not in gdb and
                re.search(r"dispatch\+\d+", gdb) and re.search(r"parse_request\+\d+", gdb),
                "a plain gdb on systemd-coredump's core has bts (gdbinit.d): the crash's "
                "last branches, through parse_request and dispatch", read(out, "dump.txt") + gdb)
        debug = read(out, "coredumpctl-debug.txt")
        t.check("exit 0" in debug and "Undefined command" not in debug and
                re.search(r"dispatch\+\d+", debug) and re.search(r"parse_request\+\d+", debug),
                "coredumpctl debug crasher: the gdb it starts has bts too, the same "
                "last branches", debug)
    else:
        t.check("exit 0" in read(out, "dump.txt") and
                "bts: this core has no branch trace" in gdb and "Undefined command" not in gdb,
                "a plain gdb on the stored core has bts (gdbinit.d); the stock kernel's core "
                "has no trace, and bts says so", read(out, "dump.txt") + gdb)



def reads(out, name):
    """{file: cat's exit status} from a read-*.txt list the guest wrote."""
    return dict(line.split() for line in read(out, name).splitlines()
                if len(line.split()) == 2)


def check_rootcrash(t, out, companion):
    """Both modes, issue 30's trace-permission rule: root's crash of
    /opt/private/rootcrash (the directory 0700) is stored, root reads it,
    no other user reads any of it (not even its listing); on the patched
    kernel its trail keeps its symbols.  In companion mode also the user's
    side: uid 1000 reads its own entry's files, uid 1001 none."""
    t.check(read(out, "rootcrash-status").strip() == "139",
            "root's crasher in a 0700 directory died of SIGSEGV with a core",
            read(out, "rootcrash-status"))
    ents, meta = store_entry(out, ".rootcrash")
    want = {"UID": "0", "EXE": "/opt/private/rootcrash", "SIGNAL_NAME": "SIGSEGV",
            "TRACE": "present" if companion else "absent", "ACL": "root",
            "CORE": "none" if companion else "stored"}
    bad = {k: (meta.get(k), v) for k, v in want.items() if meta.get(k) != v}
    t.check(len(ents) == 1 and not bad, "root's crash: one entry, UID=0, ACL=root",
            "\n".join(ents) + "\n" +
            "\n".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in bad.items()))
    acl = read(out, "acl.txt")
    m = re.search(r"# file: \S+\.rootcrash\n((?:.+\n)+?)\n", acl + "\n")
    t.check(m is not None and m.group(1) == "# owner: root\n# group: root\nuser::rwx\n"
            "group::r-x\nother::---\n",
            "root's entry directory: root:root 0750, no ACL entry for a user",
            m.group(0) if m else acl)
    files = [f for f in ("report.txt.zst", "report.json.zst", "meta", "core.zst")
             if f != "core.zst" or not companion]
    r0 = reads(out, "rootcrash-read-0.txt")
    t.check(all(r0.get(f) == "0" for f in files) and
            "exit 0" in read(out, "rootcrash-info.txt"),
            "root reads its entry (%s) and btsdumpctl info rootcrash" % ", ".join(files),
            read(out, "rootcrash-read-0.txt") + read(out, "rootcrash-info.txt"))
    for uid in (1000, 1001):
        r = reads(out, f"rootcrash-read-{uid}.txt")
        ctl = read(out, f"rootcrash-btsdumpctl-{uid}.txt")
        t.check(len(r) == 5 and all(v != "0" for v in r.values()) and
                "exit 0" not in ctl and "dispatch" not in ctl and "/opt/private" not in ctl,
                f"uid {uid} reads nothing of root's entry: no file, no listing, "
                "not through btsdumpctl", read(out, f"rootcrash-read-{uid}.txt") + ctl)
    if companion:
        info = read(out, "rootcrash-info.txt")
        t.check(re.search(r"dispatch\+0x[0-9a-f]+", info) and
                re.search(r"parse_request\+0x[0-9a-f]+", info),
                "root's trail keeps its symbols (the program in a 0700 directory)", info)
        r1000, r1001 = reads(out, "read-1000.txt"), reads(out, "read-1001.txt")
        t.check(all(r1000.get(f) == "0" for f in ("report.txt.zst", "report.json.zst",
                                                  "meta", "dir")) and
                r1001 and all(v != "0" for v in r1001.values()),
                "the user's entry: uid 1000 reads its files, uid 1001 none",
                read(out, "read-1000.txt") + read(out, "read-1001.txt"))


def check_fleet(t, out):
    """Both modes: the VM's stock systemd-journal-upload.service shipped its
    journal over the VM's NIC to journal-remote on the central host (this
    machine), where the packaged btsdumpctl -D reads the VM's crashes."""
    t.check("ActiveState=active" in read(out, "upload-unit") and
            int(read(out, "upload-wait-s", "999").strip() or 999) < 120,
            "systemd-journal-upload.service in the VM uploaded past btsdumpd's entries",
            read(out, "net.txt") + read(out, "upload-unit") + read(out, "upload-journal.txt") +
            read(out, "journal-remote.log"))
    local = {(j.get("BTSDUMPD_KIND"), j.get("BTSDUMPD_PID")): j
             for j in json_lines(out, "journal-btsdumpd.json") if j.get("MESSAGE_ID") == MESSAGE_ID}
    central = {(j.get("BTSDUMPD_KIND"), j.get("BTSDUMPD_PID")): j
               for j in json_lines(out, "central-journal.json")}
    fields = lambda j: {k: v for k, v in j.items() if k == "MESSAGE" or
                        k.startswith(("BTSDUMPD_", "COREDUMP_"))}
    t.check(local and local.keys() == central.keys() and
            all(fields(local[k]) == fields(central[k]) for k in local),
            "the central journal holds the VM's btsdumpd entries, fields byte for byte",
            f"VM: {sorted(local, key=str)}\ncentral: {sorted(central, key=str)}\n" +
            read(out, "journal-remote.log"))
    rows = read(out, "central-list.txt").splitlines()
    crash = [r for r in rows[1:] if "crasher" in r]
    t.check("exit 0" in rows and "HOST" in rows[0] and len(crash) == 1 and
            "btscrash-sd" in crash[0] and " missing " not in crash[0],
            "on the central host, btsdumpctl -D lists the VM's crash with its host",
            read(out, "central-list.txt"))
    try:
        js = json.loads(read(out, "central-list.json"))
    except ValueError:
        js = []
    kern = [e for e in js if e.get("KIND") == "kernel"]
    t.check(any(e.get("COMM") == "crasher" and e.get("HOSTNAME") == "btscrash-sd" for e in js) and
            (kern == [] or kern[0].get("TRACE") == "present"),
            "btsdumpctl -D --json list: the crash (and the harvested vmcore's entry)",
            read(out, "central-list.json") + read(out, "central-list.err"))
    info = read(out, "central-info.txt")
    stored = read(out, "mode").strip() != "companion"	# else the core is systemd-coredump's
    t.check("exit 0" in info and "btscrash-sd" in info and "SIGSEGV" in info and
            "(null)" not in info and "Disk Usage" not in info and
            (not stored or re.search(r"Storage: btscrash-sd:/var/lib/btsdumpd/\S+\.crasher/"
                                     r"core\.zst \(remote\)", info)),
            "btsdumpctl -D info crasher on the central host: the core stays on the VM", info)
    if not stored:
        t.check(re.search(r"parse_request\+0x[0-9a-f]+ +-> 0x[0-9a-f]+ dispatch", info) and
                re.search(r"call\* +0x[0-9a-f]+ dispatch\+0x[0-9a-f]+ +-> 0x0+ \?\?", info),
                "on the central host, the VM's crash with its last branches (the call "
                "into dispatch, its call through NULL), symbolized on the VM, through "
                "journal-upload/remote", info)


def check_lbr_armed(t, out, phase, what):
    """The stock-kernel LBR collector (btsdumpd-lbr.service) armed on the
    PMU model before the crashes (tests/vm/systemd: lbr-PHASE.txt)."""
    lbr = read(out, f"lbr-{phase}.txt")
    t.check("ActiveState=active" in lbr and re.search(r"^armed$", lbr, re.M),
            f"{what}: btsdumpd-lbr.service running, the collector armed", lbr)


def check_lbr_report(t, report, what):
    """A report whose faulting thread has the collector's note: the LBR's
    32 entries (the PMU model's depth), the call chain into NULL."""
    t.check(re.search(r"trace: lbr, \d+ records in a ring of 32", report) and
            re.search(r"parse_request\+0x[0-9a-f]+ +-> 0x[0-9a-f]+ dispatch", report),
            f"{what}: report.txt has the collector's note (trace: lbr, ring of 32), "
            "the call from parse_request into dispatch", report)


def check_reinstall(t, out):
    """lbr: purging btscrash-daemon gives core_pattern back to the kernel's
    default and stops the collector; dpkg -i under the running systemd
    takes it again at once (the postinst), arms the collector, and the
    next crash (crasher2) is stored with its note."""
    t.check("exit 0" in read(out, "purge.txt") and
            read(out, "core_pattern-purged").strip() == "core" and
            "active" not in read(out, "units-purged").split(),
            "dpkg --purge btscrash-daemon: core_pattern back to \"core\", its units stopped",
            read(out, "purge.txt") + read(out, "core_pattern-purged") +
            read(out, "units-purged"))
    t.check("exit 0" in read(out, "reinstall.txt") and
            read(out, "core_pattern-reinstalled").strip() == PATTERN,
            "dpkg -i btscrash-daemon under the running systemd: core_pattern btsdumpd's at "
            "once (postinst), no reboot", read(out, "reinstall.txt") +
            read(out, "core_pattern-reinstalled"))
    check_lbr_armed(t, out, "reinstall", "after dpkg -i")
    meta = parse_meta(read(out, "store2/meta"))
    store, what = "store2", "the next crash"
    if meta.get("TRACE") != "present" and perf_reset(out, read(out, "store2/id").strip()):
        store, what = "store3", "the next crash (crasher2 met perf's reset, crasher3)"
        meta = parse_meta(read(out, "store3/meta"))
    status = read(out, f"crasher{store[-1]}-status")
    t.check(status.strip() == "139" and meta.get("TRACE") == "present" and
            meta.get("CORE") == "stored", f"{what}: stored with a trace", status + str(meta))
    check_lbr_report(t, read_report(out, f"{store}/report.txt"), what)


def perf_reset(out, entry):
    """Entry ENTRY was stored without the collector's note because perf
    reset the LBR at a switch-in after the thread's last branch (a crash
    preempted in its fault; docs/btsdumpd.md): its handler said so, and
    that the snapshot held no user entry.  Said as a TAP comment."""
    journal = json_lines(out, "journal-btsdumpd.json")
    warn = [j for j in journal if entry and j.get("MESSAGE") ==
            f"{entry}: no LBR note: the LBR held no branch of the crashing thread"]
    info = [j for j in journal if warn and j.get("_PID") == warn[0].get("_PID") and
            re.search(r"^LBR snapshot of thread \d+ on CPU \d+: \d+ slots, perf's read "
                      r"kept \d+, 0 user entries", j.get("MESSAGE", ""))]
    if info:
        print(f"# {entry}: {info[0]['MESSAGE']}: perf's reset, one crash more", flush=True)
    return bool(info)


def check_lbr(t, out, journal):
    """lbr mode: the packages alone on the PMU model, btsdumpd the handler,
    the collector's note in the stored core; purge and dpkg -i again."""
    check_lbr_armed(t, out, "boot", "the packages alone, no systemd-coredump")
    t.check(read(out, "core_pattern").strip() == PATTERN,
            "kernel.core_pattern is btsdumpd's (no administrator's step)",
            read(out, "core_pattern"))
    procs, meta = store_entry(out, ".crasher")
    t.check(read(out, "crasher-status").strip() == "139" and meta.get("CORE") == "stored" and
            meta.get("TRACE") == "present" and meta.get("UID") == "1000",
            "the crash of uid 1000: one entry, its core stored with a trace",
            read(out, "crasher-status") + "\n".join(procs) + str(meta))
    check_lbr_report(t, read_report(out, f"store/{procs[0]}/report.txt") if procs else "",
                     "the crash")
    mine = [j for j in json_lines(out, "journal-btsdumpd.json")
            if j.get("MESSAGE_ID") == MESSAGE_ID and j.get("BTSDUMPD_COMM") == "crasher"]
    last = mine[0].get("BTSDUMPD_LAST_BRANCHES", "") if len(mine) == 1 else ""
    t.check(re.search(r"parse_request\+0x[0-9a-f]+ +-> 0x[0-9a-f]+ dispatch", last) and
            mine[0].get("BTSDUMPD_TRACE") == "present",
            "its journal entry carries the last branches",
            "\n".join(json.dumps(j)[:1500] for j in mine))
    t.check(re.search(r"parse_request\+0x[0-9a-f]+ +-> 0x[0-9a-f]+ dispatch",
                      read(out, "info.txt")),
            "btsdumpctl info crasher shows them", read(out, "info.txt"))
    check_reinstall(t, out)
    return check_ended(t, out, journal)


def check_companion(t, out, journal):
    """Companion mode: the patched kernel, every program traced;
    systemd-coredump the handler, btsdumpd beside it.  companion-lbr
    (lean): the stock kernel, the LBR collector's snapshot instead."""
    lean = read(out, "mode").strip() == "companion-lbr"
    if lean:
        check_lbr_armed(t, out, "boot", "the packages alone, beside systemd-coredump")
    else:
        t.check("ds: BTS hardware backend on" in read(out, "dmesg-bts.txt") and
                read(out, "task-records").strip() == "4096",
                "the patched kernel runs the BTS hardware backend on the model, and "
                "systemd-sysctl applied 60-btscrash-trace.conf (every program traced)",
                read(out, "uname.txt") + read(out, "dmesg-bts.txt") + read(out, "task-records"))
    t.check(read(out, "core_pattern").startswith("|/lib/systemd/systemd-coredump"),
            "kernel.core_pattern stays systemd-coredump's", read(out, "core_pattern"))
    t.check("ActiveState=active" in read(out, "companion-unit") and
            "SubState=running" in read(out, "companion-unit"),
            "btsdumpd.service (enabled by the package) is running",
            read(out, "companion-unit") + read(out, "status.txt"))
    cds = json_lines(out, "journal-coredump.json")
    cd = [j for j in cds if j.get("COREDUMP_COMM") == "crasher"]
    t.check(len(cd) == 1 and cd[0].get("COREDUMP_FILENAME", "").endswith(".zst"),
            "systemd-coredump logged the crash and stored the core (zstd)",
            "\n".join(json.dumps(j)[:600] for j in cds) + read(out, "coredump-ls.txt"))
    cd = cd[0] if cd else {}
    entries = store_list(out)
    procs, meta = store_entry(out, ".crasher")
    want = {"KIND": "process", "UID": "1000", "GID": "1000", "SIGNAL": "11",
            "SIGNAL_NAME": "SIGSEGV", "CORE": "none", "TRACE": "present",
            "EXE": "/usr/local/bin/crasher", "COMM": "crasher",
            "PID": cd.get("COREDUMP_PID"), "COREDUMP_FILENAME": cd.get("COREDUMP_FILENAME"),
            "COREDUMP_TIMESTAMP": cd.get("COREDUMP_TIMESTAMP")}
    bad = {k: (meta.get(k), v) for k, v in want.items() if meta.get(k) != v}
    t.check(len(procs) == 1 and not bad, "one btsdumpd entry for the crash, from "
            "systemd-coredump's entry: its PID, uid, signal, core file; the core not "
            "stored again", "\n".join(entries) + "\n" +
            "\n".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in bad.items()))
    mine = [j for j in json_lines(out, "journal-btsdumpd.json")
            if j.get("MESSAGE_ID") == MESSAGE_ID and j.get("BTSDUMPD_COMM") == "crasher"]
    t.check(len(mine) == 1 and mine[0].get("COREDUMP_PID") == cd.get("COREDUMP_PID") and
            mine[0].get("COREDUMP_TIMESTAMP") == cd.get("COREDUMP_TIMESTAMP") and
            mine[0].get("_SYSTEMD_UNIT") == "btsdumpd.service" and
            mine[0].get("BTSDUMPD_TRACE") == "present",
            "btsdumpd.service's journal entry, linked by COREDUMP_PID and "
            "COREDUMP_TIMESTAMP to systemd-coredump's",
            "\n".join(json.dumps(j)[:800] for j in mine))
    # the patched kernel's trail has the call through NULL from
    # dispatch+0x..; the LBR's ends with the call into dispatch (perf's
    # filter drops a branch to 0)
    into = (r"parse_request\+0x[0-9a-f]+ +-> 0x[0-9a-f]+ dispatch" if lean
            else r"dispatch\+0x[0-9a-f]+")
    last = mine[0].get("BTSDUMPD_LAST_BRANCHES", "") if mine else ""
    t.check(re.search(into, last) and
            re.search(r"parse_request\+0x[0-9a-f]+", last) and
            mine[0].get("BTSDUMPD_FAULT", "").startswith("faulted at 0x0") and
            "0xffff" not in last,
            "the entry's last branches: the call chain into %s, symbolized, user "
            "addresses only, and the fault" % ("dispatch" if lean else "NULL"),
            "\n".join(json.dumps(j)[:1500] for j in mine))
    info = read(out, "info.txt")
    t.check(re.search(into, info) is not None,
            "btsdumpctl info crasher in the VM shows the trail", info)
    if mine and cd.get("__REALTIME_TIMESTAMP"):
        # for bench/README.md: the coredump entry to the trace entry, under TCG
        lat = int(mine[0]["__REALTIME_TIMESTAMP"]) - int(cd["__REALTIME_TIMESTAMP"])
        print(f"# companion: coredump entry to trace entry {lat / 1000:.0f} ms (TCG)")
    if lean:
        check_lbr_report(t, read_report(out, f"store/{procs[0]}/report.txt")
                         if procs else "", "btsdumpd's entry")
        return check_ended(t, out, journal)
    check_rootcrash(t, out, True)
    check_fleet(t, out)
    t.check("exit 0" in read(out, "btsdumpctl-1000.txt"),
            "btsdumpctl info crasher: uid 1000 sees the report", read(out, "btsdumpctl-1000.txt"))
    return check_ended(t, out, journal)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--run"]:
        if len(args) not in (2, 3):
            sys.exit(__doc__)
        run = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run-systemd-vm.sh")
        r = subprocess.run([run, args[-1], *args[1:-1]], stdout=sys.stderr)
        if r.returncode:
            print("not ok 1 - the systemd VM booted and ran the test (run-systemd-vm.sh "
                  f"exit {r.returncode}; console: {args[-1]}/console.log)")
            print("1..1")
            return 1
        args = args[-1:]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    t = Tap()
    journal = read(out, "journal.txt")
    check_kernel(t, out)
    check_packages(t, out)
    mode = read(out, "mode").strip()
    if mode in ("companion", "companion-lbr"):
        return check_companion(t, out, journal)
    if mode == "lbr":
        return check_lbr(t, out, journal)

    # --- boot-time setup by systemd ---
    t.check(read(out, "core_pattern").strip() == PATTERN,
            "kernel.core_pattern is btsdumpd's (no administrator's step)",
            read(out, "core_pattern"))
    t.check(read(out, "core_pipe_limit").strip() == "0", "kernel.core_pipe_limit=0",
            read(out, "core_pipe_limit"))
    sysctl = read(out, "sysctl-unit")
    t.check("ActiveState=active" in sysctl and "Result=success" in sysctl,
            "systemd-sysctl.service applied the sysctl.d files",
            sysctl + read(out, "sysctl-journal.txt"))
    listen = journal_time(journal, r"Listening on btsdumpd\.socket")
    sysctl_start = journal_time(journal, r"Starting systemd-sysctl\.service")
    t.check(listen is not None and sysctl_start is not None and listen < sysctl_start,
            "btsdumpd.socket listened before systemd-sysctl set the core_pattern",
            f"listening at {listen}, systemd-sysctl started at {sysctl_start}")
    t.check(read(out, "socket-active").strip() == "active", "btsdumpd.socket active",
            read(out, "socket-active") + read(out, "status.txt"))
    t.check(re.search(r"^srw-------\s.*\sroot\s+root\s.*btsdumpd\.socket$",
                      read(out, "socket-ls.txt"), re.M) is not None,
            "/run/btsdumpd/btsdumpd.socket is root's, mode 0600", read(out, "socket-ls.txt"))
    t.check(re.search(r"^drwxr-xr-x\s.*\sroot\s+root\s", read(out, "store-before.txt"),
                      re.M) is not None,
            "the store /var/lib/btsdumpd exists, root 0755", read(out, "store-before.txt"))

    # --- the crash ---
    t.check(read(out, "crasher-status").strip() == "139",
            "the crasher died of SIGSEGV with a core (status 139)",
            read(out, "crasher-status"))
    store = os.path.join(out, "store")
    entries = sorted(os.listdir(store)) if os.path.isdir(store) else []
    procs = [e for e in entries if e.endswith(".crasher")]
    t.check(len(procs) == 1, "exactly one entry for the crash", "\n".join(entries))
    meta = parse_meta(read(out, f"store/{procs[0]}/meta")) if procs else {}
    want = {"VERSION": "1", "KIND": "process",
            "UID": "1000", "GID": "1000", "SIGNAL": "11", "SIGNAL_NAME": "SIGSEGV",
            "CORE": "stored", "CORE_FILE": "core.zst", "TRACE": "absent",
            "EXE": "/usr/local/bin/crasher", "COMM": "crasher",
            "CMDLINE": "/usr/local/bin/crasher null",
            "CGROUP": "/system.slice/btscrash-sd-test.service", "ACL": "set"}
    bad = {k: (meta.get(k), v) for k, v in want.items() if meta.get(k) != v}
    t.check(meta and not bad, "entry meta: uid 1000, SIGSEGV, core stored, TRACE=absent "
            "(stock kernel), exe, cgroup, ACL set",
            "\n".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in bad.items()))
    t.check("CORE_TRUNCATED" not in meta and int(meta.get("CORE_SIZE", "0")) > 0 and
            int(meta.get("CORE_STORED_SIZE", "0")) > 0,
            "the whole core was received and stored", str(meta))
    t.check("no branch trace" in read_report(out, f"store/{procs[0]}/report.txt")
            if procs else False, "report.txt says the core has no branch trace",
            read_report(out, f"store/{procs[0]}/report.txt") if procs else "")

    # --- its journal entry, from a btsdumpd@ instance ---
    jentries = json_lines(out, "journal-btsdumpd.json")
    crash = [j for j in jentries if j.get("MESSAGE_ID") == MESSAGE_ID and
             j.get("BTSDUMPD_COMM") == "crasher"]
    t.check(len(crash) == 1, "one journal entry with MESSAGE_ID for the crash",
            "\n".join(json.dumps(j) for j in jentries))
    j = crash[0] if crash else {}
    unit = j.get("_SYSTEMD_UNIT", "")
    # the instance's name (N-PID-UID) is the socket's Accept=yes naming; a
    # direct-mode handler runs outside any unit.  journald reads _CMDLINE
    # from /proc/PID and leaves it out when that read fails (seen once in
    # two runs on stock 6.12 on a loaded host, _EXE present): absent is no
    # evidence either way, a wrong one fails
    t.check(re.fullmatch(r"btsdumpd@[0-9]+-[0-9]+-[0-9]+\.service", unit) is not None and
            j.get("_CMDLINE", "/usr/libexec/btsdumpd --serve") ==
            "/usr/libexec/btsdumpd --serve",
            "handled by a socket-activated btsdumpd@.service instance (hand-off, not direct)",
            f"_SYSTEMD_UNIT={unit!r} _CMDLINE={j.get('_CMDLINE')!r}")
    # CapabilityBoundingSet=CAP_SETGID CAP_SETUID (bits 6, 7): the unit's
    # sandbox was applied, and btsdumpd needed nothing more
    t.check(j.get("_CAP_EFFECTIVE") == "c0",
            "the instance ran with CAP_SETUID|CAP_SETGID only (0xc0)",
            f"_CAP_EFFECTIVE={j.get('_CAP_EFFECTIVE')!r}")
    fields = {"BTSDUMPD_UID": "1000", "BTSDUMPD_SIGNAL_NAME": "SIGSEGV",
              "BTSDUMPD_TRACE": "absent", "BTSDUMPD_CORE": "stored",
              "BTSDUMPD_EXE": "/usr/local/bin/crasher", "PRIORITY": "2",
              "BTSDUMPD_ENTRY": f"/var/lib/btsdumpd/{procs[0] if procs else '?'}"}
    bad = {k: (j.get(k), v) for k, v in fields.items() if j.get(k) != v}
    t.check(j and not bad, "journal fields BTSDUMPD_*, PRIORITY=2",
            "\n".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in bad.items()))
    msg = f"Process {meta.get('PID')} (crasher) of user 1000 dumped core: SIGSEGV."
    t.check(j.get("MESSAGE") == msg, "journal MESSAGE", f"{j.get('MESSAGE')!r} != {msg!r}")
    errs = [x for x in jentries if int(x.get("PRIORITY", "6")) <= 4 and
            x.get("MESSAGE_ID") != MESSAGE_ID]
    t.check(not errs, "no btsdumpd warnings or errors in the journal",
            "\n".join(x.get("MESSAGE", "") for x in errs))

    # --- who can read it ---
    r1000, r1001 = reads(out, "read-1000.txt"), reads(out, "read-1001.txt")
    t.check(r1000 and all(v == "0" for v in r1000.values()),
            "uid 1000 reads its entry (report.txt.zst, report.json.zst, meta, core.zst)",
            read(out, "read-1000.txt"))
    t.check(r1001 and all(v != "0" for v in r1001.values()),
            "uid 1001 can read none of it", read(out, "read-1001.txt"))
    t.check("exit 0" in read(out, "btsdumpctl-1000.txt") and
            "exit 0" not in read(out, "btsdumpctl-1001.txt"),
            "btsdumpctl info: uid 1000 sees the entry, uid 1001 does not",
            read(out, "btsdumpctl-1000.txt") + read(out, "btsdumpctl-1001.txt"))
    acl = read(out, "acl.txt")
    t.check(re.search(r"# file: \S+\.crasher\n# owner: root\n# group: root\n"
                      r"user::rwx\nuser:1000:r-x\ngroup::---\nmask::r-x\nother::---", acl)
            is not None, "entry directory: root 0750 + user:1000:r-x", acl)

    # --- btsdumpctl as root ---
    info = {}
    try:
        info = json.loads(read(out, "info.json"))
    except ValueError:
        pass
    t.check(info.get("UID") == 1000 and info.get("TRACE") == "absent" and
            info.get("corefile") == "present",
            "btsdumpctl --json info crasher", read(out, "info.json") + read(out, "info.err"))
    t.check(len([ln for ln in read(out, "list.txt").splitlines()[1:-1] if ln.strip()]) == 3,
            "btsdumpctl list: the two crashes and the kernel entry", read(out, "list.txt"))

    # --- the harvest unit ---
    harvest = read(out, "harvest-unit")
    t.check("Result=success" in harvest and "ExecMainStatus=0" in harvest,
            "btsdumpd-harvest.service ran and succeeded", harvest + read(out, "status.txt"))
    kern = [e for e in entries if e.endswith(".kernel.vmcore")]
    kmeta = parse_meta(read(out, f"store/{kern[0]}/meta")) if len(kern) == 1 else {}
    t.check(kmeta.get("KIND") == "kernel" and kmeta.get("TRACE") == "present" and
            kmeta.get("VMCORE") == "/var/crash/202611230800/dump.202611230800",
            "harvest: one KIND=kernel entry for the vmcore, TRACE=present",
            "\n".join(entries) + "\n" + str(kmeta))
    t.check("CPU 0 (panic CPU): 8 of 8 records" in
            read_report(out, f"store/{kern[0]}/report.txt" if kern else "none"),
            "harvest report: CPU 0's ring", read_report(out, f"store/{kern[0]}/report.txt")
            if kern else "")
    t.check(any(x.get("_SYSTEMD_UNIT") == "btsdumpd-harvest.service" and
                x.get("MESSAGE_ID") == MESSAGE_ID and x.get("BTSDUMPD_KIND") == "kernel"
                for x in jentries),
            "harvest journal entry from btsdumpd-harvest.service",
            "\n".join(json.dumps(x) for x in jentries))

    check_rootcrash(t, out, False)
    check_fleet(t, out)
    # --- nothing failed ---
    return check_ended(t, out, journal)


if __name__ == "__main__":
    sys.exit(main())
