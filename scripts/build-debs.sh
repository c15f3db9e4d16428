#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds btscrash's Debian packages (debian/) from this tree into OUTDIR:
# the tracked files as they are now (committed or not; untracked files are
# left out, as a clean clone would have them) are exported to a scratch
# directory and built there with dpkg-buildpackage -us -uc -b, so the
# checkout gets no obj-*/ or debian/tmp.  Prints the .changes file's path.
# Environment: DEB_BUILD_OPTIONS as dpkg-buildpackage takes it (nocheck:
# skip the unit suite the package build runs); BTSCRASH_DEBS_CACHE=DIR
# (meson sets it for the tests that build packages: debian and the six
# systemd-vm tests, which built the same packages seven times a run, 42 s
# of CPU each): one build per tree and options, kept in DIR/ID (the last
# one only) under a lock, copied to OUTDIR.
# Usage: scripts/build-debs.sh OUTDIR
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-debs.sh OUTDIR}
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || {
	echo "build-debs: needs dpkg-dev and debhelper: apt-get install dpkg-dev debhelper" >&2
	exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/btscrash"
# the working tree's tracked files: a stash commit holds uncommitted edits
rev=$(git -C "$src" stash create 2>/dev/null || true)
rev=${rev:-HEAD}

# build: the packages of $rev into $work (.deb, .changes, .buildinfo,
# build.log)
build() {
	git -C "$src" archive "$rev" | tar -x -C "$work/btscrash"
	(cd "$work/btscrash" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
		tail -n 40 "$work/build.log" >&2
		echo "build-debs: dpkg-buildpackage failed" >&2
		exit 1; }
}

# the built files from $1 into OUTDIR, the .changes file's path printed
deliver() {
	rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
	cp "$1"/*.deb "$1"/*.changes "$1"/*.buildinfo "$1/build.log" "$out"/
	ls "$out"/*.changes
}

cache=${BTSCRASH_DEBS_CACHE:-}
if [ -z "$cache" ]; then
	build
	deliver "$work"
	exit 0
fi
# what the packages are made of: the tree's content and the options
id=$( { git -C "$src" rev-parse "$rev^{tree}"; echo "${DEB_BUILD_OPTIONS:-}"; } |
	sha1sum | cut -c1-12)
mkdir -p "$cache"
exec 9>"$cache/.lock"	# tests run two at a time: one builds, the other waits
flock 9
if [ ! -f "$cache/$id/done" ]; then
	build
	find "$cache" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
	mkdir "$cache/$id.tmp"
	mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$work/build.log" "$cache/$id.tmp/"
	touch "$cache/$id.tmp/done"
	mv "$cache/$id.tmp" "$cache/$id"
fi
deliver "$cache/$id"
