#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs, from Debian 12's archive, every package the user-space build,
# the tests and the demo need.  Idempotent: installs only what is missing.
# Runs apt-get as root (directly, or through sudo).  `install-deps.sh qemu`
# installs only what scripts/qemu-build.sh needs to fetch, patch and build the
# BTS model (Debian's QEMU 7.2 source) and run it (firmware); `install-deps.sh
# kernel` adds to the user-space set what the kernel build and the QEMU test
# VM need, the model's build included (and Debian's perf, which the PMU
# model's VM test runs in the guest).  `install-deps.sh crash` installs what
# scripts/crash-build.sh needs to fetch and build crash 8.0.6 (Debian 13's
# source; its build-depends, all in Debian 12), which `kernel` adds too.
set -eu
pkgs="meson ninja-build pkg-config gcc g++ libc6-dev libelf-dev libdw-dev zlib1g-dev
libcapstone-dev libzydis-dev elfutils binutils gdb python3 valgrind clang
libclang-rt-14-dev time libzstd-dev zstd libsystemd-dev systemd libjson-c-dev
libacl1-dev libcap-ng-dev liblzo2-dev libsnappy-dev liblzma-dev liblz4-dev lz4
xz-utils dpkg-dev debhelper help2man lintian systemd-journal-remote libiberty-dev
git cpio libbpf-dev bpftool libgcrypt20-dev"
qemu_pkgs="dpkg-dev xz-utils patch ccache gcc libc6-dev make pkg-config
ninja-build meson python3 python3-venv zlib1g-dev libfdt-dev libglib2.0-dev
libpixman-1-dev libslirp-dev qemu-system-x86 qemu-system-data seabios ipxe-qemu"
crash_pkgs="apt dpkg-dev ccache gcc g++ make patch bison flex gawk texinfo
binutils-dev zlib1g-dev libncurses-dev liblzo2-dev libsnappy-dev libzstd-dev
debian-archive-keyring"
case "${1:-}" in
qemu) pkgs=$qemu_pkgs ;;
crash) pkgs=$crash_pkgs ;;
kernel) pkgs="$pkgs linux-source-6.1 linux-source-6.12 ccache make bc bison flex
libssl-dev dwarves xz-utils patch qemu-system-x86 busybox-static cpio
kexec-tools makedumpfile crash debootstrap kmod gcc-multilib linux-perf perl
$qemu_pkgs $crash_pkgs" ;;
esac
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
