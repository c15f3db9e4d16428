#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The exported patch series (scripts/kernel-patches.sh) applies with
# patch -p1 to a pristine Linux 6.1 tree, and yields exactly the files the
# test kernel is built from (scripts/kernel-build.sh's work tree).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
"$src/scripts/kernel-build.sh" >/dev/null 2>&1 || { echo "kernel build failed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
series=$("$src/scripts/kernel-patches.sh" "$tmp/patches")
cp -al "$cache/linux-6.1-pristine" "$tmp/linux"
n=0
while read -r p; do
	n=$((n + 1))
	patch -d "$tmp/linux" -p1 -s --no-backup-if-mismatch -F0 < "$tmp/patches/$p" ||
		{ echo "not ok: $p does not apply"; exit 1; }
done < "$series"
files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$tmp"/patches/*.patch | sort -u)
bad=0
for f in $files; do
	cmp -s "$tmp/linux/$f" "$cache/linux-6.1/$f" || { echo "differs from the built tree: $f"; bad=1; }
done
[ "$bad" = 0 ] || exit 1
echo "$n patches apply; $(echo "$files" | wc -l) files identical to the built tree"
