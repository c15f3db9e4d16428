/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The store's layout and its listing (entries.c, docs/btsdumpd.md "The
 * store").  Errors: negative errno.
 */
#ifndef BTSDUMPD_ENTRIES_H
#define BTSDUMPD_ENTRIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "meta.h"

#define BTSDUMPD_STORE_DEFAULT	"/var/lib/btsdumpd"
/* the stock-kernel LBR collector's snapshots and status (btsdumpd
 * --lbr-collector, daemon/lbr-collector.c; btsdumpctl status) */
#define BTSDUMPD_LBR_DIR_DEFAULT	"/run/btsdumpd-lbr"
#define BTSDUMPD_META		"meta"
#define BTSDUMPD_CORE_FILE	"core.zst"
/* companion mode: the LBR collector's note (framed, as in a core) for
 * systemd-coredump's core whose SHA-256 is the meta's COREDUMP_SHA256
 * (gdb/bts.py adds it to a copy of that core) */
#define BTSDUMPD_LBR_NOTE	"lbr.note"
/* The trace reports, zstd-compressed (entries before ReportSizeMax: plain,
 * the _PLAIN names); read them with btsdumpd_report_open(). */
#define BTSDUMPD_REPORT_TXT	"report.txt.zst"
#define BTSDUMPD_REPORT_JSON	"report.json.zst"
#define BTSDUMPD_REPORT_TXT_PLAIN	"report.txt"
#define BTSDUMPD_REPORT_JSON_PLAIN	"report.json"
/* The MESSAGE_ID of btsdumpd's journal entries (written by log.c, read by
 * btsdumpctl -D/--file) */
#define BTSDUMPD_MESSAGE_ID	"6d2e1f0c4b9a4d0e8f3a7b5c2d1e0f9a"

/* A complete entry (a directory ID/ holding a readable meta). */
struct btsdumpd_entry {
	char *id;
	struct btsdumpd_meta meta;
	uint64_t timestamp;	/* TIMESTAMP, else the directory's mtime */
	uint64_t bytes;		/* sum of the entry's file sizes */
};

/* Lists the store's complete entries that the caller can read, oldest
 * first (timestamp, then id).  Directories starting with '.' are skipped.
 * 0 or -errno. */
int btsdumpd_store_list(const char *store, struct btsdumpd_entry **out, size_t *n);
void btsdumpd_entries_free(struct btsdumpd_entry *e, size_t n);

/* An entry's trace report (json: the JSON one) in the entry directory
 * entry_fd: name gives the file there (NULL: none; with errno ENOENT),
 * open a FILE that reads it decompressed, whichever it is (NULL with
 * errno).  The one reader of the reports: btsdumpctl show and info. */
const char *btsdumpd_report_name(int entry_fd, bool json);
FILE *btsdumpd_report_open(int entry_fd, bool json);

#endif /* BTSDUMPD_ENTRIES_H */
