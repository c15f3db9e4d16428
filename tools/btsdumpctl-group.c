// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl's trail signatures (meta TRAIL, lib/trail.c): an older
 * entry's from its stored core; list --group, the selected entries counted
 * per signature with hosts, first and last seen, text or JSON
 * (docs/btsdumpctl.md "Groups").  Everything printed is escaped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdumpctl.h"
#include "exit.h"

/* An entry's signature from its stored core, into its meta as TRAIL;
 * nothing when that cannot be done (no core, no trace, unreadable). */
static void entry_trail_from_core(const struct ctl *c, struct btsdumpd_entry *e)
{
	const char *dir = getenv("TMPDIR"), *exe = ctl_meta(e, "EXE");
	struct btsdec_symopts so = { .executable = exe && !access(exe, R_OK) ? exe : NULL };
	char hex[BTSDEC_TRAIL_HEX + 1];
	struct btsdec_core *core;
	int fd;

	fd = open(dir && *dir ? dir : "/var/tmp", O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (ctl_core_extract(c, e, fd, NULL) || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return;
	}
	if (btsdec_core_open_fd(fd, e->id, &core, NULL))	/* owns fd, closed on error */
		return;
	if (!btsdec_core_trail(core, &so, hex))
		btsdumpd_meta_set(&e->meta, "TRAIL", hex);
	btsdec_core_close(core);
}

void ctl_fill_trails(const struct ctl *c, const size_t *sel, size_t n)
{
	for (size_t i = 0; c->store && i < n; i++) {
		struct btsdumpd_entry *e = &c->e[sel[i]];
		const char *trace = ctl_meta(e, "TRACE");

		if (!ctl_meta(e, "TRAIL") && trace && !strcmp(trace, "present") &&
		    ctl_core_state(c, e) == CORE_PRESENT)
			entry_trail_from_core(c, e);
	}
}

struct group {
	const char *trail;		/* NULL: no signature */
	size_t count;
	uint64_t first, last;		/* timestamps */
	const struct btsdumpd_entry *latest;
	const char **hosts;		/* distinct, borrowed from the entries */
	size_t nr_hosts, cap_hosts;
};

struct groups {
	struct group *g;
	size_t n, cap;
};

static int group_host(struct group *g, const char *host)
{
	host = host ? host : "?";
	for (size_t i = 0; i < g->nr_hosts; i++)
		if (!strcmp(g->hosts[i], host))
			return 0;
	if (btsdec_grow(&g->hosts, &g->cap_hosts, g->nr_hosts + 1))
		return -1;
	g->hosts[g->nr_hosts++] = host;
	return 0;
}

static struct group *group_of(struct groups *gs, const char *trail)
{
	for (size_t i = 0; i < gs->n; i++)
		if (trail ? gs->g[i].trail && !strcmp(gs->g[i].trail, trail) : !gs->g[i].trail)
			return &gs->g[i];
	if (btsdec_grow(&gs->g, &gs->cap, gs->n + 1))
		return NULL;
	gs->g[gs->n] = (struct group){ .trail = trail, .first = UINT64_MAX };
	return &gs->g[gs->n++];
}

static int group_add(struct groups *gs, const struct btsdumpd_entry *e)
{
	const char *trail = ctl_meta(e, "TRAIL");
	struct group *g = group_of(gs, trail && *trail ? trail : NULL);

	if (!g)
		return -1;
	g->count++;
	if (e->timestamp < g->first)
		g->first = e->timestamp;
	if (!g->latest || e->timestamp >= g->last) {
		g->last = e->timestamp;
		g->latest = e;
	}
	return group_host(g, ctl_meta(e, "HOSTNAME"));
}

/* Most crashes first; among equals the most recent; "-" last. */
static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (!x->trail != !y->trail)
		return !x->trail ? 1 : -1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->last > y->last ? -1 : x->last < y->last;
}

static const char *group_exe(const struct group *g)
{
	const char *exe = ctl_meta(g->latest, "EXE");

	return exe ? exe : ctl_meta(g->latest, "COMM");
}

static void group_line(const struct group *g, int tw)
{
	char first[64], last[64], *f[3];

	ctl_fmt_time(g->first, first, sizeof(first));
	ctl_fmt_time(g->last, last, sizeof(last));
	f[0] = ctl_text_esc(g->trail ? g->trail : "-");
	f[1] = ctl_text_esc(ctl_sig_name(g->latest));
	f[2] = ctl_text_esc(group_exe(g));
	printf("%-12.12s %5zu %5zu %-*s %-*s %-7s %s\n", f[0] ? f[0] : "?", g->count,
	       g->nr_hosts, tw, first, tw, last, f[1] ? f[1] : "?", f[2] ? f[2] : "?");
	for (int i = 0; i < 3; i++)
		free(f[i]);
}

static void groups_text(const struct ctl *c, const struct groups *gs)
{
	int tw = 4;
	char tbuf[64];

	for (size_t i = 0; i < gs->n; i++) {
		ctl_fmt_time(gs->g[i].first, tbuf, sizeof(tbuf));
		tw = (int)strlen(tbuf) > tw ? (int)strlen(tbuf) : tw;
		ctl_fmt_time(gs->g[i].last, tbuf, sizeof(tbuf));
		tw = (int)strlen(tbuf) > tw ? (int)strlen(tbuf) : tw;
	}
	if (gs->n && !c->no_legend)
		printf("%-12s %5s %5s %-*s %-*s %-7s %s\n", "TRAIL", "COUNT", "HOSTS",
		       tw, "FIRST", tw, "LAST", "SIG", "EXE");
	for (size_t i = 0; i < gs->n; i++)
		group_line(&gs->g[i], tw);
}

static struct json_object *group_json(const struct group *g)
{
	struct json_object *o = json_object_new_object(), *hosts = json_object_new_array();

	for (size_t i = 0; hosts && i < g->nr_hosts; i++)
		json_object_array_add(hosts, btsdec_json_str(g->hosts[i]));
	if (!o)
		return NULL;
	json_object_object_add(o, "trail", btsdec_json_str(g->trail));
	json_object_object_add(o, "count", json_object_new_uint64(g->count));
	json_object_object_add(o, "hosts", json_object_new_uint64(g->nr_hosts));
	json_object_object_add(o, "hostnames", hosts);
	json_object_object_add(o, "first", json_object_new_uint64(g->first));
	json_object_object_add(o, "last", json_object_new_uint64(g->last));
	json_object_object_add(o, "last_id", btsdec_json_str(g->latest->id));
	json_object_object_add(o, "exe", btsdec_json_str(group_exe(g)));
	json_object_object_add(o, "signal", btsdec_json_str(ctl_sig_name(g->latest)));
	return o;
}

int ctl_list_groups(const struct ctl *c, const size_t *sel, size_t n)
{
	struct groups gs = { 0 };
	struct json_object *arr;
	int r = 0;

	for (size_t i = 0; i < n && !r; i++)
		r = group_add(&gs, &c->e[sel[i]]);
	if (r) {
		say("out of memory");
		r = BTS_EXIT_READ;
		goto out;
	}
	qsort(gs.g, gs.n, sizeof(*gs.g), group_cmp);
	if (!c->json) {
		groups_text(c, &gs);
		goto out;
	}
	arr = json_object_new_array();
	for (size_t i = 0; arr && i < gs.n; i++)
		json_object_array_add(arr, group_json(&gs.g[i]));
	r = ctl_json_print(c, arr);
out:
	for (size_t i = 0; i < gs.n; i++)
		free(gs.g[i].hosts);
	free(gs.g);
	return r;
}
