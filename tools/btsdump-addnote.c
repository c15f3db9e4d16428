// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump add-note CORE RECORDS`: writes a thread trace note, made from a
 * text list of records, into an existing core (lib/writer.c) -- fixtures
 * and tools; with --framed, notes already framed (a companion entry's
 * lbr.note: gdb/bts.py).  RECORDS or CORE (with --output) may be "-".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdump.h"

static void usage(void)
{
	fputs("Usage: btsdump add-note [OPTIONS] CORE RECORDS\n"
	      "\n"
	      "Adds a thread trace note (docs/format.md) to CORE.  RECORDS is a text\n"
	      "file (\"-\": standard input), one record per line, oldest first:\n"
	      "  FROM TO [FLAGS]          a branch (numbers in C syntax)\n"
	      "  switch-out TS_NS CPU     a context-switch marker (also switch-in)\n"
	      "  gap REASON TS_NS LEN_NS  a gap marker, REASON 0-3\n"
	      "  # ...                    a comment\n"
	      "\n"
	      "  -t, --thread TID          thread (default: the faulting thread)\n"
	      "      --capacity N          ring capacity (default: max(records, 4096))\n"
	      "  -s, --source hw|emulation|lbr (default emulation)\n"
	      "  -w, --wrapped             set the WRAPPED flag\n"
	      "  -l, --lost N              records lost (exact)\n"
	      "  -g, --gaps N              number of gaps (default: the GAP markers)\n"
	      "      --framed              RECORDS holds whole trace notes, framed as in a\n"
	      "                            core (btsdumpd's companion entry's lbr.note):\n"
	      "                            each checked, then appended as it is (the\n"
	      "                            options above do not apply)\n"
	      "  -o, --output FILE         write here instead of replacing CORE\n"
	      "                            (needed when CORE is \"-\")\n"
	      "  -h, --help                this text\n"
	      "      --version             the version\n", stdout);
}

/* Splits a line into at most 4 fields; returns how many. */
static int split(char *line, char **f)
{
	char *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(line, " \t\n", &save); tok && n < 5;
	     tok = strtok_r(NULL, " \t\n", &save))
		f[n++] = tok;
	return n;
}

static int parse_line(char *line, struct btsdec_record *r)
{
	uint64_t v[3] = { 0 };
	char *f[5];
	int n = split(line, f), i, first;
	unsigned int kind = 0;

	if (n < 2)
		return -EINVAL;
	first = !strcmp(f[0], "gap") || !strcmp(f[0], "switch-out") ||
		!strcmp(f[0], "switch-in");
	if (n > 4 || n < 2 + first || (first && !strcmp(f[0], "gap") && n != 4) ||
	    (first && strcmp(f[0], "gap") && n != 3))
		return -EINVAL;
	for (i = first; i < n; i++)
		if (bts_cli_parse_u64(f[i], &v[i - first]))
			return -EINVAL;
	if (!first) {
		*r = (struct btsdec_record){ v[0], v[1], v[2] };
		return 0;
	}
	if (!strcmp(f[0], "gap")) {
		*r = (struct btsdec_record){ BTS_MARKER(BTS_MARK_GAP, v[0]), v[1], v[2] };
		return 0;
	}
	kind = !strcmp(f[0], "switch-out") ? BTS_MARK_SWITCH_OUT : BTS_MARK_SWITCH_IN;
	*r = (struct btsdec_record){ BTS_MARKER(kind, 0), v[0], v[1] };
	return 0;
}

static int read_records(const char *path, struct btsdec_trace *t)
{
	char line[256];
	size_t cap = 0, lineno = 0;
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;

	if (!f) {
		say("%s: %m", path);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");

		lineno++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (btsdec_grow(&t->recs, &cap, t->nr + 1))
			goto fail;
		if (parse_line(p, &t->recs[t->nr])) {
			say("%s:%zu: cannot parse record",
				path, lineno);
			goto fail;
		}
		t->nr++;
	}
	if (f != stdin)
		fclose(f);
	return 0;
fail:
	if (f != stdin)
		fclose(f);
	return -EINVAL;
}

static int faulting_tid(const char *core_path, uint64_t *tid)
{
	struct btsdec_core *core;
	struct btsdec_err err;
	int ret = btsdec_core_open(core_path, &core, &err);

	if (ret) {
		say("%s", err.msg);
		return ret;
	}
	if (!btsdec_core_nr_threads(core)) {
		say("%s: no thread in core, give --tid",
			core_path);
		ret = -ENOENT;
	} else {
		*tid = btsdec_core_thread(core, 0)->tid;
	}
	btsdec_core_close(core);
	return ret;
}

enum { OPT_FRAMED = BTS_CLI_VERSION + 1 };

struct add_args {
	struct btsdec_trace t;
	const char *output;
	bool have_tid, have_gaps, framed;
};

/* One option of add-note into a; 0, -1 after --help or --version (*status
 * set), or a usage error's status. */
static int add_option(int c, char **argv, struct add_args *a, int *status)
{
	uint64_t v;

	switch (c) {
	case 't':
		if (bts_cli_parse_u64(optarg, &a->t.id))
			return usage_error("--thread: not a thread ID: '%s'", optarg);
		a->have_tid = true;
		return 0;
	case 'C':
		if (bts_cli_parse_u64(optarg, &a->t.capacity))
			return usage_error("--capacity: not a number: '%s'", optarg);
		return 0;
	case 's':
		if (!strcmp(optarg, "hw"))
			a->t.source = BTS_SOURCE_HW;
		else if (!strcmp(optarg, "lbr"))
			a->t.source = BTS_SOURCE_LBR;
		else if (strcmp(optarg, "emulation"))
			return usage_error("--source: hw, emulation or lbr, not '%s'", optarg);
		return 0;
	case 'w': a->t.flags |= BTS_NOTE_F_WRAPPED; return 0;
	case 'l':
		if (bts_cli_parse_u64(optarg, &a->t.lost))
			return usage_error("--lost: not a number: '%s'", optarg);
		return 0;
	case 'g':
		if (bts_cli_parse_u64(optarg, &v) || v > UINT32_MAX)
			return usage_error("--gaps: not a number: '%s'", optarg);
		a->t.nr_gaps = v;
		a->have_gaps = true;
		return 0;
	case 'o': a->output = optarg; return 0;
	case OPT_FRAMED: a->framed = true; return 0;
	case 'h': usage(); *status = 0; return -1;
	case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
	default: return bts_cli_bad_option("btsdump", argv, c);
	}
}

static int parse_add_args(int argc, char **argv, struct add_args *a, int *status)
{
	static const struct option opts[] = {
		{ "thread", required_argument, NULL, 't' },
		{ "tid", required_argument, NULL, 't' },	/* before 0.2 */
		{ "capacity", required_argument, NULL, 'C' },
		{ "source", required_argument, NULL, 's' },
		{ "wrapped", no_argument, NULL, 'w' },
		{ "lost", required_argument, NULL, 'l' },
		{ "gaps", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "framed", no_argument, NULL, OPT_FRAMED },
		{ "help", no_argument, NULL, 'h' },
		BTS_CLI_OPTION_VERSION,
		{ 0 }
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, BTS_CLI_OPTSTRING "t:s:wl:g:o:h",
				opts, NULL)) != -1)
		if ((ret = add_option(c, argv, a, status)))
			return ret;
	if (argc - optind < 2)
		return usage_error("add-note: missing %s", argc == optind ? "CORE" : "RECORDS");
	if (argc - optind > 2)
		return usage_error("too many arguments: '%s'", argv[optind + 2]);
	if (!strcmp(argv[optind], "-") && !a->output)
		return usage_error("add-note: CORE \"-\" needs --output");
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		return usage_error("add-note: CORE and RECORDS cannot both be \"-\"");
	return 0;
}

/* The note added to core (a path the library can open), as a->output or
 * in place; 0 or the exit status. */
static int add_note(struct add_args *a, const char *core)
{
	struct btsdec_trace *t = &a->t;
	struct btsdec_err err;
	int ret;

	if (!t->capacity)
		t->capacity = t->nr > 4096 ? t->nr : 4096;
	if (!a->have_gaps)	/* what a writer counts: the GAP markers */
		for (size_t i = 0; i < t->nr; i++)
			if (btsdec_is_marker(&t->recs[i]) &&
			    BTS_MARKER_KIND(t->recs[i].from) == BTS_MARK_GAP)
				t->nr_gaps++;
	if (!a->have_tid && faulting_tid(core, &t->id))
		return BTS_EXIT_READ;
	ret = btsdec_core_add_notes(core, a->output ? a->output : core, t, 1, &err);
	if (ret) {
		say("add-note: %s", err.msg);
		return BTS_EXIT_READ;
	}
	return 0;
}

#define FRAMED_MAX	(64u << 20)	/* bytes of framed notes read */

/* Every note of the len bytes at buf a btscrash trace note that parses
 * (docs/format.md), at least one: 0, else -EINVAL (said). */
static int framed_check(const char *path, const void *buf, size_t len)
{
	struct btsdec_elf_note n;
	struct btsdec_trace t;
	struct btsdec_err err;
	size_t off = 0, count = 0;
	int r;

	while ((r = btsdec_elf_note_next(buf, len, &off, &n, &err)) == 1) {
		if (!btsdec_elf_note_owner(&n, BTS_CRASH_NOTE_NAME, BTS_CRASH_NOTE_NAMESZ) ||
		    btsdec_note_parse(n.type, n.desc, n.descsz, &t, &err)) {
			say("%s: note %zu is no btscrash trace note%s%s", path, count,
			    n.descsz ? ": " : "", n.descsz ? err.msg : "");
			return -EINVAL;
		}
		btsdec_trace_free(&t);
		count++;
	}
	if (r < 0 || off != len || !count) {
		say("%s: %s", path, r < 0 ? err.msg : "not whole framed notes");
		return -EINVAL;
	}
	return 0;
}

/* --framed: the notes in path appended to core as they are; 0 or the
 * exit status. */
static int add_framed(const struct add_args *a, const char *path, const char *core)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	char *buf = malloc(FRAMED_MAX + 1);
	struct btsdec_err err;
	size_t len = 0;
	int ret = BTS_EXIT_USAGE;

	if (!f || !buf) {
		say("%s: %s", path, f ? strerror(ENOMEM) : strerror(errno));
		goto out;
	}
	len = fread(buf, 1, FRAMED_MAX + 1, f);
	if (ferror(f) || len > FRAMED_MAX) {
		say("%s: %s", path, ferror(f) ? "read error" : "too large");
		goto out;
	}
	if (framed_check(path, buf, len))
		goto out;
	ret = btsdec_core_append_notes(core, a->output ? a->output : core, buf, len, &err);
	if (ret)
		say("add-note: %s", err.msg);
	ret = ret ? BTS_EXIT_READ : 0;
out:
	if (f && f != stdin)
		fclose(f);
	free(buf);
	return ret;
}

int btsdump_addnote_main(int argc, char **argv)
{
	struct add_args a = { .t = { .type = NT_BTSCRASH_THREAD,
				     .flags = BTS_NOTE_F_USER_ONLY | BTS_NOTE_F_LOST_EXACT,
				     .source = BTS_SOURCE_EMUL } };
	const char *core;
	char buf[64];
	int ret, status = 0, fd = -1;

	ret = parse_add_args(argc, argv, &a, &status);
	if (ret)
		return ret < 0 ? status : ret;
	if (!a.framed && read_records(argv[optind + 1], &a.t))
		return BTS_EXIT_USAGE;
	ret = bts_cli_input_path(argv[optind], buf, sizeof(buf), &core, &fd);
	if (ret) {
		say("%s: %s", argv[optind], strerror(-ret));
		ret = BTS_EXIT_READ;
	} else {
		ret = a.framed ? add_framed(&a, argv[optind + 1], core) : add_note(&a, core);
	}
	if (fd >= 0)
		close(fd);
	btsdec_trace_free(&a.t);
	return ret;
}
