/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The programs behind btsdump (docs/btsdump.md), one file each: a core's
 * report (btsdump-core.c), a vmcore's per-CPU traces (btsdump-vmcore.c),
 * the note writer (btsdump-addnote.c), the recovered registers
 * (btsdump-regs.c, which also holds what regs and why share) and where a
 * value came from (btsdump-why.c); tools/btsdump.c picks one by the first
 * argument.  Shared conventions: cli.h.
 */
#ifndef BTS_TOOLS_BTSDUMP_H
#define BTS_TOOLS_BTSDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "escape.h"
#include "btsdec.h"

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

/* The modes that read one core's recovered values (btsdump-regs.c): opens
 * input ("-", a pipe) as a core and its symbolizer with so, then fn(core,
 * sym, arg): its status, or BTS_EXIT_READ (said), BTS_EXIT_EXECUTABLE
 * when fn succeeded without the EXECUTABLE given. */
int btsdump_open_core(const char *input, struct btsdec_symopts *so,
		      int (*fn)(struct btsdec_core *, struct btsdec_sym *, void *), void *arg);
/* The value-recovery engine, run, for thread tid of core (have_tid; else
 * the faulting one) into *r, *th the thread: 0, or the exit status
 * (said): BTS_EXIT_NO_THREAD, BTS_EXIT_NONE (no trace, or back beyond
 * it). */
int btsdump_recover(struct btsdec_core *core, struct btsdec_sym *sym, bool have_tid,
		    pid_t tid, uint64_t back, const struct btsdec_thread **th,
		    struct btsdec_recover **r);
/* What btsdump regs and why share on their command lines: the options,
 * their --help lines, their getopt_long entries ('n', 't', 'j', 'd', 'h',
 * --version) and their handling. */
struct btsdump_recover_opts {
	struct btsdec_symopts so;
	uint64_t back;		/* instructions before the fault */
	bool have_tid, json;
	pid_t tid;
};
/* Option c (getopt_long's value) of those for mode ("regs"): 0 taken;
 * -1 after --help (help(stdout)) or --version, *status set; else the
 * usage error's status. */
int btsdump_recover_option(const char *mode, int c, char **argv,
			   struct btsdump_recover_opts *o, void (*help)(FILE *),
			   int *status);
#define BTSDUMP_RECOVER_HELP \
	"  -t, --thread TID          this thread (default: the faulting one)\n" \
	"  -j, --json                JSON instead of text\n" \
	"  -d, --debuginfo-path P    where to look for separate debuginfo\n" \
	"  -h, --help                this text\n" \
	"      --version             the version\n"
#define BTSDUMP_RECOVER_OPTSTRING BTS_CLI_OPTSTRING "n:t:jd:h"
#define BTSDUMP_RECOVER_OPTIONS \
	{ "back", required_argument, NULL, 'n' }, \
	{ "thread", required_argument, NULL, 't' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "debuginfo-path", required_argument, NULL, 'd' }, \
	{ "help", no_argument, NULL, 'h' }, \
	BTS_CLI_OPTION_VERSION
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
