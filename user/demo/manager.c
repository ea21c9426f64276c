// SPDX-License-Identifier: Apache-2.0
/* manager: a sandbox manager on one worker, for one operation.
 *
 *   execgate-demo manager --pin-dir D --state-dir S --cgroup CG --sandbox UUID
 *       --bridge-socket PATH --token TOKEN --request LINE [--scope LIST]
 *       [--force-connect] [--unverified] [--terminal]
 *
 * Joins the worker's cgroup (so the kernel checks its connects), admits
 * itself with the operation's capability (libexecgate: the grant is for
 * this process), and only on Allow connects to the bridge socket, verifying
 * that the listener is the record's bridge (eg_connect_unix), sends LINE
 * and reads one reply line. What it prints, one line each:
 *   pid N
 *   verdict allow | refresh-route: REASON | deny: REASON
 *   signed_verdict TEXT            (refresh-route / deny of this worker)
 *   connect verified: ...  | connect ok (unverified) | connect refused ENAME: ...
 *   reply TEXT | reply none: ...
 *   kernel: deny-no-grant +1, ...  (this worker's counters that moved
 *           from the connect to the reply; other processes may add)
 *   terminal: stopped after N ticks: ... at unix ms T     (--terminal)
 * --force-connect: a buggy manager that connects even after a refusal (the
 * kernel's decision is then what stops it). --unverified: a raw connect()
 * without the listener check. --terminal: after the reply, one "tick N"
 * every 100 ms until the stream's I/O stops.
 * Exit: 0 reply, 3 refresh-route, 4 deny, 1 anything else. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "execgate/text.h"
#include "demo/demo.h"
#include "execgate/connect.h"
#include "execgate/execgate.h"

static int raw_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/* One reply line within timeout_ms: length, 0 at end of stream, -ETIMEDOUT,
 * or -errno. */
static int recv_line(int fd, char *out, size_t size, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, timeout_ms) != 1)
			return -ETIMEDOUT;
		r = recv(fd, out + n, 1, 0);
		if (r == 0)
			return 0;
		if (r < 0)
			return -errno;
		if (out[n] == '\n') {
			out[n] = '\0';
			return (int)n + 1;
		}
		n++;
	}
	out[n] = '\0';
	return (int)n;
}

static uint64_t mark[EG_KREASON_MAX];

static void kernel_moved(struct eg_worker *w)
{
	uint64_t now[EG_KREASON_MAX] = {0};
	bool any = false;

	if (eg_worker_counters(w, now, EG_KREASON_MAX) < 0)
		return;
	printf("kernel:");
	for (uint32_t r = 0; r < EG_KREASON_MAX; r++)
		if (now[r] != mark[r]) {
			printf("%s %s +%llu", any ? "," : "", eg_kreason_name(r),
			       (unsigned long long)(now[r] - mark[r]));
			any = true;
		}
	printf("%s\n", any ? "" : " no counter moved");
}

static int request(int fd, const char *line)
{
	char buf[600];
	int n = snprintf(buf, sizeof(buf), "%s\n", line), r;

	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		printf("reply none: send: %s\n", egd_errno_name(errno));
		return 1;
	}
	r = recv_line(fd, buf, sizeof(buf), 3000);
	if (r > 0) {
		printf("reply %s\n", buf);
		return 0;
	}
	if (r == 0)
		printf("reply none: end of stream (closed by the bridge)\n");
	else
		printf("reply none: %s\n", egd_errno_name(-r));
	return 1;
}

/* A terminal: ticks until I/O stops; prints how and when. */
static void terminal(int fd)
{
	char buf[600];
	unsigned long ticks = 0;

	for (;;) {
		int n = snprintf(buf, sizeof(buf), "tick %lu\n", ticks + 1), r;

		usleep(100 * 1000);
		if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
			printf("terminal: stopped after %lu ticks: send: %s at unix ms %lld\n",
			       ticks, egd_errno_name(errno), egd_unix_ms());
			return;
		}
		r = recv_line(fd, buf, sizeof(buf), 3000);
		if (r <= 0) {
			printf("terminal: stopped after %lu ticks: recv: %s at unix ms %lld\n",
			       ticks, r == 0 ? "end of stream" : egd_errno_name(-r), egd_unix_ms());
			return;
		}
		ticks++;
	}
}

int egd_manager(int argc, char **argv)
{
	const char *pin = egd_opt(argc, argv, "pin-dir"), *state = egd_opt(argc, argv, "state-dir");
	const char *cg = egd_opt(argc, argv, "cgroup"), *sbx = egd_opt(argc, argv, "sandbox");
	const char *bsock = egd_opt(argc, argv, "bridge-socket");
	const char *token = egd_opt(argc, argv, "token"), *line = egd_opt(argc, argv, "request");
	const char *scope = egd_opt(argc, argv, "scope");
	struct eg_worker_config cfg = {.pin_dir = pin, .state_dir = state};
	struct eg_admit_args a = {.token_text = token, .req = {.open_kind = EG_OPEN_NEW}};
	struct eg_subject who = {.pid = getpid(), .pidfd = -1};
	struct eg_connect_target t = {.role = EG_CONNECT_BRIDGE, .path = bsock};
	struct eg_verdict_result res;
	struct eg_worker *w = NULL;
	struct eg_conn *c = NULL;
	char err[EG_ERR_MAX];
	int rc, fd;

	if (!pin || !state || !cg || !sbx || !bsock || !token || !line) {
		fprintf(stderr,
			"usage: execgate-demo manager --pin-dir D --state-dir S --cgroup CG "
			"--sandbox UUID --bridge-socket PATH --token TOKEN --request LINE "
			"[--scope LIST] [--force-connect] [--unverified] [--terminal]\n");
		return 2;
	}
	if (eg_uuid_from_text(sbx, t.sandbox) ||
	    eg_scope_parse(scope ? scope : "file.read", &a.req.scope)) {
		fprintf(stderr, "execgate-demo: manager: bad --sandbox or --scope\n");
		return 2;
	}
	/* first: sockets made from here on carry the worker's cgroup */
	rc = egd_join_cgroup(cg);
	if (rc) {
		fprintf(stderr, "execgate-demo: manager: %s: %s\n", cg, strerror(-rc));
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	rc = eg_worker_open(&cfg, &w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "execgate-demo: manager: %s\n", err);
		return 1;
	}
	rc = eg_worker_admit(w, &who, &a, &res, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "execgate-demo: manager: admit: %s\n", err);
		goto fail;
	}
	if (res.d.verdict == EG_ALLOW)
		printf("verdict allow\n");
	else
		printf("verdict %s: %s\n", eg_verdict_name(res.d.verdict),
		       eg_reason_name(res.d.reason));
	if (res.signed_verdict[0])
		printf("signed_verdict %s\n", res.signed_verdict);
	if (res.d.verdict != EG_ALLOW && !egd_flag(argc, argv, "force-connect")) {
		printf("connect none: refused before forwarding\n");
		/* refused before forwarding: nothing is connected, nothing sent */
		eg_worker_close(w);
		return res.d.verdict == EG_REFRESH_ROUTE ? 3 : 4;
	}
	eg_worker_counters(w, mark, EG_KREASON_MAX);
	if (res.d.verdict != EG_ALLOW || egd_flag(argc, argv, "unverified")) {
		fd = raw_connect(bsock);
		if (fd < 0) {
			printf("connect refused %s: %s: %s\n", egd_errno_name(-fd), bsock,
			       strerror(-fd));
			kernel_moved(w);
			goto fail;
		}
		printf("connect ok (unverified)\n");
	} else {
		rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
		if (rc) {
			printf("connect refused %s: %s\n", egd_errno_name(-rc), err);
			kernel_moved(w);
			goto fail;
		}
		printf("connect verified: bridge pid %u via %s, epoch %llu\n",
		       eg_conn_info(c)->peer.tgid,
		       eg_conn_info(c)->via_peerpidfd ? "SO_PEERPIDFD" : "SO_PEERCRED",
		       (unsigned long long)eg_conn_info(c)->record.epoch);
		fd = eg_conn_fd(c);
	}
	rc = request(fd, line);
	kernel_moved(w);
	if (!rc && egd_flag(argc, argv, "terminal"))
		terminal(fd);
	if (c)
		eg_conn_close(c);
	else
		close(fd);
	eg_worker_close(w);
	return rc ? 1 : 0;
fail:
	eg_worker_close(w);
	return 1;
}
