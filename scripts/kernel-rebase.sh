#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rebases a hook series (kernel/patches for 6.1, kernel/patches-6.12 for
# 6.12) on the Debian linux-source-VERSION installed now, for when Debian
# moves a point release and scripts/kernel-build.sh refuses the series
# (it takes only hunks that apply exactly).  In a scratch git tree of the
# installed source, applies each patch in series order with fuzz allowed,
# says every hunk that needed fuzz or an offset (a person reads each of
# those: fuzz may put a hunk in the wrong place), then rewrites the
# patch's diff from the tree (its description kept) and records the
# package's version in the series directory (debian-version).  A hunk
# that does not apply stops it with the patch's name and its .rej: fix
# that patch's diff by hand and run it again.  Review with `git diff`.
# Usage: kernel-rebase.sh 6.1|6.12   Env: BTSCRASH_CACHE.
set -eu
ver=${1:?usage: kernel-rebase.sh 6.1|6.12}
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
. "$src/scripts/series-lib.sh"
patches=$(series_dir "$ver") || exit 2
log() { echo "kernel-rebase: $*" >&2; }
tarball=/usr/src/linux-source-$ver.tar.xz
debver=$(dpkg-query -W -f='${Version}' "linux-source-$ver" 2>/dev/null) && [ -f "$tarball" ] ||
	{ log "needs linux-source-$ver: apt-get install linux-source-$ver"; exit 1; }
was=$(series_based "$patches")
work=$cache/rebase-$ver order=$cache/rebase-$ver.order
rm -rf "$work" && mkdir -p "$work"
log "extracting linux-source-$ver $debver (the series was on $was)"
tar -xJf "$tarball" -C "$work" --strip-components=1
g() { git -C "$work" -c user.name=rebase -c user.email=rebase@localhost "$@"; }
# Debian's tree ignores everything (/* in its .gitignore): add by force
g init -q && g add -f -A && g commit -qm "linux-source-$ver $debver"

review=0
for p in $(grep -v '^#' "$patches/series" | sed '/^$/d'); do
	head=$(sed '/^---$/q' "$patches/$p")
	out=$(sed '1,/^---$/d' "$patches/$p" |
		patch -d "$work" -p1 -F3 --no-backup-if-mismatch 2>&1) || {
		echo "$out" | sed "s|^|$p: |" >&2
		log "stops at $p: a hunk does not apply (the .rej files under $work); fix its diff and run again"
		exit 1
	}
	if echo "$out" | grep -qE 'fuzz|offset'; then
		echo "$out" | grep -E '^patching|fuzz|offset' | sed "s|^|$p: review: |" >&2
		review=$((review + 1))
	fi
	g add -f -A
	# the diff in the series' form: ---/+++ headers, no git extended
	# lines, its files in the patch's own order
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patches/$p" > "$order"
	{ printf '%s\n' "$head"
	  g diff --cached --no-renames --no-color -O"$order" |
		grep -vE '^(diff --git|index [0-9a-f]|new file mode|deleted file mode)'
	} > "$patches/$p.tmp"
	mv "$patches/$p.tmp" "$patches/$p"
	g commit -qm "$p"
done
echo "$debver" > "$patches/debian-version"
log "$ver rebased on $debver; $review patches had hunks to review (above); see git diff $patches"
rm -rf "$work" "$order"
