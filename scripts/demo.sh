#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job, end to end: installs what is needed (apt), builds btsdump
# and the patched Linux 6.12 kernel (scripts/kernel-build.sh, ccache; about 6
# minutes cold on 2 cores; KERNEL=6.1 for Debian 12's default kernel), boots
# it under QEMU TCG, where programs run
# traced by btscrash (prctl, tests/vm/btsrun.c) crash: a call through a
# NULL function pointer and a smashed return address.  Their cores come
# back to the host and btsdump shows how each got to its crash; btsdumpd,
# the VM's core_pattern handler, stored them too (btsdumpctl info); gdb
# with gdb/bts.py shows the last instructions before the crash.  Then the
# same kernel boots on the BTS model (Debian's QEMU 7.2 + qemu/,
# scripts/qemu-build.sh) where the hardware backend records: the same
# crash's trail, written by the modeled CPU and checked against its log,
# and the kernel branches that led to an oops.
#   scripts/demo.sh             the whole pipeline
#   scripts/demo.sh --fixture   no kernel: a shipped core (tests/fixtures)
set -eu
cd "$(dirname "$0")/.."
# all the packages (the kernel's, crash among them) before meson looks for
# them: a build directory set up without crash's header would never build
# the crash extension (scripts/test.sh reconfigures it anyway)
if [ "${1:-}" = --fixture ]; then
	scripts/install-deps.sh
else
	scripts/install-deps.sh kernel
fi
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

show() {	# core exe what
	echo "== $3: gdb's backtrace says where it died:"
	gdb -batch -nx -ex bt "$2" "$1" 2>/dev/null | grep '^#' | uniq | head -n 6
	echo
	echo "== btsdump says how it got there (last branches, oldest first):"
	build/tools/btsdump --last 16 "$1" "$2"
	echo "== the same as a call history (btsdump --calls):"
	build/tools/btsdump --calls --last 8 "$1" "$2"
	echo
}

if [ "${1:-}" = --fixture ]; then
	show tests/fixtures/crasher-smash.core tests/fixtures/crasher \
		"shipped core of 'crasher smash'"
	echo "== and for programs: build/tools/btsdump --json tests/fixtures/crasher-smash.core tests/fixtures/crasher"
	exit 0
fi

echo "== building the kernel (log: build/kernel-build.log)"
obj=$(scripts/kernel-build.sh 2>build/kernel-build.log | tail -n 1) ||
	{ tail -n 30 build/kernel-build.log; exit 1; }
out=build/demo-vm
rm -rf "$out"
echo "== booting $obj/arch/x86/boot/bzImage under QEMU TCG (ds.emulate=1)"
BTSDUMPD=build/daemon/btsdumpd tests/vm/run-vm.sh "$obj" "$out"
grep -E 'ds: |crasher\[[0-9]+\]: segfault' "$out/console.log" | sed 's/^/   vm| /'
echo
show "$out/null.core" "$out/crasher" "in the VM, 'btsrun 4096 crasher null' (a call through NULL)"
show "$out/smash.core" "$out/crasher" "in the VM, 'btsrun 4096 crasher smash' (a smashed return address)"
# gdb reads the code of the core's mappings by their paths in the VM
mkdir -p "$out/sysroot/bin" && ln -sf ../../crasher "$out/sysroot/bin/crasher"
echo "== gdb, with the bts commands (docs/gdb.md), on the same core:"
echo "   gdb -iex 'set sysroot $out/sysroot' -iex 'source gdb/bts.py' $out/crasher $out/smash.core"
for cmd in 'bts function-call-history /c 4' 'bts instruction-history /m 8'; do
	echo "   (gdb) $cmd"
	BTSDUMP=build/tools/btsdump gdb -batch -nx -iex "set sysroot $out/sysroot" \
		-iex 'source gdb/bts.py' -ex "$cmd" "$out/crasher" "$out/smash.core" \
		2>/dev/null | sed -n '/^ *[0-9]/,$p' | sed 's/^/   /'
done
echo
# the traced crash (the VM then crashes 100 untraced ones, a storm)
id=$(grep -l '^TRACE=present' "$out"/store/*/meta | head -n 1 | xargs dirname | xargs basename)
echo "== btsdumpd, the VM's core_pattern handler, stored the traced crash with its trail:"
echo "   build/tools/btsdumpctl --store $out/store info $id"
build/tools/btsdumpctl --store "$out/store" info "$id" | sed 's/^/   /'
echo "== and $(grep -c BTSDUMPD_RATELIMITED= "$out/dmesg") crashes of the storm logged as rate-limited, $(ls "$out/store" | wc -l) entries stored"
echo "== all cores, the btsdumpd store and the VM's console log: $out/"

# The hardware backend, on the BTS model: no ds.emulate=1, the kernel finds
# BTS on the (modeled) Intel CPU and records with it.
echo
echo "== building the BTS model, QEMU 7.2 + qemu/patches (log: build/qemu-build.log)"
QEMU=$(scripts/qemu-build.sh 2>build/qemu-build.log | tail -n 1) ||
	{ tail -n 30 build/qemu-build.log; exit 1; }
export QEMU
hw=build/demo-vm-hw
rm -rf "$hw"
echo "== booting the same kernel on the model (BTS hardware backend)"
BTSCRASH_BACKEND=hw tests/vm/run-vm.sh "$obj" "$hw" pti=off
grep -E 'ds: |bts_crash: per-CPU' "$hw/console.log" | sed 's/^/   vm| /'
echo "== the NULL call again, recorded by the CPU (btsdump --last 8):"
build/tools/btsdump --last 8 "$hw/null.core" "$hw/crasher" | sed 's/^/   /'
python3 - "$hw" <<'PY'
import os, struct, sys
sys.path.insert(0, "tests/vm")
from oracle import Oracle, read_log
import importlib.util
spec = importlib.util.spec_from_file_location("cv", "tests/vm/check-vm.py")
cv = importlib.util.module_from_spec(spec); spec.loader.exec_module(cv)
res = sys.argv[1]
log = read_log(res)
for t, n, d in cv.elf_notes(os.path.join(res, "null.core")):
    if n == "BTSCRASH":
        recs = cv.trace_records(d)
        m = Oracle(log).match(recs, struct.unpack_from("<Q", d, 24)[0])
        print("== the model's log (%d records it wrote): the core's %d records are the newest "
              "it wrote into that thread's ring: %s" % (len(log), len(recs),
              "yes" if m and not m[2] else "NO"))
PY
echo "== an oops in the VM: the report's last kernel branches, as the CPU took them:"
sed -n '/kernel branches on CPU/,/^CR2/p' "$hw/dmesg" | tail -n 12 | sed 's/^/   /'
echo "== all of it: $hw/"

