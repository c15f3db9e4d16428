// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gdb's remote serial protocol served from an ELF core (gdbstub.h): the
 * connection loop, the table of packet handlers (one function a packet,
 * in the manner of gdbserver's server.cc and QEMU's gdbstub/), threads,
 * the stop reply, registers, memory and the branch-trace switches.  The
 * core is a stopped process: whatever would resume or change it is
 * refused with an error (in replay mode, lib/gdbreplay.c moves along the
 * recorded past instead); what is not implemented gets the empty reply.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdbstub-int.h"

#define ERR_UNKNOWN_THREAD	"E.no such thread in the core"
#define ERR_RUN			"E.this is a core file: the process cannot run or change"

/* Linux signal numbers to gdb's (gdb/gdbsupport/gdb_signals.def):
 * the remote protocol speaks gdb's. */
static const uint8_t gdb_signal[] = {
	[SIGHUP] = 1, [SIGINT] = 2, [SIGQUIT] = 3, [SIGILL] = 4,
	[SIGTRAP] = 5, [SIGABRT] = 6, [SIGBUS] = 10, [SIGFPE] = 8,
	[SIGKILL] = 9, [SIGUSR1] = 30, [SIGSEGV] = 11, [SIGUSR2] = 31,
	[SIGPIPE] = 13, [SIGALRM] = 14, [SIGTERM] = 15, [SIGCHLD] = 20,
	[SIGCONT] = 19, [SIGSTOP] = 17, [SIGTSTP] = 18, [SIGTTIN] = 21,
	[SIGTTOU] = 22, [SIGURG] = 16, [SIGXCPU] = 24, [SIGXFSZ] = 25,
	[SIGVTALRM] = 26, [SIGPROF] = 27, [SIGWINCH] = 28, [SIGIO] = 23,
	[SIGPWR] = 32, [SIGSYS] = 12,
};

static unsigned int thread_signal(const struct btsdec_thread *th)
{
	int sig = th->signo ? th->signo : th->has_siginfo ? th->si_signo : 0;

	if (sig <= 0 || (size_t)sig >= sizeof(gdb_signal))
		return 0;
	return gdb_signal[sig];
}

static struct stub_thread *find_tid(struct btsdec_gdbstub *s, uint64_t tid)
{
	for (size_t i = 0; i < s->nr; i++)
		if ((uint64_t)s->t[i].th->tid == tid)
			return &s->t[i];
	return NULL;
}

void stub_put_thread_id(struct btsdec_gdbstub *s, struct btsdec_rsp_buf *r,
			const struct stub_thread *t)
{
	if (s->multi)
		btsdec_rsp_printf(r, "p%x.", (unsigned int)s->pid);
	btsdec_rsp_printf(r, "%x", (unsigned int)t->th->tid);
}

/* One id of a thread id: hex, or -1 / 0 for "any" (*any set).  0 when
 * well formed, the rest after it in *p. */
static int parse_id(const char **p, uint64_t *v, bool *any)
{
	*any = false;
	if (!strncmp(*p, "-1", 2)) {
		*p += 2;
		*any = true;
		return 0;
	}
	if (btsdec_rsp_hex_u64(p, v))
		return -EINVAL;
	*any = *v == 0;
	return 0;
}

/* A thread id as gdb writes it: "TID", or under multiprocess "pPID.TID"
 * and "pPID" (any thread of PID); -1 or 0 for "any" (the first thread,
 * *any set when any is not NULL).  NULL when malformed, or naming
 * another process or an unknown thread. */
static struct stub_thread *parse_thread_any(struct btsdec_gdbstub *s, const char *p,
					    bool *any_out)
{
	uint64_t pid = 0, tid = 0;
	bool any_pid = true, any = true;

	if (*p == 'p') {
		p++;
		if (parse_id(&p, &pid, &any_pid) || (!any_pid && pid != (uint64_t)s->pid))
			return NULL;
		if (*p && (*p++ != '.' || parse_id(&p, &tid, &any)))
			return NULL;
	} else if (parse_id(&p, &tid, &any)) {
		return NULL;
	}
	if (*p)
		return NULL;
	if (any_out)
		*any_out = any;
	return any ? &s->t[0] : find_tid(s, tid);
}

static struct stub_thread *parse_thread(struct btsdec_gdbstub *s, const char *p)
{
	return parse_thread_any(s, p, NULL);
}

/* ---- Packets: each handler gets the bytes after its name ---------------- */

void stub_put_stop(struct btsdec_gdbstub *s, const struct stub_thread *t,
		   struct btsdec_rsp_buf *r)
{
	btsdec_rsp_printf(r, "T%02xthread:", thread_signal(t->th));
	stub_put_thread_id(s, r, t);
	btsdec_rsp_puts(r, ";");
}

static int h_stop_reason(struct btsdec_gdbstub *s, const char *a,
			 struct btsdec_rsp_buf *r)
{
	(void)a;
	s->cur = 0;	/* gdb now takes it as Hg's thread */
	stub_put_stop(s, &s->t[0], r);
	return 0;
}

/* Whether gdb's qSupported features (after ':', ';'-separated) hold f. */
static bool gdb_offers(const char *a, const char *f)
{
	size_t n = strlen(f);

	for (a = *a == ':' ? a + 1 : a; *a; a += strcspn(a, ";"), a += !!*a)
		if (!strncmp(a, f, n) && (a[n] == ';' || !a[n]))
			return true;
	return false;
}

/* multiprocess when gdb offers it: its thread ids carry the core's pid
 * (else gdb makes one up, 42000, and shows it in MI's thread groups).
 * Replay mode serves reverse execution itself, not a branch trace. */
static int h_supported(struct btsdec_gdbstub *s, const char *a,
		       struct btsdec_rsp_buf *r)
{
	s->multi = gdb_offers(a, "multiprocess+");
	btsdec_rsp_printf(r, "PacketSize=%x;QStartNoAckMode+;binary-upload+;%s"
			  "qXfer:features:read+;qXfer:auxv:read+;"
			  "qXfer:exec-file:read+;qXfer:libraries-svr4:read+;"
			  "qXfer:threads:read+;%s",
			  BTSDEC_RSP_PACKET_MAX, s->multi ? "multiprocess+;" : "",
			  s->replay ? "ReverseStep+;ReverseContinue+" :
			  "Qbtrace:bts+;Qbtrace:off+;Qbtrace:pt-;Qbtrace-conf:bts:size+;"
			  "qXfer:btrace:read+;qXfer:btrace-conf:read+");
	return 0;
}

static int h_noack(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)a;
	s->noack = true;
	btsdec_rsp_puts(r, "OK");
	return 0;
}

static int h_ok(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)s;
	(void)a;
	btsdec_rsp_puts(r, "OK");
	return 0;
}

static int h_refuse(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)s;
	(void)a;
	btsdec_rsp_puts(r, ERR_RUN);
	return 0;
}

static int h_attached(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)s;
	(void)a;
	btsdec_rsp_puts(r, "1");
	return 0;
}

static int h_first_thread(struct btsdec_gdbstub *s, const char *a,
			  struct btsdec_rsp_buf *r)
{
	(void)a;
	btsdec_rsp_puts(r, "m");
	for (size_t i = 0; i < s->nr; i++) {
		if (i)
			btsdec_rsp_puts(r, ",");
		stub_put_thread_id(s, r, &s->t[i]);
	}
	return 0;
}

static int h_next_thread(struct btsdec_gdbstub *s, const char *a,
			 struct btsdec_rsp_buf *r)
{
	(void)s;
	(void)a;
	btsdec_rsp_puts(r, "l");
	return 0;
}

static int h_current_thread(struct btsdec_gdbstub *s, const char *a,
			    struct btsdec_rsp_buf *r)
{
	(void)a;
	btsdec_rsp_puts(r, "QC");
	stub_put_thread_id(s, r, &s->t[0]);
	return 0;
}

static int h_thread_alive(struct btsdec_gdbstub *s, const char *a,
			  struct btsdec_rsp_buf *r)
{
	btsdec_rsp_puts(r, parse_thread(s, a) ? "OK" : ERR_UNKNOWN_THREAD);
	return 0;
}

/* Hg selects the thread later requests name; Hc the one s, c, bs and bc
 * move in replay mode (-1 or 0: Hg's). */
static int h_set_thread(struct btsdec_gdbstub *s, const char *a,
			struct btsdec_rsp_buf *r)
{
	struct stub_thread *t;
	bool any = false;

	if (*a != 'g' && *a != 'c') {
		btsdec_rsp_puts(r, ERR_MALFORMED);
		return 0;
	}
	if (!(t = parse_thread_any(s, a + 1, &any))) {
		btsdec_rsp_puts(r, ERR_UNKNOWN_THREAD);
		return 0;
	}
	if (*a == 'g') {
		s->cur = (size_t)(t - s->t);
	} else {
		s->resume_any = any;
		s->resume = (size_t)(t - s->t);
	}
	btsdec_rsp_puts(r, "OK");
	return 0;
}

size_t stub_thread_text(const struct stub_thread *t, char *text, size_t size)
{
	int n = snprintf(text, size, "%s%s%s, %zu branch records",
			 t->th->faulting ? "faulting" : "stopped",
			 t->th->faulting && t->th->signo ? ", " : "",
			 t->th->faulting && t->th->signo ? strsignal(t->th->signo) : "",
			 t->th->has_trace ? t->th->trace.nr : 0);

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static int h_extra_info(struct btsdec_gdbstub *s, const char *a,
			struct btsdec_rsp_buf *r)
{
	struct stub_thread *t = *a == ',' ? parse_thread(s, a + 1) : NULL;
	char text[160];

	if (!t) {
		btsdec_rsp_puts(r, ERR_UNKNOWN_THREAD);
		return 0;
	}
	btsdec_rsp_put_hex(r, text, stub_thread_text(t, text, sizeof(text)));
	return 0;
}

static void put_reg(struct btsdec_gdbstub *s, struct stub_thread *t, size_t n,
		    struct btsdec_rsp_buf *r)
{
	uint8_t v[16];
	int size;

	if (stub_replay_before_end(s, t)) {
		stub_replay_put_reg(s, t, n, r);
		return;
	}
	size = stub_reg(s, t, n, v);

	if (size > 0) {
		btsdec_rsp_put_hex(r, v, (size_t)size);
		return;
	}
	for (size_t i = 0; i < stub_reg_size(n); i++)
		btsdec_rsp_puts(r, "xx");	/* unavailable */
}

static int h_read_regs(struct btsdec_gdbstub *s, const char *a,
		       struct btsdec_rsp_buf *r)
{
	(void)a;
	for (size_t n = 0; n < stub_nr_regs(s); n++)
		put_reg(s, &s->t[s->cur], n, r);
	return 0;
}

static int h_read_reg(struct btsdec_gdbstub *s, const char *a,
		      struct btsdec_rsp_buf *r)
{
	uint64_t n;

	if (btsdec_rsp_hex_u64(&a, &n) || *a || n >= stub_nr_regs(s))
		btsdec_rsp_puts(r, "E.no such register");
	else
		put_reg(s, &s->t[s->cur], (size_t)n, r);
	return 0;
}

size_t stub_read_mem(struct btsdec_gdbstub *s, uint64_t addr, void *buf,
		     size_t len)
{
	size_t done = 0, got;

	while (done < len && addr + done >= addr) {
		got = btsdec_sym_read_code(s->sym, addr + done, (uint8_t *)buf + done,
					   len - done);
		if (!got)
			break;
		done += got;
	}
	return done;
}

/* "m ADDR,LEN" (hex digits) and "x ADDR,LEN" (binary, gdb's
 * binary-upload: "b" then the bytes, escaped by the framing): what the
 * core (or the mapped file) holds from ADDR on; an error when it holds
 * nothing there.  Either reply, escaped, fits the PacketSize announced. */
static int read_mem(struct btsdec_gdbstub *s, const char *a,
		    struct btsdec_rsp_buf *r, bool binary)
{
	uint64_t addr, len;
	uint8_t *buf;
	size_t got;

	if (btsdec_rsp_hex_u64(&a, &addr) || *a++ != ',' ||
	    btsdec_rsp_hex_u64(&a, &len) || *a) {
		btsdec_rsp_puts(r, ERR_MALFORMED);
		return 0;
	}
	if (len > BTSDEC_RSP_PACKET_MAX / 2 - 1)
		len = BTSDEC_RSP_PACKET_MAX / 2 - 1;
	if (!(buf = malloc(len ? len : 1)))
		return -ENOMEM;
	if (stub_replay_before_end(s, &s->t[s->cur]))
		got = stub_replay_read_mem(s, &s->t[s->cur], addr, buf, len);
	else
		got = stub_read_mem(s, addr, buf, len);
	if (len && !got) {
		btsdec_rsp_puts(r, "E01");	/* gdb reads only Exx here */
	} else if (binary) {
		btsdec_rsp_puts(r, "b");
		btsdec_rsp_put(r, buf, got);
	} else {
		btsdec_rsp_put_hex(r, buf, got);
	}
	free(buf);
	return 0;
}

static int h_read_mem(struct btsdec_gdbstub *s, const char *a,
		      struct btsdec_rsp_buf *r)
{
	return read_mem(s, a, r, false);
}

static int h_read_mem_binary(struct btsdec_gdbstub *s, const char *a,
			     struct btsdec_rsp_buf *r)
{
	return read_mem(s, a, r, true);
}

/* Z0/z0: gdb inserts its internal breakpoints while replaying; nothing
 * runs, so they are accepted and never hit.  Other kinds: not supported.
 * In replay mode they are kept and honoured (gdbreplay.c). */
static int h_insert(struct btsdec_gdbstub *s, const char *a,
		    struct btsdec_rsp_buf *r)
{
	if (s->replay)
		return stub_replay_point(s, true, a, r);
	if (a[0] == '0' && a[1] == ',')
		btsdec_rsp_puts(r, "OK");
	return 0;
}

static int h_remove(struct btsdec_gdbstub *s, const char *a,
		    struct btsdec_rsp_buf *r)
{
	if (s->replay)
		return stub_replay_point(s, false, a, r);
	return h_insert(s, a, r);
}

/* ---- Resuming: refused, but in replay mode ------------------------------ */

static struct stub_thread *resumed(struct btsdec_gdbstub *s)
{
	return &s->t[s->resume_any ? s->cur : s->resume];
}

/* c, C, s, S (a signal, an address: ignored; the past is what it was),
 * bc, bs. */
static int resume(struct btsdec_gdbstub *s, bool back, bool step,
		  struct btsdec_rsp_buf *r)
{
	if (!s->replay) {
		btsdec_rsp_puts(r, ERR_RUN);
		return 0;
	}
	return stub_replay_resume(s, resumed(s), back, step, r);
}

static int h_continue(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)a;
	return resume(s, false, false, r);
}

static int h_step(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	(void)a;
	return resume(s, false, true, r);
}

static int h_back_continue(struct btsdec_gdbstub *s, const char *a,
			   struct btsdec_rsp_buf *r)
{
	(void)a;
	return resume(s, true, false, r);
}

static int h_back_step(struct btsdec_gdbstub *s, const char *a,
		       struct btsdec_rsp_buf *r)
{
	(void)a;
	return resume(s, true, true, r);
}

static int h_vcont_query(struct btsdec_gdbstub *s, const char *a,
			 struct btsdec_rsp_buf *r)
{
	(void)a;
	if (s->replay)
		btsdec_rsp_puts(r, "vCont;c;C;s;S");
	return 0;	/* else empty: gdb uses c and s, refused */
}

/* "vCont;ACTION[:THREAD]...": the first action moves its thread (or the
 * Hg thread); one thread moves at a time, the others keep their point. */
static int h_vcont(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	const char *tid;
	struct stub_thread *t = &s->t[s->cur];
	bool any = false;
	char act[64];
	size_t n;

	if (!s->replay) {
		btsdec_rsp_puts(r, ERR_RUN);
		return 0;
	}
	if (*a++ != ';' || !*a || !strchr("cCsS", *a)) {
		btsdec_rsp_puts(r, ERR_MALFORMED);
		return 0;
	}
	n = strcspn(a, ";");
	snprintf(act, sizeof(act), "%.*s", (int)n, a);
	if ((tid = strchr(act, ':')) && !(t = parse_thread_any(s, tid + 1, &any))) {
		btsdec_rsp_puts(r, ERR_UNKNOWN_THREAD);
		return 0;
	}
	if (any)
		t = &s->t[s->cur];
	return stub_replay_resume(s, t, false, *a == 's' || *a == 'S', r);
}

static int h_btrace(struct btsdec_gdbstub *s, const char *a,
		    struct btsdec_rsp_buf *r)
{
	struct stub_thread *t = &s->t[s->cur];

	if (!strcmp(a, "bts")) {
		t->btrace_on = true;
		t->btrace_sent = false;
		free(t->btrace);	/* made anew: the size may have changed */
		t->btrace = NULL;
		btsdec_rsp_puts(r, "OK");
	} else if (!strcmp(a, "off")) {
		t->btrace_on = false;
		btsdec_rsp_puts(r, "OK");
	} else {
		btsdec_rsp_puts(r, "E.the core holds a BTS-format trace only");
	}
	return 0;
}

/* gdb's `set record btrace bts buffer-size`, sent before Qbtrace:bts:
 * the trace served holds the newest records that fit, as a live BTS
 * buffer of that size would. */
static int h_btrace_size(struct btsdec_gdbstub *s, const char *a,
			 struct btsdec_rsp_buf *r)
{
	uint64_t size;

	if (!strncmp(a, "0x", 2))	/* gdb writes it so */
		a += 2;
	if (btsdec_rsp_hex_u64(&a, &size) || *a) {
		btsdec_rsp_puts(r, ERR_MALFORMED);
		return 0;
	}
	s->bts_size = size;
	btsdec_rsp_puts(r, "OK");
	return 0;
}

/* gdb's `monitor CMD` (qRcmd,HEX): `bts-where` says where the selected
 * thread is, "thread TID back N" (N instructions before the fault, 0
 * outside replay mode), which gdb/bts.py's `bts why` follows; anything
 * else gets the list.  The reply is hex-encoded console output. */
static int h_rcmd(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	struct stub_thread *t = &s->t[s->cur];
	size_t n = strlen(a) / 2;
	char cmd[32], out[96];

	if (strlen(a) % 2 || n >= sizeof(cmd) || btsdec_rsp_hex_decode(a, cmd, n)) {
		btsdec_rsp_puts(r, "E.bad monitor command");
		return 0;
	}
	cmd[n] = 0;
	if (!strcmp(cmd, "bts-where"))
		snprintf(out, sizeof(out), "thread %d back %zu\n", (int)t->th->tid,
			 stub_replay_back(s, t));
	else
		snprintf(out, sizeof(out), "monitor commands: bts-where\n");
	btsdec_rsp_put_hex(r, out, strlen(out));
	return 0;
}

static int h_xfer(struct btsdec_gdbstub *s, const char *a, struct btsdec_rsp_buf *r)
{
	return stub_xfer(s, a, r);
}

typedef int (*handler_fn)(struct btsdec_gdbstub *s, const char *args,
			  struct btsdec_rsp_buf *reply);

/* The packets served, matched by prefix in this order (longer names
 * first where one is the prefix of another).  `next` ends the session. */
static const struct {
	const char *name;
	handler_fn fn;
	enum btsdec_gdbstub_next next;
	bool exact;
} handlers[] = {
	{ "?", h_stop_reason, BTSDEC_GDBSTUB_REPLY, true },
	{ "qSupported", h_supported, BTSDEC_GDBSTUB_REPLY, false },
	{ "QStartNoAckMode", h_noack, BTSDEC_GDBSTUB_REPLY, true },
	{ "qAttached", h_attached, BTSDEC_GDBSTUB_REPLY, false },
	{ "qfThreadInfo", h_first_thread, BTSDEC_GDBSTUB_REPLY, true },
	{ "qsThreadInfo", h_next_thread, BTSDEC_GDBSTUB_REPLY, true },
	{ "qThreadExtraInfo", h_extra_info, BTSDEC_GDBSTUB_REPLY, false },
	{ "qC", h_current_thread, BTSDEC_GDBSTUB_REPLY, true },
	{ "qSymbol:", h_ok, BTSDEC_GDBSTUB_REPLY, false },
	{ "qXfer:", h_xfer, BTSDEC_GDBSTUB_REPLY, false },
	{ "qRcmd,", h_rcmd, BTSDEC_GDBSTUB_REPLY, false },
	{ "Qbtrace:", h_btrace, BTSDEC_GDBSTUB_REPLY, false },
	{ "Qbtrace-conf:bts:size=", h_btrace_size, BTSDEC_GDBSTUB_REPLY, false },
	{ "H", h_set_thread, BTSDEC_GDBSTUB_REPLY, false },
	{ "T", h_thread_alive, BTSDEC_GDBSTUB_REPLY, false },
	{ "g", h_read_regs, BTSDEC_GDBSTUB_REPLY, true },
	{ "p", h_read_reg, BTSDEC_GDBSTUB_REPLY, false },
	{ "m", h_read_mem, BTSDEC_GDBSTUB_REPLY, false },
	{ "x", h_read_mem_binary, BTSDEC_GDBSTUB_REPLY, false },
	{ "Z", h_insert, BTSDEC_GDBSTUB_REPLY, false },
	{ "z", h_remove, BTSDEC_GDBSTUB_REPLY, false },
	{ "vCont?", h_vcont_query, BTSDEC_GDBSTUB_REPLY, true },
	{ "vCont", h_vcont, BTSDEC_GDBSTUB_REPLY, false },
	{ "bc", h_back_continue, BTSDEC_GDBSTUB_REPLY, true },
	{ "bs", h_back_step, BTSDEC_GDBSTUB_REPLY, true },
	{ "c", h_continue, BTSDEC_GDBSTUB_REPLY, false },
	{ "C", h_continue, BTSDEC_GDBSTUB_REPLY, false },
	{ "s", h_step, BTSDEC_GDBSTUB_REPLY, false },
	{ "S", h_step, BTSDEC_GDBSTUB_REPLY, false },
	{ "M", h_refuse, BTSDEC_GDBSTUB_REPLY, false },
	{ "X", h_refuse, BTSDEC_GDBSTUB_REPLY, false },
	{ "G", h_refuse, BTSDEC_GDBSTUB_REPLY, false },
	{ "P", h_refuse, BTSDEC_GDBSTUB_REPLY, false },
	{ "D", h_ok, BTSDEC_GDBSTUB_LAST, false },
	{ "vKill", h_ok, BTSDEC_GDBSTUB_LAST, false },
	{ "k", NULL, BTSDEC_GDBSTUB_QUIT, true },
};

int btsdec_gdbstub_handle(struct btsdec_gdbstub *s, const char *pkt,
			  size_t len, struct btsdec_rsp_buf *reply,
			  enum btsdec_gdbstub_next *next)
{
	btsdec_rsp_buf_reset(reply);
	*next = BTSDEC_GDBSTUB_REPLY;
	if (strlen(pkt) != len) {	/* a NUL inside: none of ours has one */
		btsdec_rsp_puts(reply, ERR_MALFORMED);
		return reply->err;
	}
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		size_t n = strlen(handlers[i].name);
		int ret = 0;

		if (strncmp(pkt, handlers[i].name, n) ||
		    (handlers[i].exact && pkt[n]))
			continue;
		*next = handlers[i].next;
		if (handlers[i].fn)
			ret = handlers[i].fn(s, pkt + n, reply);
		return ret ? ret : reply->err;
	}
	return 0;	/* not implemented: the empty reply */
}

/* ---- The stub and its connection ---------------------------------------- */

int btsdec_gdbstub_new(struct btsdec_core *core, struct btsdec_sym *sym,
		       const char *executable, struct btsdec_gdbstub **out,
		       struct btsdec_err *err)
{
	struct btsdec_gdbstub *s = calloc(1, sizeof(*s));
	size_t n = btsdec_core_nr_threads(core);

	if (!s)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	s->core = core;
	s->sym = sym;
	s->nr = n;
	if (!n) {
		free(s);
		return btsdec_fail(err, -ENOEXEC, "%s: the core holds no thread",
				   btsdec_core_path(core));
	}
	s->t = calloc(n, sizeof(*s->t));
	if (s->t && btsdec_classifier_new(&s->cls, err)) {
		btsdec_gdbstub_free(s);
		return -ENOMEM;
	}
	if (!s->t || (executable && !(s->exe = realpath(executable, NULL)) &&
		      !(s->exe = strdup(executable)))) {
		btsdec_gdbstub_free(s);
		return btsdec_fail(err, -ENOMEM, "out of memory");
	}
	btsdec_blocks_init(&s->blocks, sym, s->cls);
	for (size_t i = 0; i < n; i++)
		s->t[i].th = btsdec_core_thread(core, i);
	s->pid = stub_core_pid(core);
	if (s->pid <= 0)
		s->pid = s->t[0].th->tid;
	*out = s;
	return 0;
}

void btsdec_gdbstub_set_replay(struct btsdec_gdbstub *s)
{
	s->replay = true;
}

void btsdec_gdbstub_free(struct btsdec_gdbstub *s)
{
	if (!s)
		return;
	stub_replay_free(s);
	for (size_t i = 0; s->t && i < s->nr; i++)
		free(s->t[i].btrace);
	free(s->t);
	free(s->exe);
	btsdec_classifier_free(s->cls);
	btsdec_rsp_buf_free(&s->obj);
	btsdec_blocks_fini(&s->blocks);
	free(s);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One event of the framer: a packet answered (its frame kept in `last`
 * for a resend), a resend, a refusal.  1 when the session ends. */
static int on_event(struct btsdec_gdbstub *s, struct btsdec_rsp_reader *rd,
		    enum btsdec_rsp_event ev, int out, struct btsdec_rsp_buf *reply,
		    struct btsdec_rsp_buf *last)
{
	enum btsdec_gdbstub_next next;
	bool ack = !s->noack;
	int ret;

	if (ev == BTSDEC_RSP_NACK && last->len)
		return write_all(out, last->p, last->len);
	if (ev == BTSDEC_RSP_BAD)
		return ack ? write_all(out, "-", 1) : 0;
	if (ev != BTSDEC_RSP_PACKET)
		return 0;	/* acks, ^C (never running), nothing */
	if (ack && (ret = write_all(out, "+", 1)))
		return ret;
	ret = btsdec_gdbstub_handle(s, rd->buf, rd->len, reply, &next);
	if (ret)
		return ret;
	if (next == BTSDEC_GDBSTUB_QUIT)
		return 1;
	if ((ret = btsdec_rsp_frame(last, reply->p, reply->len)) ||
	    (ret = write_all(out, last->p, last->len)))
		return ret;
	return next == BTSDEC_GDBSTUB_LAST;
}

int btsdec_gdbstub_serve(struct btsdec_gdbstub *s, int in, int out,
			 struct btsdec_err *err)
{
	struct btsdec_rsp_reader *rd = malloc(sizeof(*rd));
	struct btsdec_rsp_buf reply = { 0 }, last = { 0 };
	char buf[4096];
	int ret = 0;

	if (!rd)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	btsdec_rsp_reader_init(rd);
	while (!ret) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 1;
			break;
		}
		for (ssize_t i = 0; i < n && !ret; i++)
			ret = on_event(s, rd, btsdec_rsp_feed(rd, (uint8_t)buf[i]),
				       out, &reply, &last);
	}
	free(rd);
	btsdec_rsp_buf_free(&reply);
	btsdec_rsp_buf_free(&last);
	if (ret < 0)
		return btsdec_fail(err, ret, "remote protocol connection: %s",
				   strerror(-ret));
	return 0;
}
