#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The exported kernel series (scripts/kernel-patches.sh) is one a
# maintainer can take: git am applies every patch to the pristine 6.1
# files with its author, date, subject and sign-off, and Linux 6.1's
# checkpatch.pl --strict reports nothing on any patch that the patch's
# description does not justify (a paragraph opening with "checkpatch"
# that names the message's type).  TAP.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
tarball=/usr/src/linux-source-6.1.tar.xz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "Bail out! $*"; exit 1; }

perl -MTerm::ANSIColor -MEncode -e 1 2>/dev/null ||
	fail "checkpatch.pl needs perl: apt-get install perl"
command -v git >/dev/null || fail "needs git: apt-get install git"
# Linux 6.1's own tree: the one scripts/kernel-build.sh extracted, else
# the same tarball extracted here.
linux=$cache/linux-6.1-pristine
if [ ! -f "$linux/scripts/checkpatch.pl" ]; then
	[ -f "$tarball" ] || fail "needs Linux 6.1's checkpatch.pl: apt-get install linux-source-6.1"
	mkdir "$tmp/linux"
	tar -xJf "$tarball" -C "$tmp/linux" --strip-components=1
	linux=$tmp/linux
fi

"$src/scripts/kernel-patches.sh" "$tmp/series" >/dev/null
n=$(wc -l < "$tmp/series/series")
echo "1..$((n + 1))"

# git am onto the pristine versions of the files the hooks change
mkdir "$tmp/git"
for f in $(sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' "$tmp"/series/*.patch | sort -u); do
	mkdir -p "$tmp/git/$(dirname "$f")"
	cp "$linux/$f" "$tmp/git/$f"
done
(
	cd "$tmp/git"
	git init -q && git add -A
	git -c user.name=base -c user.email=base@localhost commit -qm base
	sed "s|^|$tmp/series/|" "$tmp/series/series" | xargs git -c user.name=x \
		-c user.email=x@localhost am -q
	git log --format='%an <%ae>|%ad|%s|%(trailers:key=Signed-off-by,valueonly,separator=)' \
		--date=rfc HEAD~"$n"..HEAD
) > "$tmp/log" 2>&1 || { sed 's/^/# /' "$tmp/log"; fail "git am does not take the series"; }
bad=$(awk -F'|' '$1 != $4 || $2 == "" || $3 == "" || $1 !~ /<.+@.+>/' "$tmp/log"
	cd "$tmp/series" && for p in $(cat series); do	# git am would take "now"
		sed '/^$/q' "$p" | grep -q '^Date: ' || echo "$p: no Date header"
	done)
if [ "$(wc -l < "$tmp/log")" = "$n" ] && [ -z "$bad" ]; then
	echo "ok 1 - git am applies $n patches, each with author, date, subject, sign-off"
else
	sed 's/^/# /' "$tmp/log"
	echo "not ok 1 - git am: a patch lacks its author, date, subject or sign-off"
fi

# checkpatch from outside any git tree: its SPDX check needs the kernel's
# own git repository and is skipped, as for a tarball tree
i=1
cd "$tmp"
while read -r p; do
	i=$((i + 1))
	perl "$linux/scripts/checkpatch.pl" --strict --root="$linux" --terse \
		--show-types --no-summary "series/$p" > "$tmp/cp" 2>&1 || true
	# the description's paragraphs that open with "checkpatch"
	awk '/^---$/ { exit } /^$/ { keep = 0; next }
		/^checkpatch/ { keep = 1 } keep' "series/$p" > "$tmp/why"
	unjustified=
	while IFS= read -r msg; do
		[ -n "$msg" ] || continue
		type=$(echo "$msg" | sed -n 's/^[^:]*:[0-9]*: [A-Z]*:\([A-Z_]*\):.*/\1/p')
		[ -n "$type" ] && grep -qw "$type" "$tmp/why" && continue
		unjustified="$unjustified
# $msg"
	done < "$tmp/cp"
	if [ -z "$unjustified" ]; then
		echo "ok $i - checkpatch --strict: $p"
	else
		echo "not ok $i - checkpatch --strict: $p$unjustified"
	fi
done < series/series
