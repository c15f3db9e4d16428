#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel's warnings in a VM console log, found one way for every VM
checker (check-vm.py and its importers, the shell tests through the
command line): the header line __warn() prints for a WARN_ON() or WARN(),
"WARNING: CPU: N PID: N at ...".  The test kernels have CONFIG_BUG (else
nothing is printed at all); tests/vm/test-kwarn.py checks the detection.
Also the one test of a boot that failed (the VM harnesses poll it through
vm-lib.sh's vm_boot_failed to end the guest at once, not at their
timeout): an Oops, a BUG, a panic or a warning before that boot's init
ran.
Usage: kwarn.py CONSOLE_LOG...  -- prints each warning line (at most 10)
on stderr (TAP stays on stdout), exit 1 if any, 0 if none.
       kwarn.py --boot CONSOLE_LOG  -- prints a boot's first failure line,
exit 1 if a boot failed, 0 if not (yet)."""
import re
import sys

# __warn() in kernel/panic.c: the same on 6.1 and 6.12, after the printk
# time and any console prefix; the word alone is not enough (crash prints
# "WARNING: ..." lines of its own, the kernel's text holds "WARNING" too)
WARNING = re.compile(r"(?:^|[\] ])WARNING: CPU: \d+ PID: \d+ ")


# A kernel that cannot go on (or WARNING's), as printed at the line's start
# (after the time and any prefix: "watchdog: BUG: soft lockup" is a host
# stall of the VM, not a failure: the boot goes on)
FAILURE = re.compile(r"(?:^|[\] ])(?:BUG: (?!soft lockup)|Oops: |"
                     r"Kernel panic - not syncing|general protection fault)")
# a boot's first line (the capture kernel's too) and its init's start
BOOT = re.compile(r"Linux version \d")
INIT = re.compile(r"Run \S+ as init process")


def boot_failure(console):
    """The first failure line of a boot before its init ran, or None.
    A boot whose console never says init started (loglevel=4) counts
    whole."""
    booting = False
    for ln in console.splitlines():
        if BOOT.search(ln):
            booting = True
        elif INIT.search(ln):
            booting = False
        elif booting and (FAILURE.search(ln) or WARNING.search(ln)):
            return ln.rstrip("\r")
    return None


def kernel_warnings(console):
    """The console's kernel warning lines, in order."""
    return [ln.rstrip("\r") for ln in console.splitlines() if WARNING.search(ln)]


def main(paths):
    warns = []
    for p in paths:
        with open(p, errors="replace") as f:
            warns += kernel_warnings(f.read())
    for ln in warns[:10]:
        print(ln, file=sys.stderr)
    return 1 if warns else 0


def boot_main(path):
    try:
        with open(path, errors="replace") as f:
            bad = boot_failure(f.read())
    except FileNotFoundError:
        return 0
    if bad:
        print(bad, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--boot"]:
        sys.exit(boot_main(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
