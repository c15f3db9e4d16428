#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the test VM's initramfs: runs each scenario (traced crashes, an
# untraced one, RLIMIT_MEMLOCK too small, a kernel oops), keeps cores and
# logs in /results,
# writes them as a tar onto the virtio disk /dev/vda, prints the end marker.
# It runs after vm-lib.sh's vm_init preamble (busybox, /proc, /sys, /dev;
# vm_init_file puts it there).
mkdir -p /results && chmod 1777 /results
ulimit -c unlimited
R=/results
# rings on perf are charged as perf charges buffers: beyond
# perf_event_mlock_kb per CPU, within RLIMIT_MEMLOCK; with no free
# allowance RLIMIT_MEMLOCK decides, as for ds.c's rings (the memlock cases)
if grep -qw bts_crash.perf_rings=1 /proc/cmdline; then
	echo 0 > /proc/sys/kernel/perf_event_mlock_kb
fi
if grep -qw btscrash.capture /proc/cmdline; then
	# The capture kernel (tests/vm/run-kdump.sh): save the dump, filtered
	# at -d 31, flattened (-F) onto the raw disk; the host reassembles it.
	# the small report a capture kernel can keep even when the dump cannot
	# be: btsdump reads /proc/vmcore (ELF) through VMCOREINFO alone
	if [ -x /usr/bin/btsdump ]; then
		echo "BTSCRASH-REPORT-BEGIN"
		/usr/bin/btsdump vmcore -S -n 64 /proc/vmcore 2>&1
		echo "BTSCRASH-REPORT-END rc=$?"
	fi
	echo "== capture kernel: saving /proc/vmcore"
	makedumpfile -F -d 31 /proc/vmcore > /dev/vda 2>/tmp/makedumpfile.log
	rc=$?
	sync
	cat /tmp/makedumpfile.log
	echo "BTSCRASH-KDUMP-SAVED rc=$rc"
	reboot -f
fi
if grep -qw btscrash.kexec /proc/cmdline; then
	# tests/vm/kexec-test.sh: the second kernel says it booted; the first
	# kexecs into it with a traced program spinning on CPU 1.
	if grep -qw btscrash.kexeced /proc/cmdline; then
		# a program at addresses of its own (btsabi-hi, 0x20000000): an
		# LBR the first kernel left on would push its branches (the
		# kernel here is told to leave the LBR alone: source=none)
		/bin/btsabi-hi probe > /dev/null
		echo "BTSCRASH-KEXEC-BOOTED on $(grep -c ^processor /proc/cpuinfo) CPUs"
		poweroff -f
	fi
	# the LBR source records every program: no spinner (its log would grow
	# by gigabytes), the LBR is on on both CPUs anyway.  btscrash.kexec-perf:
	# nothing traced, perf's own intel_bts on the spinner (the recorder has
	# no part in stopping it: x86_perf_branch_recorders_off())
	if grep -qw btscrash.kexec-perf /proc/cmdline; then
		# no kernel symbols for perf to parse (minutes under TCG)
		: > /tmp/nokallsyms
		mount -o bind /tmp/nokallsyms /proc/kallsyms
		mount -t debugfs debugfs /sys/kernel/debug
		taskset 2 perf record -q --per-thread -S -e intel_bts//u -m ,8 -o /tmp/bts.data \
			/bin/crasher loop > /tmp/perf.out 2>&1 &
		# until perf holds BTS on CPU 1 (ds.c's debugfs: perf MASK),
		# read from CPU 0: a reader on CPU 1 would switch the spinner out
		taskset -p 1 $$ > /dev/null
		n=0
		until grep -q '^cpu 1 .* perf 0x[1-9a-f]' /sys/kernel/debug/ds/bts_buffers ||
			[ $n -ge 300 ]; do
			sleep 1
			n=$((n + 1))
		done
		echo "BTSCRASH-KEXEC-PERF: $(grep '^cpu 1 ' /sys/kernel/debug/ds/bts_buffers)"
		sed 's/^/BTSCRASH-KEXEC-PERF-SAID: /' /tmp/perf.out
	elif ! grep -qw bts_crash.source=lbr /proc/cmdline; then
		taskset 2 /bin/btsrun 4096 /bin/crasher loop &
	fi
	sleep 2
	kexec -l /boot/bzImage --initrd=/boot/initrd.gz \
		--append="console=ttyS0 panic=-1 btscrash.kexec btscrash.kexeced bts_crash.source=none" ||
		{ echo BTSCRASH-KEXEC-FAILED: kexec -l; poweroff -f; }
	echo "BTSCRASH-KEXEC-STARTING"
	kexec -e
	echo "BTSCRASH-KEXEC-FAILED: kexec -e returned"
	poweroff -f
fi
if grep -qw btscrash.asym /proc/cmdline; then
	# tests/vm/asym-test.sh: CPU 1 (the model's second vCPU, without BTS
	# and without the LBR) comes online after boot (maxcpus=1); traced
	# programs run on each CPU, then an oops on each.
	mount -t debugfs debugfs /sys/kernel/debug
	echo 0 > /proc/sys/kernel/panic_on_oops
	echo 1 > /sys/devices/system/cpu/cpu1/online
	echo "BTSCRASH-ASYM-ONLINE $(cat /sys/devices/system/cpu/online)"
	for mask in 2 1; do	# CPU 1, CPU 0
		taskset "$mask" /bin/btsrun 4096 /bin/busybox sh -c \
			'i=0; while [ $i -lt 50 ]; do i=$((i + 1)); done' &&
			echo "BTSCRASH-ASYM-TRACED mask $mask: ok"
	done
	for cpu in 1 0; do	# kmark: the markers that split the reports
		kmark "BTSCRASH-ASYM-OOPS-CPU$cpu"
		taskset $((cpu + 1)) sh -c 'echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
	done
	kmark "BTSCRASH-ASYM-DONE"
	poweroff -f
fi
if grep -qw btscrash.hole /proc/cmdline; then
	# tests/vm/oops-hole-test.sh: an oops in a traced program's syscall,
	# while its ring holds BTS (the kernel ring's hole), then one in an
	# untraced shell; each report says what its CPU recorded.
	# btscrash.hole=KIND: the LKDTM trigger (default EXCEPTION)
	kind=$(sed -n 's/.*btscrash\.hole=\([A-Z_]*\).*/\1/p' /proc/cmdline)
	kind=${kind:-EXCEPTION}
	mount -t debugfs debugfs /sys/kernel/debug
	echo 0 > /proc/sys/kernel/panic_on_oops
	if grep -qw btscrash.allocfail /proc/cmdline; then
		# the test kernel has fail_page_alloc: ring allocations failing
		/bin/btsabi alloc-fail | sed 's/^/BTSCRASH-ALLOC /'
	fi
	# kmark: a marker echoed to the tty once came after the next oops's
	# report (a cold CI run, preempt=full on 2 CPUs)
	kmark "BTSCRASH-HOLE-TRACED"
	/bin/btsrun 4096 /bin/sh -c "echo $kind > /sys/kernel/debug/provoke-crash/DIRECT"
	kmark "BTSCRASH-HOLE-UNTRACED"
	sh -c "echo $kind > /sys/kernel/debug/provoke-crash/DIRECT"
	kmark "BTSCRASH-HOLE-DONE"
	poweroff -f
fi
kd=$(sed -n 's/.*btscrash\.kdump=\([A-Z_]*\).*/\1/p' /proc/cmdline)
if [ -n "$kd" ]; then
	# Panic with kdump loaded (tests/vm/run-kdump.sh), a traced process
	# running meanwhile.
	mount -t debugfs debugfs /sys/kernel/debug
	if grep -qw bts_crash.source=lbr-kernel /proc/cmdline && [ "$kd" = EXCEPTION ]; then
		# an oops that does not panic first: the LBR must record again
		# after it (kdump-test.py: the panic's ring is not this one's)
		echo 0 > /proc/sys/kernel/panic_on_oops
		echo "== a first oops (BUG), not fatal"
		sh -c 'echo BUG > /sys/kernel/debug/provoke-crash/DIRECT'
	fi
	echo 1 > /proc/sys/kernel/panic_on_oops
	# the crasher is a traced shell's child: its ring was made at fork
	/bin/btsrun 4096 /bin/sh -c '/bin/crasher loop & echo $! > /tmp/traced.pid; wait' &
	kexec -p /boot/bzImage --initrd=/boot/capture.gz \
		--append="console=ttyS0 btscrash.capture nr_cpus=1 irqpoll reset_devices panic=-1 no_timer_check" ||
		{ echo BTSCRASH-KDUMP-FAILED: kexec -p; reboot -f; }
	# its pid before the panic, however long a loaded host makes the
	# start (a fixed 2 s once missed it), then 2 s of its branches
	n=0
	while [ ! -s /tmp/traced.pid ] && [ $n -lt 120 ]; do sleep 1; n=$((n + 1)); done
	echo "BTSCRASH-TRACED-PID $(cat /tmp/traced.pid)"
	sleep 2
	echo "== provoking $kd"
	echo "$kd" > /sys/kernel/debug/provoke-crash/DIRECT
	echo "BTSCRASH-KDUMP-FAILED: no panic"
	reboot -f
fi
finish() {	# the results onto the disk, the end marker, off
	cat /proc/cmdline > "$R/cmdline"
	dmesg > "$R/dmesg"
	tar -cf /dev/vda -C "$R" .
	sync
	echo BTSCRASH-VM-DONE
	reboot -f
}
run() {	# name, command...: runs it; NAME.out, NAME.status, NAME.core
	name=$1; shift
	echo "$R/$name.core" > /proc/sys/kernel/core_pattern
	echo "== $name: $*"
	"$@" > "$R/$name.out" 2>&1
	echo "$?" > "$R/$name.status"
	cat "$R/$name.out"
}
if grep -qw btscrash.bench /proc/cmdline; then
	# bench/vm-bench.sh: untraced first, while the switch hook's static
	# key is still off; then again with it on; then traced.
	# btscrash.bench=base: only those (a kernel without btscrash too).
	mkdir -p /bench && export VMBENCH_CORE_DIR=/bench
	echo "/bench/core.%p" > /proc/sys/kernel/core_pattern
	# btscrash.bench_perf (vm-bench.sh's perf part): a system-wide LBR
	# user, perf record -b, its cost at the switch (perf resets the LBR
	# at every switch-in) alone: a sample period of 10^11 cycles, more
	# than the boot runs, so no sample (and no PMI: under -icount the
	# model's PMI stops QEMU, "Raised interrupt while not in I/O function")
	perf=
	if grep -qw btscrash.bench_perf /proc/cmdline; then
		perf record -a -b -c 100000000000 -o /tmp/perf.data -- \
			sleep 100000 > /tmp/perf.out 2>&1 &
		perf=$!
		sleep 1
	fi
	{
		[ -z "$perf" ] || echo "PERF-LBR: pid $perf $(cat /tmp/perf.out)"
		vmbench pingpong untraced-key-off 2000 7
		vmbench branches untraced-key-off 200000 5
		vmbench coredump untraced-key-off 48 5
		grep -qw btscrash.bench=base /proc/cmdline && exit
		btsrun 16 /bin/true
		vmbench pingpong untraced 2000 7
		vmbench branches untraced 200000 5
		vmbench coredump untraced 48 5
		vmbench pingpong traced 2000 7
		vmbench branches traced 200000 5
		vmbench coredump traced 48 5
	} 2>&1 | tee "$R/bench.out"
	if [ -n "$perf" ]; then
		kill -INT "$perf"
		wait "$perf"
		echo "PERF-LBR: rc $? $(cat /tmp/perf.out)" | tee -a "$R/bench.out"
	fi
	tar -cf /dev/vda -C "$R" .
	sync
	echo BTSCRASH-VM-DONE
	reboot -f
fi
if grep -qE '(^| )bts_crash.source=lbr( |$)' /proc/cmdline; then
	# The LBR source on the LBR model (tests/vm/check-lbr.py): programs
	# nobody chose to trace crash and their cores carry their last user
	# branches.  The model logs every entry it pushes (lbr.log).
	run lbr-null /bin/crasher null
	run lbr-smash /bin/crasher smash
	run lbr-threads /bin/crasher threads
	# two processes alternating on CPU 0 (the other linked at 0x20000000)
	run lbr-pingpong /bin/btsabi lbr-pingpong
	if [ -x /usr/bin/perf ]; then
		# perf's LBR user (perf record -b: amd_pmu_lbr_add(), or
		# intel_pmu_lbr_add()) holds the stack while the crash happens:
		# the note says so (a gap marker) and perf gets the entries;
		# perf gone, the next crash's note is its own entries again.
		# perf re-raises its workload's SIGSEGV: cores named by comm
		echo "$R/lbr-perf.%e.core" > /proc/sys/kernel/core_pattern
		# perf's parse of /proc/kallsyms: hundreds of MB of user
		# pushes in the model's log; user samples need no kernel
		# symbol (as perf-bts-kernel.sh)
		: > /tmp/nokallsyms
		mount -o bind /tmp/nokallsyms /proc/kallsyms
		echo "== lbr-perf: perf record -b ... /bin/crasher null"
		perf record -b -e cycles:u -c 997 -o "$R/lbr-perf.data" \
			-- /bin/crasher null > "$R/lbr-perf.out" 2>&1
		cat "$R/lbr-perf.out"
		perf report -D -i "$R/lbr-perf.data" > "$R/lbr-perf.report" 2>&1
		rm -f "$R/lbr-perf.data"
		umount /proc/kallsyms
		# bpf_get_branch_snapshot() with no perf LBR user, on CPU 0:
		# none, and the LBR source's stack left on there (the crash
		# after perf, on CPU 0 too, has its own entries)
		taskset 1 /bin/bpfsnap run > "$R/lbrsnap.out" 2>&1
		run lbr-afterperf taskset 1 /bin/crasher null
	fi
	if [ -x /usr/libexec/btsdumpd ]; then
		# btsdumpd as core_pattern handler: an untraced crash's LBR
		# note in its store, report and journal summary
		mkdir -p "$R/store"
		echo 0 > /proc/sys/kernel/core_pipe_limit
		echo "|/usr/libexec/btsdumpd --store $R/store --dump-mode=%d %P %u %g %s %t %e" \
			> /proc/sys/kernel/core_pattern
		echo "== daemon: crasher null (untraced)"
		/bin/crasher null > "$R/daemon-lbr.out" 2>&1
		n=0
		while pidof btsdumpd > /dev/null && [ $n -lt 120 ]; do sleep 1; n=$((n + 1)); done
	fi
	finish
fi
if grep -qw btscrash.defaults /proc/cmdline; then
	# No bts_crash. or ds. parameter (check-vm.py check_defaults): what
	# records by default, around a traced and an untraced crash; the
	# system-wide default's one knob is its sysctl
	echo "DEFAULTS-PARAMS: $(ls /sys/module/bts_crash/parameters | tr '\n' ' ')"
	echo "DEFAULTS-SYSCTL: $(cat /proc/sys/kernel/bts_crash_task_records)"
	run null    /bin/btsrun 4096 /bin/crasher null
	run notrace /bin/crasher null
	finish
fi
run null    /bin/btsrun 4096 /bin/crasher null
run smash   /bin/btsrun 4096 /bin/crasher smash
run threads /bin/btsrun 4096 /bin/crasher threads
run handler /bin/btsrun 4096 /bin/crasher handler
run notrace /bin/crasher null
# a 32-bit program (compat task), traced from exec: an ELF32 core
run null32  /bin/btsrun 4096 /bin/crasher32 null
# a ring far smaller than the trail: it wraps, the newest 256 stay
run wrap    /bin/btsrun 256 /bin/crasher null
# 1 page of locked memory allowed; 4096 records need 24 pages: refused
run memlock sh -c 'ulimit -l 4; exec /bin/btsrun -u 1000 4096 /bin/crasher ok'
# Inherited by a child: a traced shell forks the crasher.
run fork    /bin/btsrun 4096 /bin/sh -c '/bin/crasher null; echo "shell: $?"'
# The system-wide default traces what is exec'd; a user over RLIMIT_MEMLOCK
# runs untraced (a log line says why) and still crashes normally.
# (btsrun itself is exec'd before the default is set, so it is untraced.)
run sysdefault-memlock sh -c 'ulimit -l 4; exec /bin/btsrun -d 4096 -u 1000 0 /bin/crasher null'
run sysdefault /bin/crasher null
echo 0 > /proc/sys/kernel/bts_crash_task_records
# The user-visible contract (tests/vm/btsabi.c): prctl and sysctl limits,
# charging, secure exec.  Its setuid-root copy is made here (root's cpio).
cp /bin/btsabi /bin/btsabi-suid && chmod 4755 /bin/btsabi-suid
run abi /bin/btsabi
# A load of SS delays the step trap (the emulation must not see a branch).
run movss /bin/btsrun 4096 /bin/btsabi movss
# ENABLE reaches a thread that spins in user mode (no system call).
run lateenable /bin/btsabi late-enable
# A uprobe in the traced crasher's call chain (tracefs): the program runs
# and crashes as without it, its trail intact.
mkdir -p /sys/kernel/tracing
if mount -t tracefs tracefs /sys/kernel/tracing &&
   echo "p:btscrash/checksum /bin/crasher:$(cat /etc/uprobe-offset)" \
	> /sys/kernel/tracing/uprobe_events &&
   echo 1 > /sys/kernel/tracing/events/btscrash/checksum/enable; then
	run uprobe /bin/btsrun 4096 /bin/crasher null
	cat /sys/kernel/tracing/uprobe_profile > "$R/uprobe.profile"
	echo 0 > /sys/kernel/tracing/events/btscrash/checksum/enable
	echo > /sys/kernel/tracing/uprobe_events
fi
if [ -x /usr/libexec/btsdumpd ]; then
	# btsdumpd as the kernel's core_pattern handler (no service here: it
	# collects directly and logs to /dev/kmsg).  A traced crash; a core
	# cut by ProcessSizeMax (its notes come first, so the trail survives);
	# then a storm of 100 crashes against a burst of 12.
	S=$R/store
	mkdir -p /etc "$S"
	# one window for the whole storm: on a loaded host the guest's clock
	# can run ~3x fast (TSC calibrated against the PIT), and a 300 s
	# window once ended mid-storm (25 stored, not 12).  And the analyses
	# of the storm's first 12 (2 vCPUs, every handler at once) can take
	# over the default 60 s on a loaded host (TRACE=error seen)
	printf '[Store]\nRateLimitIntervalSec=3600\nRateLimitBurst=12\nAnalyzeTimeoutSec=600\n' \
		> /etc/btsdumpd.conf
	printf '[Store]\nProcessSizeMax=200K\n' > /etc/btsdumpd-cut.conf
	echo 0 > /proc/sys/kernel/core_pipe_limit
	echo "|/usr/libexec/btsdumpd --store $S --dump-mode=%d %P %u %g %s %t %e" > /proc/sys/kernel/core_pattern
	echo "== daemon: btsrun 4096 crasher null"
	/bin/btsrun 4096 /bin/crasher null > "$R/daemon-null.out" 2>&1
	echo "== daemon: crasher smash (traced), ProcessSizeMax=200K"
	echo "|/usr/libexec/btsdumpd --store $R/store-cut --config /etc/btsdumpd-cut.conf %P %u %g %s %t %e" \
		> /proc/sys/kernel/core_pattern
	/bin/btsrun 4096 /bin/crasher smash > "$R/daemon-cut.out" 2>&1
	echo "|/usr/libexec/btsdumpd --store $S --dump-mode=%d %P %u %g %s %t %e" > /proc/sys/kernel/core_pattern
	while pidof btsdumpd > /dev/null; do sleep 1; done
	echo "== daemon: storm of 100 crashes"
	i=0
	while [ $i -lt 100 ]; do
		/bin/crasher null 2>/dev/null &
		i=$((i + 1))
	done
	wait
	n=0
	while pidof btsdumpd > /dev/null && [ $n -lt 300 ]; do sleep 1; n=$((n + 1)); done
	echo "== daemon: storm done after ${n}s of handlers"
	ls "$S" > "$R/store.ls"
fi
# A kernel oops (LKDTM, the process dies, the kernel goes on): the report
# must carry this CPU's last kernel branches, from the per-CPU ring.
mount -t debugfs debugfs /sys/kernel/debug
if [ -r /sys/kernel/debug/page_tables/current_user ]; then
	# PTI: with a traced program spinning on a CPU, the user page tables
	# map no page any CPU writes a ring through (check-vm.py check_pti)
	/bin/btsrun 4096 /bin/crasher loop &
	sleep 2
	cat /sys/kernel/debug/ds/bts_buffers > "$R/pti-buffers"
	cat /sys/kernel/debug/page_tables/current_user > "$R/pti-user-pt"
	cat /sys/kernel/debug/ds/bts_buffers >> "$R/pti-buffers"
	kill -9 $!
	wait
fi
run oops sh -c 'echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
cat /proc/cmdline > "$R/cmdline"
dmesg > "$R/dmesg"
tar -cf /dev/vda -C "$R" .
sync
# Last, with the results saved: an oops with panic_on_oops and no kdump.
# The panic report (console.log) must show the oops's last branches;
# panic=-1 reboots and QEMU (-no-reboot) exits.  kmark: echoed to the tty,
# the end marker was lost to the panic once (a cold run's vm-6.1-hw: "the
# VM did not finish")
kmark BTSCRASH-VM-DONE
echo 1 > /proc/sys/kernel/panic_on_oops
kmark BTSCRASH-PANIC-ON-OOPS
sh -c 'echo EXCEPTION > /sys/kernel/debug/provoke-crash/DIRECT'
reboot -f	# with -no-reboot QEMU exits (no ACPI here to power off)
