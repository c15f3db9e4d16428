#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job, today: installs what is needed, builds btsdump, and shows how
# the shipped example program got to its crash (tests/fixtures: a real core
# of `crasher smash`, SIGSEGV after a stack overflow smashed a return
# address, where gdb's backtrace is garbage),
# as a branch list and as a call history.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
core=tests/fixtures/crasher-smash.core exe=tests/fixtures/crasher
echo "== gdb's backtrace cannot say how it got there (the stack is smashed):"
gdb -batch -nx -ex bt "$exe" "$core" 2>/dev/null | grep '^#' | uniq
echo
echo "== btsdump says how it got there (last branches, oldest first):"
build/btsdump "$core" "$exe"
echo "== the same as a call history (btsdump --calls):"
build/btsdump --calls "$core" "$exe"
echo "== and for programs: build/btsdump --json $core $exe"
