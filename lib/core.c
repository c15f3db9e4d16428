// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Core files: opens an x86-64 ELF core with libelf, walks its PT_NOTE
 * segments note by note with format.c's framing, collects threads
 * (NT_PRSTATUS: pid, signal, rip; NT_SIGINFO: si_addr) and btscrash trace
 * notes (streamed from the file through one window of records: note.c),
 * and reads memory the core holds (its PT_LOAD segments, sorted once).
 * Threads grow geometrically and are found by tid through an index, so a
 * core of 50 k threads opens in linear time and memory (issue 30).  Hostile
 * input is expected: every offset is checked against the file before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#include "btsdec.h"
#include "grow.h"

/* A PT_LOAD segment: memory of the process, dumped or not.  vaddr first:
 * the key of btsdec_upper_bound. */
struct load_seg {
	uint64_t vaddr, memsz, filesz, offset;
	size_t phdr;		/* its program header, to sort stably */
	uint32_t flags;		/* its p_flags: PF_R, PF_W, PF_X */
};

struct btsdec_core {
	char *path;
	int fd;
	Elf *elf;
	uint64_t file_size;
	uint64_t want_size;	/* file size the program headers call for */
	uint64_t note_off;	/* descriptor offset of the note being read */
	size_t nr_threads, cap_threads;
	struct btsdec_thread *threads;
	struct btsdec_index by_tid;	/* tid -> thread, while the notes are read */
	size_t nr_prstatus;
	ssize_t last_prstatus;	/* thread of the last NT_PRSTATUS, for NT_SIGINFO */
	ssize_t regs_thread;	/* the same, for NT_FPREGSET (after NT_SIGINFO) */
	struct btsdec_note_loc auxv, file, psinfo;	/* NT_AUXV, NT_FILE,
						 * NT_PRPSINFO: the first ones */
	size_t nr_traces;
	size_t nr_rejects, cap_rejects;
	char **rejects;
	struct btsdec_recwin *win;	/* the trace notes' window of records */
	size_t nr_loads;
	struct load_seg *loads;		/* by vaddr */
};

const char *btsdec_core_path(const struct btsdec_core *c) { return c->path; }
size_t btsdec_core_nr_threads(const struct btsdec_core *c) { return c->nr_threads; }
size_t btsdec_core_nr_traces(const struct btsdec_core *c) { return c->nr_traces; }
size_t btsdec_core_nr_rejects(const struct btsdec_core *c) { return c->nr_rejects; }
void *btsdec_core_elf(const struct btsdec_core *c) { return c->elf; }

uint64_t btsdec_core_truncated(const struct btsdec_core *c)
{
	return c->want_size > c->file_size ? c->want_size : 0;
}

const struct btsdec_thread *btsdec_core_thread(const struct btsdec_core *c,
					       size_t i)
{
	return i < c->nr_threads ? &c->threads[i] : NULL;
}

const char *btsdec_core_reject(const struct btsdec_core *c, size_t i)
{
	return i < c->nr_rejects ? c->rejects[i] : NULL;
}

static int add_reject(struct btsdec_core *c, uint64_t off, const char *msg)
{
	if (btsdec_grow(&c->rejects, &c->cap_rejects, c->nr_rejects + 1))
		return -ENOMEM;
	if (asprintf(&c->rejects[c->nr_rejects], "trace note at file offset 0x%llx: %s",
		     (unsigned long long)off, msg) < 0)
		return -ENOMEM;
	c->nr_rejects++;
	return 0;
}

static struct btsdec_thread *find_thread(struct btsdec_core *c, pid_t tid)
{
	size_t i = btsdec_index_get(&c->by_tid, (uint32_t)tid);

	return i == BTSDEC_INDEX_NONE ? NULL : &c->threads[i];
}

static struct btsdec_thread *add_thread(struct btsdec_core *c, pid_t tid)
{
	struct btsdec_thread *t;

	if (btsdec_grow(&c->threads, &c->cap_threads, c->nr_threads + 1) ||
	    btsdec_index_add(&c->by_tid, (uint32_t)tid, c->nr_threads))
		return NULL;
	t = &c->threads[c->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* NT_PRSTATUS: matched to its thread by pr_pid (a trace note may have
 * named the thread first), never by position.  The first one is the
 * thread that took the signal (Linux and gdb both write it first). */
static int on_prstatus(struct btsdec_core *c, const uint8_t *desc, size_t len)
{
	const size_t rip = offsetof(struct elf_prstatus, pr_reg) +
			   offsetof(struct user_regs_struct, rip);
	struct btsdec_thread *t;
	int32_t pid;
	int16_t sig;

	c->last_prstatus = -1;
	if (len < offsetof(struct elf_prstatus, pr_ppid))
		return 0;	/* not ours to judge; the thread is unknown */
	memcpy(&pid, desc + offsetof(struct elf_prstatus, pr_pid), sizeof(pid));
	memcpy(&sig, desc + offsetof(struct elf_prstatus, pr_cursig), sizeof(sig));
	t = find_thread(c, pid);
	if (t && t->has_prstatus)
		return 0;	/* a second one for the same thread: the first counts */
	if (!t && !(t = add_thread(c, pid)))
		return -ENOMEM;
	t->has_prstatus = true;
	t->prstatus = (struct btsdec_note_loc){ c->note_off, len };
	t->signo = sig;
	t->faulting = c->nr_prstatus++ == 0;
	if (len >= rip + sizeof(t->pc)) {
		memcpy(&t->pc, desc + rip, sizeof(t->pc));
		t->has_regs = true;
	}
	c->last_prstatus = t - c->threads;
	c->regs_thread = c->last_prstatus;
	return 0;
}

/* si_addr is the faulting address only for these, sent by the kernel. */
static bool siginfo_has_addr(int signo, int code)
{
	return code > 0 && (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL ||
			    signo == SIGFPE || signo == SIGTRAP);
}

/* NT_SIGINFO belongs to the thread of the NT_PRSTATUS before it: Linux
 * writes one, after the dumping thread's; gdb one after each thread's. */
static void on_siginfo(struct btsdec_core *c, const uint8_t *desc, size_t len)
{
	struct btsdec_thread *t;
	int32_t signo, code;

	if (c->last_prstatus < 0 ||
	    len < offsetof(siginfo_t, si_addr) + sizeof(t->addr))
		return;
	t = &c->threads[c->last_prstatus];
	c->last_prstatus = -1;
	memcpy(&signo, desc + offsetof(siginfo_t, si_signo), sizeof(signo));
	memcpy(&code, desc + offsetof(siginfo_t, si_code), sizeof(code));
	t->has_siginfo = true;
	t->si_signo = signo;
	t->si_code = code;
	t->has_addr = siginfo_has_addr(signo, code);
	if (t->has_addr)
		memcpy(&t->addr, desc + offsetof(siginfo_t, si_addr),
		       sizeof(t->addr));
}

/* The faulting thread first, the others in note order. */
static void faulting_first(struct btsdec_core *c)
{
	struct btsdec_thread f;

	for (size_t i = 1; i < c->nr_threads; i++) {
		if (!c->threads[i].faulting)
			continue;
		f = c->threads[i];
		memmove(&c->threads[1], &c->threads[0], i * sizeof(f));
		c->threads[0] = f;
		return;
	}
}

/* A trace note whose descriptor of len bytes lies at file offset off:
 * streamed, not read whole (note.c). */
static int on_trace(struct btsdec_core *c, uint32_t type, uint64_t off, size_t len)
{
	struct btsdec_thread *t;
	struct btsdec_trace tr;
	struct btsdec_err err;
	int ret;

	ret = btsdec_note_parse_fd(type, c->fd, off, len, c->win, &tr, &err);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return add_reject(c, off, err.msg);
	if (type != NT_BTSCRASH_THREAD || tr.id > INT32_MAX) {
		btsdec_trace_free(&tr);
		return add_reject(c, off, type != NT_BTSCRASH_THREAD ?
				  "CPU note in a process core (a kernel dump? read it with `btsdump vmcore`)" :
				  "thread id out of range");
	}
	t = find_thread(c, (pid_t)tr.id);
	if (t && t->has_trace) {
		btsdec_trace_free(&tr);
		return add_reject(c, off, "second trace note for the same thread");
	}
	if (!t)
		t = add_thread(c, (pid_t)tr.id);
	if (!t) {
		btsdec_trace_free(&tr);
		return -ENOMEM;
	}
	t->trace = tr;
	t->has_trace = true;
	c->nr_traces++;
	return 0;
}

/* A CORE note we read (NT_PRSTATUS, NT_SIGINFO): its descriptor, read whole. */
static int on_core_note(struct btsdec_core *c, const struct btsdec_elf_note_head *h,
			uint64_t off)
{
	uint8_t *desc = malloc(h->descsz ? h->descsz : 1);
	int ret = 0;

	if (!desc)
		return -ENOMEM;
	c->note_off = off;
	if (pread(c->fd, desc, h->descsz, off) != (ssize_t)h->descsz)
		ret = -EIO;
	else if (h->type == NT_PRSTATUS)
		ret = on_prstatus(c, desc, h->descsz);
	else
		on_siginfo(c, desc, h->descsz);
	free(desc);
	return ret;
}

/* A CORE note (or LINUX's NT_X86_XSTATE) the remote-protocol stub serves
 * (lib/gdbstub.c): only where it lies.  NT_FPREGSET and NT_X86_XSTATE
 * belong to the thread of the NT_PRSTATUS before them; of the
 * process-wide ones the first counts. */
static void on_served_note(struct btsdec_core *c, const struct btsdec_elf_note_head *h,
			   uint64_t off)
{
	struct btsdec_note_loc loc = { off, h->descsz };

	if (h->type == NT_FPREGSET && c->regs_thread >= 0 &&
	    !c->threads[c->regs_thread].fpregset.size)
		c->threads[c->regs_thread].fpregset = loc;
	else if (h->type == NT_X86_XSTATE && c->regs_thread >= 0 &&
		 !c->threads[c->regs_thread].xstate.size)
		c->threads[c->regs_thread].xstate = loc;
	else if (h->type == NT_AUXV && !c->auxv.size)
		c->auxv = loc;
	else if (h->type == NT_FILE && !c->file.size)
		c->file = loc;
	else if (h->type == NT_PRPSINFO && !c->psinfo.size)
		c->psinfo = loc;
}

/* The notes of one PT_NOTE segment, one at a time: only a note's head (its
 * header and a short owner name) is read first, then what we use of it, so
 * a large trace note is never held (issue 16). */
static int walk_notes(struct btsdec_core *c, const GElf_Phdr *ph)
{
	uint8_t head[12 + 12];	/* Elf64_Nhdr and the owner names we look for */
	struct btsdec_elf_note_head h;
	struct btsdec_elf_note n;
	struct btsdec_err err;
	uint64_t off = 0, len = ph->p_filesz, at;
	int ret = 0;

	if (ph->p_offset > c->file_size || len > c->file_size - ph->p_offset)
		return -EIO;	/* note segment beyond end of file */
	while (!ret && len - off >= 12) {
		size_t got = len - off < sizeof(head) ? len - off : sizeof(head);

		at = ph->p_offset + off;
		if (pread(c->fd, head, got, at) != (ssize_t)got)
			return -EIO;
		if (btsdec_elf_note_head(head, len - off, off, &h, &err))
			/* sizes run off the segment: nothing after is safe */
			return add_reject(c, at,
					  "malformed note header; the notes after it are unreadable");
		/* names up to 12 bytes are in head (h checked they fit) */
		n = (struct btsdec_elf_note){ .namesz = h.namesz, .name = head + 12 };
		if (h.namesz <= 12 && btsdec_elf_note_owner(&n, "CORE", sizeof("CORE")) &&
		    (h.type == NT_PRSTATUS || h.type == NT_SIGINFO))
			ret = on_core_note(c, &h, at + h.desc_off);
		else if (h.namesz <= 12 && btsdec_elf_note_owner(&n, "CORE", sizeof("CORE")))
			on_served_note(c, &h, at + h.desc_off);
		else if (h.namesz <= 12 && h.type == NT_X86_XSTATE &&
			 btsdec_elf_note_owner(&n, "LINUX", sizeof("LINUX")))
			on_served_note(c, &h, at + h.desc_off);
		else if (h.namesz <= 12 &&
			 btsdec_elf_note_owner(&n, BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ))
			ret = on_trace(c, h.type, at + h.desc_off, h.descsz);
		off += h.next;
	}
	return ret;
}

/* A kernel dump given as a core: makedumpfile's forms start with these. */
static bool is_kernel_dump(const struct btsdec_core *c)
{
	char sig[12];

	return pread(c->fd, sig, sizeof(sig), 0) == (ssize_t)sizeof(sig) &&
	       (!memcmp(sig, "KDUMP   ", 8) || !memcmp(sig, "makedumpfile", 12));
}

static int check_header(struct btsdec_core *c, struct btsdec_err *err)
{
	GElf_Ehdr eh;

	if (elf_kind(c->elf) != ELF_K_ELF && is_kernel_dump(c))
		return btsdec_fail(err, -ENOEXEC, "%s: a kernel dump (makedumpfile), not a "
				   "process core: read it with `btsdump vmcore %s`", c->path,
				   c->path);
	if (elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh))
		return btsdec_fail(err, -ENOEXEC, "%s: not an ELF file", c->path);
	if (eh.e_type != ET_CORE)
		return btsdec_fail(err, -ENOEXEC, "%s: not a core file (ELF type %u)",
				   c->path, eh.e_type);
	if (gelf_getclass(c->elf) != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return btsdec_fail(err, -ENOEXEC,
				   "%s: not an x86-64 little-endian core", c->path);
	return 0;
}

static int cmp_load(const void *a, const void *b)
{
	const struct load_seg *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->phdr < y->phdr ? -1 : x->phdr > y->phdr;
}

/* The PT_LOAD segments, kept sorted by address for btsdec_core_read and
 * btsdec_core_mapped (a core has one or two per mapping: a 50 k-thread
 * process has 100 k of them). */
static int add_load(struct btsdec_core *c, const GElf_Phdr *ph, size_t i, size_t *cap)
{
	if (ph->p_type != PT_LOAD || (!ph->p_memsz && !ph->p_filesz))
		return 0;
	if (btsdec_grow(&c->loads, cap, c->nr_loads + 1))
		return -ENOMEM;
	c->loads[c->nr_loads++] = (struct load_seg){
		.vaddr = ph->p_vaddr, .memsz = ph->p_memsz,
		.filesz = ph->p_filesz,
		.offset = ph->p_offset, .phdr = i, .flags = ph->p_flags,
	};
	return 0;
}

static int read_notes(struct btsdec_core *c, struct btsdec_err *err)
{
	size_t nph, i, seen = 0, cap_loads = 0;
	GElf_Phdr ph;
	int ret;

	if (elf_getphdrnum(c->elf, &nph))
		return btsdec_fail(err, -EIO, "%s: program headers: %s", c->path,
				   elf_errmsg(-1));
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(c->elf, i, &ph))
			return btsdec_fail(err, -EIO, "%s: program header %zu: %s",
					   c->path, i, elf_errmsg(-1));
		if (ph.p_offset + ph.p_filesz >= ph.p_offset &&
		    ph.p_offset + ph.p_filesz > c->want_size)
			c->want_size = ph.p_offset + ph.p_filesz;
		if (add_load(c, &ph, i, &cap_loads))
			return btsdec_fail(err, -ENOMEM, "out of memory");
		if (ph.p_type != PT_NOTE)
			continue;
		ret = walk_notes(c, &ph);
		if (ret == -ENOMEM)
			return btsdec_fail(err, ret, "out of memory");
		if (ret)
			return btsdec_fail(err, ret,
				"%s: note segment at 0x%llx lies beyond the end of the file (truncated core?)",
				c->path, (unsigned long long)ph.p_offset);
		seen++;
	}
	if (!seen)
		return btsdec_fail(err, -ENOEXEC, "%s: core has no note segment",
				   c->path);
	btsdec_index_free(&c->by_tid);	/* positions change now */
	faulting_first(c);
	if (c->nr_loads)
		qsort(c->loads, c->nr_loads, sizeof(*c->loads), cmp_load);
	return 0;
}

int btsdec_core_open(const char *path, struct btsdec_core **out,
		     struct btsdec_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return btsdec_fail(err, -errno, "%s: %m", path);
	return btsdec_core_open_fd(fd, path, out, err);
}

int btsdec_core_open_fd(int fd, const char *name, struct btsdec_core **out,
			struct btsdec_err *err)
{
	struct btsdec_core *c;
	struct stat st;
	int ret;

	elf_version(EV_CURRENT);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(name))) {
		free(c);
		close(fd);
		return btsdec_fail(err, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	c->last_prstatus = -1;
	c->win = btsdec_recwin_new();
	if (!c->win) {
		ret = btsdec_fail(err, -ENOMEM, "out of memory");
		goto err_free;
	}
	c->regs_thread = -1;
	if (fstat(c->fd, &st) || !S_ISREG(st.st_mode)) {
		ret = btsdec_fail(err, -EINVAL, "%s: not a regular file", name);
		goto err_free;
	}
	c->file_size = st.st_size;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf) {
		ret = btsdec_fail(err, -ENOEXEC, "%s: elf_begin: %s", name,
				  elf_errmsg(-1));
		goto err_free;
	}
	ret = check_header(c, err);
	if (!ret)
		ret = read_notes(c, err);
	if (ret)
		goto err_free;
	*out = c;
	return 0;
err_free:
	btsdec_core_close(c);
	return ret;
}

void btsdec_core_close(struct btsdec_core *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_threads; i++)
		btsdec_trace_free(&c->threads[i].trace);
	for (size_t i = 0; i < c->nr_rejects; i++)
		free(c->rejects[i]);
	free(c->rejects);
	free(c->threads);
	btsdec_index_free(&c->by_tid);
	btsdec_recwin_free(c->win);
	free(c->loads);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c);
}

/* The segment that may hold addr: the last one starting at or below it,
 * which is the first match of the program headers when they do not
 * overlap (a kernel's or gdb's cores never do); NULL if none.  The caller
 * checks addr against the size it needs (p_memsz or p_filesz). */
static const struct load_seg *find_load(const struct btsdec_core *c, uint64_t addr)
{
	size_t n = btsdec_upper_bound(c->loads, c->nr_loads, sizeof(*c->loads), addr);

	return n ? &c->loads[n - 1] : NULL;
}

size_t btsdec_core_read(const struct btsdec_core *c, uint64_t addr, void *buf,
			size_t len)
{
	const struct load_seg *l = find_load(c, addr);
	uint64_t rel, avail;
	ssize_t got;

	if (!l || addr - l->vaddr >= l->filesz)
		return 0;
	rel = addr - l->vaddr;
	if (l->offset > c->file_size || rel >= c->file_size - l->offset)
		return 0;	/* truncated core */
	avail = l->filesz - rel;
	if (avail > c->file_size - l->offset - rel)
		avail = c->file_size - l->offset - rel;
	if (len > avail)
		len = avail;
	got = pread(c->fd, buf, len, l->offset + rel);
	return got > 0 ? (size_t)got : 0;
}

bool btsdec_core_mapped(const struct btsdec_core *c, uint64_t addr)
{
	const struct load_seg *l = find_load(c, addr);

	return l && addr - l->vaddr < l->memsz;
}

bool btsdec_core_segment(const struct btsdec_core *c, uint64_t addr, uint64_t *lo,
			 uint64_t *hi)
{
	const struct load_seg *l = find_load(c, addr);

	if (!l || addr - l->vaddr >= l->memsz)
		return false;
	*lo = l->vaddr;
	*hi = l->vaddr + l->memsz;
	return true;
}

bool btsdec_core_read_only(const struct btsdec_core *c, uint64_t addr, size_t len)
{
	const struct load_seg *l = find_load(c, addr);

	return l && len && addr - l->vaddr < l->memsz &&
	       len <= l->memsz - (addr - l->vaddr) && !(l->flags & PF_W);
}

const struct btsdec_note_loc *btsdec_core_note(const struct btsdec_core *c, uint32_t type)
{
	const struct btsdec_note_loc *l = type == NT_AUXV ? &c->auxv :
					  type == NT_FILE ? &c->file :
					  type == NT_PRPSINFO ? &c->psinfo : NULL;

	return l && l->size ? l : NULL;
}

ssize_t btsdec_core_note_read(const struct btsdec_core *c,
			      const struct btsdec_note_loc *loc, uint64_t off,
			      void *buf, size_t len)
{
	ssize_t got;

	if (!loc || off >= loc->size)
		return 0;
	if (len > loc->size - off)
		len = loc->size - off;
	got = pread(c->fd, buf, len, loc->off + off);
	return got < 0 ? -errno : got == (ssize_t)len ? got : -EIO;
}

bool btsdec_core_auxv(const struct btsdec_core *c, uint64_t type, uint64_t *val)
{
	const struct btsdec_note_loc *l = btsdec_core_note(c, NT_AUXV);
	uint64_t e[2];

	for (uint64_t off = 0; l && off + sizeof(e) <= l->size; off += sizeof(e)) {
		if (btsdec_core_note_read(c, l, off, e, sizeof(e)) != sizeof(e) ||
		    e[0] == AT_NULL)
			return false;
		if (e[0] == type) {
			*val = e[1];
			return true;
		}
	}
	return false;
}
