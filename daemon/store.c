// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's store (docs/btsdumpd.md "The store"): the `meta` file (escaped
 * KEY=VALUE lines, parsed from a buffer, read with a size cap), listing
 * complete entries, zstd streaming with bounded memory, and the POSIX ACL
 * (libacl) that lets the crashing user read an entry.  Used by btsdumpd (writer, as root) and
 * btsdumpctl (reader, any user); process context.  Errors: negative errno.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "store.h"

#define META_MAX	(1024 * 1024)	/* a larger meta is refused: -EFBIG */
#define IO_CHUNK	(64 * 1024)	/* zstd streaming buffers */

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

int btsdumpd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= w;
	}
	return 0;
}

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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Unescapes s[0..len) into a new string; NULL when malformed (a bad
 * escape, a raw control byte, an escaped NUL) or out of memory. */
static char *unescape(const char *s, size_t len, bool *nomem)
{
	char *out = malloc(len + 1), *o = out;

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
		} else if (s[i] == 'x' && i + 2 < len && hexval(s[i + 1]) >= 0 &&
			   hexval(s[i + 2]) >= 0) {
			c = hexval(s[i + 1]) << 4 | hexval(s[i + 2]);
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

/* ---- listing ---- */

int btsdumpd_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

const char *btsdumpd_signal_name(int sig)
{
	static char buf[16];
	const char *abbrev = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

	if (!abbrev) {
		snprintf(buf, sizeof(buf), "%d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}

static uint64_t entry_bytes(int fd)
{
	uint64_t sum = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int dfd;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return 0;
	}
	while ((d = readdir(dir)))
		if (!fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			sum += st.st_size;
	closedir(dir);
	return sum;
}

/* Loads one entry; 1 when it is complete and readable, 0 to skip it. */
static int entry_load(int storefd, const char *name, struct btsdumpd_entry *e)
{
	struct stat st;
	int fd, r;

	fd = openat(storefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	r = btsdumpd_meta_read_at(fd, BTSDUMPD_META, &e->meta);
	if (r < 0) {
		close(fd);
		return r == -ENOMEM ? r : 0;	/* unreadable or broken: skipped */
	}
	e->id = strdup(name);
	if (!e->id) {
		btsdumpd_meta_free(&e->meta);
		close(fd);
		return -ENOMEM;
	}
	if (fstat(fd, &st) < 0)
		st.st_mtime = 0;
	if (btsdumpd_parse_u64(btsdumpd_meta_get(&e->meta, "TIMESTAMP"), &e->timestamp))
		e->timestamp = st.st_mtime;
	e->bytes = entry_bytes(fd);
	close(fd);
	return 1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct btsdumpd_entry *x = a, *y = b;

	if (x->timestamp != y->timestamp)
		return x->timestamp < y->timestamp ? -1 : 1;
	return strcmp(x->id, y->id);
}

int btsdumpd_store_list(const char *store, struct btsdumpd_entry **out, size_t *n)
{
	struct btsdumpd_entry *e = NULL, *t;
	size_t cnt = 0, cap = 0;
	struct dirent *d;
	DIR *dir;
	int r = 0;

	dir = opendir(store);
	if (!dir)
		return -errno;
	while (r >= 0 && (errno = 0, d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 32;
			t = realloc(e, cap * sizeof(*e));
			if (!t) {
				r = -ENOMEM;
				break;
			}
			e = t;
		}
		memset(&e[cnt], 0, sizeof(e[cnt]));
		r = entry_load(dirfd(dir), d->d_name, &e[cnt]);
		cnt += r > 0;
	}
	if (r >= 0 && errno)
		r = -errno;
	closedir(dir);
	if (r < 0) {
		btsdumpd_entries_free(e, cnt);
		return r;
	}
	if (cnt)
		qsort(e, cnt, sizeof(*e), entry_cmp);
	*out = e;
	*n = cnt;
	return 0;
}

void btsdumpd_entries_free(struct btsdumpd_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].id);
		btsdumpd_meta_free(&e[i].meta);
	}
	free(e);
}

/* ---- zstd ---- */

static ssize_t read_some(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Feeds one input chunk (or the end, when last) through the compressor. */
static int compress_chunk(ZSTD_CCtx *cctx, ZSTD_inBuffer *in, bool last,
			  void *obuf, int out_fd, uint64_t *total)
{
	ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
	size_t rem;
	int r;

	do {
		ZSTD_outBuffer out = { obuf, IO_CHUNK, 0 };

		rem = ZSTD_compressStream2(cctx, &out, in, mode);
		if (ZSTD_isError(rem))
			return -EIO;
		r = btsdumpd_write_all(out_fd, obuf, out.pos);
		if (r < 0)
			return r;
		*total += out.pos;
	} while (last ? rem != 0 : in->pos < in->size);
	return 0;
}

int btsdumpd_zstd_compress(int in_fd, int out_fd, int level, uint64_t *out_bytes)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	void *ibuf = malloc(IO_CHUNK), *obuf = malloc(IO_CHUNK);
	uint64_t total = 0;
	int r = 0;

	if (!cctx || !ibuf || !obuf) {
		r = -ENOMEM;
		goto out;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		ssize_t n = read_some(in_fd, ibuf, IO_CHUNK);
		ZSTD_inBuffer in = { ibuf, n > 0 ? (size_t)n : 0, 0 };

		if (n < 0) {
			r = n;
			break;
		}
		r = compress_chunk(cctx, &in, n == 0, obuf, out_fd, &total);
		if (r < 0 || n == 0)
			break;
	}
	if (!r && out_bytes)
		*out_bytes = total;
out:
	ZSTD_freeCCtx(cctx);
	free(ibuf);
	free(obuf);
	return r;
}

/* Decompresses one input chunk; *ret keeps ZSTD_decompressStream's last
 * hint (0 = at a frame boundary, everything flushed). */
static int decompress_chunk(ZSTD_DCtx *dctx, ZSTD_inBuffer *in, void *obuf,
			    int out_fd, uint64_t *total, uint64_t max_out,
			    size_t *ret)
{
	ZSTD_outBuffer out;
	int r;

	do {
		out = (ZSTD_outBuffer){ obuf, IO_CHUNK, 0 };
		*ret = ZSTD_decompressStream(dctx, &out, in);
		if (ZSTD_isError(*ret))
			return -EBADMSG;
		if (max_out && out.pos > max_out - *total)
			return -EFBIG;
		r = btsdumpd_write_all(out_fd, obuf, out.pos);
		if (r < 0)
			return r;
		*total += out.pos;
	} while (in->pos < in->size || (*ret && out.pos == out.size));
	return 0;
}

int btsdumpd_zstd_decompress(int in_fd, int out_fd, uint64_t max_out)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	void *ibuf = malloc(IO_CHUNK), *obuf = malloc(IO_CHUNK);
	size_t ret = 1;		/* nothing read yet: not at a frame end */
	uint64_t total = 0;
	int r = 0;

	if (!dctx || !ibuf || !obuf) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = read_some(in_fd, ibuf, IO_CHUNK);
		ZSTD_inBuffer in = { ibuf, n > 0 ? (size_t)n : 0, 0 };

		if (n <= 0) {
			r = n < 0 ? n : ret ? -EBADMSG : 0;	/* truncated frame */
			break;
		}
		r = decompress_chunk(dctx, &in, obuf, out_fd, &total, max_out, &ret);
		if (r < 0)
			break;
	}
out:
	ZSTD_freeDCtx(dctx);
	free(ibuf);
	free(obuf);
	return r;
}

/* ---- ACL ---- */

/* Adds one entry to *acl: tag, its user (ACL_USER only) and permissions,
 * a mask of ACL_READ, ACL_WRITE and ACL_EXECUTE.  0 or -errno. */
static int acl_add(acl_t *acl, acl_tag_t tag, const uid_t *uid, unsigned int perms)
{
	static const acl_perm_t bits[] = { ACL_READ, ACL_WRITE, ACL_EXECUTE };
	acl_permset_t ps;
	acl_entry_t e;
	size_t i;

	if (acl_create_entry(acl, &e) || acl_set_tag_type(e, tag) ||
	    (uid && acl_set_qualifier(e, uid)) || acl_get_permset(e, &ps) ||
	    acl_clear_perms(ps))
		return -errno;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if ((perms & bits[i]) && acl_add_perm(ps, bits[i]))
			return -errno;
	return acl_set_permset(e, ps) ? -errno : 0;
}

int btsdumpd_acl_grant_user(int fd, uid_t uid, bool dir)
{
	unsigned int x = dir ? ACL_EXECUTE : 0;
	acl_t acl = acl_init(5);
	int r;

	if (!acl)
		return -errno;
	r = acl_add(&acl, ACL_USER_OBJ, NULL, ACL_READ | ACL_WRITE | x);
	if (!r)
		r = acl_add(&acl, ACL_USER, &uid, ACL_READ | x);
	if (!r)
		r = acl_add(&acl, ACL_GROUP_OBJ, NULL, 0);
	if (!r)
		r = acl_add(&acl, ACL_MASK, NULL, ACL_READ | x);
	if (!r)
		r = acl_add(&acl, ACL_OTHER, NULL, 0);
	if (!r && acl_valid(acl))
		r = -errno;
	if (!r && acl_set_fd(fd, acl))
		r = errno == ENOTSUP || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
	acl_free(acl);
	return r;
}

void btsdumpd_sanitize_comm(const char *comm, char *out)
{
	size_t n = 0;

	for (const char *p = comm ? comm : ""; *p && n < 15; p++) {
		char c = *p;
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';

		out[n++] = ok ? c : '_';
	}
	if (!n)
		strcpy(out, "unknown");
	else
		out[n] = 0;
}

/* ---- The hand-off's datagrams ------------------------------------------- */

int btsdumpd_handoff_field(struct btsdumpd_meta *m, const char *buf, size_t len)
{
	static const char *const keys[] = { "PID", "UID", "GID", "SIGNAL",
		"SIGNAL_NAME", "TIMESTAMP", "COMM", "EXE", "CMDLINE", "CGROUP",
		"HOSTNAME", "DUMP_MODE" };
	const char *eq = memchr(buf, '=', len);
	size_t i, klen;

	if (!eq || memchr(buf, '\0', len))
		return -EBADMSG;
	klen = eq - buf;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i]) == klen && !memcmp(buf, keys[i], klen)) {
			char *val = strndup(eq + 1, len - klen - 1);
			int ret = val ? btsdumpd_meta_set(m, keys[i], val) : -ENOMEM;

			free(val);
			return ret;
		}
	}
	return 0;
}

const char *btsdumpd_handoff_missing(const struct btsdumpd_meta *m)
{
	static const char *const need[] = { "PID", "UID", "GID", "SIGNAL",
		"TIMESTAMP" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (btsdumpd_parse_u64(btsdumpd_meta_get(m, need[i]), &v))
			return need[i];
	return NULL;
}
