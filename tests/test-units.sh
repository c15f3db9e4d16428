#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The files of systemd/: `systemd-analyze verify` on each unit (ExecStart
# pointed at the built btsdumpd), the sysctl fragment's syntax and its
# core_pattern against docs/btsdumpd.md, the tmpfiles line applied to a
# scratch root, the default config's keys against the docs.
# Usage: test-units.sh BTSDUMPD.  TAP; exit 77 (skip) without systemd-analyze.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
sd=$src/systemd
doc=$src/docs/btsdumpd.md
units="btsdumpd.socket btsdumpd@.service btsdumpd-harvest.service btsdumpd.service
btsdumpd-lbr.service"
. "$src/tests/helpers/tap.sh"

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BTSDUMPD (an executable)" >&2
	exit 2
fi
bin=$(realpath "$1")
if ! command -v systemd-analyze >/dev/null; then
	tap_skip_all "no systemd-analyze"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- units -----------------------------------------------------------------
# Copies in a scratch directory with ExecStart on the built binary, and
# without the "-" prefix: verify skips its executable check for commands
# whose failure is ignored.
mkdir "$tmp/units"
for u in $units; do
	sed "s|^ExecStart=-\?/usr/libexec/btsdumpd|ExecStart=$bin|" "$sd/$u" > "$tmp/units/$u"
done
grep -q "^ExecStart=$bin --serve\$" "$tmp/units/btsdumpd@.service" &&
grep -q "^ExecStart=$bin --harvest " "$tmp/units/btsdumpd-harvest.service"
tap_status $? "units: ExecStart is /usr/libexec/btsdumpd (rewritten for the test)"

# verify loads the system's units for dependencies too (journald, sysctl):
# only lines naming our units or their files count.  Warnings and errors
# only, whatever SYSTEMD_LOG_LEVEL the caller has.
for u in $units; do
	out=$(cd "$tmp/units" && SYSTEMD_LOG_LEVEL=warning SYSTEMD_LOG_COLOR=0 \
	      systemd-analyze verify --man=no "$tmp/units/$u" 2>&1)
	rc=$?
	ours=$(printf '%s\n' "$out" | grep -F -e btsdumpd -e "$tmp")
	[ $rc = 0 ] && [ -z "$ours" ]
	tap_status $? "systemd-analyze verify $u" "exit $rc: ${ours:-$out}"
done

# ---- sysctl.d ----------------------------------------------------------------
frag=$sd/50-btsdumpd.conf
trace=$sd/60-btscrash-trace.conf
bad=$(grep -nvE '^[[:space:]]*([#;].*)?$|^-?[a-z0-9_.]+[[:space:]]*=[[:space:]]*[^[:space:]]' "$frag" "$trace")
tap_status $([ -z "$bad" ]; echo $?) "sysctl.d: every line is KEY=VALUE or a comment" "$bad"

value() {	# value FILE KEY: the value of KEY=... in a sysctl-style file
	sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$1" | tail -n 1
}
pattern=$(value "$frag" kernel.core_pattern)
documented=$(value "$doc" kernel.core_pattern)
[ -n "$pattern" ] && [ "$pattern" = "$documented" ]
tap_status $? "sysctl.d: core_pattern is the one of docs/btsdumpd.md" \
	"have '$pattern', docs '$documented'"
unknown=""
for spec in $(printf '%s\n' "$pattern" | grep -oE '%.'); do
	grep -qF "| \`$spec\` |" "$doc" || unknown="$unknown $spec"
done
tap_status $([ -z "$unknown" ]; echo $?) "sysctl.d: core_pattern's specifiers are documented" \
	"not in the Invocation table:$unknown"
[ "$(value "$frag" kernel.core_pipe_limit)" = 0 ]
tap_status $? "sysctl.d: core_pipe_limit = 0 (the kernel never skips a core; btsdumpd rate-limits)"
# 60-btscrash-trace.conf: "-" makes systemd-sysctl ignore a missing key, so
# a renamed sysctl would silently trace nothing; the key and the largest
# value are the kernel's (kernel/bts_crash.c)
records=$(value "$trace" -kernel.bts_crash_task_records)
max=$(sed -n -e 's/^#define BTS_CRASH_MAX_TASK_RECORDS[[:space:]]*(1U << \([0-9]*\)).*/\1/p' \
	-e 's/^#define BTS_CRASH_MAX_TASK_RECORDS[[:space:]]*BIT(\([0-9]*\)).*/\1/p' "$src/kernel/bts_crash.c")
grep -q '\.procname = "bts_crash_task_records",' "$src/kernel/bts_crash.c" &&
	[ -n "$records" ] && [ -n "$max" ] && [ "$records" -gt 0 ] && [ "$records" -le $((1 << max)) ]
tap_status $? "sysctl.d: 60-btscrash-trace.conf sets the kernel's kernel.bts_crash_task_records, within 1..2^${max:-?}" \
	"value '$records', kernel's maximum 2^'$max'"

# ---- tmpfiles.d ----------------------------------------------------------------
# Applied to a scratch root; ownership left alone when not run as root.
root=$tmp/root
mkdir "$root"
if [ "$(id -u)" = 0 ]; then
	cp "$sd/btsdumpd.tmpfiles" "$tmp/btsdumpd.conf"
else
	sed 's/ root root / - - /' "$sd/btsdumpd.tmpfiles" > "$tmp/btsdumpd.conf"
fi
out=$(systemd-tmpfiles --create --root="$root" "$tmp/btsdumpd.conf" 2>&1)
rc=$?
mode=$(stat -c %a "$root/var/lib/btsdumpd" 2>/dev/null)
[ $rc = 0 ] && [ -z "$out" ] && [ "$mode" = 755 ]
tap_status $? "tmpfiles.d: /var/lib/btsdumpd created, mode 0755" "exit $rc, mode '$mode': $out"
if [ "$(id -u)" = 0 ]; then
	[ "$(stat -c %u:%g "$root/var/lib/btsdumpd")" = 0:0 ]
	tap_status $? "tmpfiles.d: owned by root:root"
fi

# ---- btsdumpd.conf ---------------------------------------------------------------
# Every key of the docs' Configuration table, commented out; no other key.
doc_keys=$(grep -oE '^\| `[A-Za-z]+=` \|' "$doc" | tr -d '|` =' | sort)
conf_keys=$(sed -n 's/^#\([A-Za-z]\+\)=.*/\1/p' "$sd/btsdumpd.conf" | sort)
active=$(grep -nE '^[A-Za-z]+=' "$sd/btsdumpd.conf")
[ -n "$doc_keys" ] && [ "$doc_keys" = "$conf_keys" ] && [ -z "$active" ] &&
	grep -qx '\[Store\]' "$sd/btsdumpd.conf"
tap_status $? "btsdumpd.conf: [Store], every documented key commented out" \
	"docs: $(echo $doc_keys)
conf: $(echo $conf_keys)
set: $active"

wrong=""
while IFS='=' read -r key val; do
	[ -z "$val" ] || grep -qF "| \`$key=\` | \`$val\` |" "$doc" || wrong="$wrong $key=$val"
done < <(sed -n 's/^#\([A-Za-z]\+=.*\)/\1/p' "$sd/btsdumpd.conf")
tap_status $([ -z "$wrong" ]; echo $?) "btsdumpd.conf: the values shown are the documented defaults" \
	"not the docs' default:$wrong"

tap_done
