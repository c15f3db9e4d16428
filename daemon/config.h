/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btsdumpd's configuration (docs/btsdumpd.md "Configuration"): the [Store]
 * keys with their defaults, read from btsdumpd.conf and its drop-ins through
 * one table.  Process context; warnings go through a caller's log function.
 */
#ifndef BTSDUMPD_CONFIG_H
#define BTSDUMPD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTSDUMPD_CONFIG_DEFAULT	"/etc/btsdumpd.conf"

enum btsdumpd_storage {
	BTSDUMPD_STORAGE_EXTERNAL,	/* cores kept in the store */
	BTSDUMPD_STORAGE_NONE,		/* reports only */
};

/* A size: absolute bytes, or a percentage of the store's filesystem. */
struct btsdumpd_size {
	uint64_t bytes;
	unsigned int percent;	/* 0 = absolute */
	uint64_t cap;		/* for percentages: at most this (0 = none) */
};

struct btsdumpd_config {
	enum btsdumpd_storage storage;
	bool compress;
	struct btsdumpd_size process_size_max;
	struct btsdumpd_size external_size_max;
	struct btsdumpd_size report_size_max;	/* each report, uncompressed */
	struct btsdumpd_size max_use;
	struct btsdumpd_size keep_free;
	unsigned int rate_limit_interval_sec;
	unsigned int rate_limit_burst;
	unsigned int journal_branches;
	unsigned int analyze_timeout_sec;
	char analyze_user[64];
};

typedef void (*btsdumpd_warn_fn)(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

void btsdumpd_config_defaults(struct btsdumpd_config *c);
/* Reads path (absent is fine), then path.d/ *.conf in lexical order.  Bad
 * values and unknown keys are warned about and leave the default.  0 or
 * -errno when a file exists but cannot be read or is over 64 KiB (-EFBIG;
 * the file is then ignored and the values before it stay). */
int btsdumpd_config_load(struct btsdumpd_config *c, const char *path,
			 btsdumpd_warn_fn warn);
/* Parses len bytes of one file's text (name is for warnings; need not end
 * in a NUL) into c, as btsdumpd_config_load does each file: lines over
 * 1022 bytes, bad values and unknown keys are warned about and skipped. */
void btsdumpd_config_parse(struct btsdumpd_config *c, const char *name, const char *buf,
			   size_t len, btsdumpd_warn_fn warn);
/* Resolves a size against the filesystem of size fs_bytes. */
uint64_t btsdumpd_size_resolve(const struct btsdumpd_size *s, uint64_t fs_bytes);
/* Parses "123", "4K", "2G", "10%"; 0 or -EINVAL. */
int btsdumpd_size_parse(const char *v, struct btsdumpd_size *s);

#endif /* BTSDUMPD_CONFIG_H */
