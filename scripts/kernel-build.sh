#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the test kernel: Debian's linux-source-$KERNEL (6.12 or 6.1),
# extracted once into a cache, plus this repository's kernel work (new files
# copied in at their kernel paths, the version's hook series applied:
# kernel/patches/series for 6.1, kernel/patches-6.12/series for 6.12),
# configured from tinyconfig + kernel/config/btscrash-vm.config (+ the
# version's kernel/config/$KERNEL/ companion of each fragment), built with
# ccache into a separate object directory.  Prints the object directory
# (bzImage, vmlinux) on success; when nothing changed since its last build,
# without running make.
# The one fragment carries what the systemd VM tests need too (cgroups,
# AF_UNIX, namespaces...: kernel/README.md), so there is one test kernel
# per version, not a second one for systemd.
# VARIANT vanilla: the pristine tree (no btscrash at all) with the vm
# fragment's other options, the baseline of bench/vm-bench.sh.
# One fingerprint of the inputs ($obj/.btscrash-inputs) decides both
# steps, by content, never by mtime (a fresh worktree's files are all
# new, and the shared cache would be rebuilt for it): configure again
# when its configure lines (variant, series, fragments) changed; run make
# when any line did (also the compiler, the added files, the .config).
# The series is applied exactly (no fuzz, no offset): a hunk that does
# not fit stops the build with the patch's name and file, and the Debian
# version found against the one the series was rebased on (its
# directory's debian-version; scripts/kernel-rebase.sh moves it).
# Usage: kernel-build.sh [vm|vanilla]  (default vm)
#        kernel-build.sh --inputs [vm|vanilla]: prints the fingerprint
#        and whether a build would configure ("configure: yes" or "no")
#        and run make ("make: yes" or "no"), and exits; nothing is built
#        or written (tests/test-kernel-build.sh).
# Env: KERNEL (6.12 or 6.1; default 6.12), BTSCRASH_CACHE (default
# ~/.cache/btscrash), JOBS.
set -eu
inputs=
[ "${1:-}" != --inputs ] || { inputs=1; shift; }
variant=${1:-vm}
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
jobs=${JOBS:-$(nproc)}
ver=${KERNEL:-6.12}
. "$src/scripts/series-lib.sh"
patches=$(series_dir "$ver") || exit 2
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

# The inputs' fingerprint, computed once, one "name: id" line each: what
# the object directory is configured from (the variant, the hook series,
# the fragments with their paths in the repository), then what else a
# build is made of (the compiler, the added files).
# The source is Debian's package as installed now: its version is an
# input (a point release moves it), and the series records the one it
# was rebased on (kernel/README.md, "When Debian moves").
# Installed first (not for --inputs, which writes nothing), so that the
# version read is the one built.
[ -n "$inputs" ] || "$src/scripts/install-deps.sh" kernel >&2	# stdout: the object directory only
debver=$(dpkg-query -W -f='${Version}' "linux-source-$ver" 2>/dev/null || true)
based=$(series_based "$patches")
series_id=$( { echo "linux-source-$ver $debver"; cat "$patches"/series "$patches"/*.patch; } 2>/dev/null |
	sha1sum | cut -c1-12)
paths=
for f in $frags; do
	for path in "$src/kernel/config/$f" "$src/kernel/config/$ver/$f"; do
		[ ! -f "$path" ] || paths="$paths $path"
	done
done
config_id=$(for path in $paths; do echo "${path#"$src"/}"; cat "$path"; done |
	{ echo "$variant"; cat; } | sha1sum | cut -c1-12)
gcc_id=$(gcc --version | head -n 1)
files_id=$(for f in $new_files; do echo "$f"; cat "$src/$f" 2>/dev/null; done |
	sha1sum | cut -c1-12)
conf_print=$(printf 'variant: %s\nseries: %s\nconfig: %s' "$variant" "$series_id" "$config_id")
build_print=$(printf 'gcc: %s\nfiles: %s' "$gcc_id" "$files_id")
stamp=$obj/.btscrash-inputs

# option_lines: the fragments' option lines, set or "is not set" (the
# vanilla variant's without the BTS_CRASH options).
option_lines() {
	# shellcheck disable=SC2086
	cat $paths | grep -E '^CONFIG_|^# CONFIG_.* is not set$' |
		if [ "$variant" = vanilla ]; then grep -v '^CONFIG_BTS_CRASH'; else cat; fi
}

# missing: the option lines the object directory's .config lacks.
missing() {
	option_lines | while read -r line; do
		grep -qx "$line" "$obj/.config" || echo "$line"; done
}

# built_print: the whole fingerprint of a build from the current .config.
built_print() {
	printf '%s\n%s\ndotconfig: %s\n' "$conf_print" "$build_print" \
		"$(sha1sum < "$obj/.config" | cut -c1-12)"
}

# stamped: the object directory's fingerprint.  One stamped by the
# scripts before it (.btscrash-series, -config: the same series and
# config ids; .btscrash-built: a digest of variant, series, compiler,
# .config and the added files) is read as the lines they are equivalent
# to, so the shared cache is neither configured nor built again for it.
stamped() {
	if [ -f "$stamp" ]; then cat "$stamp"; return; fi
	[ "$(cat "$obj/.btscrash-series" 2>/dev/null)" = "$series_id" ] &&
	[ "$(cat "$obj/.btscrash-config" 2>/dev/null)" = "$config_id" ] || return 0
	old=$( { echo "$variant $series_id"; echo "$gcc_id"; cat "$obj/.config"
		for f in $new_files; do cat "$src/$f" 2>/dev/null; done; } |
		sha1sum | cut -c1-12)
	if [ "$(cat "$obj/.btscrash-built" 2>/dev/null)" = "$old" ]; then
		built_print; else echo "$conf_print"; fi
}

# stamp WHAT: keeps WHAT as the object directory's fingerprint.
stamp() {
	printf '%s\n' "$1" > "$stamp.tmp" && mv "$stamp.tmp" "$stamp"
	rm -f "$obj/.btscrash-series" "$obj/.btscrash-config" "$obj/.btscrash-built"
}

# configured: whether the object directory's .config is from these inputs.
configured() {
	[ -f "$obj/.config" ] && [ "$(stamped | head -n 3)" = "$conf_print" ]
}

# built: whether its bzImage is from these inputs and this .config.
built() {
	[ -f "$obj/arch/x86/boot/bzImage" ] && [ "$(stamped)" = "$(built_print)" ]
}

# tree_current: whether the work tree has this series and the added files.
tree_current() {
	[ "$(cat "$tree/.btscrash-series" 2>/dev/null)" = "$series_id" ] || return 1
	for f in $new_files; do
		[ ! -f "$src/$f" ] || cmp -s "$src/$f" "$tree/$f" || return 1
	done
}

if [ -n "$inputs" ]; then
	printf '%s\n%s\n' "$conf_print" "$build_print"
	if configured; then echo "configure: no"; else echo "configure: yes"; fi
	if configured && tree_current && built; then echo "make: no"; else echo "make: yes"; fi
	exit 0
fi

[ "$debver" = "$based" ] ||
	log "linux-source-$ver is $debver, the series was rebased on $based (test kernel-series fails on it; scripts/kernel-rebase.sh $ver)"
mkdir -p "$cache"
# One build at a time in the shared cache (tests and demos may overlap).
exec 9>"$cache/.lock"
flock 9
# The pristine tree of the package installed now: extracted again when
# apt moved it (tests read this tree as Linux $ver's own).
if [ "$(cat "$pristine/.debian-version" 2>/dev/null)" != "$debver" ]; then
	log "extracting $tarball ($debver)"
	rm -rf "$pristine.tmp" && mkdir "$pristine.tmp"
	tar -xJf "$tarball" -C "$pristine.tmp" --strip-components=1
	echo "$debver" > "$pristine.tmp/.debian-version"
	rm -rf "$pristine" && mv "$pristine.tmp" "$pristine"
fi

# Recreate the work tree when the patch series changed: hard links keep the
# pristine mtimes, so only what the patches touch is rebuilt.
changed=	# set when this run changes the tree or the configuration
tree_current || changed=1
if [ "$(cat "$tree/.btscrash-series" 2>/dev/null)" != "$series_id" ]; then
	log "preparing work tree (series $series_id)"
	rm -rf "$tree" && cp -al "$pristine" "$tree"
	series_apply "$tree" "$patches" kernel-build "linux-source-$ver" "$debver" \
		"rebase it (scripts/kernel-rebase.sh $ver, kernel/README.md)" ||
		{ rm -rf "$tree"; exit 1; }
	echo "$series_id" > "$tree/.btscrash-series"
fi
for f in $new_files; do
	[ -f "$src/$f" ] || continue
	cmp -s "$src/$f" "$tree/$f" || { rm -f "$tree/$f"; cp "$src/$f" "$tree/$f"; }
done

mkdir -p "$obj"
[ "$variant" != vanilla ] || tree=$pristine	# Linux as released: no BTS_CRASH options
if ! configured; then
	log "configuring ($variant: $frags)"
	rm -f "$stamp"
	conf=$paths
	if [ "$variant" = vanilla ]; then
		# shellcheck disable=SC2086
		grep -hv '^CONFIG_BTS_CRASH' $paths > "$obj/vanilla.config"
		conf=$obj/vanilla.config
	fi
	changed=1
	make -s -C "$tree" O="$obj" tinyconfig >/dev/null
	# shellcheck disable=SC2086
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $conf >/dev/null
	make -s -C "$tree" O="$obj" olddefconfig >/dev/null
	# Every option line, set or "is not set": one this version lacks or
	# olddefconfig dropped is missing from .config, and an error.
	lost=$(missing)
	[ -z "$lost" ] || { log "options that did not stick: $lost"; exit 1; }
fi
# Every VM test calls this script: make's walk of an unchanged tree took
# 8.9 s of CPU (50 s under the lock on a loaded host), ~75 times a CI
# run.  Skipped when this run changed nothing and the last build was of
# the same fingerprint (one stamped by the old files: kept as the new).
if [ -z "$changed" ] && built; then
	[ -f "$stamp" ] || stamp "$(built_print)"
	log "$variant is up to date (build $files_id)"
	echo "$obj"
	exit 0
fi
stamp "$conf_print"	# configured; the build lines once make succeeded
log "building $variant with $jobs jobs"
# ccache's depend mode: on a miss no preprocessor run of its own (the
# compiler's -MD output names the headers).  A cold 6.12 build took 1201 s
# of CPU with ccache's default mode, 930 s without ccache and 935 s in
# depend mode, whose cache a second build hit (2026-11-27).
CCACHE_DEPEND=${CCACHE_DEPEND:-1} \
make -s -C "$tree" O="$obj" -j"$jobs" CC="ccache gcc" bzImage >&2
stamp "$(built_print)"
echo "$obj"
