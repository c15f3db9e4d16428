#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel's warnings in a VM console log, found one way for every VM
checker (check-vm.py and its importers, the shell tests through the
command line): the header line __warn() prints for a WARN_ON() or WARN(),
"WARNING: CPU: N PID: N at ...".  The test kernels have CONFIG_BUG (else
nothing is printed at all); tests/vm/test-kwarn.py checks the detection.
Usage: kwarn.py CONSOLE_LOG...  -- prints each warning line (at most 10)
on stderr (TAP stays on stdout), exit 1 if any, 0 if none."""
import re
import sys

# __warn() in kernel/panic.c: the same on 6.1 and 6.12, after the printk
# time and any console prefix; the word alone is not enough (crash prints
# "WARNING: ..." lines of its own, the kernel's text holds "WARNING" too)
WARNING = re.compile(r"(?:^|[\] ])WARNING: CPU: \d+ PID: \d+ ")


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
