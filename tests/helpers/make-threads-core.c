// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A core with many threads, for the scale test (test-threads.py) and the
 * thread-count benchmark (bench/threads-bench.sh): a copy of BASE (a real
 * core, so its memory, modules and the first thread's stack stay true) with
 * N threads more, each an NT_PRSTATUS (BASE's first one, pr_pid changed) and
 * a trace note, appended by the library's writer (btsdec_core_append_notes).
 * Usage: make-threads-core BASE N OUT.  Thread k (1..N) has tid
 * TID_BASE + k, capacity CAP_BASE + k and 1 + k % 4 records: a jump from
 * 0x100000 + 16k to 0x100008 + 16k, then BASE's first k % 4 records.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>

#include "btsdec.h"

#define TID_BASE	1000000
#define CAP_BASE	100000
#define PREFIX_MOD	4

/* BASE's first NT_PRSTATUS descriptor, copied into prs (sizeof *prs). */
static int base_prstatus(struct btsdec_core *core, struct elf_prstatus *prs)
{
	Elf *elf = btsdec_core_elf(core);
	size_t nph, off, name, desc;
	GElf_Nhdr nh;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &nph))
		return -EIO;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		for (off = 0; d && (off = gelf_getnote(d, off, &nh, &name, &desc));)
			if (nh.n_type == NT_PRSTATUS && nh.n_descsz == sizeof(*prs)) {
				memcpy(prs, (char *)d->d_buf + desc, sizeof(*prs));
				return 0;
			}
	}
	return -ENOENT;
}

/* One CORE NT_PRSTATUS note, framed; returns its size. */
static size_t frame_prstatus(uint8_t *p, const struct elf_prstatus *prs)
{
	Elf64_Nhdr h = { sizeof("CORE"), sizeof(*prs), NT_PRSTATUS };

	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), "CORE\0\0\0", 8);
	memcpy(p + sizeof(h) + 8, prs, sizeof(*prs));
	return sizeof(h) + 8 + ((sizeof(*prs) + 3) & ~(size_t)3);
}

/* Thread k's trace note, framed into p; returns its size or -errno. */
static ssize_t frame_trace(uint8_t *p, size_t room, const struct btsdec_trace *base,
			   unsigned long k)
{
	struct btsdec_record recs[PREFIX_MOD];
	struct btsdec_trace t = {
		.type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY,
		.id = TID_BASE + k, .capacity = CAP_BASE + k, .source = base->source,
		.nr = 1 + k % PREFIX_MOD, .recs = recs,
	};
	struct btsdec_err err;

	recs[0] = (struct btsdec_record){ .from = 0x100000 + 16 * k,
					  .to = 0x100008 + 16 * k };
	for (size_t i = 1; i < t.nr; i++)
		recs[i] = btsdec_trace_at(base, i - 1);
	return btsdec_note_write(p, room, &t, &err);
}

int main(int argc, char **argv)
{
	struct btsdec_core *core;
	const struct btsdec_thread *th;
	struct elf_prstatus prs;
	struct btsdec_err err;
	unsigned long n, k;
	size_t room, len = 0;
	uint8_t *blob;
	ssize_t w;

	if (argc != 4 || !(n = strtoul(argv[2], NULL, 0)) || n > 4000000) {
		fprintf(stderr, "usage: make-threads-core BASE N OUT\n");
		return 2;
	}
	if (btsdec_core_open(argv[1], &core, &err)) {
		fprintf(stderr, "make-threads-core: %s\n", err.msg);
		return 1;
	}
	th = btsdec_core_thread(core, 0);
	if (!th || !th->has_trace || th->trace.nr < PREFIX_MOD - 1 ||
	    base_prstatus(core, &prs)) {
		fprintf(stderr, "make-threads-core: %s: no traced first thread\n", argv[1]);
		return 1;
	}
	room = n * (20 + sizeof(prs) + btsdec_note_size(PREFIX_MOD));
	blob = malloc(room);
	for (k = 1; blob && k <= n; k++) {
		prs.pr_pid = TID_BASE + k;
		len += frame_prstatus(blob + len, &prs);
		w = frame_trace(blob + len, room - len, &th->trace, k);
		if (w < 0) {
			fprintf(stderr, "make-threads-core: thread %lu: cannot frame its "
				"trace note (%s)\n", k, strerror((int)-w));
			return 1;
		}
		len += w;
	}
	if (!blob || btsdec_core_append_notes(argv[1], argv[3], blob, len, &err)) {
		fprintf(stderr, "make-threads-core: %s\n", blob ? err.msg : "out of memory");
		return 1;
	}
	free(blob);
	btsdec_core_close(core);
	return 0;
}
