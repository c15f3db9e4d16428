// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * truth: crashes with known data flows for value recovery's truth test
 * (test-recover.py single-steps each from main in gdb and logs every
 * register).  Each mode ends in a SIGSEGV whose bad value has one
 * source a reader can name:
 *   uaf      a freed session's callback called after its chunk was
 *            reused for a message: the call target is the message's word
 *   memcpy   memcpy of 48 bytes into a 16-byte stack buffer: the return
 *            address is the source's fifth word, ret jumps there
 *   counter  a loop whose store past its array rewrites its own counter,
 *            so the next store skips a slot and lands on the report
 *            callback: NULL, called
 * (truth-virt.cc: a C++ virtual call on a freed object.)  Built at -O0
 * and -O2 without stack protector or CET, as crasher.c is.
 */
#include <stdlib.h>
#include <string.h>

#define BAD 0x0000414141414141UL	/* canonical, unmapped */

typedef long (*callback_fn)(long);

static volatile long sink;

struct session {
	callback_fn on_close;
	long id;
	long pad[4];
};

/* Before main, where the truth test starts stepping: malloc's first call
 * (its arena set up, brk) and the lazy binding of free, as in a program
 * that has run a while before the crash whose last branches are read. */
static void __attribute__((constructor)) warm_up(void)
{
	sink = (long)malloc(sizeof(struct session));	/* not elided at -O2 */
	free((void *)sink);
}

static long __attribute__((noinline)) close_ok(long id)
{
	return id;
}

static struct session *__attribute__((noinline)) open_session(long id)
{
	struct session *s = malloc(sizeof(*s));

	if (!s)
		exit(2);
	s->on_close = close_ok;
	s->id = id;
	return s;
}

static unsigned long *__attribute__((noinline)) new_message(int words)
{
	/* the same size as a session: the allocator hands its chunk back */
	unsigned long *m = malloc(sizeof(struct session));

	if (!m)
		exit(2);
	for (int i = 0; i < words; i++)
		m[i] = BAD + i;
	return m;
}

/* the bug itself: GCC 12 sees it and says so (-Wuse-after-free) */
#pragma GCC diagnostic ignored "-Wuse-after-free"
static int run_uaf(void)
{
	struct session *s = open_session(7);

	sink = s->on_close(s->id);
	free(s);
	sink = (long)new_message(6);
	return (int)s->on_close(s->id);	/* the stale pointer: BAD */
}

static void __attribute__((noinline)) copy_name(const unsigned long *src, size_t n)
{
	char buf[16];

	memcpy(buf, src, n);		/* n = 48: past buf, over the return */
	sink = buf[0];
}

static int run_memcpy(int n)
{
	unsigned long src[6];

	for (int i = 0; i < 6; i++)
		src[i] = BAD + i;
	copy_name(src, (size_t)n);
	return 0;
}

struct tally {
	long vals[4];
	long count;		/* slot 4 */
	long limit;		/* slot 5 */
	callback_fn report;	/* slot 6 */
};

/* Stores in[] in the next free slots, with no bound: the fifth value
 * lands on count itself.  noipa: GCC's -O2 otherwise proves the caller's
 * report untouched (slots[] past vals[] is outside the language). */
static void __attribute__((noipa)) add_all(struct tally *t, const long *in, int n)
{
	long *slots = (long *)t;

	for (int i = 0; i < n; i++) {
		slots[t->count] = in[i];
		t->count++;
	}
}

static int run_counter(void)
{
	/* in[4] rewrites count (4 -> 5, then 6), so in[5] skips limit and
	 * lands on report */
	static const long in[6] = { 10, 20, 30, 40, 5, 0 };
	struct tally t = { { 0 }, 0, 4, close_ok };

	add_all(&t, in, 6);
	return (int)t.report(t.limit);	/* report = in[5] = NULL */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "uaf"))
		return run_uaf();
	if (!strcmp(mode, "memcpy"))
		return run_memcpy(argc > 2 ? atoi(argv[2]) : 48);
	if (!strcmp(mode, "counter"))
		return run_counter();
	return 2;
}
