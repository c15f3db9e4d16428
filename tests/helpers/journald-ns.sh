# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tests that need a real systemd-journald (test-journal.sh,
# test-companion.sh, test-fleet.sh).  journald_ns_usable: whether this
# machine can run one privately (root, unshare, systemd-journald).
# journald_ns_run SCRIPT [DIR...]: runs `sh -e SCRIPT` in a private mount
# namespace with tmpfs over /run/systemd, /run/log and each DIR, and a
# systemd-journald listening at /run/systemd/journal/socket (its files in
# /run/log/journal), stopped afterwards; returns the script's status.  The
# journal holds only what the script's processes log: journald does not
# read /dev/kmsg (ReadKMsg=no in /run/systemd/journald.conf.d), where the
# kernel's ring still holds earlier lines of other programs, btsdumpd's own
# among them (the handler logs there without a journald).  The script gets
# journald's PID as JOURNALD_PID (to stop it while a sender exits).
journald=/lib/systemd/systemd-journald

journald_ns_usable() {
	[ "$(id -u)" = 0 ] && [ -x "$journald" ] && command -v unshare >/dev/null &&
		unshare -m true 2>/dev/null
}

journald_ns_run() {
	unshare -m --propagation private sh -c '
		journald=$1 script=$2
		shift 2
		for d in /run/systemd /run/log "$@"; do
			mkdir -p "$d" && mount -t tmpfs tmpfs "$d" || exit 1
		done
		mkdir -p /run/systemd/journal /run/systemd/journald.conf.d
		printf "[Journal]\nReadKMsg=no\n" > /run/systemd/journald.conf.d/test.conf
		"$journald" &
		j=$!
		for i in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.1; done
		JOURNALD_PID=$j sh -e "$script"
		r=$?
		kill -CONT $j	# were the script to leave it stopped
		kill $j
		exit $r' sh "$journald" "$@"
}
