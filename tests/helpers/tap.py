# SPDX-License-Identifier: GPL-2.0-or-later
"""The one TAP writer of the Python tests and the VM checkers: one
`ok N - what` / `not ok N - what` line per check, a failure's details as
`#` comments (on stderr too), the plan (`1..N`) at the end, and the exit status.
Import it from tests/helpers (see tests/README.md, "To add a test")."""

import glob
import os
import sys

# The model's oracle logs a VM test leaves in its results directory
# (qemu/: every BTS record, LBR push, PMU event it made): gigabytes a run,
# read once by the checker.
ORACLE_LOGS = ("bts*.log", "lbr*.log", "pmu*.log")


class Tap:
    def __init__(self, detail_lines=40):
        self.count = 0
        self.failures = 0
        self.detail_lines = detail_lines

    def check(self, ok, what, detail=""):
        """One check: WHAT's first line names it; the rest of WHAT and
        DETAIL (its last detail_lines lines) are shown if it failed."""
        self.count += 1
        what, _, more = str(what).partition("\n")
        print(f"{'ok' if ok else 'not ok'} {self.count} - {what}", flush=True)
        if not ok:
            self.failures += 1
            lines = more.splitlines() + str(detail).splitlines()
            for line in lines[-self.detail_lines:]:
                print(f"#   {line}")
            # also on stderr, which meson's console shows for a failed
            # test (and so CI's log, which keeps no testlog.txt)
            sys.stdout.flush()
            print(f"not ok {self.count} - {what}", file=sys.stderr)
            for line in lines[-self.detail_lines:]:
                print(f"#   {line}", file=sys.stderr, flush=True)
        return bool(ok)

    def skip(self, what):
        self.count += 1
        print(f"ok {self.count} - # SKIP {what}", flush=True)

    def done(self, prune=None):
        """Print the plan; the exit status: 1 if a check failed.  PRUNE, a
        VM test's results directory: when every check passed, its oracle
        logs are removed (a full CI run would otherwise keep about 15 GB
        of them); a failed run keeps them to look at, and so does any run
        with BTSCRASH_KEEP_LOGS=1 in the environment."""
        print(f"1..{self.count}")
        if prune and not self.failures and not os.environ.get("BTSCRASH_KEEP_LOGS"):
            for pattern in ORACLE_LOGS:
                for path in glob.glob(os.path.join(glob.escape(prune), pattern)):
                    os.unlink(path)
        return 1 if self.failures else 0


def skip_all(reason):
    """The whole test cannot run here: TAP's skip plan, exit 77."""
    print(f"1..0 # SKIP {reason}")
    sys.exit(77)
