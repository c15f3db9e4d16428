/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, cores: the part of the decoder library's interface that core.c
 * implements.  Included through btsdec.h, the library's one public header,
 * which includes every module's.  Process context; errors as negative
 * errno plus struct btsdec_err.
 */
#ifndef BTSDEC_CORE_API_H
#define BTSDEC_CORE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-note.h"

/* Where a note's descriptor lies in the core file (size 0: absent). */
struct btsdec_note_loc {
	uint64_t off;
	uint64_t size;
};

struct btsdec_thread {
	pid_t tid;
	int signo;		/* pr_cursig of NT_PRSTATUS */
	bool faulting;		/* the thread that took the signal */
	bool has_prstatus;	/* its NT_PRSTATUS was read (matched by pr_pid) */
	bool has_regs;		/* that note held the registers: pc is valid */
	uint64_t pc;		/* rip from pr_reg */
	bool has_siginfo;	/* the NT_SIGINFO written after its NT_PRSTATUS */
	int si_signo, si_code;
	bool has_addr;		/* addr is valid: a kernel-sent SIGSEGV, SIGBUS,
				 * SIGILL, SIGFPE or SIGTRAP */
	uint64_t addr;		/* si_addr */
	bool has_trace;
	struct btsdec_trace trace;
	struct btsdec_note_loc prstatus;	/* its NT_PRSTATUS descriptor */
	struct btsdec_note_loc fpregset;	/* its NT_FPREGSET, if any */
	struct btsdec_note_loc xstate;		/* its NT_X86_XSTATE, if any */
};

struct btsdec_core;

/* Opens an ELF core and reads its threads and trace notes.  Malformed trace
 * notes are skipped and listed (btsdec_core_rejects); a core that is not a
 * readable x86-64 ELF core is an error (-ENOEXEC, -EIO, ...). */
int btsdec_core_open(const char *path, struct btsdec_core **out,
		     struct btsdec_err *err);
/* The same on an open file descriptor, which the core then owns (closed on
 * error too); name is used in messages. */
int btsdec_core_open_fd(int fd, const char *name, struct btsdec_core **out,
			struct btsdec_err *err);
void btsdec_core_close(struct btsdec_core *core);
const char *btsdec_core_path(const struct btsdec_core *core);
size_t btsdec_core_nr_threads(const struct btsdec_core *core);
/* Threads, faulting thread first, then in note order. */
const struct btsdec_thread *btsdec_core_thread(const struct btsdec_core *core,
					       size_t i);
size_t btsdec_core_nr_traces(const struct btsdec_core *core);
size_t btsdec_core_nr_rejects(const struct btsdec_core *core);
const char *btsdec_core_reject(const struct btsdec_core *core, size_t i);
/* The size the core should have when it is shorter (cut by RLIMIT_CORE, a
 * full disk, a copy): memory beyond the end reads as absent.  0 if whole. */
uint64_t btsdec_core_truncated(const struct btsdec_core *core);
/* Whether addr lies in a mapping of the process (a PT_LOAD's p_memsz),
 * dumped or not. */
bool btsdec_core_mapped(const struct btsdec_core *core, uint64_t addr);
/* The mapping (PT_LOAD segment) holding addr: [*lo, *hi); false if none. */
bool btsdec_core_segment(const struct btsdec_core *core, uint64_t addr,
			 uint64_t *lo, uint64_t *hi);
/* Whether [addr, addr + len) lies in one mapping the core's program
 * header says was not writable (no PF_W) when the process was dumped. */
bool btsdec_core_read_only(const struct btsdec_core *core, uint64_t addr,
			   size_t len);
/* Reads memory the core holds at a virtual address; returns bytes read. */
size_t btsdec_core_read(const struct btsdec_core *core, uint64_t addr,
			void *buf, size_t len);
/* The process-wide CORE note of `type` (NT_AUXV, NT_FILE, NT_PRPSINFO),
 * or NULL. */
const struct btsdec_note_loc *btsdec_core_note(const struct btsdec_core *core,
					       uint32_t type);
/* Reads up to len bytes at offset off of a note's descriptor (a thread's
 * or btsdec_core_note's): bytes read (0 past its end), or -EIO. */
ssize_t btsdec_core_note_read(const struct btsdec_core *core,
			      const struct btsdec_note_loc *loc, uint64_t off,
			      void *buf, size_t len);
/* The value of auxiliary vector entry `type` (AT_ENTRY, AT_PHDR, ...)
 * from NT_AUXV into *val; false when the core has none. */
bool btsdec_core_auxv(const struct btsdec_core *core, uint64_t type, uint64_t *val);
/* The libelf handle and fd, for the symbolizer. */
void *btsdec_core_elf(const struct btsdec_core *core);

#endif /* BTSDEC_CORE_API_H */
