// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpctl status: whether the stock-kernel LBR collector (btsdumpd
 * --lbr-collector, btsdumpd-lbr.service) is armed, or the one line saying
 * why not, from its status file (docs/btsdumpd.md "Stock kernels").
 * Reads one small file; process context.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "btsdumpctl.h"
#include "exit.h"

#define STATUS_FILE	BTSDUMPD_LBR_DIR_DEFAULT "/status"

/* The collector's state into line: 0 armed, else 1 (line says why). */
static int collector_state(char *line, size_t len)
{
	FILE *f = fopen(STATUS_FILE, "re");

	if (!f) {
		snprintf(line, len, "no LBR collector: %s", errno == ENOENT ?
			 "not running (btsdumpd-lbr.service)" : strerror(errno));
		return 1;
	}
	if (!fgets(line, len, f))
		snprintf(line, len, "no LBR collector: empty %s", STATUS_FILE);
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (!strcmp(line, "armed")) {
		snprintf(line, len, "LBR collector: armed");
		return 0;
	}
	return 1;
}

int cmd_status(const struct ctl *c)
{
	struct json_object *o;
	char line[512];
	int off = collector_state(line, sizeof(line));

	if (!c->json) {
		btsdec_escape_line(stdout, NULL, "%s", line);
		return 0;
	}
	o = json_object_new_object();
	json_object_object_add(o, "lbr_collector", json_object_new_boolean(!off));
	if (off)
		json_object_object_add(o, "reason", btsdec_json_str(line +
			strlen("no LBR collector: ")));
	return ctl_json_print(c, o);
}
