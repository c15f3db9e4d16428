// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `btsdump gdbserver CORE [EXECUTABLE]`: serves a core to gdb over the
 * remote protocol on stdin/stdout (`target remote | btsdump gdbserver
 * ...`) or on a TCP port (`--port [HOST:]PORT`, loopback by default) as a
 * stopped process with a recorded branch trace, so gdb's own `record` and
 * reverse-execution commands work on it (lib/gdbstub.c); with --replay,
 * reverse execution served by the stub itself with recovered values
 * (lib/gdbreplay.c).  Messages go to
 * stderr, which gdb shows.  Exit codes: tools/exit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btsdec.h"
#include "cli.h"
#include "btsdump-gdbserver.h"
#include "escape.h"
#include "exit.h"
#include "gdbstub.h"

#define PROG	"btsdump gdbserver"
#define say(...)	btsdec_escape_line(stderr, PROG, __VA_ARGS__)

static void usage(FILE *out)
{
	fputs("Usage: btsdump gdbserver [OPTIONS] CORE [EXECUTABLE]\n"
	      "\n"
	      "Serves CORE to gdb's remote protocol on stdin/stdout as a stopped process\n"
	      "whose threads carry their recorded branch traces:\n"
	      "  (gdb) target remote | btsdump gdbserver CORE EXECUTABLE\n"
	      "  (gdb) record btrace bts\n"
	      "then gdb's record and reverse-execution commands work on the core.\n"
	      "With --replay the stub serves reverse execution itself, with the\n"
	      "register and memory values recovered at each instruction (no record):\n"
	      "  (gdb) target remote | btsdump gdbserver --replay CORE EXECUTABLE\n"
	      "  (gdb) reverse-stepi\n"
	      "\n"
	      "  -d, --debuginfo-path P    where to look for separate debuginfo\n"
	      "  -p, --port [HOST:]PORT    serve one connection on a TCP port instead\n"
	      "                            (HOST 127.0.0.1 unless given; PORT 0: any free\n"
	      "                            one): (gdb) target remote HOST:PORT\n"
	      "  -r, --replay              reverse execution with recovered values\n"
	      "  -h, --help                this text\n"
	      "      --version             the version\n"
	      "\n"
	      "CORE may be a pipe, <(zstdcat CORE.zst) (spooled to memory first).\n"
	      "Exit status: 0 gdb detached; 1 usage; 2 core unreadable, port unusable or\n"
	      "connection lost.\n",
	      out);
}

/* A usage error's status when "[HOST:]PORT" ends in a number above 65535
 * (getaddrinfo takes 99999 modulo 65536), else 0: what is no number at all
 * is getaddrinfo's to refuse (tcp_listen). */
static int parse_port(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	const char *num = colon ? colon + 1 : spec;
	unsigned long long v;

	if (!*num || num[strspn(num, "0123456789")])	/* decimal, as getaddrinfo */
		return 0;
	errno = 0;
	v = strtoull(num, NULL, 10);
	if (errno || v > 65535)
		return bts_cli_usage_error("btsdump", "--port: out of range (0-65535): '%s'", spec);
	return 0;
}

/* 0, -1 after --help or --version (*status set), or a usage error's status. */
static int parse(int argc, char **argv, struct btsdec_symopts *so,
		 const char **port, bool *replay, int *status)
{
	static const struct option opts[] = {
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "replay", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		BTS_CLI_OPTION_VERSION,
		{ 0 }
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, BTS_CLI_OPTSTRING "d:hp:r", opts, NULL)) != -1) {
		switch (c) {
		case 'd': so->debuginfo_path = optarg; break;
		case 'p':
			if ((ret = parse_port(optarg)))
				return ret;
			*port = optarg;
			break;
		case 'r': *replay = true; break;
		case 'h': usage(stdout); *status = 0; return -1;
		case BTS_CLI_VERSION: *status = bts_cli_version("btsdump"); return -1;
		default: return bts_cli_bad_option("btsdump", argv, c);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return bts_cli_usage_error("btsdump", argc - optind < 1 ? "gdbserver: missing CORE" :
					   "gdbserver: too many arguments");
	if (!strcmp(argv[optind], "-"))	/* stdin carries the protocol */
		return bts_cli_usage_error("btsdump", "gdbserver: CORE cannot be \"-\" "
					   "(stdin is gdb's): give a file or <(zstdcat CORE.zst)");
	return 0;
}

/* gdb polls a pipe target's stderr (the stub's) without blocking after
 * every byte it reads (generic_readchar() in gdb's ser-base.c): one failed
 * read(2) a byte, ~57 M of them for a 1 M-record trace.  Once the session
 * runs the stub has nothing more to say there: stderr becomes /dev/null,
 * gdb reads end-of-file on its end once and stops polling. */
static void release_stderr(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* Listens on "[HOST:]PORT" (HOST 127.0.0.1 unless given, "[v6]" allowed)
 * and announces the port as gdbserver does: the socket, or -1 (said). */
static int tcp_listen(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *res, *ai;
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char host[256] = "127.0.0.1", serv[NI_MAXSERV];
	int fd = -1, on = 1, ret;

	if (colon && colon > spec) {
		size_t n = (size_t)(colon - spec);
		const char *h = spec;

		if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
			h++, n -= 2;
		snprintf(host, sizeof(host), "%.*s", (int)n, h);
	}
	if ((ret = getaddrinfo(host, colon ? colon + 1 : spec, &hints, &res))) {
		say("--port %s: %s", spec, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1)) {
			ret = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &salen) ||
	    getnameinfo((struct sockaddr *)&sa, salen, NULL, 0, serv, sizeof(serv),
			NI_NUMERICSERV)) {
		say("--port %s: %s", spec, strerror(fd < 0 && ret ? -ret : errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(stderr, "Listening on port %s\n", serv);
	return fd;
}

/* The connection: stdin/stdout, or the one peer accepted on the port.
 * 0, or an exit status. */
static int connect_peer(const char *port, int *in, int *out)
{
	int l, c, on = 1;

	if (!port) {
		*in = STDIN_FILENO;
		*out = STDOUT_FILENO;
		release_stderr();
		return 0;
	}
	if ((l = tcp_listen(port)) < 0)
		return BTS_EXIT_READ;
	while ((c = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (c < 0)
		say("--port %s: accept: %s", port, strerror(errno));
	close(l);
	if (c < 0)
		return BTS_EXIT_READ;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	*in = *out = c;
	return 0;
}

static int serve(const char *path, const struct btsdec_symopts *so,
		 const char *port, bool replay)
{
	struct btsdec_core *core = NULL;
	struct btsdec_sym *sym = NULL;
	struct btsdec_gdbstub *stub = NULL;
	struct btsdec_err err;
	int ret = BTS_EXIT_READ, in = -1, out = -1;

	if (btsdec_core_open(path, &core, &err) ||
	    btsdec_sym_open_core(core, so, &sym, &err) ||
	    btsdec_gdbstub_new(core, sym, so->executable, &stub, &err)) {
		say("%s", err.msg);
		goto out;
	}
	if (replay)
		btsdec_gdbstub_set_replay(stub);
	for (size_t i = 0; i < btsdec_core_nr_rejects(core); i++)
		say("warning: %s", btsdec_core_reject(core, i));
	if ((ret = connect_peer(port, &in, &out)))
		goto out;
	ret = BTS_EXIT_READ;
	if (btsdec_gdbstub_serve(stub, in, out, &err))
		say("%s", err.msg);
	else
		ret = BTS_EXIT_OK;
	if (port)
		close(in);
out:
	btsdec_gdbstub_free(stub);
	btsdec_sym_close(sym);
	btsdec_core_close(core);
	return ret;
}

int gdbserver_main(int argc, char **argv)
{
	struct btsdec_symopts so = { 0 };
	const char *path, *port = NULL;
	bool replay = false;
	char buf[64];
	int status = 0, fd = -1, ret = parse(argc, argv, &so, &port, &replay, &status);

	if (ret)
		return ret < 0 ? status : ret;
	if (!port && isatty(STDOUT_FILENO)) {
		say("stdout is a terminal: run it from gdb, "
		    "`target remote | btsdump gdbserver CORE [EXECUTABLE]`, "
		    "or give --port");
		return BTS_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is an error, not a death */
	so.executable = argc - optind == 2 ? argv[optind + 1] : NULL;
	ret = bts_cli_input_path(argv[optind], buf, sizeof(buf), &path, &fd);
	if (ret) {
		say("%s: %s", argv[optind], strerror(-ret));
		return BTS_EXIT_READ;
	}
	ret = serve(path, &so, port, replay);
	if (fd >= 0)
		close(fd);
	return ret;
}
