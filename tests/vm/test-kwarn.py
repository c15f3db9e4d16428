#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The VM checkers' kernel-warning detection (kwarn.py) on console text:
a WARN_ON()'s report as a CONFIG_BUG kernel prints it (__warn() in
kernel/panic.c, 6.1 and 6.12: LKDTM's WARNING) is found, by the
function, by check-vm.py's check (which then fails) and by the command
line the shell tests call (exit 1); a console without one (LKDTM's own
"WARNING" line, an oops, crash's WARNING lines) passes.  And the boot
failure test the VM harnesses poll (kwarn.py --boot): an oops, BUG,
panic or warning before a boot's init ran (the capture kernel's too),
not after it, nor a soft lockup (a host stall).
Usage: test-kwarn.py"""
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
from kwarn import boot_failure, kernel_warnings  # noqa: E402
from tap import Tap  # noqa: E402

T = Tap()
check = T.check

# `echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT` on the serial
# console (CRLF): report_bug()'s cut line, then __warn()'s header with
# the WARN_ON() in 6.12's drivers/misc/lkdtm/bugs.c (line 112)
RECORDED = (
    "[   25.496318] lkdtm: Performing direct entry WARNING\r\n"
    "[   25.497020] ------------[ cut here ]------------\r\n"
    "[   25.497658] WARNING: CPU: 0 PID: 62 at drivers/misc/lkdtm/bugs.c:112 "
    "lkdtm_WARNING+0x4/0x10\r\n"
    "[   25.499189] Modules linked in:\r\n")
WARN_LINE = RECORDED.splitlines()[2].rstrip("\r")
# what must not count: the mitigations' boot lines every test VM prints
# (recorded from vm-hw's console), LKDTM's announcement, an oops,
# crash's own warnings, a checker's words
CLEAN = (
    "[    0.021742] RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable "
    "to RETBleed attacks, data leaks possible!\r\n"
    "[    0.022688] Speculative Return Stack Overflow: WARNING: See "
    "https://kernel.org/doc/html/latest/admin-guide/hw-vuln/srso.html for mitigation "
    "options.\r\n"
    "[    1.000000] lkdtm: Performing direct entry WARNING\r\n"
    "[    2.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000\r\n"
    "[    2.000001] Oops: 0002 [#1] PREEMPT SMP NOPTI\r\n"
    "WARNING: kernel relocated [214MB]: patching 114812 gdb minimal_symbol values\r\n"
    "WARNING: active task ffff888003a48000 on cpu 1 not found in PID hash\r\n"
    "ok 3 - the kernel printed no WARNING\r\n")


def cli(text):
    with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
        f.write(text)
        f.flush()
        return subprocess.run([sys.executable, os.path.join(HERE, "kwarn.py"), f.name],
                              capture_output=True, text=True)


def load_check_vm():
    spec = importlib.util.spec_from_file_location("checkvm", os.path.join(HERE, "check-vm.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_vm_fails(cv, console):
    """check-vm.py's check_no_warnings on CONSOLE: did it fail?  (Its TAP
    lines go to a Tap of their own, shown as comments.)"""
    own = Tap()
    cv.check = own.check
    out = sys.stdout
    with tempfile.TemporaryFile("w+") as f:
        sys.stdout = f
        try:
            cv.check_no_warnings(console)
        finally:
            sys.stdout = out
        f.seek(0)
        for ln in f.read().splitlines():
            print("# check-vm: " + ln)
    return own.failures == 1


# issue 38's boot on the AMD model (Debian's stock 6.12.118), cut short
BOOT = ("[    0.000000] Linux version 6.12.118+deb12-amd64 (debian-kernel@lists.debian.org)\r\n"
        "[    0.000000] RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable\r\n")
EARLY = ("[    1.180227] WARNING: CPU: 0 PID: 1 at arch/x86/kernel/traps.c:1134 "
         "exc_debug_kernel+0x1a4/0x1c0\r\n"
         "[    1.190010] BUG: kernel NULL pointer dereference, address: 0000000000000010\r\n")
INIT = "[    1.800000] Run /init as init process\r\n"


def boot(text, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
        f.write(text)
        f.flush()
        return subprocess.run([sys.executable, os.path.join(HERE, "kwarn.py"), "--boot",
                               f.name, *args], capture_output=True, text=True)


def check_boot():
    first = EARLY.splitlines()[0].rstrip("\r")
    check(boot_failure(BOOT + EARLY + INIT) == first,
          "--boot: a WARNING before init is a failed boot, its first line", first)
    check(boot_failure(BOOT + INIT + RECORDED + "[ 3.0] Kernel panic - not syncing: x\r\n")
          is None, "--boot: a warning, an oops or a panic after init is not")
    check(boot_failure(BOOT + INIT + RECORDED + BOOT + EARLY) == first,
          "--boot: the capture kernel's failure before its own init is")
    check(boot_failure(BOOT + "[ 22.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!\r\n"
                       + INIT) is None, "--boot: a soft lockup at boot (a host stall) is not")
    check(boot_failure(BOOT + "[ 1.2] Oops: 0002 [#1] PREEMPT SMP NOPTI\r\n") is not None and
          boot_failure(BOOT + "[ 1.2] Kernel panic - not syncing: VFS: Unable to mount\r\n")
          is not None, "--boot: an oops or a panic before init (or no init line) is")
    r = boot(BOOT + EARLY)
    check(r.returncode == 1 and first in r.stderr, "kwarn.py --boot: exit 1, the line", r)
    r = boot(BOOT + INIT)
    check(r.returncode == 0 and r.stderr == "", "kwarn.py --boot: exit 0 on a good boot", r)
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, os.path.join(HERE, "kwarn.py"), "--boot",
                            os.path.join(d, "none.log")], capture_output=True, text=True)
    check(r.returncode == 0, "kwarn.py --boot: no console yet is no failure yet", r)


def main():
    check_boot()
    got = kernel_warnings(RECORDED)
    check(got == [WARN_LINE], "the recorded WARN_ON() report is found, one line, no CR", got)
    check(kernel_warnings(CLEAN) == [], "no warning in a console without a WARN_ON() report",
          kernel_warnings(CLEAN))
    both = CLEAN + RECORDED + RECORDED.replace("CPU: 0 PID: 62", "CPU: 3 PID: 1207")
    check(len(kernel_warnings(both)) == 2, "each report counts, on any CPU and PID",
          kernel_warnings(both))
    bare = WARN_LINE.split("] ", 1)[1] + "\n"
    check(kernel_warnings(bare) == [bare.rstrip()], "found without the printk time too")
    cv = load_check_vm()
    check(check_vm_fails(cv, RECORDED), "check-vm.py's no-WARNING check fails on it")
    check(not check_vm_fails(cv, CLEAN), "check-vm.py's no-WARNING check passes without")
    r = cli(CLEAN + RECORDED)
    check(r.returncode == 1 and WARN_LINE in r.stderr and r.stdout == "",
          "kwarn.py CONSOLE: exit 1, the line on stderr", r)
    r = cli(CLEAN)
    check(r.returncode == 0 and r.stderr == "", "kwarn.py CONSOLE: exit 0 without", r)
    sys.exit(T.done())


if __name__ == "__main__":
    main()
