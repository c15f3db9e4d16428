/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * spinloop: a static program without libc that keeps running on CPU 1
 * while perf attaches to it and detaches (pmu-attach.sh, in vm-pmu): it
 * pins itself to CPU 1 as SCHED_FIFO (no CFS task there preempts it,
 * the stopper still does; the test turns RT throttling off) and never
 * blocks: each phase, a to
 * c, loops read(/dev/zero, 8 MB) (two records an iteration: the SYSCALL
 * and the JE back; the read takes the time, few records; the buffer
 * left out of the core) until SIGUSR1
 * moves it on; the third SIGUSR1 stores to address 0 (SIGSEGV, a core
 * with its ring).  Each phase is its own code from its sl_X_start, so a
 * record's address says its phase; the handler's are none's.
 */
	.macro phase p, n
sl_\p\()_start:
	mov $0, %eax		/* read(fd, sl_buf, SL_READ) */
	mov %r13d, %edi
	lea sl_buf(%rip), %rsi
	mov $SL_READ, %edx
	syscall
	cmpb $\n, sl_phase(%rip)
	je sl_\p\()_start
	.endm

	.set SL_READ, 8 << 20
	.globl _start
_start:
	mov $203, %eax		/* sched_setaffinity(0, 8, {CPU 1}) */
	xor %edi, %edi
	mov $8, %esi
	lea sl_mask(%rip), %rdx
	syscall
	test %eax, %eax
	jnz sl_exit
	mov $144, %eax		/* sched_setscheduler(0, SCHED_FIFO, {50}) */
	xor %edi, %edi
	mov $1, %esi
	lea sl_prio(%rip), %rdx
	syscall
	test %eax, %eax
	jnz sl_exit
	mov $13, %eax		/* rt_sigaction(SIGUSR1, &sl_act, NULL, 8) */
	mov $10, %edi
	lea sl_act(%rip), %rsi
	xor %edx, %edx
	mov $8, %r10d
	syscall
	test %eax, %eax
	jnz sl_exit
	mov $28, %eax		/* madvise(sl_buf, SL_READ, MADV_DONTDUMP) */
	lea sl_buf(%rip), %rdi
	mov $SL_READ, %esi
	mov $16, %edx
	syscall
	test %eax, %eax
	jnz sl_exit
	mov $2, %eax		/* open("/dev/zero", O_RDONLY) */
	lea sl_zero(%rip), %rdi
	xor %esi, %esi
	syscall
	test %eax, %eax
	js sl_exit
	mov %eax, %r13d
	phase a, 0
	phase b, 1
	phase c, 2
sl_crash:
	movl $0, 0
sl_exit:
	mov $60, %eax		/* exit(1) */
	mov $1, %edi
	syscall
sl_handler:			/* SIGUSR1: the next phase */
	incb sl_phase(%rip)
	ret
sl_restorer:
	mov $15, %eax		/* rt_sigreturn() */
	syscall

	.data
	.align 8
sl_act:				/* the kernel's struct sigaction */
	.quad sl_handler
	.quad 0x04000000	/* SA_RESTORER */
	.quad sl_restorer
	.quad 0			/* sa_mask */
sl_mask:
	.quad 2
sl_prio:
	.long 50
sl_zero:
	.asciz "/dev/zero"
sl_phase:
	.byte 0
	.bss
	.align 4096
sl_buf:
	.skip SL_READ
