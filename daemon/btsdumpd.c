// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btsdumpd: the kernel's core_pattern handler (docs/btsdumpd.md).  As the
 * handler it reads what /proc says of the dumping process and opens its ELF
 * files (mapped.c), then hands the core pipe and those descriptors to the
 * socket-activated service (btsdumpd --serve) or, with no
 * service, collects the crash itself (collect.c).  Also the service side
 * of the hand-off, the kdump harvest (harvest.c), the companion beside
 * systemd-coredump (companion.c) and a vacuum run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <cap-ng.h>
#include <systemd/sd-daemon.h>

#include "btsdumpd.h"
#include "cli.h"
#include "entries.h"
#include "util.h"

#define SOCKET_DEFAULT	"/run/btsdumpd/btsdumpd.socket"
#define FIELD_MAX	(64 * 1024)	/* one metadata datagram */
#define CMDLINE_MAX	4096
#define HANDOFF_TIMEOUT	10		/* seconds to wait for the service */
#define FD_MESSAGE	"CORE_FD"

enum mode { MODE_HANDLER, MODE_SERVE, MODE_HARVEST, MODE_VACUUM, MODE_COMPANION,
	    MODE_LBR_COLLECTOR };

static void usage(void)
{
	fputs("Usage: btsdumpd [OPTIONS] PID UID GID SIGNAL TIMESTAMP COMM [HOSTNAME]\n"
	      "  or:  btsdumpd [OPTIONS] --serve | --vacuum | --harvest [DIR...]\n"
	      "  or:  btsdumpd [OPTIONS] --companion [--once] [--journal-dir DIR]\n"
	      "  or:  btsdumpd [OPTIONS] --lbr-collector\n"
	      "\n"
	      "The core_pattern handler of btscrash:\n"
	      "  kernel.core_pattern=|/usr/libexec/btsdumpd --dump-mode=%d %P %u %g %s %t %e\n"
	      "Stores each core with its branch-trace report (docs/btsdumpd.md).\n"
	      "\n"
	      "  --store DIR      the store (default " BTSDUMPD_STORE_DEFAULT ")\n"
	      "  --config FILE    configuration (default " BTSDUMPD_CONFIG_DEFAULT ", drop-ins FILE.d/)\n"
	      "  --socket PATH    the service's socket (default " SOCKET_DEFAULT ")\n"
	      "  --direct         collect here, never hand off to the service\n"
	      "  --dump-mode N    the kernel's %d: 2 = a process that changed credentials,\n"
	      "                   whose entry stays root-only\n"
	      "  --log TARGET     auto, journal, kmsg or stderr (default auto)\n"
	      "  --serve          one connection of btsdumpd@.service (socket activation)\n"
	      "  --harvest        report on kdump vmcores under DIR (default /var/crash)\n"
	      "  --vacuum         apply MaxUse and KeepFree now: the oldest cores go first,\n"
	      "                   a trail (meta, reports) only while trails exceed MaxUse\n"
	      "  --companion      beside systemd-coredump: report on the cores it stores,\n"
	      "                   following its journal entries (btsdumpd.service)\n"
	      "  --once           with --companion: the entries there now, then exit\n"
	      "  --journal-dir D  with --companion: read the journal files in D\n"
	      "  --lbr-collector  keep every CPU's LBR on (perf) and take it at a\n"
	      "                   fatal user fault (BPF) for the handler: stock kernels\n"
	      "  --lbr-dir DIR    the collector's snapshots (default " BTSDUMPD_LBR_DIR_DEFAULT ")\n"
	      "  --lbr-no-kept    with --lbr-collector: the BPF program that does not read\n"
	      "                   perf's count of kept entries, as where it cannot\n"
	      "                   (no CONFIG_KALLSYMS_ALL); for tests and diagnosis\n"
	      "  -h, --help       this text\n"
	      "  --version        the version\n"
	      "\n"
	      "Exit status: 0 handed off, stored, or dropped by a limit (logged);\n"
	      "1 bad arguments; 2 the store could not be written.\n", stdout);
}

/* Reads a small /proc file; NULs become spaces, trailing newline cut. */
static int read_proc(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return n ? 0 : -ENODATA;
}

/* The arguments the kernel passes (%p %u %g %s %t %e [%h]), checked. */
static int crash_from_args(struct btsdumpd_crash *cr, char **pos, int npos)
{
	static const unsigned int bits[] = { BTSDUMPD_HAVE_PID, BTSDUMPD_HAVE_UID,
		BTSDUMPD_HAVE_GID, BTSDUMPD_HAVE_SIGNAL, BTSDUMPD_HAVE_TIMESTAMP };
	int i;

	if (npos < 6 || npos > 7)
		return -EINVAL;
	for (i = 0; i < 5; i++)
		if (btsdumpd_crash_set_number(cr, bits[i], pos[i]))
			return -EINVAL;
	return btsdumpd_crash_set(&cr->comm, pos[5]) ?:
	       btsdumpd_crash_set(&cr->hostname, npos == 7 ? pos[6] : NULL);
}

/* Without the kernel's %d: real, effective, saved and filesystem IDs that
 * differ mark a process that changed credentials (setuid and the like). */
static bool creds_changed(pid_t pid)
{
	char buf[4096], *l;
	unsigned long a, b, c, d;
	int i;

	if (read_proc(pid, "status", buf, sizeof(buf)))
		return false;
	for (i = 0; i < 2; i++) {
		l = strstr(buf, i ? "\nGid:" : "\nUid:");
		if (l && sscanf(l + 5, "%lu %lu %lu %lu", &a, &b, &c, &d) == 4 &&
		    (a != b || a != c || a != d))
			return true;
	}
	return false;
}

/* What /proc says of the dumping process, read while it still exists
 * (allocation failures leave a fact out). */
static void crash_from_proc(struct btsdumpd_crash *cr)
{
	pid_t pid = cr->pid;
	char buf[CMDLINE_MAX], path[64], *nl;
	ssize_t n;

	if (!read_proc(pid, "comm", buf, sizeof(buf)))
		btsdumpd_crash_set(&cr->comm, buf);
	if (!read_proc(pid, "cmdline", buf, sizeof(buf)))
		btsdumpd_crash_set(&cr->cmdline, buf);
	if (!read_proc(pid, "cgroup", buf, sizeof(buf))) {
		/* the first line, "ID:CONTROLLERS:PATH": its path */
		nl = strchr(buf, '\n');
		if (nl)
			*nl = '\0';
		nl = strchr(buf, ':');
		nl = nl ? strchr(nl + 1, ':') : NULL;
		btsdumpd_crash_set(&cr->cgroup, nl ? nl + 1 : buf);
	}
	if (cr->dump_mode < 0 && creds_changed(pid))
		cr->dump_mode = 2;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		btsdumpd_crash_set(&cr->exe, buf);
	}
	if (!cr->hostname && !gethostname(buf, 256)) {
		buf[255] = '\0';
		btsdumpd_crash_set(&cr->hostname, buf);
	}
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (char *)FD_MESSAGE, sizeof(FD_MESSAGE) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The service's "OK" once it holds the core: 0, else -errno (the caller
 * collects itself).  After HANDOFF_TIMEOUT the handler takes the core
 * back: shutting its receiving side makes a later "OK" fail in the
 * service (EPIPE), which then leaves the core alone; one sent before the
 * shutdown is still read here (the two exclude each other under the
 * socket's lock), so exactly one of them stores the crash. */
static int await_ack(int sock)
{
	char ack[8];
	ssize_t n = recv(sock, ack, sizeof(ack), 0);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (shutdown(sock, SHUT_RD))
			return -errno;
		n = recv(sock, ack, sizeof(ack), MSG_DONTWAIT);
		if (n <= 0)
			return -ETIMEDOUT;
	}
	return n == 2 && !memcmp(ack, "OK", 2) ? 0 : n < 0 ? -errno : -EPROTO;
}

/* Hands the core pipe (fd 0) and the metadata to the service; 0 once the
 * service has acknowledged, else -errno (the caller collects itself). */
static int handoff(struct btsdumpd_ctx *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { HANDOFF_TIMEOUT, 0 };
	char **fields = NULL;
	int sock, ret, n;
	size_t i;

	if (strlen(c->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, c->socket_path);
	ret = btsdumpd_crash_handoff_fields(&c->crash, &fields);
	if (ret)
		return ret;
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		btsdumpd_fields_free(fields);
		return -errno;
	}
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		ret = -errno;
	for (i = 0; !ret && fields[i]; i++) {
		n = strnlen(fields[i], FIELD_MAX - 1);
		if (send(sock, fields[i], n, MSG_NOSIGNAL) < 0)
			ret = -errno;
	}
	btsdumpd_fields_free(fields);
	if (!ret)
		ret = btsdumpd_mapped_send(sock, &c->mapped);
	if (!ret)
		ret = send_fd(sock, STDIN_FILENO);
	if (!ret)
		ret = await_ack(sock);
	close(sock);
	return ret;
}

/* ---- Privileges ------------------------------------------------------------ */

/* Once /proc/PID is read, root keeps only CAP_SETUID and CAP_SETGID (to
 * start the analysis as AnalyzeUser): the store is root's own, so writing
 * it needs no capability.  The bounding set is cut too where CAP_SETPCAP
 * allows (not in the service, whose unit bounds it already; asked for only
 * then, as libcap-ng versions differ on whether trying is an error);
 * inheritable and ambient sets end up empty. */
static void drop_capabilities(void)
{
	capng_select_t set = CAPNG_SELECT_CAPS;
	int r;

	if (geteuid() != 0)
		return;
	if (capng_get_caps_process()) {
		btsdumpd_log(LOG_WARNING, "dropping capabilities: capng_get_caps_process failed");
		return;
	}
	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP))
		set = CAPNG_SELECT_BOTH;
	capng_clear(CAPNG_SELECT_BOTH);
	capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
		      CAP_SETUID, CAP_SETGID, -1);
	r = capng_apply(set);
	if (r)
		btsdumpd_log(LOG_WARNING, "dropping capabilities: capng_apply: error %d: %m", r);
}

static int run_handler(struct btsdumpd_ctx *c, char **pos, int npos)
{
	int ret;

	if (npos < 6 && isatty(STDERR_FILENO))	/* run by hand, not by the kernel */
		return bts_cli_usage_error("btsdumpd", "%s: expected PID UID GID SIGNAL "
					   "TIMESTAMP COMM [HOSTNAME], as the kernel passes them",
					   npos ? "too few arguments" : "missing arguments");
	if (crash_from_args(&c->crash, pos, npos)) {
		btsdumpd_log(LOG_ERR, "bad arguments from the kernel; expected "
			     "PID UID GID SIGNAL TIMESTAMP COMM [HOSTNAME]");
		return 1;
	}
	crash_from_proc(&c->crash);
	btsdumpd_mapped_open(&c->mapped, c->crash.pid);
	if (c->mapped.full)
		btsdumpd_log(LOG_NOTICE, "process %d maps more than %d ELF files: the analysis "
			     "finds the others by path only", (int)c->crash.pid,
			     BTSDUMPD_MAPPED_MAX);
	drop_capabilities();
	if (!c->direct) {
		ret = handoff(c);
		if (!ret)
			return 0;
		if (ret != -ENOENT && ret != -ECONNREFUSED && ret != -ENOSYS &&
		    ret != -EAFNOSUPPORT)	/* no service, or no sockets at all */
			btsdumpd_log(LOG_WARNING, "hand-off to %s failed: %s; collecting here",
				     c->socket_path, strerror(-ret));
	}
	btsdumpd_load_config(c);
	return btsdumpd_collect(c, STDIN_FILENO) ? 2 : 0;
}

/* ---- The service side of the hand-off ---------------------------------- */

/* One datagram: a KEY=value field, the process's mapped files (kept in
 * c->mapped), or the core's fd (returned, >= 0). */
static int receive_one(struct btsdumpd_ctx *c, int sock, char *buf)
{
	char cbuf[CMSG_SPACE(BTSDUMPD_MAPPED_CHUNK * sizeof(int))];
	struct iovec iov = { buf, FIELD_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t n;
	int fd, ret;

	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	fd = btsdumpd_mapped_receive(&c->mapped, &mh, n);
	if (fd != -ENODATA)
		return fd;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	ret = btsdumpd_crash_handoff_field(&c->crash, buf, n);
	return ret ? ret : -EAGAIN;	/* more to come */
}

static int run_serve(struct btsdumpd_ctx *c)
{
	struct timeval tv = { HANDOFF_TIMEOUT, 0 };
	int sock = sd_listen_fds(1) == 1 ? SD_LISTEN_FDS_START : STDIN_FILENO;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char *buf = malloc(FIELD_MAX + 1);
	const char *missing;
	int fd = -EAGAIN;

	if (!buf)
		return 2;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.uid != 0) {
		btsdumpd_log(LOG_ERR, "refusing a hand-off from a peer that is not root");
		return 1;
	}
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (fd == -EAGAIN)
		fd = receive_one(c, sock, buf);
	free(buf);
	if (fd < 0) {
		btsdumpd_log(LOG_ERR, "hand-off: %s", strerror(-fd));
		return 1;
	}
	missing = btsdumpd_crash_missing(&c->crash);
	if (missing) {
		btsdumpd_log(LOG_ERR, "hand-off: missing or bad %s", missing);
		close(fd);
		return 1;
	}
	/* no acknowledgement, no core: the handler, past HANDOFF_TIMEOUT,
	 * collects it itself (await_ack) */
	if (send(sock, "OK", 2, MSG_NOSIGNAL) != 2) {
		btsdumpd_log(LOG_WARNING, "hand-off: acknowledging: %m; the handler "
			     "stores the crash itself");
		close(fd);
		close(sock);
		return 1;
	}
	close(sock);
	btsdumpd_load_config(c);
	return btsdumpd_collect(c, fd) ? 2 : 0;
}

/* ---- main ------------------------------------------------------------------ */

static int parse_log(const char *s, enum btsdumpd_log_target *t)
{
	static const char *const names[] = { "auto", "journal", "kmsg", "stderr" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return *t = i, 0;
	return -EINVAL;
}

#define usage_error(...)	bts_cli_usage_error("btsdumpd", __VA_ARGS__)

struct args {
	enum btsdumpd_log_target log;
	enum mode mode;
	const char *journal_dir;
	bool once;
	bool lbr_no_kept;
};

/* One option into c and a: 0, -1 after --help or --version (*status
 * set), or a usage error's status. */
static int option(int opt, char **argv, struct btsdumpd_ctx *c, struct args *a,
		  int *status)
{
	switch (opt) {
	case 's': c->store = optarg; return 0;
	case 'c': c->config_path = optarg; return 0;
	case 'S': c->socket_path = optarg; return 0;
	case 'd': c->direct = true; return 0;
	case 'D':
		if (strcmp(optarg, "0") && strcmp(optarg, "1") && strcmp(optarg, "2"))
			return usage_error("--dump-mode: 0, 1 or 2, not '%s'", optarg);
		c->crash.dump_mode = *optarg - '0';
		return 0;
	case 'l':
		if (parse_log(optarg, &a->log))
			return usage_error("--log: auto, journal, kmsg or stderr, not '%s'",
					   optarg);
		return 0;
	case 'V': a->mode = MODE_SERVE; return 0;
	case 'H': a->mode = MODE_HARVEST; return 0;
	case 'U': a->mode = MODE_VACUUM; return 0;
	case 'C': a->mode = MODE_COMPANION; return 0;
	case 'O': a->once = true; return 0;
	case 'J': a->journal_dir = optarg; return 0;
	case 'L': a->mode = MODE_LBR_COLLECTOR; return 0;
	case 'B': c->lbr_dir = optarg; return 0;
	case 'K': a->lbr_no_kept = true; return 0;
	case 'h': usage(); *status = 0; return -1;
	case BTS_CLI_VERSION: *status = bts_cli_version("btsdumpd"); return -1;
	default: return bts_cli_bad_option("btsdumpd", argv, opt);
	}
}

static int parse_args(int argc, char **argv, struct btsdumpd_ctx *c, struct args *a,
		      int *status)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' }, { "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 'S' }, { "direct", no_argument, NULL, 'd' },
		{ "log", required_argument, NULL, 'l' }, { "serve", no_argument, NULL, 'V' },
		{ "harvest", no_argument, NULL, 'H' }, { "vacuum", no_argument, NULL, 'U' },
		{ "dump-mode", required_argument, NULL, 'D' },
		{ "companion", no_argument, NULL, 'C' }, { "once", no_argument, NULL, 'O' },
		{ "journal-dir", required_argument, NULL, 'J' },
		{ "lbr-collector", no_argument, NULL, 'L' },
		{ "lbr-dir", required_argument, NULL, 'B' },
		{ "lbr-no-kept", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' }, BTS_CLI_OPTION_VERSION, { NULL, 0, NULL, 0 },
	};
	int opt, r;

	while ((opt = getopt_long(argc, argv, "+" BTS_CLI_OPTSTRING "h", opts, NULL)) != -1)
		if ((r = option(opt, argv, c, a, status)))
			return r;
	return 0;
}

int main(int argc, char **argv)
{
	struct btsdumpd_ctx c = { .store = BTSDUMPD_STORE_DEFAULT,
				  .config_path = BTSDUMPD_CONFIG_DEFAULT,
				  .socket_path = SOCKET_DEFAULT,
				  .lbr_dir = BTSDUMPD_LBR_DIR_DEFAULT,
				  .crash = { .dump_mode = -1 } };
	struct args a = { .log = BTSDUMPD_LOG_AUTO, .mode = MODE_HANDLER };
	char *defdir[] = { (char *)"/var/crash" };
	int opt, ret, status = 0;

	/* the kernel starts the handler with only fd 0, the core pipe */
	for (opt = 1; opt <= 2; opt++)
		if (fcntl(opt, F_GETFD) < 0 && open("/dev/null", O_RDWR) != opt)
			return 2;
	umask(0077);
	ret = parse_args(argc, argv, &c, &a, &status);
	if (ret)
		return ret < 0 ? status : ret;
	btsdumpd_log_init(a.log);
	/* the handler reads /proc/PID first; the collector keeps CAP_BPF and
	 * CAP_PERFMON (the unit grants no more) */
	if (a.mode != MODE_HANDLER && a.mode != MODE_LBR_COLLECTOR)
		drop_capabilities();
	switch (a.mode) {
	case MODE_SERVE:
		ret = run_serve(&c);
		break;
	case MODE_HARVEST:
		btsdumpd_load_config(&c);
		ret = btsdumpd_harvest(&c, optind < argc ? argv + optind : defdir,
				       optind < argc ? argc - optind : 1) ? 2 : 0;
		break;
	case MODE_VACUUM:
		btsdumpd_load_config(&c);
		ret = btsdumpd_vacuum(&c, NULL) ? 2 : 0;
		break;
	case MODE_LBR_COLLECTOR:
		ret = btsdumpd_lbr_collector(c.lbr_dir, a.lbr_no_kept) ? 2 : 0;
		break;
	case MODE_COMPANION:
		ret = btsdumpd_companion(&c, a.journal_dir, a.once) ? 2 : 0;
		break;
	default:
		ret = run_handler(&c, argv + optind, argc - optind);
		break;
	}
	btsdumpd_mapped_close(&c.mapped);
	btsdumpd_crash_free(&c.crash);
	return ret;
}
