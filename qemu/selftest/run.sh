#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The BTS and LBR models' own test, no Linux involved: a bare-metal 32-bit
# guest (boot.S, test.c; multiboot, paging and rings set up by hand) checks
# CPUID, the MSRs (read-back, #GP on reserved bits), the exact records of
# one of each branch kind in the 64-bit and the 32-bit DS format, wrap,
# the CPL filter through a ring 0 -> 3 -> 0 round trip; the oracle log is
# compared with what the guest expected (check-log.py).  Then the same
# guest on a CPU with lbr=on checks the LBR stack: enumeration, MSRs, one
# entry per branch kind, each LBR_SELECT type and CPL filter, TOS wrap,
# #DB, BTS and LBR together; its LBR oracle log is compared entry by entry
# (check-lbr-log.py).  Then the same guest on a CPU with lbr=on,pmu=on
# checks the PMU model: CPUID leaf 0xA, the MSRs and their #GPs, exact
# counts of a known sequence, overflow with a masked and an NMI LVTPC,
# the freeze bits, the BTS interrupt as a PMI; its PMU oracle log
# (pmu-log) must hold those overflows and PMIs and the MSR accesses the
# guest made (check-pmu-log.py).  Then the same guest on the AMD model,
# as a Zen 4 (VM_AMD_CPU) and as a Zen 5 (VM_ZEN5_CPU), checks the family
# and model, CPUID Fn8000_0022, PerfMonV2's six counters' MSRs and
# counts, LbrExtV2's MSRs, pushes, filters and freeze on PMI; its LBR
# oracle log must hold each push (check-lbr-log.py, format 1), its PMU
# log the sixth counter's overflow and PMI (check-pmu-log.py amd).  Then
# the same guest on the Architectural LBR model (VM_ARCH_LBR_CPU,
# arch-lbr.c) checks CPUID leaf 0x1C, IA32_LBR_CTL/DEPTH/x_* and their
# #GPs, the pushes (entry 0 newest), each filter, the depth, call-stack
# mode, #DB and the freeze on PMI; its log (lbr-log-nmi) must hold each
# push, pop and the stack at the NMI (check-lbr-log.py, formats 2-4).
# Then the same guest on the AMD model checks the flags CMPXCHG8B leaves
# in a translation block entered with CC_OP_EFLAGS after an ADD of an
# address (test.c test_cmpxchg_flags; patch 0018).
# Then each fatal mode (MMIO buffer, BTINT, unmapped
# or read-only buffer, unmapped DS area) must stop QEMU with status 1 and
# exactly one bts-model: line.
# Usage: run.sh OUTDIR [QEMU]   (QEMU: default, scripts/qemu-build.sh's)
set -u
out=$1
dir=$(cd "$(dirname "$0")" && pwd)
q=${2:-$("$dir/../../scripts/qemu-build.sh" 2>"$out.qemu-build.log" | tail -n 1)}
[ -x "$q" ] || { tail -n 20 "$out.qemu-build.log" >&2; echo "no QEMU model" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
cflags="-m32 -ffreestanding -fno-pic -fno-stack-protector -fcf-protection=none -O1 -Wall -mno-sse -mno-mmx"
# shellcheck disable=SC2086
gcc -m32 -c -o "$out/boot.o" "$dir/boot.S" && gcc $cflags -c -o "$out/test.o" "$dir/test.c" &&
	ld -m elf_i386 -T "$dir/link.ld" -o "$out/selftest.elf" "$out/boot.o" "$out/test.o" ||
	{ echo "FAIL: the self-test guest did not build"; exit 1; }
. "$dir/../../tests/vm/vm-lib.sh"	# VM_BTS_CPU, the BTS model's CPU
cpu=$VM_BTS_CPU
fail=0
run() {	# run CPU LOG [ARGS]: console on stdout, exit status of QEMU
	c=$1 log=$2
	shift 2
	timeout 60 "$q" -L /usr/share/seabios -L /usr/share/qemu -nic none \
		-accel tcg -cpu "$c,bts-log=$log" -m 64 -display none \
		-serial stdio -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$out/selftest.elf" "$@"
}
for fmt in 64 32; do
	c=$cpu
	[ $fmt = 32 ] && c="$cpu,dtes64=off"
	run "$c" "$out/$fmt.log" > "$out/$fmt.out" 2>&1
	rc=$?
	grep -v '^exp' "$out/$fmt.out" | grep -v '^ok'
	grep -c '^ok' "$out/$fmt.out" | sed "s/^/ok - $fmt-bit format: checks passed in the guest: /"
	if [ $rc != 33 ]; then echo "FAIL: $fmt-bit format: status $rc"; fail=1; fi
	python3 "$dir/check-log.py" "$out/$fmt.out" "$out/$fmt.log" || fail=1
done
# guest NAME TITLE CPU: the guest with the command line NAME on CPU, its
# console in NAME.out (what it printed but its checks and expectations
# shown), its checks counted, QEMU's status 33 (all passed) required
guest() {
	run "$3" "$out/$1.log" -append "$1" > "$out/$1.out" 2>&1
	rc=$?
	grep -v '^[lpm]\?exp\|^ok' "$out/$1.out"
	grep -c '^ok' "$out/$1.out" | sed "s/^/ok - $2: checks passed in the guest: /"
	if [ $rc != 33 ]; then echo "FAIL: $2: status $rc"; fail=1; fi
}
guest lbr lbr=on "$cpu,lbr=on,lbr-log=$out/lbr.lbrlog"
python3 "$dir/check-log.py" "$out/lbr.out" "$out/lbr.log" || fail=1
python3 "$dir/check-lbr-log.py" "$out/lbr.out" "$out/lbr.lbrlog" || fail=1
guest pmu pmu=on "$VM_PMU_CPU,pmu-log=$out/pmu.pmulog"
python3 "$dir/check-pmu-log.py" "$out/pmu.out" "$out/pmu.pmulog" || fail=1
for amd in "amd:AMD (VM_AMD_CPU, Zen 4):$VM_AMD_CPU" \
	   "zen5:Zen 5 (VM_ZEN5_CPU):$VM_ZEN5_CPU"; do
	name=${amd%%:*} rest=${amd#*:}
	guest "$name" "${rest%%:*}" "${rest#*:},lbr-log=$out/$name.lbrlog,pmu-log=$out/$name.pmulog"
	python3 "$dir/check-lbr-log.py" "$out/$name.out" "$out/$name.lbrlog" 1 || fail=1
	python3 "$dir/check-pmu-log.py" "$out/$name.out" "$out/$name.pmulog" amd || fail=1
done
guest archlbr "Arch LBR (VM_ARCH_LBR_CPU)" \
	"$VM_ARCH_LBR_CPU,lbr-log=$out/archlbr.lbrlog,lbr-log-nmi=on"
python3 "$dir/check-lbr-log.py" "$out/archlbr.out" "$out/archlbr.lbrlog" || fail=1
guest cmpxchg-flags "CMPXCHG8B flags (VM_AMD_CPU)" "$VM_AMD_CPU"
for mode in fatal-mmio fatal-btint fatal-unmapped fatal-ro fatal-ds-unmapped; do
	run "$cpu" "$out/$mode.log" -append "$mode" > "$out/$mode.out" 2>&1
	rc=$?
	line=$(grep '^bts-model:' "$out/$mode.out")
	if [ $rc = 1 ] && [ "$(echo "$line" | wc -l)" = 1 ] && [ -n "$line" ]; then
		echo "ok - $mode: status 1: $line"
	else
		echo "FAIL: $mode: status $rc"; tail -5 "$out/$mode.out"; fail=1
	fi
done
[ $fail = 0 ] && echo "ALL PASSED"
exit $fail
