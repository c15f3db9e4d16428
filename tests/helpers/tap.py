# SPDX-License-Identifier: GPL-2.0-or-later
"""The one TAP writer of the Python tests and the VM checkers: one
`ok N - what` / `not ok N - what` line per check, a failure's details as
`#` comments, the plan (`1..N`) at the end, and the exit status.
Import it from tests/helpers (see tests/README.md, "To add a test")."""

import sys


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
        return bool(ok)

    def skip(self, what):
        self.count += 1
        print(f"ok {self.count} - # SKIP {what}", flush=True)

    def done(self):
        """Print the plan; the exit status: 1 if a check failed."""
        print(f"1..{self.count}")
        return 1 if self.failures else 0


def skip_all(reason):
    """The whole test cannot run here: TAP's skip plan, exit 77."""
    print(f"1..0 # SKIP {reason}")
    sys.exit(77)
