/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec, symbols: the part of the decoder library's interface that
 * symbol.c implements.  Included through btsdec.h, the library's one
 * public header, which includes every module's.  Process context; errors
 * as negative errno plus struct btsdec_err.
 */
#ifndef BTSDEC_SYMBOL_API_H
#define BTSDEC_SYMBOL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"
#include "btsdec-core.h"

struct btsdec_loc {
	const char *func;	/* NULL if unknown */
	uint64_t off;		/* addr - function start */
	const char *file;	/* basename of the source file, or NULL */
	int line;
	const char *module;	/* basename of the module, or NULL */
	const char *path;	/* the module's file as the core names it (NT_FILE) */
	uint64_t mod_off;	/* addr - the module's load address (module known) */
	const char *missing;	/* the module's file was not found: its build-id in
				 * hex ("" when unknown); NULL when found */
};

struct btsdec_symopts {
	const char *executable;		/* may be NULL */
	const char *debuginfo_path;	/* libdwfl syntax; NULL = default */
	bool no_demangle;		/* C++ and Rust names as the ELF has them */
	/* Descriptors of files the process mapped (btsdumpd opens them through
	 * /proc/PID while the kernel holds the process): a module's file is the
	 * one whose GNU build-id is the module's in the core; never used for a
	 * module without one there.  Borrowed: open while the symbolizer is. */
	const int *elf_fds;
	size_t nr_elf_fds;
};

struct btsdec_sym;

int btsdec_sym_open_core(struct btsdec_core *core,
			 const struct btsdec_symopts *opts,
			 struct btsdec_sym **out, struct btsdec_err *err);
/* A kernel's symbolizer: vmlinux (with DWARF for lines) at its link
 * address plus KASLR's offset (VMCOREINFO KERNELOFFSET); the code of a
 * branch is read from vmlinux. */
int btsdec_sym_open_kernel(const char *vmlinux, uint64_t kaslr,
			   const struct btsdec_symopts *opts,
			   struct btsdec_sym **out, struct btsdec_err *err);
void btsdec_sym_close(struct btsdec_sym *sym);
/* Looks an address up (cached); fields point into the symbolizer. */
void btsdec_sym_lookup(struct btsdec_sym *sym, uint64_t addr,
		       struct btsdec_loc *loc);
/* The symbol holding addr and the offset into it, as dwfl_module_addrinfo
 * would name it, from a sorted per-module index; NULL if none.  The name
 * points into libdwfl. */
const char *btsdec_sym_addrsym(struct btsdec_sym *sym, uint64_t addr,
			       uint64_t *off);
/* libdwfl's session (modules at their run-time addresses): for DWARF the
 * symbolizer does not read itself (lib/why-expr.c).  Owned by sym. */
struct Dwfl;
struct Dwfl *btsdec_sym_dwfl(struct btsdec_sym *sym);
/* The GNU build-id of the module holding addr, in hex ("" when unknown);
 * NULL when no module holds addr.  Points into the symbolizer. */
const char *btsdec_sym_build_id(struct btsdec_sym *sym, uint64_t addr);
/* Reads code bytes at addr from the core, else from the module file.
 * Returns bytes read (0 when nothing is known there). */
size_t btsdec_sym_read_code(struct btsdec_sym *sym, uint64_t addr,
			    uint8_t *buf, size_t len);
/* Whether addr lies in a mapping of the process: a module libdwfl knows
 * or a segment of the core. */
bool btsdec_sym_mapped(struct btsdec_sym *sym, uint64_t addr);
/* Formats "func+0xoff" (or "func", or "0xaddr") into buf. */
const char *btsdec_loc_format(const struct btsdec_loc *loc, uint64_t addr,
			      char *buf, size_t len);

#endif /* BTSDEC_SYMBOL_API_H */
