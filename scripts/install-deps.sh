#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs, from Debian 12's archive, every package the user-space build,
# the tests and the demo need.  Idempotent: installs only what is missing.
# Runs apt-get as root (directly, or through sudo).  `install-deps.sh kernel`
# adds what the kernel build and the QEMU test VM need.
set -eu
pkgs="meson ninja-build pkg-config gcc libc6-dev libelf-dev libdw-dev zlib1g-dev
libcapstone-dev elfutils binutils gdb python3 valgrind clang
libclang-rt-14-dev time libzstd-dev zstd libsystemd-dev systemd"
[ "${1:-}" = kernel ] && pkgs="$pkgs linux-source-6.1 ccache make bc bison flex
libssl-dev dwarves xz-utils patch qemu-system-x86 busybox-static cpio
kexec-tools makedumpfile crash debootstrap"
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
