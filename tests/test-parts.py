#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Every part of the project is in the build and in the test list: a part
# whose dependency is missing (meson leaves it out, or its test skips)
# fails here, naming the Debian package that brings it, instead of
# vanishing from a run that still says "all passed".  Reads the build's
# own introspection (meson introspect --tests --targets).
# Usage: test-parts.py BUILD_ROOT
import json
import subprocess
import sys

BUILD = sys.argv[1]

# test name -> the Debian package(s) without which meson would drop it or
# it would skip.  Parts added to meson.build are added here.
TESTS = {
    "note": "", "ring": "", "format": "", "classify": "", "core": "", "symbol": "", "escape": "", "grow": "", "rsp": "", "trail": "", "recover": "", "why": "", "store": "", "config": "",
    "btsdump": "", "vmcore": "", "btsdumpctl": "zstd gdb",
    "btsdumpd": "", "btsdumpd-lbr": "zstd", "journal": "systemd", "units": "systemd", "companion": "systemd zstd xz-utils lz4",
    "fleet": "systemd-journal-remote", "cli": "systemd-journal-remote util-linux",
    "gdb": "gdb", "gdbstub": "gdb", "gdb-replay": "gdb", "threads": "", "recover-truth": "gdb", "why-tool": "binutils", "fixtures-remade": "gdb", "trail-crashes": "gdb",
    "fuzz-note": "clang libclang-rt-14-dev",
    "fuzz-core": "clang libclang-rt-14-dev",
    "fuzz-vmcore": "clang libclang-rt-14-dev",
    "fuzz-ring": "clang libclang-rt-14-dev",
    "fuzz-meta": "clang libclang-rt-14-dev",
    "fuzz-escape": "clang libclang-rt-14-dev",
    "fuzz-rsp": "clang libclang-rt-14-dev",
    "fuzz-recover": "clang libclang-rt-14-dev",
    "oracle": "", "kwarn": "", "vm-leftovers": "", "kernel-build": "", "vm-default": "", "vm-pti": "", "vm-hw": "", "vm-hw-perf-rings": "", "vm-hw-pti": "", "vm-hw-defaults": "", "vm-lbr": "", "vm-lbr-amd": "linux-perf", "vm-lbr-zen5": "", "vm-pmu": "linux-perf", "vm-lbr-perf-arch": "linux-perf", "vm-lbr-perf-legacy": "linux-perf", "vm-collector": "linux-perf",
    "vm-collector-nopmu": "linux-perf", "vm-collector-6.12": "linux-perf",
    "vm-collector-amd": "linux-perf", "vm-collector-amd-6.1": "linux-perf", "vm-collector-zen5": "linux-perf",
    "vm-collector-arch": "linux-perf", "vm-collector-arch-6.1": "linux-perf",
    "vm-collector-storm": "linux-perf", "vm-collector-signals": "linux-perf",
    "vm-collector-signals-amd": "linux-perf", "kexec-hw": "kexec-tools", "kexec-lbr": "kexec-tools",
    "kexec-perf": "kexec-tools linux-perf",
    "oops-hole-hw": "", "oops-hole-lbr-kernel": "", "qemu-model": "", "kernel-patches": "",
    "oops-hole-hw-preempt": "", "oops-hole-lbr-kernel-preempt": "",
    "asym-hw": "", "asym-lbr-kernel": "", "vm-boot-fail": "", "perf-oops-lbr-kernel": "linux-perf",
    "perf-bts-kernel": "linux-perf",
    "kernel-series": "linux-source-6.1 linux-source-6.12 perl",
    # Linux 6.12 with crash 8.0.6 (scripts/crash-build.sh installs its
    # build-depends); Debian's crash for `extend bts.so` by name
    "kdump-EXCEPTION": "crash", "kdump-PANIC": "", "kdump-BUG": "",
    "kdump-EXEC_NULL": "", "kdump-notraces": "",
    "kdump-hw-EXCEPTION": "", "kdump-hw-PANIC": "",
    "kdump-lbr-EXCEPTION": "", "kdump-lbr-PANIC": "", "kdump-lbr-BUG": "",
    "kdump-lbr-amd-PANIC": "", "kdump-lbr-amd-BUG": "", "kdump-lbr-amd-EXCEPTION": "",
    "kdump-lbr-zen5-PANIC": "",
    # the 6.1 smoke set (tests/vm/meson.build's head)
    "vm-6.1-default": "linux-source-6.1", "vm-6.1-hw": "linux-source-6.1",
    "vm-6.1-lbr": "linux-source-6.1", "kdump-6.1-EXCEPTION": "linux-source-6.1 crash",
    "kdump-6.1-crash806-EXCEPTION": "linux-source-6.1",
    "systemd-vm": "debootstrap", "systemd-vm-companion": "debootstrap",
    "systemd-vm-lbr": "debootstrap", "systemd-vm-companion-lbr": "debootstrap",
    "systemd-vm-6.1-lbr": "debootstrap", "systemd-vm-6.1-companion-lbr": "debootstrap", "parts": "", "debian": "debhelper lintian",
}
# built target -> package: parts that are a file, not (only) a test
TARGETS = {
    "bts": "crash",		# bts.so: /usr/include/crash/defs.h
    "crash-8.0.6": "",		# crash-ext/: scripts/crash-build.sh
    "btsdump.1": "help2man", "btsdumpctl.1": "help2man", "btsdumpd.8": "help2man",
    "fuzz-note": "clang libclang-rt-14-dev",
    "fuzz-core": "clang libclang-rt-14-dev",
    "fuzz-vmcore": "clang libclang-rt-14-dev",
    "fuzz-ring": "clang libclang-rt-14-dev",
    "fuzz-meta": "clang libclang-rt-14-dev",
    "fuzz-escape": "clang libclang-rt-14-dev",
    "fuzz-rsp": "clang libclang-rt-14-dev",
    "fuzz-recover": "clang libclang-rt-14-dev",
}


def introspect(what):
    p = subprocess.run(["meson", "introspect", "--" + what, BUILD],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def main():
    tests = {t["name"] for t in introspect("tests")}
    targets = {t["name"] for t in introspect("targets")}
    bad = []
    for name, pkg in TESTS.items():
        if name not in tests:
            bad.append("test %s is missing from the build%s" %
                       (name, pkg and ": apt-get install " + pkg))
    for name, pkg in TARGETS.items():
        if name not in targets:
            bad.append("%s is not built: apt-get install %s" % (name, pkg))
    for name in sorted(tests - set(TESTS)):
        bad.append("test %s is not listed in tests/test-parts.py" % name)
    for line in bad:
        print(line)
    print("%d tests, %d targets checked: %s" %
          (len(TESTS), len(TARGETS), "missing parts" if bad else "all present"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
