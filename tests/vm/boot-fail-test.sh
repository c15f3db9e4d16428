#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest whose kernel fails at boot fails its test at once, not at the
# harness's timeout (issue 38: a stock kernel's #DB at boot sat 50
# minutes in vm-collector-amd): the test kernel booted with LKDTM's
# WARNING run at boot (lkdtm.cpoint_name=DIRECT: before init) and an
# init that never says it is done is ended by vm_boot's watch
# (vm-lib.sh vm_boot_failed, kwarn.py --boot) within a minute, saying
# why; the same boot without it runs to its marker.  TAP.
# Usage: boot-fail-test.sh OUTDIR
set -eu
out=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"
. "$src/tests/helpers/tap.sh"
vm_setup "$out"
vm_busybox "$root"
vm_init "$root/init"
cat >> "$root/init" <<'INIT'
echo BOOT-FAIL-INIT
grep -q boot.hang /proc/cmdline && while :; do sleep 60; done
echo BOOT-FAIL-DONE
poweroff -f
INIT
vm_pack "$root" "$work/initrd.gz"
vm_qemu="qemu-system-x86_64 -accel tcg,thread=single -cpu max"
# boot LABEL APPEND: vm_boot with a 600 s limit; seconds in $secs
boot() {
	t0=$(date +%s)
	vm_boot "$obj" "$work/initrd.gz" "$out" BOOT-FAIL-DONE 600 "no_timer_check $2" \
		-m 256M -smp 1 2> "$out/$1.err"
	secs=$(($(date +%s) - t0))
	cp "$out/console.log" "$out/$1.log"
}
boot good ""
tap_check "a good boot runs to its marker (not ended by the watch)" \
	grep -q '^BOOT-FAIL-DONE' "$out/good.log"
tap_check "...and nothing said it failed" sh -c "! grep -q 'failed at boot' '$out/good.err'"
boot warn "boot.hang lkdtm.cpoint_name=DIRECT lkdtm.cpoint_type=WARNING"
tap_check "LKDTM warned before init" \
	sh -c "sed '/Run .* as init process/q' '$out/warn.log' | grep -q 'WARNING: CPU: [0-9]* PID: [0-9]* '"
tap_status "$([ "$secs" -lt 60 ] && echo 0 || echo 1)" \
	"the guest that warned at boot was ended within a minute ($secs s of a 600 s limit)"
tap_check "...saying why, with the kernel's line" \
	grep -q 'vm: the guest failed at boot, QEMU ended: .*WARNING: CPU' "$out/warn.err"
tap_done
