/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * btsloop: a static program without libc for perf's intel_bts on the BTS
 * model (pmu-vm.sh): BTSLOOP_N iterations of two taken branches (bl_skip's
 * JNZ, bl_next's JNZ), with a nanosleep(50 ms) every 128 iterations (about
 * 6 KB of records, a fifth of perf's 8-page AUX buffer) so that perf drains
 * it between BTS interrupts; then exit(0).  With 1 ms every 256 iterations
 * perf's reader (woken at half the buffer) often fell behind under TCG: the
 * buffer filled, intel_bts stopped until the next switch-in and perf
 * marked the AUX record truncated (seen in 11 of 12 runs); 10 ms kept up
 * on an idle host but not on one loaded 4 times over (a TCG guest's sleep
 * is host time, its work is not).  Every
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
	test $127, %r12d
bl_skip:
	jnz bl_next
	lea bl_50ms(%rip), %rdi
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
bl_50ms:
	.quad 0, 50000000
