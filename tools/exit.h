/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit statuses of btsdump and btsdumpctl: one table for both tools
 * (docs/btsdump.md, docs/btsdumpctl.md "Exit status"), so a script reads
 * the same number the same way whichever it ran; btsdumpd's 0/1/2 agree.
 */
#ifndef BTS_TOOLS_EXIT_H
#define BTS_TOOLS_EXIT_H

enum bts_exit {
	BTS_EXIT_OK = 0,
	BTS_EXIT_USAGE = 1,	/* bad arguments; a core to a terminal */
	BTS_EXIT_READ = 2,	/* the input cannot be read (core, vmcore,
				 * store, entry), a core not stored, or the
				 * output cannot be written */
	BTS_EXIT_NONE = 3,	/* nothing to show: no branch trace; no
				 * stored crash matches */
	BTS_EXIT_PARTIAL = 4,	/* shown, but part was skipped: malformed
				 * trace notes, a CPU's unreadable ring */
	BTS_EXIT_NO_THREAD = 5,	/* --thread names no traced thread */
	BTS_EXIT_GDB = 6,	/* gdb could not be run, or was killed */
	BTS_EXIT_EXECUTABLE = 7,	/* the EXECUTABLE given is missing,
					 * unreadable, not an ELF file or
					 * another build: the report was
					 * printed without it */
};

#endif
