#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Emits the whole btscrash kernel change as a patch series for a Linux 6.1
# or 6.12 tree: first the new files (at their kernel paths, as the build
# copies them; the same for both), then the version's hooks into existing
# files (kernel/patches/series, kernel/patches-6.12/series).  Each patch is
# mbox-formatted (git am) and applies with patch -p1 as well.
# Usage: [KERNEL=6.1|6.12] kernel-patches.sh OUTDIR  (prints the series file)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: kernel-patches.sh OUTDIR}
mkdir -p "$out"
rm -f "$out"/*.patch "$out/series"

case ${KERNEL:-6.1} in
6.1) patches=$src/kernel/patches ;;
6.12) patches=$src/kernel/patches-6.12 ;;
*) echo "kernel-patches: KERNEL is 6.1 or 6.12, not $KERNEL" >&2; exit 2 ;;
esac
hooks=$(grep -v '^#' "$patches/series" | sed '/^$/d')
total=$(( 2 + $(echo "$hooks" | wc -l) ))
header() {	# number, subject
	printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
	printf 'From: btscrash <btscrash@localhost>\n'
	printf 'Subject: [PATCH %02d/%02d] %s\n\n' "$1" "$total" "$2"
}
newfiles() {	# number, name, subject, body, files...: one patch of new files
	f=$(printf '%04d-btscrash-%s.patch' "$1" "$2")
	{
		header "$1" "$3"
		printf '%s\n---\n' "$4"
		shift 4
		for p in "$@"; do
			diff -u --label /dev/null --label "b/$p" /dev/null "$src/$p" || true
		done
	} > "$out/$f"
	echo "$f" >> "$out/series"
}

newfiles 1 ds "x86/ds: Debug Store owner, BTS rings and the emulation backend" \
"arch/x86/kernel/ds.c owns the BTS half of each CPU's DS area (the crash
recorder's while no perf user holds it, perf's users counted per CPU),
programs BTS per the Intel SDM for a traced task's ring, and emulates
BTS by single-stepping on CPUs without it." \
	arch/x86/include/asm/ds.h arch/x86/kernel/ds.c arch/x86/kernel/ds_test.c
newfiles 2 policy "btscrash: per-task branch traces for core dumps" \
"kernel/bts_crash.c: per-task rings enabled by prctl, inherited, charged
to locked_vm against RLIMIT_MEMLOCK, written into ELF cores as one note
per thread (user addresses only).  The format is
include/uapi/linux/bts_crash.h." \
	include/uapi/linux/bts_crash.h include/linux/bts_crash.h \
	kernel/bts_crash.c kernel/bts_crash_test.c

n=2
for p in $hooks; do
	n=$((n + 1))
	f=$(printf '%04d-%s' "$n" "${p#????-}")
	subject=$(head -n 1 "$patches/$p")
	{ header "$n" "$subject"; tail -n +3 "$patches/$p"; } > "$out/$f"
	echo "$f" >> "$out/series"
done
echo "$out/series"
