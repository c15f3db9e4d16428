#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots a real systemd (Debian 12, debootstrap minbase) under QEMU TCG with
# btsdumpd installed as a package would install it (systemd/: units enabled,
# sysctl.d, tmpfiles.d), runs tests/vm/systemd/btscrash-sd-test.sh in it
# (a crash as uid 1000, a synthetic kdump vmcore for the harvest unit) and
# extracts what it collected into OUTDIR (checked by check-systemd-vm.py).
#
# The root is built once and cached as a compressed cpio in
# ${BTSCRASH_CACHE:-~/.cache/btscrash} (rebuilt when $root_pkgs or
# $root_rev change); each run appends a second cpio with btsdumpd, the
# units and the test (the kernel unpacks concatenated archives in order).
# The whole root is the initramfs (rdinit=systemd), so Debian's stock
# kernel (apt-get download, never installed: the host's /boot is untouched)
# boots it without a disk driver or any module.  Stock kernel: cores carry
# no btscrash trace note, entries say TRACE=absent.
# Results come back base64'd on a second serial port (ttyS1), apart from
# the console (ttyS0, OUTDIR/console.log).
# Usage: run-systemd-vm.sh BTSDUMPD BTSDUMPCTL OUTDIR (recreated)
set -eu
btsdumpd=$1 btsdumpctl=$2 out=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
# Runtime libraries of btsdumpd/btsdumpctl (ldd | dpkg -S): libelf1 libdw1
# libcapstone4 libzstd1 libsystemd0, liblzo2-2 libsnappy1v5 (the vmcore
# reader's page codecs; zlib1g, liblzma5, libbz2-1.0, libcap2,
# libgcrypt20, liblz4-1 come with minbase or systemd); acl for getfacl.
root_pkgs="systemd libelf1 libdw1 libcapstone4 libzstd1 libsystemd0 liblzo2-2 libsnappy1v5 acl"
root_rev=1	# bump when the root's recipe below changes
mirror=http://deb.debian.org/debian
log() { echo "run-systemd-vm: $*" >&2; }

"$src/scripts/install-deps.sh" kernel >&2
rm -rf "$out"
mkdir -p "$cache" "$out"
work=$(mktemp -d)
qemu_pid=
cleanup() {
	if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the cached root and kernel (one builder at a time, own lock: the
# kernel build's $cache/.lock can be held for minutes) ---
key=$(echo "$root_pkgs $root_rev" | sha1sum | cut -c1-12)
rootcpio=$cache/systemd-root.cpio.zst
exec 8>"$cache/.systemd-root.lock"
flock 8
if [ ! -f "$rootcpio" ] || [ "$(cat "$rootcpio.key" 2>/dev/null)" != "$key" ]; then
	log "debootstrap bookworm minbase (once; key $key)"
	t0=$(date +%s)
	rm -rf "$cache/systemd-root.tmp" "$rootcpio" "$rootcpio.key"
	debootstrap --variant=minbase --include="$(echo "$root_pkgs" | tr ' ' ,)" \
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
# Debian's current 6.1 kernel image, unpacked (not installed) in the cache.
kpkg=$(apt-cache depends linux-image-amd64 | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
[ -n "$kpkg" ] || { log "no linux-image-amd64 in apt's lists"; exit 1; }
kdir=$cache/debian-kernel/$kpkg
if [ ! -f "$kdir/done" ]; then
	log "apt-get download $kpkg"
	rm -rf "$cache/debian-kernel" && mkdir -p "$kdir/deb"	# older ABIs go
	(cd "$kdir/deb" && apt-get download -q "$kpkg" >&2 2>&1)
	# only /boot (vmlinuz): no module is needed
	mkdir "$kdir/x"
	dpkg-deb --fsys-tarfile "$kdir"/deb/*.deb | tar -x -C "$kdir/x" ./boot
	rm -rf "$kdir/deb"
	touch "$kdir/done"
fi
flock -u 8
vmlinuz=$(find "$kdir/x/boot" -name "vmlinuz-*" | head -n 1)

# --- this run's overlay: btsdumpd as a package installs it, the test ---
o=$work/overlay
mkdir -m 0755 "$o"
install -D -m 0755 "$btsdumpd" "$o/usr/libexec/btsdumpd"
install -D -m 0755 "$btsdumpctl" "$o/usr/bin/btsdumpctl"
unitdir=$o/usr/lib/systemd/system	# merged /usr: /lib -> usr/lib
for u in btsdumpd.socket btsdumpd@.service btsdumpd-harvest.service; do
	install -D -m 0644 "$src/systemd/$u" "$unitdir/$u"
done
install -D -m 0644 "$src/systemd/50-btsdumpd.conf" "$o/usr/lib/sysctl.d/50-btsdumpd.conf"
install -D -m 0644 "$src/systemd/btsdumpd.tmpfiles" "$o/usr/lib/tmpfiles.d/btsdumpd.conf"
install -D -m 0644 "$src/systemd/btsdumpd.conf" "$o/etc/btsdumpd.conf"
install -D -m 0644 "$src/tests/vm/systemd/btscrash-sd-test.service" \
	"$unitdir/btscrash-sd-test.service"
install -D -m 0755 "$src/tests/vm/systemd/btscrash-sd-test.sh" \
	"$o/usr/local/bin/btscrash-sd-test"
# systemctl enable, as the package's postinst would
e=$o/etc/systemd/system
mkdir -p "$e/sockets.target.wants" "$e/multi-user.target.wants"
ln -s /lib/systemd/system/btsdumpd.socket "$e/sockets.target.wants/"
ln -s /lib/systemd/system/btsdumpd-harvest.service "$e/multi-user.target.wants/"
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
# A kdump vmcore as kdump-tools leaves it, for btsdumpd-harvest.service.
mkdir -p "$o/var/crash/202611230800"
python3 "$src/tests/make-vmcore.py" elf "$o/var/crash/202611230800/dump.202611230800"
chmod 0600 "$o/var/crash/202611230800/dump.202611230800"
(cd "$o" && find . | cpio -o -H newc -R 0:0 --quiet | zstd -q -3) > "$work/overlay.cpio.zst"
cat "$rootcpio" "$work/overlay.cpio.zst" > "$work/initrd"

# --- boot; the guest powers off after writing BTSCRASH-SD-END on ttyS1 ---
log "booting $(basename "$vmlinuz") under TCG"
t0=$(date +%s)
: > "$out/console.log"
: > "$work/results.txt"
qemu-system-x86_64 -accel tcg,thread=single -cpu max -m 2G -smp 1 \
	-display none -monitor none -no-reboot \
	-serial "file:$out/console.log" -serial "file:$work/results.txt" \
	-kernel "$vmlinuz" -initrd "$work/initrd" \
	-append "console=ttyS0 rdinit=/lib/systemd/systemd systemd.unit=multi-user.target systemd.firstboot=off systemd.show_status=yes panic=-1 loglevel=4" &
qemu_pid=$!
limit=${BTSCRASH_SD_TIMEOUT:-900}
ended=
while kill -0 "$qemu_pid" 2>/dev/null; do
	if grep -q '^BTSCRASH-SD-END' "$work/results.txt"; then
		ended=$(date +%s)
		# a clean poweroff, else killed after 60 s
		timeout 60 tail --pid="$qemu_pid" -f /dev/null || true
		break
	fi
	[ $(($(date +%s) - t0)) -lt "$limit" ] || { log "timed out after $limit s"; break; }
	sleep 2
done
if kill -0 "$qemu_pid" 2>/dev/null; then
	[ -n "$ended" ] && echo "run-systemd-vm: QEMU killed: no poweroff 60 s after the end marker" >> "$out/console.log"
	kill "$qemu_pid"
fi
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
log "VM ran $(($(date +%s) - t0)) s"
[ -n "$ended" ] || { tail -n 40 "$out/console.log" >&2; log "the VM did not finish"; exit 1; }
tr -d '\r' < "$work/results.txt" |
	sed -n '/^BTSCRASH-SD-BEGIN/,/^BTSCRASH-SD-END/p' | sed '1d;$d' |
	base64 -d | tar -xzf - -C "$out"
