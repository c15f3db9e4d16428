#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds crash 8.0.6, the crash that reads 6.12 vmcores (Debian 12's 8.0.2
# cannot), from Debian 13's source package, fetched once into a cache through
# a private deb-src list, and built offline from what the package carries
# (the orig tarball holds gdb-10.2.tar.gz, which crash embeds).  Cached: the
# build reruns only when the source version or the build flags change.
# Logs to stderr; the last line on stdout is the absolute path of the binary;
# its defs.h (for bts.so) is beside it.  `crash-build.sh --export DIR` also
# writes DIR/defs.h and DIR/crash, a wrapper running the cached binary (what
# meson's crash-ext/ target makes: the 8.0.6 bts.so and the kdump tests).
# Cold build, measured: 9 min of CPU (8m1s user, 1m3s sys; 12m45s before
# gdb's configure options below), 17 min wall on the 2-core development
# machine at a load average of 6-8; gdb's C++ is most of it.  Warm: <2 s.
# Env: BTSCRASH_CACHE (default ~/.cache/btscrash), CRASH_VERSION (a trixie
# source version, default 8.0.6-1), CRASH_APT_URI (default
# http://deb.debian.org/debian), JOBS.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${BTSCRASH_CACHE:-$HOME/.cache/btscrash}
jobs=${JOBS:-$(nproc)}
version=${CRASH_VERSION:-8.0.6-1}
uri=${CRASH_APT_URI:-http://deb.debian.org/debian}
upstream=${version%-*}
tree=$cache/crash-$upstream
aptdir=$cache/crash-apt
log() { echo "crash-build: $*" >&2; }
export_dir=
case "${1:-}" in
--export) export_dir=${2:?"--export DIR"} ;;
'') ;;
*) echo "usage: crash-build.sh [--export DIR]" >&2; exit 1 ;;
esac

# The binary's path on stdout; with --export, its defs.h and a wrapper in
# DIR (new files: ninja sees them newer than this script).
finish() {
	if [ -n "$export_dir" ]; then
		mkdir -p "$export_dir"
		cp "$tree/defs.h" "$export_dir/defs.h"
		printf '#!/bin/sh\nexec "%s" "$@"\n' "$tree/crash" > "$export_dir/crash.tmp"
		chmod +x "$export_dir/crash.tmp"
		mv -f "$export_dir/crash.tmp" "$export_dir/crash"
	fi
	echo "$tree/crash"
	exit 0
}

"$src/scripts/install-deps.sh" crash >&2
mkdir -p "$cache"
exec 9>"$cache/.crash-lock"	# one build at a time in the shared cache
flock 9

# What the build depends on besides the source: the flags (Debian's: lzo,
# snappy and zstd dump pages), the embedded gdb's configure options and the
# compiler.  gdb is configured for what crash uses of it (its symbol, type
# and expression code on the host's target): no gdbserver, no CTF reader,
# no TUI, and -O2 without -g (crash's own objects keep its Makefile's -g);
# that cuts the cold build's CPU by 29 % (tests/README.md "CI time").
config="lzo snappy zstd"
gdb_conf="--disable-gdbserver --disable-libctf --disable-tui CFLAGS=-O2 CXXFLAGS=-O2"
config_id=$(printf '%s\n' "$version" "$config" "$gdb_conf" "$(gcc --version | head -n 1)" |
	sha1sum | cut -c1-12)
if [ -x "$tree/crash" ] && [ "$(cat "$tree/.btscrash-config" 2>/dev/null)" = "$config_id" ]; then
	finish
fi

# As scripts/qemu-build.sh does for QEMU, but from Debian 13 (trixie): a
# private sources directory, lists and package cache in the cache, apt-get
# pointed at them for these calls only; the machine's apt configuration is
# not touched.  apt checks each file against the signed Sources index.
aptargs() {
	set -- -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$aptdir/sources" \
		-o Dir::State::Lists="$aptdir/lists" \
		-o Dir::Cache="$aptdir/cache" -o APT::Sandbox::User=root
	echo "$@"
}
fetch_source() {
	rm -rf "$aptdir"
	mkdir -p "$aptdir/sources" "$aptdir/lists/partial" \
		"$aptdir/cache/archives/partial" "$aptdir/dl"
	cat > "$aptdir/sources/btscrash-crash-src.sources" <<-EOF
	Types: deb-src
	URIs: $uri
	Suites: trixie
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	log "fetching crash=$version source from trixie (private deb-src list in $aptdir/sources)"
	# shellcheck disable=SC2046
	apt-get -qq $(aptargs) update >&2
	# shellcheck disable=SC2046
	(cd "$aptdir/dl" && apt-get -qq $(aptargs) source --download-only "crash=$version") >&2 ||
		log "apt-get source failed for part of crash=$version (see above)"
}

# The orig tarball checked against the Sources index's SHA-256 (apt did on
# download; checked again here, as a file kept from an earlier run is too).
check_orig() {
	orig=$aptdir/dl/crash_$upstream.orig.tar.gz
	# shellcheck disable=SC2046
	want=$(apt-cache $(aptargs) showsrc crash 2>/dev/null |
		awk -v v="$version" -v f="crash_$upstream.orig.tar.gz" '
		/^Version:/ { ours = $2 == v }
		/^[^ ]/ { sums = /^Checksums-Sha256:/ }
		ours && sums && $3 == f { print $1; exit }')
	[ -f "$orig" ] && [ -n "$want" ] &&
		[ "$(sha256sum < "$orig" | cut -d' ' -f1)" = "$want" ]
}

# Debian's .dsc and debian.tar.xz are extracted with dpkg-source (Debian's
# patches applied) when the mirror has them.  Some mirrors carry only the
# orig tarball (this project's CI mirror does: the .dsc is 404 there); then
# the orig tarball alone, which is crash upstream's 8.0.6 release plus
# gdb-10.2.tar.gz, is built as Debian's rules build it.
extract() {
	dsc=$aptdir/dl/crash_$version.dsc
	[ -f "$dsc" ] || check_orig || fetch_source
	rm -rf "$tree.tmp"
	if [ -f "$dsc" ]; then
		log "extracting $(basename "$dsc") with Debian's patches"
		dpkg-source -q --no-copy -x "$dsc" "$tree.tmp" >&2
	elif check_orig; then
		log "no $(basename "$dsc") on $uri: building crash_$upstream.orig.tar.gz" \
			"(SHA-256 checked against trixie's Sources) without Debian's patches"
		mkdir -p "$tree.tmp"
		tar -xzf "$orig" -C "$tree.tmp" --strip-components=1
	else
		log "crash=$version: neither its .dsc nor a verified orig tarball from $uri"
		exit 1
	fi
	# offline: crash's Makefile would wget gdb if the tarball were missing
	[ -f "$tree.tmp/gdb-10.2.tar.gz" ] || {
		log "crash=$version's source carries no gdb-10.2.tar.gz"; exit 1; }
	rm -rf "$tree" && mv "$tree.tmp" "$tree"
}

start=$(date +%s)
extract
log "building crash $upstream ($config) with $jobs jobs"
# crash's Makefile: the goals lzo/snappy/zstd add the -x options to its
# configure; CC reaches crash's objects (a make argument) and gdb's
# configure (environment); GDB_CONF_FLAGS (empty in crash's Makefile for an
# x86_64 host) is the rest of gdb's configure line.
# shellcheck disable=SC2086
# ccache's depend mode, as kernel-build.sh (where a compile writes no
# dependency file, ccache runs as before)
(cd "$tree" && CCACHE_DEPEND=${CCACHE_DEPEND:-1} CC="ccache gcc" make -j"$jobs" CC="ccache gcc" \
	GDB_CONF_FLAGS="$gdb_conf" $config) >"$tree.log" 2>&1 || {
	tail -n 40 "$tree.log" >&2
	log "build failed (full log: $tree.log)"
	exit 1
}
[ -x "$tree/crash" ] || { log "no $tree/crash after the build"; exit 1; }
echo "$config_id" > "$tree/.btscrash-config"
log "built in $(( $(date +%s) - start )) s: $("$tree/crash" --version | sed -n 2p)"
finish
