#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the console of pmu-vm.sh (Linux on the PMU model) as TAP: the
Intel PMU driver found (Skylake events, full-width counters, 32-deep LBR),
no PMU failure or kernel warning, cpu and intel_bts among the event
sources, LBR depth 32 in /sys/devices/cpu/caps/branches, `perf stat`'s
user-mode counts of pmuloop equal to what pmuloop.S executes.
Usage: check-pmu-vm.py CONSOLE"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from tap import Tap  # noqa: E402

PMULOOP_N = 1000000     # pmuloop.S
# branches: the JNZs and the SYSCALL (a far branch, P3 in qemu/README)
EXPECTED = {"instructions:u": 2 * PMULOOP_N + 4,
            "branches:u": PMULOOP_N + 1,
            "cycles:u": 2 * PMULOOP_N + 4}   # the model: one per instruction


def tagged(console, tag):
    return [line.split(tag, 1)[1].strip() for line in console.splitlines()
            if tag in line]


def main():
    console = open(sys.argv[1], errors="replace").read()
    t = Tap()
    t.check("PMU-VM-DONE" in console, "the VM ran its init to the end",
            console[-3000:])
    perf = [ln for ln in console.splitlines() if "Performance Events:" in ln]
    line = perf[0] if perf else ""
    t.check("Intel PMU driver" in line,
            "Linux found the Intel PMU driver", line or "no line")
    t.check("Skylake events" in line and "full-width counters" in line and
            "32-deep LBR" in line,
            "Skylake events, full-width counters, 32-deep LBR", line)
    bad = [ln for ln in console.splitlines()
           if re.search(r"no PMU driver|Broken PMU|WARNING: CPU:|unchecked MSR|"
                        r"BUG:|Oops|bts-model:", ln)]
    t.check(not bad, "no PMU failure, warning or model stop", "\n".join(bad))
    devices = (tagged(console, "PMU-DEVICES:") or [""])[0].split()
    t.check("cpu" in devices and "intel_bts" in devices,
            "cpu and intel_bts in /sys/bus/event_source/devices",
            " ".join(devices))
    t.check(tagged(console, "PMU-BRANCHES:") == ["32"],
            "/sys/devices/cpu/caps/branches: 32",
            tagged(console, "PMU-BRANCHES:"))
    stat = {}
    for row in tagged(console, "PMU-STAT:"):
        f = row.split(",")
        if len(f) > 2 and f[2] in EXPECTED:
            stat[f[2]] = f[0]
    for event, want in EXPECTED.items():
        t.check(stat.get(event) == str(want),
                f"perf stat {event} of pmuloop = {want}",
                f"got {stat.get(event)}; perf said:\n" +
                "\n".join(tagged(console, "PMU-STAT:")))
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
