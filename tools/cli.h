/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The conventions every btscrash program shares (btsdump, btsdumpctl,
 * btsdumpd): --version, the one-line usage error with "Try 'PROG --help'",
 * getopt's complaints in those words, numbers in options, an input path
 * that may be "-" or a pipe (spooled to a memfd), and the pager.
 * tools/cli.c.
 */
#ifndef BTS_TOOLS_CLI_H
#define BTS_TOOLS_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdint.h>

#include "exit.h"

/* getopt_long's value for --version (no short letter, as coreutils and
 * systemd), and its table entry. */
#define BTS_CLI_VERSION		0x100
#define BTS_CLI_OPTION_VERSION	{ "version", no_argument, NULL, BTS_CLI_VERSION }
/* Every optstring starts with this: ':' has getopt report a missing
 * argument as ':' and say nothing itself (bts_cli_bad_option speaks). */
#define BTS_CLI_OPTSTRING	":"

/* "PROG (btscrash) VERSION" on stdout; 0, or BTS_EXIT_READ if it cannot
 * be written. */
int bts_cli_version(const char *prog);
/* A usage error: "PROG: WHAT" (escaped) and "Try 'PROG --help' for more
 * information." on stderr.  Returns BTS_EXIT_USAGE. */
int bts_cli_usage_error(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The usage error for what getopt_long returned as c ('?' or ':'), from
 * optopt and argv[optind - 1].  Returns BTS_EXIT_USAGE. */
int bts_cli_bad_option(const char *prog, char **argv, int c);
/* s as an unsigned number in C syntax (0x..., 0...); -EINVAL if it is not
 * one or negative, -ERANGE past 64 bits. */
int bts_cli_parse_u64(const char *s, uint64_t *v);
/* What bts_cli_parse_u64's error says: "out of range" or "not a number". */
const char *bts_cli_number_error(int err);
/* Opens path for reading ("-": stdin).  An input that cannot seek (a pipe,
 * <(zstdcat core.zst), a terminal) is copied to a memfd first, rewound:
 * the readers mmap and seek.  The fd, or -errno. */
int bts_cli_open_input(const char *path);
/* The same, but a spooled input goes to a named temporary file in $TMPDIR
 * (default /tmp), for readers that refuse an unlinked file (sd-journal:
 * -EIDRM): its name in name, for the caller to unlink after use ("" when
 * nothing was spooled). */
int bts_cli_open_input_named(const char *path, char name[PATH_MAX]);
/* The same as a path the libraries can open ("/proc/self/fd/N" for a
 * spooled input, else path itself): *fd holds the input open (-1 when
 * path is returned as is), for the caller to close after use. */
int bts_cli_input_path(const char *path, char *buf, size_t len,
		       const char **out, int *fd);

/* The end of stdout, as coreutils' close_stdout: a write that failed is
 * said ("PROG: writing the output: …") and makes status BTS_EXIT_READ,
 * unless status is that already (its message said).  The status. */
int bts_cli_stdout_done(const char *prog, int status);

/* Pipes stdout through $PAGER (else less, with LESS=FRSXMK as systemd
 * sets it) when stdout is a terminal and $PAGER is not "" or "cat"; 0 or
 * -errno (then stdout is unchanged). */
int bts_cli_pager_start(void);
/* Flushes stdout to the pager, if one runs, and waits for it to quit. */
void bts_cli_pager_end(void);

#endif
