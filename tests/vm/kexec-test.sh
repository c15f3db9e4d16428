#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kexec leaves no CPU recording (issue 26 §2): on the BTS model with 2
# vCPUs, a traced program spinning on CPU 1 and CPU 0's kernel ring on,
# kexec -l + kexec -e into the same kernel.  The model stops the VM with a
# `bts-model:` line if any CPU writes a record through a DS area the new
# kernel has not set up; the new kernel must boot to its /init.  With
# the LBR source (lbr: every CPU's LBR on for user branches) the model's
# LBR log must hold no branch of the program the new kernel runs (it
# leaves the LBR off): every CPU stopped its LBR too.  TAP.
# Env: BTSCRASH_BACKEND (hw, the default here, or lbr), QEMU (else built).
# Usage: kexec-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
export BTSCRASH_BACKEND="${BTSCRASH_BACKEND:-hw}"
# VM_KEXEC_PERF=1: the BTS model with the PMU, no btscrash parameter, and
# perf's intel_bts (no traced task) recording on CPU 1 at kexec -e
# (pti=off: perf has no intel_bts under page-table isolation)
perf=${VM_KEXEC_PERF:-0}
if [ "$perf" = 1 ]; then
	export VM_DEFAULTS=1 BTS_MODEL_CPU="$VM_PMU_CPU"
	vm_guest "$out" /usr/sbin/kexec /usr/bin/perf
else
	vm_guest "$out" /usr/sbin/kexec
fi
root=$work/root
mkdir -p "$root/boot"
cp "$obj/arch/x86/boot/bzImage" "$root/boot/"
vm_pack "$root" "$work/initrd.gz"
cp "$work/initrd.gz" "$root/boot/initrd.gz"	# the second kernel's: the same
vm_pack "$root" "$work/initrd.gz"
# the BTS log of every kernel branch would be gigabytes; the LBR's (user
# branches only) is the oracle of the lbr run
if [ "$BTSCRASH_BACKEND" = lbr ]; then vm_machine "$out"; else VM_ORACLE_LOG=0 vm_machine "$out"; fi
vm_boot "$obj" "$work/initrd.gz" "$out" 'BTSCRASH-KEXEC-\(BOOTED\|FAILED\)' 600 \
	"$vm_backend_args btscrash.kexec $([ "$perf" = 1 ] && echo btscrash.kexec-perf pti=off)" \
	-m 1G -smp 2
. "$src/tests/helpers/tap.sh"
log=$out/console.log
tap_check "the first kernel ran kexec -e (hw: with a traced program on CPU 1)" \
	grep -q 'BTSCRASH-KEXEC-STARTING' "$log"
if [ "$perf" = 1 ]; then
	grep 'BTSCRASH-KEXEC-PERF' "$log" | sed 's/^/# /'
	tap_check "perf record -e intel_bts//u held BTS on CPU 1 when kexec -e came" \
		grep -q '^BTSCRASH-KEXEC-PERF: cpu 1 .* perf 0x[1-9a-f]' "$log"
fi
grep 'bts-model:' "$log" | sed 's/^/# /'
tap_check "no CPU wrote a record through the old kernel's DS area (no bts-model: stop)" \
	test -z "$(grep 'bts-model:' "$log")"
tap_check "the second kernel booted to /init" grep -q 'BTSCRASH-KEXEC-BOOTED' "$log"
tap_check "neither kernel printed a WARNING" python3 "$src/tests/vm/kwarn.py" "$log"
if [ "$BTSCRASH_BACKEND" = lbr ]; then
	tap_check "the first kernel's LBR recorded (the log has entries)" test -s "$out/lbr.log"
	# btsabi-hi's text is at 0x20000000 (vm-lib.sh), run by the second
	# kernel only: the log's entries of it
	python3 "$src/qemu/lbr-log.py" "$out/lbr.log" |
		grep ' 0x00000000200[0-9a-f]\{5\} ' > "$out/lbr-after-stop.txt" || true
	head -n 3 "$out/lbr-after-stop.txt" | sed 's/^/# /'
	tap_check "no LBR entry after the stop: none of the second kernel's btsabi-hi" \
		test ! -s "$out/lbr-after-stop.txt"
fi
tap_done
