#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# In the systemd VM (btscrash-sd-test.service), btscrash's packages
# installed: crashes tests/crasher.c as uid 1000, then as root from a
# mode-0700 directory, waits for btsdumpd's entries, reads them with
# btsdumpctl and gdb; on a stock kernel on the PMU model (modes lbr,
# companion-lbr: lean, no root crash, fleet or ACL reads), after the
# stock-kernel LBR collector armed; lbr: purges btscrash-daemon, installs
# it again under this running systemd and crashes once more (crasher2;
# then crasher3 when crasher2 was stored without a trace).
# Each step is said on the console (kmsg).  Collects the store, the journal,
# the units' states and who can read the entry into a tar, sends it base64'd
# between BTSCRASH-SD-BEGIN/END lines on ttyS1 and powers off.
# check-systemd-vm.py reads the files.
R=/run/btscrash-sd
mkdir -p $R
exec 3>&1 >$R/test.log 2>&1
set -x
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
cat /proc/sys/kernel/core_pattern >$R/core_pattern
cat /proc/sys/kernel/core_pipe_limit >$R/core_pipe_limit
systemctl show -p ActiveState -p Result systemd-sysctl.service >$R/sysctl-unit
journalctl -b -o short-monotonic --no-pager -u systemd-sysctl.service >$R/sysctl-journal.txt
systemctl show -p ActiveState -p Result -p ExecMainStatus btsdumpd-harvest.service >$R/harvest-unit
systemctl is-active btsdumpd.socket >$R/socket-active
ls -la /run/btsdumpd/ >$R/socket-ls.txt
ls -la /var/lib/btsdumpd/ >$R/store-before.txt
# the patched kernel (companion mode): its backend, and the system-wide
# ring size 60-btscrash-trace.conf set at boot (absent on a stock kernel)
cat /proc/sys/kernel/bts_crash_task_records >$R/task-records 2>&1
dmesg | grep -E '(^|\] )(ds|bts_crash): ' >$R/dmesg-bts.txt
mode=$(cat /etc/btscrash-sd-mode)
case $mode in lbr|companion-lbr) lean=1 ;; *) lean= ;; esac
step() { echo "<3>btscrash-sd-test: $*" >/dev/kmsg; }
step "mode $mode"

# lbr_armed: waits (at most 300 s) for the LBR collector to arm or say why
# it cannot; its state into $R/lbr-PHASE.txt
lbr_armed() {
	i=0
	while [ $i -lt 300 ] && ! [ -e /run/btsdumpd-lbr/armed ] &&
		systemctl -q is-active btsdumpd-lbr.service; do
		sleep 1
		i=$((i + 1))
	done
	{ echo "waited $i"; systemctl show -p ActiveState -p SubState btsdumpd-lbr.service
	  cat /run/btsdumpd-lbr/status; } >$R/lbr-"$1".txt 2>&1
}
[ -z "$lean" ] || lbr_armed boot
step "collector: $(cat /run/btsdumpd-lbr/status 2>&1)"

# wait_entry COMM: the path of the store's entry for COMM (once it is
# renamed into place), then waits for the instance to finish (its journal
# entry comes after the rename).  Prints the path; the seconds waited for
# it go to $R/COMM-wait-s.
wait_entry() {
	i=0
	while [ $i -lt 300 ]; do
		e=$(find /var/lib/btsdumpd -maxdepth 1 -name "[!.]*.$1" | head -n 1)
		[ -n "$e" ] && break
		sleep 1
		i=$((i + 1))
	done
	echo "$i" >$R/"$1"-wait-s
	i=0
	while [ $i -lt 120 ] && systemctl list-units --no-legend --state=active,activating,deactivating 'btsdumpd@*' | grep -q .; do
		sleep 1
		i=$((i + 1))
	done
	sleep 2
	echo "$e"
}

# crash COMM: /usr/local/bin/COMM null as uid 1000, a fresh exec (so
# dumpable), SIGSEGV; its exit status in $R/COMM-status, its store
# entry's path printed (wait_entry; the crasher's output to stderr)
crash() {
	sh -c "ulimit -c unlimited; exec setpriv --reuid=1000 --regid=1000 --clear-groups /usr/local/bin/$1 null" >&2
	echo $? >$R/"$1"-status
	wait_entry "$1"
}

# keep_entry ENTRY DIR: ENTRY's meta and reports copied to $R/DIR
keep_entry() {
	[ -n "$1" ] && mkdir -p $R/"$2" && cp "$1"/meta "$1"/report.* $R/"$2"/
}

entry=$(crash crasher)
echo "$entry" >$R/entry-path
step "crasher: $entry"

if [ -z "$lean" ]; then
	# Root's crash of a program in a mode-0700 directory (a service's private
	# /opt/... or /root): the entry is root's alone, with the trail (and, on
	# the patched kernel, its symbols: the analysis must open the program).
	install -d -m 0700 /opt/private
	cp /usr/local/bin/crasher /opt/private/rootcrash
	sh -c 'ulimit -c unlimited; exec /opt/private/rootcrash null'
	echo $? >$R/rootcrash-status
	rentry=$(wait_entry rootcrash)
	echo "$rentry" >$R/rootcrash-entry

	# The fleet: the journal, btsdumpd's entry in it, goes to the central host
	# (run-systemd-vm.sh's journal-remote, 10.0.2.2 on QEMU's user network)
	# through the stock systemd-journal-upload.service; done when the cursor
	# it saved is past every btsdumpd entry.
	ip link set lo up
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0
	ip -br addr >$R/net.txt 2>&1
	systemctl start systemd-journal-upload.service
	up=/var/lib/private/systemd/journal-upload/state
	i=0
	while [ $i -lt 120 ]; do
		c=$(sed -n 's/^LAST_CURSOR=//p' $up 2>/dev/null)
		[ -n "$c" ] && [ -n "$(journalctl -q --no-pager -n 1 MESSAGE_ID=6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a)" ] &&
			[ -z "$(journalctl -q --no-pager --after-cursor="$c" MESSAGE_ID=6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a)" ] && break
		sleep 1
		i=$((i + 1))
	done
	echo $i >$R/upload-wait-s
	systemctl show -p ActiveState -p Result systemd-journal-upload.service >$R/upload-unit
	journalctl -b -o short-monotonic --no-pager -u systemd-journal-upload.service >$R/upload-journal.txt
fi

# the operator's gdb: the bts commands come from /etc/gdb/gdbinit.d
# (btscrash-gdb), no -iex; a stock kernel's core has no trace, and bts
# says so (an unloaded bts would be "Undefined command"); the patched
# kernel's has the crash's last branches; beside the LBR collector
# (companion-lbr), systemd-coredump's core gets the note btsdumpd's entry
# keeps for it (gdb/bts.py: by the core's SHA-256)
if [ "$mode" = companion ] || [ "$mode" = companion-lbr ]; then
	# the core is systemd-coredump's
	coredumpctl dump crasher -o /tmp/crasher.core >$R/dump.txt 2>&1; echo "exit $?" >>$R/dump.txt
	# and the operator's other way in: coredumpctl debug starts the same
	# gdb on that core itself (the -A arguments are its own)
	coredumpctl --no-pager -A "-batch -ex 'bts list'" debug crasher \
		</dev/null >$R/coredumpctl-debug.txt 2>&1
	echo "exit $?" >>$R/coredumpctl-debug.txt
else
	btsdumpctl dump crasher -o /tmp/crasher.core >$R/dump.txt 2>&1; echo "exit $?" >>$R/dump.txt
fi
gdb -batch -ex 'bts list' /usr/local/bin/crasher /tmp/crasher.core >$R/gdb-bts.txt 2>&1
echo "exit $?" >>$R/gdb-bts.txt
rm -f /tmp/crasher.core
dpkg-query -W -f '${Package} ${Status}\n' 'btscrash-*' >$R/dpkg-query.txt 2>&1
ls -la /usr/lib/crash/extensions/ >$R/crash-ext.txt 2>&1
# both kernel series, each file hashed without its Date: line (the build's
# SOURCE_DATE_EPOCH): the check compares them with kernel-patches.sh's
for f in /usr/src/btscrash-patches*/*; do
	echo "$(sed '/^Date: /d' "$f" | sha256sum | cut -d' ' -f1) ${f#/usr/src/}"
done >$R/patches.txt

btsdumpctl list >$R/list.txt 2>&1; echo $? >>$R/list.txt
# companion mode: systemd-coredump's side of the same crash
cp /etc/btscrash-sd-mode $R/mode
journalctl -b -o json --no-pager MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 >$R/journal-coredump.json
coredumpctl --no-pager list >$R/coredumpctl.txt 2>&1
ls -la /var/lib/systemd/coredump/ >$R/coredump-ls.txt 2>&1
systemctl show -p ActiveState -p SubState btsdumpd.service >$R/companion-unit
btsdumpctl --json list >$R/list.json 2>$R/list.err
btsdumpctl --json info crasher >$R/info.json 2>$R/info.err
btsdumpctl show crasher >$R/show.txt 2>&1
btsdumpctl info crasher >$R/info.txt 2>&1
for e in /var/lib/btsdumpd/*; do
	n=$(basename "$e")
	mkdir -p $R/store/"$n"
	cp "$e"/meta "$e"/report.* $R/store/"$n"/ 2>/dev/null
done
ls -la /var/lib/btsdumpd/ >$R/store-ls.txt
[ -n "$entry" ] && ls -la "$entry" >$R/entry-ls.txt
if [ -z "$lean" ]; then
	getfacl -R -p /var/lib/btsdumpd >$R/acl.txt 2>&1
	# who reads the entry: the crashing user, not another one
	for u in 1000 1001; do
		for f in report.txt.zst report.json.zst meta core.zst; do
			as "$u" cat "$entry/$f" >/dev/null 2>&1
			echo "$f $?" >>$R/read-"$u".txt
		done
		as "$u" ls "$entry" >/dev/null 2>&1; echo "dir $?" >>$R/read-"$u".txt
		as "$u" btsdumpctl info crasher >$R/btsdumpctl-"$u".txt 2>&1; echo "exit $?" >>$R/btsdumpctl-"$u".txt
		# root's entry: no one else reads any of it
		for f in report.txt.zst report.json.zst meta core.zst; do
			as "$u" cat "$rentry/$f" >/dev/null 2>&1
			echo "$f $?" >>$R/rootcrash-read-"$u".txt
		done
		as "$u" ls "$rentry" >/dev/null 2>&1; echo "dir $?" >>$R/rootcrash-read-"$u".txt
		as "$u" btsdumpctl info rootcrash >$R/rootcrash-btsdumpctl-"$u".txt 2>&1
		echo "exit $?" >>$R/rootcrash-btsdumpctl-"$u".txt
	done
	[ -n "$rentry" ] && ls -la "$rentry" >$R/rootcrash-ls.txt
fi
if [ "$mode" = lbr ]; then
	step "purge and reinstall"
	# purge hands core_pattern back (the kernel's default here: no
	# systemd-coredump), the collector stops; a dpkg -i under this systemd
	# takes core_pattern and arms the collector again, no reboot
	dpkg --purge btscrash-gdb btscrash-daemon >$R/purge.txt 2>&1; echo "exit $?" >>$R/purge.txt
	cat /proc/sys/kernel/core_pattern >$R/core_pattern-purged
	systemctl is-active btsdumpd-lbr.service btsdumpd.socket >$R/units-purged 2>&1
	rm -f /run/btsdumpd-lbr/armed
	dpkg -i /var/tmp/btscrash-debs/btscrash-daemon_*.deb >$R/reinstall.txt 2>&1
	echo "exit $?" >>$R/reinstall.txt
	cat /proc/sys/kernel/core_pattern >$R/core_pattern-reinstalled
	lbr_armed reinstall
	cp /usr/local/bin/crasher /usr/local/bin/crasher2
	e2=$(crash crasher2)
	keep_entry "$e2" store2 && basename "$e2" >$R/store2/id
	# perf resets the LBR at a switch-in: a crash preempted after its
	# last branch (a busy CPU right after the reinstall) leaves no branch
	# of the thread, stored without a note and said in the journal
	# (docs/btsdumpd.md).  Then one crash more, which must have its
	# note; the checker accepts crasher2's only with that journal line
	if [ -n "$e2" ] && ! grep -qx 'TRACE=present' "$e2"/meta; then
		cp /usr/local/bin/crasher /usr/local/bin/crasher3
		keep_entry "$(crash crasher3)" store3
	fi
fi
if [ -z "$lean" ]; then
	btsdumpctl info rootcrash >$R/rootcrash-info.txt 2>&1; echo "exit $?" >>$R/rootcrash-info.txt
	for f in report.txt.zst report.json.zst meta core.zst; do
		cat "$rentry/$f" >/dev/null 2>&1; echo "$f $?" >>$R/rootcrash-read-0.txt
	done
fi
step "collecting"

journalctl -b -o json --no-pager SYSLOG_IDENTIFIER=btsdumpd >$R/journal-btsdumpd.json
journalctl -b -o short-monotonic --no-pager >$R/journal.txt
systemctl status --no-pager -l btsdumpd.socket 'btsdumpd@*' btsdumpd-harvest.service >$R/status.txt 2>&1
systemctl list-units --all --no-pager --no-legend 'btsdumpd*' >$R/units.txt
systemctl list-sockets --no-pager >$R/sockets.txt
systemctl --failed --no-legend --plain --no-pager >$R/failed.txt
systemctl is-system-running >$R/system-state.txt
systemd-analyze security --no-pager btsdumpd@.service >$R/security.txt 2>&1
uname -a >$R/uname.txt
systemctl --version >$R/systemd-version.txt

set +x
exec >/dev/ttyS1 2>&1
stty -F /dev/ttyS1 -opost 2>/dev/null
echo BTSCRASH-SD-BEGIN
tar -czf - -C $R . | base64
echo BTSCRASH-SD-END
sleep 1
systemctl --no-block poweroff
