# SPDX-License-Identifier: GPL-2.0-or-later
# Shell functions the VM harnesses share (sourced by run-vm.sh and
# run-kdump.sh): the initramfs root with busybox, the test programs (static)
# and tests/vm/init.sh; dynamic tools with their libraries; cpio packing.
# Needs $src (repository root).

# The kernel every VM test boots: KERNEL, 6.12 (the primary kernel) or 6.1
# (the smoke set, tests named *-6.1-*: tests/vm/meson.build's head);
# scripts/kernel-build.sh reads it, the harnesses source this file before
# they build.
KERNEL=${KERNEL:-6.12}
export KERNEL

# QEMU runs TCG single-threaded (-accel tcg,thread=single) in both
# harnesses: with multi-threaded TCG and 2 vCPUs, 3 boots in 12 died of a
# stray int3 at a function entry while ftrace (the emulation backend's
# kernel rings) patched kernel text on the other vCPU, which we take for
# stale translated code in QEMU; single-threaded: 0 in 12, just as fast.

# The models' CPU (qemu/): Skylake-SP, an Intel CPU, since Linux sets
# X86_FEATURE_BTS only on Intel; the BTS model's adds DS, 64-bit DS and
# CPL-qualified BTS.  Also used by run-systemd-vm.sh and the model's own
# self-test (qemu/selftest/run.sh).  The PMU model's adds the LBR
# stack and the architectural PMU (pmu=on): the CPU Linux's perf drives
# (tests/vm/pmu-vm.sh).
VM_INTEL_CPU="max,vendor=GenuineIntel,family=6,model=85,stepping=4"
VM_BTS_CPU="$VM_INTEL_CPU,ds=on,dtes64=on,ds-cpl=on"
VM_PMU_CPU="$VM_BTS_CPU,lbr=on,pmu=on"
# The AMD model (qemu/ patches 0013-0014): a Zen 4 (family 0x19, model
# 0x11, Genoa) with PerfMonV2 (six core counters) and the 16-entry
# LbrExtV2 stack (pmu=on, lbr=on on an AMD CPU); Linux 6.12 says "Fam17h+
# 16-deep LBR, core perfctr, AMD PMU driver".  No BTS on AMD.
VM_AMD_CPU="max,vendor=AuthenticAMD,family=25,model=17,stepping=1,pmu=on,lbr=on"
# The same model as a Zen 5 (family 0x1A, model 0x02, Turin): Linux 6.12
# sets X86_FEATURE_ZEN5 for it and takes the same PerfMonV2/LbrExtV2 path.
VM_ZEN5_CPU="max,vendor=AuthenticAMD,family=26,model=2,stepping=1,pmu=on,lbr=on"
# The Architectural LBR model (qemu/ patch 0015): a Sapphire Rapids-like
# CPU (family 6 model 0x8f) with the BTS model, the PMU and Arch LBR
# (lbr=on,lbr-fmt=0x3f: CPUID leaf 0x1C, IA32_LBR_CTL/DEPTH, no TOS) in
# place of the model-specific LBR; Linux 6.12 says "Architectural LBR,
# Sapphire Rapids events, 32-deep LBR, ... Intel PMU driver" and keeps the
# LBR state with MSRs (no XSAVES under TCG).
VM_ARCH_LBR_CPU="max,vendor=GenuineIntel,family=6,model=143,stepping=8,ds=on,dtes64=on,ds-cpl=on,lbr=on,lbr-fmt=0x3f,pmu=on"

# The kernel command line of the VMs that run perf on the PMU models
# (lbr-perf-vm.sh, perf-oops-test.sh, run-collector-vm.sh): no throttling
# of slow PMIs (TCG makes each look slow): it lowers
# perf_event_max_sample_rate under a running perf, and a perf that read
# the old rate then fails to open its default-rate event.  Linux >= 5.8
# applies sysctl.* parameters before init; each guest reads it back and
# its check fails unless it is 0.
VM_PERF_ARGS="sysctl.kernel.perf_cpu_time_max_percent=0"

# vm_kernel_and_model LOGPREFIX: builds the test kernel (scripts/
# kernel-build.sh; obj: its object directory) and, unless QEMU names it,
# the models' QEMU (scripts/qemu-build.sh; QEMU, exported), their logs in
# LOGPREFIX.kernel-build.log and LOGPREFIX.qemu-build.log; a TAP
# bail-out and exit 1 when either fails.  VM_KERNEL_OBJ: a kernel object
# directory to boot instead of building one (how asym-test.sh checked a
# tree without its fix).
vm_kernel_and_model() {
	obj=${VM_KERNEL_OBJ:-}
	[ -n "$obj" ] || obj=$("$src/scripts/kernel-build.sh" 2>"$1.kernel-build.log" | tail -n 1) ||
		{ echo "Bail out! the kernel did not build (log: $1.kernel-build.log)"; exit 1; }
	[ -x "${QEMU:-}" ] || QEMU=$("$src/scripts/qemu-build.sh" 2>"$1.qemu-build.log" | tail -n 1) ||
		{ echo "Bail out! the model (QEMU) did not build"; exit 1; }
	export QEMU
}

# vm_setup OUTDIR: what a VM test with its own /init does first: OUTDIR,
# the kernel and the model (vm_kernel_and_model OUTDIR), the scratch
# directory (vm_workdir); root: where its root goes, $work/root.
vm_setup() {
	mkdir -p "$1"
	vm_kernel_and_model "$1"
	vm_workdir
	root=$work/root
}

# vm_guest OUTDIR [BINARY...]: vm_setup, and in $root vm_root's root
# with the dynamic BINARYs (vm_add_dynamic).
vm_guest() {
	vm_setup "$1"
	vm_root "$root"
	shift
	[ $# = 0 ] || vm_add_dynamic "$root" "$@"
}

# vm_busybox DIR: the least root, busybox and the mount points vm_init's
# preamble mounts.
vm_busybox() {
	mkdir -p "$1/bin" "$1/proc" "$1/sys" "$1/dev" "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
}

# vm_init INIT [debugfs] [nopanic]: writes the start of a guest's /init
# (busybox sh) to INIT, executable: busybox's applets installed in /bin,
# /proc, /sys and /dev mounted, kmark() for the console's marker lines
# that an oops or a panic follows; debugfs: /sys/kernel/debug too (LKDTM's
# provoke-crash); nopanic: an oops does not panic (panic_on_oops 0).  The
# caller appends the rest (cat >> INIT).
vm_init() {
	vm_i_file=$1
	shift
	cat > "$vm_i_file" <<'PREAMBLE'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# kmark LINE: LINE on the console through printk (/dev/kmsg), in order
# with the kernel's messages.  Echoed to the tty it waits in the serial
# driver's buffer: an oops right after it prints first, and a panic loses
# it (oops-hole's reports split wrongly, vm-6.1-hw's end marker lost).
# The tty's own output is sent first (stty setting the same modes:
# tcsetattr(TCSADRAIN) waits until the UART sent it): else the record,
# written to the UART whole, lands inside a tty line still going out (a
# CI run's perf-oops: "PERF-OOPS-C-RC: PERF-OOPS-4", its marker not found)
kmark() {
	stty "$(stty -g < /dev/console)" < /dev/console
	echo "$1" > /dev/kmsg
}
PREAMBLE
	for vm_i_opt in "$@"; do
		case $vm_i_opt in
		debugfs) echo 'mount -t debugfs debugfs /sys/kernel/debug' ;;
		nopanic) echo 'echo 0 > /proc/sys/kernel/panic_on_oops' ;;
		*) echo "vm_init: $vm_i_opt is debugfs or nopanic" >&2; return 1 ;;
		esac
	done >> "$vm_i_file"
	chmod +x "$vm_i_file"
}

# vm_init_file INIT FILE: vm_init's preamble, then the guest script FILE
# (tests/vm/init.sh, collector-init.sh) without its #! line.
vm_init_file() {
	vm_init "$1"
	sed 1d "$2" >> "$1"
}

# vm_prog ROOT PROG...: tests/vm/PROG.c as the static ROOT/bin/PROG.
vm_prog() {
	root=$1
	shift
	for prog in "$@"; do
		gcc -static -O2 -Wall -pthread -I"$src/include/uapi/linux" \
			-o "$root/bin/$prog" "$src/tests/vm/$prog.c"
	done
}

# vm_root DIR: a root with busybox, crasher, btsrun, btsabi, vmbench,
# bpfsnap, /init
# (tests/vm/init.sh).
vm_root() {
	vm_busybox "$1"
	# -O0 and frame pointers: the trails are the source's call chain
	gcc -static -g -O0 -fno-omit-frame-pointer -fno-stack-protector \
		-fcf-protection=none -pthread -o "$1/bin/crasher" "$src/tests/crasher.c"
	# the same as a 32-bit program (IA32_EMULATION; gcc-multilib): the
	# emulation decodes it in its mode (smash's 64-bit pattern truncates)
	gcc -m32 -static -g -O0 -fno-omit-frame-pointer -fno-stack-protector \
		-fcf-protection=none -Wno-overflow -o "$1/bin/crasher32" "$src/tests/crasher.c"
	vm_prog "$1" btsrun btsabi vmbench bpfsnap
	# btsabi linked elsewhere: its branches are told from btsabi's by
	# address (the LBR source's two processes on one CPU)
	gcc -static -O2 -Wall -pthread -I"$src/include/uapi/linux" \
		-Wl,-Ttext-segment=0x20000000 -o "$1/bin/btsabi-hi" "$src/tests/vm/btsabi.c"
	# file offset of crasher's checksum(), for a uprobe (init.sh)
	mkdir -p "$1/etc"
	set -- "$1" $(readelf -lW "$1/bin/crasher" | awk '$1 == "LOAD" && ($7 ~ /E/ || $8 ~ /E/) { print $2, $3; exit }') \
		"0x$(nm "$1/bin/crasher" | awk '$3 == "checksum" { print $1 }')"
	printf '0x%x\n' $(($4 - $3 + $2)) > "$1/etc/uprobe-offset"
	vm_init_file "$1/init" "$src/tests/vm/init.sh"
}

# vm_add_dynamic ROOT BINARY...: the binaries and every library they load.
vm_add_dynamic() {
	root=$1
	shift
	for bin in "$@"; do
		mkdir -p "$root$(dirname "$bin")"
		cp "$bin" "$root$bin"
		ldd "$bin" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' |
		while read -r lib; do
			[ -f "$lib" ] || continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# vm_workdir: a scratch directory in $work, removed at exit, QEMU (its pid
# in $qemu_pid, when set) ended first.
vm_workdir() {
	work=$(mktemp -d)
	qemu_pid=
	trap '[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null; rm -rf "$work"' EXIT
}

# vm_boot_failed LOG: whether a kernel on console LOG oopsed, panicked or
# warned before its init ran (tests/vm/kwarn.py --boot, the one test of
# it); if so, says so on stderr with the line.  Every harness polls it
# while its QEMU runs, so that such a guest fails its test in seconds,
# not at the harness's timeout.
vm_boot_failed() {
	vm_bad=$(python3 "$src/tests/vm/kwarn.py" --boot "$1" 2>&1) && return 1
	echo "vm: the guest failed at boot, QEMU ended: $vm_bad" >&2
	echo "vm: the guest failed at boot, QEMU ended: $vm_bad" >> "$1"
}

# vm_guard LOG CMD...: runs CMD (QEMU, maybe under timeout) and waits for
# it, ending it when a boot on console LOG failed (vm_boot_failed).  Its
# status is CMD's (143 when ended).  For harnesses that would otherwise
# run QEMU in the foreground.
vm_guard() {
	vm_g_log=$1
	shift
	"$@" &
	vm_g_pid=$!
	while kill -0 "$vm_g_pid" 2>/dev/null; do
		if vm_boot_failed "$vm_g_log"; then kill "$vm_g_pid" 2>/dev/null; break; fi
		sleep 2
	done
	wait "$vm_g_pid"
}

# vm_wait PID LOG PATTERN SECONDS: waits until QEMU (PID) exits, LOG has a
# line matching PATTERN (grep BRE), a boot on LOG failed (vm_boot_failed)
# or SECONDS pass, then ends QEMU: a guest's poweroff or reboot can hang.
vm_wait() {
	vm_i=0
	while kill -0 "$1" 2>/dev/null && [ $vm_i -lt "$4" ] && ! grep -q "$3" "$2"; do
		[ $((vm_i % 2)) = 1 ] && vm_boot_failed "$2" && break
		sleep 1
		vm_i=$((vm_i + 1))
	done
	sleep 1
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# vm_boot OBJDIR INITRD OUTDIR MARKER SECONDS APPEND QEMU-ARGS...: boots
# OBJDIR's bzImage with INITRD on $vm_qemu (QEMU-ARGS: memory, CPUs,
# devices), the console in OUTDIR/console.log, and waits until the console
# shows MARKER (vm_wait); APPEND follows "console=ttyS0 panic=-1".
vm_boot() {
	vm_b_obj=$1 vm_b_initrd=$2 vm_b_out=$3 vm_b_marker=$4 vm_b_secs=$5 vm_b_append=$6
	shift 6
	# emptied here, not by the background job's redirection, which can
	# come after vm_wait's first look: a console left by an earlier boot
	# into OUTDIR then ended this one at once (vm-boot-fail's second boot)
	: > "$vm_b_out/console.log"
	# shellcheck disable=SC2086
	$vm_qemu "$@" -nographic -no-reboot \
		-kernel "$vm_b_obj/arch/x86/boot/bzImage" -initrd "$vm_b_initrd" \
		-append "console=ttyS0 panic=-1 $vm_b_append" \
		> "$vm_b_out/console.log" 2>&1 &
	qemu_pid=$!
	vm_wait "$qemu_pid" "$vm_b_out/console.log" "$vm_b_marker" "$vm_b_secs"
	qemu_pid=
}

# vm_pack ROOT OUT: a newc cpio archive, not compressed: the guest's
# kernel inflated a gzip'd one under TCG on every boot (and the capture
# kernel's again), about 1.5 s of host CPU a boot; an uncompressed archive
# is copied out.  (The names still say .gz: a cpio needs none.)
vm_pack() {
	(cd "$1" && find . | cpio -o -H newc --quiet) > "$2"
}

# vm_machine OUTDIR [CPL]: which CPU the VM gets and which backend records, from
# BTSCRASH_BACKEND (default emul):
#   emul  Debian's QEMU, -cpu max (no BTS), the kernel's ds.emulate=1;
#   lbr, lbr-kernel  the LBR model (qemu/, $QEMU): bts_crash.source=
#         lbr or lbr-kernel, every entry pushed logged to OUTDIR/lbr.log;
#         Intel's model-specific LBR (32 entries), or with VM_LBR_CPU=amd
#         the AMD model's LbrExtV2 ($VM_AMD_CPU, 16 entries), =zen5 the
#         same model as a Zen 5 ($VM_ZEN5_CPU);
#   hw    the BTS model (qemu/, built by scripts/qemu-build.sh, path
#         in $QEMU): an Intel CPU with DS/BTS, the hardware backend on by
#         default, every record the CPU writes logged to OUTDIR/bts.log
#         (the oracle, tests/vm/oracle.py); with CPL, only the records
#         of branches taken at that CPL (3: what user cores are checked
#         against, without the kernel rings' hundreds of millions).
# Sets vm_qemu (command and machine options) and vm_backend_args (kernel).
vm_machine() {
	# the models' oracle logs; VM_ORACLE_LOG=0 (bench/vm-bench.sh): none
	# (a kernel-branch log grows by gigabytes a minute, 59 GB seen)
	vm_log=
	if [ "${VM_ORACLE_LOG:-1}" != 0 ]; then
		case ${BTSCRASH_BACKEND:-emul} in
		lbr*) vm_log=",lbr-log=$1/lbr.log" ;;
		hw) vm_log=",bts-log=$1/bts.log,bts-log-cpl=${2:--1}" ;;
		esac
	fi
	case ${BTSCRASH_BACKEND:-emul} in
	emul)
		vm_qemu="qemu-system-x86_64 -accel tcg,thread=single -cpu max"
		# kernel rings are off by default without BTS hardware
		vm_backend_args="ds.emulate=1 bts_crash.cpu_records=4096"
		;;
	lbr|lbr-kernel)
		[ -x "${QEMU:-}" ] || { echo "vm_machine: QEMU (the LBR model) not set" >&2; return 1; }
		# Skylake-SP with the model's LBR (qemu/ L1-L9), or the AMD
		# model's Zen 4 with LbrExtV2 (A1-A8; VM_LBR_CPU=amd) or Zen 5
		# (VM_LBR_CPU=zen5), every entry pushed logged to
		# OUTDIR/lbr.log; no BTS.  LBR_MODEL_CPU:
		# any other CPU with an LBR model (bench/vm-bench-perf.sh:
		# VM_AMD_CPU or VM_ZEN5_CPU)
		rm -f "$1/lbr.log"
		vm_log_tail "$1"
		# pmu=on: the stack is perf's, and perf drives it only with
		# its PMU driver (the recorder reads perf's LBR tail)
		vm_cpu="$VM_INTEL_CPU,lbr=on,pmu=on"
		case ${VM_LBR_CPU:-intel} in
		amd) vm_cpu=$VM_AMD_CPU ;;
		zen5) vm_cpu=$VM_ZEN5_CPU ;;
		esac
		vm_qemu="$QEMU -L /usr/share/seabios -L /usr/share/qemu -nic none
			-accel tcg,thread=single -cpu ${LBR_MODEL_CPU:-$vm_cpu}$vm_log"
		# lbr: every task's user branches; lbr-kernel: each CPU's
		# kernel branches for the per-CPU rings (oops, kdump), and
		# traced tasks on the emulation
		if [ "$BTSCRASH_BACKEND" = lbr ]; then
			vm_backend_args="bts_crash.source=lbr"
		else
			vm_backend_args="ds.emulate=1 bts_crash.source=lbr-kernel"
		fi
		# VM_DEFAULTS=1: the model, no btscrash parameter at all
		[ "${VM_DEFAULTS:-0}" = 0 ] || vm_backend_args=
		;;
	hw)
		[ -x "${QEMU:-}" ] || { echo "vm_machine: QEMU (the BTS model) not set" >&2; return 1; }
		# per-task rings on perf's intel_bts need the PMU driver
		[ "${VM_PERF_RINGS:-0}" = 0 ] || : "${BTS_MODEL_CPU:=$VM_PMU_CPU}"
		: "${BTS_MODEL_CPU:=$VM_BTS_CPU}"
		rm -f "$1/bts.log"
		vm_qemu="$QEMU -L /usr/share/seabios -L /usr/share/qemu -nic none
			-accel tcg,thread=single -cpu $BTS_MODEL_CPU$vm_log"
		# kernel rings: opt-in (4096 records, every kernel branch);
		# branches are denser than the emulation's function entries.
		# VM_DEFAULTS=1: no btscrash parameter at all (vm-hw-defaults)
		vm_backend_args="bts_crash.print_records=128 bts_crash.cpu_records=4096"
		[ "${VM_DEFAULTS:-0}" = 0 ] || vm_backend_args=
		;;
	*)
		echo "vm_machine: BTSCRASH_BACKEND is emul, hw, lbr or lbr-kernel" >&2
		return 1
		;;
	esac
	# the models' CPU options, bench/vm-bench.sh: VM_CPU_EXTRA (",pmu=on")
	# appended; VM_PMU_LOG=1: every MSR access logged to OUTDIR/pmu.log
	if [ "${BTSCRASH_BACKEND:-emul}" != emul ]; then
		rm -f "$1/pmu.log"
		vm_qemu="$vm_qemu${VM_CPU_EXTRA:-}"
		[ "${VM_PMU_LOG:-0}" = 0 ] || vm_qemu="$vm_qemu,pmu-log=$1/pmu.log"
	fi
	vm_qemu="$vm_qemu ${VM_QEMU_EXTRA:-}"	# bench/vm-bench.sh: -icount
	echo "${BTSCRASH_BACKEND:-emul}" > "$1/backend"
}

# vm_log_tail OUTDIR: with VM_LBR_LOG_TAIL=N (entries), the LBR model
# logs into a FIFO and only its last N entries reach OUTDIR/lbr.log (GNU
# tail keeps them in memory): a kernel-branch log grows by ~30 MB/s, ten
# gigabytes and more for a kdump run, of which the checks read the end.
# vm_log_done OUTDIR, once QEMU is gone, waits for lbr.log to be written.
vm_log_tail() {
	vm_log_tail_pid=
	[ -n "${VM_LBR_LOG_TAIL:-}" ] && [ -n "$vm_log" ] || return 0
	rm -f "$1/lbr.fifo" && mkfifo "$1/lbr.fifo"
	tail -c $((40 * VM_LBR_LOG_TAIL)) < "$1/lbr.fifo" > "$1/lbr.log" &
	vm_log_tail_pid=$!
	vm_log=",lbr-log=$1/lbr.fifo"
}

vm_log_done() {
	[ -n "${vm_log_tail_pid:-}" ] || return 0
	# a QEMU that never opened the FIFO leaves tail waiting for a writer
	kill -0 "$vm_log_tail_pid" 2>/dev/null &&
		timeout 5 sh -c ': > "$1"' sh "$1/lbr.fifo" 2>/dev/null
	wait "$vm_log_tail_pid" || true
	rm -f "$1/lbr.fifo"
	vm_log_tail_pid=
}

# vm_stock_kernel CACHE [META]: Debian's current kernel image of META
# (default linux-image-amd64: 6.1; linux-image-6.12-amd64: 6.12), stock
# and unmodified, unpacked (not installed) in CACHE, with one module:
# e1000 (the NIC), and depmod's lists.  Sets kdir, vmlinuz, kver, kpkg.
# Used by run-systemd-vm.sh and run-collector-vm.sh.
vm_stock_kernel() {
	cache=$1
	meta=${2:-linux-image-amd64}
	kpkg=$(apt-cache depends "$meta" | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	[ -n "$kpkg" ] || { echo "vm_stock_kernel: no $meta in apt's lists" >&2; return 1; }
	kbase=$cache/debian-kernel	# one directory per META: older ABIs go
	[ "$meta" = linux-image-amd64 ] || kbase=$kbase-$meta
	kdir=$kbase/$kpkg
	if [ ! -f "$kdir/done-e1000-2" ]; then
		echo "vm_stock_kernel: apt-get download $kpkg" >&2
		rm -rf "$kbase" && mkdir -p "$kdir/deb"
		(cd "$kdir/deb" && apt-get download -q "$kpkg" >&2 2>&1)
		# /boot (vmlinuz) and one module: e1000, the NIC the VM uploads its
		# journal through (the root has no disk driver and needs no other),
		# with the lists depmod reads
		mkdir "$kdir/x"
		dpkg-deb --fsys-tarfile "$kdir"/deb/*.deb |
			tar -x -C "$kdir/x" --wildcards ./boot './lib/modules/*/e1000.ko*' \
				'./lib/modules/*/modules.order' './lib/modules/*/modules.builtin*'
		rm -rf "$kdir/deb"
		touch "$kdir/done-e1000-2"
	fi
	vmlinuz=$(find "$kdir/x/boot" -name "vmlinuz-*" | head -n 1)
	kver=${vmlinuz##*/vmlinuz-}
}
