# SPDX-License-Identifier: GPL-2.0-or-later
"""TAP output for the VM checkers (check-vm.py, kdump-test.py): one
`ok N - what` / `not ok N - what` line per check, details as comments."""


class Tap:
    def __init__(self):
        self.count = 0
        self.failures = 0

    def check(self, ok, what, detail=""):
        self.count += 1
        print(f"{'ok' if ok else 'not ok'} {self.count} - {what}")
        if not ok:
            self.failures += 1
            for line in str(detail).splitlines()[-40:]:
                print(f"#   {line}")
        return ok

    def skip(self, what):
        self.count += 1
        print(f"ok {self.count} - # SKIP {what}")

    def done(self):
        print(f"1..{self.count}")
        return 1 if self.failures else 0
