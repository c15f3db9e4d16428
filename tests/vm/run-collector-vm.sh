#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's stock, unmodified 6.1 kernel (vm-lib.sh vm_stock_kernel) on the
# PMU model (qemu/, VM_PMU_CPU: the LBR and the architectural PMU)
# with a busybox initramfs holding Debian's perf, the crasher and this
# build's btsdumpd; runs tests/vm/collector-init.sh in it: perf's user
# branch stack (`perf record -j any,u`), then btsdumpd's stock-kernel LBR
# collector with btsdumpd as the core_pattern handler and crashes nobody
# traced.  CASE nopmu boots the model without its PMU: the collector
# cannot work and says so.  CASE amd: the AMD model (VM_AMD_CPU: LbrExtV2
# and PerfMonV2), on which 6.12 snapshots the 16-entry stack and 6.1
# cannot (no bpf_get_branch_snapshot for AMD before 6.10); CASE zen5: the
# same model as a Zen 5 (VM_ZEN5_CPU).  CASE arch: the Architectural LBR
# model (VM_ARCH_LBR_CPU), as pmu.  CASE bench: the collector's cost
# (bench/vm-bench-collector.sh).  CASE signals (the PMU model), signals-amd
# (the AMD model): which signals the BPF program snapshots, from the
# model's log of MSR accesses (OUTDIR/pmu.log; check-collector-signals.py).  The model logs every LBR entry it pushes
# (OUTDIR/lbr.log, the oracle); results come back base64'd on ttyS1.
# Checked by check-collector.py.  VM_COLLECTOR_STORM=1: the crash storm
# too; only: crasher null and the storm alone.  VM_STOCK_KERNEL: the kernel's meta
# package (default linux-image-amd64, 6.1; linux-image-6.12-amd64).
# Usage: run-collector-vm.sh BTSDUMPD BTSDUMPCTL OUTDIR
#   [pmu|nopmu|amd|zen5|arch|bench|signals|signals-amd]
set -eu
btsdumpd=$1 btsdumpctl=$2 out=$3 case=${4:-pmu}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
"$src/scripts/install-deps.sh" kernel >&2
rm -rf "$out"
mkdir -p "$out" "$cache"
exec 8>"$cache/.systemd-root.lock"	# run-systemd-vm.sh's, over the kernel's cache
flock 8
vm_stock_kernel "$cache" "${VM_STOCK_KERNEL:-linux-image-amd64}"
flock -u 8
q=${QEMU:-$("$src/scripts/qemu-build.sh" 2>"$out/qemu-build.log" | tail -n 1)}
[ -x "$q" ] || { tail -20 "$out/qemu-build.log" >&2; echo "run-collector-vm: no QEMU model" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
vm_root "$root"
vm_add_dynamic "$root" /usr/bin/perf /usr/bin/setpriv "$btsdumpd" "$btsdumpctl"
mkdir -p "$root/usr/libexec"
mv "$root$btsdumpd" "$root/usr/libexec/btsdumpd"
mv "$root$btsdumpctl" "$root/bin/btsdumpctl"
vm_init_file "$root/init" "$src/tests/vm/collector-init.sh"
cp "$root/bin/crasher" "$out/crasher"	# the exact binary, for symbols
vm_pack "$root" "$work/initrd.gz"
smp=2 icount=
case $case in
pmu) cpu="$VM_PMU_CPU,lbr-log=$out/lbr.log" ;;
# bench/vm-bench-collector.sh: one vCPU under -icount (with it QEMU 7.2
# hangs bringing up a second), every MSR access logged, no LBR log
bench) cpu="$VM_PMU_CPU,pmu-log=$out/pmu.log" smp=1 icount="-icount shift=0,sleep=off" ;;
# one vCPU: vmbench's marks bracket its own CPU's accesses only
signals) cpu="$VM_PMU_CPU,pmu-log=$out/pmu.log" smp=1 ;;
signals-amd) cpu="$VM_AMD_CPU,pmu-log=$out/pmu.log" smp=1 ;;
nopmu) cpu=$VM_INTEL_CPU ;;	# the model's CPU, no PMU (no LBR driver)
amd) cpu="$VM_AMD_CPU,lbr-log=$out/lbr.log" ;;
zen5) cpu="$VM_ZEN5_CPU,lbr-log=$out/lbr.log" ;;
arch) cpu="$VM_ARCH_LBR_CPU,lbr-log=$out/lbr.log" ;;
*) echo "run-collector-vm: CASE is pmu, nopmu, amd, zen5, arch, bench, signals or signals-amd" >&2; exit 2 ;;
esac
echo "$kpkg" > "$out/kernel"
: > "$work/results.txt"
vm_guard "$out/console.log" timeout 3000 "$q" -L /usr/share/seabios -L /usr/share/qemu -nic none \
	-accel tcg,thread=single -cpu "$cpu" -m 2G -smp $smp $icount \
	-display none -monitor none -no-reboot \
	-serial "file:$out/console.log" -serial "file:$work/results.txt" \
	-kernel "$vmlinuz" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 $VM_PERF_ARGS collector.case=$case collector.storm=${VM_COLLECTOR_STORM:-0}" || true
grep -q '^COLLECTOR-END' "$work/results.txt" ||
	{ tail -40 "$out/console.log" >&2; echo "run-collector-vm: the VM did not finish" >&2; exit 1; }
tr -d '\r' < "$work/results.txt" |
	sed -n '/^COLLECTOR-BEGIN/,/^COLLECTOR-END/p' | sed '1d;$d' |
	base64 -d | tar -xzf - -C "$out"
