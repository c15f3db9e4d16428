/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec: the btscrash decoder library.  Reads trace notes from ELF cores
 * and rings from vmcores through format.h (the one decoder of
 * docs/format.md, shared with crash-ext/), classifies branches with capstone,
 * symbolizes with libdwfl, builds call histories and writes reports.
 * Used by btsdump, btsdumpd and the tests; process context, not thread-safe
 * per object.  Errors: negative errno plus a message in struct btsdec_err.
 */
#ifndef BTSDEC_H
#define BTSDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"

/* ---- Records and notes (note.c) ----------------------------------------- */

/* One parsed trace note (thread or CPU). */
struct btsdec_trace {
	uint32_t type;		/* NT_BTSCRASH_THREAD or NT_BTSCRASH_CPU */
	uint32_t flags;		/* BTS_NOTE_F_* */
	uint64_t id;
	uint64_t capacity;
	uint64_t lost;
	uint32_t nr_gaps;
	uint16_t source;
	size_t nr;		/* records, oldest first */
	struct btsdec_record *recs;	/* malloc'ed, owned; NULL when streamed */
	struct btsdec_recsrc *src;	/* streamed: read from a file on demand
					 * (btsdec_trace_at), owned */
};

/* Parses a note descriptor.  On error returns -EINVAL (or -ENOMEM) and puts
 * the rule that failed into err.  `t` is filled only on success. */
int btsdec_note_parse(uint32_t type, const void *desc, size_t len,
		      struct btsdec_trace *t, struct btsdec_err *err);
struct btsdec_recwin;

/* The same for a descriptor of len bytes at file offset `off` of fd, which
 * must stay open while t is used: the header is read and every record
 * checked now, in pieces; the records are read again, a window at a time,
 * by btsdec_trace_at.  Memory stays flat in the trace's length (issue 16).
 * The window is win, which may serve many traces and must outlive them
 * (a core's threads share one: issue 30), or one of t's own if win is
 * NULL.  -EIO when the file ends early. */
int btsdec_note_parse_fd(uint32_t type, int fd, uint64_t off, size_t len,
			 struct btsdec_recwin *win, struct btsdec_trace *t,
			 struct btsdec_err *err);
/* A window of records read from a file, for btsdec_note_parse_fd. */
struct btsdec_recwin *btsdec_recwin_new(void);
void btsdec_recwin_free(struct btsdec_recwin *win);
void btsdec_trace_free(struct btsdec_trace *t);
/* Record i (< t->nr) of t, held or streamed.  A streamed trace whose file
 * fails to read gives zeroed records and btsdec_trace_error says so. */
struct btsdec_record btsdec_trace_at(const struct btsdec_trace *t, size_t i);
/* 0, or -EIO when a streamed read failed since the trace was parsed. */
int btsdec_trace_error(const struct btsdec_trace *t);

/* Serializes t as a whole ELF note into buf.  Returns the byte count, or
 * -ENOSPC / -EINVAL. */
ssize_t btsdec_note_write(void *buf, size_t buflen,
			  const struct btsdec_trace *t, struct btsdec_err *err);

/* ---- Cores (core.c) ------------------------------------------------------ */

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
/* Reads memory the core holds at a virtual address; returns bytes read. */
size_t btsdec_core_read(const struct btsdec_core *core, uint64_t addr,
			void *buf, size_t len);
/* The process-wide CORE note of `type` (NT_AUXV, NT_FILE), or NULL. */
const struct btsdec_note_loc *btsdec_core_note(const struct btsdec_core *core,
					       uint32_t type);
/* Reads up to len bytes at offset off of a note's descriptor (a thread's
 * or btsdec_core_note's): bytes read (0 past its end), or -EIO. */
ssize_t btsdec_core_note_read(const struct btsdec_core *core,
			      const struct btsdec_note_loc *loc, uint64_t off,
			      void *buf, size_t len);
/* The libelf handle and fd, for the symbolizer. */
void *btsdec_core_elf(const struct btsdec_core *core);

/* ---- Writing notes into cores (writer.c) --------------------------------- */

/* Copies the core at in_path to out_path with the trace notes appended to
 * its PT_NOTE segment (sections and later segments shifted by whole pages).
 * out_path may equal in_path: the result is written to a temporary file and
 * renamed over it only when complete. */
int btsdec_core_add_notes(const char *in_path, const char *out_path,
			  const struct btsdec_trace *traces, size_t n,
			  struct btsdec_err *err);
/* The same with notes already framed (Elf64_Nhdr, name, descriptor, each
 * padded to 4 bytes): len bytes of them appended as they are. */
int btsdec_core_append_notes(const char *in_path, const char *out_path,
			     const void *notes, size_t len, struct btsdec_err *err);

/* ---- Symbols (symbol.c) -------------------------------------------------- */

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

/* ---- Classification (classify.c) ----------------------------------------- */

enum btsdec_kind {
	BTSDEC_K_UNKNOWN = 0,	/* no code at `from` to look at */
	BTSDEC_K_CALL,
	BTSDEC_K_RETURN,
	BTSDEC_K_JUMP,		/* unconditional jump */
	BTSDEC_K_COND,		/* conditional jump, loop, jrcxz */
	BTSDEC_K_SYSCALL,	/* syscall, sysenter, int n */
	BTSDEC_K_SYSRET,	/* sysret, sysexit */
	BTSDEC_K_IRET,		/* iret */
	BTSDEC_K_INTERRUPT,	/* `from` is no branch: asynchronous event or fault */
	BTSDEC_K_MARKER,	/* a marker record */
	BTSDEC_K__MAX,
};

const char *btsdec_kind_name(enum btsdec_kind k);

struct btsdec_classifier;

int btsdec_classifier_new(struct btsdec_classifier **out, struct btsdec_err *err);
void btsdec_classifier_free(struct btsdec_classifier *c);
/* Classifies the instruction in code[0..len) located at addr. */
enum btsdec_kind btsdec_classify(struct btsdec_classifier *c,
				 const uint8_t *code, size_t len, uint64_t addr,
				 bool *indirect);
/* The same, with the instruction's length: 0 when it does not decode. */
enum btsdec_kind btsdec_classify_insn(struct btsdec_classifier *c,
				      const uint8_t *code, size_t len, uint64_t addr,
				      bool *indirect, size_t *size);

/* ---- Decoding and histories (decode.c) ----------------------------------- */

/* One branch as the renderers see it, made on demand from the decoded
 * trace (btsdec_decoded_branch): the symbol strings point into the
 * symbolizer. */
struct btsdec_branch {
	struct btsdec_record rec;
	enum btsdec_kind kind;
	bool indirect;
	bool smashed;		/* a return that smashed the stack (ret_smashed()
				 * in decode.c, docs/json.md `smashed_stack`) */
	int depth;		/* call depth after normalization, >= 0 */
	struct btsdec_loc from_loc;
	struct btsdec_loc to_loc;
};

/* One function segment of a call/return history, like gdb's
 * `record function-call-history`. */
struct btsdec_segment {
	const char *func;	/* NULL = unknown (shown as the address) */
	uint64_t addr;		/* first address executed in the segment */
	int depth;
	size_t first, last;	/* branch indexes bounding the segment */
	const char *file;
	int line_lo, line_hi;
};

/* A decoded trace, compact (issue 16): the trace (borrowed: it must
 * outlive this; its records held or streamed from the core), one byte of
 * kind and marks per record and a call depth every 64 records; symbols stay
 * in the symbolizer (one entry per distinct address), which must outlive it
 * too.  About one byte per record of its own. */
struct btsdec_decoded {
	size_t nr;
	const struct btsdec_trace *t;	/* borrowed: the records, oldest first */
	uint8_t *info;		/* per record: kind, 0x80 = indirect,
				 * 0x40 = smashed stack */
	int32_t *depth_at;	/* normalized depth before records 0, 64, 128, ... */
	size_t nr_seg;		/* segments of the call history */
	struct btsdec_sym *sym;	/* borrowed; NULL = addresses only */
	bool symbols;		/* false: classified, not symbolized */
};

/* Classifies and symbolizes every record of a trace and builds its call
 * history.  sym may be NULL (addresses only). */
int btsdec_decode(struct btsdec_sym *sym, struct btsdec_classifier *cls,
		  const struct btsdec_trace *t, struct btsdec_decoded *out,
		  struct btsdec_err *err);
/* The same; with symbols false, branches are classified (sym still reads
 * the code) but carry no symbols or lines, and segments split only at
 * calls and returns. */
int btsdec_decode_symbols(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			  const struct btsdec_trace *t, bool symbols,
			  struct btsdec_decoded *out, struct btsdec_err *err);
void btsdec_decoded_free(struct btsdec_decoded *d);
/* Branch i (< d->nr) with its kind, depth and locations. */
void btsdec_decoded_branch(const struct btsdec_decoded *d, size_t i,
			   struct btsdec_branch *b);
/* Calls fn for every segment numbered first (0-based) and later, in order;
 * stops at fn's first nonzero return and returns it, else 0.  The segment
 * is valid during the call only. */
typedef int (*btsdec_segment_fn)(void *arg, size_t i, const struct btsdec_segment *s);
int btsdec_decoded_segments(const struct btsdec_decoded *d, size_t first,
			    btsdec_segment_fn fn, void *arg);

/* How the faulting thread's pc relates to the newest branch of its trail. */
enum btsdec_fault_rel {
	BTSDEC_FAULT_NO_TRAIL,	/* the trace holds no branch (or no trace) */
	BTSDEC_FAULT_TARGET,	/* pc is the newest branch's `to` */
	BTSDEC_FAULT_RUN,	/* pc lies in the straight-line code after `to`:
				 * no call, jump or return between them */
	BTSDEC_FAULT_UNRELATED,	/* the code after `to` branches away before pc,
				 * or pc lies before `to` or too far after it */
	BTSDEC_FAULT_UNKNOWN,	/* the code after `to` cannot be read */
	BTSDEC_FAULT__MAX,
};

/* "target", "run", "unrelated", "unknown", "no_trail" (docs/json.md). */
const char *btsdec_fault_rel_name(enum btsdec_fault_rel r);

/* The fault of a thread (NT_PRSTATUS, NT_SIGINFO) tied to its trail. */
struct btsdec_fault {
	uint64_t pc;		/* rip */
	struct btsdec_loc loc;	/* pc symbolized (empty without symbols) */
	int signo;		/* pr_cursig */
	bool has_siginfo;
	int si_code;
	bool has_addr;		/* addr is si_addr (btsdec_thread.has_addr) */
	uint64_t addr;
	enum btsdec_fault_rel rel;
	size_t branch;		/* index of the newest branch (not NO_TRAIL) */
	uint64_t run;		/* RUN: bytes from that branch's `to` to pc */
};

/* How pc relates to a branch target `to`: TARGET (equal), RUN (straight
 * code from `to` reaches pc), UNRELATED or UNKNOWN, as for a fault; the
 * code is read through sym and classified by cls (either NULL: UNKNOWN
 * unless equal). */
enum btsdec_fault_rel btsdec_run_relate(struct btsdec_sym *sym,
					struct btsdec_classifier *cls,
					uint64_t to, uint64_t pc);
/* Relates f->pc to the newest branch of d: fills rel, branch and run.
 * Reads the code after the branch's `to` through sym (may be NULL:
 * only TARGET or UNKNOWN then). */
void btsdec_fault_relate(struct btsdec_sym *sym, struct btsdec_classifier *cls,
			 const struct btsdec_decoded *d, struct btsdec_fault *f);

/* ---- The decoded model (model.c) ----------------------------------------- */

/* One thread of a core, decoded. */
struct btsdec_model_thread {
	pid_t tid;
	int signo;		/* pr_cursig */
	bool faulting;
	bool has_trace;
	struct btsdec_trace facts;	/* the trace's facts; recs is NULL */
	struct btsdec_decoded d;	/* branches and call segments (empty: no trace) */
	bool has_fault;		/* the faulting thread, with its registers */
	struct btsdec_fault fault;	/* its pc tied to the trail */
};

/* A module the trail or the fault touches whose file was not found. */
struct btsdec_missing {
	const char *path;	/* as the core names it (NT_FILE) */
	const char *module;	/* its basename */
	const char *build_id;	/* hex, "" when unknown */
};

/* A core decoded once: what every renderer (text, JSON, journal) reads. */
struct btsdec_model {
	char *core;			/* the core's name */
	char *executable;		/* as given, or NULL */
	size_t nr_missing, cap_missing;
	struct btsdec_missing *missing;	/* modules not found, strings borrowed */
	struct btsdec_index missing_by_path;	/* path -> missing */
	size_t nr_rejects;
	char **rejects;			/* why malformed trace notes were skipped */
	size_t nr_threads;
	struct btsdec_model_thread *threads;	/* faulting thread first */
};

struct btsdec_model_opts {
	bool have_tid;
	pid_t tid;		/* only this thread */
	bool no_symbols;	/* classify, but leave symbols and lines out (gdb) */
	const char *executable;	/* recorded in the model, for the reports */
};

/* Decodes every (selected) thread of core: classified by cls, symbolized
 * by sym (either may be NULL).  The model borrows the records from core
 * and the symbols from sym: free it before closing either.  0, or -ENOMEM / the decoder's error. */
int btsdec_model_build(struct btsdec_core *core, struct btsdec_sym *sym,
		       struct btsdec_classifier *cls, const struct btsdec_model_opts *o,
		       struct btsdec_model **out, struct btsdec_err *err);
void btsdec_model_free(struct btsdec_model *m);

/* ---- Renderers of the model (report-text.c, report-json.c) --------------- */

struct btsdec_render_opts {
	bool calls;		/* call/return history instead of branch list */
	size_t last;		/* 0 = all; else the newest N records (segments with calls) */
};

/* The text report (docs/btsdump.md) and the JSON document (docs/json.md).
 * 0, or -EIO / -ENOMEM with err set. */
int btsdec_render_text(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err);
int btsdec_render_json(FILE *out, const struct btsdec_model *m,
		       const struct btsdec_render_opts *o, struct btsdec_err *err);
/* The body of a trace in the text report: its branches (the newest
 * o->last), or with o->calls its call history; the lines a core's thread
 * and, decoded with vmlinux, a vmcore's CPU show under their heading. */
void btsdec_render_text_trail(FILE *out, const struct btsdec_decoded *d,
			      const struct btsdec_render_opts *o);
/* A kernel ring decoded with vmlinux (btsdump vmcore, crash> bts): the
 * ring's heading (lib/ringtext.c), then its newest `last` branches (0: all)
 * or with calls its call history, in the lines above. */
struct btsdec_ring_text;
void btsdec_render_ring_decoded(FILE *out, const struct btsdec_ring_text *v,
				const struct btsdec_decoded *d, size_t last, bool calls);
/* One branch or marker as the text report writes it, numbered #i + 1, with
 * the number unpadded: the journal's LAST_BRANCHES lines.  No newline. */
void btsdec_render_branch_line(FILE *out, size_t i, const struct btsdec_branch *b);
/* "faulted at 0x0 = target of #16 (indirect call in dispatch)": the
 * faulting thread's fault tied to its trail (th->has_fault), no newline. */
void btsdec_render_fault_line(FILE *out, const struct btsdec_model_thread *th);

/* ---- Reports (report.c): build, render, free ------------------------------ */

struct btsdec_report_opts {
	bool json;
	bool calls;		/* call/return history instead of branch list */
	bool have_tid;
	pid_t tid;		/* only this thread */
	size_t last;		/* 0 = all; else the newest N branches */
	bool no_symbols;	/* btsdec_model_opts.no_symbols */
	const char *executable;	/* for the header line */
};

/* Writes the report of every thread of core (text or JSON): a model built
 * and rendered once.  Returns 0, or a negative errno; err says why. */
int btsdec_report(FILE *out, struct btsdec_core *core, struct btsdec_sym *sym,
		  struct btsdec_classifier *cls,
		  const struct btsdec_report_opts *o, struct btsdec_err *err);

/* ---- JSON (json.c; the documents are specified in docs/json.md) ---------- */

/* Schema names and version of the documents the library writes. */
#define BTSDEC_JSON_SCHEMA_CORE		"btscrash-core"
#define BTSDEC_JSON_SCHEMA_VMCORE	"btscrash-vmcore"
#define BTSDEC_JSON_SCHEMA_ERROR	"btscrash-error"
#define BTSDEC_JSON_VERSION		6

/* Pieces of the documents, shared by report-json.c and vmreport.c: the trace
 * facts object, a branch object's common keys (number, from, to, flags,
 * kind, cycles, and the marker keys for a marker). */
struct json_object *btsdec_json_trace(const struct btsdec_trace *t);
struct json_object *btsdec_json_record(size_t i, const struct btsdec_record *r,
				       enum btsdec_kind kind);
/* A decoded branch's whole object (docs/json.md "Branch objects"): a
 * core's thread, or a vmcore's CPU decoded with vmlinux.  The text of
 * both is report-json.c's one branch writer, the core report streams. */
struct json_object *btsdec_json_branch(size_t i, const struct btsdec_branch *b);
/* s as JSON: a string if s is valid UTF-8, else the array of its byte
 * values (docs/json.md "Strings": lossless); NULL (JSON null) for NULL. */
struct json_object *btsdec_json_str(const char *s);
/* An address as a "0x..." string. */
struct json_object *btsdec_json_hex(uint64_t v);
/* Writes doc on one line, then drops the reference; -ENOMEM if doc is NULL. */
int btsdec_json_write(FILE *out, struct json_object *doc, struct btsdec_err *err);
/* Writes s as one JSON string literal (null for NULL). */
void btsdec_json_string(FILE *out, const char *s);
/* The error document btsdumpd stores when a report cannot be made:
 * {"schema":"btscrash-error","version":N,"error":why}. */
int btsdec_json_error(FILE *out, const char *why, struct btsdec_err *err);

/* ---- Vmcores (vmcore.c) ---------------------------------------------------- */

/* A kernel dump: ELF (/proc/vmcore, makedumpfile -E) or kdump-compressed. */
struct btsdec_vmcore;

int btsdec_vmcore_open(const char *path, struct btsdec_vmcore **out,
		       struct btsdec_err *err);
void btsdec_vmcore_close(struct btsdec_vmcore *vc);
bool btsdec_vmcore_is_kdump(const struct btsdec_vmcore *vc);
/* VMCOREINFO value of key into buf; false if absent. */
bool btsdec_vmcore_info(const struct btsdec_vmcore *vc, const char *key,
			char *buf, size_t len);
/* The dump's NT_BTSCRASH_CPU notes (malformed ones skipped, see rejects). */
size_t btsdec_vmcore_nr_cpu_notes(const struct btsdec_vmcore *vc);
const struct btsdec_trace *btsdec_vmcore_cpu_note(const struct btsdec_vmcore *vc, size_t i);
/* Why each malformed CPU note was skipped (the library prints nothing). */
size_t btsdec_vmcore_nr_rejects(const struct btsdec_vmcore *vc);
const char *btsdec_vmcore_reject(const struct btsdec_vmcore *vc, size_t i);
/* Physical memory: 0, -ENOENT (not in the dump), -EIO, -ENOTSUP. */
int btsdec_vmcore_read_phys(struct btsdec_vmcore *vc, uint64_t pa, void *buf,
			    size_t len, struct btsdec_err *err);

/* A CPU's full ring, found through VMCOREINFO (docs/format.md §4). */
struct btsdec_cpu_ring {
	uint64_t cpu;
	bool panic;		/* the CPU that ran the crash path */
	bool frozen;
	uint64_t freeze_ts;
	int status;		/* 0, or why the ring is unreadable (err) */
	struct btsdec_err err;
	struct btsdec_trace trace;	/* ordered records when status is 0 */
};
/* Every CPU that has a ring; -ENOENT when the kernel kept none. */
int btsdec_vmcore_cpu_rings(struct btsdec_vmcore *vc, struct btsdec_cpu_ring **out,
			    size_t *nr, struct btsdec_err *err);
void btsdec_cpu_rings_free(struct btsdec_cpu_ring *r, size_t n);

/* ---- Kernel symbols (ksym.c) ------------------------------------------------ */

/* From System.map or vmlinux's .symtab, moved by the KASLR offset. */
struct btsdec_ksyms;
int btsdec_ksyms_open(const char *path, uint64_t kaslr_offset,
		      struct btsdec_ksyms **out, struct btsdec_err *err);
void btsdec_ksyms_close(struct btsdec_ksyms *ks);
/* Name of the function holding addr and the offset into it; NULL if none. */
const char *btsdec_ksyms_lookup(const struct btsdec_ksyms *ks, uint64_t addr,
				uint64_t *off);
/* Whether ks came from a vmlinux (ELF), not a System.map. */
bool btsdec_ksyms_from_vmlinux(const struct btsdec_ksyms *ks);

/* ---- Vmcore reports (vmreport.c) ------------------------------------------- */

struct btsdec_vmreport_opts {
	const char *cpus;	/* only these CPUs, comma list; NULL = all */
	size_t last;		/* the newest N branches per CPU; 0 = all */
	bool json;		/* JSON instead of text */
	bool raw;		/* no symbols */
	bool calls;		/* text: call/return history (decoded, vmlinux) */
	const char *symbols;	/* vmlinux (decoded) or System.map (names);
				 * NULL = addresses only */
	const char *prog;	/* warnings are "PROG: ..." lines; NULL = bare */
};

struct btsdec_vmreport_result {
	size_t cpus_shown;	/* CPUs whose trace was printed */
	size_t rings_unreadable; /* CPUs whose ring was unreadable: warned,
				  * and their crash note shown if they have one */
};

/* Writes each selected CPU's last kernel branches from the open vmcore vc
 * (named name in the report) to out, its full ring or, when that is
 * unreadable, its crash note; one open vmcore serves several reports.
 * Warnings go to warn, one line each (NULL: dropped), malformed CPU notes
 * first.  Returns 0 when some CPU's trace was printed (rings_unreadable > 0
 * means some were incomplete); -ENODATA when the vmcore holds no branch
 * trace (the header, in JSON the whole empty document, is still written);
 * another negative errno when the symbols cannot be read (nothing
 * written).  err says why; res (may be NULL) is filled in every case.
 * Errors writing to out are left to the caller (ferror). */
int btsdec_vmcore_report(FILE *out, struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o,
			 struct btsdec_vmreport_result *res, FILE *warn,
			 struct btsdec_err *err);

/* A vmcore's report decoded once (vmreport.c): the selected CPUs' traces
 * (full ring, or crash note when the ring is unreadable) and the kernel
 * symbols, rendered as often as needed.  The model reads vc, which must
 * outlive it.  Warnings (rejected CPU notes, unreadable rings) go to warn
 * once, at build.  Build fails only when the symbols cannot be read. */
struct btsdec_vmmodel;

int btsdec_vmmodel_build(struct btsdec_vmcore *vc, const char *name,
			 const struct btsdec_vmreport_opts *o, FILE *warn,
			 struct btsdec_vmmodel **out, struct btsdec_err *err);
/* Text or JSON (docs/json.md), the newest `last` records per CPU (0: all);
 * returns as btsdec_vmcore_report does (-ENODATA: no CPU had a trace). */
int btsdec_vmmodel_render(FILE *out, const struct btsdec_vmmodel *m, bool json,
			  size_t last, struct btsdec_vmreport_result *res,
			  struct btsdec_err *err);
void btsdec_vmmodel_free(struct btsdec_vmmodel *m);

#endif /* BTSDEC_H */
