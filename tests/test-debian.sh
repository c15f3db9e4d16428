#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# btscrash's Debian packages (debian/, docs/packaging.md), built from the
# tree with scripts/build-debs.sh (dpkg-buildpackage -us -uc -b): lintian
# is clean (no error, no warning), each package holds what it should where Debian's tools
# look for it (crash's extension directory, gdb's system gdbinit
# directory, the units, the store's tmpfiles.d), btscrash-daemon ships
# 50-btsdumpd.conf in /usr/lib/sysctl.d (kernel.core_pattern, unless
# systemd-coredump's 50-coredump.conf sorts after it) with a postinst that
# applies it and a postrm that gives it back.  Installing
# them under a real systemd is the systemd-vm test's.  TAP.
# Usage: test-debian.sh
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$src/tests/helpers/tap.sh"

for t in dpkg-buildpackage:dpkg-dev dh:debhelper help2man:help2man lintian:lintian git:git; do
	command -v "${t%%:*}" >/dev/null || {
		tap_fail "${t%%:*} is installed" "apt-get install ${t#*:}"; tap_done; exit 1; }
done
if ! DEB_BUILD_OPTIONS=nocheck "$src/scripts/build-debs.sh" "$work/debs" >"$work/build.out" 2>&1; then
	tap_fail "dpkg-buildpackage -us -uc -b builds the packages" "$(tail -n 30 "$work/build.out")"
	tap_done; exit 1
fi
tap_ok "dpkg-buildpackage -us -uc -b builds the packages"
lintian --tag-display-limit 0 "$work"/debs/*.changes >"$work/lintian" 2>&1
if grep -q '^[EW]: ' "$work/lintian"; then
	tap_fail "lintian: clean (no errors, no warnings)" "$(grep '^[EW]: ' "$work/lintian")"
else
	tap_ok "lintian: clean (no errors, no warnings)"
fi

has() {	# package, path...: the package's files include each path
	pkg=$1; shift
	dpkg-deb -c "$work"/debs/"$pkg"_*.deb | awk '{ print substr($6, 2) }' >"$work/files"
	for p in "$@"; do
		grep -qx "$p" "$work/files" || { echo "$pkg lacks $p"; return 1; }
	done
}
tap_check "btscrash-tools: btsdump, btsdumpctl, their manual pages" has btscrash-tools \
	/usr/bin/btsdump /usr/bin/btsdumpctl \
	/usr/share/man/man1/btsdump.1.gz /usr/share/man/man1/btsdumpctl.1.gz
tap_check "btscrash-daemon: the handler and its manual page, units, tmpfiles.d, configuration, its sysctl.d file, the inactive tracing one" \
	has btscrash-daemon /usr/libexec/btsdumpd /usr/share/man/man8/btsdumpd.8.gz \
	/lib/systemd/system/btsdumpd.socket \
	/lib/systemd/system/btsdumpd.service \
	/lib/systemd/system/btsdumpd@.service /lib/systemd/system/btsdumpd-harvest.service \
	/usr/lib/tmpfiles.d/btsdumpd.conf /etc/btsdumpd.conf \
	/usr/lib/sysctl.d/50-btsdumpd.conf /usr/share/btscrash/sysctl/60-btscrash-trace.conf
tap_check "btscrash-daemon's only sysctl.d file is 50-btsdumpd.conf (sorting before systemd-coredump's 50-coredump.conf)" sh -c \
	"[ \"\$(dpkg-deb -c '$work'/debs/btscrash-daemon_*.deb | grep -c 'sysctl\.d/.')\" = 1 ] &&
	 expr 50-btsdumpd.conf \< 50-coredump.conf >/dev/null"
tap_check "btscrash-crash: bts.so in crash's extension directory" \
	has btscrash-crash /usr/lib/crash/extensions/bts.so
tap_check "btscrash-gdb: bts.py, and btscrash.gdb in gdb's system gdbinit directory" \
	has btscrash-gdb /usr/share/btscrash/gdb/bts.py /etc/gdb/gdbinit.d/btscrash.gdb
dpkg-deb --fsys-tarfile "$work"/debs/btscrash-gdb_*.deb | tar -xO ./etc/gdb/gdbinit.d/btscrash.gdb >"$work/gdbinit"
tap_check "btscrash.gdb sources the installed bts.py" grep -qx 'source /usr/share/btscrash/gdb/bts.py' "$work/gdbinit"
tap_check "btscrash-kernel-patches: the series with the perf/x86 fixes first, then the new files" \
	has btscrash-kernel-patches /usr/src/btscrash-patches/series \
	/usr/src/btscrash-patches/0001-perf-x86-stop-bts-and-pt-at-kexec-reboot-and-halt.patch \
	/usr/src/btscrash-patches/0003-btscrash-ds.patch
tap_check "btscrash-kernel-patches: the 6.12 series too" \
	has btscrash-kernel-patches /usr/src/btscrash-patches-6.12/series \
	/usr/src/btscrash-patches-6.12/0001-perf-x86-stop-bts-and-pt-at-kexec-reboot-and-halt.patch \
	/usr/src/btscrash-patches-6.12/0003-btscrash-ds.patch
tap_check "btscrash-daemon depends on btscrash-tools of the same version" sh -c \
	"dpkg-deb -f '$work'/debs/btscrash-daemon_*.deb Depends | grep -q 'btscrash-tools (= '"
dpkg-deb -e "$work"/debs/btscrash-daemon_*.deb "$work/ctl"
tap_check "btscrash-daemon's postinst enables the companion, the socket and the harvest unit" sh -c \
	"grep -q \"enable 'btsdumpd.service'\" '$work/ctl/postinst' &&
	 grep -q \"enable 'btsdumpd.socket'\" '$work/ctl/postinst' &&
	 grep -q \"enable 'btsdumpd-harvest.service'\" '$work/ctl/postinst'"
tap_check "its postinst applies core_pattern under systemd; its postrm gives back one naming btsdumpd" sh -c \
	"grep -q 'systemd-sysctl --prefix=/kernel/core_pattern' '$work/ctl/postinst' &&
	 grep -q 'echo core > ' '$work/ctl/postrm'"
tap_done
