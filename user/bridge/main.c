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

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: execgate-bridge --sandbox UUID --listen PATH --vmm-socket PATH --vsock-port N\n"
	    "                       [--pin-dir DIR] [--state-dir DIR]\n"
	    "\n"
	    "The reference host bridge: listens on the sandbox's bridge socket and, for each\n"
	    "client holding a live grant, connects to the VMM socket, verifies that its\n"
	    "listener is the VMM of the installed record, does Firecracker's hybrid VSOCK\n"
	    "handshake (CONNECT N) and forwards bytes both ways. A stream is cut when its\n"
	    "lease is revoked (the record's epoch moved or the sandbox was retired).\n"
	    "\n"
	    "  --sandbox UUID     the sandbox whose record is checked\n"
	    "  --listen PATH      the bridge socket to listen on\n"
	    "  --vmm-socket PATH  Firecracker's host-side VSOCK Unix socket\n"
	    "  --vsock-port N     the guest port asked for in CONNECT N\n"
	    "  --pin-dir DIR      pinned maps (default " EG_WORKER_DEFAULT_PIN_DIR ")\n"
	    "  --state-dir DIR    state directory (default " EG_WORKER_DEFAULT_STATE_DIR ")\n"
	    "  --help             this text\n"
	    "  --version          print the version\n"
	    "\n"
	    "Runs in the foreground until SIGTERM or SIGINT; logs one line per connection on\n"
	    "stderr (verified, refused and why, revoked, closed).\n");
}

enum { O_SANDBOX, O_LISTEN, O_VMM, O_PORT, O_PIN, O_STATE, O__COUNT };
static const char *const opt_names[O__COUNT] = {
    "--sandbox", "--listen", "--vmm-socket", "--vsock-port", "--pin-dir", "--state-dir",
};

/* Exact names only (no abbreviations), each at most once, "--opt VALUE"
 * or "--opt=VALUE". 0, 1 (--help/--version done), or EXIT_USAGE. */
static int parse_args(int argc, char **argv, const char *val[O__COUNT])
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		int o;

		if (!strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("execgate-bridge %s\n", eg_version());
			return 1;
		}
		for (o = 0; o < O__COUNT; o++)
			if (strlen(opt_names[o]) == n && !strncmp(a, opt_names[o], n))
				break;
		if (o == O__COUNT) {
			fprintf(stderr, "execgate-bridge: unknown argument '%s' (see --help)\n", a);
			return EXIT_USAGE;
		}
		if (val[o]) {
			fprintf(stderr, "execgate-bridge: %s given twice\n", opt_names[o]);
			return EXIT_USAGE;
		}
		if (eq) {
			val[o] = eq + 1;
		} else if (i + 1 < argc) {
			val[o] = argv[++i];
		} else {
			fprintf(stderr, "execgate-bridge: %s needs a value\n", opt_names[o]);
			return EXIT_USAGE;
		}
		if (!*val[o]) {
			fprintf(stderr, "execgate-bridge: %s: empty value\n", opt_names[o]);
			return EXIT_USAGE;
		}
	}
	for (int o = 0; o <= O_PORT; o++)
		if (!val[o]) {
			fprintf(stderr, "execgate-bridge: %s is required (see --help)\n",
				opt_names[o]);
			return EXIT_USAGE;
		}
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
	b.vsock_port = (__u32)port;
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
