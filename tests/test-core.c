// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of core reading, symbolization, decoding and note writing
 * (lib/core.c, symbol.c, decode.c, writer.c) against the real gdb cores in
 * tests/fixtures (see its README for how they were made).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btsdec.h"
#include "test.h"

#define FIX SOURCE_ROOT "/tests/fixtures/"

static char tmpdir[64];

static char *tmp_path(const char *name)
{
	static char buf[4][128];
	static int n;

	snprintf(buf[n & 3], sizeof(buf[0]), "%s/%s", tmpdir, name);
	return buf[n++ & 3];
}

static int copy_file(const char *from, const char *to, off_t limit)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;
	off_t done = 0;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0 && (!limit || done < limit)) {
		if (limit && done + n > limit)
			n = limit - done;
		if (write(out, buf, n) != n)
			return -1;
		done += n;
	}
	close(in);
	close(out);
	return 0;
}

/* Reads the FROM TO lines the fixture maker recorded. */
static size_t read_records(const char *path, struct btsdec_record *r, size_t max)
{
	char line[128];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f))
		if (line[0] != '#' &&
		    sscanf(line, "%" SCNx64 " %" SCNx64, &r[n].from, &r[n].to) == 2)
			n++;
	fclose(f);
	return n;
}

static void test_open_null_core(void)
{
	struct btsdec_record want[64];
	struct btsdec_core *c;
	const struct btsdec_thread *t;
	size_t n = read_records(FIX "crasher-null.records", want, 64);

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	CHECK_EQ(btsdec_core_nr_threads(c), 1);
	CHECK_EQ(btsdec_core_nr_traces(c), 1);
	CHECK_EQ(btsdec_core_nr_rejects(c), 0);
	t = btsdec_core_thread(c, 0);
	REQUIRE(t && t->has_trace);
	CHECK(t->faulting);
	CHECK_EQ(t->signo, 11);
	CHECK_EQ(t->trace.source, BTS_SOURCE_EMUL);
	REQUIRE(n > 5 && t->trace.nr == n);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ(btsdec_trace_at(&t->trace, i).from, want[i].from);
		CHECK_EQ(btsdec_trace_at(&t->trace, i).to, want[i].to);
	}
	CHECK_EQ(btsdec_trace_at(&t->trace, n - 1).to, 0);	/* the call through NULL */
	btsdec_core_close(c);
}

/* The fault: rip from NT_PRSTATUS and si_addr from NT_SIGINFO, each
 * matched to its thread by pr_pid. */
static void test_fault_registers(void)
{
	const struct btsdec_thread *t, *w, *m;
	struct btsdec_core *c;

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	t = btsdec_core_thread(c, 0);
	CHECK(t->has_regs && t->has_siginfo);
	CHECK_EQ(t->pc, btsdec_trace_at(&t->trace, t->trace.nr - 1).to);	/* called NULL */
	CHECK_EQ(t->si_signo, 11);
	CHECK(t->has_addr);
	CHECK_EQ(t->addr, 0);
	btsdec_core_close(c);

	/* SIGABRT comes from tgkill: si_code SI_TKILL, no fault address */
	REQUIRE(btsdec_core_open(FIX "crasher-abort.core", &c, NULL) == 0);
	t = btsdec_core_thread(c, 0);
	CHECK(t->has_regs && t->has_siginfo && !t->has_addr);
	CHECK_EQ(t->si_signo, 6);
	CHECK(t->si_code < 0);
	btsdec_core_close(c);

	/* gdb wrote one NT_SIGINFO per thread, after its NT_PRSTATUS */
	REQUIRE(btsdec_core_open(FIX "crasher-threads.core", &c, NULL) == 0);
	REQUIRE(btsdec_core_nr_threads(c) == 2);
	w = btsdec_core_thread(c, 0);
	m = btsdec_core_thread(c, 1);
	CHECK(w->faulting && !m->faulting);
	CHECK_EQ(w->pc, btsdec_trace_at(&w->trace, w->trace.nr - 1).to);
	CHECK_EQ(w->si_signo, 11);
	CHECK(m->has_regs && m->pc != 0);
	CHECK_EQ(m->si_signo, 19);	/* gdb's SIGSTOP of the other thread */
	btsdec_core_close(c);
}

static void test_core_without_trace(void)
{
	struct btsdec_core *c;

	REQUIRE(btsdec_core_open(FIX "crasher-notrace.core", &c, NULL) == 0);
	CHECK_EQ(btsdec_core_nr_threads(c), 1);
	CHECK_EQ(btsdec_core_nr_traces(c), 0);
	CHECK(!btsdec_core_thread(c, 0)->has_trace);
	btsdec_core_close(c);
}

static void test_not_a_core(void)
{
	struct btsdec_core *c;
	struct btsdec_err err;

	CHECK_EQ(btsdec_core_open(FIX "crasher", &c, &err), -ENOEXEC);
	CHECK_CONTAINS(err.msg, "not a core file");
	CHECK_EQ(btsdec_core_open(FIX "README.md", &c, &err), -ENOEXEC);
	CHECK_CONTAINS(err.msg, "not an ELF file");
	CHECK_EQ(btsdec_core_open(FIX "no-such-file", &c, &err), -ENOENT);
	CHECK_EQ(btsdec_core_open(FIX, &c, &err), -EINVAL);
}

static void test_truncated_core(void)
{
	struct btsdec_core *c;
	struct btsdec_err err;
	struct stat st;

	REQUIRE(stat(FIX "crasher-null.core", &st) == 0);
	/* gdb writes the notes last: cutting the file cuts them */
	REQUIRE(copy_file(FIX "crasher-null.core", tmp_path("cut.core"), st.st_size - 8000) == 0);
	CHECK_EQ(btsdec_core_open(tmp_path("cut.core"), &c, &err), -EIO);
	CHECK_CONTAINS(err.msg, "truncated");
	REQUIRE(copy_file(FIX "crasher-null.core", tmp_path("cut.core"), 40) == 0);
	CHECK_EQ(btsdec_core_open(tmp_path("cut.core"), &c, &err), -ENOEXEC);
}

static const char *segment_func(const struct btsdec_segment *s)
{
	return s->func ? s->func : "??";
}

/* Branch i of a decoded trace, by value. */
static struct btsdec_branch br_at(const struct btsdec_decoded *d, size_t i)
{
	struct btsdec_branch b;

	btsdec_decoded_branch(d, i, &b);
	return b;
}

#define MAX_SEGS	16

struct seg_list {
	size_t n;
	struct btsdec_segment s[MAX_SEGS];
};

static int seg_collect(void *arg, size_t i, const struct btsdec_segment *s)
{
	struct seg_list *l = arg;

	CHECK_EQ(i, l->n);
	if (l->n < MAX_SEGS)
		l->s[l->n++] = *s;
	return 0;
}

/* A fixture core decoded with its symbols: the state the decode tests share. */
struct decoded_fixture {
	struct btsdec_core *core;
	struct btsdec_sym *sym;
	struct btsdec_classifier *cls;
	struct btsdec_decoded d;
};

static int decode_fixture(const char *core, struct decoded_fixture *f)
{
	struct btsdec_symopts so = { .executable = FIX "crasher" };

	memset(f, 0, sizeof(*f));
	if (btsdec_core_open(core, &f->core, NULL) ||
	    btsdec_sym_open_core(f->core, &so, &f->sym, NULL) ||
	    btsdec_classifier_new(&f->cls, NULL))
		return -1;
	return btsdec_decode(f->sym, f->cls, &btsdec_core_thread(f->core, 0)->trace,
			     &f->d, NULL);
}

static void release_fixture(struct decoded_fixture *f)
{
	btsdec_decoded_free(&f->d);
	btsdec_classifier_free(f->cls);
	btsdec_sym_close(f->sym);
	btsdec_core_close(f->core);
}

static void test_decode_null_call(void)
{
	static const char *const chain[] = { "main", "serve", "parse_request",
		"checksum", "parse_request", "dispatch", "??" };
	static const int depth[] = { 0, 1, 2, 3, 2, 3, 4 };
	struct decoded_fixture f;
	const struct btsdec_decoded *d = &f.d;
	struct btsdec_branch last, first_call, before;
	struct seg_list segs = { 0 };
	size_t i;

	if (decode_fixture(FIX "crasher-null.core", &f)) {
		release_fixture(&f);
		REQUIRE(!"decoding crasher-null.core");
	}
	last = br_at(d, d->nr - 1);
	CHECK_EQ(last.kind, BTSDEC_K_CALL);
	CHECK(last.indirect);
	CHECK_STR(last.from_loc.func, "dispatch");
	CHECK_STR(last.from_loc.file, "crasher.c");
	CHECK(last.to_loc.func == NULL);
	/* main's first call: into serve(), at its entry */
	for (i = 1; i < d->nr - 1; i++)
		if (br_at(d, i).kind == BTSDEC_K_CALL)
			break;
	first_call = br_at(d, i);
	CHECK_STR(first_call.from_loc.func, "main");
	CHECK_STR(first_call.to_loc.func, "serve");
	CHECK_EQ(first_call.to_loc.off, 0);
	/* main's switch went through its jump table: an indirect jump */
	before = br_at(d, i - 1);
	CHECK_EQ(before.kind, BTSDEC_K_JUMP);
	CHECK(before.indirect);
	CHECK_EQ(d->nr_seg, sizeof(chain) / sizeof(chain[0]));
	CHECK_EQ(btsdec_decoded_segments(d, 0, seg_collect, &segs), 0);
	CHECK_EQ(segs.n, d->nr_seg);
	for (i = 0; i < segs.n && i < sizeof(chain) / sizeof(chain[0]); i++) {
		CHECK_STR(segment_func(&segs.s[i]), chain[i]);
		CHECK_EQ(segs.s[i].depth, depth[i]);
	}
	CHECK_EQ(segs.s[segs.n - 1].addr, 0);
	/* no branch is taken from 0: the last segment has none (issue 41) */
	CHECK_EQ(segs.s[0].first, 0);
	CHECK_EQ(segs.s[segs.n - 2].last, d->nr - 1);
	CHECK_EQ(segs.s[segs.n - 1].first, BTSDEC_SEG_NONE);
	CHECK_EQ(segs.s[segs.n - 1].last, BTSDEC_SEG_NONE);
	CHECK(segs.s[segs.n - 1].file == NULL && segs.s[segs.n - 1].line_lo == 0);
	release_fixture(&f);
}

static void test_decode_smash(void)
{
	struct decoded_fixture f;
	const struct btsdec_decoded *d = &f.d;
	struct btsdec_branch last;

	if (decode_fixture(FIX "crasher-smash.core", &f)) {
		release_fixture(&f);
		REQUIRE(!"decoding crasher-smash.core");
	}
	last = br_at(d, d->nr - 1);
	CHECK_EQ(last.kind, BTSDEC_K_RETURN);
	CHECK_STR(last.from_loc.func, "smash_victim");
	CHECK_EQ(last.rec.to, 0x414141414141ULL);
	CHECK_STR(br_at(d, d->nr - 2).from_loc.func, "fill");
	CHECK_EQ(br_at(d, d->nr - 2).kind, BTSDEC_K_RETURN);
	/* the ret into 0x414141414141 smashed the stack; fill's ret did not */
	CHECK(last.smashed);
	for (size_t i = 0; i + 1 < d->nr; i++)
		CHECK(!br_at(d, i).smashed);
	release_fixture(&f);
}

/* Returns into frames entered before the trail began follow a call in
 * the code: not flagged, though no call of the trail returns there. */
static void test_smash_rule_spares_older_frames(void)
{
	struct decoded_fixture f;
	struct btsdec_trace cut;
	struct btsdec_record *recs;
	size_t nret = 0;

	if (decode_fixture(FIX "crasher-null.core", &f)) {
		release_fixture(&f);
		REQUIRE(!"decoding crasher-null.core");
	}
	btsdec_decoded_free(&f.d);
	/* the trail from checksum's return on: its call (#5) is cut off */
	cut = btsdec_core_thread(f.core, 0)->trace;	/* streamed from the core */
	REQUIRE(cut.nr > 12);
	cut.nr -= 12;
	REQUIRE((recs = calloc(cut.nr, sizeof(*recs))));
	for (size_t i = 0; i < cut.nr; i++)
		recs[i] = btsdec_trace_at(&btsdec_core_thread(f.core, 0)->trace, i + 12);
	cut.recs = recs;
	cut.src = NULL;
	REQUIRE(btsdec_decode(f.sym, f.cls, &cut, &f.d, NULL) == 0);
	for (size_t i = 0; i < f.d.nr; i++) {
		struct btsdec_branch b = br_at(&f.d, i);

		nret += b.kind == BTSDEC_K_RETURN;
		CHECK(!b.smashed);
	}
	CHECK_EQ(nret, 1);
	release_fixture(&f);
	free(recs);
}

/* The faulting pc against the newest branch: its target (null, smash) or
 * inside the straight-line code after it (abort: tgkill's syscall). */
static void test_fault_relation(void)
{
	static const struct { const char *core; enum btsdec_fault_rel rel; } c[] = {
		{ FIX "crasher-null.core", BTSDEC_FAULT_TARGET },
		{ FIX "crasher-smash.core", BTSDEC_FAULT_TARGET },
		{ FIX "crasher-abort.core", BTSDEC_FAULT_RUN },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct decoded_fixture f;
		const struct btsdec_thread *t;
		struct btsdec_fault fault;

		if (decode_fixture(c[i].core, &f)) {
			release_fixture(&f);
			REQUIRE(!"decoding a fixture");
		}
		t = btsdec_core_thread(f.core, 0);
		fault = (struct btsdec_fault){ .pc = t->pc };
		btsdec_fault_relate(f.sym, f.cls, &f.d, &fault);
		CHECK_EQ(fault.rel, c[i].rel);
		CHECK_EQ(fault.branch, f.d.nr - 1);
		CHECK_EQ(fault.run, t->pc - btsdec_trace_at(f.d.t, f.d.nr - 1).to);
		if (c[i].rel == BTSDEC_FAULT_RUN)
			CHECK(fault.run > 0);
		/* a pc before the newest target, or past a branch: unrelated */
		fault.pc = btsdec_trace_at(f.d.t, f.d.nr - 1).to - 1;
		btsdec_fault_relate(f.sym, f.cls, &f.d, &fault);
		CHECK_EQ(fault.rel, BTSDEC_FAULT_UNRELATED);
		release_fixture(&f);
	}
}

static void test_decode_without_symbols(void)
{
	struct btsdec_decoded d;
	struct btsdec_core *c;

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	REQUIRE(btsdec_decode(NULL, NULL, &btsdec_core_thread(c, 0)->trace, &d, NULL) == 0);
	CHECK_EQ(br_at(&d, 0).kind, BTSDEC_K_UNKNOWN);
	CHECK(br_at(&d, 0).from_loc.func == NULL);
	btsdec_decoded_free(&d);
	btsdec_core_close(c);
}

static struct btsdec_record marker_recs[] = {
	{ 0x401000, 0x401100, 0 },
	{ BTS_MARKER(BTS_MARK_SWITCH_OUT, 0), 1000000123, 1 },
	{ BTS_MARKER(BTS_MARK_SWITCH_IN, 0), 1000500000, 0 },
	{ BTS_MARKER(BTS_MARK_GAP, BTS_GAP_PERF), 2000000000, 7000 },
	{ 0x401105, 0x401000, BTS_REC_F_PREDICTED },
};

static void test_write_and_read_back(void)
{
	struct btsdec_trace t[2] = {
		{ .type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY,
		  .capacity = 32, .source = BTS_SOURCE_HW, .nr = 5, .recs = marker_recs },
		{ .type = NT_BTSCRASH_THREAD, .flags = BTS_NOTE_F_USER_ONLY,
		  .id = 99999, .capacity = 8, .source = BTS_SOURCE_EMUL },
	};
	const struct btsdec_thread *th;
	struct btsdec_core *c;
	struct btsdec_decoded d;
	struct btsdec_err err;

	REQUIRE(btsdec_core_open(FIX "crasher-notrace.core", &c, NULL) == 0);
	t[0].id = btsdec_core_thread(c, 0)->tid;
	btsdec_core_close(c);
	REQUIRE(btsdec_core_add_notes(FIX "crasher-notrace.core", tmp_path("w.core"),
				      t, 2, &err) == 0);
	REQUIRE(btsdec_core_open(tmp_path("w.core"), &c, &err) == 0);
	CHECK_EQ(btsdec_core_nr_traces(c), 2);
	CHECK_EQ(btsdec_core_nr_threads(c), 2);	/* 99999 has a trace, no PRSTATUS */
	th = btsdec_core_thread(c, 0);
	CHECK(th->faulting && th->has_trace);
	REQUIRE(th->trace.nr == 5);
	CHECK_EQ(th->trace.source, BTS_SOURCE_HW);
	CHECK_EQ(btsdec_trace_at(&th->trace, 4).flags, BTS_REC_F_PREDICTED);
	REQUIRE(btsdec_decode(NULL, NULL, &th->trace, &d, NULL) == 0);
	CHECK_EQ(br_at(&d, 1).kind, BTSDEC_K_MARKER);
	CHECK_EQ(br_at(&d, 3).kind, BTSDEC_K_MARKER);
	btsdec_decoded_free(&d);
	CHECK_EQ(btsdec_core_thread(c, 1)->trace.nr, 0);
	btsdec_core_close(c);

	/* a second note for the same thread is rejected, the first kept */
	REQUIRE(btsdec_core_add_notes(tmp_path("w.core"), tmp_path("w.core"), t, 1, &err) == 0);
	REQUIRE(btsdec_core_open(tmp_path("w.core"), &c, &err) == 0);
	CHECK_EQ(btsdec_core_nr_traces(c), 2);
	CHECK_EQ(btsdec_core_nr_rejects(c), 1);
	CHECK_CONTAINS(btsdec_core_reject(c, 0), "second trace note");
	btsdec_core_close(c);
}

static void test_writer_refuses_bad_input(void)
{
	struct btsdec_trace t = { .type = NT_BTSCRASH_THREAD, .capacity = 1, .nr = 2, .id = 1,
				  .recs = marker_recs };
	struct btsdec_err err;

	CHECK_EQ(btsdec_core_add_notes(FIX "crasher", tmp_path("x.core"), &t, 1, &err),
		 -ENOEXEC);
	CHECK_EQ(btsdec_core_add_notes(FIX "crasher-notrace.core", tmp_path("x.core"),
				       &t, 1, &err), -EINVAL);
	CHECK(access(tmp_path("x.core"), F_OK) != 0);	/* nothing half-written */
}

static void test_core_read(void)
{
	struct btsdec_core *c;
	uint8_t b[16];

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	CHECK_EQ(btsdec_core_read(c, 0, b, sizeof(b)), 0);
	CHECK_EQ(btsdec_core_read(c, 0xffffffffffff0000ULL, b, sizeof(b)), 0);
	btsdec_core_close(c);
}

/* Read-only as the program headers say: the crasher's code is, its stack
 * and its data are not; a range past the mapping's end is not. */
static void test_core_read_only(void)
{
	struct btsdec_core *c;
	uint64_t lo, hi;

	REQUIRE(btsdec_core_open(FIX "crasher-null.core", &c, NULL) == 0);
	CHECK(btsdec_core_read_only(c, 0x55585717520cULL, 5));	/* dispatch+51 */
	CHECK(!btsdec_core_read_only(c, 0x7ffcbc4ff820ULL, 8));	/* the stack */
	CHECK(!btsdec_core_read_only(c, 0x555857178040ULL, 8));	/* handlers[] */
	CHECK(!btsdec_core_read_only(c, 0, 1));
	CHECK(!btsdec_core_read_only(c, 0x55585717520cULL, 0));
	REQUIRE(btsdec_core_segment(c, 0x55585717520cULL, &lo, &hi));
	CHECK(btsdec_core_read_only(c, hi - 1, 1));
	CHECK(!btsdec_core_read_only(c, hi - 1, 2));
	btsdec_core_close(c);
}

/* What the program headers say of addr, looked up the plain way (the
 * first PT_LOAD holding it): its byte in *b (when dumped), and whether it
 * is mapped. */
static bool ref_read(Elf *elf, int fd, uint64_t addr, uint8_t *b, bool *mapped)
{
	size_t nph;
	GElf_Phdr ph;
	bool got = false;

	*mapped = false;
	if (elf_getphdrnum(elf, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || addr < ph.p_vaddr)
			continue;
		*mapped |= addr - ph.p_vaddr < ph.p_memsz;
		if (!got && addr - ph.p_vaddr < ph.p_filesz)
			got = pread(fd, b, 1, ph.p_offset + addr - ph.p_vaddr) == 1;
	}
	return got;
}

/* btsdec_core_read and _mapped (a sorted index of the segments, issue 30)
 * agree with the program headers at both edges of every segment of every
 * fixture core. */
static void test_core_read_segments(void)
{
	static const char *const cores[] = { FIX "crasher-null.core",
		FIX "crasher-threads.core", FIX "crasher-abort.core" };
	size_t checked = 0;

	for (size_t k = 0; k < sizeof(cores) / sizeof(cores[0]); k++) {
		struct btsdec_core *c;
		int fd = open(cores[k], O_RDONLY);
		Elf *elf;
		size_t nph;
		GElf_Phdr ph;

		REQUIRE(fd >= 0 && btsdec_core_open(cores[k], &c, NULL) == 0);
		elf = btsdec_core_elf(c);
		REQUIRE(elf_getphdrnum(elf, &nph) == 0);
		for (size_t i = 0; i < nph; i++) {
			uint64_t at[6];

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			at[0] = ph.p_vaddr - 1, at[1] = ph.p_vaddr;
			at[2] = ph.p_vaddr + ph.p_filesz - 1, at[3] = ph.p_vaddr + ph.p_filesz;
			at[4] = ph.p_vaddr + ph.p_memsz - 1, at[5] = ph.p_vaddr + ph.p_memsz;
			for (size_t j = 0; j < 6; j++) {
				uint8_t want = 0, got = 0;
				bool mapped, dumped = ref_read(elf, fd, at[j], &want, &mapped);

				CHECK_EQ(btsdec_core_read(c, at[j], &got, 1), dumped);
				CHECK_EQ(got, want);
				CHECK_EQ(btsdec_core_mapped(c, at[j]), mapped);
				checked++;
			}
		}
		btsdec_core_close(c);
		close(fd);
	}
	CHECK(checked > 100);
}

static char *render(const struct btsdec_model *m, bool json, size_t last)
{
	struct btsdec_render_opts ro = { .last = last };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (json)
		CHECK_EQ(btsdec_render_json(f, m, &ro, NULL), 0);
	else
		CHECK_EQ(btsdec_render_text(f, m, &ro, NULL), 0);
	fclose(f);
	return buf;
}

/* One model, decoded once, rendered as text, JSON and journal lines: the
 * renderers agree on every branch; the no-symbols model keeps the kinds. */
static void test_model_renderers(void)
{
	struct btsdec_model_opts mo = { .executable = FIX "crasher" };
	struct decoded_fixture f;
	struct btsdec_model *m = NULL, *bare = NULL;
	const struct btsdec_model_thread *t;
	struct btsdec_branch last;
	char *text, *json, *line = NULL;
	size_t len = 0;
	FILE *lf;

	if (decode_fixture(FIX "crasher-null.core", &f)) {
		release_fixture(&f);
		REQUIRE(!"decoding crasher-null.core");
	}
	REQUIRE(btsdec_model_build(f.core, f.sym, f.cls, &mo, &m, NULL) == 0);
	REQUIRE(m->nr_threads == 1);
	t = &m->threads[0];
	CHECK(t->faulting && t->has_trace && !t->facts.recs && !t->facts.src);
	CHECK_EQ(t->d.nr, f.d.nr);
	CHECK_EQ(t->d.nr_seg, f.d.nr_seg);
	REQUIRE(t->d.nr == 16);
	CHECK_STR(br_at(&t->d, 15).from_loc.func, "dispatch");
	text = render(m, false, 0);
	json = render(m, true, 2);
	CHECK_CONTAINS(text, "thread ");
	CHECK_CONTAINS(json, "\"schema\":\"btscrash-core\"");
	CHECK_CONTAINS(json, "\"number\":15,");
	CHECK(!strstr(json, "\"number\":14,"));	/* --last 2: the newest two */
	/* the journal line is the text report's line without its padding */
	lf = open_memstream(&line, &len);
	last = br_at(&t->d, 15);
	btsdec_render_branch_line(lf, 0, 15, &last);
	fclose(lf);
	CHECK(!strncmp(line, "16  call*", 9));	/* indirect: through NULL */
	/* the fault tied to the trail: pc 0 is the target of #16 */
	REQUIRE(t->has_fault);
	CHECK_EQ(t->fault.rel, BTSDEC_FAULT_TARGET);
	CHECK_EQ(t->fault.branch, 15);
	CHECK_CONTAINS(text, "faulted at 0x0 = target of #16 (indirect call in dispatch)");
	CHECK_CONTAINS(text, line);
	/* gdb's mode: classified, not symbolized */
	mo.no_symbols = true;
	REQUIRE(btsdec_model_build(f.core, f.sym, f.cls, &mo, &bare, NULL) == 0);
	last = br_at(&bare->threads[0].d, 15);
	CHECK_EQ(last.kind, BTSDEC_K_CALL);
	CHECK(last.indirect);
	CHECK(!last.from_loc.func);
	free(text);
	free(json);
	free(line);
	btsdec_model_free(bare);
	btsdec_model_free(m);
	release_fixture(&f);
}

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	btsdec_json_string(f, s);
	fclose(f);
	return buf;
}

static void expect_json(const char *in, const char *want)
{
	char *got = json_of(in);

	CHECK_STR(got, want);
	free(got);
}

static void test_json_string(void)
{
	expect_json("a\"b\\c\n\x01" "d/e", "\"a\\\"b\\\\c\\n\\u0001d/e\"");
	expect_json(NULL, "null");
	/* valid UTF-8 passes through; anything else is the array of its
	 * bytes (docs/json.md "Strings": lossless) */
	expect_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7\"");
	expect_json("/tmp/\xe9", "[47,116,109,112,47,233]");
	expect_json("\xc0\xaf", "[192,175]");			/* overlong */
	expect_json("\xed\xa0\x80", "[237,160,128]");		/* surrogate */
	expect_json("x\xe2\x82", "[120,226,130]");		/* cut short */
	expect_json("\xf4\x90\x80\x80", "[244,144,128,128]");	/* > U+10FFFF */
}

static const struct test_case tests[] = {
	TEST_CASE(test_open_null_core),
	TEST_CASE(test_fault_registers),
	TEST_CASE(test_core_without_trace),
	TEST_CASE(test_not_a_core),
	TEST_CASE(test_truncated_core),
	TEST_CASE(test_decode_null_call),
	TEST_CASE(test_decode_smash),
	TEST_CASE(test_smash_rule_spares_older_frames),
	TEST_CASE(test_fault_relation),
	TEST_CASE(test_decode_without_symbols),
	TEST_CASE(test_write_and_read_back),
	TEST_CASE(test_writer_refuses_bad_input),
	TEST_CASE(test_core_read),
	TEST_CASE(test_core_read_only),
	TEST_CASE(test_core_read_segments),
	TEST_CASE(test_json_string),
	TEST_CASE(test_model_renderers),
};

int main(void)
{
	int ret;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/btsdec-test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 99;
	ret = RUN_TESTS(tests);
	if (!ret) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			ret = 99;
	}
	return ret;
}
