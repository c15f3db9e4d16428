# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# Sourced by scripts/kernel-build.sh, qemu-build.sh, kernel-rebase.sh
# and tests/test-kernel-series.sh (they set $src, the repository): a patch
# series applied onto a Debian source tree exactly as git am takes it
# (every hunk where its context says: no fuzz, no offset), and the one
# message when a hunk does not fit: the patch, its file and hunk, the
# Debian version found, the one the series was rebased on (the series
# directory's debian-version file), and what to do.

# series_dir VERSION: the hook series directory of Linux VERSION.
# shellcheck disable=SC2154  # $src: the sourcing script's
series_dir() {
	case $1 in
	6.1) echo "$src/kernel/patches" ;;
	6.12) echo "$src/kernel/patches-6.12" ;;
	*) echo "KERNEL (Linux version) is 6.1 or 6.12, not $1" >&2; return 2 ;;
	esac
}

# series_based DIR: the Debian version DIR's series was rebased on.
series_based() { cat "$1/debian-version" 2>/dev/null || echo unknown; }

# series_apply TREE DIR WHO SOURCE FOUND HOWTO: applies DIR/series onto
# TREE, saying "WHO: applying P" for each; on a hunk that does not apply
# exactly, prints its lines and one line naming SOURCE's version FOUND
# against DIR's, then HOWTO, and returns 1 (TREE is then half-patched).
series_apply() {
	grep -v '^#' "$2/series" | sed '/^$/d' | while read -r p; do
		echo "$3: applying $p" >&2
		out=$(patch -d "$1" -p1 --fuzz=0 --no-backup-if-mismatch < "$2/$p" 2>&1) &&
			! printf '%s\n' "$out" | grep -qE 'with fuzz|offset' && continue
		printf '%s\n' "$out" | awk -v w="$3" -v p="$p" '/^patching file / { f = $3; next }
			/FAILED|fuzz|offset|malformed|can.t find|Reversed/ { print w ": " p ": " f ": " $0 }' >&2
		echo "$3: $p does not apply exactly to $4 $5 (the series was rebased on $(series_based "$2")): $6" >&2
		return 1
	done
}
