/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * pmuloop: a static program without libc whose user-mode counts and
 * branches are known exactly, for perf on the PMU model (pmu-vm.sh):
 * 2N+4 instructions (MOV, N x DEC+JNZ, MOV, XOR, SYSCALL), N+1 branch
 * instructions (the JNZs and the SYSCALL), N-1 taken JNZs, each pmu_jnz ->
 * pmu_dec.
 * N = PMULOOP_N (-DPMULOOP_N=... to change it).
 */
#ifndef PMULOOP_N
#define PMULOOP_N 1000000
#endif
	.globl _start, pmu_dec, pmu_jnz
_start:
	mov $PMULOOP_N, %ecx
pmu_dec:
	dec %ecx
pmu_jnz:
	jnz pmu_dec
	mov $60, %eax		/* exit(0) */
	xor %edi, %edi
	syscall
