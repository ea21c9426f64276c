// SPDX-License-Identifier: Apache-2.0
/* Clients that misbehave: garbage, truncated and oversized requests, a
 * client sending one byte a second, 1000 connections at once, clients that
 * vanish mid-request. Each gets an error or a timeout; the daemon keeps
 * answering others in bounded time, never crashes, and ends with the fds
 * it started with. */
#include <errno.h>
#include <fcntl.h>
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

TestSuite(daemon_bad_clients, .init = dd_setup, .fini = dd_teardown, .timeout = 120);

/* A good request answered, and how long it took. */
static double good_request_ms(void)
{
	double t0 = dd_now_ms();
	struct dd_resp r = dd_req("GET", "/v1/keys", NULL);

	cr_assert_eq(r.status, 200, "a good client: %d %s", r.status, r.body);
	dd_resp_free(&r);
	return dd_now_ms() - t0;
}

static int baseline(void)
{
	good_request_ms();
	return dd_fd_settle(0, 300);
}

static void alive(void)
{
	cr_assert_eq(kill(dd.pid, 0), 0, "execgated died");
	good_request_ms();
}

static void send_close(const void *bytes, size_t len)
{
	int fd = dd_connect();

	cr_assert_geq(fd, 0);
	if (len)
		cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
}

Test(daemon_bad_clients, garbage_truncated_and_vanishing)
{
	static const char truncated_head[] = "POST /v1/admit HTTP/1.1\r\nHost: x\r\nContent-Le";
	static const char truncated_body[] = "POST /v1/admit HTTP/1.1\r\nHost: x\r\n"
					     "Content-Length: 100\r\n\r\n{\"token\":\"AA";
	static const char full[] = "POST /v1/admit HTTP/1.1\r\nHost: x\r\nContent-Length: 29\r\n"
				   "\r\n{\"token\":\"AAAA\",\"scope\":\"x\"}";
	unsigned char junk[512];
	struct dd_resp r;
	int fds0, fds1;

	dd_keys();
	fds0 = baseline();

	/* garbage: an error answer or a close, never a hang or a crash */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	memcpy(junk + sizeof(junk) - 4, "\r\n\r\n", 4);
	r = dd_raw(junk, sizeof(junk), 5000);
	cr_expect(r.status == 400 || r.status == -ECONNRESET || r.status == 0, "garbage: status %d",
		  r.status);
	dd_resp_free(&r);
	r = dd_raw("GET / HTTP/9.9\r\n\r\n", 18, 5000);
	cr_expect(r.status >= 400 || r.status <= 0, "bad version: %d", r.status);
	dd_resp_free(&r);
	r = dd_raw("\0\0\0\0\r\n\r\n", 8, 5000);
	cr_expect(r.status == 400 || r.status <= 0, "NULs: %d", r.status);
	dd_resp_free(&r);
	alive();

	/* A path that is not UTF-8 (raw, %-escaped, or a sequence the reason's
	 * %.64s cuts in two) still gets its JSON error, the bytes as \xNN. */
	{
		static const char *const bad_paths[][2] = {
		    {"GET /v1/\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "404"},
		    {"GET /v1/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "404"},
		    {"GET /v1/sandboxes/"
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%c3%a9 "
		     "HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		     "400"},
		};

		for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
			r = dd_raw(bad_paths[i][0], strlen(bad_paths[i][0]), 5000);
			cr_expect_eq(r.status, atoi(bad_paths[i][1]), "path %zu: %d %s", i,
				     r.status, r.body ? r.body : "");
			cr_expect_not_null(r.json, "path %zu: not JSON: %s", i,
					   r.body ? r.body : "");
			cr_expect(strstr(dd_str(&r, "reason"), "\\x"), "path %zu: %s", i,
				  dd_str(&r, "reason"));
			dd_resp_free(&r);
		}
	}

	/* truncated, then gone; complete, then gone before the answer */
	for (int i = 0; i < 50; i++) {
		send_close(truncated_head, sizeof(truncated_head) - 1);
		send_close(truncated_body, sizeof(truncated_body) - 1);
		send_close(full, sizeof(full) - 1);
		send_close(junk, sizeof(junk));
		send_close("", 0);
	}
	alive();
	fds1 = dd_fd_settle(fds0, 5000);
	cr_expect_eq(fds1, fds0, "daemon fds: %d before, %d after the bad clients", fds0, fds1);
}

/* head at once, then slow one byte a second: cut off after the 3 s
 * connection_timeout of the test config, while a good client is served
 * in bounded time every second. */
static void slow_client(const char *head, const char *slow)
{
	size_t len = strlen(slow);
	double t0, worst = 0;
	bool closed = false;
	int fd, fds0;

	fds0 = baseline();
	fd = dd_connect();
	cr_assert_geq(fd, 0);
	if (*head)
		cr_assert_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
	t0 = dd_now_ms();
	for (size_t i = 0; i < len && dd_now_ms() - t0 < 12000; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double ms;

		if (send(fd, slow + i, 1, MSG_NOSIGNAL) != 1 ||
		    (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)))) {
			closed = true;
			break;
		}
		ms = good_request_ms();
		if (ms > worst)
			worst = ms;
		usleep(1000000 - (useconds_t)(ms * 1000 < 900000 ? ms * 1000 : 0));
	}
	close(fd);
	cr_expect(closed, "the slow client was never cut off");
	cr_expect_lt(dd_now_ms() - t0, 6500, "cut off after %.0f ms (timeout 3 s)",
		     dd_now_ms() - t0);
	cr_expect_lt(worst, 500, "a good client waited %.1f ms meanwhile", worst);
	cr_expect_eq(dd_fd_settle(fds0, 5000), fds0, "fds after the slow client");
}

Test(daemon_bad_clients, one_byte_a_second_times_out)
{
	dd_keys();
	/* In the header, */
	slow_client("", "GET /v1/keys HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaa");
	/* and in the body, after a complete header. */
	slow_client("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n",
		    "{\"token\":\"AAAAAAAAAAAAAAAAAAAAAAAAA\"}");
}

static int connect_nb(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s", dd.socket);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends a request on each fd and counts the answers by kind. */
static void request_all(int *fds, int n, int *ok, int *busy, int *closed)
{
	static const char req[] = "GET /v1/keys HTTP/1.1\r\nHost: x\r\n\r\n";
	char buf[4096];

	*ok = *busy = *closed = 0;
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0 && send(fds[i], req, sizeof(req) - 1, MSG_NOSIGNAL) < 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	for (int i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		ssize_t got;

		if (fds[i] < 0) {
			(*closed)++;
			continue;
		}
		if (poll(&p, 1, 5000) != 1 || (got = read(fds[i], buf, sizeof(buf) - 1)) <= 0) {
			(*closed)++;
			continue;
		}
		buf[got] = '\0';
		if (strstr(buf, " 200 "))
			(*ok)++;
		else if (strstr(buf, " 503 "))
			(*busy)++;
		else
			(*closed)++;
	}
}

Test(daemon_bad_clients, thousand_connections)
{
	enum { N = 1000 };
	static int fds[N];
	int fds0, ok, busy, closed, opened = 0;
	double worst = 0;

	dd_keys();
	fds0 = baseline();

	/* Under the limit (1024 by default): all held open, good clients keep
	 * their latency. */
	for (int i = 0; i < N; i++)
		opened += (fds[i] = connect_nb()) >= 0;
	cr_assert_eq(opened, N, "connects: %d of %d", opened, N);
	for (int i = 0; i < 20; i++) {
		double ms = good_request_ms();

		if (ms > worst)
			worst = ms;
	}
	/* A starved client waits for seconds (the idle connections' own
	 * timeouts); 2 s leaves room for a busy machine (720 ms was seen with
	 * two TCG guests beside this test) and still tells the two apart. */
	cr_log_info("with %d idle connections the worst of 20 good requests took %.1f ms", N,
		    worst);
	cr_expect_lt(worst, 2000, "with %d idle connections a good client took %.1f ms", N, worst);
	request_all(fds, N, &ok, &busy, &closed);
	cr_expect_geq(ok + busy, N - 40, "answers: %d ok, %d 503, %d closed", ok, busy, closed);
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	cr_expect_eq(dd_fd_settle(fds0, 8000), fds0, "fds after 1000 connections");

	/* Over a small limit: the excess gets 503 or a close, never a hang;
	 * once they are gone, service is back. */
	dd_stop(SIGTERM);
	snprintf(dd.extra, sizeof(dd.extra), "max_connections = 64\n");
	dd_start();
	fds0 = baseline();
	for (int i = 0; i < N; i++)
		fds[i] = connect_nb();
	request_all(fds, N, &ok, &busy, &closed);
	cr_expect_gt(busy + closed, 0, "a limit of 64 was never enforced: %d ok", ok);
	cr_expect_leq(ok, 64 + 1, "more answered than the limit: %d", ok);
	cr_expect_gt(busy, 0, "no 503 (%d ok, %d closed)", ok, closed);
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	cr_expect_eq(dd_fd_settle(fds0, 8000), fds0, "fds after the overload");
	alive();
}

/* Anyone may connect, but 1000 connections from a user without a role
 * (nobody) must not take the service from the callers with one: they get
 * their share (max_connections / 8) and the rest are closed at once. */
Test(daemon_bad_clients, unprivileged_flood_leaves_room)
{
	enum { N = 1000 };
	int fds0, pfd[2], held = 0, st;
	double worst = 0;
	pid_t pid;

	dd_stop(SIGTERM);
	snprintf(dd.extra, sizeof(dd.extra), "max_connections = 64\n");
	dd_start();
	dd_keys();
	fds0 = baseline();
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static int fds[N];
		int opened = 0;

		close(pfd[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(99);
		/* Gone with the test, even if an assert ends it first (set
		 * after setuid, which clears it). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(97);
		for (int i = 0; i < N; i++)
			opened += (fds[i] = connect_nb()) >= 0;
		if (write(pfd[1], &opened, sizeof(opened)) != sizeof(opened))
			_exit(98);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &held, sizeof(held)), (ssize_t)sizeof(held));
	close(pfd[0]);
	cr_expect_geq(held, N - 40, "nobody connected %d times", held);
	usleep(300000);

	/* root, and a member of admit_group, are served all the while */
	for (int i = 0; i < 20; i++) {
		double ms = good_request_ms();

		if (ms > worst)
			worst = ms;
	}
	cr_expect_lt(worst, 250, "with %d unprivileged connections a good client took %.1f ms",
		     held, worst);
	st = dd_req_as(65534, DD_ADMIT_GID, "GET", "/v1/sandboxes", NULL, NULL, 0);
	cr_expect_eq(st, 200, "admit_group during the flood: %d", st);
	cr_expect_leq(dd_metric("execgate_connections_unprivileged"
				" "),
		      64 / 8, "more unprivileged connections held than their share");
	cr_expect_geq(dd_metric("execgate_connections_refused_total"
				" "),
		      held - 64 / 8 - 40, "refused: %lld of %d",
		      dd_metric("execgate_connections_refused_total"
				" "),
		      held);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect_eq(dd_fd_settle(fds0, 8000), fds0, "fds after the flood");
	alive();
}

/* One POST with a body of len bytes, all of it written before the answer
 * is read; returns the status read, or -errno of the write or read. */
static int post_all_then_read(const char *path, size_t len)
{
	char head[256], *body = malloc(len);
	struct dd_resp r;
	size_t hl, off = 0;
	int fd = dd_connect();

	if (fd < 0 || !body) {
		free(body);
		return fd < 0 ? fd : -ENOMEM;
	}
	memset(body, 'a', len);
	body[0] = '"';
	body[len - 1] = '"';
	hl = (size_t)snprintf(head, sizeof(head),
			      "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
			      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
			      path, len);
	if (send(fd, head, hl, MSG_NOSIGNAL) != (ssize_t)hl) {
		int e = -errno;

		free(body);
		close(fd);
		return e;
	}
	while (off < len) {
		ssize_t n = send(fd, body + off, len - off, MSG_NOSIGNAL);

		if (n <= 0) {
			int e = -errno;

			free(body);
			close(fd);
			return e;
		}
		off += (size_t)n;
	}
	free(body);
	r = dd_read_resp(fd, 5000, head, hl);
	close(fd);
	dd_resp_free(&r);
	return r.status;
}

/* A client without the role that POSTs a body reads its 403: the daemon
 * reads (and throws away) a body of up to 64 KiB before it answers, rather
 * than closing under a client still writing (EPIPE). As nobody and as a
 * member of admit_group on an admin route, 20 times each. */
Test(daemon_bad_clients, forbidden_post_reads_its_403)
{
	static const size_t sizes[] = {100, 4096, 60000, 65536};
	int st, pfd[2], counts[2] = {0, 0};
	char got[2][512];
	pid_t pid;

	dd_keys();
	for (int who = 0; who < 2; who++) {
		cr_assert_eq(pipe(pfd), 0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			gid_t supp = DD_ADMIT_GID;
			char out[512] = "";
			int ok = 0;
			size_t o = 0;

			close(pfd[0]);
			if (setgroups(who ? 1 : 0, &supp) || setgid(65534) || setuid(65534))
				_exit(99);
			for (int i = 0; i < 20; i++) {
				size_t len = sizes[i % 4];
				int s = post_all_then_read(
				    who ? "/v1/sandboxes/" DD_SANDBOX "/retire" : "/v1/admit", len);

				if (s == 403)
					ok++;
				else if (o < sizeof(out) - 32)
					o += (size_t)snprintf(out + o, sizeof(out) - o, " %zu:%d",
							      len, s);
			}
			if (write(pfd[1], &ok, sizeof(ok)) != sizeof(ok) ||
			    write(pfd[1], out, sizeof(out)) != sizeof(out))
				_exit(98);
			_exit(0);
		}
		close(pfd[1]);
		cr_assert_eq(read(pfd[0], &counts[who], sizeof(int)), (ssize_t)sizeof(int));
		cr_assert_eq(read(pfd[0], got[who], sizeof(got[who])), (ssize_t)sizeof(got[who]));
		close(pfd[0]);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
	}
	cr_expect_eq(counts[0], 20, "nobody: %d of 20 read their 403; the rest (size:status):%s",
		     counts[0], got[0]);
	cr_expect_eq(counts[1], 20,
		     "admit_group on retire: %d of 20 read their 403; the rest (size:status):%s",
		     counts[1], got[1]);
	/* and an unknown path with a body reads its 404 */
	st = post_all_then_read("/v1/nowhere", 60000);
	cr_expect_eq(st, 404, "POST /v1/nowhere with a body: %d", st);
	alive();
}
