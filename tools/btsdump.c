// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdump: the command-line reader of branch traces in core files, for
 * people who do not want a debugger (docs/btsdump.md).  Picks the mode by
 * the first argument: `btsdump vmcore` (btsdump-vmcore.c), `btsdump
 * add-note` (btsdump-addnote.c), else a core's report (btsdump-core.c).
 */
#include <string.h>

#include "btsdump.h"
#include "btsdump-gdbserver.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "add-note"))
		return btsdump_addnote_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "vmcore"))
		return btsdump_vmcore_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "gdbserver"))
		return gdbserver_main(argc - 1, argv + 1);
	return btsdump_core_main(argc, argv);
}
