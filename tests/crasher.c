// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * crasher: the test program whose crashes every reader is checked against.
 * `crasher null` walks a call chain (with loops and conditionals) into a
 * NULL function pointer; `smash` overwrites its own return address and
 * returns into garbage; `abort` calls abort(); `threads` faults in a second
 * thread while the first waits.  No libc calls on the way to a fault except
 * where the mode needs them, so the traces stay short and stable.  `loop`
 * spins in checksum() until killed; `rounds N`, `write N`: below main().
 */
#include <pthread.h>
#include <stdlib.h>

typedef int (*handler_fn)(int);

static handler_fn handlers[4];		/* all NULL: the bug */
static volatile int sink;

static int __attribute__((noinline)) checksum(const int *v, int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += v[i] & 1 ? v[i] * 3 : v[i];
	return sum;
}

static int __attribute__((noinline)) dispatch(int kind)
{
	handler_fn h = handlers[kind & 3];

	return h(kind);			/* call through NULL */
}

static int __attribute__((noinline)) parse_request(int n)
{
	int v[3] = { n, n + 1, n + 2 };
	int kind = checksum(v, 3);

	if (kind > 100)
		kind = 0;
	return dispatch(kind);
}

static int __attribute__((noinline)) serve(int n)
{
	sink = n;
	return parse_request(n);
}

/* Writes n words from p on: called with more than the buffer holds. */
static void __attribute__((noinline)) fill(unsigned long *p, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = 0x0000414141414141UL;	/* canonical, unmapped */
}

static void __attribute__((noinline)) smash_victim(void)
{
	unsigned long buf[2];

	fill(buf, 4);			/* buf[2] = saved rbp, buf[3] = return */
}

static void __attribute__((noinline)) check_invariant(int ok)
{
	if (!ok)
		abort();
}

static void *worker(void *arg)
{
	serve((int)(long)arg);
	return NULL;
}

static int run_threads(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, (void *)7L))
		return 1;
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	char mode = argc > 1 ? argv[1][0] : '?';

	switch (mode) {
	case 'n':
		return serve(argc);
	case 's':
		smash_victim();
		return 0;
	case 'a':
		check_invariant(argc > 5);
		return 0;
	case 't':
		return run_threads();
	case 'h': {			/* a signal handler, then the NULL call */
		int run_signal(int argc);

		return run_signal(argc);
	}
	case 'l':			/* busy until killed (the kdump test) */
		for (;;) {
			int v[3] = { argc, argc + 1, argc + 2 };

			sink = checksum(v, 3);
		}
	case 'r': case 'w': {		/* N rounds, then one of two bugs */
		int run_rounds(int how, const char *rounds);

		return run_rounds(mode, argc > 2 ? argv[2] : "1");
	}
	}
	return 2;	/* usage: crasher null|smash|abort|threads|loop|handler|rounds|write */
}

/*
 * `crasher handler`: a SIGUSR1 handler runs (raise()) before the call
 * through NULL, for the trace across signal delivery and sigreturn.  Kept
 * below main() so that the lines the fixtures' cores point at stay put.
 */
#include <signal.h>

int run_signal(int argc);

static void on_usr1(int sig)
{
	int v[3] = { sig, sig, sig };

	sink = checksum(v, 3);
}

int run_signal(int argc)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	return serve(argc);
}

/*
 * `crasher rounds N` and `crasher write N`: N rounds of checksum() (a loop
 * that calls), then one of two bugs in one function, consume(): a call
 * through NULL (rounds) or a store through NULL (write).  For the trail
 * signature (tests/test-trail-crashes.py): the count of rounds and the
 * load base must not matter, the bug must.
 */
int run_rounds(int how, const char *rounds);

static int *volatile null_ptr;

static int __attribute__((noinline)) consume(int how, int sum)
{
	if (how == 'w') {
		*null_ptr = sum;		/* store through NULL */
		return 0;
	}
	return handlers[sum & 3](sum);		/* call through NULL */
}

int run_rounds(int how, const char *rounds)
{
	int n = 0, sum = 0;

	for (const char *p = rounds; *p >= '0' && *p <= '9'; p++)	/* no libc */
		n = n * 10 + (*p - '0');
	for (int i = 0; i < n; i++) {
		int v[3] = { i, i + 1, i + 2 };

		sum += checksum(v, 3);
	}
	return consume(how, sum);
}
