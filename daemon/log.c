// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's logging: stderr when it is a terminal (run by hand), else
 * structured journal entries (sd_journal_sendv) when journald listens,
 * else lines on /dev/kmsg (an initramfs, the kernel-invoked
 * handler on a host without systemd), else stderr.  Every value from a
 * crash reaches a person through lib/escape.c: a message is escaped as a
 * whole, an entry's trail (rendered and escaped by the library) keeps its
 * lines and its backslashes.  The journal's BTSDUMPD_* fields stay the
 * exact bytes (data, read back by btsdumpctl).  Process context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "btsdumpd.h"
#include "entries.h"
#include "escape.h"

#define JOURNAL_SOCKET	"/run/systemd/journal/socket"
#define KMSG_LINE_MAX	900

static enum btsdumpd_log_target target = BTSDUMPD_LOG_STDERR;
static int kmsg_fd = -1;

void btsdumpd_log_init(enum btsdumpd_log_target t)
{
	/* auto: a terminal on stderr is a person running btsdumpd by hand
	 * (the kernel's handler has /dev/null there, the service the journal) */
	if (t == BTSDUMPD_LOG_AUTO && isatty(STDERR_FILENO))
		t = BTSDUMPD_LOG_STDERR;
	if (t == BTSDUMPD_LOG_AUTO)
		t = access(JOURNAL_SOCKET, W_OK) == 0 ? BTSDUMPD_LOG_JOURNAL : BTSDUMPD_LOG_KMSG;
	if (t == BTSDUMPD_LOG_KMSG) {
		kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (kmsg_fd < 0)
			t = BTSDUMPD_LOG_STDERR;
	}
	target = t;
}

/* One line to kmsg or stderr, s[0..len) without a newline, escaped
 * (flags: lib/escape.h); kmsg lines are cut at KMSG_LINE_MAX. */
static void put_line(int prio, const char *s, size_t len, unsigned int flags)
{
	char esc[KMSG_LINE_MAX + 1], buf[KMSG_LINE_MAX + 64], *t = strndup(s, len);
	int n;

	if (!t)
		return;
	btsdec_escape_buf(t, esc, sizeof(esc), flags);
	free(t);
	if (target == BTSDUMPD_LOG_KMSG) {
		n = snprintf(buf, sizeof(buf), "<%d>btsdumpd[%d]: %s\n", prio,
			     (int)getpid(), esc);
		if (write(kmsg_fd, buf, n) == n)
			return;
	}
	fprintf(stderr, "btsdumpd[%d]: %s\n", (int)getpid(), esc);
}

/* Rendered text (an entry's message), line by line. */
static void put_text(int prio, const char *text)
{
	const char *p = text, *nl;

	do {
		nl = strchr(p, '\n');
		put_line(prio, p, nl ? (size_t)(nl - p) : strlen(p), BTSDEC_ESC_LINES);
		p = nl ? nl + 1 : NULL;
	} while (p && *p);
}

/* One message, escaped as a whole: a value's newline cannot start a line. */
static void vlog(int prio, const char *fmt, va_list ap)
{
	char *msg, *safe;

	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	safe = btsdec_escape(msg, 0);
	free(msg);
	if (!safe)
		return;
	if (target == BTSDUMPD_LOG_JOURNAL &&
	    sd_journal_send("MESSAGE=%s", safe, "PRIORITY=%d", prio,
			    "SYSLOG_IDENTIFIER=btsdumpd", NULL) >= 0) {
		free(safe);
		return;
	}
	put_text(prio, safe);
	free(safe);
}

void btsdumpd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void btsdumpd_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

static int journal_entry(int prio, const char *message, const struct btsdumpd_meta *m,
			 const char *const *extra)
{
	size_t nx = 0, n, i;
	struct iovec *iov;
	char **bufs;
	int ret = -ENOMEM;

	while (extra && extra[nx])
		nx++;
	n = 4 + m->n + nx;
	iov = calloc(n, sizeof(*iov));
	bufs = calloc(n, sizeof(*bufs));
	if (!iov || !bufs)
		goto out;
	if (asprintf(&bufs[0], "MESSAGE=%s", message) < 0 ||
	    asprintf(&bufs[1], "PRIORITY=%d", prio) < 0 ||
	    !(bufs[2] = strdup("SYSLOG_IDENTIFIER=btsdumpd")) ||
	    !(bufs[3] = strdup("MESSAGE_ID=" BTSDUMPD_MESSAGE_ID)))
		goto out;
	for (i = 0; i < m->n; i++)
		if (asprintf(&bufs[4 + i], "BTSDUMPD_%s=%s", m->keys[i], m->vals[i]) < 0)
			goto out;
	for (i = 0; i < nx; i++)
		if (!(bufs[4 + m->n + i] = strdup(extra[i])))
			goto out;
	for (i = 0; i < n; i++)
		iov[i] = (struct iovec){ bufs[i], strlen(bufs[i]) };
	ret = sd_journal_sendv(iov, n);
out:
	for (i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(iov);
	return ret;
}

/* kmsg lines of one entry: /dev/kmsg lets a writer 10 lines per 5 s */
#define KMSG_ENTRY_LINES	10

/* The message's first line, the fields a reader of the kernel log needs to
 * find the entry, then as many of the message's last lines (the newest
 * branches) as fit. */
static void put_entry(int prio, const char *message, const struct btsdumpd_meta *m,
		      const char *const *extra)
{
	static const char *const brief[] = { "ID", "CORE", "CORE_REASON", "TRACE", "TRACE_ERROR" };
	const char *nl = strchr(message, '\n'), *p;
	char line[KMSG_LINE_MAX];
	size_t i, len = 0, lines = 0;

	if (*message)
		put_line(prio, message, nl ? (size_t)(nl - message) : strlen(message),
			 BTSDEC_ESC_LINES);
	for (i = 0; i < sizeof(brief) / sizeof(brief[0]) && len < sizeof(line); i++) {
		const char *v = btsdumpd_meta_get(m, brief[i]);

		if (v)
			len += snprintf(line + len, sizeof(line) - len, "%s%s=%s",
					len ? " " : "", brief[i], v);
	}
	for (i = 0; extra && extra[i] && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s", len ? " " : "", extra[i]);
	if (len)	/* the values as they are: escaped whole here */
		put_line(prio, line, strnlen(line, sizeof(line)), 0);
	if (!nl)
		return;
	/* back from the end to the start of the last KMSG_ENTRY_LINES - 2 lines */
	for (p = message + strlen(message); p > nl + 1 && lines < KMSG_ENTRY_LINES - 2; )
		if (*--p == '\n')
			lines++;
	if (*p == '\n')
		p++;
	while (*p == '\n')
		p++;
	if (*p)
		put_text(prio, p);
}

void btsdumpd_log_entry(int prio, const char *message, const struct btsdumpd_ctx *c,
			const char *const *extra)
{
	struct btsdumpd_meta meta, *m = &meta;

	/* without memory for the fields, the message alone */
	if (btsdumpd_crash_to_meta(&c->crash, *c->id ? c->id : NULL, c->acl, &meta))
		memset(&meta, 0, sizeof(meta));
	if (target == BTSDUMPD_LOG_JOURNAL && journal_entry(prio, message, m, extra) >= 0)
		goto out;
	if (target == BTSDUMPD_LOG_KMSG) {
		put_entry(prio, message, m, extra);
		goto out;
	}
	put_text(prio, message);
	put_entry(prio, "", m, extra);
out:
	btsdumpd_meta_free(&meta);
}
