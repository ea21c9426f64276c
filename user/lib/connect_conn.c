// SPDX-License-Identifier: Apache-2.0
/* A verified connection once made: I/O that reports a drop instead of
 * hiding it, and the lease (the record's epoch at verification). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "lib/connect_int.h"

int eg_conn_fd(const struct eg_conn *c)
{
	return c->fd;
}

const struct eg_conn_info *eg_conn_info(const struct eg_conn *c)
{
	return &c->info;
}

const char *eg_conn_name(const struct eg_conn *c)
{
	return c->name;
}

/* The one message for every call after a drop: nothing reconnects. */
static ssize_t already_dropped(const struct eg_conn *c, char *err, size_t err_size)
{
	snprintf(err, err_size,
		 "%s: the connection was dropped; not reconnecting (a new connection is a new, "
		 "verified eg_connect call)",
		 c->name);
	return -ENOTCONN;
}

static ssize_t dropped(struct eg_conn *c, const char *how, char *err, size_t err_size)
{
	c->dropped = true;
	snprintf(err, err_size, "%s: connection dropped (%s); not reconnecting", c->name, how);
	return -ECONNRESET;
}

ssize_t eg_conn_send(struct eg_conn *c, const void *buf, size_t len, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	ssize_t n;

	if (c->dropped)
		return already_dropped(c, err, err_size);
	do
		n = send(c->fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return n;
	if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
		return dropped(c, strerror(errno), err, err_size);
	n = -errno;
	snprintf(err, err_size, "%s: send: %s", c->name, strerror(errno));
	return n;
}

ssize_t eg_conn_recv(struct eg_conn *c, void *buf, size_t len, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	ssize_t n;

	if (c->dropped)
		return already_dropped(c, err, err_size);
	if (!len)
		return 0;
	do
		n = recv(c->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return n;
	if (n == 0)
		return dropped(c, "closed by the peer", err, err_size);
	if (errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN)
		return dropped(c, strerror(errno), err, err_size);
	n = -errno;
	snprintf(err, err_size, "%s: recv: %s", c->name, strerror(errno));
	return n;
}

int eg_conn_lease_check(struct eg_worker *w, const struct eg_conn *c, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	struct eg_exec_record rec;
	int rc;

	rc = eg_cn_record(w, c->info.record.sandbox, c->name, &rec, err, err_size);
	if (rc)
		return rc;
	if (rec.epoch != c->info.record.epoch) {
		snprintf(err, err_size, "%s: lease revoked: epoch moved from %llu to %llu", c->name,
			 (unsigned long long)c->info.record.epoch, (unsigned long long)rec.epoch);
		return -ESTALE;
	}
	if (c->peer_pidfd >= 0 && eg_cn_pidfd_alive(c->peer_pidfd)) {
		snprintf(err, err_size, "%s: the verified listener (pid %u) has exited", c->name,
			 c->info.peer.tgid);
		return -ESRCH;
	}
	return 0;
}

void eg_conn_close(struct eg_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->peer_pidfd >= 0)
		close(c->peer_pidfd);
	free(c);
}
