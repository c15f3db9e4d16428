// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nullcall: calls through a NULL function pointer (at the label nc_call)
 * after a warm-up loop, ROUNDS times: its SIGSEGV handler runs a stretch
 * of straight-line code (no branch: the call to 0 stays in the LBR) and
 * jumps back for the next call; main then exits 0.  Under `perf record
 * -b -e instructions:u -c 50` (lbr-perf-vm.sh, run n) the samples in
 * that stretch hold the call to 0 in their branch stacks, once perf
 * keeps a branch to address 0 (patch 0022; before, perf took it for an
 * empty slot and dropped it).  The rounds and the stretch are there for
 * the loaded CI host: a context switch between the fault and the
 * handler resets the LBR (perf's sched_in without a call stack), and
 * with one round and a branchy handler one switch lost every sample.
 */
#include <setjmp.h>
#include <signal.h>

#define ROUNDS 20

static volatile unsigned long sink;
static sigjmp_buf again;
static volatile int rounds;

static void spin(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static void handler(int sig)
{
	(void)sig;
	/* 500 instructions, about ten samples at -c 50, no branch */
	__asm__ volatile(".rept 500\n\tnop\n.endr");
	siglongjmp(again, 1);
}

int main(void)
{
	void (*volatile fp)(void) = 0;

	signal(SIGSEGV, handler);
	spin(2000);
	if (sigsetjmp(again, 1) && ++rounds == ROUNDS)
		return 0;
	__asm__ volatile(".globl nc_call\nnc_call:\n\tcall *%0" : : "r"(fp) : "memory");
	return 1;
}
