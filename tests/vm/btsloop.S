/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * btsloop: a static program without libc for perf's intel_bts on the BTS
 * model (pmu-vm.sh): BTSLOOP_N iterations of two taken branches (bl_skip's
 * JNZ, bl_next's JNZ), with a nanosleep(1 ms) every 256 iterations so that
 * perf drains its AUX buffer between BTS interrupts; then exit(0).  Every
 * user-mode branch it takes is in its own text, so the model's log tells
 * its records from anyone else's by address.
 */
#ifndef BTSLOOP_N
#define BTSLOOP_N 1500
#endif
	.globl _start
_start:
	mov $BTSLOOP_N, %r12d
bl_loop:
	test $255, %r12d
bl_skip:
	jnz bl_next
	lea bl_1ms(%rip), %rdi
	xor %esi, %esi
	mov $35, %eax		/* nanosleep */
	syscall
bl_next:
	dec %r12d
	jnz bl_loop
	mov $60, %eax		/* exit(0) */
	xor %edi, %edi
	syscall
	.section .rodata
bl_1ms:
	.quad 0, 1000000
