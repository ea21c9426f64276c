// SPDX-License-Identifier: Apache-2.0
/* The lowest role cannot starve the revocation path: callers in
 * admit_group (three uids) hold every event stream and every connection
 * they can open, and root's install and retire are still answered 200.
 * Event streams are capped per uid and in all, admit_group's connections
 * beyond max_connections - admin_reserve are closed at once, and both are
 * counted in /metrics. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_admin_reserve, .init = dd_setup, .fini = dd_teardown, .timeout = 120);

#define MAX_CONN    64
#define RESERVE	    8 /* the default: max_connections / 8 */
#define STREAMS	    16
#define STREAMS_UID 8
#define UIDS	    4 /* three hold streams, the fourth connections */
#define TRY_STREAMS 20
#define TRY_CONNS   1000

struct held {
	int streams, streams_refused, conns;
};

/* The status of the answer's first line on fd (0 when none came). */
static int first_status(int fd, int ms)
{
	char buf[64];
	size_t len = 0;
	double end = dd_now_ms() + ms;

	while (len < 12 && dd_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return 0;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len >= 12 && !strncmp(buf, "HTTP/1.1 ", 9) ? atoi(buf + 9) : 0;
}

static bool still_open(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

	return poll(&p, 1, 0) == 0;
}

/* Without blocking when the listen backlog is full. */
static int connect_nb(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s", dd.socket);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* As uid, a member of admit_group: every event stream it can get, or
 * every connection, held until killed. */
static pid_t hog(uid_t uid, bool streams, int report)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static const char ev[] = "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n";
		static int fds[TRY_STREAMS + TRY_CONNS];
		gid_t supp = DD_ADMIT_GID;
		struct held h = {0};

		if (setgroups(1, &supp) || setresgid(65534, 65534, 65534) ||
		    setresuid(uid, uid, uid))
			_exit(99);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(97);
		for (int i = 0; streams && i < TRY_STREAMS; i++) {
			int fd = connect_nb(), st;

			if (fd < 0)
				continue;
			if (write(fd, ev, sizeof(ev) - 1) != (ssize_t)sizeof(ev) - 1) {
				close(fd);
				continue;
			}
			st = first_status(fd, 2000);
			if (st == 200) {
				fds[h.streams++] = fd;
			} else {
				h.streams_refused += st == 503;
				close(fd);
			}
		}
		for (int i = 0; !streams && i < TRY_CONNS; i++) {
			int fd = connect_nb();

			if (fd >= 0)
				fds[h.streams + h.conns++] = fd;
		}
		/* The ones the daemon closes at once go as it accepts them
		 * (those beyond libmicrohttpd's limit wait in the listen
		 * backlog): settle until the count holds still. */
		for (int round = 0, last = -1; round < 40 && h.conns != last; round++) {
			int open = 0;

			last = h.conns;
			usleep(250000);
			for (int i = 0; i < h.conns; i++)
				if (still_open(fds[h.streams + i]))
					fds[h.streams + open++] = fds[h.streams + i];
				else
					close(fds[h.streams + i]);
			h.conns = open;
		}
		if (write(report, &h, sizeof(h)) != sizeof(h))
			_exit(98);
		pause();
		_exit(0);
	}
	return pid;
}

Test(daemon_admin_reserve, admit_group_holding_everything_leaves_root_its_calls)
{
	struct held h[UIDS], sum = {0};
	struct kh_child bridge;
	pid_t pids[UIDS];
	struct dd_resp r;
	int pfd[2], fd, st;

	dd_stop(SIGTERM);
	snprintf(dd.extra, sizeof(dd.extra),
		 "max_connections = %d\nmax_event_streams = %d\nmax_event_streams_per_uid = %d\n",
		 MAX_CONN, STREAMS, STREAMS_UID);
	dd_start();
	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, kh_path("bridge.sock")), 0);

	cr_assert_eq(pipe(pfd), 0);
	for (int i = 0; i < UIDS; i++) {
		pids[i] = hog((uid_t)(65534 - i), i < UIDS - 1, pfd[1]);
		cr_assert_eq(read(pfd[0], &h[i], sizeof(h[i])), (ssize_t)sizeof(h[i]));
		sum.streams += h[i].streams;
		sum.streams_refused += h[i].streams_refused;
		sum.conns += h[i].conns;
		cr_log_info("uid %d: %d streams (%d refused), %d connections held", 65534 - i,
			    h[i].streams, h[i].streams_refused, h[i].conns);
		cr_expect_leq(h[i].streams, STREAMS_UID, "uid %d holds %d streams", 65534 - i,
			      h[i].streams);
	}
	close(pfd[0]);
	close(pfd[1]);
	/* The caps held, and the hogs did get everything they could. */
	cr_expect_eq(sum.streams, STREAMS, "streams held in all: %d", sum.streams);
	cr_expect_eq(sum.streams_refused, (UIDS - 1) * TRY_STREAMS - STREAMS,
		     "streams answered 503: %d", sum.streams_refused);
	cr_expect_eq(sum.streams + sum.conns, MAX_CONN - RESERVE,
		     "admit_group connections held: %d streams + %d others", sum.streams,
		     sum.conns);

	/* root: install, retire, and an event stream of its own, all answered */
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, kh_path("bridge.sock"));
	cr_expect_eq(r.status, 200, "root's install while admit_group holds everything: %d %s",
		     r.status, r.body);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL);
	cr_expect_eq(r.status, 200, "root's retire while admit_group holds everything: %d %s",
		     r.status, r.body);
	dd_resp_free(&r);
	fd = dd_connect();
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n", 37), 37);
	st = first_status(fd, 3000);
	cr_expect_eq(st, 200, "root's event stream: %d", st);
	close(fd);

	/* counted */
	cr_expect_eq(dd_metric("execgate_connections_admit"
			       " "),
		     MAX_CONN - RESERVE);
	cr_expect_geq(dd_metric("execgate_connections_admit_refused_total"
				" "),
		      TRY_CONNS - (MAX_CONN - RESERVE - STREAMS) - 40);
	cr_expect_eq(dd_metric("execgate_event_streams_refused_total"
			       " "),
		     (UIDS - 1) * TRY_STREAMS - STREAMS);

	for (int i = 0; i < UIDS; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	kh_child_stop(&bridge);
}
