// SPDX-License-Identifier: Apache-2.0
/* Processes in a worker's scratch cgroup, so that the kernel checks their
 * connects: the op agent (one per worker: admits itself through the
 * worker's daemon with the operation's capability, then connects to the
 * bridge socket, sends one line and reads the reply) and stream holders
 * (one long-lived stream each, a tick every 100 ms). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <jansson.h>
#include "fleet.h"

struct op_req {
	char bridge[256];
	char token[1024];
	char line[128];
};

static void join(const char *cgroup)
{
	char path[600], p[24];
	int c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	snprintf(p, sizeof(p), "%d", (int)getpid());
	c = open(path, O_WRONLY);
	if (c < 0 || write(c, p, strlen(p)) < 0)
		_exit(126);
	close(c);
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

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
			return -EPIPE;
		if (r < 0)
			return -errno;
		if (out[n] == '\n') {
			out[n] = '\0';
			return (int)n;
		}
		n++;
	}
	out[n] = '\0';
	return (int)n;
}

/* POST /v1/admit for this process; fills res on anything but allow. */
static int admit(struct fs_worker *w, const char *token, struct fs_op_res *res)
{
	char body[1400], out[16384];
	json_t *j;
	const char *v, *r, *sv;
	int st;

	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"scope\":\"exec\"}", token);
	st = fs_http(w, "POST", "/v1/admit", body, out, sizeof(out));
	if (st != 200) {
		res->rc = FS_OP_ERR;
		snprintf(res->reason, sizeof(res->reason), "admit: %s%d",
			 st < 0 ? "errno " : "http ", st < 0 ? -st : st);
		return -1;
	}
	j = json_loads(out, 0, NULL);
	v = json_string_value(json_object_get(j, "verdict"));
	r = json_string_value(json_object_get(j, "reason"));
	sv = json_string_value(json_object_get(j, "signed_verdict"));
	snprintf(res->reason, sizeof(res->reason), "%s", r ? r : "?");
	snprintf(res->signed_verdict, sizeof(res->signed_verdict), "%s", sv ? sv : "");
	if (v && !strcmp(v, "allow"))
		res->rc = FS_OP_OK;
	else if (v && !strcmp(v, "refresh-route"))
		res->rc = FS_OP_REFRESH;
	else if (v)
		res->rc = FS_OP_DENY;
	else
		res->rc = FS_OP_ERR;
	json_decref(j);
	return res->rc == FS_OP_OK ? 0 : -1;
}

static void do_op(struct fs_worker *w, const struct op_req *q, struct fs_op_res *res)
{
	char buf[300];
	int fd, n, r;

	memset(res, 0, sizeof(*res));
	if (admit(w, q->token, res))
		return;
	fd = unix_connect(q->bridge);
	if (fd < 0) {
		res->rc = FS_OP_ERR;
		snprintf(res->reason, sizeof(res->reason), "connect: %s", strerrorname_np(-fd));
		return;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", q->line);
	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		res->rc = FS_OP_ERR;
		snprintf(res->reason, sizeof(res->reason), "send: %s", strerrorname_np(errno));
	} else if ((r = recv_line(fd, res->reply, sizeof(res->reply), 3000)) < 0) {
		res->rc = FS_OP_ERR;
		snprintf(res->reason, sizeof(res->reason), "reply: %s", strerrorname_np(-r));
	}
	close(fd);
}

void fs_agent_start(struct fs_worker *w)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		fs_fail("socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fs_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		static struct op_req q;
		struct fs_op_res res;

		/* nothing else of the soak's (its proxies' listeners above
		 * all: a cut must close them for good) */
		dup2(sv[1], 3);
		close_range(4, ~0U, 0);
		sv[1] = 3;
		join(w->cgroup);
		while (recv(sv[1], &q, sizeof(q), 0) == (ssize_t)sizeof(q)) {
			do_op(w, &q, &res);
			if (send(sv[1], &res, sizeof(res), 0) != (ssize_t)sizeof(res))
				break;
		}
		_exit(0);
	}
	close(sv[1]);
	fs_track(pid);
	w->agent = pid;
	w->agent_fd = sv[0];
}

void fs_agent_op(struct fs_worker *w, const char *bridge, const char *token, const char *line,
		 struct fs_op_res *res)
{
	static __thread struct op_req q;

	memset(res, 0, sizeof(*res));
	snprintf(q.bridge, sizeof(q.bridge), "%s", bridge);
	snprintf(q.token, sizeof(q.token), "%s", token);
	snprintf(q.line, sizeof(q.line), "%s", line);
	pthread_mutex_lock(&w->agent_lock);
	if (send(w->agent_fd, &q, sizeof(q), 0) != (ssize_t)sizeof(q) ||
	    recv(w->agent_fd, res, sizeof(*res), 0) != (ssize_t)sizeof(*res)) {
		res->rc = FS_OP_ERR;
		snprintf(res->reason, sizeof(res->reason), "agent: %s", strerror(errno));
	}
	pthread_mutex_unlock(&w->agent_lock);
}

pid_t fs_stream_start(struct fs_worker *w, const char *bridge, const char *token, int *pipe_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		fs_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fs_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		struct fs_op_res res;
		uint64_t v = 2, t;
		char buf[300];
		int fd = -1;

		dup2(p[1], 3);
		close_range(4, ~0U, 0);
		p[1] = 3;
		join(w->cgroup);
		/* the daemon may be restarting: a few tries */
		for (int i = 0; i < 100; i++) {
			memset(&res, 0, sizeof(res));
			if (!admit(w, token, &res) && (fd = unix_connect(bridge)) >= 0)
				break;
			usleep(100000);
		}
		if (fd >= 0)
			v = 1;
		if (write(p[1], &v, sizeof(v)) < 0 || fd < 0)
			_exit(1);
		for (unsigned long n = 0;; n++) {
			int len = snprintf(buf, sizeof(buf), "tick %lu\n", n);

			usleep(100000);
			if (send(fd, buf, (size_t)len, MSG_NOSIGNAL) != len ||
			    recv_line(fd, buf, sizeof(buf), 3000) < 0)
				break;
		}
		t = fs_now_ns();
		if (write(p[1], &t, sizeof(t)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	fs_track(pid);
	*pipe_fd = p[0];
	return pid;
}
