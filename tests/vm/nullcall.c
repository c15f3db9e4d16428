// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nullcall: calls through a NULL function pointer (at the label nc_call)
 * after a warm-up loop; its SIGSEGV handler loops and exits 0.  Under
 * `perf record -b -e instructions:u -c 50` (lbr-perf-vm.sh, run n) the
 * handler's first samples hold the call to 0 in their branch stacks,
 * once perf keeps a branch to address 0 (patch 0022; before, perf took
 * it for an empty slot and dropped it).
 */
#include <signal.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static void handler(int sig)
{
	(void)sig;
	spin(2000);
	_exit(0);
}

int main(void)
{
	void (*volatile fp)(void) = 0;

	signal(SIGSEGV, handler);
	spin(2000);
	__asm__ volatile(".globl nc_call\nnc_call:\n\tcall *%0" : : "r"(fp) : "memory");
	return 1;
}
