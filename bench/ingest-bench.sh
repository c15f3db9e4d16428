#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Ingest: a large core piped through btsdumpd's handler (standalone mode,
# --direct: spool, analysis, zstd into the store) against `zstd -1` and
# `zstd -3` of the same bytes from the same pipe (-3 is the level
# systemd-coredump and btsdumpd compress at) and against systemd-coredump
# itself storing the same core (Debian's binary, unpacked from its .deb
# into the cache, not installed: installing it would take over
# kernel.core_pattern; its handler hands the pipe to its socket-activated
# service, run here by systemd-socket-activate beside a private journald,
# its store on the same filesystem as btsdumpd's), side by side in one
# run: CPU and wall seconds, throughput and peak RSS, for cores of 100 MiB
# and 1 GiB (RSS must not grow with the core).  Reports, asserts nothing.
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

# systemd-coredump, the version of the host's libsystemd-shared (its
# private library), unpacked once into the cache; empty when not possible
sdcd=
. "$src/tests/helpers/journald-ns.sh"
v=$(dpkg-query -W -f '${Version}' libsystemd-shared 2>/dev/null || true)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}/systemd-coredump/$v
if ! journald_ns_usable || ! command -v systemd-socket-activate >/dev/null || [ -z "$v" ]; then
	echo "ingest-bench: systemd-coredump not compared: needs root, unshare, systemd-journald and systemd-socket-activate" >&2
elif [ -x "$cache/x/lib/systemd/systemd-coredump" ] ||
     { rm -rf "$cache" && mkdir -p "$cache" &&
       (cd "$cache" && apt-get download -q "systemd-coredump=$v" >/dev/null 2>&1) &&
       dpkg-deb -x "$cache"/systemd-coredump_*.deb "$cache/x"; }; then
	sdcd=$cache/x/lib/systemd/systemd-coredump
else
	echo "ingest-bench: systemd-coredump $v not compared: apt-get download failed" >&2
fi
printf '[Store]\nProcessSizeMax=4G\nExternalSizeMax=4G\nMaxUse=16G\nKeepFree=1G\nRateLimitBurst=1000\n' >"$work/conf"

# runs "$@" with stdin from $core, prints "cpu_s wall_s maxrss_kib"
measure() {
	/usr/bin/time -f '%U %S %e %M' -o "$work/t" "$@" <"$core" >/dev/null 2>"$work/err" || {
		cat "$work/err" >&2; echo "ingest-bench: $1 failed" >&2; exit 1; }
	awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 }' "$work/t"
}
# systemd-coredump on $core: its handler (the kernel's arguments) hands the
# pipe to its service; "cpu wall rss" of the service (its CPU and RSS, the
# wall time from the handler's start to the service's exit)
measure_sdcd() {
	mkdir -p "$work/sdstore"
	cat >"$work/sd.sh" <<EOS
mount --bind "$work/sdstore" /var/lib/systemd/coredump
systemd-socket-activate --seqpacket -a -l /run/systemd/coredump \\
	/usr/bin/time -f '%U %S %M' -o "$work/sd.t" sh -c 'LISTEN_PID=\$\$ exec "$sdcd"' 2>"$work/sd.err" &
a=\$!
while [ ! -S /run/systemd/coredump ]; do sleep 0.05; done
t0=\$(date +%s.%N)
"$sdcd" \$\$ 1000 1000 11 1700000000 18446744073709551615 bench <"$core"
while [ ! -s "$work/sd.t" ]; do sleep 0.01; done
t1=\$(date +%s.%N)
kill \$a
echo "\$t0 \$t1" >"$work/sd.wall"
EOS
	rm -f "$work/sd.t"
	journald_ns_run "$work/sd.sh" /var/lib/systemd/coredump >/dev/null 2>&1 || {
		cat "$work/sd.err" >&2; echo "ingest-bench: systemd-coredump failed" >&2; exit 1; }
	paste "$work/sd.t" "$work/sd.wall" | awk '{ printf "%.2f %.2f %d\n", $1 + $2, $5 - $4, $3 }'
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
	sd=
	if [ -n "$sdcd" ]; then
		rm -rf "$work/sdstore"
		sd=$(measure_sdcd)
		sdstored=$(du -sk "$work/sdstore" | cut -f1)
	fi
	echo
	echo "core: $mib MiB (a third zeros, text, random); btsdumpd stored ${stored} KiB${sd:+, systemd-coredump ${sdstored} KiB}"
	printf "  %-22s %8s %8s %10s %10s\n" tool "CPU s" "wall s" "MiB/s" "RSS MiB"
	row "btsdumpd (handler)" "$mib" "$d"
	row "zstd -1" "$mib" "$z1"
	row "zstd -3" "$mib" "$z3"
	[ -z "$sd" ] || row "systemd-coredump" "$mib" "$sd"
	echo "$d $z1 $z3" | awk '{ printf "  ratio wall, btsdumpd / zstd -1: %.2f, / zstd -3: %.2f\n", $2 / $5, $2 / $8 }'
	[ -z "$sd" ] || echo "$d $sd" | awk '{ printf "  ratio wall, btsdumpd / systemd-coredump: %.2f; RSS: %.2f\n", $2 / $5, $3 / $6 }'
	rm -f "$core"
done
