/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * lbrcalls: a static program without libc with a known call chain, for
 * perf's LBR users on the LBR models (lbr-perf-vm.sh): N rounds of
 * _start -> lc_f1 -> lc_f2 -> lc_f3, lc_f3 spinning K iterations (so
 * most samples land there, three calls deep); the call instructions are
 * lc_c1 (in _start), lc_c2 (lc_f1), lc_c3 (lc_f2), the loop's branch
 * lc_jnz -> lc_loop.  About N * (2K + 10) instructions.  N = LBRCALLS_N, K = LBRCALLS_K.
 * Built with -DLBRCALLS_YIELD (lbrcalls-yield), lc_f3 ends each round in
 * sched_yield(): switched out three calls deep against another task on
 * its CPU.
 */
#ifndef LBRCALLS_N
#define LBRCALLS_N 2000
#endif
#ifndef LBRCALLS_K
#define LBRCALLS_K 250
#endif
	.globl _start, lc_c1, lc_c2, lc_c3, lc_f1, lc_f2, lc_f3, lc_loop, lc_jnz
_start:
	mov $LBRCALLS_N, %r12d
1:
lc_c1:	call lc_f1
	dec %r12d
	jnz 1b
	mov $60, %eax		/* exit(0) */
	xor %edi, %edi
	syscall
lc_f1:
lc_c2:	call lc_f2
	ret
lc_f2:
lc_c3:	call lc_f3
	ret
lc_f3:
	mov $LBRCALLS_K, %ecx
lc_loop:
	dec %ecx
lc_jnz:	jnz lc_loop
#ifdef LBRCALLS_YIELD
	mov $24, %eax		/* sched_yield() */
	syscall
#endif
	ret
