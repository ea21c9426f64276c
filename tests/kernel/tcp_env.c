// SPDX-License-Identifier: Apache-2.0
/* The gateway + guest pair of tcp_env.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/tiers/cgroup.h"
#include "tcp_env.h"

enum op {
	OP_CONNECT = 1,
	OP_CONNECT_MANY,
	OP_SEND,
	OP_RECV,
	OP_SENDTO,
	OP_SEND_MANY,
	OP_TAG,
	OP_PEER_STATE,
	OP_UDP_COUNT,
	OP_COOKIE,
	OP_CLOSE,
	OP_KEY,
};

/* A stream's two ends as "client-addr:port>server-addr:port": how a test
 * names the guest's end of a gateway slot's stream. Accept order is not
 * connect order: a handshake's last ACK can wait in another CPU's backlog
 * while the next connect completes. */
#define KEY_MAX 128

struct te_msg {
	int op, slot, n, port, udp, map_fd, wait_ms;
	char addr[KEY_MAX];
};

struct te_reply {
	int rc;
	int state;
	unsigned long long epoch;
	char key[KEY_MAX];
};

static void die_with_parent(void)
{
	struct rlimit rl;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			rc = -errno;
	} else {
		rc = -errno;
	}
	close(s);
	return rc;
}

static int sockaddr_of(const char *addr, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return AF_INET6;
	}
	return -EINVAL;
}

static int listen_on(int family, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, s;

	s = socket(family, type | SOCK_NONBLOCK, 0);
	if (s < 0)
		_exit(80);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	sockaddr_of(family == AF_INET ? "0.0.0.0" : "::", port, &ss, &len);
	if (bind(s, (struct sockaddr *)&ss, len))
		_exit(81);
	if (type == SOCK_STREAM && listen(s, 4096))
		_exit(82);
	return s;
}

/* addr:port of sa, a v4-mapped IPv6 address written as IPv4, so that both
 * ends of a stream name it alike. */
static void endpoint_text(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
	char ip[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip));
		port = ntohs(a4->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
			inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], ip, sizeof(ip));
		else
			inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof(ip));
		port = ntohs(a6->sin6_port);
	}
	snprintf(out, cap, "%s:%d", ip, port);
}

/* fd's stream key (see KEY_MAX); the client end is fd's own end when
 * client is true, its peer otherwise. Empty when either end is unknown. */
static void stream_key(int fd, bool client, char out[KEY_MAX])
{
	struct sockaddr_storage self, peer;
	socklen_t ls = sizeof(self), lp = sizeof(peer);
	char a[64], b[64];

	out[0] = '\0';
	memset(&self, 0, sizeof(self));
	memset(&peer, 0, sizeof(peer));
	if (getsockname(fd, (struct sockaddr *)&self, &ls) ||
	    getpeername(fd, (struct sockaddr *)&peer, &lp))
		return;
	endpoint_text(client ? &self : &peer, a, sizeof(a));
	endpoint_text(client ? &peer : &self, b, sizeof(b));
	snprintf(out, KEY_MAX, "%s>%s", a, b);
}

/* --- guest ------------------------------------------------------------------ */

#define GUEST_MAX (TE_MAX_SLOTS + 16)

static int conn_fd[GUEST_MAX], conn_state[GUEST_MAX];
static char conn_key[GUEST_MAX][KEY_MAX];
static int nconn, udp_count;

/* The accepted connection whose stream key is key, or -1. */
static int guest_conn_of(const char *key)
{
	for (int k = 0; k < nconn; k++)
		if (key[0] && !strcmp(conn_key[k], key))
			return k;
	return -1;
}

static void guest_event(int ep, int fd, const int *lst, int nl, const int *udp, int nu)
{
	char buf[4096];

	for (int i = 0; i < nl; i++) {
		if (fd != lst[i])
			continue;
		for (;;) {
			int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK);
			struct epoll_event ev = {.events = EPOLLIN};

			if (c < 0)
				return;
			if (nconn == GUEST_MAX) {
				close(c);
				continue;
			}
			conn_fd[nconn] = c;
			conn_state[nconn] = 1;
			stream_key(c, false, conn_key[nconn]);
			ev.data.u64 = (1ULL << 32) | (unsigned)nconn;
			epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
			nconn++;
		}
	}
	for (int i = 0; i < nu; i++)
		if (fd == udp[i])
			while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
				udp_count++;
}

static void guest_conn_event(int ep, int k)
{
	char buf[4096];
	ssize_t n = recv(conn_fd[k], buf, sizeof(buf), MSG_DONTWAIT);

	if (n > 0) {
		/* echo. Data queued before a reset is read first; the reset's
		 * error is then reported once, to whichever call comes next: this
		 * send (the next recv would only see EOF), so record it here. */
		if (send(conn_fd[k], buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    errno != EAGAIN && errno != EINTR) {
			conn_state[k] = -errno;
			epoll_ctl(ep, EPOLL_CTL_DEL, conn_fd[k], NULL);
		}
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	conn_state[k] = n == 0 ? 0 : -errno;
	epoll_ctl(ep, EPOLL_CTL_DEL, conn_fd[k], NULL);
}

static void guest_pump(int ep, const int *lst, int nl, const int *udp, int nu, int ms)
{
	struct epoll_event evs[256];
	int n = epoll_wait(ep, evs, 256, ms);

	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 >> 32)
			guest_conn_event(ep, (int)(evs[i].data.u64 & 0xffffffffu));
		else
			guest_event(ep, (int)evs[i].data.u64, lst, nl, udp, nu);
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void guest_main(int ctl)
{
	int lst[4], udp[2], nl = 0, nu = 0, ep;
	struct epoll_event ev = {.events = EPOLLIN};
	struct te_msg m;
	char ready = 1;

	lst[nl++] = listen_on(AF_INET, SOCK_STREAM, TE_TCP_PORT);
	lst[nl++] = listen_on(AF_INET6, SOCK_STREAM, TE_TCP_PORT);
	lst[nl++] = listen_on(AF_INET, SOCK_STREAM, TE_TCP_PORT + 2);
	lst[nl++] = listen_on(AF_INET, SOCK_STREAM, TE_TCP_PORT + 3);
	udp[nu++] = listen_on(AF_INET, SOCK_DGRAM, TE_UDP_PORT);
	udp[nu++] = listen_on(AF_INET6, SOCK_DGRAM, TE_UDP_PORT);
	ep = epoll_create1(0);
	for (int i = 0; i < nl; i++) {
		ev.data.u64 = (unsigned)lst[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, lst[i], &ev);
	}
	for (int i = 0; i < nu; i++) {
		ev.data.u64 = (unsigned)udp[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, udp[i], &ev);
	}
	ev.data.u64 = (unsigned)ctl;
	if (write(ctl, &ready, 1) != 1)
		_exit(83);
	for (;;) {
		struct pollfd p = {.fd = ctl, .events = POLLIN};
		struct te_reply r = {0};

		guest_pump(ep, lst, nl, udp, nu, 0);
		if (poll(&p, 1, 5) <= 0)
			continue;
		if (read(ctl, &m, sizeof(m)) != sizeof(m))
			_exit(0);
		if (m.op == OP_PEER_STATE) {
			long long end = now_ms() + m.wait_ms;
			int k;

			do {
				guest_pump(ep, lst, nl, udp, nu, 5);
				k = guest_conn_of(m.addr);
			} while ((k < 0 || conn_state[k] == 1) && now_ms() < end);
			r.rc = k >= 0 ? conn_state[k] : -ENOENT;
		} else if (m.op == OP_UDP_COUNT) {
			long long end = now_ms() + 50;

			while (now_ms() < end)
				guest_pump(ep, lst, nl, udp, nu, 5);
			r.rc = udp_count;
		}
		if (write(ctl, &r, sizeof(r)) != sizeof(r))
			_exit(84);
	}
}

/* --- gateway -------------------------------------------------------------- */

static int gw_fd[TE_MAX_SLOTS];
/* Each slot's stream key, taken at connect: a cut socket may no longer
 * tell its port. */
static char gw_key[TE_MAX_SLOTS][KEY_MAX];

static int gw_connect(const char *addr, int port, bool udp)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = sockaddr_of(addr, port, &ss, &len), s;

	if (fam < 0)
		return fam;
	s = socket(fam, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&ss, len)) {
		int e = -errno;

		close(s);
		return e;
	}
	return s;
}

static void gw_put(int slot, int fd)
{
	if (slot < 0 || slot >= TE_MAX_SLOTS) {
		close(fd);
		return;
	}
	if (gw_fd[slot] > 0)
		close(gw_fd[slot]);
	gw_fd[slot] = fd;
	stream_key(fd, true, gw_key[slot]);
}

/* fd's SO_COOKIE, eg_inet_tags' key: 0 or -errno. */
static int sock_cookie(int fd, unsigned long long *out)
{
	socklen_t len = sizeof(*out);

	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, out, &len) ? -errno : 0;
}

static struct te_reply gw_do(const struct te_msg *m)
{
	struct te_reply r = {0};
	struct sockaddr_storage ss;
	struct timeval tv = {.tv_sec = 2};
	socklen_t len;
	char c = 'x', buf[64];
	int fd = m->slot >= 0 && m->slot < TE_MAX_SLOTS ? gw_fd[m->slot] : -1;
	ssize_t n;

	switch (m->op) {
	case OP_CONNECT:
		r.rc = gw_connect(m->addr, m->port, m->udp);
		if (r.rc >= 0) {
			gw_put(m->slot, r.rc);
			r.rc = 0;
		}
		break;
	case OP_CONNECT_MANY:
		for (int i = 0; i < m->n; i++) {
			int s = gw_connect(m->addr, m->port, false);

			if (s < 0) {
				r.rc = s;
				return r;
			}
			gw_put(m->slot + i, s);
			r.rc++;
		}
		break;
	case OP_SEND:
		r.rc = send(fd, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
		break;
	case OP_SEND_MANY:
		for (int i = 0; i < m->n; i++)
			if (send(gw_fd[m->slot + i], &c, 1, MSG_NOSIGNAL) != 1)
				r.rc++;
		break;
	case OP_RECV:
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(fd, buf, sizeof(buf), 0);
		r.rc = n >= 0 ? (int)n : -errno;
		break;
	case OP_SENDTO: {
		int fam = sockaddr_of(m->addr, m->port, &ss, &len), s;

		s = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s < 0) {
			r.rc = -errno;
			break;
		}
		r.rc = sendto(s, &c, 1, 0, (struct sockaddr *)&ss, len) == 1 ? 0 : -errno;
		close(s);
		break;
	}
	case OP_TAG: {
		struct eg_inet_tag tag;
		unsigned long long cookie;

		r.rc = sock_cookie(fd, &cookie);
		if (r.rc)
			break;
		r.rc = bpf_map_lookup_elem(m->map_fd, &cookie, &tag) ? -errno : 0;
		if (!r.rc) {
			r.epoch = tag.epoch;
			r.state = tag.state;
		}
		break;
	}
	case OP_COOKIE:
		r.rc = sock_cookie(fd, &r.epoch);
		break;
	case OP_KEY:
		r.rc = fd >= 0 && gw_key[m->slot][0] ? 0 : -ENOENT;
		if (!r.rc)
			snprintf(r.key, sizeof(r.key), "%s", gw_key[m->slot]);
		break;
	case OP_CLOSE:
		r.rc = fd >= 0 && !close(fd) ? 0 : -EBADF;
		if (fd >= 0)
			gw_fd[m->slot] = -1;
		break;
	default:
		r.rc = -EINVAL;
	}
	return r;
}

static void gateway_main(int ctl, int guest_ctl_child, int guest_ctl_parent)
{
	char ready = 1;
	struct te_msg m;
	pid_t guest;

	if (unshare(CLONE_NEWNET) || lo_up())
		_exit(85);
	guest = fork();
	if (guest < 0)
		_exit(86);
	if (guest == 0) {
		close(ctl);
		close(guest_ctl_parent);
		die_with_parent();
		guest_main(guest_ctl_child);
		_exit(0);
	}
	close(guest_ctl_child);
	close(guest_ctl_parent);
	/* In the cgroup only now: the guest is not, as in production. */
	if (eg_cgroup_join(kh.cgroup))
		_exit(87);
	if (write(ctl, &guest, sizeof(guest)) != sizeof(guest) || write(ctl, &ready, 1) != 1)
		_exit(88);
	while (read(ctl, &m, sizeof(m)) == sizeof(m)) {
		struct te_reply r = gw_do(&m);

		if (write(ctl, &r, sizeof(r)) != sizeof(r))
			_exit(89);
	}
	_exit(0);
}

void te_start(struct te_env *e)
{
	int gw[2], gs[2];
	char ready;
	pid_t pid;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gw), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gs), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(gw[0]);
		die_with_parent();
		gateway_main(gw[1], gs[1], gs[0]);
	}
	close(gw[1]);
	close(gs[1]);
	kh_track(pid);
	e->gateway = pid;
	e->gw_ctl = gw[0];
	e->guest_ctl = gs[0];
	cr_assert_eq(read(e->gw_ctl, &e->guest, sizeof(e->guest)), (ssize_t)sizeof(e->guest),
		     "gateway %d did not start (netns, cgroup)", (int)pid);
	kh_track(e->guest);
	cr_assert_eq(read(e->gw_ctl, &ready, 1), 1, "gateway %d did not start", (int)pid);
	cr_assert_eq(read(e->guest_ctl, &ready, 1), 1, "guest %d did not start", (int)e->guest);
}

static struct te_reply call(int fd, const struct te_msg *m)
{
	struct te_reply r;

	cr_assert_eq(write(fd, m, sizeof(*m)), (ssize_t)sizeof(*m));
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r), "test child died");
	return r;
}

static struct te_msg msg(int op, int slot, const char *addr, int port)
{
	struct te_msg m;

	memset(&m, 0, sizeof(m));
	m.op = op;
	m.slot = slot;
	m.port = port;
	if (addr)
		snprintf(m.addr, sizeof(m.addr), "%s", addr);
	return m;
}

int te_connect(struct te_env *e, int slot, const char *addr, int port, bool udp)
{
	struct te_msg m = msg(OP_CONNECT, slot, addr, port);

	m.udp = udp;
	return call(e->gw_ctl, &m).rc;
}

int te_connect_many(struct te_env *e, int first, int n, const char *addr, int port)
{
	struct te_msg m = msg(OP_CONNECT_MANY, first, addr, port);

	m.n = n;
	return call(e->gw_ctl, &m).rc;
}

int te_send(struct te_env *e, int slot)
{
	struct te_msg m = msg(OP_SEND, slot, NULL, 0);

	return call(e->gw_ctl, &m).rc;
}

int te_send_many(struct te_env *e, int first, int n)
{
	struct te_msg m = msg(OP_SEND_MANY, first, NULL, 0);

	m.n = n;
	return call(e->gw_ctl, &m).rc;
}

int te_recv(struct te_env *e, int slot)
{
	struct te_msg m = msg(OP_RECV, slot, NULL, 0);

	return call(e->gw_ctl, &m).rc;
}

int te_sendto(struct te_env *e, const char *addr, int port)
{
	struct te_msg m = msg(OP_SENDTO, 0, addr, port);

	return call(e->gw_ctl, &m).rc;
}

int te_tag(struct te_env *e, int slot, int map_fd, unsigned long long *epoch, int *state)
{
	struct te_msg m = msg(OP_TAG, slot, NULL, 0);
	struct te_reply r;

	m.map_fd = map_fd;
	r = call(e->gw_ctl, &m);
	if (epoch)
		*epoch = r.epoch;
	if (state)
		*state = r.state;
	return r.rc;
}

int te_cookie(struct te_env *e, int slot, unsigned long long *cookie)
{
	struct te_msg m = msg(OP_COOKIE, slot, NULL, 0);
	struct te_reply r = call(e->gw_ctl, &m);

	*cookie = r.epoch;
	return r.rc;
}

int te_close(struct te_env *e, int slot)
{
	struct te_msg m = msg(OP_CLOSE, slot, NULL, 0);

	return call(e->gw_ctl, &m).rc;
}

int te_peer_state(struct te_env *e, int slot, int wait_ms)
{
	struct te_msg k = msg(OP_KEY, slot, NULL, 0), m;
	struct te_reply key = call(e->gw_ctl, &k);

	if (key.rc)
		return key.rc;
	m = msg(OP_PEER_STATE, slot, key.key, 0);
	m.wait_ms = wait_ms;
	return call(e->guest_ctl, &m).rc;
}

int te_udp_count(struct te_env *e)
{
	struct te_msg m = msg(OP_UDP_COUNT, 0, NULL, 0);

	return call(e->guest_ctl, &m).rc;
}

const char *te_gateway_pid(struct te_env *e)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%d", (int)e->gateway);
	return buf;
}
