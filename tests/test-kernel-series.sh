#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Each exported kernel series (scripts/kernel-patches.sh, KERNEL=6.1 and
# 6.12) is one a maintainer can take: git am applies every patch to the
# pristine files of its Linux version with its author, date, subject and
# sign-off, and that version's checkpatch.pl --strict reports nothing on
# any patch that the patch's description does not justify (a paragraph
# opening with "checkpatch" that names the message's type).  First, per
# version: the Debian linux-source version the series was rebased on
# (its directory's debian-version) is the one installed, else one line
# names both (a point release moved it: kernel/README.md).  Last:
# scripts/kernel-build.sh refuses a drifted series, naming the patch and
# the file, with no work tree left: a patch with one context line
# changed (fuzz 1 would take it), and a tree whose file moved by one
# line (an offset).  TAP.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "Bail out! $*"; exit 1; }
i=0

perl -MTerm::ANSIColor -MEncode -e 1 2>/dev/null ||
	fail "checkpatch.pl needs perl: apt-get install perl"
command -v git >/dev/null || fail "needs git: apt-get install git"

# linux_tree VERSION: prints Linux VERSION's own tree, the one
# scripts/kernel-build.sh extracted (pristine, else the build's), else
# linux-source-VERSION's tarball extracted here.
linux_tree() {
	for d in "$cache/linux-$1-pristine" "$cache/linux-$1"; do
		[ -f "$d/scripts/checkpatch.pl" ] && { echo "$d"; return; }
	done
	tarball=/usr/src/linux-source-$1.tar.xz
	[ -f "$tarball" ] ||
		fail "needs Linux $1's checkpatch.pl: apt-get install linux-source-$1"
	mkdir "$tmp/linux-$1"
	tar -xJf "$tarball" -C "$tmp/linux-$1" --strip-components=1
	echo "$tmp/linux-$1"
}

# git_am VERSION LINUX: git am onto the pristine versions of the files
# the hooks change.
git_am() {
	s=$tmp/series-$1 g=$tmp/git-$1 n=$(wc -l < "$tmp/series-$1/series")
	mkdir "$g"
	for f in $(sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' "$s"/*.patch | sort -u); do
		mkdir -p "$g/$(dirname "$f")"
		cp "$2/$f" "$g/$f"
	done
	(
		cd "$g"
		git init -q && git add -A
		git -c user.name=base -c user.email=base@localhost commit -qm base
		sed "s|^|$s/|" "$s/series" | xargs git -c user.name=x \
			-c user.email=x@localhost am -q
		git log --format='%an <%ae>|%ad|%s|%(trailers:key=Signed-off-by,valueonly,separator=)' \
			--date=rfc HEAD~"$n"..HEAD
	) > "$tmp/log" 2>&1 || { sed 's/^/# /' "$tmp/log"; fail "git am does not take the $1 series"; }
	bad=$(awk -F'|' '$1 != $4 || $2 == "" || $3 == "" || $1 !~ /<.+@.+>/' "$tmp/log"
		cd "$s" && for p in $(cat series); do	# git am would take "now"
			sed '/^$/q' "$p" | grep -q '^Date: ' || echo "$p: no Date header"
		done)
	i=$((i + 1))
	if [ "$(wc -l < "$tmp/log")" = "$n" ] && [ -z "$bad" ]; then
		echo "ok $i - $1: git am applies $n patches, each with author, date, subject, sign-off"
	else
		sed 's/^/# /' "$tmp/log"
		echo "not ok $i - $1: git am: a patch lacks its author, date, subject or sign-off"
	fi
}

# checkpatch VERSION LINUX: run from outside any git tree (its SPDX check
# needs the kernel's own git repository and is skipped, as for a tarball
# tree)
checkpatch() {
	cd "$tmp/series-$1"
	while read -r p; do
		i=$((i + 1))
		perl "$2/scripts/checkpatch.pl" --strict --root="$2" --terse \
			--show-types --no-summary "$p" > "$tmp/cp" 2>&1 || true
		# the description's paragraphs that open with "checkpatch"
		awk '/^---$/ { exit } /^$/ { keep = 0; next }
			/^checkpatch/ { keep = 1 } keep' "$p" > "$tmp/why"
		unjustified=
		while IFS= read -r msg; do
			[ -n "$msg" ] || continue
			type=$(echo "$msg" | sed -n 's/^[^:]*:[0-9]*: [A-Z]*:\([A-Z_]*\):.*/\1/p')
			[ -n "$type" ] && grep -qw "$type" "$tmp/why" && continue
			unjustified="$unjustified
# $msg"
		done < "$tmp/cp"
		if [ -z "$unjustified" ]; then
			echo "ok $i - $1: checkpatch --strict: $p"
		else
			echo "not ok $i - $1: checkpatch --strict: $p$unjustified"
		fi
	done < series
	cd "$tmp"
}

. "$src/scripts/series-lib.sh"	# series_dir, series_based

# rebased VERSION: the series' Debian version against the installed one.
rebased() {
	i=$((i + 1))
	have=$(dpkg-query -W -f='${Version}' "linux-source-$1" 2>/dev/null || echo none)
	was=$(series_based "$(series_dir "$1")")
	if [ "$have" = "$was" ]; then
		echo "ok $i - $1: the series was rebased on linux-source-$1 $was, the one installed"
	else
		echo "not ok $i - $1: Debian's linux-source-$1 is $have, the series was rebased on $was: scripts/kernel-rebase.sh $1 (kernel/README.md)"
	fi
}

# drifted WHAT: kernel-build.sh, from a copy of this tree whose 6.12
# series or pristine Linux tree was changed by the caller ($tmp/drift,
# $tmp/dcache), stops at the series naming PATCH and FILE.
drifted() {
	what=$1 patch=$2 file=$3
	i=$((i + 1))
	BTSCRASH_CACHE=$tmp/dcache KERNEL=6.12 "$tmp/drift/scripts/kernel-build.sh" \
		> "$tmp/dout" 2> "$tmp/derr" && rc=0 || rc=$?
	have=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	if [ "$rc" != 0 ] && [ ! -s "$tmp/dout" ] && [ ! -e "$tmp/dcache/linux-6.12" ] &&
	   grep -q "$patch: $file: Hunk" "$tmp/derr" &&
	   grep -q "$patch does not apply exactly to linux-source-6.12 $have (the series was rebased on " "$tmp/derr"; then
		echo "ok $i - kernel-build.sh refuses $what, naming $patch and $file"
	else
		sed 's/^/# /' "$tmp/derr" | tail -n 15
		echo "not ok $i - kernel-build.sh refuses $what, naming $patch and $file (exit $rc)"
	fi
}

drift() {
	mkdir -p "$tmp/drift" "$tmp/dcache"
	cp -r "$src/scripts" "$src/kernel" "$tmp/drift/"
	p=0001-btscrash-Kconfig-and-Makefiles.patch f=arch/x86/Kconfig.debug
	if [ "$(cat "$cache/linux-6.12-pristine/.debian-version" 2>/dev/null)" = \
	     "$(dpkg-query -W -f='${Version}' linux-source-6.12)" ]; then
		cp -al "$cache/linux-6.12-pristine" "$tmp/dcache/"
	fi	# else kernel-build.sh extracts it
	# the patch's first context line changed: patch's default fuzz takes it
	awk 'done || !/^@@ /{ print; next } { print; getline; print " #changed"; done = 1 }' \
		"$src/kernel/patches-6.12/$p" > "$tmp/drift/kernel/patches-6.12/$p"
	drifted "a patch with one context line changed" "$p" "$f"
	cp "$src/kernel/patches-6.12/$p" "$tmp/drift/kernel/patches-6.12/$p"
	# the file moved down by one line: an offset
	pristine=$tmp/dcache/linux-6.12-pristine
	[ -d "$pristine" ] || return 0	# made by the run above
	{ echo "# drift"; cat "$pristine/$f"; } > "$tmp/moved" && rm "$pristine/$f" &&
		mv "$tmp/moved" "$pristine/$f"
	drifted "a tree whose file moved by a line" "$p" "$f"
}

versions="6.1 6.12"
plan=2
for v in $versions; do
	linux=$(linux_tree "$v") || { echo "$linux"; exit 1; }
	eval "linux_$(echo "$v" | tr . _)=\$linux"
	KERNEL=$v "$src/scripts/kernel-patches.sh" "$tmp/series-$v" >/dev/null
	plan=$((plan + 2 + $(wc -l < "$tmp/series-$v/series")))
done
echo "1..$plan"
for v in $versions; do
	eval "linux=\$linux_$(echo "$v" | tr . _)"
	rebased "$v"
	git_am "$v" "$linux"
	checkpatch "$v" "$linux"
done
drift
