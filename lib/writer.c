// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Adding trace notes (or any framed ELF notes) to an existing ELF core, for
 * fixtures, tools and test generators: the notes are appended to the first
 * PT_NOTE segment; everything after it in the file (segments, sections,
 * header tables) moves by whole pages so alignment holds.  Streams the core, never loads it whole; writes a
 * temporary file and renames it only when complete.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btsdec.h"

#define PAGE		4096ULL
#define MAX_ALIGN	(1ULL << 21)

struct layout {
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	size_t nsh;
	uint64_t size;		/* input file size */
	int note;		/* index of the PT_NOTE segment we grow */
	uint64_t end;		/* its end offset in the input */
	uint64_t next;		/* first offset in use after end */
	uint64_t align;		/* alignment a shift must keep */
};

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n == (ssize_t)len ? 0 : -EIO;
}

static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int load_tables(int fd, struct layout *l, struct btsdec_err *err)
{
	Elf64_Ehdr *e = &l->eh;

	if (read_at(fd, e, sizeof(*e), 0) || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_ident[EI_CLASS] != ELFCLASS64 || e->e_ident[EI_DATA] != ELFDATA2LSB ||
	    e->e_type != ET_CORE)
		return btsdec_fail(err, -ENOEXEC, "not a 64-bit little-endian ELF core");
	if (e->e_phentsize != sizeof(Elf64_Phdr) || e->e_phnum == 0 ||
	    e->e_phnum == PN_XNUM ||
	    !in_file(e->e_phoff, (uint64_t)e->e_phnum * sizeof(Elf64_Phdr), l->size))
		return btsdec_fail(err, -ENOEXEC, "program header table unusable");
	l->ph = calloc(e->e_phnum, sizeof(*l->ph));
	if (!l->ph || read_at(fd, l->ph, e->e_phnum * sizeof(*l->ph), e->e_phoff))
		return btsdec_fail(err, -EIO, "reading program headers failed");
	if (!e->e_shoff)
		return 0;
	l->nsh = e->e_shnum;
	if (e->e_shentsize != sizeof(Elf64_Shdr) || !l->nsh ||
	    !in_file(e->e_shoff, l->nsh * sizeof(Elf64_Shdr), l->size))
		return btsdec_fail(err, -ENOTSUP, "section header table unusable");
	l->sh = calloc(l->nsh, sizeof(*l->sh));
	if (!l->sh || read_at(fd, l->sh, l->nsh * sizeof(*l->sh), e->e_shoff))
		return btsdec_fail(err, -EIO, "reading section headers failed");
	return 0;
}

/* Notes the byte range [off, off+len) of one object of the file: it must
 * lie wholly before or after the note segment's end. */
static int account(struct layout *l, uint64_t off, uint64_t len, uint64_t align)
{
	if (!len)
		return 0;
	if (off < l->end && off + len > l->end)
		return -ENOTSUP;
	if (off >= l->end) {
		if (off < l->next)
			l->next = off;
		if (align > l->align && align <= MAX_ALIGN && !(align & (align - 1)))
			l->align = align;
	}
	return 0;
}

static bool is_note_section(const struct layout *l, const Elf64_Shdr *s)
{
	const Elf64_Phdr *n = &l->ph[l->note];

	return s->sh_type == SHT_NOTE && s->sh_offset == n->p_offset &&
	       s->sh_size == n->p_filesz;
}

static int plan(struct layout *l, struct btsdec_err *err)
{
	const Elf64_Ehdr *e = &l->eh;
	int ret = 0;
	size_t i;

	l->note = -1;
	for (i = 0; i < e->e_phnum && l->note < 0; i++)
		if (l->ph[i].p_type == PT_NOTE)
			l->note = i;
	if (l->note < 0)
		return btsdec_fail(err, -ENOEXEC, "core has no PT_NOTE segment");
	if (!in_file(l->ph[l->note].p_offset, l->ph[l->note].p_filesz, l->size))
		return btsdec_fail(err, -EIO, "note segment beyond end of file");
	l->end = l->ph[l->note].p_offset + l->ph[l->note].p_filesz;
	l->next = l->size;
	l->align = PAGE;
	for (i = 0; i < e->e_phnum && !ret; i++)
		if ((int)i != l->note)
			ret = account(l, l->ph[i].p_offset, l->ph[i].p_filesz,
				      l->ph[i].p_type == PT_LOAD ? l->ph[i].p_align : 0);
	for (i = 0; i < l->nsh && !ret; i++)
		if (l->sh[i].sh_type != SHT_NOBITS && !is_note_section(l, &l->sh[i]))
			ret = account(l, l->sh[i].sh_offset, l->sh[i].sh_size, 0);
	if (!ret)
		ret = account(l, e->e_phoff, e->e_phnum * sizeof(Elf64_Phdr), 0);
	if (!ret && l->nsh)
		ret = account(l, e->e_shoff, l->nsh * sizeof(Elf64_Shdr), 0);
	if (ret)
		return btsdec_fail(err, ret,
				   "an object straddles the end of the note segment");
	return 0;
}

static int copy_range(int in, uint64_t ioff, int out, uint64_t ooff, uint64_t len)
{
	static char buf[1 << 20];

	while (len) {
		size_t chunk = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t n = pread(in, buf, chunk, ioff);

		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		if (pwrite(out, buf, n, ooff) != n)
			return errno ? -errno : -EIO;
		ioff += n;
		ooff += n;
		len -= n;
	}
	return 0;
}

static uint64_t moved(const struct layout *l, uint64_t off, uint64_t delta)
{
	return off >= l->end ? off + delta : off;
}

/* Rewrites the header tables for the new layout. */
static void relocate(struct layout *l, uint64_t growth, uint64_t delta)
{
	Elf64_Phdr *n = &l->ph[l->note];
	size_t i;

	for (i = 0; i < l->nsh; i++) {
		if (is_note_section(l, &l->sh[i]))
			l->sh[i].sh_size += growth;
		else
			l->sh[i].sh_offset = moved(l, l->sh[i].sh_offset, delta);
	}
	for (i = 0; i < l->eh.e_phnum; i++)
		if ((int)i != l->note)
			l->ph[i].p_offset = moved(l, l->ph[i].p_offset, delta);
	n->p_filesz += growth;
	if (n->p_memsz)
		n->p_memsz += growth;
	l->eh.e_phoff = moved(l, l->eh.e_phoff, delta);
	if (l->nsh)
		l->eh.e_shoff = moved(l, l->eh.e_shoff, delta);
}

static int write_out(int in, int out, struct layout *l, const void *blob,
		     uint64_t growth)
{
	uint64_t hole = l->next - l->end, delta = 0;
	int ret;

	if (growth > hole)
		delta = (growth - hole + l->align - 1) / l->align * l->align;
	ret = copy_range(in, 0, out, 0, l->end);
	if (!ret && pwrite(out, blob, growth, l->end) != (ssize_t)growth)
		ret = -EIO;
	if (!ret)
		ret = copy_range(in, l->next, out, l->next + delta, l->size - l->next);
	if (!ret && ftruncate(out, l->size + delta))
		ret = -errno;
	relocate(l, growth, delta);
	if (!ret && (pwrite(out, &l->eh, sizeof(l->eh), 0) != sizeof(l->eh) ||
		     pwrite(out, l->ph, l->eh.e_phnum * sizeof(*l->ph), l->eh.e_phoff) !=
			     (ssize_t)(l->eh.e_phnum * sizeof(*l->ph)) ||
		     (l->nsh && pwrite(out, l->sh, l->nsh * sizeof(*l->sh), l->eh.e_shoff) !=
			     (ssize_t)(l->nsh * sizeof(*l->sh)))))
		ret = -EIO;
	if (!ret && fsync(out))
		ret = -errno;
	return ret;
}

/* The trace notes, framed one after the other, into one malloc'ed blob. */
static int build_blob(const struct btsdec_trace *t, size_t n, void **out,
		      uint64_t *len, struct btsdec_err *err)
{
	size_t total = 0, off = 0, i;
	uint8_t *blob;

	for (i = 0; i < n; i++) {
		size_t sz = btsdec_note_size(t[i].nr);

		if (!sz)
			return btsdec_fail(err, -EINVAL, "trace %zu too large", i);
		total += sz;
	}
	blob = calloc(1, total ? total : 1);
	if (!blob)
		return btsdec_fail(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		ssize_t w = btsdec_note_write(blob + off, total - off, &t[i], err);

		if (w < 0) {
			free(blob);
			return (int)w;
		}
		off += w;
	}
	*out = blob;
	*len = total;
	return 0;
}

/* The notes: framed ones (blob), or the traces, framed here once the core
 * is known to be one we can grow (so a bad core is said before a bad
 * trace). */
static int append(const char *in_path, const char *out_path,
		  const struct btsdec_trace *traces, size_t n, const void *notes,
		  uint64_t growth, struct btsdec_err *err)
{
	struct layout l = { 0 };
	char *tmp = NULL;
	void *blob = NULL;
	int in, out = -1, ret;
	struct stat st;

	in = open(in_path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return btsdec_fail(err, -errno, "%s: %m", in_path);
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		ret = btsdec_fail(err, -EINVAL, "%s: not a regular file", in_path);
		goto out;
	}
	l.size = st.st_size;
	ret = load_tables(in, &l, err);
	if (!ret)
		ret = plan(&l, err);
	if (!ret && traces)
		ret = build_blob(traces, n, &blob, &growth, err);
	if (ret)
		goto out;
	if (asprintf(&tmp, "%s.tmp.XXXXXX", out_path) < 0) {
		tmp = NULL;
		ret = btsdec_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	out = mkstemp(tmp);
	if (out < 0) {
		ret = btsdec_fail(err, -errno, "%s: %m", tmp);
		goto out;
	}
	ret = write_out(in, out, &l, traces ? blob : notes, growth);
	if (!ret && fchmod(out, st.st_mode & 0777))
		ret = -errno;
	if (ret) {
		btsdec_fail(err, ret, "writing %s: %s", tmp, strerror(-ret));
		unlink(tmp);
	} else if (rename(tmp, out_path)) {
		ret = btsdec_fail(err, -errno, "rename to %s: %m", out_path);
		unlink(tmp);
	}
out:
	if (out >= 0)
		close(out);
	close(in);
	free(tmp);
	free(blob);
	free(l.ph);
	free(l.sh);
	return ret;
}

int btsdec_core_add_notes(const char *in_path, const char *out_path,
			  const struct btsdec_trace *traces, size_t n,
			  struct btsdec_err *err)
{
	return append(in_path, out_path, traces, n, NULL, 0, err);
}

int btsdec_core_append_notes(const char *in_path, const char *out_path,
			     const void *notes, size_t len, struct btsdec_err *err)
{
	return append(in_path, out_path, NULL, 0, notes, len, err);
}
