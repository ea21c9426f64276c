// SPDX-License-Identifier: Apache-2.0
/* TCP stream revocation on kernels without bpf_sock_destroy (before 6.5):
 * the pinned iter/tcp finder (bpf/iter_tcp_find.bpf.c) yields the 4-tuple
 * and cookie of every stale socket of the calling thread's network
 * namespace, and each is destroyed with a sock_diag SOCK_DESTROY request
 * (CONFIG_INET_DIAG_DESTROY, the kernel side of `ss -K`). Both the kfunc
 * and SOCK_DESTROY end in tcp_abort(sk, ECONNABORTED), so each end sees
 * the same errors on either path.
 *
 * sock_diag answers for the namespace the netlink socket was created in,
 * so the socket is made in the same thread, after revoke_tcp.c's setns.
 * The cookie makes a request name one socket: a 4-tuple reused by a new
 * connection since the iterator ran is not touched (ENOENT). */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "abi/revoke_tcp_abi.h"
#include "kcompat.h"
#include "loader/tiers/tcp_tier.h"

/* Requests per sendmsg. Each draws an ack; 64 acks fit the default
 * receive buffer with room to spare (an overrun would drop acks). */
#define DIAG_BATCH 64

struct diag_msg {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 req;
};

static int diag_socket(void)
{
	struct timeval tv = {.tv_sec = 2};
	int one = 1, fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	/* Acks without a copy of each request; never wait for a lost one. */
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void diag_fill(struct diag_msg *m, const struct eg_tcp_stale *s, __u32 seq)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = sizeof(*m);
	m->nh.nlmsg_type = SOCK_DESTROY;
	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nh.nlmsg_seq = seq;
	m->req.sdiag_family = s->family;
	m->req.sdiag_protocol = IPPROTO_TCP;
	m->req.idiag_states = ~0u;
	m->req.id.idiag_sport = s->sport;
	m->req.id.idiag_dport = s->dport;
	memcpy(m->req.id.idiag_src, s->src, sizeof(s->src));
	memcpy(m->req.id.idiag_dst, s->dst, sizeof(s->dst));
	m->req.id.idiag_if = s->ifindex;
	m->req.id.idiag_cookie[0] = (__u32)s->cookie;
	m->req.id.idiag_cookie[1] = (__u32)(s->cookie >> 32);
}

/* Sends n (<= DIAG_BATCH) requests and reads their acks: cut counts the
 * destroyed, failed the refused (*refused: the first one's -errno); a
 * socket gone since it was found (ENOENT) is neither. Returns 0, or the
 * netlink socket's -errno (the batch's unacked requests count as failed). */
static int diag_batch(int fd, const struct eg_tcp_stale *s, size_t n, unsigned *cut,
		      unsigned *failed, int *refused)
{
	static __thread struct diag_msg msgs[DIAG_BATCH];
	static __thread char buf[8192];
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	size_t acked = 0;

	for (size_t i = 0; i < n; i++)
		diag_fill(&msgs[i], &s[i], (__u32)i + 1);
	if (sendto(fd, msgs, n * sizeof(msgs[0]), 0, (struct sockaddr *)&kernel, sizeof(kernel)) <
	    0) {
		*failed += (unsigned)n;
		return -errno;
	}
	while (acked < n) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh = (struct nlmsghdr *)buf;

		if (len < 0) {
			*failed += (unsigned)(n - acked);
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		for (; NLMSG_OK(nh, (size_t)len); nh = NLMSG_NEXT(nh, len)) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_type != NLMSG_ERROR)
				continue;
			acked++;
			if (!e->error)
				(*cut)++;
			else if (e->error != -ENOENT) {
				(*failed)++;
				if (!*refused)
					*refused = e->error;
			}
		}
	}
	return 0;
}

/* Destroys n stale sockets of the calling thread's namespace. */
static int diag_destroy(const struct eg_tcp_stale *s, size_t n, unsigned *cut, unsigned *failed)
{
	int fd, rc = 0, refused = 0;
	size_t i;

	fd = diag_socket();
	if (fd < 0) {
		*failed += (unsigned)n;
		return fd;
	}
	for (i = 0; i < n && !rc; i += DIAG_BATCH)
		rc = diag_batch(fd, s + i, n - i < DIAG_BATCH ? n - i : DIAG_BATCH, cut, failed,
				&refused);
	if (i < n)
		*failed += (unsigned)(n - i);
	close(fd);
	return rc ? rc : refused;
}

/* Moves the sockets to destroy to the front (the audit-flagged ones are
 * counted when they are the target's, and dropped): how many remain. */
static size_t keep_enforced(struct eg_tcp_stale *s, size_t n, struct eg_tcp_counts *c)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i].flags & EG_TCP_STALE_AUDIT)
			c->would_cut += !memcmp(s[i].sandbox, c->sandbox, sizeof(c->sandbox));
		else
			s[k++] = s[i];
	}
	return k;
}

int eg_tcp_diag_cut(int find_link_fd, struct eg_tcp_counts *c)
{
	size_t cap = 256 * sizeof(struct eg_tcp_stale), used = 0;
	char *all = malloc(cap), *grown;
	ssize_t n;
	int fd, rc = 0;

	if (!all)
		return -ENOMEM;
	fd = bpf_iter_create(find_link_fd);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	/* Whole records arrive in order; a read may end mid-record. */
	while ((n = read(fd, all + used, cap - used)) > 0) {
		used += (size_t)n;
		if (used < cap)
			continue;
		grown = realloc(all, cap * 2);
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		all = grown;
		cap *= 2;
	}
	if (n < 0)
		rc = -errno;
	close(fd);
	if (!rc && used >= sizeof(struct eg_tcp_stale)) {
		size_t k = keep_enforced((struct eg_tcp_stale *)all,
					 used / sizeof(struct eg_tcp_stale), c);

		if (k)
			rc = diag_destroy((const struct eg_tcp_stale *)all, k, &c->cut, &c->failed);
	}
out:
	free(all);
	return rc;
}

struct probe_job {
	int rc;
	char why[200];
};

/* In a thread of its own network namespace (nothing else sees it): a
 * listening socket, destroyed by SOCK_DESTROY with its port and cookie. */
static void *probe_thread(void *arg)
{
	struct probe_job *j = arg;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct eg_tcp_stale s = {.family = AF_INET};
	socklen_t len = sizeof(a);
	unsigned cut = 0, failed = 0;
	int fd = -1;

	j->rc = -EOPNOTSUPP;
	if (unshare(CLONE_NEWNET)) {
		snprintf(j->why, sizeof(j->why), "unshare(CLONE_NEWNET): %s", strerror(errno));
		return NULL;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = sizeof(s.cookie);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1) ||
	    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &s.cookie, &len)) {
		snprintf(j->why, sizeof(j->why), "a probe TCP listener: %s", strerror(errno));
		goto out;
	}
	len = sizeof(a);
	if (getsockname(fd, (struct sockaddr *)&a, &len)) {
		snprintf(j->why, sizeof(j->why), "a probe TCP listener: %s", strerror(errno));
		goto out;
	}
	s.sport = a.sin_port;
	j->rc = diag_destroy(&s, 1, &cut, &failed);
	if (!j->rc && cut != 1)
		j->rc = -ENOENT; /* the request did not find the socket */
	if (j->rc)
		snprintf(j->why, sizeof(j->why),
			 "sock_diag SOCK_DESTROY refused (needs CONFIG_INET_DIAG_DESTROY and "
			 "tcp_diag): %s",
			 strerror(-j->rc));
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

int eg_tcp_diag_probe(char *why, size_t why_size)
{
	static struct probe_job job = {.rc = 1}; /* 1: not probed yet */
	pthread_t th;

	if (job.rc == 1) {
		if (pthread_create(&th, NULL, probe_thread, &job)) {
			job.rc = -EOPNOTSUPP;
			snprintf(job.why, sizeof(job.why), "sock_diag probe: no thread");
		} else {
			pthread_join(th, NULL);
		}
		if (job.rc)
			job.rc = -EOPNOTSUPP;
	}
	if (job.rc)
		snprintf(why, why_size, "%s", job.why);
	return job.rc;
}
