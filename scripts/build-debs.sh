#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds btscrash's Debian packages (debian/) from this tree into OUTDIR:
# the tracked files as they are now (committed or not; untracked files are
# left out, as a clean clone would have them) are exported to a scratch
# directory and built there with dpkg-buildpackage -us -uc -b, so the
# checkout gets no obj-*/ or debian/tmp.  Prints the .changes file's path.
# Environment: DEB_BUILD_OPTIONS as dpkg-buildpackage takes it (nocheck:
# skip the unit suite the package build runs).
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
git -C "$src" archive "${rev:-HEAD}" | tar -x -C "$work/btscrash"
(cd "$work/btscrash" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
	tail -n 40 "$work/build.log" >&2
	echo "build-debs: dpkg-buildpackage failed" >&2
	exit 1; }
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
cp "$work/build.log" "$out/build.log"
ls "$out"/*.changes
