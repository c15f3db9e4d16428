#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Ingest: a large core piped through btsdumpd's handler (standalone mode,
# --direct: spool, analysis, zstd into the store) against `zstd -1` and
# `zstd -3` of the same bytes from the same pipe (-3 is the level
# systemd-coredump and btsdumpd compress at), side by side in one run: CPU
# and wall seconds, throughput and peak RSS, for cores of 100 MiB and
# 1 GiB (RSS must not grow with the core).  Reports, asserts nothing.
# Usage: ingest-bench.sh BUILD_DIR [SIZES_MIB...]   (default: 100 1024)
set -eu
build=$(cd "${1:?usage: ingest-bench.sh BUILD_DIR [SIZES_MIB...]}" && pwd)
shift
src=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- 100 1024
command -v zstd >/dev/null && [ -x /usr/bin/time ] || {
	echo "ingest-bench: needs zstd and /usr/bin/time (apt-get install zstd time)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/ingest-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '[Store]\nProcessSizeMax=4G\nExternalSizeMax=4G\nMaxUse=16G\nKeepFree=1G\nRateLimitBurst=1000\n' >"$work/conf"

# runs "$@" with stdin from $core, prints "cpu_s wall_s maxrss_kib"
measure() {
	/usr/bin/time -f '%U %S %e %M' -o "$work/t" "$@" <"$core" >/dev/null 2>"$work/err" || {
		cat "$work/err" >&2; echo "ingest-bench: $1 failed" >&2; exit 1; }
	awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 }' "$work/t"
}
row() {	# label, size MiB, "cpu wall rss"
	set -- "$1" "$2" $3
	awk -v l="$1" -v m="$2" -v c="$3" -v w="$4" -v r="$5" 'BEGIN {
		printf "  %-22s %8.2f %8.2f %10.0f %10.1f\n", l, c, w, (w > 0 ? m / w : 0), r / 1024 }'
}
echo "ingest: core through the handler vs zstd of the same bytes, $(nproc) CPUs, $(date +%F)"
for mib in "$@"; do
	core=$work/core
	python3 "$src/bench/make-core.py" "$mib" "$core"
	cat "$core" >/dev/null		# page cache: every tool reads it alike
	rm -rf "$work/store"
	d=$(measure "$build/daemon/btsdumpd" --store "$work/store" --config "$work/conf" \
		--direct --log stderr 4242 1000 1000 11 1700000000 bench)
	stored=$(du -sk "$work/store" | cut -f1)
	z1=$(measure zstd -1 -T1 -c)
	z3=$(measure zstd -3 -T1 -c)
	echo
	echo "core: $mib MiB (a third zeros, text, random); btsdumpd stored ${stored} KiB"
	printf "  %-22s %8s %8s %10s %10s\n" tool "CPU s" "wall s" "MiB/s" "RSS MiB"
	row "btsdumpd (handler)" "$mib" "$d"
	row "zstd -1" "$mib" "$z1"
	row "zstd -3" "$mib" "$z3"
	echo "$d $z1 $z3" | awk '{ printf "  ratio wall, btsdumpd / zstd -1: %.2f, / zstd -3: %.2f\n", $2 / $5, $2 / $8 }'
	rm -f "$core"
done
