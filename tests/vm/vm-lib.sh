# SPDX-License-Identifier: GPL-2.0-or-later
# Shell functions the VM harnesses share (sourced by run-vm.sh and
# run-kdump.sh): the initramfs root with busybox, the test programs (static)
# and tests/vm/init.sh; dynamic tools with their libraries; cpio packing.
# Needs $src (repository root).

# QEMU runs TCG single-threaded (-accel tcg,thread=single) in both
# harnesses: with multi-threaded TCG and 2 vCPUs, 3 boots in 12 died of a
# stray int3 at a function entry while ftrace (the emulation backend's
# kernel rings) patched kernel text on the other vCPU, which we take for
# stale translated code in QEMU; single-threaded: 0 in 12, just as fast.

# vm_root DIR: a root with busybox, crasher, btsrun, vmbench, /init.
vm_root() {
	mkdir -p "$1/bin" "$1/proc" "$1/sys" "$1/dev" "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
	# -O0 and frame pointers: the trails are the source's call chain
	gcc -static -g -O0 -fno-omit-frame-pointer -fno-stack-protector \
		-fcf-protection=none -pthread -o "$1/bin/crasher" "$src/tests/crasher.c"
	for prog in btsrun vmbench; do
		gcc -static -O2 -Wall -I"$src/include/uapi/linux" \
			-o "$1/bin/$prog" "$src/tests/vm/$prog.c"
	done
	cp "$src/tests/vm/init.sh" "$1/init"
	chmod +x "$1/init"
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

# vm_pack ROOT OUT.gz: a newc cpio archive, gzip'd (RD_GZIP).
vm_pack() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) > "$2"
}
