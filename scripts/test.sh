#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The test command of the README and of CI: installs what is needed, builds,
# runs every meson test suite (unit, tool, fixtures, fuzz), then the unit and
# tool suites again under AddressSanitizer+UBSan and the unit suite under
# valgrind.  Exit status non-zero on any failure.
set -eu
cd "$(dirname "$0")/.."
# the vm suite needs the kernel's packages (crash's defs.h among them)
# before meson setup looks for them: a missing header disables tests
scripts/install-deps.sh kernel
[ -f build/build.ninja ] || meson setup build
meson test -C build --print-errorlogs
[ -f build-asan/build.ninja ] ||
	meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --suite unit --suite tool
meson test -C build --setup valgrind --print-errorlogs --suite unit
