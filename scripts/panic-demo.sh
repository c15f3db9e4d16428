#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The panic demo: installs what it needs, builds the patched kernel and the
# crash extension, boots the kernel under QEMU TCG with kdump loaded and a
# traced program running, panics it with LKDTM (default EXCEPTION: a NULL
# write in lkdtm_EXCEPTION), lets the capture kernel save the vmcore with
# makedumpfile -d 31, then opens it with crash and `extend bts.so`:
# each CPU's last branches, and the traced program's.  The crash is 8.0.6
# (scripts/crash-build.sh, cold: 9 min of CPU): Debian 12's 8.0.2 cannot
# read the 6.12 kernel's vmcores; it reads 6.1's too (KERNEL=6.1).
#   scripts/panic-demo.sh [EXCEPTION|PANIC|BUG|EXEC_NULL]
set -eu
cd "$(dirname "$0")/.."
type=${1:-EXCEPTION}
scripts/install-deps.sh
scripts/install-deps.sh kernel
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "== building crash 8.0.6 and its bts.so (log: build/crash-build.log)"
ninja -C build crash-ext/crash crash-ext/bts.so >build/crash-build.log 2>&1 ||
	{ tail -n 30 build/crash-build.log; exit 1; }
# --no_kmem_cache: 8.0.6 stops in kmem_cache_init() on the 6.12 test kernel
# (kdump-test.py); bts needs no slab caches
crash="build/crash-ext/crash -s --kaslr auto --no_kmem_cache"
ext=$PWD/build/crash-ext/bts.so
echo "== building the kernel (log: build/kernel-build.log)"
obj=$(scripts/kernel-build.sh 2>build/kernel-build.log | tail -n 1) ||
	{ tail -n 30 build/kernel-build.log; exit 1; }
out=build/panic-demo
echo "== booting with kdump loaded, then: echo $type > /sys/kernel/debug/provoke-crash/DIRECT"
tests/vm/run-kdump.sh "$obj" "$out" "$type" >/dev/null
grep -E 'Kernel panic|BUG:|Oops|RIP:' "$out/console.log" | head -n 4 | sed 's/^/   vm| /'
echo "== vmcore saved by the capture kernel: $out/vmcore ($(du -h "$out/vmcore" | cut -f1))"
echo
echo "== crash> bts -n 12     (the panicking CPU's last kernel branches)"
printf 'extend %s\nbts -n 12\nbts -t %s -n 8\nquit\n' "$ext" "$(cat "$out/traced.pid")" |
	$crash "$obj/vmlinux" "$out/vmcore" 2>&1 | grep -v -e '^WARNING' -e '^$' -e 'shared object loaded'
echo
echo "== open it yourself: $crash $obj/vmlinux $out/vmcore, then: extend $ext; help bts"
