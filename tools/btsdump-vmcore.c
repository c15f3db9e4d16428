// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump vmcore VMCORE [VMLINUX|SYSTEM.MAP]`: each CPU's last kernel
 * branches from a kernel dump (lib/vmcore.c reads it, lib/vmreport.c
 * prints it).  VMCORE may be "-" or a pipe (spooled, tools/cli.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btsdec.h"
#include "btsdump.h"

static void usage(void)
{
	fputs("Usage: btsdump vmcore [OPTIONS] VMCORE [VMLINUX|SYSTEM.MAP]\n"
	      "\n"
	      "Prints each CPU's last kernel branches from a vmcore (ELF, or\n"
	      "makedumpfile's kdump-compressed form, its pages raw, zlib, lzo, snappy\n"
	      "or zstd, also as its flattened -F stream), found through VMCOREINFO alone:\n"
	      "no vmlinux is needed.  With System.map addresses get names; with\n"
	      "vmlinux each branch is decoded as in a core's report: its kind (read\n"
	      "from vmlinux's code), names, and file:line from its DWARF.\n"
	      "A CPU whose ring is not in the dump falls back to its crash-note copy.\n"
	      "VMCORE \"-\": standard input.\n"
	      "\n"
	      "  -C, --cpu LIST      only these CPUs (comma-separated)\n"
	      "  -n, --last N        the newest N branches per CPU (0, the default: all)\n"
	      "  -c, --calls         call/return history per CPU (text; needs VMLINUX)\n"
	      "  -S, --no-symbols    addresses only (from / to / flags words)\n"
	      "  -j, --json          JSON instead of text\n"
	      "  -h, --help          this text\n"
	      "      --version       the version\n"
	      "\n"
	      "Exit status: 0 traces printed; 1 usage; 2 vmcore unreadable; 3 no\n"
	      "branch trace in it; 4 some CPU's ring unreadable (its note shown).\n", stdout);
}

/* Exit status of a report: btsdec_vmcore_report's outcome, mapped. */
static int vm_exit(int ret, const struct btsdec_vmreport_result *res,
		   const struct btsdec_vmreport_opts *o, const struct btsdec_err *err)
{
	if (ret == -ENODATA) {
		if (!o->json)
			say("%s", err->msg);
		return BTS_EXIT_NONE;
	}
	if (ret) {
		say("%s", err->msg);
		return BTS_EXIT_READ;
	}
	return res->rings_unreadable ? BTS_EXIT_PARTIAL : 0;
}

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse_vm_args(int argc, char **argv, struct btsdec_vmreport_opts *o,
			 int *status)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'C' }, { "last", required_argument, NULL, 'n' },
		{ "calls", no_argument, NULL, 'c' },
		{ "no-symbols", no_argument, NULL, 'S' }, { "json", no_argument, NULL, 'j' },
		{ "raw", no_argument, NULL, 'S' },	/* before 0.2: --raw, -r */
		{ "help", no_argument, NULL, 'h' }, BTS_CLI_OPTION_VERSION, { NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, ret;

	while ((c = getopt_long(argc, argv, BTS_CLI_OPTSTRING "C:n:cSrjh", opts, NULL)) != -1) {
		switch (c) {
		case 'C': o->cpus = optarg; break;
		case 'c': o->calls = true; break;
		case 'n':
			if ((ret = bts_cli_parse_u64(optarg, &v)))	/* 0: the whole ring */
				return usage_error("--last: %s: '%s'",
						   bts_cli_number_error(ret), optarg);
			o->last = v;
			break;
		case 'S': case 'r': o->raw = true; break;
		case 'j': o->json = true; break;
		case 'h': usage(); *status = 0; return -1;
		case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
		default: return bts_cli_bad_option("btsdump", argv, c);
		}
	}
	if (optind >= argc)
		return usage_error("vmcore: missing VMCORE");
	if (argc - optind > 2)
		return usage_error("too many arguments: '%s'", argv[optind + 2]);
	o->symbols = argv[optind + 1];
	if (o->calls && (o->json || o->raw || !o->symbols))
		return usage_error("--calls is a text report and needs VMLINUX");
	return 0;
}

int btsdump_vmcore_main(int argc, char **argv)
{
	struct btsdec_vmreport_opts o = { .last = 0, .prog = "btsdump" };
	struct btsdec_vmreport_result res;
	struct btsdec_vmcore *vc;
	struct btsdec_err err;
	const char *path;
	char buf[64];
	int fd, ret, status = 0;

	ret = parse_vm_args(argc, argv, &o, &status);
	if (ret)
		return ret < 0 ? status : ret;
	ret = bts_cli_input_path(argv[optind], buf, sizeof(buf), &path, &fd);
	if (ret) {
		say("%s: %s", argv[optind], strerror(-ret));
		return BTS_EXIT_READ;
	}
	ret = btsdec_vmcore_open(path, &vc, &err);
	if (fd >= 0)
		close(fd);
	if (ret) {
		say("%s", err.msg);
		return BTS_EXIT_READ;
	}
	ret = btsdec_vmcore_report(stdout, vc, argv[optind], &o, &res, stderr, &err);
	btsdec_vmcore_close(vc);
	return vm_exit(ret, &res, &o, &err);
}
