// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd's configuration: defaults, the key table, btsdumpd.conf and its
 * drop-in directory (docs/btsdumpd.md "Configuration").  A bad value is
 * warned about and the default kept, so a typo never stops crash collection.
 * The parser takes a file's text as a buffer (fuzz-meta runs it in memory).
 * Called once per crash by btsdumpd (handler, service, harvest).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define MiB (1024ULL * 1024)
#define GiB (1024 * MiB)
#define LINE_MAX_	1022		/* longer lines are ignored, with a warning */
#define FILE_MAX	(64 * 1024)	/* a larger file is not read: -EFBIG */

void btsdumpd_config_defaults(struct btsdumpd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->storage = BTSDUMPD_STORAGE_EXTERNAL;
	c->compress = true;
	c->process_size_max.bytes = 2 * GiB;
	c->external_size_max.bytes = 2 * GiB;
	c->report_size_max.bytes = 32 * MiB;
	c->max_use = (struct btsdumpd_size){ .percent = 10, .cap = 4 * GiB };
	c->keep_free = (struct btsdumpd_size){ .percent = 15, .cap = 4 * GiB };
	c->rate_limit_interval_sec = 10;
	c->rate_limit_burst = 20;
	c->journal_branches = 16;
	c->analyze_timeout_sec = 60;
	snprintf(c->analyze_user, sizeof(c->analyze_user), "nobody");
}

int btsdumpd_size_parse(const char *v, struct btsdumpd_size *s)
{
	unsigned long long n, mul = 1;
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == '%' && !end[1]) {
		if (n > 100)
			return -EINVAL;
		*s = (struct btsdumpd_size){ .percent = n ? n : 0, .bytes = 0 };
		if (!n)		/* 0% is just 0 bytes */
			s->bytes = 0;
		return 0;
	}
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': mul = 1ULL << 10; break;
	case 'M': mul = 1ULL << 20; break;
	case 'G': mul = 1ULL << 30; break;
	case 'T': mul = 1ULL << 40; break;
	default: return -EINVAL;
	}
	if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]))
		return -EINVAL;
	if (n > UINT64_MAX / mul)
		return -EINVAL;
	*s = (struct btsdumpd_size){ .bytes = n * mul };
	return 0;
}

uint64_t btsdumpd_size_resolve(const struct btsdumpd_size *s, uint64_t fs_bytes)
{
	uint64_t v;

	if (!s->percent)
		return s->bytes;
	v = fs_bytes / 100 * s->percent;
	return s->cap && v > s->cap ? s->cap : v;
}

static int parse_bool(const char *v, bool *b)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]))
			return *b = true, 0;
		if (!strcasecmp(v, no[i]))
			return *b = false, 0;
	}
	return -EINVAL;
}

static int parse_uint(const char *v, unsigned int *u, unsigned int lo, unsigned int hi)
{
	unsigned long n;
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -EINVAL;
	*u = n;
	return 0;
}

enum key_type { K_STORAGE, K_BOOL, K_SIZE, K_UINT, K_USER };

static const struct key {
	const char *name;
	enum key_type type;
	size_t off;
	unsigned int lo, hi;
} keys[] = {
	{ "Storage", K_STORAGE, offsetof(struct btsdumpd_config, storage), 0, 0 },
	{ "Compress", K_BOOL, offsetof(struct btsdumpd_config, compress), 0, 0 },
	{ "ProcessSizeMax", K_SIZE, offsetof(struct btsdumpd_config, process_size_max), 0, 0 },
	{ "ExternalSizeMax", K_SIZE, offsetof(struct btsdumpd_config, external_size_max), 0, 0 },
	{ "ReportSizeMax", K_SIZE, offsetof(struct btsdumpd_config, report_size_max), 0, 0 },
	{ "MaxUse", K_SIZE, offsetof(struct btsdumpd_config, max_use), 0, 0 },
	{ "KeepFree", K_SIZE, offsetof(struct btsdumpd_config, keep_free), 0, 0 },
	{ "RateLimitIntervalSec", K_UINT, offsetof(struct btsdumpd_config, rate_limit_interval_sec), 0, 86400 },
	{ "RateLimitBurst", K_UINT, offsetof(struct btsdumpd_config, rate_limit_burst), 0, 1000000 },
	{ "JournalBranches", K_UINT, offsetof(struct btsdumpd_config, journal_branches), 0, 256 },
	{ "AnalyzeTimeoutSec", K_UINT, offsetof(struct btsdumpd_config, analyze_timeout_sec), 1, 3600 },
	{ "AnalyzeUser", K_USER, offsetof(struct btsdumpd_config, analyze_user), 0, 0 },
};

static int set_key(struct btsdumpd_config *c, const struct key *k, const char *v)
{
	void *p = (char *)c + k->off;
	size_t i;

	switch (k->type) {
	case K_STORAGE:
		if (!strcmp(v, "external"))
			return *(enum btsdumpd_storage *)p = BTSDUMPD_STORAGE_EXTERNAL, 0;
		if (!strcmp(v, "none"))
			return *(enum btsdumpd_storage *)p = BTSDUMPD_STORAGE_NONE, 0;
		return -EINVAL;
	case K_BOOL:
		return parse_bool(v, p);
	case K_SIZE:
		return btsdumpd_size_parse(v, p);
	case K_UINT:
		return parse_uint(v, p, k->lo, k->hi);
	case K_USER:
		if (!*v || strlen(v) >= sizeof(c->analyze_user))
			return -EINVAL;
		for (i = 0; v[i]; i++)
			if (!isalnum((unsigned char)v[i]) && !strchr("_-.", v[i]))
				return -EINVAL;
		snprintf(p, sizeof(c->analyze_user), "%s", v);
		return 0;
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static void parse_line(struct btsdumpd_config *c, const char *file, int lineno,
		       char *line, bool *in_store, btsdumpd_warn_fn warn)
{
	char *s = trim(line), *eq, *k, *v;
	size_t i;

	if (!*s || *s == '#' || *s == ';')
		return;
	if (*s == '[') {
		*in_store = !strcmp(s, "[Store]");
		if (!*in_store)
			warn("%s:%d: unknown section %s, ignored", file, lineno, s);
		return;
	}
	if (!*in_store)
		return;
	eq = strchr(s, '=');
	if (!eq) {
		warn("%s:%d: not KEY=VALUE, ignored", file, lineno);
		return;
	}
	*eq = '\0';
	k = trim(s);
	v = trim(eq + 1);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(k, keys[i].name))
			continue;
		if (set_key(c, &keys[i], v))
			warn("%s:%d: bad value for %s: \"%s\", keeping the current value",
			     file, lineno, k, v);
		return;
	}
	warn("%s:%d: unknown key %s, ignored", file, lineno, k);
}

void btsdumpd_config_parse(struct btsdumpd_config *c, const char *name, const char *buf,
			   size_t len, btsdumpd_warn_fn warn)
{
	char line[LINE_MAX_ + 2];
	bool in_store = false;
	int lineno = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - buf) - pos : len - pos;

		lineno++;
		if (l > LINE_MAX_) {
			warn("%s:%d: line too long, ignored", name, lineno);
		} else {
			memcpy(line, buf + pos, l);	/* a NUL inside ends it */
			line[l] = '\0';
			parse_line(c, name, lineno, line, &in_store, warn);
		}
		pos += l + 1;
	}
}

/* Reads a file of at most FILE_MAX bytes into a new buffer; 0 or -errno
 * (-EFBIG past the limit). */
static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *b = NULL;
	size_t n = 0;
	int r;

	if (!f)
		return -errno;
	b = malloc(FILE_MAX + 1);
	errno = 0;
	if (b)
		n = fread(b, 1, FILE_MAX + 1, f);
	r = !b ? -ENOMEM : ferror(f) ? (errno ? -errno : -EIO) : n > FILE_MAX ? -EFBIG : 0;
	fclose(f);
	if (r) {
		free(b);
		return r;
	}
	*buf = b;
	*len = n;
	return 0;
}

static int load_file(struct btsdumpd_config *c, const char *path, btsdumpd_warn_fn warn)
{
	size_t len = 0;
	char *buf = NULL;
	int r = read_file(path, &buf, &len);

	if (r)
		return r == -ENOENT ? 0 : r;
	btsdumpd_config_parse(c, path, buf, len, warn);
	free(buf);
	return 0;
}

static int conf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".conf");
}

int btsdumpd_config_load(struct btsdumpd_config *c, const char *path,
			 btsdumpd_warn_fn warn)
{
	struct dirent **names;
	char dir[PATH_MAX], file[PATH_MAX + 256];
	int n, i, ret, first = 0;

	ret = load_file(c, path, warn);
	if (ret) {
		warn("%s: %s, using defaults", path, strerror(-ret));
		first = ret;
	}
	snprintf(dir, sizeof(dir), "%s.d", path);
	n = scandir(dir, &names, conf_filter, alphasort);
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name);
		ret = load_file(c, file, warn);
		if (ret) {
			warn("%s: %s, ignored", file, strerror(-ret));
			first = first ? first : ret;
		}
		free(names[i]);
	}
	if (n > 0)
		free(names);
	return first;
}
