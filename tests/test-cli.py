#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The conventions every program shares (tools/cli.c, issue 30 §4), checked
# on each of btsdump, btsdump vmcore, btsdump add-note, btsdumpctl and
# btsdumpd: --version, a usage error as one line plus "Try '... --help'"
# and exit 1, input from "-" and from a pipe; and btsdump's EXECUTABLE
# argument refused, said and counted in the exit status (7) when missing,
# unreadable, a directory, not ELF or another build; btsdumpd run by hand
# logging to its terminal and naming the program in its report.  TAP.
# Usage: test-cli.py VERSION BTSDUMP BTSDUMPCTL BTSDUMPD
import os
import pty
import shutil
import subprocess
import sys
import tempfile

VERSION, BTSDUMP, CTL, DAEMON = sys.argv[1], *map(os.path.abspath, sys.argv[2:5])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
from tap import Tap  # noqa: E402
import importlib  # noqa: E402
mv = importlib.import_module("make-vmcore")

FIX = os.path.join(SRC, "tests", "fixtures")
CORE = os.path.join(FIX, "crasher-null.core")
EXE = os.path.join(FIX, "crasher")
REMOTE = "/lib/systemd/systemd-journal-remote"
MESSAGE_ID = "6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"
T = Tap()
check = T.check


def run(argv, stdin=None, input=None, pass_fds=(), env=None, timeout=120):
    p = subprocess.run(argv, input=input, stdin=stdin, capture_output=True,
                       pass_fds=pass_fds, env=dict(os.environ, LC_ALL="C", TZ="UTC", **(env or {})),
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def piped(argv, data, name_at):
    """argv with argv[name_at] replaced by /dev/fd/N, N a pipe that
    carries data: what the shell's <(zstdcat core.zst) passes."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, data)  # the reader spools it all: no deadlock
        finally:
            os._exit(0)
    os.close(w)
    try:
        argv = list(argv)
        argv[name_at] = "/dev/fd/%d" % r
        return run(argv, pass_fds=(r,))
    finally:
        os.close(r)
        os.waitpid(pid, 0)


PROGRAMS = [("btsdump", [BTSDUMP]), ("btsdump", [BTSDUMP, "vmcore"]),
            ("btsdump", [BTSDUMP, "add-note"]), ("btsdump", [BTSDUMP, "gdbserver"]),
            ("btsdump", [BTSDUMP, "regs"]),
            ("btsdumpctl", [CTL]), ("btsdumpd", [DAEMON])]


def test_version_and_usage():
    for prog, argv in PROGRAMS:
        rc, out, err = run(argv + ["--version"])
        check(rc == 0 and out == "%s (btscrash) %s\n" % (prog, VERSION) and not err,
              "%s --version" % " ".join([prog] + argv[1:]), "%d %r %r" % (rc, out, err))
        try_line = "Try '%s --help' for more information." % prog
        for bad, what in ((["--no-such-option"], "unrecognized option '--no-such-option'"),
                          (["-?"], "invalid option -- '?'"),
                          (["--help=x"], "option '--help=x' doesn't allow an argument")):
            rc, out, err = run(argv + bad)
            check(rc == 1 and not out and err.splitlines() == ["%s: %s" % (prog, what), try_line],
                  "%s %s: one line, then Try, exit 1" % (" ".join([prog] + argv[1:]), bad[0]),
                  "%d %r %r" % (rc, out, err))
        rc, out, err = run(argv + ["--help"])
        check(rc == 0 and "Usage:" in out and "--version" in out and not err,
              "%s --help on stdout" % " ".join([prog] + argv[1:]))
    # a missing argument, a missing operand, a bad value: the same shape
    for argv, what in (([BTSDUMP, "-n"], "btsdump: option requires an argument -- 'n'"),
                       ([BTSDUMP, "--last"], "btsdump: option '--last' requires an argument"),
                       ([BTSDUMP], "btsdump: missing CORE"),
                       ([BTSDUMP, "-n", "x", CORE], "btsdump: --last: not a number: 'x'"),
                       ([BTSDUMP, "vmcore"], "btsdump: vmcore: missing VMCORE"),
                       ([BTSDUMP, "add-note", CORE], "btsdump: add-note: missing RECORDS"),
                       ([BTSDUMP, "add-note", "-", "-"],
                        "btsdump: add-note: CORE \"-\" needs --output"),
                       ([BTSDUMP, "gdbserver"], "btsdump: gdbserver: missing CORE"),
                       ([BTSDUMP, "gdbserver", "-"],
                        "btsdump: gdbserver: CORE cannot be \"-\" (stdin is gdb's): "
                        "give a file or <(zstdcat CORE.zst)"),
                       ([BTSDUMP, "regs"], "btsdump: regs: missing CORE"),
                       ([BTSDUMP, "regs", "-n", "x", CORE], "btsdump: regs: --back: not a number: 'x'"),
                       ([CTL, "frobnicate"], "btsdumpctl: unknown command 'frobnicate'"),
                       ([DAEMON, "--log", "x"],
                        "btsdumpd: --log: auto, journal, kmsg or stderr, not 'x'")):
        prog = os.path.basename(argv[0])
        rc, out, err = run(argv)
        check(rc == 1 and err.splitlines() == [what, "Try '%s --help' for more information." % prog],
              "usage error: %s" % what, "%d %r" % (rc, err))


def test_btsdump_input():
    data = open(CORE, "rb").read()
    rc0, out0, err0 = run([BTSDUMP, CORE, EXE])
    body = out0.split("\n", 1)[1]
    rc, out, err = run([BTSDUMP, "-", EXE], input=data)
    check(rc == rc0 == 0 and out == "core: -\n" + body,
          "btsdump - (a pipe on stdin): the same report", "%d %s %s" % (rc, err, out[:300]))
    with open(CORE, "rb") as f:
        rc, out, err = run([BTSDUMP, "-", EXE], stdin=f)
    check(rc == 0 and out == "core: -\n" + body, "btsdump - (a file on stdin)", err)
    rc, out, err = piped([BTSDUMP, "x", EXE], data, 1)
    check(rc == 0 and out.split("\n", 1)[1] == body and out.startswith("core: /dev/fd/"),
          "btsdump <(cat core): spooled, the same report", "%d %s" % (rc, err))
    rc, out, err = run([BTSDUMP, "-"], input=b"not a core")
    check(rc == 2 and err.startswith("btsdump: -"), "btsdump - with garbage: exit 2, named -",
          "%d %r" % (rc, err))


def test_vmcore_input(tmp):
    data = mv.elf()
    path = os.path.join(tmp, "vmcore")
    open(path, "wb").write(data)
    rc0, out0, _ = run([BTSDUMP, "vmcore", "-S", path])
    rc, out, err = run([BTSDUMP, "vmcore", "-S", "-"], input=data)
    check(rc == rc0 == 0 and out == out0.replace(path, "-") and "[" in out,
          "btsdump vmcore - (a pipe)", "%d %r %r" % (rc, err, out[:300]))
    rc, out, err = piped([BTSDUMP, "vmcore", "-S", "x"], data, 3)
    check(rc == 0 and len(out.splitlines()) == len(out0.splitlines()),
          "btsdump vmcore <(cat vmcore)", "%d %r" % (rc, err))
    rc, out, _ = run([BTSDUMP, "vmcore", "-S", path])
    rc32, out32, _ = run([BTSDUMP, "vmcore", "-S", "-n", "2", path])
    check(len(out32.splitlines()) < len(out.splitlines()),
          "btsdump vmcore: -n 0 (all) by default, as for cores")


def test_addnote_input(tmp):
    recs = "0x401000 0x402000\n0x402010 0x403000\n"
    fin = os.path.join(tmp, "recs")
    open(fin, "w").write(recs)
    want = os.path.join(tmp, "want.core")
    rc0, _, err0 = run([BTSDUMP, "add-note", "-o", want, os.path.join(FIX, "crasher-notrace.core"), fin])
    got = os.path.join(tmp, "got.core")
    rc, _, err = run([BTSDUMP, "add-note", "-o", got, os.path.join(FIX, "crasher-notrace.core"), "-"],
                     input=recs.encode())
    check(rc == rc0 == 0 and open(got, "rb").read() == open(want, "rb").read(),
          "btsdump add-note CORE - (records on stdin)", "%d %s %s" % (rc, err0, err))
    got2 = os.path.join(tmp, "got2.core")
    rc, _, err = run([BTSDUMP, "add-note", "-o", got2, "-", fin],
                     input=open(os.path.join(FIX, "crasher-notrace.core"), "rb").read())
    check(rc == 0 and open(got2, "rb").read() == open(want, "rb").read(),
          "btsdump add-note -o OUT - RECORDS (the core from a pipe)", "%d %s" % (rc, err))


def test_btsdumpctl_input(tmp):
    if not os.access(REMOTE, os.X_OK):
        check(False, "btsdumpctl --file -: needs %s (apt-get install systemd-journal-remote)" % REMOTE)
        return
    export = ("__REALTIME_TIMESTAMP=1700000000000000\n__MONOTONIC_TIMESTAMP=1\n"
              "_BOOT_ID=0123456789abcdef0123456789abcdef\nMESSAGE_ID=%s\nMESSAGE=crash\n"
              "BTSDUMPD_ID=piped-1\nBTSDUMPD_TIMESTAMP=1700000000\nBTSDUMPD_PID=42\n"
              "BTSDUMPD_COMM=piped\nBTSDUMPD_SIGNAL=11\n_HOSTNAME=h1\n\n" % MESSAGE_ID)
    journal = os.path.join(tmp, "one.journal")
    subprocess.run([REMOTE, "-o", journal, "-"], input=export.encode(), capture_output=True)
    data = open(journal, "rb").read()
    rc0, out0, err0 = run([CTL, "--file", journal, "list"])
    spools = os.path.join(tmp, "spools")
    os.mkdir(spools)
    rc, out, err = run([CTL, "--file", "-", "list"], input=data, env={"TMPDIR": spools})
    check(rc == rc0 == 0 and out == out0 and "piped" in out and not os.listdir(spools),
          "btsdumpctl --file - (a pipe): the same list, no spool left",
          "%d %d %r %r %r" % (rc0, rc, err0, err, out))
    rc, out, err = piped([CTL, "--file", "x", "info"], data, 2)
    check(rc == 0 and "piped-1" in out, "btsdumpctl --file <(cat journal) info", "%d %r" % (rc, err))


def test_btsdumpd_input(tmp):
    """The handler's input is always a pipe (the kernel's); run by hand
    the core comes through one too."""
    store = os.path.join(tmp, "store")
    cfg = os.path.join(tmp, "btsdumpd.conf")
    open(cfg, "w").write("[Store]\n")
    p = subprocess.Popen(["cat", CORE], stdout=subprocess.PIPE)
    r = subprocess.run([DAEMON, "--store", store, "--config", cfg, "--direct", "--log", "stderr",
                        "999999", "1000", "1000", "11", "1700000000", "crasher"],
                       stdin=p.stdout, capture_output=True, timeout=120)
    p.stdout.close()
    p.wait()
    ents = [e for e in os.listdir(store) if not e.startswith(".")] if os.path.isdir(store) else []
    check(r.returncode == 0 and len(ents) == 1, "btsdumpd: a core through a pipe is stored",
          "%d %r %r" % (r.returncode, ents, r.stderr[-500:]))
    rc, out, err = run([CTL, "--store", store, "show"])
    check(rc == 0 and out.startswith("core: core of crasher (PID 999999)\n"),
          "btsdumpd's report names the crashing program, not its spool", "%d %r" % (rc, out[:200]))


def on_pty(argv):
    """argv run with a terminal on its stderr: its status and what it said there."""
    master, slave = pty.openpty()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=slave, timeout=60)
    os.close(slave)
    text = b""
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            text += chunk
    except OSError:     # EIO: the terminal's other side closed
        pass
    os.close(master)
    return r.returncode, text


def test_btsdumpd_tty():
    """Run by hand, btsdumpd's log (--log auto) goes to the terminal on
    its stderr, not to the journal or kmsg where nobody looks."""
    rc, text = on_pty([DAEMON, "--direct", "x", "1", "1", "11", "1", "crasher"])
    check(rc == 1 and b"bad arguments from the kernel" in text,
          "btsdumpd --log auto with a terminal on stderr: logs there", "%d %r" % (rc, text))


def test_executable(tmp):
    """EXECUTABLE that cannot be used: said on stderr, exit 7, the report
    printed without it and not naming it (before: silently ignored, exit 0,
    the header still named it)."""
    rc, out, err = run([BTSDUMP, CORE, EXE])
    check(rc == 0 and ("executable: %s\n" % EXE) in out and not err,
          "the fixture's own executable: used and named, exit 0", "%d %r" % (rc, err))
    notelf = os.path.join(tmp, "notelf")
    open(notelf, "w").write("#!/bin/sh\n")
    cases = [(os.path.join(tmp, "no-such-exe"), "No such file or directory"),
             (tmp, "a directory"), (notelf, "not an ELF file"),
             (shutil.which("true"), "another build")]
    for exe, why in cases:
        rc, out, err = run([BTSDUMP, CORE, exe])
        check(rc == 7 and err.count("\n") == 1 and "EXECUTABLE not used: " + why in err and
              "executable:" not in out and "thread " in out,
              "EXECUTABLE %s: said, exit 7, report without it" % why, "%d %r %r" % (rc, err, out[:200]))
    rc, out, err = run([BTSDUMP, "--json", CORE, os.path.join(tmp, "no-such-exe")])
    check(rc == 7 and '"executable":null' in out, "JSON: executable null, exit 7", "%d %r" % (rc, out[:200]))
    if os.geteuid() == 0 and shutil.which("setpriv"):
        secret = os.path.join(tmp, "secret")
        shutil.copy(EXE, secret)
        os.chmod(secret, 0)
        os.chmod(tmp, 0o755)
        rc, out, err = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            BTSDUMP, CORE, secret])
        check(rc == 7 and "EXECUTABLE not used: Permission denied" in err,
              "EXECUTABLE unreadable: said, exit 7", "%d %r" % (rc, err))
    else:
        rc, out, err = run([BTSDUMP, CORE, "/proc/self/mem"])
        check(rc == 7 and "EXECUTABLE not used" in err, "EXECUTABLE unreadable (/proc/self/mem)",
              "%d %r" % (rc, err))


def test_option_s(tmp):
    """-S: btsdump's --no-symbols, btsdumpctl's --since (coredumpctl's);
    each man page (help2man + tools/man/*.h2m) says so."""
    rc, out, err = run([BTSDUMP, "-S", CORE, EXE])
    check(rc == 0 and "trace:" in out and "checksum" not in out,
          "btsdump -S: --no-symbols", err)
    store = os.path.join(tmp, "empty-store")
    os.makedirs(store, exist_ok=True)
    rc, out, err = run([CTL, "--store", store, "-S", "x", "list"])
    check(rc == 1 and err.startswith("btsdumpctl: --since: not a time: 'x'"),
          "btsdumpctl -S: --since (a time is expected)", err)
    for prog, other in (("btsdump", "btsdumpctl"), ("btsdumpctl", "btsdump")):
        page = os.path.join(os.path.dirname(CTL if prog == "btsdumpctl" else BTSDUMP),
                            prog + ".1")
        if not os.path.exists(page):
            T.skip("%s.1: no help2man, no man page" % prog)
            continue
        with open(page) as f:
            text = f.read().replace("\\-", "-")
        check(".SH \"OPTION LETTERS\"" in text and "--since" in text and
              "--no-symbols" in text and other in text,
              "%s.1 says what -S is here and in %s" % (prog, other), text[-800:])


def test_numbers():
    """A port above 65535 and a -n past 64 bits are usage errors naming
    the range (issue 41 §5)."""
    try:    # before: listened on 34463 (99999 mod 65536) for a connection
        rc, out, err = run([BTSDUMP, "gdbserver", "--port", "99999", CORE], timeout=5)
    except subprocess.TimeoutExpired:
        rc, out, err = -1, "", "timed out: listening"
    check(rc == 1 and err.startswith("btsdump: --port: out of range (0-65535): '99999'\n"),
          "gdbserver --port 99999: usage error", "%d %r" % (rc, err))
    rc, out, err = run([BTSDUMP, "-n", "99999999999999999999", CORE])
    check(rc == 1 and err.startswith("btsdump: --last: out of range: '99999999999999999999'\n"),
          "-n past 64 bits: out of range, not 'not a number'", "%d %r" % (rc, err))
    rc, out, err = run([CTL, "-n", "99999999999999999999", "list"])
    check(rc == 1 and err == "btsdumpctl: --last: out of range: '99999999999999999999'\n"
          "Try 'btsdumpctl --help' for more information.\n",
          "btsdumpctl -n past 64 bits: one usage error, out of range", "%d %r" % (rc, err))


def test_store_messages(tmp):
    """--since leaving none says no crash matches; --json list of a
    missing store prints [] (issue 41 §5)."""
    store = os.path.join(tmp, "one-store")
    cfg = store + ".conf"
    open(cfg, "w").write("[Store]\n")
    with open(CORE, "rb") as f:
        subprocess.run([DAEMON, "--store", store, "--config", cfg, "--direct", "--log", "stderr",
                        "999999", "1000", "1000", "11", "1700000000", "crasher"],
                       stdin=f, capture_output=True, timeout=120)
    rc, out, err = run([CTL, "--store", store, "-S", "2030-01-01", "list"])
    check(rc == 3 and err.startswith("No crash matches --since/--until"),
          "list -S after every entry: no crash matches, not 'no crashes stored'",
          "%d %r %r" % (rc, out, err))
    rc, out, err = run([CTL, "--store", os.path.join(tmp, "no-store"), "--json", "list"])
    check(rc == 3 and out == "[]\n" and "does not exist" in err,
          "--json list of a missing store: [] on stdout", "%d %r %r" % (rc, out, err))


def test_output_errors(tmp):
    """Writing to a full device: said ("writing the output: ...") and a
    non-zero exit, as coreutils (issue 41 §5)."""
    store = os.path.join(tmp, "one-store")
    for argv, what in (([BTSDUMP, "--help"], "btsdump --help"),
                       ([BTSDUMP, CORE], "btsdump CORE"),
                       ([CTL, "--help"], "btsdumpctl --help"),
                       ([CTL, "--store", store, "list"], "btsdumpctl list"),
                       ([CTL, "--store", store, "dump"], "btsdumpctl dump")):
        with open("/dev/full", "wb") as full:
            p = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, timeout=120)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and err.count("\n") == 1 and
              ("writing the output: " in err or "writing the report: " in err) and
              "No space left on device" in err,
              "%s > /dev/full: said, exit 2" % what, "%d %r" % (p.returncode, err))


def test_core_as_executable():
    """A core given as EXECUTABLE is not an executable: said, exit 7."""
    rc, out, err = run([BTSDUMP, CORE, CORE])
    check(rc == 7 and "EXECUTABLE not used: not an executable (a core)" in err and
          "executable:" not in out, "a core as EXECUTABLE: not an executable, exit 7",
          "%d %r %r" % (rc, err, out[:200]))


def test_btsdumpd_usage_tty():
    """btsdumpd by hand with too few arguments: the one-line usage error
    on the terminal, exit 1 (issue 41 §5)."""
    for argv in ([DAEMON], [DAEMON, "1", "2"]):
        rc, text = on_pty(argv)
        check(rc == 1 and text.startswith(b"btsdumpd: ") and
              b"Try 'btsdumpd --help' for more information." in text,
              "btsdumpd %d argument(s) on a terminal: usage error" % (len(argv) - 1),
              "%d %r" % (rc, text))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        test_version_and_usage()
        test_btsdump_input()
        test_vmcore_input(tmp)
        test_addnote_input(tmp)
        test_btsdumpctl_input(tmp)
        test_btsdumpd_input(tmp)
        test_btsdumpd_tty()
        test_executable(tmp)
        test_option_s(tmp)
        test_numbers()
        test_store_messages(tmp)
        test_output_errors(tmp)
        test_core_as_executable()
        test_btsdumpd_usage_tty()
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
