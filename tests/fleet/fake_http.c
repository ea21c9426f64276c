/* SPDX-License-Identifier: Apache-2.0 */
/* The canned HTTP server of tests/fleet/fake_http.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "fleet/fake_http.h"

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Read the request: headers, then Content-Length bytes of body. */
static void read_request(int fd)
{
	char buf[65536];
	size_t len = 0;
	char *end;
	long clen = 0;

	for (;;) {
		ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

		if (r <= 0)
			return;
		len += (size_t)r;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			char *cl = strcasestr(buf, "content-length:");

			if (cl && cl < end)
				clen = strtol(cl + 15, NULL, 10);
			if ((long)(len - (size_t)(end + 4 - buf)) >= clen)
				return;
		}
		if (len == sizeof(buf) - 1)
			return;
	}
}

static void serve(struct eg_fake_http *f, int c)
{
	char head[256];
	int status = f->status ? f->status : 200;

	read_request(c);
	f->requests++;
	if (f->delay_ms)
		usleep(f->delay_ms * 1000u); /* a member behind on its work */
	if (!f->chunked) {
		size_t n = f->body_len ? f->body_len : strlen(f->body);

		snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, n);
		if (write_all(c, head, strlen(head)))
			write_all(c, f->body, n);
		return;
	}
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
		 "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
		 status);
	if (!write_all(c, head, strlen(head)))
		return;
	for (const char *const *p = f->pieces; *p; p++) {
		char sz[32];

		snprintf(sz, sizeof(sz), "%zx\r\n", strlen(*p));
		if (!write_all(c, sz, strlen(sz)) || !write_all(c, *p, strlen(*p)) ||
		    !write_all(c, "\r\n", 2))
			return;
		usleep(20 * 1000); /* separate reads on the client */
	}
	while (f->hold_open && !f->stop) {
		struct pollfd pf = {.fd = c, .events = POLLIN};

		if (poll(&pf, 1, 50) > 0) {
			char b[256];

			if (recv(c, b, sizeof(b), 0) <= 0)
				return;
		}
	}
	write_all(c, "0\r\n\r\n", 5);
}

static void *loop(void *arg)
{
	struct eg_fake_http *f = arg;

	while (!f->stop) {
		struct pollfd pf = {.fd = f->fd, .events = POLLIN};
		int c;

		if (poll(&pf, 1, 50) <= 0)
			continue;
		c = accept(f->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve(f, c);
		close(c);
	}
	return NULL;
}

int eg_fake_http_start(struct eg_fake_http *f)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof(a)) || listen(f->fd, 8) ||
	    getsockname(f->fd, (struct sockaddr *)&a, &len))
		return -1;
	f->port = ntohs(a.sin_port);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", f->port);
	return pthread_create(&f->thread, NULL, loop, f) ? -1 : 0;
}

void eg_fake_http_stop(struct eg_fake_http *f)
{
	f->stop = 1;
	pthread_join(f->thread, NULL);
	close(f->fd);
}
