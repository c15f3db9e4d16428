#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Emits the whole btscrash kernel change as a `git format-patch` series for
# a Linux 6.1 or 6.12 tree: first the fixes that stand alone (the hook
# series' patches above its #newfiles line), then the new files (at their
# kernel paths, as the build copies them; the same for both), then the
# version's other hooks into existing files (kernel/patches/series for
# 6.1, kernel/patches-6.12/series for 6.12).  Each patch is a mail (From, Date, Subject, the description, a
# Signed-off-by, a diffstat, git diffs): `git am` or `patch -p1` applies it.
# A hook patch is its subject on line 1, a blank line, the description
# (what and why), a line "---", then the diff.
# Usage: [KERNEL=6.12|6.1] kernel-patches.sh OUTDIR  (prints the series file;
# default 6.12, the primary kernel)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: kernel-patches.sh OUTDIR}
mkdir -p "$out"
rm -f "$out"/*.patch "$out/series"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

signoff='btscrash developers <btscrash@lists.example.org>'
# the date of the newest change (reproducible: SOURCE_DATE_EPOCH first)
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
when=$(LC_ALL=C date -u -R -d "@$epoch")
. "$src/scripts/series-lib.sh"
patches=$(series_dir "${KERNEL:-6.12}") || exit 2
# the fixes sent first (the series' lines above its #newfiles line), then
# the new files, then the hooks into existing files
first=$(sed -n '/^#newfiles/q;/^#/d;/^$/d;p' "$patches/series")
hooks=$(sed -n '/^#newfiles/,$p' "$patches/series" | grep -v '^#' | sed '/^$/d')
total=$(( 2 + $(echo "$first" "$hooks" | wc -w) ))

# One pass over a unified diff, hunk by hunk (so a removed "-- x" line is
# never taken for a file header).  mode=git: the diff as git writes it
# (diff --git, new file mode); mode=stat: git's diffstat of it.
# shellcheck disable=SC2016
diffawk='
function flush() { if (file != "") { n++; name[n] = file; add[n] = a; del[n] = d } }
/^--- / && !left {
	flush(); created = ($2 == "/dev/null"); a = d = 0
	getline plus; split(plus, f, /[ \t]/); file = substr(f[2], 3)
	if (mode == "git") {
		print "diff --git a/" file " b/" file
		if (created) print "new file mode 100644"
		print (created ? "--- /dev/null" : "--- a/" file); print "+++ b/" file
	}
	next
}
/^@@ / {
	split($2, o, ","); split($3, w, ",")
	left = (o[2] == "" ? 1 : o[2]) + (w[2] == "" ? 1 : w[2])
}
/^$/ && left { left -= 2 }	# a context line whose blank was stripped
/^[-+ ]/ && left {
	c = substr($0, 1, 1)
	if (c == "+") { a++; left-- } else if (c == "-") { d++; left-- } else left -= 2
}
mode == "git" { print }
END {
	flush()
	if (mode != "stat") exit
	for (i = 1; i <= n; i++) {
		if (length(name[i]) > nw) nw = length(name[i])
		if (add[i] + del[i] > most) most = add[i] + del[i]
		ta += add[i]; td += del[i]
	}
	cw = length(most ""); bar = 80 - nw - cw - 4
	for (i = 1; i <= n; i++) {
		na = add[i]; nd = del[i]
		if (most > bar) {
			na = int(na * bar / most + (na > 0)); nd = int(nd * bar / most + (nd > 0))
		}
		s = ""; for (j = 0; j < na; j++) s = s "+"; for (j = 0; j < nd; j++) s = s "-"
		printf " %-" nw "s | %" cw "d %s\n", name[i], add[i] + del[i], s
	}
	printf " %d file%s changed", n, n == 1 ? "" : "s"
	if (ta) printf ", %d insertion%s(+)", ta, ta == 1 ? "" : "s"
	if (td) printf ", %d deletion%s(-)", td, td == 1 ? "" : "s"
	print ""
}'

# mail NUMBER DESCRIPTION DIFF OUTNAME: one patch of the series.
mail() {
	body=$(tail -n +3 "$2")
	{
		echo 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001'
		echo "From: $signoff"
		echo "Date: $when"
		printf 'Subject: [PATCH %02d/%02d] %s\n\n' "$1" "$total" "$(head -n 1 "$2")"
		[ -z "$body" ] || printf '%s\n\n' "$body"
		printf 'Signed-off-by: %s\n---\n' "$signoff"
		awk -v mode=stat "$diffawk" "$3"
		echo
		awk -v mode=git "$diffawk" "$3"
	} > "$out/$4"
	echo "$4" >> "$out/series"
}

# hook NUMBER PATCH: a patch of the hook series, as it is.
hook() {
	sed -n '/^---$/,$p' "$patches/$2" | tail -n +2 > "$tmp/diff"
	sed '/^---$/,$d' "$patches/$2" > "$tmp/desc"
	mail "$1" "$tmp/desc" "$tmp/diff" "$(printf '%04d-%s' "$1" "${2#????-}")"
}

# newfiles NUMBER NAME FILES...: a patch adding FILES, its description on
# standard input.
newfiles() {
	num=$1 f=$(printf '%04d-btscrash-%s.patch' "$1" "$2")
	shift 2
	cat > "$tmp/desc"
	for p in "$@"; do
		diff -u --label /dev/null --label "b/$p" /dev/null "$src/$p" || true
	done > "$tmp/diff"
	mail "$num" "$tmp/desc" "$tmp/diff" "$f"
}

n=0
for p in $first; do
	n=$((n + 1))
	hook "$n" "$p"
done
newfiles $((n + 1)) ds arch/x86/include/asm/ds.h arch/x86/kernel/ds.c \
	arch/x86/kernel/ds_test.c <<'EOF'
x86/ds: Debug Store owner, BTS rings and the emulation backend

The crash recorder needs the last taken branches of a traced task, and
of each CPU's kernel, at the moment of a crash: Branch Trace Store,
recording continuously into a circular buffer, gives them at no
instruction's cost of the traced code.  arch/x86/kernel/ds.c is the
recorder's x86 side.  It programs BTS per the Intel SDM (IA32_DS_AREA,
the BTS half of the DS area, DEBUGCTL.TR/BTS/BTINT off, CPL
qualification) for per-task rings and the opt-in per-CPU kernel ring,
loads a traced task's ring at switch-in and saves its index at
switch-out, and steps aside while perf's BTS users (intel_bts, the BTS
event) hold the BTS half (ds_bts_request()/ds_bts_release(), counted per
CPU, the recorder marking the gap).  The LBR is perf's alone: ds.c reads
perf's LBR tail (arch/x86/events/lbr_tail.c) and writes no LBR MSR.
With bts_crash.perf_rings=1 a traced task's ring is a kernel-owned
intel_bts event of perf's instead.  On CPUs without BTS a
single-stepping emulation records into the same rings behind the same
API (ds.emulate=1, slow; for testing).  kernel/bts_crash.c, the policy,
uses this API and knows no MSR.

ds_test.c is the KUnit suite x86_ds: ring wrap and repair, the DS area
fields at load and save, the hand-over of the BTS half to perf, and the
emulation's branch decoder, each on the real functions with a table of
MSR operations in place of the hardware.

checkpatch --strict's FILE_PATH_CHANGES: the MAINTAINERS entry for the
new files is the series' last patch.

checkpatch --strict's LINUX_VERSION_CODE and CONSTANT_COMPARISON on the
syscore registration: the same file builds into 6.1 and 6.12 trees
(out of tree, the btscrash series for each), and Debian's 6.12 changed
the syscore API with nothing to feature-test; the comparison is the
usual KERNEL_VERSION form.  Upstream, the branch for the older kernel
goes away.
EOF
newfiles $((n + 2)) policy include/uapi/linux/bts_crash.h include/linux/bts_crash.h \
	kernel/bts_crash.c kernel/bts_crash_test.c <<'EOF'
btscrash: per-task branch traces for core dumps

A core dump says where a program died, not how it got there; the last
few thousand taken branches usually do.  kernel/bts_crash.c decides who
is traced and who pays: per-task rings enabled by prctl(PR_BTS_CRASH)
or a sysctl default, inherited across fork and kept across exec,
charged to the user's locked_vm against RLIMIT_MEMLOCK (and to the
process's pinned_vm) as perf charges its buffers, dropped when the task
becomes non-dumpable.  A core dump gets one NT_BTSCRASH_THREAD note per
thread (user addresses only); a panic or kdump gets each CPU's newest
kernel branches (NT_BTSCRASH_CPU beside NT_PRSTATUS).  The note format
is include/uapi/linux/bts_crash.h, the one definition user space
(btsdump, crash, gdb) reads.  bts_crash_test.c is the KUnit suite
bts_crash: ring sizes and charges, note sizing, layout and budget.

checkpatch --strict's MACRO_ARG_REUSE on for_each_dumped_thread(ct) is
left as it is: the argument is the iterator variable, assigned and
advanced by the loop as list_for_each()'s is, never an expression with
side effects.  FILE_PATH_CHANGES: the MAINTAINERS entry for the new
files is the series' last patch.

checkpatch --strict's SPACING on "#if __has_include(<linux/vmcore_info.h>)"
is checkpatch reading the header name as comparisons: the feature test
picks VMCOREINFO's header on 6.1 (crash_core.h) and 6.9+
(vmcore_info.h), where an #ifdef CONFIG_CRASH_CORE compiled it out
without a word.
EOF

n=$((n + 2))
for p in $hooks; do
	n=$((n + 1))
	hook "$n" "$p"
done
echo "$out/series"
