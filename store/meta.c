// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's `meta` (docs/btsdumpd.md "meta"): ordered KEY=VALUE pairs in
 * memory, their escaped text form, parsed from a buffer or read from a file
 * with a size cap.  The store's one record format: written by btsdumpd,
 * read by btsdumpctl and btsdumpd's vacuum.  Errors: negative errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hex.h"	/* lib/hex.h: one hex digit's value */
#include "meta.h"
#include "util.h"

#define META_MAX	(1024 * 1024)	/* a larger meta is refused: -EFBIG */

/* ---- meta: in memory ---- */

static bool key_valid(const char *key)
{
	if (!*key)
		return false;
	for (const char *p = key; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

static ssize_t meta_find(const struct btsdumpd_meta *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return i;
	return -1;
}

static int meta_grow(struct btsdumpd_meta *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	char **k, **v;

	k = realloc(m->keys, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	m->keys = k;
	v = realloc(m->vals, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->vals = v;
	m->cap = cap;
	return 0;
}

/* Takes ownership of val (malloc'ed) whatever the outcome. */
static int meta_set_owned(struct btsdumpd_meta *m, const char *key, char *val)
{
	ssize_t i = meta_find(m, key);
	char *k;

	if (i >= 0) {
		free(m->vals[i]);
		m->vals[i] = val;
		return 0;
	}
	if (m->n == m->cap && meta_grow(m) < 0)
		goto err_val;
	k = strdup(key);
	if (!k)
		goto err_val;
	m->keys[m->n] = k;
	m->vals[m->n++] = val;
	return 0;
err_val:
	free(val);
	return -ENOMEM;
}

int btsdumpd_meta_set(struct btsdumpd_meta *m, const char *key, const char *val)
{
	char *v;

	if (!key_valid(key) || !val)
		return -EINVAL;
	v = strdup(val);
	if (!v)
		return -ENOMEM;
	return meta_set_owned(m, key, v);
}

int btsdumpd_meta_setf(struct btsdumpd_meta *m, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *v;
	int r;

	if (!key_valid(key))
		return -EINVAL;
	va_start(ap, fmt);
	r = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return meta_set_owned(m, key, v);
}

const char *btsdumpd_meta_get(const struct btsdumpd_meta *m, const char *key)
{
	ssize_t i = meta_find(m, key);

	return i >= 0 ? m->vals[i] : NULL;
}

void btsdumpd_meta_free(struct btsdumpd_meta *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->vals[i]);
	}
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- meta: file format ---- */
/* Appends s escaped to the stream: \\ \n \t, \xHH for other controls. */
static void escape_to(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

int btsdumpd_meta_format(const struct btsdumpd_meta *m, char **buf, size_t *len)
{
	FILE *f;

	for (size_t i = 0; i < m->n; i++)
		if (!key_valid(m->keys[i]))
			return -EINVAL;
	*buf = NULL;
	f = open_memstream(buf, len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		fprintf(f, "%s=", m->keys[i]);
		escape_to(f, m->vals[i]);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

int btsdumpd_meta_write_fd(int fd, const struct btsdumpd_meta *m)
{
	char *buf;
	size_t len;
	int r;

	r = btsdumpd_meta_format(m, &buf, &len);
	if (r)
		return r;
	r = btsdumpd_write_all(fd, buf, len);
	free(buf);
	return r;
}

/* Unescapes s[0..len) into a new string; NULL when malformed (a bad
 * escape, a raw control byte, an escaped NUL) or out of memory. */
static char *unescape(const char *s, size_t len, bool *nomem)
{
	char *out = malloc(len + 1), *o = out;
	int hi, lo;

	if (!out) {
		*nomem = true;
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == 0x7f)
			goto bad;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		if (++i == len)
			goto bad;
		if (s[i] == '\\' || s[i] == 'n' || s[i] == 't') {
			*o++ = s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : '\\';
		} else if (s[i] == 'x' && i + 2 < len &&
			   (hi = btsdec_hex_digit((unsigned char)s[i + 1])) >= 0 &&
			   (lo = btsdec_hex_digit((unsigned char)s[i + 2])) >= 0) {
			c = hi << 4 | lo;
			if (!c)
				goto bad;
			*o++ = c;
			i += 2;
		} else {
			goto bad;
		}
	}
	*o = 0;
	return out;
bad:
	free(out);
	return NULL;
}

/* One line (without its '\n'); malformed lines are ignored. */
static int meta_parse_line(struct btsdumpd_meta *m, const char *line, size_t len)
{
	const char *eq = memchr(line, '=', len);
	bool nomem = false;
	char *key, *val;
	int r;

	if (!eq || memchr(line, 0, len))
		return 0;
	key = strndup(line, eq - line);
	if (!key)
		return -ENOMEM;
	if (!key_valid(key)) {
		free(key);
		return 0;
	}
	val = unescape(eq + 1, len - (eq + 1 - line), &nomem);
	r = val ? meta_set_owned(m, key, val) : nomem ? -ENOMEM : 0;
	free(key);
	return r;
}

int btsdumpd_meta_parse(const char *buf, size_t len, struct btsdumpd_meta *m)
{
	size_t pos = 0;
	int r = 0;

	memset(m, 0, sizeof(*m));
	if (len > META_MAX)
		return -EFBIG;
	while (pos < len && r >= 0) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - buf) - pos : len - pos;

		r = meta_parse_line(m, buf + pos, l);
		pos += l + 1;
	}
	if (r < 0)
		btsdumpd_meta_free(m);
	return r;
}

/* Reads a regular file of at most META_MAX bytes; *buf is NUL-terminated. */
static int slurp_at(int dirfd, const char *name, char **buf, size_t *len)
{
	size_t got = 0;
	struct stat st;
	char *b;
	int fd, r;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL :
	    st.st_size > META_MAX ? -EFBIG : 0;
	b = r ? NULL : malloc(META_MAX + 2);
	if (!r && !b)
		r = -ENOMEM;
	while (!r) {
		ssize_t n = read(fd, b + got, META_MAX + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else if (n == 0)
			break;
		else if ((got += n) > META_MAX)
			r = -EFBIG;
	}
	close(fd);
	if (r) {
		free(b);
		return r;
	}
	b[got] = 0;
	*buf = b;
	*len = got;
	return 0;
}

int btsdumpd_meta_read_at(int dirfd, const char *name, struct btsdumpd_meta *m)
{
	size_t len = 0;
	char *buf = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	r = slurp_at(dirfd, name, &buf, &len);
	if (r < 0)
		return r;
	r = btsdumpd_meta_parse(buf, len, m);
	free(buf);
	return r;
}
