#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Each exported patch series (scripts/kernel-patches.sh, KERNEL=6.1 and
# KERNEL=6.12) applies with patch -p1 -F0 to its pristine Linux tree, and
# yields exactly the files that version's test kernel is built from
# (scripts/kernel-build.sh's work tree).  TAP, one test per version.
# Env: KERNELS (default "6.1 6.12").
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
kernels=${KERNELS:-6.1 6.12}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {	# version: prints why it failed, returns non-zero
	KERNEL=$1 "$src/scripts/kernel-build.sh" >/dev/null 2>"$tmp/build-$1.log" ||
		{ tail -n 20 "$tmp/build-$1.log" | sed 's/^/# /'; echo "kernel $1 build failed"; return 1; }
	series=$(KERNEL=$1 "$src/scripts/kernel-patches.sh" "$tmp/patches-$1")
	cp -al "$cache/linux-$1-pristine" "$tmp/linux-$1"
	n=0
	while read -r p; do
		n=$((n + 1))
		patch -d "$tmp/linux-$1" -p1 -s --no-backup-if-mismatch -F0 \
			< "$tmp/patches-$1/$p" || { echo "$p does not apply"; return 1; }
	done < "$series"
	files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$tmp/patches-$1"/*.patch | sort -u)
	for f in $files; do
		cmp -s "$tmp/linux-$1/$f" "$cache/linux-$1/$f" ||
			{ echo "differs from the built tree: $f"; return 1; }
	done
	echo "$n patches apply; $(echo "$files" | wc -l) files identical to the built tree"
}

echo "1..$(echo $kernels | wc -w)"
i=0 bad=0
for k in $kernels; do
	i=$((i + 1))
	if why=$(check "$k"); then
		echo "ok $i - linux $k: $why"
	else
		echo "not ok $i - linux $k: $why"
		bad=1
	fi
done
exit $bad
