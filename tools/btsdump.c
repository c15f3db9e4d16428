// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdump: the command-line reader of branch traces in core files, for
 * people who do not want a debugger (docs/btsdump.md).  Picks the mode by
 * the first argument: `btsdump vmcore` (btsdump-vmcore.c), `btsdump
 * add-note` (btsdump-addnote.c), `btsdump gdbserver`, `btsdump regs`
 * (btsdump-regs.c), `btsdump why` (btsdump-why.c), else a core's report
 * (btsdump-core.c).
 */
#include <string.h>

#include "btsdump.h"
#include "btsdump-gdbserver.h"

int main(int argc, char **argv)
{
	int status;

	if (argc > 1 && !strcmp(argv[1], "add-note"))
		status = btsdump_addnote_main(argc - 1, argv + 1);
	else if (argc > 1 && !strcmp(argv[1], "vmcore"))
		status = btsdump_vmcore_main(argc - 1, argv + 1);
	else if (argc > 1 && !strcmp(argv[1], "gdbserver"))
		status = gdbserver_main(argc - 1, argv + 1);
	else if (argc > 1 && !strcmp(argv[1], "regs"))
		status = btsdump_regs_main(argc - 1, argv + 1);
	else if (argc > 1 && !strcmp(argv[1], "why"))
		status = btsdump_why_main(argc - 1, argv + 1);
	else
		status = btsdump_core_main(argc, argv);
	return bts_cli_stdout_done("btsdump", status);
}
