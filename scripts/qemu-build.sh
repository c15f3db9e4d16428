#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the BTS hardware model: Debian's QEMU 7.2 source (the version of the
# installed qemu-system-x86), fetched and extracted once into a cache with
# Debian's own patches applied, plus qemu/patches/series, configured for
# x86_64-softmmu/TCG only and built with ccache.  Logs to stderr; the last
# line on stdout is the absolute path of the built qemu-system-x86_64.
# Env: BTSCRASH_CACHE (default ~/.cache/btscrash), QEMU_VERSION (a source
# version, default: that of the installed qemu-system-x86), JOBS.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
jobs=${JOBS:-$(nproc)}
patches=$src/qemu/patches
. "$src/scripts/series-lib.sh"
log() { echo "qemu-build: $*" >&2; }

"$src/scripts/install-deps.sh" qemu >&2
# ${source:Version} drops a binNMU suffix (+b3): the source package's version.
version=${QEMU_VERSION:-$(dpkg-query -W -f='${source:Version}' qemu-system-x86)}
upstream=${version#*:}			# no epoch in file and directory names
pristine=$cache/qemu-$upstream-pristine
tree=$cache/qemu-$upstream
build=$cache/qemu-$upstream-build
aptdir=$cache/qemu-apt
mkdir -p "$cache"
# One build at a time in the shared cache (tests and demos may overlap).
exec 9>"$cache/.qemu-lock"
flock 9

# The source comes through apt, from the archive and suites this machine
# already installs from (the security suite included: the version is a
# +deb12uN update), but the machine's apt configuration is not touched: the
# deb-src entries live in a private sources directory in the cache, with
# private lists and package caches, and apt-get is pointed at them for these
# two calls only.  Adding deb-src to /etc/apt would change what every later
# `apt-get update` on the machine fetches.
fetch_source() {
	rm -rf "$aptdir"
	mkdir -p "$aptdir/sources" "$aptdir/lists/partial" \
		"$aptdir/cache/archives/partial" "$aptdir/dl"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*/Types: deb-src/' "$f"
		echo
	done > "$aptdir/sources/btscrash-src.sources"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
	done > "$aptdir/sources/btscrash-src.list"
	set -- -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$aptdir/sources" \
		-o Dir::State::Lists="$aptdir/lists" \
		-o Dir::Cache="$aptdir/cache"
	log "fetching qemu=$version source (private deb-src entries in $aptdir/sources)"
	set -- "$@" -o APT::Sandbox::User=root	# the files are root's
	apt-get -qq "$@" update >&2
	(cd "$aptdir/dl" && apt-get -qq "$@" source --download-only "qemu=$version") >&2
}

# Files the series creates (--- /dev/null): never in a pristine tree.
series_new_files() {
	grep -v '^#' "$patches/series" | while read -r p; do
		[ -n "$p" ] || continue
		awk '/^--- \/dev\/null/ { getline; sub(/^\+\+\+ b\//, ""); print $1 }' "$patches/$p"
	done
}

# A pristine copy that went through the series (the work tree's stamp or a
# file only the series creates, written through a hard link or by hand)
# would make the next series fail as "Reversed patch": extract it again.
if [ -d "$pristine" ]; then
	damaged=
	[ -e "$pristine/.btscrash-series" ] && damaged=.btscrash-series
	for f in $(series_new_files); do
		[ -n "$damaged" ] && break
		[ -e "$pristine/$f" ] && damaged=$f
	done
	if [ -n "$damaged" ]; then
		log "$pristine holds $damaged: not pristine, extracting it again"
		rm -rf "$pristine"
	fi
fi

if [ ! -d "$pristine" ]; then
	dsc=$aptdir/dl/qemu_$upstream.dsc
	[ -f "$dsc" ] || fetch_source
	log "extracting $(basename "$dsc") with Debian's patches (once)"
	rm -rf "$pristine.tmp"
	dpkg-source -q --no-copy -x "$dsc" "$pristine.tmp" >&2
	mv "$pristine.tmp" "$pristine"
fi

# Files a series changes, as named by its patches (+++ b/PATH).
series_files() {
	grep -v '^#' "$patches/series" | while read -r p; do
		[ -n "$p" ] || continue
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patches/$p"
	done
}

# Recreate the work tree when the series changed.  Hard links keep the
# pristine mtimes, so ninja and ccache rebuild only what the patches touch.
# $touched lists every file that may differ from pristine in the last build
# (the series it was built from, and any series that failed since): those
# are copied, not linked, so that a file no longer patched is newer than
# its objects and is rebuilt too.
touched=$cache/qemu-$upstream.touched
series_id=$(cat "$patches/series" "$patches"/*.patch 2>/dev/null | sha1sum | cut -c1-12)
if [ "$(cat "$tree/.btscrash-series" 2>/dev/null)" != "$series_id" ]; then
	log "preparing work tree (series $series_id)"
	{ series_files; cat "$touched" 2>/dev/null || true; } | sort -u > "$touched.tmp"
	mv "$touched.tmp" "$touched"
	rm -rf "$tree" && cp -al "$pristine" "$tree"
	while read -r f; do
		[ -f "$pristine/$f" ] || continue
		cp "$pristine/$f" "$tree/$f.btscrash-tmp"
		mv -f "$tree/$f.btscrash-tmp" "$tree/$f"
	done < "$touched"
	series_apply "$tree" "$patches" qemu-build "qemu" "$version" \
		"rebase qemu/patches on it (qemu/README.md)" || { rm -rf "$tree"; exit 1; }
	# a new file, never one linked with pristine
	rm -f "$tree/.btscrash-series"
	echo "$series_id" > "$tree/.btscrash-series"
fi

# Only what the model needs: one target, TCG, no guest agent or tools, no
# firmware install (Debian's seabios/ipxe packages provide it at run time);
# user networking (libslirp) for the systemd VM's NIC (systemd-vm-companion
# uploads its journal to the host).  -O2 (TCG's speed is the tests') without
# -g: no test reads QEMU's debug information, and it costs 15 % of
# the cold build's CPU (tests/README.md "CI time").
config="--target-list=x86_64-softmmu --without-default-features --disable-docs
--disable-werror --disable-user --enable-tcg --enable-fdt=system --enable-slirp
--disable-install-blobs --disable-debug-info"
# The tree's path too: meson's build directory names it, and a cache moved
# elsewhere (another HOME) made ninja's regeneration fail ("Neither
# directory contains a build file") instead of building again.
config_id=$(echo "$config $upstream $tree" | sha1sum | cut -c1-12)
if [ "$(cat "$build/.btscrash-config" 2>/dev/null)" != "$config_id" ]; then
	log "configuring"
	rm -rf "$build" && mkdir -p "$build"
	# shellcheck disable=SC2086
	(cd "$build" && "$tree/configure" --cc="ccache gcc" $config) >&2
	echo "$config_id" > "$build/.btscrash-config"
fi
log "building with $jobs jobs"
# ccache's depend mode, as kernel-build.sh: no preprocessor run of its own
CCACHE_DEPEND=${CCACHE_DEPEND:-1} ninja -C "$build" -j"$jobs" qemu-system-x86_64 >&2
series_files | sort -u > "$touched"	# all the build now differs in
echo "$build/qemu-system-x86_64"
