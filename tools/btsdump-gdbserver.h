/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `btsdump gdbserver`: the entry point tools/btsdump.c dispatches to
 * (tools/btsdump-gdbserver.c).
 */
#ifndef BTS_TOOLS_GDBSERVER_H
#define BTS_TOOLS_GDBSERVER_H

int gdbserver_main(int argc, char **argv);

#endif
