// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trace notes as the library holds them: a note descriptor parsed (through
 * format.c, which checks every rule of docs/format.md §2.2 and §1.1) into a
 * struct btsdec_trace with its records, and a trace serialized back into a
 * whole ELF note (btsdump add-note, the fixtures).  A core's trace note is
 * not held but streamed from the file (btsdec_note_parse_fd,
 * btsdec_trace_at) through a window of records the core's traces share, so
 * memory stays flat in the trace's length and in the number of threads.
 * No libelf here: this is the part the note fuzzer drives directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"

/* Records read from a file per window: 96 KiB. */
#define REC_WINDOW	4096

/* Records last read from a file: bytes off .. off + len - 1 of fd.  One
 * window serves every trace of a core (they are read one at a time), not
 * one per trace: 96 KiB each made 10 k threads cost 1 GB (issue 30). */
struct btsdec_recwin {
	int fd;
	uint64_t off;
	size_t len;
	uint8_t buf[REC_WINDOW * BTS_RECORD_SIZE];
};

/* A streamed trace's source: where its records lie, and the window. */
struct btsdec_recsrc {
	int fd;			/* borrowed: the core's */
	uint64_t off;		/* file offset of record 0 */
	int err;		/* -EIO once a read failed */
	struct btsdec_recwin *win;	/* borrowed, or owned when own_win */
	bool own_win;
};

struct btsdec_recwin *btsdec_recwin_new(void)
{
	struct btsdec_recwin *w = malloc(sizeof(*w));

	if (w)
		*w = (struct btsdec_recwin){ .fd = -1 };
	return w;
}

void btsdec_recwin_free(struct btsdec_recwin *w)
{
	free(w);
}

/* Records first .. first + n - 1 of s's trace into the window. */
static int read_window(struct btsdec_recsrc *s, size_t first, size_t n)
{
	struct btsdec_recwin *w = s->win;
	size_t bytes = n * BTS_RECORD_SIZE;

	w->fd = s->fd;
	w->off = s->off + first * BTS_RECORD_SIZE;
	if (pread(s->fd, w->buf, bytes, w->off) != (ssize_t)bytes) {
		w->len = 0;
		return s->err = -EIO;
	}
	w->len = bytes;
	return 0;
}

struct btsdec_record btsdec_trace_at(const struct btsdec_trace *t, size_t i)
{
	struct btsdec_recsrc *s = t->src;
	struct btsdec_record r = { 0 };
	uint64_t at;
	size_t first;

	if (!s)
		return t->recs[i];
	at = s->off + i * BTS_RECORD_SIZE;
	if (s->win->fd != s->fd || at < s->win->off ||
	    at - s->win->off >= s->win->len) {	/* outside the window */
		first = i - i % REC_WINDOW;
		if (read_window(s, first, t->nr - first < REC_WINDOW ?
				t->nr - first : REC_WINDOW))
			return r;
	}
	btsdec_record_load(s->win->buf + (at - s->win->off), &r);
	return r;
}

int btsdec_trace_error(const struct btsdec_trace *t)
{
	return t->src ? t->src->err : 0;
}

/* Every record of a streamed trace against format.md §1.1, a window at a time. */
static int check_streamed(const struct btsdec_trace *t, struct btsdec_err *err)
{
	struct btsdec_record recs[256];
	int ret;

	for (size_t i = 0; i < t->nr; i += 256) {
		size_t n = t->nr - i < 256 ? t->nr - i : 256;

		for (size_t j = 0; j < n; j++)
			recs[j] = btsdec_trace_at(t, i + j);
		if (t->src->err)
			return btsdec_fail(err, -EIO, "records cut short at record %zu", i);
		ret = btsdec_records_check_at(t->type, recs, n, i, err);
		if (ret)
			return ret;
	}
	return 0;
}

int btsdec_note_parse_fd(uint32_t type, int fd, uint64_t off, size_t len,
			 struct btsdec_recwin *win, struct btsdec_trace *t,
			 struct btsdec_err *err)
{
	uint8_t head[BTS_CRASH_NOTE_HDR_SIZE];
	struct btsdec_trace tr;
	struct bts_crash_note_hdr h;
	size_t got = len < sizeof(head) ? len : sizeof(head);
	int ret;

	if (pread(fd, head, got, off) != (ssize_t)got)
		return btsdec_fail(err, -EIO, "note header cut short");
	ret = btsdec_note_hdr_load(type, head, len, &h, err);
	if (ret)
		return ret;
	tr = (struct btsdec_trace){
		.type = type, .flags = h.flags, .id = h.id,
		.capacity = h.capacity, .lost = h.lost, .nr_gaps = h.nr_gaps,
		.source = h.source, .nr = h.nr_records,
	};
	if (!(tr.src = malloc(sizeof(*tr.src))))
		return btsdec_fail(err, -ENOMEM, "out of memory");
	*tr.src = (struct btsdec_recsrc){ .fd = fd, .off = off + h.hdr_size,
					  .win = win, .own_win = !win };
	if (!win && !(tr.src->win = btsdec_recwin_new())) {
		btsdec_trace_free(&tr);
		return btsdec_fail(err, -ENOMEM, "out of memory");
	}
	ret = check_streamed(&tr, err);
	if (ret) {
		btsdec_trace_free(&tr);
		return ret;
	}
	*t = tr;
	return 0;
}

int btsdec_note_parse(uint32_t type, const void *desc, size_t len,
		      struct btsdec_trace *t, struct btsdec_err *err)
{
	const uint8_t *d = desc;
	struct btsdec_record *recs = NULL;
	struct bts_crash_note_hdr h;
	int ret;

	ret = btsdec_note_hdr_load(type, desc, len, &h, err);
	if (ret)
		return ret;
	if (h.nr_records) {
		recs = calloc(h.nr_records, sizeof(*recs));
		if (!recs)
			return btsdec_fail(err, -ENOMEM, "out of memory for %llu records",
					   (unsigned long long)h.nr_records);
	}
	for (size_t i = 0; i < h.nr_records; i++)
		btsdec_record_load(d + h.hdr_size + i * BTS_RECORD_SIZE, &recs[i]);
	ret = btsdec_records_check(type, recs, h.nr_records, err);
	if (ret) {
		free(recs);
		return ret;
	}
	*t = (struct btsdec_trace){
		.type = type, .flags = h.flags, .id = h.id,
		.capacity = h.capacity, .lost = h.lost, .nr_gaps = h.nr_gaps,
		.source = h.source, .nr = h.nr_records, .recs = recs,
	};
	return 0;
}

void btsdec_trace_free(struct btsdec_trace *t)
{
	free(t->recs);
	if (t->src && t->src->own_win)
		btsdec_recwin_free(t->src->win);
	free(t->src);
	t->recs = NULL;
	t->src = NULL;
	t->nr = 0;
}

ssize_t btsdec_note_write(void *buf, size_t buflen,
			  const struct btsdec_trace *t, struct btsdec_err *err)
{
	size_t need = btsdec_note_size(t->nr), descsz;
	struct bts_crash_note_hdr h;
	uint8_t *d;

	if (!need || t->nr > t->capacity)
		return btsdec_fail(err, -EINVAL,
				   "%zu records do not fit a ring of %llu",
				   t->nr, (unsigned long long)t->capacity);
	if (buflen < need)
		return btsdec_fail(err, -ENOSPC, "note needs %zu bytes", need);
	descsz = BTS_CRASH_NOTE_HDR_SIZE + t->nr * BTS_RECORD_SIZE;
	memset(buf, 0, need);
	d = (uint8_t *)buf + btsdec_note_frame_store(buf, t->type, descsz);
	h = (struct bts_crash_note_hdr){
		.magic = BTS_CRASH_NOTE_MAGIC, .version = BTS_CRASH_NOTE_VERSION,
		.hdr_size = BTS_CRASH_NOTE_HDR_SIZE, .record_size = BTS_RECORD_SIZE,
		.flags = t->flags, .id = t->id, .capacity = t->capacity,
		.nr_records = t->nr, .lost = t->lost, .nr_gaps = t->nr_gaps,
		.source = t->source,
	};
	btsdec_note_hdr_store(d, &h);
	d += BTS_CRASH_NOTE_HDR_SIZE;
	for (size_t i = 0; i < t->nr; i++, d += BTS_RECORD_SIZE) {
		struct btsdec_record r = btsdec_trace_at(t, i);

		btsdec_record_store(d, &r);
	}
	return need;
}
