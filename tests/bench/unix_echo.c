// SPDX-License-Identifier: Apache-2.0
/* The bare round trip bench-daemon compares execgated with. Per request the
 * server makes the fewest syscalls an event-driven server can: epoll_wait,
 * read, write. Each connection belongs to one thread for its life (no
 * EPOLLONESHOT re-arm), assigned round-robin at accept, so that clients
 * spread evenly over the threads whatever the order they connect in. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench/unix_echo.h"

#define MAX_THREADS 64

struct echo_conn {
	int fd;
	size_t got;
};

static size_t want_len, answer_len;
static const char *answer;

static void drop(int ep, struct echo_conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void *serve(void *arg)
{
	int ep = (int)(long)arg;
	char buf[8192];

	for (;;) {
		struct epoll_event ev;
		struct echo_conn *c;
		ssize_t n;
		size_t room;

		if (epoll_wait(ep, &ev, 1, -1) != 1)
			continue;
		c = ev.data.ptr;
		room = want_len - c->got < sizeof(buf) ? want_len - c->got : sizeof(buf);
		n = read(c->fd, buf, room);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			drop(ep, c);
			continue;
		}
		c->got += (size_t)n;
		if (c->got < want_len)
			continue;
		c->got = 0;
		if (write(c->fd, answer, answer_len) != (ssize_t)answer_len)
			drop(ep, c);
	}
	return NULL;
}

static void run(int lfd)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int eps[MAX_THREADS], n = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
	pthread_t th;

	for (int i = 0; i < n; i++) {
		eps[i] = epoll_create1(EPOLL_CLOEXEC);
		if (eps[i] < 0 || pthread_create(&th, NULL, serve, (void *)(long)eps[i]))
			_exit(1);
	}
	for (unsigned next = 0;; next++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		struct echo_conn *c;
		struct epoll_event ev = {.events = EPOLLIN};

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			_exit(1);
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		ev.data.ptr = c;
		if (epoll_ctl(eps[next % (unsigned)n], EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
		}
	}
}

pid_t ux_echo_start(const char *path, size_t req_len, const char *resp, size_t resp_len)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int lfd, p[2];
	pid_t pid;
	char ok;

	if (!req_len || strlen(path) >= sizeof(sun.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	strcpy(sun.sun_path, path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -1;
	if (bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) || listen(lfd, 128) || pipe(p)) {
		int e = errno;

		close(lfd);
		errno = e;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(lfd);
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		want_len = req_len;
		answer = resp;
		answer_len = resp_len;
		if (write(p[1], "k", 1) != 1)
			_exit(1);
		close(p[1]);
		run(lfd);
		_exit(0);
	}
	close(lfd);
	close(p[1]);
	if (read(p[0], &ok, 1) != 1) {
		close(p[0]);
		ux_echo_stop(pid);
		errno = ECHILD;
		return -1;
	}
	close(p[0]);
	return pid;
}

void ux_echo_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
