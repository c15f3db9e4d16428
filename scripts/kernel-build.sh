#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the test kernel: Debian's linux-source-6.1, extracted once into a
# cache, plus this repository's kernel work (new files copied in at their
# kernel paths, kernel/patches/series applied), configured from tinyconfig +
# kernel/config/btscrash-vm.config, built with ccache into a separate object
# directory.  Prints the object directory (bzImage, vmlinux) on success.
# VARIANT systemd: the same tree and fragment plus btscrash-systemd.config
# (what a real systemd needs), in an object directory of its own.
# VARIANT vanilla: the pristine tree (no btscrash at all) with the vm
# fragment's other options, the baseline of bench/vm-bench.sh.
# Usage: kernel-build.sh [vm|systemd|vanilla]  (default vm)
# Env: BTSCRASH_CACHE (default ~/.cache/btscrash), JOBS.
set -eu
variant=${1:-vm}
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
jobs=${JOBS:-$(nproc)}
tarball=/usr/src/linux-source-6.1.tar.xz
pristine=$cache/linux-6.1-pristine
tree=$cache/linux-6.1
case $variant in
vm) obj=$cache/obj-6.1; frags="btscrash-vm.config" ;;
systemd) obj=$cache/obj-6.1-systemd; frags="btscrash-vm.config btscrash-systemd.config" ;;
vanilla) obj=$cache/obj-6.1-vanilla; frags="btscrash-vm.config" ;;
*) echo "kernel-build: VARIANT is vm, systemd or vanilla, not $variant" >&2; exit 2 ;;
esac
log() { echo "kernel-build: $*" >&2; }

# Files this repository adds to the kernel, at their kernel paths.
new_files="arch/x86/kernel/ds.c arch/x86/include/asm/ds.h kernel/bts_crash.c
include/linux/bts_crash.h include/uapi/linux/bts_crash.h kernel/bts_crash_test.c
arch/x86/kernel/ds_test.c"

"$src/scripts/install-deps.sh" kernel >&2	# stdout: the object directory only
mkdir -p "$cache"
# One build at a time in the shared cache (tests and demos may overlap).
exec 9>"$cache/.lock"
flock 9
if [ ! -d "$pristine" ]; then
	log "extracting $tarball (once)"
	rm -rf "$pristine.tmp" && mkdir "$pristine.tmp"
	tar -xJf "$tarball" -C "$pristine.tmp" --strip-components=1
	mv "$pristine.tmp" "$pristine"
fi

# Recreate the work tree when the patch series changed: hard links keep the
# pristine mtimes, so only what the patches touch is rebuilt.
series_id=$(cat "$src"/kernel/patches/series "$src"/kernel/patches/*.patch 2>/dev/null | sha1sum | cut -c1-12)
if [ "$(cat "$tree/.btscrash-series" 2>/dev/null)" != "$series_id" ]; then
	log "preparing work tree (series $series_id)"
	rm -rf "$tree" && cp -al "$pristine" "$tree"
	if [ -f "$src/kernel/patches/series" ]; then
		grep -v '^#' "$src/kernel/patches/series" | while read -r p; do
			[ -n "$p" ] || continue
			log "applying $p"
			patch -d "$tree" -p1 -s --no-backup-if-mismatch \
				< "$src/kernel/patches/$p"
		done
	fi
	echo "$series_id" > "$tree/.btscrash-series"
fi
for f in $new_files; do
	[ -f "$src/$f" ] || continue
	cmp -s "$src/$f" "$tree/$f" || { rm -f "$tree/$f"; cp "$src/$f" "$tree/$f"; }
done

mkdir -p "$obj"
paths=
newer=
for f in $frags; do
	paths="$paths $src/kernel/config/$f"
	[ ! -f "$obj/.config" ] || [ ! "$src/kernel/config/$f" -nt "$obj/.config" ] || newer=1
done
if [ "$variant" = vanilla ]; then	# Linux as released: no BTS_CRASH options
	tree=$pristine
	# shellcheck disable=SC2086
	grep -hv '^CONFIG_BTS_CRASH' $paths > "$obj/vanilla.config"
	paths=$obj/vanilla.config
fi
if [ ! -f "$obj/.config" ] || [ -n "$newer" ] ||
   [ "$(cat "$obj/.btscrash-series" 2>/dev/null)" != "$series_id" ]; then
	log "configuring ($variant: $frags)"
	make -s -C "$tree" O="$obj" tinyconfig >/dev/null
	# shellcheck disable=SC2086
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $paths >/dev/null
	make -s -C "$tree" O="$obj" olddefconfig >/dev/null
	# shellcheck disable=SC2086
	missing=$(cat $paths | grep '^CONFIG_' | while read -r line; do
		grep -qx "$line" "$obj/.config" || echo "$line"; done)
	[ -z "$missing" ] || { log "options that did not stick: $missing"; exit 1; }
	echo "$series_id" > "$obj/.btscrash-series"
fi
log "building $variant with $jobs jobs"
make -s -C "$tree" O="$obj" -j"$jobs" CC="ccache gcc" bzImage >&2
echo "$obj"
