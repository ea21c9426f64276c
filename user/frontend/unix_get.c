// SPDX-License-Identifier: Apache-2.0
/* An HTTP/1.0 GET over a Unix socket (frontend/unix_get.h). HTTP/1.0 and
 * "Connection: close": the answer ends at EOF, never chunked. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include "frontend/unix_get.h"

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, int timeout_ms, char **out, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap), *nb;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (poll(&pfd, 1, timeout_ms) == 0) {
			free(buf);
			return -ETIMEDOUT;
		}
		if (n + 1 == cap) {
			if (cap >= EG_UNIX_GET_MAX) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(buf);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int eg_unix_get(const char *path, const char *target, int timeout_ms, int *status, char **body)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char req[1024], *resp = NULL, *hdr_end;
	size_t len = 0;
	int fd, rc, n;

	*body = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.0\r\nHost: execgated\r\nConnection: close\r\n\r\n", target);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -E2BIG;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	{
		/* a listener with a full backlog blocks connect(): not forever */
		struct timeval tv = {.tv_sec = timeout_ms / 1000,
				     .tv_usec = (timeout_ms % 1000) * 1000};

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = send_all(fd, req, (size_t)n);
	if (!rc)
		rc = read_all(fd, timeout_ms, &resp, &len);
	close(fd);
	if (rc)
		return rc;
	hdr_end = strstr(resp, "\r\n\r\n");
	if (!hdr_end || sscanf(resp, "HTTP/1.%*d %3d", status) != 1) {
		free(resp);
		return -EPROTO;
	}
	hdr_end += 4;
	memmove(resp, hdr_end, len - (size_t)(hdr_end - resp) + 1);
	*body = resp;
	return 0;
}
