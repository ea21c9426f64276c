// SPDX-License-Identifier: Apache-2.0
/* Stand-ins for what runs behind a VMM socket:
 *   firecracker --socket PATH --name NAME --log FILE
 *     Firecracker's host-side VSOCK Unix socket: a host-initiated
 *     connection writes "CONNECT <port>\n" and reads "OK <n>\n", n the
 *     host-side port assigned (EGD_ASSIGNED_BASE + connection number, never
 *     the port asked for). Behind it a guest-agent stand-in answers every
 *     line "L" with "NAME: L" (so a reply names the execution that served
 *     it). There is no VM: the agent runs in the stand-in's per-connection
 *     process.
 *   impostor --socket PATH --log FILE
 *     a process that bound a VMM socket path after the real VMM: it sends
 *     nothing and logs how many bytes each connection brought.
 * Both log one line per event to FILE and run until killed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "demo/demo.h"

static int bind_listen(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	unlink(path); /* the impostor takes the path over, as a replacement would */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 64)) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/* One line up to '\n' (kept out of out), one byte at a time so that
 * nothing after it is consumed. Length, or -1 at EOF/error before '\n'. */
static ssize_t read_line(int fd, char *out, size_t size)
{
	size_t n = 0;
	char c;

	while (n + 1 < size) {
		if (recv(fd, &c, 1, 0) != 1)
			return -1;
		if (c == '\n') {
			out[n] = '\0';
			return (ssize_t)n;
		}
		out[n++] = c;
	}
	return -1;
}

static void agent(int fd, const char *name, const char *log, unsigned long conn)
{
	char line[512], reply[600];
	unsigned long requests = 0;
	unsigned port;
	int n;

	if (read_line(fd, line, sizeof(line)) < 0 || sscanf(line, "CONNECT %u", &port) != 1) {
		egd_log(log, "%s: connection %lu: no CONNECT line", name, conn);
		return;
	}
	n = snprintf(reply, sizeof(reply), "OK %lu\n", EGD_ASSIGNED_BASE + conn);
	if (send(fd, reply, (size_t)n, MSG_NOSIGNAL) != n)
		return;
	egd_log(log, "%s: connection %lu: CONNECT %u -> OK %lu", name, conn, port,
		EGD_ASSIGNED_BASE + conn);
	while (read_line(fd, line, sizeof(line)) >= 0) {
		requests++;
		/* terminal ticks are counted, not logged one by one */
		if (strncmp(line, "tick ", 5))
			egd_log(log, "%s: connection %lu: agent: request '%s'", name, conn, line);
		n = snprintf(reply, sizeof(reply), "%s: %s\n", name, line);
		if (send(fd, reply, (size_t)n, MSG_NOSIGNAL) != n)
			break;
	}
	egd_log(log, "%s: connection %lu: closed after %lu requests", name, conn, requests);
}

int egd_firecracker(int argc, char **argv)
{
	const char *path = egd_opt(argc, argv, "socket"), *name = egd_opt(argc, argv, "name");
	const char *log = egd_opt(argc, argv, "log");
	int lfd;

	if (!path || !name || !log) {
		fprintf(stderr,
			"usage: execgate-demo firecracker --socket PATH --name NAME --log FILE\n");
		return 2;
	}
	signal(SIGCHLD, SIG_IGN); /* connection processes reap themselves */
	lfd = bind_listen(path);
	if (lfd < 0) {
		fprintf(stderr, "execgate-demo: firecracker: %s: %s\n", path, strerror(-lfd));
		return 1;
	}
	egd_log(log, "%s: pid %d listening on %s", name, (int)getpid(), path);
	for (unsigned long conn = 1;; conn++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			conn--;
			continue;
		}
		/* the listener (the identity the bridge checks) stays; each
		 * connection is served by its own process */
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(lfd);
			agent(fd, name, log, conn);
			_exit(0);
		}
		close(fd);
	}
}

int egd_impostor(int argc, char **argv)
{
	const char *path = egd_opt(argc, argv, "socket"), *log = egd_opt(argc, argv, "log");
	int lfd;

	if (!path || !log) {
		fprintf(stderr, "usage: execgate-demo impostor --socket PATH --log FILE\n");
		return 2;
	}
	lfd = bind_listen(path);
	if (lfd < 0) {
		fprintf(stderr, "execgate-demo: impostor: %s: %s\n", path, strerror(-lfd));
		return 1;
	}
	egd_log(log, "impostor: pid %d bound %s", (int)getpid(), path);
	for (unsigned long conn = 1;; conn++) {
		unsigned long long bytes = 0;
		char buf[4096];
		ssize_t r;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			conn--;
			continue;
		}
		while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
			bytes += (unsigned long long)r;
		close(fd);
		egd_log(log, "impostor: connection %lu: received %llu bytes", conn, bytes);
	}
}
