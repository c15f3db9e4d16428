#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A CPU without BTS or LBR among CPUs with it (issue 26 §3): the model's
# second vCPU lacks them (-device with ds/dtes64/ds-cpl or lbr off) and
# comes online after boot (maxcpus=1; at boot Linux's feature set is the
# CPUs' common one, so ds.c's boot checks already see an asymmetric
# part).  ds.c must leave its MSRs alone: no "unchecked MSR access" (the
# model #GPs on DEBUGCTL's BTS bits without the DS), no WARNING; traced
# programs run on both CPUs; an oops on CPU 1 prints no branches, one on
# CPU 0 its own.  TAP.
# Env: BTSCRASH_BACKEND (hw, the default here, or lbr-kernel), QEMU (else
# built), VM_KERNEL_OBJ (vm-lib.sh: a kernel object directory to boot
# instead of building one: how a tree without the fix was checked).
# Usage: asym-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# KERNEL, VM_*_CPU, vm_* (before the build)
export BTSCRASH_BACKEND="${BTSCRASH_BACKEND:-hw}"
case $BTSCRASH_BACKEND in
hw) without="ds=off,dtes64=off,ds-cpl=off" what=BTS ;;
lbr-kernel) without="lbr=off" what=LBR ;;
*) echo "Bail out! BTSCRASH_BACKEND is hw or lbr-kernel"; exit 1 ;;
esac
vm_guest "$out"
vm_pack "$work/root" "$work/initrd.gz"
VM_ORACLE_LOG=0 vm_machine "$out"
# CPU 1: the same CPU (-cpu's options are the type's defaults) without them.
# no_timer_check: on a loaded host TCG is too slow for the boot's IO-APIC
# timer check, which then panics (seen with the LBR model; pmu-vm.sh)
vm_boot "$obj" "$work/initrd.gz" "$out" 'BTSCRASH-ASYM-DONE' 900 \
	"pti=off no_timer_check maxcpus=1 $vm_backend_args btscrash.asym" \
	-m 512M -smp 1,maxcpus=2 \
	-device "max-x86_64-cpu,socket-id=0,core-id=1,thread-id=0,$without"
log=$out/console.log
sed -n '/BTSCRASH-ASYM-OOPS-CPU1/,/BTSCRASH-ASYM-OOPS-CPU0/p' "$log" > "$out/oops1.log"
sed -n '/BTSCRASH-ASYM-OOPS-CPU0/,/BTSCRASH-ASYM-DONE/p' "$log" > "$out/oops0.log"
. "$src/tests/helpers/tap.sh"
tap_check "CPU 1 came online after boot" grep -q 'BTSCRASH-ASYM-ONLINE 0-1' "$log"
# BTS: ds.c says so; the LBR: perf's LBR tail (the recorder's source)
tap_check "the kernel says CPU 1 has no $what and records nothing there" \
	grep -Eq "(ds|perf): CPU 1 has no .*$what" "$log"
grep -A3 'unchecked MSR access' "$log" | head -n 8 | sed 's/^/# /'
tap_check "no MSR access of ds.c faulted on CPU 1 (no unchecked MSR access)" \
	sh -c "! grep -q 'unchecked MSR access' '$log'"
tap_check "a traced program ran on CPU 1" grep -q 'BTSCRASH-ASYM-TRACED mask 2: ok' "$log"
tap_check "a traced program ran on CPU 0" grep -q 'BTSCRASH-ASYM-TRACED mask 1: ok' "$log"
tap_check "both oopses ran (LKDTM EXCEPTION on CPU 1, then CPU 0)" \
	sh -c "grep -q lkdtm_EXCEPTION '$out/oops1.log' && grep -q lkdtm_EXCEPTION '$out/oops0.log'"
tap_check "the oops on CPU 1 prints no branches (none were recorded there)" \
	sh -c "! grep -q 'kernel branches on CPU' '$out/oops1.log'"
tap_check "the oops on CPU 0 prints its branches into the oops" \
	sh -c "sed -n '/kernel branches on CPU 0/,\$p' '$out/oops0.log' | grep -q lkdtm"
tap_check "no WARNING" python3 "$src/tests/vm/kwarn.py" "$log"
grep -E 'ds:|bts_crash:' "$log" | head -n 20 | sed 's/^/# /'
tap_done
