// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One crash, typed (crash.h): setting its facts from text, checked; the
 * one conversion into `meta` (the entry's record and the journal's
 * fields); the hand-off's fields both ways; the analysis child's result
 * both ways.  Process context.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "util.h"

void btsdumpd_crash_init(struct btsdumpd_crash *cr)
{
	memset(cr, 0, sizeof(*cr));
	cr->dump_mode = -1;
}

void btsdumpd_analysis_free(struct btsdumpd_analysis *an)
{
	free(an->last_branches);
	free(an->fault);
	free(an->trail);
	free(an->error);
	free(an->warning);
	memset(an, 0, sizeof(*an));
}

void btsdumpd_crash_free(struct btsdumpd_crash *cr)
{
	char **s[] = { &cr->comm, &cr->exe, &cr->cmdline, &cr->cgroup, &cr->hostname,
		       &cr->coredump_filename, &cr->coredump_timestamp, &cr->coredump_boot_id,
		       &cr->coredump_sha256,
		       &cr->vmcore, &cr->symbols, &cr->core_reason };

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		free(*s[i]);
	btsdumpd_analysis_free(&cr->an);
	btsdumpd_crash_init(cr);
}

int btsdumpd_crash_set(char **field, const char *v)
{
	char *n = v ? strdup(v) : NULL;

	if (v && !n)
		return -ENOMEM;
	free(*field);
	*field = n;
	return 0;
}

int btsdumpd_crash_setf(char **field, const char *fmt, ...)
{
	va_list ap;
	char *n;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&n, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	free(*field);
	*field = n;
	return 0;
}

/* ---- the required numbers ---- */

static const struct { unsigned int bit; const char *key; } numbers[] = {
	{ BTSDUMPD_HAVE_PID, "PID" }, { BTSDUMPD_HAVE_UID, "UID" },
	{ BTSDUMPD_HAVE_GID, "GID" }, { BTSDUMPD_HAVE_SIGNAL, "SIGNAL" },
	{ BTSDUMPD_HAVE_TIMESTAMP, "TIMESTAMP" },
};

int btsdumpd_crash_set_number(struct btsdumpd_crash *cr, unsigned int bit, const char *s)
{
	uint64_t v;

	if (btsdumpd_parse_u64(s, &v) || (bit != BTSDUMPD_HAVE_TIMESTAMP && v > INT_MAX))
		return -EINVAL;
	switch (bit) {
	case BTSDUMPD_HAVE_PID: cr->pid = v; break;
	case BTSDUMPD_HAVE_UID: cr->uid = v; break;
	case BTSDUMPD_HAVE_GID: cr->gid = v; break;
	case BTSDUMPD_HAVE_SIGNAL: cr->signal = v; break;
	case BTSDUMPD_HAVE_TIMESTAMP: cr->timestamp = v; break;
	default: return -EINVAL;
	}
	cr->have |= bit;
	return 0;
}

const char *btsdumpd_crash_missing(const struct btsdumpd_crash *cr)
{
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		if (!(cr->have & numbers[i].bit))
			return numbers[i].key;
	return NULL;
}

/* ---- meta ---- */

static const char *const core_name[] = {
	[BTSDUMPD_CORE_NONE] = "none", [BTSDUMPD_CORE_STORED] = "stored",
	[BTSDUMPD_CORE_DROPPED] = "dropped",
};
static const char *const trace_name[] = {
	[BTSDUMPD_TRACE_PRESENT] = "present", [BTSDUMPD_TRACE_ABSENT] = "absent",
	[BTSDUMPD_TRACE_ERROR] = "error",
};

static int put(struct btsdumpd_meta *m, const char *key, const char *v)
{
	return v ? btsdumpd_meta_set(m, key, v) : 0;
}

static int put_u64(struct btsdumpd_meta *m, const char *key, bool has, uint64_t v)
{
	return has ? btsdumpd_meta_setf(m, key, "%llu", (unsigned long long)v) : 0;
}

static int analysis_to_meta(const struct btsdumpd_analysis *an, struct btsdumpd_meta *m)
{
	return put(m, "TRACE", an->trace ? trace_name[an->trace] : NULL) ?:
	       put_u64(m, "TRACE_THREADS", an->has_threads, an->threads) ?:
	       put_u64(m, "TRACE_REJECTED", an->rejected, an->rejected) ?:
	       put(m, "TRACE_ERROR", an->error) ?:
	       put(m, "TRACE_WARNING", an->warning) ?:
	       put_u64(m, "FAULT_TID", an->has_tid, an->fault_tid) ?:
	       put(m, "LAST_BRANCHES", an->last_branches) ?:
	       put(m, "FAULT", an->fault) ?:
	       put(m, "TRAIL", an->trail) ?:
	       put_u64(m, "REPORT_LAST", an->report_last, an->report_last) ?:
	       put(m, "REPORT_CUT", an->report_cut ? "1" : NULL);
}

int btsdumpd_crash_to_meta(const struct btsdumpd_crash *cr, const char *id, const char *acl,
			   struct btsdumpd_meta *m)
{
	bool proc = cr->kind == BTSDUMPD_KIND_PROCESS;
	char mode[4];
	int r;

	snprintf(mode, sizeof(mode), "%d", cr->dump_mode);
	memset(m, 0, sizeof(*m));
	r = btsdumpd_meta_set(m, "VERSION", "1") ?:
	    put(m, "ID", id) ?:
	    btsdumpd_meta_set(m, "KIND", proc ? "process" : "kernel") ?:
	    put_u64(m, "PID", cr->have & BTSDUMPD_HAVE_PID, cr->pid) ?:
	    put_u64(m, "UID", cr->have & BTSDUMPD_HAVE_UID, cr->uid) ?:
	    put_u64(m, "GID", cr->have & BTSDUMPD_HAVE_GID, cr->gid) ?:
	    put_u64(m, "SIGNAL", cr->have & BTSDUMPD_HAVE_SIGNAL, cr->signal) ?:
	    put(m, "SIGNAL_NAME", cr->have & BTSDUMPD_HAVE_SIGNAL ?
		btsdumpd_signal_name(cr->signal) : NULL) ?:
	    put_u64(m, "TIMESTAMP", cr->have & BTSDUMPD_HAVE_TIMESTAMP, cr->timestamp) ?:
	    put(m, "DUMP_MODE", cr->dump_mode >= 0 ? mode : NULL) ?:
	    put(m, "COMM", cr->comm) ?:
	    put(m, "EXE", cr->exe) ?:
	    put(m, "CMDLINE", cr->cmdline) ?:
	    put(m, "CGROUP", cr->cgroup) ?:
	    put(m, "HOSTNAME", cr->hostname) ?:
	    put(m, "COREDUMP_FILENAME", cr->coredump_filename) ?:
	    put(m, "COREDUMP_TIMESTAMP", cr->coredump_timestamp) ?:
	    put(m, "COREDUMP_BOOT_ID", cr->coredump_boot_id) ?:
	    put(m, "COREDUMP_SHA256", cr->coredump_sha256) ?:
	    put(m, "VMCORE", cr->vmcore) ?:
	    put(m, "SYMBOLS", cr->symbols) ?:
	    put(m, "CORE", cr->core ? core_name[cr->core] : NULL) ?:
	    put(m, "CORE_FILE", cr->core == BTSDUMPD_CORE_STORED ? cr->core_file : NULL) ?:
	    put_u64(m, "CORE_SIZE", cr->has_core_size, cr->core_size) ?:
	    put_u64(m, "CORE_STORED_SIZE", cr->core == BTSDUMPD_CORE_STORED,
		    cr->core_stored_size) ?:
	    put(m, "CORE_TRUNCATED", cr->core_truncated ? "1" : NULL) ?:
	    put(m, "CORE_REASON", cr->core_reason) ?:
	    analysis_to_meta(&cr->an, m) ?:
	    put(m, "ACL", acl);
	if (r)
		btsdumpd_meta_free(m);
	return r;
}

/* ---- the hand-off ---- */

/* The text facts the handler sends, besides the numbers. */
static char **text_field(struct btsdumpd_crash *cr, const char *key, size_t klen)
{
	static const char *const keys[] = { "COMM", "EXE", "CMDLINE", "CGROUP", "HOSTNAME" };
	char **f[] = { &cr->comm, &cr->exe, &cr->cmdline, &cr->cgroup, &cr->hostname };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == klen && !memcmp(key, keys[i], klen))
			return f[i];
	return NULL;
}

int btsdumpd_crash_handoff_fields(const struct btsdumpd_crash *cr, char ***fields)
{
	struct btsdumpd_meta m;
	char **f;
	size_t i, n = 0;
	int r;

	/* the process facts only: what the service cannot know */
	struct btsdumpd_crash facts = *cr;

	facts.core = BTSDUMPD_CORE_UNSET;
	facts.has_core_size = false;
	facts.core_reason = NULL;
	memset(&facts.an, 0, sizeof(facts.an));
	r = btsdumpd_crash_to_meta(&facts, NULL, NULL, &m);
	if (r)
		return r;
	f = calloc(m.n + 1, sizeof(*f));
	for (i = 0; f && i < m.n; i++) {
		if (!strcmp(m.keys[i], "VERSION") || !strcmp(m.keys[i], "KIND") ||
		    !strcmp(m.keys[i], "SIGNAL_NAME"))
			continue;
		if (asprintf(&f[n++], "%s=%s", m.keys[i], m.vals[i]) < 0) {
			f[--n] = NULL;
			btsdumpd_fields_free(f);
			f = NULL;
		}
	}
	btsdumpd_meta_free(&m);
	if (!f)
		return -ENOMEM;
	*fields = f;
	return 0;
}

void btsdumpd_fields_free(char **fields)
{
	for (size_t i = 0; fields && fields[i]; i++)
		free(fields[i]);
	free(fields);
}

int btsdumpd_crash_handoff_field(struct btsdumpd_crash *cr, const char *buf, size_t len)
{
	const char *eq = memchr(buf, '=', len);
	size_t klen, i;
	char *val, **text;
	int r = 0;

	if (!eq || memchr(buf, '\0', len))
		return -EBADMSG;
	klen = eq - buf;
	val = strndup(eq + 1, len - klen - 1);
	if (!val)
		return -ENOMEM;
	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		if (strlen(numbers[i].key) == klen && !memcmp(buf, numbers[i].key, klen)) {
			cr->have &= ~numbers[i].bit;	/* a bad number: unset */
			btsdumpd_crash_set_number(cr, numbers[i].bit, val);
			goto out;
		}
	if (klen == 9 && !memcmp(buf, "DUMP_MODE", 9)) {
		uint64_t v;

		cr->dump_mode = btsdumpd_parse_u64(val, &v) || v > 2 ? -1 : (int)v;
	} else if ((text = text_field(cr, buf, klen))) {
		r = btsdumpd_crash_set(text, val);
	}
out:
	free(val);
	return r;
}

/* ---- the analysis child's result ---- */

static int analysis_from_meta(const struct btsdumpd_meta *m, struct btsdumpd_analysis *an)
{
	const char *trace = btsdumpd_meta_get(m, "TRACE"), *v;
	size_t i;

	memset(an, 0, sizeof(*an));
	for (i = 1; trace && i < sizeof(trace_name) / sizeof(trace_name[0]); i++)
		if (!strcmp(trace, trace_name[i]))
			an->trace = i;
	if (!an->trace)
		return -EBADMSG;	/* no result */
	if ((v = btsdumpd_meta_get(m, "TRACE_THREADS"))) {
		if (btsdumpd_parse_u64(v, &an->threads))
			return -EBADMSG;
		an->has_threads = true;
	}
	if ((v = btsdumpd_meta_get(m, "FAULT_TID"))) {
		if (btsdumpd_parse_u64(v, &an->fault_tid) || an->fault_tid > INT_MAX)
			return -EBADMSG;
		an->has_tid = true;
	}
	if ((v = btsdumpd_meta_get(m, "TRACE_REJECTED")) && btsdumpd_parse_u64(v, &an->rejected))
		return -EBADMSG;
	if ((v = btsdumpd_meta_get(m, "REPORT_LAST")) && btsdumpd_parse_u64(v, &an->report_last))
		return -EBADMSG;
	an->report_cut = (v = btsdumpd_meta_get(m, "REPORT_CUT")) && !strcmp(v, "1");
	if (btsdumpd_crash_set(&an->last_branches, btsdumpd_meta_get(m, "LAST_BRANCHES")) ||
	    btsdumpd_crash_set(&an->fault, btsdumpd_meta_get(m, "FAULT")) ||
	    btsdumpd_crash_set(&an->trail, btsdumpd_meta_get(m, "TRAIL")) ||
	    btsdumpd_crash_set(&an->error, btsdumpd_meta_get(m, "TRACE_ERROR")) ||
	    btsdumpd_crash_set(&an->warning, btsdumpd_meta_get(m, "TRACE_WARNING")))
		return -ENOMEM;
	return 0;
}

int btsdumpd_analysis_write(int fd, const struct btsdumpd_analysis *an)
{
	struct btsdumpd_meta m = { 0 };
	int r = analysis_to_meta(an, &m) ?: btsdumpd_meta_write_fd(fd, &m);

	btsdumpd_meta_free(&m);
	return r;
}

static int analysis_from(int r, struct btsdumpd_meta *m, struct btsdumpd_analysis *an)
{
	if (!r)
		r = analysis_from_meta(m, an);
	if (r)
		btsdumpd_analysis_free(an);
	btsdumpd_meta_free(m);
	return r;
}

int btsdumpd_analysis_parse(const char *buf, size_t len, struct btsdumpd_analysis *an)
{
	struct btsdumpd_meta m;

	memset(an, 0, sizeof(*an));
	return analysis_from(btsdumpd_meta_parse(buf, len, &m), &m, an);
}

int btsdumpd_analysis_read_at(int dirfd, const char *name, struct btsdumpd_analysis *an)
{
	struct btsdumpd_meta m;

	memset(an, 0, sizeof(*an));
	return analysis_from(btsdumpd_meta_read_at(dirfd, name, &m), &m, an);
}
