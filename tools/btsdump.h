/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The three programs behind btsdump (docs/btsdump.md), one file each:
 * a core's report (btsdump-core.c), a vmcore's per-CPU traces
 * (btsdump-vmcore.c), the note writer (btsdump-addnote.c) and the
 * recovered registers (btsdump-regs.c), where a value came from
 * (btsdump-why.c); tools/
 * btsdump.c picks one by the first argument.  Shared conventions: cli.h.
 */
#ifndef BTS_TOOLS_BTSDUMP_H
#define BTS_TOOLS_BTSDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "escape.h"

/* One line on stderr, the message escaped as a whole (a core's name or a
 * reason quoting its contents cannot drive the terminal). */
#define say(...)	btsdec_escape_line(stderr, "btsdump", __VA_ARGS__)
/* A usage error of btsdump (every mode points at `btsdump --help`, which
 * names the other modes' help). */
#define usage_error(...)	bts_cli_usage_error("btsdump", __VA_ARGS__)

/* Each returns the process's exit status (tools/exit.h); argv[0] is the
 * mode's name ("btsdump", "vmcore", "add-note"). */
int btsdump_core_main(int argc, char **argv);
int btsdump_vmcore_main(int argc, char **argv);
int btsdump_addnote_main(int argc, char **argv);
int btsdump_regs_main(int argc, char **argv);
int btsdump_why_main(int argc, char **argv);

struct btsdec_core;
struct btsdec_sym;
struct btsdec_symopts;
struct btsdec_thread;
/* The modes that read one core's recovered values (btsdump-regs.c): opens
 * input ("-", a pipe) as a core and its symbolizer with so, then fn(core,
 * sym, arg): its status, or BTS_EXIT_READ (said), BTS_EXIT_EXECUTABLE
 * when fn succeeded without the EXECUTABLE given. */
int btsdump_open_core(const char *input, struct btsdec_symopts *so,
		      int (*fn)(struct btsdec_core *, struct btsdec_sym *, void *), void *arg);
/* Thread tid of core (have_tid), else its first (the faulting one). */
const struct btsdec_thread *btsdump_pick_thread(struct btsdec_core *core, bool have_tid,
						pid_t tid);
/* v as "0x" and digits hex digits, '?' for a nibble not wholly known
 * (k); digits at most 16. */
const char *btsdump_nibbles(uint64_t v, uint64_t k, unsigned digits, char buf[19]);
/* Checks the EXECUTABLE given for core (btsdump-exe.c): 0 if usable, else
 * -ENOENT, -EACCES, -EISDIR, -ENOEXEC (not ELF, or not a program nor a
 * shared object: a core), -ESTALE (another build:
 * its build-id is not among the core's), said on stderr. */
int btsdump_check_executable(struct btsdec_core *core, const char *path);

#endif
