// SPDX-License-Identifier: Apache-2.0
/* Streams for the kill scenario (kill.c): bridge agents in the scratch
 * cgroup that open Unix streams and hold them, and a listener that keeps
 * the accepted ends open until their peer goes, so that a stream stays
 * alive exactly until something cuts it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "soak.h"

#define AGENT_SLOTS    64
#define LISTENER_SLOTS 1024

struct agent_msg {
	char op;
	int idx;
};

static void agent_main(int ctl, const char *path)
{
	int fds[AGENT_SLOTS];
	struct agent_msg m;

	for (int i = 0; i < AGENT_SLOTS; i++)
		fds[i] = -1;
	signal(SIGPIPE, SIG_IGN);
	soak_enter(-1);
	while (read(ctl, &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		int reply = -EINVAL;

		if (m.op == 'c') {
			struct sockaddr_un a = {.sun_family = AF_UNIX};
			int slot = 0, fd;

			while (slot < AGENT_SLOTS && fds[slot] >= 0)
				slot++;
			fd = slot < AGENT_SLOTS ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)
						: -1;
			snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
			if (fd < 0)
				reply = -EMFILE;
			else if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
				reply = -errno;
				close(fd);
			} else {
				fds[slot] = fd;
				reply = slot;
			}
		} else if (m.op == 's' && m.idx >= 0 && m.idx < AGENT_SLOTS && fds[m.idx] >= 0) {
			/* Alive: a byte goes out (or the buffer is full, which
			 * a cut stream never answers: it says EPIPE). */
			ssize_t s = send(fds[m.idx], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);

			reply = s == 1 ? 0 : errno == EAGAIN ? 0 : -errno;
		} else if (m.op == 'x' && m.idx >= 0 && m.idx < AGENT_SLOTS && fds[m.idx] >= 0) {
			close(fds[m.idx]);
			fds[m.idx] = -1;
			reply = 0;
		}
		if (write(ctl, &reply, sizeof(reply)) != sizeof(reply))
			break;
	}
	_exit(0);
}

void soak_agent_start(struct soak_agent *a, const char *path)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		soak_fail("socketpair: %s", strerror(errno));
	a->pid = soak_fork();
	if (a->pid == 0) {
		close(sv[0]);
		agent_main(sv[1], path);
	}
	close(sv[1]);
	a->ctl = sv[0];
	/* In the cgroup before the first command: a no-op round trip. */
	soak_agent_cmd(a, '?', 0);
}

int soak_agent_cmd(struct soak_agent *a, char op, int idx)
{
	struct agent_msg m = {.op = op, .idx = idx};
	int reply;

	if (write(a->ctl, &m, sizeof(m)) != (ssize_t)sizeof(m) ||
	    read(a->ctl, &reply, sizeof(reply)) != (ssize_t)sizeof(reply))
		soak_fail("stream agent %d: %s", (int)a->pid, strerror(errno));
	return reply;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 4096))
		return -1;
	return fd;
}

pid_t soak_hold_listener(const char *a, const char *b)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC))
		soak_fail("pipe: %s", strerror(errno));
	pid = soak_fork();
	if (pid == 0) {
		static struct pollfd p[2 + LISTENER_SLOTS];
		size_t n = 2;

		p[0] = (struct pollfd){.fd = listen_on(a), .events = POLLIN};
		p[1] = (struct pollfd){.fd = listen_on(b), .events = POLLIN};
		if (p[0].fd < 0 || p[1].fd < 0)
			_exit(92);
		c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(93);
		for (;;) {
			if (poll(p, n, -1) < 0)
				continue;
			for (size_t i = 2; i < n; i++) {
				char buf[256];
				ssize_t r;

				if (!p[i].revents)
					continue;
				r = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
				if (r > 0 || (r < 0 && errno == EAGAIN))
					continue;
				close(p[i].fd); /* the peer went, or was cut */
				p[i--] = p[--n];
			}
			for (int i = 0; i < 2; i++) {
				int fd;

				while ((fd = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
					if (n == 2 + LISTENER_SLOTS) {
						close(fd);
						continue;
					}
					p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
				}
			}
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c != 1)
		soak_fail("listener on %s, %s did not start", a, b);
	close(ready[0]);
	return pid;
}
