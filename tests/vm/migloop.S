/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * migloop: a static program without libc that moves itself between CPUs
 * for the recorder meeting perf across migration (pmu-mig.sh, in vm-pmu).
 * Phases a to n, each its own copy of the code from its ml_X_start (and
 * its ml_X_step), so that a record's address says its phase.  Each phase
 * reads one byte from stdin: '0' or '1' pins it to that CPU
 * (sched_setaffinity(0, 8, {1 << n}), which returns on the new CPU,
 * after 8 calls of ml_pre_step, 16 records written on the old CPU since
 * the switch-in that the move must save), 'x' stores to address 0
 * (SIGSEGV, a core with its ring); then it makes 300
 * calls (CALL, RET, JNZ taken 299 times: 899 records) and writes one
 * byte to stdout (the phase is done).  After phase n, or on any other
 * byte or a closed stdin, it exits 1.
 */
	.macro phase p
ml_\p\()_start:
	xor %eax, %eax		/* read(0, ml_buf, 1) */
	xor %edi, %edi
	lea ml_buf(%rip), %rsi
	mov $1, %edx
	syscall
	cmp $1, %eax
	jne ml_exit
	movzbl ml_buf(%rip), %ecx
	cmp $'x', %ecx
	je ml_crash
	.rept 8			/* records before the move: its ring */
	call ml_pre_step	/* saved on the way out or lost */
	.endr
	sub $'0', %ecx
	cmp $1, %ecx
	ja ml_exit
	mov $1, %eax
	shl %cl, %rax
	mov %rax, ml_mask(%rip)
	mov $203, %eax		/* sched_setaffinity(0, 8, &ml_mask) */
	xor %edi, %edi
	mov $8, %esi
	lea ml_mask(%rip), %rdx
	syscall
	test %eax, %eax
	jnz ml_exit
	mov $300, %r12d
ml_\p\()_loop:
	call ml_\p\()_step
	dec %r12d
	jnz ml_\p\()_loop
	mov $1, %eax		/* write(1, ml_buf, 1) */
	mov $1, %edi
	lea ml_buf(%rip), %rsi
	mov $1, %edx
	syscall
	.endm

	.globl _start
_start:
	phase a
	phase b
	phase c
	phase d
	phase e
	phase f
	phase g
	phase h
	phase i
	phase j
	phase k
	phase l
	phase m
	phase n
ml_exit:
	mov $60, %eax		/* exit(1) */
	mov $1, %edi
	syscall
ml_crash:
	movl $0, 0
ml_pre_step:			/* no phase's: a record to or from it is */
	ret			/* none phase's loop (check-pmu-vm.py) */
	.irp p, a, b, c, d, e, f, g, h, i, j, k, l, m, n
ml_\p\()_step:
	ret
	.endr
	.bss
	.align 8
ml_mask:
	.quad 0
ml_buf:
	.byte 0
