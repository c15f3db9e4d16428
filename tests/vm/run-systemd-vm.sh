#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots a real systemd (Debian 12, debootstrap minbase) under QEMU TCG with
# btscrash's Debian packages installed in it: built from this tree
# (scripts/build-debs.sh) and installed into the root with `dpkg -i` (their
# maintainer scripts enable the units, create the store; on a patched
# kernel, the administrator's one step, linking 60-btscrash-trace.conf
# into /etc/sysctl.d, README.Debian); runs tests/vm/systemd/btscrash-sd-test.sh
# in it (a crash as uid 1000, btsdumpctl, gdb with bts, a synthetic kdump
# vmcore for the harvest unit) and extracts what it collected into OUTDIR
# (checked by check-systemd-vm.py).
# The fleet: this machine is the central host.  systemd-journal-remote
# listens here on a free loopback port; the VM (a NIC on QEMU's
# user network, where this machine is 10.0.2.2) ships its journal with the
# stock systemd-journal-upload.service; afterwards the packaged btsdumpctl
# (the run's btscrash-tools, unpacked) reads the received journal with -D
# into OUTDIR/central-*.
#
# The root is built once and cached as a compressed cpio in
# ${BTSCRASH_CACHE:-~/.cache/btscrash} (rebuilt when $root_pkgs or
# $root_rev change); each run unpacks it, installs the packages with
# `dpkg --root` and packs it again (uncompressed), and appends a second cpio with the test
# (the kernel unpacks concatenated archives in order).
# The whole root is the initramfs (rdinit=systemd), so the kernel boots it
# without a disk driver.  Which kernel depends on MODE (below): Debian's
# stock kernel (apt-get download, never installed: the host's /boot is
# untouched; on the PMU model, the LBR collector's notes in the cores),
# or the patched kernel on the BTS model, where the crash is traced; of
# the version KERNEL names (vm-lib.sh: 6.1 or 6.12), written to
# OUTDIR/kernel.txt for the check.
# Results come back base64'd on a second serial port (ttyS1), apart from
# the console (ttyS0, OUTDIR/console.log).
# MODE standalone: Debian's stock kernel on Debian's QEMU (-cpu max, no
# PMU: the LBR collector says it cannot work), systemd-coredump purged
# from the root first: installing the packages alone makes btsdumpd
# kernel.core_pattern's handler (50-btsdumpd.conf in /usr/lib/sysctl.d).
# MODE lbr: the same on the PMU model (qemu/, VM_PMU_CPU: the LBR and the
# architectural PMU): the stock-kernel LBR collector (btsdumpd-lbr.service)
# arms, and the crash's core carries its last branches (source lbr); in
# the VM the test then purges btscrash-daemon (core_pattern back to
# "core"), installs it again with dpkg -i under the running systemd (its
# postinst applies core_pattern at once) and crashes once more.  Lean: the
# model's LBR makes every user branch slow under TCG, so no root crash, no
# fleet, no ACL reads (standalone's).
# MODE companion-lbr: the PMU model too, systemd-coredump kept: its
# 50-coredump.conf sorts after 50-btsdumpd.conf and stays the handler,
# btsdumpd.service reports on its cores with the collector's snapshot; no
# administrator's step either.  Lean as lbr.
# MODE companion: the patched kernel (scripts/kernel-build.sh: the VM
# suite's kernel, whose config carries what systemd needs) on the BTS model (qemu/,
# scripts/qemu-build.sh: an Intel CPU with BTS, the hardware backend);
# systemd-coredump stays the handler and btsdumpd.service reports on the
# cores it stores; the administrator's one step is linking
# 60-btscrash-trace.conf into /etc/sysctl.d (README.Debian: every program
# exec'd from boot on is traced).
# Usage: run-systemd-vm.sh OUTDIR [standalone|companion|lbr|companion-lbr] (OUTDIR recreated)
set -eu
out=${1:?usage: run-systemd-vm.sh OUTDIR [standalone|companion|lbr|companion-lbr]}
mode=${2:-standalone}
case $mode in standalone|companion|lbr|companion-lbr) ;; *) echo "run-systemd-vm: bad mode $mode" >&2; exit 2;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/vm/vm-lib.sh"	# VM_BTS_CPU, VM_PMU_CPU: the models' CPUs
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
# What the packages depend on (their Depends:, from dpkg-shlibdeps: there
# is no network in the VM for apt to fetch them): libelf1 libdw1
# libcapstone4 libzydis4.0 libzstd1 libsystemd0 libjson-c5 libacl1 libcap-ng0
# libbpf1 (the LBR collector),
# liblzo2-2 libsnappy1v5 (the vmcore reader's page codecs), gdb
# (btscrash-gdb) and crash (btscrash-crash); acl for getfacl;
# init-system-helpers for the postinst's deb-systemd-helper;
# libboost-regex1.74.0 by name: debootstrap does not resolve the virtual
# libboost-regex1.74.0-icu72 that gdb's libsource-highlight4v5 needs;
# systemd-coredump, the handler the companion mode runs beside;
# systemd-journal-remote (its journal-upload ships the VM's journal to the
# central host) and iproute2 (the VM's address: no udev, no networkd).
root_pkgs="systemd libelf1 libdw1 libcapstone4 libzydis4.0 libzstd1 libsystemd0 liblzo2-2 libsnappy1v5
libjson-c5 libacl1 libcap-ng0 libbpf1 gdb libboost-regex1.74.0 crash acl init-system-helpers
systemd-coredump systemd-journal-remote iproute2"
root_rev=4	# bump when the root's recipe below changes
mirror=http://deb.debian.org/debian
log() { echo "run-systemd-vm: $*" >&2; }

"$src/scripts/install-deps.sh" kernel >&2
rm -rf "$out"
mkdir -p "$cache" "$out"
work=$(mktemp -d)
qemu_pid=
remote_pid=
cleanup() {
	if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null || true; fi
	if [ -n "$remote_pid" ]; then kill "$remote_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the cached root and kernel (one builder at a time, own lock: the
# kernel build's $cache/.lock can be held for minutes) ---
key=$(echo $root_pkgs $root_rev | sha1sum | cut -c1-12)
rootcpio=$cache/systemd-root.cpio.zst
exec 8>"$cache/.systemd-root.lock"
flock 8
if [ ! -f "$rootcpio" ] || [ "$(cat "$rootcpio.key" 2>/dev/null)" != "$key" ]; then
	log "debootstrap bookworm minbase (once; key $key)"
	t0=$(date +%s)
	rm -rf "$cache/systemd-root.tmp" "$rootcpio" "$rootcpio.key"
	debootstrap --variant=minbase --include="$(echo $root_pkgs | tr ' ' ,)" \
		bookworm "$cache/systemd-root.tmp" "$mirror" \
		>"$cache/systemd-root.debootstrap.log" 2>&1 || {
		tail -n 30 "$cache/systemd-root.debootstrap.log" >&2
		log "debootstrap failed"; exit 1; }
	r=$cache/systemd-root.tmp
	# Smaller root, faster unpacking under TCG: no docs, locales, apt state.
	rm -rf "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* \
		"$r"/usr/share/locale/* "$r"/var/cache/apt/* "$r"/var/lib/apt/lists/* \
		"$r"/var/cache/debconf/*-old "$r"/var/log/*.log
	# Not a first boot (no systemd-firstboot prompts), no initrd.
	echo 0123456789abcdef0123456789abcdef > "$r/etc/machine-id"
	rm -f "$r/etc/initrd-release"
	echo btscrash-sd > "$r/etc/hostname"
	(cd "$r" && find . | cpio -o -H newc -R 0:0 --quiet | zstd -q -9 -T0) > "$rootcpio.tmp"
	mv "$rootcpio.tmp" "$rootcpio"
	echo "$key" > "$rootcpio.key"
	rm -rf "$r"
	log "root built in $(($(date +%s) - t0)) s, $(du -h "$rootcpio" | cut -f1)"
fi
flock -u 8
if [ "$mode" = companion ]; then
	# the patched kernel, virtio-net built in (not e1000: the test
	# kernel's other VMs have QEMU's default e1000 NIC, and probing it
	# doubled their boot), and the BTS model
	log "building the patched kernel $KERNEL (scripts/kernel-build.sh)"
	kobj=$("$src/scripts/kernel-build.sh")
	vmlinuz=$kobj/arch/x86/boot/bzImage
	qemu=$("$src/scripts/qemu-build.sh")
	qemu_cpu="-L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu
		-cpu $VM_BTS_CPU"
	# No per-CPU kernel rings: the model records a taken branch in a
	# helper with seven guest memory accesses, and with every kernel
	# branch recorded, unpacking the 86 MB root took 63 s instead of 3 s
	# under TCG.  Kernel rings are the kdump-hw-* tests' subject; this
	# test's is the traced programs (task rings, 60-btscrash-trace.conf).
	# pti=off: the BTS hardware backend is off under PTI (docs/kernel.md)
	# and Linux turns PTI on for the model's Meltdown-affected CPU; every
	# program traced on the emulation instead (a trap per instruction)
	# did not finish booting in 30 minutes.
	kargs="bts_crash.cpu_records=0 pti=off"
	nic=virtio-net-pci
else
	# Debian 12's stock kernel of that version: linux-image-amd64 is 6.1,
	# 6.12 comes from bookworm-security
	meta=linux-image-amd64
	[ "$KERNEL" = 6.1 ] || meta=linux-image-$KERNEL-amd64
	flock 8
	vm_stock_kernel "$cache" "$meta"
	flock -u 8
	qemu=qemu-system-x86_64
	qemu_cpu="-cpu max"
	if [ "$mode" != standalone ]; then
		# the PMU model: the LBR the collector keeps on, perf's driver
		qemu=${QEMU:-$("$src/scripts/qemu-build.sh")}
		qemu_cpu="-L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu
			-cpu $VM_PMU_CPU"
	fi
	kargs=
	nic=e1000
fi

# --- this run's packages, installed into the root as an operator would ---
log "building the packages (scripts/build-debs.sh)"
DEB_BUILD_OPTIONS=nocheck "$src/scripts/build-debs.sh" "$work/debs" >&2
r=$work/root
mkdir "$r"
(cd "$r" && zstd -dc "$rootcpio" | cpio -i -d -m --quiet --no-absolute-filenames)
mkdir -p "$r/tmp/debs"
cp "$work"/debs/btscrash-*_*.deb "$r/tmp/debs/"
rm -f "$r"/tmp/debs/*-dbgsym_*.deb
# standalone, lbr: a machine without systemd-coredump (its own prerm leaves
# core_pattern alone: no /proc in the chroot)
if [ "$mode" = standalone ] || [ "$mode" = lbr ]; then
	chroot "$r" dpkg --purge systemd-coredump >"$out/dpkg-purge-coredump.log" 2>&1 || {
		cat "$out/dpkg-purge-coredump.log" >&2; log "dpkg --purge systemd-coredump failed"; exit 1; }
fi
# dpkg runs the maintainer scripts chrooted: units enabled
# (deb-systemd-helper), the store created (systemd-tmpfiles); nothing is
# started and no sysctl applied (no systemd runs in the chroot: systemd-sysctl
# applies 50-btsdumpd.conf at boot)
chroot "$r" sh -c 'dpkg -i /tmp/debs/*.deb' >"$out/dpkg.log" 2>&1 || {
	cat "$out/dpkg.log" >&2; log "dpkg -i failed"; exit 1; }
chroot "$r" dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'btscrash-*' >"$out/dpkg-status.txt"
# what the package left in sysctl.d: 50-btsdumpd.conf (checked)
ls "$r/etc/sysctl.d" "$r/usr/lib/sysctl.d" >"$out/sysctl-d-after-dpkg.txt" 2>&1 || true
if [ "$mode" = companion ]; then
	# the administrator's step on a patched kernel: trace every program
	# from boot on (README.Debian)
	ln -s /usr/share/btscrash/sysctl/60-btscrash-trace.conf "$r/etc/sysctl.d/60-btscrash-trace.conf"
elif [ "$mode" = lbr ]; then
	# for the test's second install, under the running systemd
	mkdir -p "$r/var/tmp/btscrash-debs"
	cp "$work"/debs/btscrash-daemon_*.deb "$r/var/tmp/btscrash-debs/"
fi
echo "$mode" >"$r/etc/btscrash-sd-mode"
rm -rf "$r/tmp/debs"
# not compressed: the guest's kernel inflated the zstd'd root (87 MB,
# 220 MB unpacked) in 40 s of TCG time, every systemd test; an
# uncompressed newc archive is copied out
(cd "$r" && find . | cpio -o -H newc -R 0:0 --quiet) >"$work/root.cpio"
rm -rf "$r"

# --- this run's overlay: the test ---
o=$work/overlay
mkdir -m 0755 "$o"
unitdir=$o/usr/lib/systemd/system	# merged /usr: /lib -> usr/lib
install -D -m 0644 "$src/tests/vm/systemd/btscrash-sd-test.service" \
	"$unitdir/btscrash-sd-test.service"
install -D -m 0755 "$src/tests/vm/systemd/btscrash-sd-test.sh" \
	"$o/usr/local/bin/btscrash-sd-test"
e=$o/etc/systemd/system
mkdir -p "$e/multi-user.target.wants"
ln -s /lib/systemd/system/btscrash-sd-test.service "$e/multi-user.target.wants/"
# No udev here: gettys would wait 90 s for their tty's .device unit.
for u in getty@tty1.service serial-getty@ttyS0.service serial-getty@ttyS1.service; do
	ln -s /dev/null "$e/$u"
done
# The crash: tests/crasher.c (static, a real call chain into NULL),
# world-readable so uid 1000 dumps it (an unreadable exe is not dumpable).
gcc -static -g -O0 -fno-omit-frame-pointer -o "$o/usr/local/bin/crasher" "$src/tests/crasher.c" -pthread
chmod 0755 "$o/usr/local/bin/crasher"
cp "$o/usr/local/bin/crasher" "$out/crasher"
# The stock kernel's NIC module, loaded by systemd-modules-load (depmod's
# index made here: the root has no kmod; the patched kernel has virtio-net
# built in), and journal-upload pointed at the central host: this
# machine, 10.0.2.2 on QEMU's user network.
if [ "$mode" != companion ]; then
	m=$(find "$kdir/x/lib/modules" -name "e1000.ko*" | head -n 1)
	[ -n "$m" ] || { log "no e1000 module in $kpkg"; exit 1; }
	install -D -m 0644 "$m" "$o/usr/lib/modules/$kver/${m#"$kdir/x/lib/modules/$kver/"}"
	cp "$kdir/x/lib/modules/$kver"/modules.order "$kdir/x/lib/modules/$kver"/modules.builtin* \
		"$o/usr/lib/modules/$kver/"
	ln -s usr/lib "$o/lib"	# for depmod only: a lib/ in the cpio would replace the root's link
	depmod -b "$o" "$kver"
	rm "$o/lib"
	mkdir -p "$o/etc/modules-load.d"
	echo e1000 > "$o/etc/modules-load.d/e1000.conf"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[Upload]\nURL=http://10.0.2.2:%s\n' "$port" > "$o/etc/systemd/journal-upload.conf"
# A kdump vmcore as kdump-tools leaves it, for btsdumpd-harvest.service.
mkdir -p "$o/var/crash/202611230800"
python3 "$src/tests/make-vmcore.py" elf "$o/var/crash/202611230800/dump.202611230800"
chmod 0600 "$o/var/crash/202611230800/dump.202611230800"
(cd "$o" && find . | cpio -o -H newc -R 0:0 --quiet | zstd -q -3) > "$work/overlay.cpio.zst"
cat "$work/root.cpio" "$work/overlay.cpio.zst" > "$work/initrd"
rm -f "$work/root.cpio"

# --- the central host: journal-remote here takes what the VM uploads ---
mkdir "$out/central"
/lib/systemd/systemd-journal-remote --listen-http="127.0.0.1:$port" \
	--output="$out/central/remote.journal" --split-mode=none 2>"$out/journal-remote.log" &
remote_pid=$!

# --- boot; the guest powers off after writing BTSCRASH-SD-END on ttyS1 ---
printf '%s %s\n' "$KERNEL" "$vmlinuz" >"$out/kernel.txt"
log "booting $vmlinuz under TCG ($qemu)"
t0=$(date +%s)
: > "$out/console.log"
: > "$work/results.txt"
# shellcheck disable=SC2086
$qemu -accel tcg,thread=single $qemu_cpu -m 2G -smp 1 \
	-display none -monitor none -no-reboot \
	-serial "file:$out/console.log" -serial "file:$work/results.txt" \
	-nic user,model=$nic \
	-kernel "$vmlinuz" -initrd "$work/initrd" \
	-append "console=ttyS0 rdinit=/lib/systemd/systemd systemd.unit=multi-user.target systemd.firstboot=off systemd.show_status=yes panic=-1 loglevel=4 $kargs" &
qemu_pid=$!
limit=${BTSCRASH_SD_TIMEOUT:-900}
# the PMU model: every user branch through the LBR model under TCG
# (on a loaded 2-core host, lbr's purge and reinstall took 480 s, the
# whole run over 1500 s)
case $mode in lbr|companion-lbr) limit=${BTSCRASH_SD_TIMEOUT:-3000} ;; esac
ended=
while kill -0 "$qemu_pid" 2>/dev/null; do
	if grep -q '^BTSCRASH-SD-END' "$work/results.txt"; then
		ended=$(date +%s)
		# a clean poweroff, else killed after 60 s
		timeout 60 tail --pid="$qemu_pid" -f /dev/null || true
		break
	fi
	[ $(($(date +%s) - t0)) -lt "$limit" ] || { log "timed out after $limit s"; break; }
	vm_boot_failed "$out/console.log" && break
	sleep 2
done
if kill -0 "$qemu_pid" 2>/dev/null; then
	[ -n "$ended" ] && echo "run-systemd-vm: QEMU killed: no poweroff 60 s after the end marker" >> "$out/console.log"
	kill "$qemu_pid"
fi
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
kill "$remote_pid" 2>/dev/null || true
wait "$remote_pid" 2>/dev/null || true
remote_pid=
log "VM ran $(($(date +%s) - t0)) s"
[ -n "$ended" ] || { tail -n 40 "$out/console.log" >&2; log "the VM did not finish"; exit 1; }
tr -d '\r' < "$work/results.txt" |
	sed -n '/^BTSCRASH-SD-BEGIN/,/^BTSCRASH-SD-END/p' | sed '1d;$d' |
	base64 -d | tar -xzf - -C "$out"

# --- on the central host, the operator's btsdumpctl (this run's
# btscrash-tools, unpacked) reads what journal-remote received ---
# (the lean modes upload nothing)
case $mode in lbr|companion-lbr) exit 0 ;; esac
dpkg-deb -x "$(ls "$work"/debs/btscrash-tools_*.deb)" "$work/tools"
ctl="$work/tools/usr/bin/btsdumpctl"
"$ctl" -D "$out/central" list >"$out/central-list.txt" 2>&1; echo "exit $?" >>"$out/central-list.txt"
"$ctl" -D "$out/central" --json list >"$out/central-list.json" 2>"$out/central-list.err"
"$ctl" -D "$out/central" info crasher >"$out/central-info.txt" 2>&1; echo "exit $?" >>"$out/central-info.txt"
journalctl --file "$out/central/remote.journal" -o json --no-pager \
	MESSAGE_ID=6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a >"$out/central-journal.json" 2>&1 || true
