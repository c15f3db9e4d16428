// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Vmcores without vmlinux: the ELF form (/proc/vmcore, makedumpfile -E) and
 * makedumpfile's kdump-compressed form (pages raw or compressed with zlib,
 * lzo, snappy or zstd: makedumpfile -c, -l, -p, -z).  Reads VMCOREINFO, the CPU trace
 * notes (NT_BTSCRASH_CPU) and physical memory, then finds every CPU's full
 * ring through VMCOREINFO alone (docs/format.md §3-4); the notes, table and
 * rings are decoded by format.c.  Hostile input: every offset, size and
 * count is checked against the file before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "btsdec.h"

#define KDUMP_SIG		"KDUMP   "
#define FLAT_SIG		"makedumpfile"
#define KDH_BLOCK_SIZE		428	/* struct disk_dump_header offsets */
#define KDH_SUB_HDR_SIZE	432
#define KDH_BITMAP_BLOCKS	436
#define KDS_OFF_VMCOREINFO	32	/* struct kdump_sub_header offsets */
#define KDS_OFF_NOTE		48
#define PD_SIZE			24	/* struct page_desc */
#define PD_ZLIB			0x1
#define PD_LZO			0x2
#define PD_SNAPPY		0x4
#define PD_ZSTD			0x20
#define PD_COMPRESSED		(PD_ZLIB | PD_LZO | PD_SNAPPY | PD_ZSTD)
#define MAX_NOTES_BYTES		(16u << 20)

struct load {			/* ELF: one PT_LOAD; pa first (btsdec_upper_bound) */
	uint64_t pa, off, filesz;
};

/* makedumpfile -F: the dump as a stream of (offset, size, data) segments */
struct flat_seg {
	uint64_t dump_off, file_off, size;
};

/* The segments by dump offset, for btsdec_upper_bound (keys: dump_off, and
 * end_max, the furthest end of this one and all before it in this order). */
struct flat_ix {
	uint64_t dump_off, end_max;
	size_t seg;		/* in vc->flat: file order */
};

#define FLAT_READ_SEGS	32	/* segments a read applies by the index */

struct btsdec_vmcore {
	int fd;
	uint64_t size;		/* of the dump (reassembled, when flattened) */
	uint64_t stored;	/* bytes the file holds of it (a flattened
				 * stream's segments may leave holes) */
	struct flat_seg *flat;	/* flattened: the segments, in file order */
	struct flat_ix *flat_ix;	/* the same by dump offset */
	size_t nr_flat;
	bool kdump;
	char *info;		/* VMCOREINFO text, NUL-terminated */
	struct btsdec_trace *notes;	/* CPU notes */
	size_t nr_notes, cap_notes;
	char **rejects;		/* why malformed CPU notes were skipped */
	size_t nr_rejects, cap_rejects;
	/* ELF */
	Elf *elf;
	struct load *loads;
	size_t nr_loads;
	bool loads_sorted;	/* each starts at or after the ones before end:
				 * binary-searched, else all looked at */
	/* kdump-compressed */
	uint32_t block;
	uint64_t bitmap2_off, bitmap_len, pd_off;
	uint8_t *bitmap2;
	uint64_t *rank;		/* set bits of bitmap2 before each 64-bit word */
	uint64_t dumpable;
};

static int add_reject(struct btsdec_vmcore *vc, const char *msg)
{
	if (btsdec_grow(&vc->rejects, &vc->cap_rejects, vc->nr_rejects + 1))
		return -ENOMEM;
	vc->rejects[vc->nr_rejects] = strdup(msg);
	if (!vc->rejects[vc->nr_rejects])
		return -ENOMEM;
	vc->nr_rejects++;
	return 0;
}

size_t btsdec_vmcore_nr_rejects(const struct btsdec_vmcore *vc)
{
	return vc->nr_rejects;
}

const char *btsdec_vmcore_reject(const struct btsdec_vmcore *vc, size_t i)
{
	return i < vc->nr_rejects ? vc->rejects[i] : NULL;
}

static int pread_file(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n <= 0)
			return -EIO;
		done += n;
	}
	return 0;
}

/*
 * Flattened: what `makedumpfile -R` would have written at [off, off+len):
 * every segment over it, in file order, so a later one wins where two
 * overlap; bytes no segment wrote read as 0 (a hole of the sparse file).
 */
static int flat_apply(const struct btsdec_vmcore *vc, const struct flat_seg *s,
		      void *buf, size_t len, uint64_t off)
{
	uint64_t lo = s->dump_off > off ? s->dump_off : off;
	uint64_t hi = s->dump_off + s->size < off + len ? s->dump_off + s->size : off + len;

	if (lo < hi && pread_file(vc->fd, (char *)buf + (lo - off), hi - lo,
				  s->file_off + (lo - s->dump_off)))
		return -EIO;
	return 0;
}

/* The segments over [off, off + len) (len > 0), in file order, found
 * through the index: among those from the first whose end_max passes off
 * to the last that starts before off + len.  FLAT_READ_SEGS + 1 when there
 * are more (a read then looks at every segment). */
static size_t flat_over(const struct btsdec_vmcore *vc, uint64_t off, size_t len,
			size_t seg[FLAT_READ_SEGS])
{
	const struct flat_ix *x = vc->flat_ix;
	size_t i = btsdec_upper_bound(&x->end_max, vc->nr_flat, sizeof(*x), off);
	size_t end = btsdec_upper_bound(x, vc->nr_flat, sizeof(*x), off + len - 1), n = 0, j;

	for (; i < end; i++) {
		if (vc->flat[x[i].seg].dump_off + vc->flat[x[i].seg].size <= off)
			continue;	/* ends before off (an earlier one went further) */
		if (n == FLAT_READ_SEGS)
			return FLAT_READ_SEGS + 1;
		for (j = n++; j > 0 && seg[j - 1] > x[i].seg; j--)	/* file order */
			seg[j] = seg[j - 1];
		seg[j] = x[i].seg;
	}
	return n;
}

static int flat_read(const struct btsdec_vmcore *vc, void *buf, size_t len, uint64_t off)
{
	size_t seg[FLAT_READ_SEGS], n = len ? flat_over(vc, off, len, seg) : 0;

	memset(buf, 0, len);
	if (n <= FLAT_READ_SEGS) {
		for (size_t i = 0; i < n; i++)
			if (flat_apply(vc, &vc->flat[seg[i]], buf, len, off))
				return -EIO;
		return 0;
	}
	for (size_t i = 0; i < vc->nr_flat; i++)
		if (flat_apply(vc, &vc->flat[i], buf, len, off))
			return -EIO;
	return 0;
}

static int pread_all(const struct btsdec_vmcore *vc, void *buf, size_t len, uint64_t off)
{
	if (off > vc->size || len > vc->size - off)
		return -EIO;
	if (vc->flat)
		return flat_read(vc, buf, len, off);
	return pread_file(vc->fd, buf, len, off);
}

/* One NT_BTSCRASH_CPU note: kept when valid, else its reason listed. */
static int take_cpu_note(struct btsdec_vmcore *vc, const struct btsdec_elf_note *n)
{
	struct btsdec_trace t;
	struct btsdec_err e;
	int ret;

	ret = btsdec_note_parse(n->type, n->desc, n->descsz, &t, &e);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return add_reject(vc, e.msg);
	if (btsdec_grow(&vc->notes, &vc->cap_notes, vc->nr_notes + 1)) {
		btsdec_trace_free(&t);
		return -ENOMEM;
	}
	vc->notes[vc->nr_notes++] = t;
	return 0;
}

/* Walks a buffer of ELF notes; keeps VMCOREINFO and the CPU trace notes. */
static int take_notes(struct btsdec_vmcore *vc, const uint8_t *p, size_t len,
		      struct btsdec_err *err)
{
	struct btsdec_elf_note n;
	size_t off = 0;
	int more;

	while ((more = btsdec_elf_note_next(p, len, &off, &n, err)) > 0) {
		if (!n.namesz && !n.descsz)
			break;	/* the zero note that ends the crash notes */
		if (btsdec_elf_note_owner(&n, "VMCOREINFO", sizeof("VMCOREINFO"))) {
			if (!vc->info && !(vc->info = strndup((const char *)n.desc, n.descsz)))
				return -ENOMEM;
		} else if (n.type == NT_BTSCRASH_CPU &&
			   btsdec_elf_note_owner(&n, BTS_CRASH_NOTE_NAME,
						 BTS_CRASH_NOTE_NAMESZ)) {
			int ret = take_cpu_note(vc, &n);

			if (ret)
				return ret;
		}
	}
	return more < 0 ? -EINVAL : 0;
}

static int open_elf(struct btsdec_vmcore *vc, struct btsdec_err *err)
{
	uint64_t loads_end = 0;
	size_t n, i;
	int ret;

	vc->loads_sorted = true;
	elf_version(EV_CURRENT);
	vc->elf = elf_begin(vc->fd, ELF_C_READ_MMAP, NULL);
	if (!vc->elf || elf_kind(vc->elf) != ELF_K_ELF || gelf_getclass(vc->elf) != ELFCLASS64 ||
	    elf_getphdrnum(vc->elf, &n))
		return btsdec_fail(err, -EINVAL, "not a 64-bit ELF vmcore: %s", elf_errmsg(-1));
	vc->loads = calloc(n ? n : 1, sizeof(*vc->loads));
	if (!vc->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(vc->elf, i, &ph))
			return btsdec_fail(err, -EINVAL, "unreadable program header %zu", i);
		if (ph.p_type == PT_LOAD && ph.p_filesz) {
			if (ph.p_offset > vc->size || ph.p_filesz > vc->size - ph.p_offset)
				ph.p_filesz = ph.p_offset > vc->size ? 0 : vc->size - ph.p_offset;
			vc->loads_sorted &= ph.p_paddr >= loads_end &&
					    ph.p_paddr + ph.p_filesz > ph.p_paddr;
			if (ph.p_paddr + ph.p_filesz > loads_end)
				loads_end = ph.p_paddr + ph.p_filesz;
			vc->loads[vc->nr_loads++] = (struct load){ ph.p_paddr, ph.p_offset,
								   ph.p_filesz };
		} else if (ph.p_type == PT_NOTE) {
			uint8_t *buf;

			if (ph.p_filesz > MAX_NOTES_BYTES || ph.p_offset > vc->size ||
			    ph.p_filesz > vc->size - ph.p_offset)
				return btsdec_fail(err, -EINVAL, "note segment %zu out of the file", i);
			buf = malloc(ph.p_filesz ? ph.p_filesz : 1);
			if (!buf)
				return -ENOMEM;
			ret = pread_all(vc, buf, ph.p_filesz, ph.p_offset);
			if (!ret)
				ret = take_notes(vc, buf, ph.p_filesz, err);
			free(buf);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int open_kdump(struct btsdec_vmcore *vc, struct btsdec_err *err)
{
	uint8_t hdr[512], sub[128];
	int32_t block, sub_blocks;
	uint32_t bitmap_blocks;
	uint64_t off_info, size_info, off_note, size_note, words, i, acc = 0;
	uint8_t *buf;
	int ret;

	if (pread_all(vc, hdr, sizeof(hdr), 0))
		return btsdec_fail(err, -EINVAL, "kdump header cut short");
	memcpy(&block, hdr + KDH_BLOCK_SIZE, 4);
	memcpy(&sub_blocks, hdr + KDH_SUB_HDR_SIZE, 4);
	memcpy(&bitmap_blocks, hdr + KDH_BITMAP_BLOCKS, 4);
	if (block < 512 || block > (1 << 20) || (block & (block - 1)) || sub_blocks < 1 ||
	    sub_blocks > 1024 || !bitmap_blocks || bitmap_blocks > (1u << 24))
		return btsdec_fail(err, -EINVAL, "kdump header: block size %d, sub-header %d "
				   "blocks, bitmap %u blocks: not a dump this reader trusts",
				   block, sub_blocks, bitmap_blocks);
	vc->block = block;
	if (pread_all(vc, sub, sizeof(sub), block))
		return btsdec_fail(err, -EINVAL, "kdump sub-header cut short");
	memcpy(&off_info, sub + KDS_OFF_VMCOREINFO, 8);
	memcpy(&size_info, sub + KDS_OFF_VMCOREINFO + 8, 8);
	memcpy(&off_note, sub + KDS_OFF_NOTE, 8);
	memcpy(&size_note, sub + KDS_OFF_NOTE + 8, 8);
	if (size_note > MAX_NOTES_BYTES || size_info > MAX_NOTES_BYTES)
		return btsdec_fail(err, -EINVAL, "kdump sub-header: notes of %" PRIu64
				   " bytes", size_note);
	buf = malloc(size_note + 1);
	if (!buf)
		return -ENOMEM;
	ret = pread_all(vc, buf, size_note, off_note);
	if (ret)
		ret = btsdec_fail(err, -EINVAL, "kdump notes out of the file");
	else
		ret = take_notes(vc, buf, size_note, err);
	free(buf);
	if (ret)
		return ret;
	if (!vc->info && size_info) {	/* older makedumpfile: only the separate copy */
		vc->info = calloc(1, size_info + 1);
		if (!vc->info)
			return -ENOMEM;
		if (pread_all(vc, vc->info, size_info, off_info))
			return btsdec_fail(err, -EINVAL, "VMCOREINFO out of the file");
	}
	/* bitmap1 (in memory) then bitmap2 (in the dump), half each */
	vc->bitmap_len = (uint64_t)bitmap_blocks * block / 2;
	vc->bitmap2_off = (uint64_t)block * (1 + sub_blocks) + vc->bitmap_len;
	vc->pd_off = (uint64_t)block * (1 + sub_blocks + bitmap_blocks);
	/* the bitmap is read whole: it must be in the file, not in a
	 * flattened stream's holes (a 20 KB stream claiming a dump of 2^44
	 * bytes made this allocate terabytes: fuzz-vmcore) */
	if (vc->pd_off > vc->size || vc->bitmap_len > vc->stored)
		return btsdec_fail(err, -EINVAL, "kdump bitmaps past the end of the file "
				   "(truncated dump?)");
	words = (vc->bitmap_len + 7) / 8;
	vc->bitmap2 = calloc(words, 8);
	vc->rank = calloc(words + 1, sizeof(uint64_t));
	if (!vc->bitmap2 || !vc->rank)
		return -ENOMEM;
	if (pread_all(vc, vc->bitmap2, vc->bitmap_len, vc->bitmap2_off))
		return btsdec_fail(err, -EINVAL, "kdump bitmap cut short");
	for (i = 0; i < words; i++) {
		uint64_t w;

		memcpy(&w, vc->bitmap2 + i * 8, 8);
		vc->rank[i] = acc;
		acc += __builtin_popcountll(w);
	}
	vc->rank[words] = acc;
	vc->dumpable = acc;
	return 0;
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * makedumpfile's flattened format (-F, what it writes to a pipe): a
 * 4096-byte header (signature, type 1, version 1; big-endian), then
 * segments of {be64 offset, be64 size} and size bytes of data, ended by
 * offset = size = -1.  Indexed once, by dump offset; pread_all()
 * reassembles on the fly from the few segments over each read, found by
 * binary search (flat_over), in file order so a later one wins.
 */
#define FLAT_HDR_SIZE		4096
#define FLAT_MAX_SEGS		(1u << 24)

static int cmp_flat_ix(const void *a, const void *b)
{
	const struct flat_ix *x = a, *y = b;

	if (x->dump_off != y->dump_off)
		return x->dump_off < y->dump_off ? -1 : 1;
	return x->seg < y->seg ? -1 : x->seg > y->seg;
}

/* vc->flat_ix: the segments by dump offset, with end_max. */
static int flat_index(struct btsdec_vmcore *vc)
{
	uint64_t max = 0;

	vc->flat_ix = calloc(vc->nr_flat, sizeof(*vc->flat_ix));
	if (!vc->flat_ix)
		return -ENOMEM;
	for (size_t i = 0; i < vc->nr_flat; i++)
		vc->flat_ix[i] = (struct flat_ix){ .dump_off = vc->flat[i].dump_off, .seg = i };
	qsort(vc->flat_ix, vc->nr_flat, sizeof(*vc->flat_ix), cmp_flat_ix);
	for (size_t i = 0; i < vc->nr_flat; i++) {
		const struct flat_seg *s = &vc->flat[vc->flat_ix[i].seg];

		if (s->dump_off + s->size > max)
			max = s->dump_off + s->size;
		vc->flat_ix[i].end_max = max;
	}
	return 0;
}

static int open_flat(struct btsdec_vmcore *vc, const char *path, struct btsdec_err *err)
{
	uint64_t pos = FLAT_HDR_SIZE, file = vc->size, end = 0;
	uint8_t h[16];
	size_t cap = 0;

	if (pread_file(vc->fd, h, 16, 16) || be64(h) != 1 || be64(h + 8) != 1)
		return btsdec_fail(err, -EINVAL, "%s: flattened dump: unknown header "
				   "(type or version not 1)", path);
	for (;;) {
		uint64_t off, size;

		if (pos > file || file - pos < 16 || pread_file(vc->fd, h, 16, pos))
			return btsdec_fail(err, -EIO, "%s: flattened dump cut short at %#" PRIx64
					   " (no end marker)", path, pos);
		off = be64(h);
		size = be64(h + 8);
		pos += 16;
		if (off == UINT64_MAX && size == UINT64_MAX)
			break;
		if (!(off >> 62) && !(size >> 62) && size > file - pos)
			return btsdec_fail(err, -EIO, "%s: flattened dump cut short: the segment "
					   "at %#" PRIx64 " runs past the end", path, pos - 16);
		if (off >> 62 || size >> 62 || vc->nr_flat >= FLAT_MAX_SEGS)
			return btsdec_fail(err, -EINVAL, "%s: flattened dump: bad segment at "
					   "%#" PRIx64 " (offset %#" PRIx64 ", size %#" PRIx64 ")",
					   path, pos - 16, off, size);
		if (btsdec_grow(&vc->flat, &cap, vc->nr_flat + 1))
			return -ENOMEM;
		vc->flat[vc->nr_flat++] = (struct flat_seg){ off, pos, size };
		if (off + size > end)
			end = off + size;
		pos += size;
	}
	vc->size = end;
	vc->stored = pos;
	if (!vc->flat)
		return btsdec_fail(err, -EINVAL, "%s: flattened dump without data", path);
	return flat_index(vc);
}

/*
 * A header that did not parse: the message gets the file's name, and a
 * part cut short or out of the file says what most likely happened.
 */
static void vm_open_failed(const char *path, struct btsdec_err *err)
{
	struct btsdec_err e;

	if (!err)
		return;
	e = *err;
	btsdec_fail(err, 0, "%s: %s%s", path, e.msg,
		    strstr(e.msg, "cut short") || strstr(e.msg, "out of the file") ||
		    strstr(e.msg, "past the end") ? " (a truncated dump?)" : "");
}

int btsdec_vmcore_open(const char *path, struct btsdec_vmcore **out,
		       struct btsdec_err *err)
{
	struct btsdec_vmcore *vc = calloc(1, sizeof(*vc));
	unsigned char magic[16] = { 0 };
	struct stat st;
	int ret;

	if (!vc)
		return -ENOMEM;
	vc->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (vc->fd < 0 || fstat(vc->fd, &st)) {
		ret = btsdec_fail(err, -errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	vc->size = st.st_size;
	vc->stored = st.st_size;
	if (pread(vc->fd, magic, sizeof(magic), 0) < 8) {
		ret = btsdec_fail(err, -EINVAL, "%s: too short for a vmcore", path);
		goto fail;
	}
	if (!memcmp(magic, FLAT_SIG, strlen(FLAT_SIG))) {
		ret = open_flat(vc, path, err);
		if (ret)
			goto fail;
		if (pread_all(vc, magic, sizeof(magic), 0) || memcmp(magic, KDUMP_SIG, 8)) {
			ret = btsdec_fail(err, -EINVAL, "%s: a flattened dump (makedumpfile -F) "
					  "of an ELF vmcore: reassemble it first with "
					  "makedumpfile -R", path);
			goto fail;
		}
	}
	if (!memcmp(magic, KDUMP_SIG, 8)) {
		vc->kdump = true;
		ret = open_kdump(vc, err);
	} else if (!memcmp(magic, ELFMAG, SELFMAG)) {
		ret = open_elf(vc, err);
	} else {
		ret = btsdec_fail(err, -EINVAL, "%s: neither an ELF nor a kdump-compressed "
				  "vmcore", path);
		goto fail;
	}
	if (ret) {
		vm_open_failed(path, err);
		goto fail;
	}
	if (!vc->info) {
		ret = btsdec_fail(err, -EINVAL, "%s: no VMCOREINFO: not a kernel dump", path);
		goto fail;
	}
	*out = vc;
	return 0;
fail:
	btsdec_vmcore_close(vc);
	return ret;
}

void btsdec_vmcore_close(struct btsdec_vmcore *vc)
{
	size_t i;

	if (!vc)
		return;
	for (i = 0; i < vc->nr_notes; i++)
		btsdec_trace_free(&vc->notes[i]);
	free(vc->notes);
	for (i = 0; i < vc->nr_rejects; i++)
		free(vc->rejects[i]);
	free(vc->rejects);
	if (vc->elf)
		elf_end(vc->elf);
	if (vc->fd >= 0)
		close(vc->fd);
	free(vc->loads);
	free(vc->flat);
	free(vc->flat_ix);
	free(vc->bitmap2);
	free(vc->rank);
	free(vc->info);
	free(vc);
}

bool btsdec_vmcore_is_kdump(const struct btsdec_vmcore *vc)
{
	return vc->kdump;
}

bool btsdec_vmcore_info(const struct btsdec_vmcore *vc, const char *key,
			char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p = vc->info;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p) : strlen(p);

		if (l > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			snprintf(buf, len, "%.*s", (int)(l - klen - 1), p + klen + 1);
			return true;
		}
		p = eol ? eol + 1 : NULL;
	}
	return false;
}

size_t btsdec_vmcore_nr_cpu_notes(const struct btsdec_vmcore *vc)
{
	return vc->nr_notes;
}

const struct btsdec_trace *btsdec_vmcore_cpu_note(const struct btsdec_vmcore *vc, size_t i)
{
	return i < vc->nr_notes ? &vc->notes[i] : NULL;
}

/* The codec of a compressed page's descriptor flags (makedumpfile's
 * DUMP_DH_COMPRESSED_*: -c zlib, -l lzo, -p snappy, -z zstd). */
static const char *page_codec(uint32_t flags)
{
	return flags & PD_ZLIB ? "zlib" : flags & PD_LZO ? "lzo" :
	       flags & PD_SNAPPY ? "snappy" : "zstd";
}

/* Decompresses one page of `block` bytes; 0, or -EIO when in does not
 * decompress to exactly one page. */
static int decompress_page(uint32_t flags, const uint8_t *in, size_t in_len,
			   uint8_t *page, size_t block)
{
	if (flags & PD_ZLIB) {
		uLongf out = block;

		return uncompress(page, &out, in, in_len) == Z_OK && out == block ? 0 : -EIO;
	}
	if (flags & PD_LZO) {
		lzo_uint out = block;

		return lzo_init() == LZO_E_OK &&	/* a few checks, no state */
		       lzo1x_decompress_safe(in, in_len, page, &out, NULL) == LZO_E_OK &&
		       out == block ? 0 : -EIO;
	}
	if (flags & PD_SNAPPY) {
		size_t out = block;

		return snappy_uncompressed_length((const char *)in, in_len, &out) == SNAPPY_OK &&
		       out == block &&
		       snappy_uncompress((const char *)in, in_len, (char *)page, &out) == SNAPPY_OK &&
		       out == block ? 0 : -EIO;
	}
	{
		size_t out = ZSTD_decompress(page, block, in, in_len);

		return !ZSTD_isError(out) && out == block ? 0 : -EIO;
	}
}

/* One page (kdump): the pfn's descriptor, then raw or compressed data. */
static int read_kdump_page(struct btsdec_vmcore *vc, uint64_t pfn, uint8_t *page,
			   struct btsdec_err *err)
{
	uint64_t word = pfn / 64, idx, off;
	uint32_t size, flags;
	uint8_t pd[PD_SIZE];
	uint64_t w;

	if (pfn / 8 >= vc->bitmap_len)
		return btsdec_fail(err, -ENOENT, "page %#" PRIx64 " beyond the dump", pfn);
	memcpy(&w, vc->bitmap2 + word * 8, 8);
	if (!(w >> (pfn % 64) & 1))
		return btsdec_fail(err, -ENOENT, "page %#" PRIx64 " not in the dump "
				   "(excluded by the dump level, or filtered)", pfn);
	idx = vc->rank[word] + __builtin_popcountll(w & ((1ULL << (pfn % 64)) - 1));
	if (pread_all(vc, pd, sizeof(pd), vc->pd_off + idx * PD_SIZE))
		return btsdec_fail(err, -EIO, "page %#" PRIx64 ": descriptor past the end "
				   "(truncated dump)", pfn);
	memcpy(&off, pd, 8);
	memcpy(&size, pd + 8, 4);
	memcpy(&flags, pd + 12, 4);
	if (size > vc->block || !size)
		return btsdec_fail(err, -EIO, "page %#" PRIx64 ": bad size %u", pfn, size);
	if (flags & PD_COMPRESSED) {
		uint8_t *tmp = malloc(size);
		int ret;

		if (!tmp)
			return -ENOMEM;
		if (pread_all(vc, tmp, size, off)) {
			free(tmp);
			return btsdec_fail(err, -EIO, "page %#" PRIx64 " past the end "
					   "(truncated dump)", pfn);
		}
		ret = decompress_page(flags, tmp, size, page, vc->block);
		free(tmp);
		if (ret)
			return btsdec_fail(err, -EIO, "page %#" PRIx64 ": bad %s data", pfn,
					   page_codec(flags));
		return 0;
	}
	if (size != vc->block)
		return btsdec_fail(err, -EIO, "page %#" PRIx64 ": %u bytes, uncompressed", pfn, size);
	if (pread_all(vc, page, size, off))
		return btsdec_fail(err, -EIO, "page %#" PRIx64 " past the end (truncated dump)", pfn);
	return 0;
}

/* The PT_LOAD holding pa (the last one, if several do), or NULL. */
static const struct load *find_load(const struct btsdec_vmcore *vc, uint64_t pa)
{
	const struct load *l = NULL;
	size_t i;

	if (vc->loads_sorted) {
		i = btsdec_upper_bound(vc->loads, vc->nr_loads, sizeof(*vc->loads), pa);
		l = i ? &vc->loads[i - 1] : NULL;
		return l && pa - l->pa < l->filesz ? l : NULL;
	}
	for (i = 0; i < vc->nr_loads; i++)
		if (pa >= vc->loads[i].pa && pa - vc->loads[i].pa < vc->loads[i].filesz)
			l = &vc->loads[i];
	return l;
}

int btsdec_vmcore_read_phys(struct btsdec_vmcore *vc, uint64_t pa, void *buf,
			    size_t len, struct btsdec_err *err)
{
	uint8_t *out = buf;

	if (vc->kdump) {
		uint8_t *page = malloc(vc->block);
		int ret = 0;

		if (!page)
			return -ENOMEM;
		while (len && !ret) {
			uint64_t in = pa % vc->block;
			size_t n = vc->block - in < len ? vc->block - in : len;

			ret = read_kdump_page(vc, pa / vc->block, page, err);
			if (!ret) {
				memcpy(out, page + in, n);
				out += n, pa += n, len -= n;
			}
		}
		free(page);
		return ret;
	}
	while (len) {
		const struct load *l = find_load(vc, pa);
		size_t n;

		if (!l)
			return btsdec_fail(err, -ENOENT, "physical %#" PRIx64 " not in the dump",
					   pa);
		n = l->filesz - (pa - l->pa) < len ? l->filesz - (pa - l->pa) : len;
		if (pread_all(vc, out, n, l->off + (pa - l->pa)))
			return btsdec_fail(err, -EIO, "physical %#" PRIx64 " past the end "
					   "(truncated dump)", pa);
		out += n, pa += n, len -= n;
	}
	return 0;
}

/* Bytes of memory the dump holds: bounds what a ring can claim. */
static uint64_t dump_bytes(const struct btsdec_vmcore *vc)
{
	uint64_t sum = 0;
	size_t i;

	if (vc->kdump)
		return vc->dumpable * vc->block;
	for (i = 0; i < vc->nr_loads; i++)
		sum += vc->loads[i].filesz;
	return sum;
}

/* format.c's callbacks: physical memory and VMCOREINFO of this dump. */
static int read_phys_cb(void *ctx, uint64_t pa, void *buf, size_t len,
			struct btsdec_err *err)
{
	return btsdec_vmcore_read_phys(ctx, pa, buf, len, err);
}

static bool info_cb(void *ctx, const char *key, char *buf, size_t len)
{
	return btsdec_vmcore_info(ctx, key, buf, len);
}

/* One CPU's ring: descriptor at pa, checked, records ordered. */
static int read_cpu_ring(struct btsdec_vmcore *vc, const struct btsdec_ring_layout *l,
			 uint64_t pa, struct btsdec_cpu_ring *r)
{
	struct bts_crash_ring d;
	bool wrapped;
	int ret;

	ret = btsdec_ring_desc_load(read_phys_cb, vc, l, pa, &d, &r->err);
	if (!ret)
		ret = btsdec_ring_records(read_phys_cb, vc, &d, dump_bytes(vc),
					  &r->trace.recs, &r->trace.nr, &wrapped, &r->err);
	if (ret)
		return ret;
	r->trace.type = NT_BTSCRASH_CPU;
	r->trace.id = d.id;
	r->trace.capacity = d.capacity;
	r->trace.lost = d.lost;
	r->trace.nr_gaps = d.nr_gaps;
	r->trace.source = d.source;
	r->trace.flags = (wrapped ? BTS_NOTE_F_WRAPPED : 0) |
			 (d.flags & BTS_RING_F_LOST_EXACT ? BTS_NOTE_F_LOST_EXACT : 0);
	r->frozen = d.flags & BTS_RING_F_FROZEN;
	r->freeze_ts = d.freeze_ts;
	return 0;
}

int btsdec_vmcore_cpu_rings(struct btsdec_vmcore *vc, struct btsdec_cpu_ring **out,
			    size_t *nr, struct btsdec_err *err)
{
	struct btsdec_ring_layout l;
	struct btsdec_cpu_ring *rings;
	struct btsdec_table t;
	uint64_t table_pa;
	size_t n = 0;
	int ret;

	*out = NULL;
	*nr = 0;
	ret = btsdec_vmcoreinfo_rings(info_cb, vc, &table_pa, &l, err);
	if (!ret && !table_pa)
		ret = btsdec_fail(err, -ENOENT, "no BTS_CRASH_TABLE_PA in VMCOREINFO: per-CPU "
				  "rings were off (per-task rings: crash's `bts -t`)");
	/* the table's page missing is an unreadable table, not rings off */
	if (!ret && (ret = btsdec_table_load(read_phys_cb, vc, table_pa, &t, err)) == -ENOENT)
		ret = -EIO;
	if (ret)
		return ret;
	rings = calloc(t.nr_entries, sizeof(*rings));
	if (!rings) {
		btsdec_table_free(&t);
		return btsdec_fail(err, -ENOMEM, "out of memory for %u CPU rings",
				   t.nr_entries);
	}
	for (uint32_t i = 0; i < t.nr_entries; i++) {
		if (!t.entries[i])
			continue;
		rings[n].cpu = i;
		rings[n].panic = i == t.panic_cpu;
		rings[n].status = read_cpu_ring(vc, &l, t.entries[i], &rings[n]);
		n++;
	}
	btsdec_table_free(&t);
	*out = rings;
	*nr = n;
	return 0;
}

void btsdec_cpu_rings_free(struct btsdec_cpu_ring *r, size_t n)
{
	size_t i;

	for (i = 0; r && i < n; i++)
		btsdec_trace_free(&r[i].trace);
	free(r);
}
