/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * recloop: a static program without libc for the recorder meeting perf
 * (pmu-vm.sh): nine phases, a to i, each its own copy of the code from
 * its rl_X_start (and its rl_X_step), so that a record's address says its
 * phase.  Each makes 300 calls (CALL, RET, taken JNZ: 900 records), then
 * reads one byte from stdin, the test's go for the next phase (a reads
 * one first, too); after phase i it stores to address 0 and dies of
 * SIGSEGV, dumping core with its ring.  The test runs phase b under
 * perf's intel_bts, d and f under perf's BTS event beside an LBR user,
 * h under intel_bts in snapshot mode, i with perf's LBR on for a
 * bpf_get_branch_snapshot() at the SIGSEGV.
 */
	.macro go label		/* read(0, rl_buf, 1) or exit(1) */
	xor %eax, %eax
	xor %edi, %edi
	lea rl_buf(%rip), %rsi
	mov $1, %edx
\label:
	syscall
	cmp $1, %eax
	jne rl_exit
	.endm

	.macro calls p
	mov $300, %r12d
rl_\p\()_loop:
	call rl_\p\()_step
	dec %r12d
	jnz rl_\p\()_loop
	.endm

	.globl _start
_start:
rl_a_start:
	go rl_go_a
	calls a
	go rl_go_b
rl_b_start:
	calls b
	go rl_go_c
rl_c_start:
	calls c
	go rl_go_d
rl_d_start:
	calls d
	go rl_go_e
rl_e_start:
	calls e
	go rl_go_f
rl_f_start:
	calls f
	go rl_go_g
rl_g_start:
	calls g
	go rl_go_h
rl_h_start:
	calls h
	go rl_go_i
rl_i_start:
	calls i
rl_crash:
	movl $0, 0
rl_exit:
	mov $60, %eax		/* exit(1): stdin closed early */
	mov $1, %edi
	syscall
rl_a_step:
	ret
rl_b_step:
	ret
rl_c_step:
	ret
rl_d_step:
	ret
rl_e_step:
	ret
rl_f_step:
	ret
rl_g_step:
	ret
rl_h_step:
	ret
rl_i_step:
	ret
	.bss
rl_buf:
	.byte 0
