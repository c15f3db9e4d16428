#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests of btsdumpctl on synthetic stores built here (meta files
# per docs/btsdumpd.md, cores compressed with the zstd CLI from
# tests/fixtures/crasher-null.core): list/info/show/dump/gdb, --json shapes,
# matching, hostile and broken entries, exit codes.  Usage:
# test-btsdumpctl.py BTSDUMPCTL.  Exit 77 (skip) without the zstd CLI.
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from tap import Tap, skip_all  # noqa: E402

CTL = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(SRC, "tests", "fixtures")
CORE = os.path.join(FIX, "crasher-null.core")
EXE = os.path.join(FIX, "crasher")
GDB = shutil.which("gdb")
T = Tap()
check = T.check


def run(store, *args, env=None, stdout=subprocess.PIPE, ctl=None):
    e = dict(os.environ, BTSDUMPCTL_GDB_SCRIPT="", LC_ALL="C", TZ="UTC")
    e.update(env or {})
    e = {k: v for k, v in e.items() if v is not None}  # None: unset
    p = subprocess.run([ctl or CTL, "--store", store, *args], stdout=stdout,
                       stderr=subprocess.PIPE, env=e)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def esc(v):
    """Escapes a value as docs/btsdumpd.md "meta" says."""
    out = []
    for b in v.encode() if isinstance(v, str) else v:
        if b == 0x5c:
            out.append(b"\\\\")
        elif b == 0x0a:
            out.append(b"\\n")
        elif b == 0x09:
            out.append(b"\\t")
        elif b < 0x20 or b == 0x7f:
            out.append(b"\\x%02x" % b)
        else:
            out.append(bytes([b]))
    return b"".join(out)


def entry(store, eid, ts, pid, comm, extra=(), core=None, report=True, raw=b"",
          host="testhost"):
    d = os.path.join(store, eid)
    os.makedirs(d)
    meta = [("VERSION", "1"), ("KIND", "process"), ("ID", eid), ("PID", str(pid)),
            ("UID", "1000"), ("GID", "1000"), ("SIGNAL", "11"),
            ("SIGNAL_NAME", "SIGSEGV"), ("TIMESTAMP", str(ts)), ("COMM", comm),
            ("EXE", EXE), ("CMDLINE", comm + " null"), ("CGROUP", "/user.slice"),
            ("HOSTNAME", host), ("ACL", "set")] + list(extra)
    with open(os.path.join(d, "meta"), "wb") as f:
        for k, v in meta:
            f.write(k.encode() + b"=" + esc(v) + b"\n")
        f.write(raw)
    if core == "good":
        subprocess.run(["zstd", "-q", CORE, "-o", os.path.join(d, "core.zst")], check=True)
    elif core is not None:
        with open(os.path.join(d, "core.zst"), "wb") as f:
            f.write(core)
    if report:    # plain: an entry from before btsdumpd compressed them
        with open(os.path.join(d, "report.txt"), "w") as f:
            f.write("Thread %d (faulting): 2 branches\n  a -> b\n" % pid)
        with open(os.path.join(d, "report.json"), "w") as f:
            json.dump({"threads": [{"tid": pid}]}, f)
    if report in ("zst", "cut"):    # as btsdumpd writes them (cut: a frame cut short)
        for name in ("report.txt", "report.json"):
            z = subprocess.run(["zstd", "-q", "-c", os.path.join(d, name)], check=True,
                               stdout=subprocess.PIPE).stdout
            with open(os.path.join(d, name + ".zst"), "wb") as f:
                f.write(z[:-6] if report == "cut" else z)
            os.unlink(os.path.join(d, name))
    return d


STORED = [("CORE", "stored"), ("CORE_SIZE", str(os.path.getsize(CORE))),
          ("TRACE", "present"), ("TRACE_THREADS", "1"), ("FAULT_TID", "42"),
          ("LAST_BRANCHES", "main+0x10 -> call_null\ncall_null+0x8 -> 0x0"),
          ("FAULT", "faulted at 0x0 = target of #16 (indirect call in dispatch)")]


def build_store(root):
    s = os.path.join(root, "store")
    os.makedirs(s)
    good = subprocess.run(["zstd", "-q", "-c", CORE], stdout=subprocess.PIPE,
                          check=True).stdout
    entry(s, "1000.42.crasher", 1000, 42, "crasher", STORED + [("TRAIL", TRAIL_A)],
          core="good", report="zst")
    entry(s, "2000.43.crasher", 2000, 43, "crasher",
          [("CORE", "dropped"), ("CORE_REASON", "larger than ExternalSizeMax (2G)"),
           ("TRACE", "error"), ("TRACE_ERROR", "bad note at 0x40")], report=False)
    hostile = "evil\x1b]0;pwned\x07\x9b\x7f"
    entry(s, "3000.44.evil", 3000, 44, hostile,
          [("CORE", "stored"), ("EXE", "/opt/\x1b[2Jvictim\nline"),
           ("TRACE", "absent"), ("REPORT_CUT", "1"), ("FAULT_TID", "12x"),
           ("TRAIL", "\x1b[31mred\x1b[0m"),
           ("CORE_TRUNCATED", "7")],
          raw=b"no equals sign here\nid=overridden\nBAD KEY=x\nCOMM2=bad\\q escape\n"
              b"RAW=\x1b[31m raw control\nNUL=a\\x00b\n=emptykey\nLATIN=\xff\xfe\n"
              b"TRUNC=abc\\x4")
    other = STORED[:2] + [("EXE", "/usr/bin/other")]
    entry(s, "4000.45.corrupt", 4000, 45, "corrupt", other,
          core=b"\x28\xb5\x2f\xfd" + os.urandom(4000))
    entry(s, "4500.46.trunc", 4500, 46, "trunc", other, core=good[:len(good) // 2],
          report="cut")
    entry(s, "4600.47.empty", 4600, 47, "emptycore", other, core=b"")
    # never listed: over 1 MiB, being written, no meta, a FIFO meta, a link,
    # a stray file
    big = entry(s, "5000.48.big", 5000, 48, "big")
    with open(os.path.join(big, "meta"), "ab") as f:
        f.write(b"X=" + b"a" * (1 << 20) + b"\n")
    entry(s, ".#6000.49.writing", 6000, 49, "writing", STORED, core="good")
    os.makedirs(os.path.join(s, "7000.50.nometa"))
    os.makedirs(os.path.join(s, "7100.51.fifo"))
    os.mkfifo(os.path.join(s, "7100.51.fifo", "meta"))
    os.symlink("1000.42.crasher", os.path.join(s, "7200.52.link"))
    open(os.path.join(s, "stray"), "w").close()
    return s


TRAIL_A = "0123456789abcdef0123456789abcdef"
TRAIL_B = "fedcba9876543210fedcba9876543210"
LISTED = ["1000.42.crasher", "2000.43.crasher", "3000.44.evil", "4000.45.corrupt",
          "4500.46.trunc", "4600.47.empty"]


def no_controls(data, what):
    bad = [b for b in data if (b < 0x20 and b not in (0x0a,)) or b == 0x7f]
    check(not bad, "%s: raw control bytes %r in output" % (what, bytes(bad[:8])))
    check(b"\xc2\x9b" not in data and b"\x9b" not in data.replace(b"\\x9b", b""),
          "%s: raw C1 CSI in output" % what)


def test_list(s):
    rc, out, err = run(s, "list")
    check(rc == 0, "list: exit %d %s" % (rc, err))
    lines = out.decode().splitlines()
    check(lines and lines[0].split() == ["TIME", "PID", "UID", "GID", "SIG",
                                         "COREFILE", "TRACE", "TRAIL", "ID", "EXE"],
          "list header: %r" % lines[:1])
    check(len(lines) == 1 + len(LISTED), "list: %d lines, want %d:\n%s" %
          (len(lines), 1 + len(LISTED), out.decode(errors="replace")))
    pids = [l.split()[4] for l in lines[1:]]
    check(pids == ["42", "43", "44", "45", "46", "47"], "list order/pids: %r" % pids)
    check("Thu 1970-01-01 00:16:40 UTC" in lines[1], "list time: %r" % lines[1])
    cols = {l.split()[4]: l.split()[7:13] for l in lines[1:]}
    check(cols.get("42") == ["SIGSEGV", "present", "present", TRAIL_A[:12], "1000.42.crasher",
                             EXE], "list 42: %r" % cols.get("42"))
    check(cols.get("43", [])[3] == "-", "list 43: no trail signature, '-': %r" % cols.get("43"))
    check(cols.get("43", [])[1:3] == ["none", "error"], "list 43: %r" % cols.get("43"))
    check(cols.get("44", [])[1:3] == ["missing", "absent"], "list 44: %r" % cols.get("44"))
    no_controls(out, "list")
    rc, out, _ = run(s, "list", "crasher")
    check(rc == 0 and len(out.decode().splitlines()) == 3, "list crasher: %r" % out)
    rc, out, _ = run(s, "list", "other")  # the basename of EXE
    check(rc == 0 and len(out.decode().splitlines()) == 4, "list other: %r" % out)
    rc, out, err = run(s, "list", "nosuch")
    check(rc == 3 and "nosuch" in err, "list nosuch: exit %d %r" % (rc, err))


def test_json(s):
    rc, out, err = run(s, "--json", "list")
    check(rc == 0, "list --json: exit %d %s" % (rc, err))
    try:
        arr = json.loads(out)
    except ValueError as e:
        check(False, "list --json does not parse: %s\n%r" % (e, out))
        return
    check(isinstance(arr, list) and [o.get("id") for o in arr] == LISTED,
          "list --json ids: %r" % [o.get("id") for o in arr])
    a = arr[0]
    # typed (docs/btsdumpctl.md "JSON"): numbers, flags as booleans, the rest strings
    for k, v in (("schema", "btscrash-entry"), ("version", 2), ("VERSION", 1),
                 ("PID", 42), ("UID", 1000), ("GID", 1000), ("SIGNAL", 11),
                 ("TIMESTAMP", 1000), ("TRACE_THREADS", 1), ("FAULT_TID", 42),
                 ("CORE_SIZE", os.path.getsize(CORE)), ("KIND", "process"),
                 ("SIGNAL_NAME", "SIGSEGV"), ("corefile", "present"),
                 ("timestamp", 1000), ("LAST_BRANCHES", STORED[5][1]), ("EXE", EXE)):
        check(a.get(k) == v and type(a.get(k)) is type(v),
              "json %s = %r, want %r" % (k, a.get(k), v))
    check("REPORT_CUT" not in a, "json: a flag meta does not hold is absent")
    check(a.get("path") == os.path.join(s, "1000.42.crasher"), "json path %r" % a.get("path"))
    check(a.get("report") == os.path.join(s, "1000.42.crasher", "report.txt.zst"), "json report")
    check(arr[1].get("corefile") == "none" and arr[1].get("report") is None, "json 43")
    evil = arr[2]
    check(evil.get("COMM") == "evil\x1b]0;pwned\x07\x9b\x7f", "json escaped COMM: %r" % evil.get("COMM"))
    check(evil.get("id") == "3000.44.evil", "lower-case meta key overrode id")
    # a flag meta holds as "1" is true; a typed key that does not parse stays a string
    for k, v in (("REPORT_CUT", True), ("FAULT_TID", "12x"), ("CORE_TRUNCATED", "7")):
        check(evil.get(k) == v and type(evil.get(k)) is type(v),
              "json %s = %r, want %r" % (k, evil.get(k), v))
    # not UTF-8: the array of its bytes, so it round-trips (docs/json.md "Strings")
    check(evil.get("LATIN") == [0xff, 0xfe], "json invalid utf-8: %r" % evil.get("LATIN"))
    for k in ("COMM2", "RAW", "NUL", "BAD KEY", "TRUNC"):
        check(k not in evil, "malformed meta line %s was kept" % k)
    rc, out, _ = run(s, "--json", "info", "44")
    check(rc == 0 and json.loads(out).get("id") == "3000.44.evil", "info --json 44")
    rc, out, _ = run(s, "--json", "list", "nosuch")
    check(rc == 3 and json.loads(out) == [], "list --json nosuch: %d %r" % (rc, out))


def test_info(s):
    rc, out, err = run(s, "info", "1000.42.crasher")
    t = out.decode()
    check(rc == 0, "info: exit %d %s" % (rc, err))
    for want in ("PID: 42 (crasher)", "Signal: 11 (SIGSEGV)", "UID: 1000",
                 "Command Line: crasher null", "Executable: " + EXE,
                 "Control Group: /user.slice", "Hostname: testhost",
                 "Storage: %s/1000.42.crasher/core.zst (present)" % s,
                 "Trace: present (1 thread)", "Fault Thread: 42",
                 "main+0x10 -> call_null\n", "call_null+0x8 -> 0x0\n",
                 "Report: %s/1000.42.crasher/report.txt.zst" % s,
                 "Timestamp: Thu 1970-01-01 00:16:40 UTC"):
        check(want in t, "info lacks %r:\n%s" % (want, t))
    rc, out, _ = run(s, "info", "43")
    t = out.decode()
    check(rc == 0 and "Storage: dropped: larger than ExternalSizeMax (2G)" in t and
          "Trace: error: bad note at 0x40" in t and "Report: none" in t, "info 43:\n" + t)
    rc, out, _ = run(s, "info", "crasher")
    check(rc == 0 and b"PID: 43 (crasher)" in out, "info crasher: most recent match")
    rc, out, _ = run(s, "info")
    check(rc == 0 and b"PID: 47 " in out, "info: most recent entry")
    rc, out, _ = run(s, "info", "44")
    no_controls(out, "info hostile")
    check(b"\\x1b]0;pwned\\x07" in out and b"/opt/\\x1b[2Jvictim\\x0aline\n" in out,
          "info hostile escapes: %r" % out)
    check(b"(missing)" in out, "info 44 missing core")
    rc, out, err = run(s, "info", "999")
    check(rc == 3 and "999" in err, "info unknown pid: %d %r" % (rc, err))


def test_show(s):
    rc, out, _ = run(s, "show", "42")
    check(rc == 0 and out.startswith(b"Thread 42 (faulting)"), "show: %d %r" % (rc, out))
    rc, out, _ = run(s, "--json", "show", "42")
    check(rc == 0 and json.loads(out) == {"threads": [{"tid": 42}]}, "show --json")
    rc, out, err = run(s, "show", "43")
    check(rc == 2 and "report.txt" in err, "show without report: %d %r" % (rc, err))
    rc, out, _ = run(s, "show", "45")
    check(rc == 0 and out.startswith(b"Thread 45 (faulting)"),
          "show: an older entry's plain report.txt: %d %r" % (rc, out))
    rc, out, err = run(s, "show", "46")
    check(rc == 2 and "reading report" in err, "show: a report.txt.zst cut short is an "
          "error: %d %r" % (rc, err))


def test_dump(s, tmp):
    with open(CORE, "rb") as f:
        want = f.read()
    out_path = os.path.join(tmp, "out.core")
    rc, _, err = run(s, "dump", "crasher", "-o", out_path)  # newest: 43, dropped
    check(rc == 2 and "not stored" in err and "ExternalSizeMax" in err,
          "dump dropped: %d %r" % (rc, err))
    check(not os.path.exists(out_path), "dump dropped left an output file")
    rc, _, err = run(s, "dump", "1000.42.crasher", "-o", out_path)
    check(rc == 0, "dump -o: exit %d %s" % (rc, err))
    with open(out_path, "rb") as f:
        check(f.read() == want, "dump -o: content differs")
    rc, out, err = run(s, "dump", "42")
    check(rc == 0 and out == want, "dump to a pipe: %d %s" % (rc, err))
    for m, what in (("44", "missing"), ("45", "corrupt"), ("46", "corrupt"), ("47", "corrupt")):
        rc, _, err = run(s, "dump", m, "-o", out_path)
        check(rc == 2 and what in err, "dump %s: %d %r" % (m, rc, err))
        check(not os.path.exists(out_path), "dump %s left a partial output" % m)
    master, slave = pty.openpty()
    try:
        rc, _, err = run(s, "dump", "42", stdout=slave)
    finally:
        os.close(slave)
        os.close(master)
    check(rc == 1 and "terminal" in err, "dump to a tty: %d %r" % (rc, err))


def test_gdb(s, tmp):
    if not GDB:
        # a full run (scripts/test.sh) leaves nothing out silently
        if os.environ.get("BTSCRASH_COMPLETE"):
            check(False, "gdb tests need gdb: apt-get install gdb")
        else:
            T.skip("gdb tests (no gdb)")
        return
    td = os.path.join(tmp, "gdbtmp")
    os.makedirs(td)
    script = os.path.join(tmp, "bts.py")
    with open(script, "w") as f:
        f.write('print("BTS-SCRIPT-LOADED")\n')
    env = {"TMPDIR": td, "BTSDUMPCTL_GDB_SCRIPT": script}
    rc, out, err = run(s, "gdb", "42", "--", "-batch", "-ex", "info threads", "-ex", "bt",
                       env=env)
    t = out.decode(errors="replace") + err
    check(rc == 0, "gdb: exit %d %s" % (rc, t))
    check("SIGSEGV" in t and "LWP" in t, "gdb output lacks SIGSEGV/LWP:\n" + t)
    check("BTS-SCRIPT-LOADED" in t, "gdb script not sourced:\n" + t)
    check(os.listdir(td) == [], "gdb left temp files: %r" % os.listdir(td))
    # the real gdb/bts.py: `bts target` serves the stored (zstd) core to
    # gdb's own record commands through `btsdump gdbserver`
    real = dict(env, BTSDUMPCTL_GDB_SCRIPT=os.path.join(SRC, "gdb", "bts.py"),
                BTSDUMP=os.path.join(os.path.dirname(CTL), "btsdump"))
    rc, out, err = run(s, "gdb", "42", "--", "-batch", "-ex", "bts target",
                       "-ex", "info record", "-ex", "record function-call-history /c", "-ex", "reverse-stepi",
                       "-ex", "bt", env=real)
    t = out.decode(errors="replace") + err
    check(rc == 0 and "Recorded 139 instructions in 6 functions" in t and
          re.search(r"6\t      dispatch", t) and "#3 " in t and
          os.listdir(td) == [], "gdb: bts target on the stored core:\n" + t)
    # --replay: `bts replay` once the core is loaded, the values recovered
    rc, out, err = run(s, "gdb", "42", "--replay", "--", "-batch", "-ex", "reverse-stepi",
                       "-ex", "p h", env=real)
    t = out.decode(errors="replace") + err
    check(rc == 0 and "in dispatch (kind=15)" in t and "(handler_fn) 0x0" in t and
          os.listdir(td) == [], "gdb --replay: bts replay on the stored core:\n" + t)
    rc, _, err = run(s, "list", "--replay")
    check(rc == 1 and "--replay is for gdb" in err, "--replay with list: a usage "
          "error: %d %r" % (rc, err))
    rc, _, err = run(s, "gdb", "43", "--", "-batch", env=env)
    check(rc == 2 and "not stored" in err, "gdb without core: %d %r" % (rc, err))
    rc, _, err = run(s, "gdb", "45", "--", "-batch", env=env)
    check(rc == 2 and os.listdir(td) == [], "gdb corrupt core: %d %r" % (rc, err))
    rc, _, err = run(s, "gdb", "42", "--", "-batch", env=dict(env, PATH="/nonexistent"))
    check(rc == 6 and "gdb" in err and os.listdir(td) == [], "no gdb: %d %r" % (rc, err))
    # no BTSDUMPCTL_GDB_SCRIPT: from the build tree, the source tree's gdb/bts.py
    rc, out, err = run(s, "gdb", "42", "--", "-batch", "-ex", "help bts",
                       env={"TMPDIR": td, "BTSDUMPCTL_GDB_SCRIPT": None})
    t = out.decode(errors="replace") + err
    check(rc == 0 and "Undefined command" not in t and "bts list" in t and "not found" not in err,
          "btsdumpctl gdb from the build tree sources gdb/bts.py: %d %s" % (rc, t[-400:]))
    # ... and its bts commands find the btsdump beside btsdumpctl, with
    # neither $BTSDUMP nor a btsdump in PATH
    rc, out, err = run(s, "gdb", "42", "--", "-batch", "-ex", "bts list 1",
                       env={"TMPDIR": td, "BTSDUMPCTL_GDB_SCRIPT": None, "BTSDUMP": None,
                            "PATH": os.path.dirname(GDB)})
    t = out.decode(errors="replace") + err
    check(rc == 0 and "dispatch+51" in t and "not found" not in t,
          "btsdumpctl gdb from the build tree finds the btsdump beside it: %d %s"
          % (rc, t[-400:]))
    # a btsdumpctl outside any build tree or prefix: says it runs gdb without it
    lone = os.path.join(tmp, "lone", "bin")
    os.makedirs(lone)
    shutil.copy(CTL, lone)
    rc, out, err = run(s, "gdb", "42", "--", "-batch", "-ex", "help bts",
                       env={"TMPDIR": td, "BTSDUMPCTL_GDB_SCRIPT": None},
                       ctl=os.path.join(lone, "btsdumpctl"))
    check("gdb/bts.py not found" in err and "without the bts commands" in err,
          "btsdumpctl gdb without bts.py says so: %d %r" % (rc, err))


def listed_ids(out):
    return [l.split()[11] for l in out.decode().splitlines()[1:]]


def test_coredumpctl_options(s, tmp):
    """The options coredumpctl users know (issue 30 §4): -r, -n N, -1,
    --since/--until, --no-legend, --json=short|pretty, -F FIELD; info's
    FAULT; a store none of whose entries the user can read."""
    rc, out, _ = run(s, "-r")
    check(rc == 0 and listed_ids(out) == LISTED[::-1], "-r: newest first: %r" % listed_ids(out))
    rc, out, _ = run(s, "-n", "2")
    check(rc == 0 and listed_ids(out) == LISTED[-2:], "-n 2: the newest two: %r" % out)
    rc, out, _ = run(s, "-1", "list", "crasher")
    check(rc == 0 and listed_ids(out) == ["2000.43.crasher"], "-1 list crasher: %r" % out)
    rc, out, _ = run(s, "--since", "@2000", "--until", "@4000")
    check(rc == 0 and listed_ids(out) == LISTED[1:4], "--since @2000 --until @4000: %r" % out)
    rc, out, _ = run(s, "--since", "1970-01-01 01:00", "--until", "1970-01-01 01:17")
    check(rc == 0 and listed_ids(out) == LISTED[3:], "--since/--until as dates (UTC): %r" % out)
    rc, out, err = run(s, "--since", "now")
    check(rc == 3 and not out, "--since now: nothing, exit 3: %d %r" % (rc, err))
    rc, _, err = run(s, "--since", "tomorrowish")
    check(rc == 1 and "--since: not a time: 'tomorrowish'" in err, "--since garbage: %r" % err)
    rc, out, _ = run(s, "--no-legend", "-n", "1")
    check(rc == 0 and out.decode().split()[11] == "4600.47.empty" and b"TIME" not in out,
          "--no-legend: no heading: %r" % out)
    rc, out, _ = run(s, "-F", "COMM", "list", "crasher")
    check(rc == 0 and out == b"crasher\ncrasher\n", "-F COMM: %r" % out)
    rc, out, _ = run(s, "-F", "BTSDUMPD_ID", "-r", "-n", "2")
    check(rc == 0 and out == b"4600.47.empty\n4500.46.trunc\n", "-F BTSDUMPD_ID -r -n 2: %r" % out)
    rc, out, _ = run(s, "--json=pretty", "info", "42")
    check(rc == 0 and out.count(b"\n") > 5 and json.loads(out)["id"] == "1000.42.crasher",
          "--json=pretty: indented, the same document")
    rc, out, _ = run(s, "--json=short", "-n", "1")
    check(rc == 0 and out.count(b"\n") == 1 and [o["id"] for o in json.loads(out)] == LISTED[-1:],
          "--json=short -n 1: %r" % out[:200])
    rc, _, err = run(s, "--json=long")
    check(rc == 1 and "short or pretty" in err, "--json=long refused: %r" % err)
    rc, out, _ = run(s, "info", "42")
    check(b"Fault: faulted at 0x0 = target of #16 (indirect call in dispatch)" in out,
          "info shows FAULT: %r" % out)
    # a pager on a terminal only: $PAGER gets the text, --no-pager bypasses it
    for args, paged in ((["list"], True), (["--no-pager", "list"], False)):
        master, slave = pty.openpty()
        e = dict(os.environ, PAGER="sed s/^/PAGED:/", TZ="UTC", LC_ALL="C")
        p = subprocess.run([CTL, "--store", s, *args], stdout=slave, stderr=subprocess.PIPE, env=e)
        os.close(slave)
        text = b""
        try:
            while chunk := os.read(master, 4096):
                text += chunk
        except OSError:
            pass
        os.close(master)
        check(p.returncode == 0 and (b"PAGED:TIME" in text) == paged and b"1000.42.crasher" in text,
              "%s on a terminal: paged %s: %r" % (args, paged, text[:200]))
    rc, out, _ = run(s, "list", env={"PAGER": "sed s/^/PAGED:/"})
    check(rc == 0 and b"PAGED" not in out, "no pager when stdout is no terminal")
    # none readable: said so, not "No crashes stored."
    if os.geteuid() == 0 and shutil.which("setpriv"):
        locked = os.path.join(tmp, "locked")
        entry(locked, "1000.42.crasher", 1000, 42, "crasher", STORED)
        os.chmod(os.path.join(locked, "1000.42.crasher"), 0o700)
        os.chmod(tmp, 0o755)
        os.chmod(locked, 0o755)
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            CTL, "--store", locked, "list"], capture_output=True)
        err = p.stderr.decode()
        check(p.returncode == 2 and "No crash readable by you (uid 65534): the 1 in" in err and
              "No crashes stored" not in err and "uid 65534)." not in err,
              "a store none of whose entries is readable: said, the caller's uid "
              "not named as the crashed user's: %d %r" % (p.returncode, err))


def test_usage(s, tmp):
    for args in (["frobnicate"], ["--bogus"], ["list", "a", "b"], ["list", "-o", "x"],
                 ["info", "--", "-batch"]):
        rc, _, err = run(s, *args)
        check(rc == 1, "usage %r: exit %d %r" % (args, rc, err))
    rc, out, _ = run(s, "--help")
    check(rc == 0 and b"Exit status" in out, "--help")
    rc, _, err = run(os.path.join(tmp, "nonexistent"), "list")
    check(rc == 3 and "does not exist" in err, "missing store: %d %r" % (rc, err))
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    rc, _, err = run(empty)
    check(rc == 3 and "No crashes" in err, "empty store: %d %r" % (rc, err))
    notdir = os.path.join(tmp, "notdir")
    open(notdir, "w").close()
    rc, _, err = run(notdir, "list")
    check(rc == 2 and "cannot read" in err, "store not a directory: %d %r" % (rc, err))


def test_group(tmp):
    """list --group (issue 41 §2): one line per trail signature, most
    crashes first, with count, distinct hosts, first and last seen;
    entries without one together as "-"; --json the same facts."""
    g = os.path.join(tmp, "group")
    os.makedirs(g)
    for eid, ts, host, trail in (("300.2.crasher", 300, "web-1", TRAIL_A),
                                 ("100.1.crasher", 100, "web-2", TRAIL_A),
                                 ("200.3.crasher", 200, "web-1", TRAIL_A),
                                 ("400.4.crasher", 400, "db-1", TRAIL_B),
                                 ("50.5.crasher", 50, "db-1", None)):
        entry(g, eid, ts, int(eid.split(".")[1]), "crasher",
              [("TRAIL", trail)] if trail else [], host=host)
    rc, out, err = run(g, "list", "--group")
    lines = out.decode().splitlines()
    rows = [l.split()[:3] for l in lines[1:]]
    check(rc == 0 and lines[0].split() == ["TRAIL", "COUNT", "HOSTS", "FIRST", "LAST",
                                           "SIG", "EXE"] and
          rows == [[TRAIL_A[:12], "3", "2"], [TRAIL_B[:12], "1", "1"], ["-", "1", "1"]] and
          "1970-01-01 00:01:40" in lines[1] and "1970-01-01 00:05:00" in lines[1],
          "list --group: counts, hosts, first and last seen", out.decode() + err)
    rc, out, err = run(g, "--json", "list", "-g")
    try:
        js = json.loads(out)
    except ValueError:
        js = None
    want = [(TRAIL_A, 3, 2, ["web-2", "web-1"], 100, 300, "300.2.crasher", EXE, "SIGSEGV"),
            (TRAIL_B, 1, 1, ["db-1"], 400, 400, "400.4.crasher", EXE, "SIGSEGV"),
            (None, 1, 1, ["db-1"], 50, 50, "50.5.crasher", EXE, "SIGSEGV")]
    keys = ("trail", "count", "hosts", "hostnames", "first", "last", "last_id", "exe",
            "signal")
    check(rc == 0 and [tuple(o.get(k) for k in keys) for o in js or []] == want,
          "list --group --json: the same facts", out.decode() + err)
    rc, out, err = run(g, "info", "300.2.crasher")
    check(rc == 0 and "Trail: " + TRAIL_A in out.decode(), "info: the trail signature",
          out.decode() + err)
    rc, out, _ = run(os.path.join(tmp, "store"), "list", "--group")
    check(rc == 0 and b"\x1b" not in out and b"\\x1b[31mre" in out,
          "list --group: a hostile TRAIL is escaped", out)
    # entries from before btsdumpd wrote TRAIL: computed from the stored
    # core, the same for the same core; "-" without a core
    old = os.path.join(tmp, "old")
    os.makedirs(old)
    entry(old, "100.1.crasher", 100, 1, "crasher", STORED, core="good")
    entry(old, "200.2.crasher", 200, 2, "crasher", STORED, core="good", host="web-9")
    entry(old, "300.3.crasher", 300, 3, "crasher", [("TRACE", "present")])
    rc, out, err = run(old, "-F", "TRAIL", "list")
    t = out.decode().split()
    check(rc == 0 and len(t) == 2 and t[0] == t[1] and re.fullmatch("[0-9a-f]{32}", t[0]),
          "an entry without TRAIL: computed from its stored core", out.decode() + err)
    rc, out, err = run(old, "list", "--group", "--no-legend")
    rows = [l.split()[:3] for l in out.decode().splitlines()]
    check(rc == 0 and t and rows == [[t[0][:12], "2", "2"], ["-", "1", "1"]],
          "list --group: entries without TRAIL grouped by their cores", out.decode() + err)
    for args in (("info", "--group"), ("list", "--group", "-F", "EXE")):
        rc, _, err = run(g, *args)
        check(rc == 1 and "--group" in err, "%s: usage error" % " ".join(args), err)


def main():
    if not shutil.which("zstd"):
        skip_all("no zstd CLI")
    with tempfile.TemporaryDirectory() as tmp:
        s = build_store(tmp)
        test_list(s)
        test_json(s)
        test_info(s)
        test_show(s)
        test_dump(s, tmp)
        test_gdb(s, tmp)
        test_usage(s, tmp)
        test_coredumpctl_options(s, tmp)
        test_group(tmp)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
