#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The per-CPU kernel ring's hole (issue 26 §5): an LKDTM oops inside a
# traced program's syscall, then one in an untraced shell.  On the BTS
# model (hw) the kernel ring does not record while the task's ring holds
# BTS: the first report must say "not recording kernel branches since"
# with the task's id, never print the stale branches as the last ones;
# the second prints its branches.  On the LBR model (lbr-kernel) the
# kernel tail is the LBR, which has no hole: both print branches.  Both:
# the oops hooks ran with IRQs off (no warning from bts_crash.c).
# OOPS_HOLE_PREEMPT=full: the same on a fully preemptible kernel (the
# test kernel's CONFIG_PREEMPT_DYNAMIC with preempt=full)
# with 2 CPUs, where an oops hook run with IRQs on could be preempted and
# migrate between its hold and its release (issue 26 §6); the untraced
# oops printing its branches shows the first oops left no ring held.
# Those oopses are LKDTM BUG: die() from the #UD handler runs with the
# interrupted code's IRQs on (EXCEPTION's NULL write oopses from the page
# fault handler with IRQs still off, under SMAP at once, where even hooks
# outside oops_begin()'s IRQs-off section would not warn).
# That run also fails a traced ring's allocation first (btsabi
# alloc-fail, fail_page_alloc): ENOMEM to prctl, no splat.  TAP.
# Env: BTSCRASH_BACKEND (hw or lbr-kernel), QEMU (else built),
# OOPS_HOLE_PREEMPT (none, the kernel's default, or full).
# Usage: oops-hole-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export BTSCRASH_BACKEND="${BTSCRASH_BACKEND:-hw}"
preempt=${OOPS_HOLE_PREEMPT:-none}
. "$src/tests/vm/vm-lib.sh"
vm_guest "$out"
vm_pack "$work/root" "$work/initrd.gz"
VM_ORACLE_LOG=0 vm_machine "$out"
smp=1 extra= kind=EXCEPTION
# no_timer_check: a loaded host's TCG is too slow for the IO-APIC timer
# check with 2 CPUs, which then panics (as in pmu-vm.sh)
[ "$preempt" = none ] ||
	smp=2 kind=BUG extra="preempt=$preempt no_timer_check btscrash.allocfail"
vm_boot "$obj" "$work/initrd.gz" "$out" 'BTSCRASH-HOLE-DONE' 600 \
	"pti=off $extra $vm_backend_args btscrash.hole=$kind" -m 512M -smp "$smp"
log=$out/console.log
sed -n '/BTSCRASH-HOLE-TRACED/,/BTSCRASH-HOLE-UNTRACED/p' "$log" > "$out/traced.log"
sed -n '/BTSCRASH-HOLE-UNTRACED/,/BTSCRASH-HOLE-DONE/p' "$log" > "$out/untraced.log"
n=0 bad=0
check() {	# description, command...: one TAP line for the command's status
	n=$((n + 1)) what=$1
	shift
	if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; bad=1; fi
}
has() { grep -q "$1" "$2"; }
hasnt() { ! grep -q "$1" "$2"; }
if [ "$preempt" != none ]; then
	check "the kernel runs preempt=$preempt on 2 CPUs" \
		sh -c "grep -q 'Dynamic Preempt: $preempt' '$log' && grep -q 'Total of 2 processors' '$log'"
	grep '^BTSCRASH-ALLOC ' "$log" | sed 's/^BTSCRASH-ALLOC /# /'
	check "a ring allocation that fails: every btsabi alloc-fail check ok" \
		sh -c "grep -q '^BTSCRASH-ALLOC btsabi: done' '$log' &&
		       [ \$(grep -c '^BTSCRASH-ALLOC ok - ' '$log') -ge 5 ] &&
		       ! grep -q '^BTSCRASH-ALLOC not ok' '$log'"
fi
check "both oopses ran (LKDTM $kind, traced then untraced)" \
	sh -c "grep -q 'lkdtm_$kind' '$out/traced.log' && grep -q 'lkdtm_$kind' '$out/untraced.log'"
if [ "$BTSCRASH_BACKEND" = hw ]; then
	check "traced: the report says the CPU was not recording kernel branches, and since when, for which task" \
		has "bts_crash: CPU [0-9]* not recording kernel branches since [0-9.]* (task [0-9]*'s ring holds BTS)" "$out/traced.log"
	check "traced: no stale branches printed as the last ones" \
		hasnt "kernel branches on CPU" "$out/traced.log"
else
	check "traced: the LBR has no hole, the report prints the branches into the oops" \
		sh -c "sed -n '/kernel branches on CPU/,\$p' '$out/traced.log' | grep -q 'lkdtm'"
	check "traced: nothing says the CPU was not recording" \
		hasnt "not recording kernel branches" "$out/traced.log"
fi
check "untraced: the report prints the branches into the oops" \
	sh -c "sed -n '/kernel branches on CPU/,\$p' '$out/untraced.log' | grep -q 'lkdtm' &&
	       ! grep -q 'not recording kernel branches' '$out/untraced.log'"
# bts_crash_oops_begin()/_end() say so when called with IRQs on (patch
# 0010 runs them inside oops_begin()'s IRQs-off section, issue 26 §6)
check "the oops hooks ran with IRQs off (bts_crash.c said nothing else)" \
	hasnt "bts_crash: .*called with IRQs on" "$log"
check "the kernel printed no WARNING" python3 "$src/tests/vm/kwarn.py" "$log"
grep 'bts_crash:' "$log" | sed 's/^/# /'
echo "1..$n"
exit $bad
