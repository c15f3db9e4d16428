#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the test kernel: Debian's linux-source-$KERNEL (6.12 or 6.1),
# extracted once into a cache, plus this repository's kernel work (new files
# copied in at their kernel paths, the version's hook series applied:
# kernel/patches/series for 6.1, kernel/patches-6.12/series for 6.12),
# configured from tinyconfig + kernel/config/btscrash-vm.config (+ the
# version's kernel/config/$KERNEL/ companion of each fragment), built with
# ccache into a separate object directory.  Prints the object directory
# (bzImage, vmlinux) on success.
# The one fragment carries what the systemd VM tests need too (cgroups,
# AF_UNIX, namespaces...: kernel/README.md), so there is one test kernel
# per version, not a second one for systemd.
# VARIANT vanilla: the pristine tree (no btscrash at all) with the vm
# fragment's other options, the baseline of bench/vm-bench.sh.
# Usage: kernel-build.sh [vm|vanilla]  (default vm)
# Env: KERNEL (6.12 or 6.1; default 6.12), BTSCRASH_CACHE (default
# ~/.cache/btscrash), JOBS.
set -eu
variant=${1:-vm}
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
jobs=${JOBS:-$(nproc)}
ver=${KERNEL:-6.12}
case $ver in
6.1) patches=$src/kernel/patches ;;
6.12) patches=$src/kernel/patches-6.12 ;;
*) echo "kernel-build: KERNEL is 6.1 or 6.12, not $ver" >&2; exit 2 ;;
esac
tarball=/usr/src/linux-source-$ver.tar.xz
pristine=$cache/linux-$ver-pristine
tree=$cache/linux-$ver
case $variant in
vm) obj=$cache/obj-$ver; frags="btscrash-vm.config" ;;
vanilla) obj=$cache/obj-$ver-vanilla; frags="btscrash-vm.config" ;;
*) echo "kernel-build: VARIANT is vm or vanilla, not $variant" >&2; exit 2 ;;
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
series_id=$(cat "$patches"/series "$patches"/*.patch 2>/dev/null | sha1sum | cut -c1-12)
if [ "$(cat "$tree/.btscrash-series" 2>/dev/null)" != "$series_id" ]; then
	log "preparing work tree (series $series_id)"
	rm -rf "$tree" && cp -al "$pristine" "$tree"
	if [ -f "$patches/series" ]; then
		grep -v '^#' "$patches/series" | while read -r p; do
			[ -n "$p" ] || continue
			log "applying $p"
			patch -d "$tree" -p1 -s --no-backup-if-mismatch \
				< "$patches/$p"
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
	for path in "$src/kernel/config/$f" "$src/kernel/config/$ver/$f"; do
		[ -f "$path" ] || continue
		paths="$paths $path"
		[ ! -f "$obj/.config" ] || [ ! "$path" -nt "$obj/.config" ] || newer=1
	done
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
	# Every option line, set or "is not set": one this version lacks or
	# olddefconfig dropped is missing from .config, and an error.
	missing=$(cat $paths | grep -E '^CONFIG_|^# CONFIG_.* is not set$' | while read -r line; do
		grep -qx "$line" "$obj/.config" || echo "$line"; done)
	[ -z "$missing" ] || { log "options that did not stick: $missing"; exit 1; }
	echo "$series_id" > "$obj/.btscrash-series"
fi
log "building $variant with $jobs jobs"
make -s -C "$tree" O="$obj" -j"$jobs" CC="ccache gcc" bzImage >&2
echo "$obj"
