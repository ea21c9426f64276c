// SPDX-License-Identifier: Apache-2.0
/* execgate-bridge: listens on a sandbox's bridge socket and, for each
 * admitted client, opens a verified connection to the VMM socket (the
 * record's VMM, hybrid VSOCK handshake) and forwards bytes both ways until
 * the stream's lease is revoked. docs/operators.md ## execgate-bridge. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "bridge/bridge.h"
#include "frontend/opts.h"

#define EXIT_ERROR 1
#define EXIT_USAGE 2

volatile sig_atomic_t egb_stop;

static void on_signal(int sig)
{
	(void)sig;
	egb_stop = 1;
}

void egb_log(const char *fmt, ...)
{
	char line[2 * EG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line: lines of concurrent streams never interleave. */
	fprintf(stderr, "execgate-bridge: %s\n", line);
}

static const struct eg_opt opts[] = {
    EG_OPT("sandbox", "UUID", "the sandbox whose record is checked"),
    EG_OPT("listen", "PATH", "the bridge socket to listen on"),
    EG_OPT("vmm-socket", "PATH", "Firecracker's host-side VSOCK Unix socket"),
    EG_OPT("vsock-port", "N", "the guest port asked for in CONNECT N"),
    EG_OPT("pin-dir", "DIR", "pinned maps (default " EG_WORKER_DEFAULT_PIN_DIR ")"),
    EG_OPT("state-dir", "DIR", "state directory (default " EG_WORKER_DEFAULT_STATE_DIR ")"),
    EG_OPT_END,
};
enum { O_SANDBOX, O_LISTEN, O_VMM, O_PORT, O_PIN, O_STATE, O__COUNT };

/* -v/--verbose: the library's debug messages, libbpf's included. */
static void verbose(void)
{
	eg_log_set_level(EG_LOG_DEBUG);
}

static void usage(const struct eg_opts *p, FILE *f)
{
	(void)p;
	fprintf(
	    f,
	    "usage: execgate-bridge --sandbox UUID --listen PATH --vmm-socket PATH --vsock-port N\n"
	    "                       [--pin-dir DIR] [--state-dir DIR] [--verbose]\n"
	    "\n"
	    "The reference host bridge: listens on the sandbox's bridge socket and, for each\n"
	    "client holding a live grant, connects to the VMM socket, verifies that its\n"
	    "listener is the VMM of the installed record, does Firecracker's hybrid VSOCK\n"
	    "handshake (CONNECT N) and forwards bytes both ways. A stream is cut when its\n"
	    "lease is revoked (the record's epoch moved or the sandbox was retired).\n"
	    "\n");
	eg_opts_help_rows(f, opts);
	eg_opts_help_std(f);
	fprintf(f,
		"\n"
		"Runs in the foreground until SIGTERM or SIGINT; logs one line per connection on\n"
		"stderr (verified, refused and why, revoked, closed).\n");
}

/* 0, 1 (--help/--version done), or EXIT_USAGE. */
static int parse_args(int argc, char **argv, const char *val[O__COUNT])
{
	const struct eg_opt *o;
	const char *v;
	struct eg_opts p;
	int rc;

	eg_opts_verbose(verbose);
	eg_opts_init(&p, "execgate-bridge", NULL, argc, argv);
	p.tables[0] = opts;
	p.help = usage;
	while ((rc = eg_opts_next(&p, &o, &v)) == 1) {
		if (!*v)
			return eg_opts_usage(&p, "--%s: empty value", o->name);
		val[o - opts] = v;
	}
	if (rc < 0)
		return p.exit == EG_OPTS_EXIT_OK ? 1 : p.exit;
	for (int i = 0; i <= O_PORT; i++)
		if (!val[i])
			return eg_opts_usage(&p, "--%s is required", opts[i].name);
	return 0;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		egb_log("--listen %s: longer than %zu bytes", path, sizeof(sun.sun_path) - 1);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	/* A socket left by an earlier bridge is ours to replace; any other
	 * file is not. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			egb_log("--listen %s: exists and is not a socket", path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 128)) {
		egb_log("--listen %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Logs a change of the pins (unload, a new load): every check the streams
 * and new clients make goes through the handle, which reopens the new pins
 * or refuses while nothing is loaded; this only says so once. */
static void watch_pins(struct egb *b, uint64_t *seen, bool *gone)
{
	char err[EG_ERR_MAX] = "";
	uint64_t gen = 0;
	int rc = eg_worker_refresh(b->w, &gen, err, sizeof(err));

	if (rc == -ENOLINK && !*gone)
		egb_log("%s: refusing every client until then", err);
	else if (!rc && (*gone || gen != *seen))
		egb_log("pins replaced (execgate load): reopened, checking against the new maps");
	else if (rc && rc != -ENOLINK)
		egb_log("%s", err);
	if (rc == -ENOLINK || !rc)
		*gone = rc == -ENOLINK;
	*seen = gen;
}

int main(int argc, char **argv)
{
	const char *val[O__COUNT] = {0};
	struct eg_worker_config cfg = {0};
	struct sigaction sa = {.sa_handler = on_signal};
	struct egb b = {0};
	char err[EG_ERR_MAX];
	unsigned long next_id = 1;
	uint64_t pins_seen = 0;
	bool pins_gone = false;
	unsigned long long port;
	char *end;
	int rc, lfd = -1, exit_code = EXIT_ERROR;

	rc = parse_args(argc, argv, val);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (eg_uuid_from_text(val[O_SANDBOX], b.sandbox)) {
		fprintf(stderr, "execgate-bridge: --sandbox %s: not a UUID\n", val[O_SANDBOX]);
		return EXIT_USAGE;
	}
	errno = 0;
	port = strtoull(val[O_PORT], &end, 10);
	if (*end || errno || port > UINT32_MAX || val[O_PORT][0] < '0' || val[O_PORT][0] > '9') {
		fprintf(stderr, "execgate-bridge: --vsock-port %s: not a port (0 to %u)\n",
			val[O_PORT], UINT32_MAX);
		return EXIT_USAGE;
	}
	if (val[O_LISTEN][0] != '/' || val[O_VMM][0] != '/') {
		fprintf(stderr,
			"execgate-bridge: --listen and --vmm-socket must be absolute paths\n");
		return EXIT_USAGE;
	}
	eg_uuid_to_text(b.sandbox, b.sandbox_text);
	b.listen_path = val[O_LISTEN];
	b.vmm_path = val[O_VMM];
	b.vsock_port = (uint32_t)port;
	cfg.pin_dir = val[O_PIN];
	cfg.state_dir = val[O_STATE];

	setvbuf(stderr, NULL, _IOLBF, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (eg_worker_open(&cfg, &b.w, err, sizeof(err))) {
		egb_log("%s", err);
		return EXIT_ERROR;
	}
	lfd = listen_on(b.listen_path);
	if (lfd < 0)
		goto cleanup;
	egb_log("sandbox %s: listening on %s, VMM socket %s, vsock port %u", b.sandbox_text,
		b.listen_path, b.vmm_path, b.vsock_port);

	while (!egb_stop) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		int cfd;

		if (poll(&p, 1, EGB_LEASE_CHECK_MS) <= 0) {
			watch_pins(&b, &pins_seen, &pins_gone);
			continue;
		}
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				egb_log("accept on %s: %s", b.listen_path, strerror(errno));
			continue;
		}
		rc = egb_stream_start(&b, cfd, next_id);
		if (rc)
			egb_log("connection %lu: refused: no thread: %s", next_id, strerror(-rc));
		next_id++;
	}
	egb_log("stopping: closing every stream");
	exit_code = 0;

cleanup:
	if (lfd >= 0) {
		close(lfd);
		unlink(b.listen_path);
	}
	egb_streams_wait();
	eg_worker_close(b.w);
	return exit_code;
}
