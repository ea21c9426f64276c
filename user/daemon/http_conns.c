// SPDX-License-Identifier: Apache-2.0
/* The connections of the HTTP side (daemon/http_impl.h): one accept thread
 * hands each to the libmicrohttpd daemon (shard) holding the fewest, each
 * counted against its role's budget, and a reaper that bounds every
 * request phase; egd_http_start() and egd_http_stop() bring it all up and
 * down. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "daemon/http.h"
#include "daemon/log.h"
#include "daemon/pins_gate.h"
#include "daemon/routes.h"
#include "lib/json.h"
#include "daemon/http_impl.h"

/* --- connections --------------------------------------------------------------- */

static struct egd_conn conns = {.prev = &conns, .next = &conns};
static pthread_mutex_t conns_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t reaper_thread;
static atomic_bool reaper_stop;
static bool reaper_started;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *reaper(void *arg)
{
	struct egd *d = arg;
	double limit = (double)d->cfg.connection_timeout * 1e3;

	while (!atomic_load(&reaper_stop)) {
		double now;

		usleep(250000);
		now = now_ms();
		pthread_mutex_lock(&conns_mu);
		for (struct egd_conn *c = conns.next; c != &conns; c = c->next) {
			if (c->reaped || atomic_load(&c->busy) || now - c->phase_start < limit)
				continue;
			c->reaped = true;
			shutdown(c->fd, SHUT_RDWR);
		}
		pthread_mutex_unlock(&conns_mu);
	}
	return NULL;
}

void egd_http_set_busy(struct MHD_Connection *conn, bool busy)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct egd_conn *c = ci ? ci->socket_context : NULL;

	if (!c)
		return;
	if (!busy)
		c->phase_start = now_ms(); /* the next request's clock */
	atomic_store(&c->busy, busy);
}

static uint64_t load_u64(const uint64_t *v)
{
	return atomic_load_explicit((_Atomic uint64_t *)v, memory_order_relaxed);
}

static uint64_t admit_budget(const struct egd_config *cfg)
{
	return cfg->max_connections - cfg->admin_reserve;
}

/* Per-role budgets, so that the lowest role can never take the
 * revocation path (install, retire) from root and admin_group. Callers
 * without a role never get here (403 first) and hold a share of their own
 * outside max_connections (on_connection). admit_group holds at most
 * max_connections - admin_reserve (its connections beyond are closed at
 * accept, on_connection); admins get 503 only when their own connections
 * and admit_group's together pass max_connections, so at least
 * admin_reserve are always theirs. */
bool egd_http_over_budget(struct egd *d, enum egd_role role)
{
	uint64_t open = load_u64(&d->metrics.connections_open),
		 unpriv = load_u64(&d->metrics.connections_unprivileged),
		 admit = load_u64(&d->metrics.connections_admit);
	uint64_t with_role = open > unpriv ? open - unpriv : 0;
	uint64_t admins = with_role > admit ? with_role - admit : 0;

	if (role == EGD_ROLE_ADMIT)
		return admit > admit_budget(&d->cfg);
	return admins + (admit < admit_budget(&d->cfg) ? admit : admit_budget(&d->cfg)) >
	       d->cfg.max_connections;
}

/* One libmicrohttpd daemon per worker thread (acceptor(), below). open
 * counts the connections handed to it and not yet closed: counted at the
 * hand-over, so that the least loaded is known at once and a burst is held
 * to the limit before any shard has seen it. libmicrohttpd's own limit is
 * never reached (it is set above ours): 0.9.75 can hang a shard's thread
 * when it refuses a connection handed to it from another thread. A
 * connection it drops without telling (out of memory) stays counted. */
#define SHARDS_MAX 64

struct shard {
	struct egd *d;
	struct MHD_Daemon *mhd;
	atomic_uint open;
};

static struct shard shards[SHARDS_MAX];
static unsigned nshards;

static uint64_t unprivileged_share(const struct egd_config *cfg)
{
	return cfg->max_connections / 8 ? cfg->max_connections / 8 : 1;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct shard *sh = cls;
	struct egd *d = sh->d;
	struct egd_conn *c;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		atomic_fetch_add_explicit((_Atomic uint64_t *)&d->metrics.connections_open, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit((_Atomic uint64_t *)&d->metrics.connections_total, 1,
					  memory_order_relaxed);
		*socket_context = NULL;
		c = calloc(1, sizeof(*c));
		if (!c)
			return; /* every request on it gets 403 */
		c->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
		/* No peer credentials: every request on it gets 403. */
		c->have_peer = ci && egd_peer_read(ci->connect_fd, &d->cfg, &c->peer) == 0;
		c->phase_start = now_ms();
		if (!c->have_peer || c->peer.role == EGD_ROLE_NONE) {
			/* Anyone may connect, but a caller without a role can
			 * only ever be told 403: it gets one eighth of the
			 * connections, so that a local flood of them leaves the
			 * sandbox managers room (and no 503). Beyond its share
			 * the connection is shut down at once, as the reaper
			 * does. */
			uint64_t n = atomic_fetch_add_explicit(
			    (_Atomic uint64_t *)&d->metrics.connections_unprivileged, 1,
			    memory_order_relaxed);

			c->unprivileged = true;
			if (n >= unprivileged_share(&d->cfg) && c->fd >= 0) {
				c->reaped = true;
				shutdown(c->fd, SHUT_RDWR);
				atomic_fetch_add_explicit(
				    (_Atomic uint64_t *)&d->metrics.connections_refused, 1,
				    memory_order_relaxed);
			}
		}
		if (c->have_peer && c->peer.role == EGD_ROLE_ADMIT) {
			/* admit_group's budget: beyond it the connection is
			 * shut down at once, so that idle connections of the
			 * lowest role can never fill libmicrohttpd's limit
			 * and leave an admin no connection (egd_http_over_budget). */
			uint64_t n = atomic_fetch_add_explicit(
			    (_Atomic uint64_t *)&d->metrics.connections_admit, 1,
			    memory_order_relaxed);

			c->admit = true;
			if (n >= admit_budget(&d->cfg) && c->fd >= 0) {
				c->reaped = true;
				shutdown(c->fd, SHUT_RDWR);
				atomic_fetch_add_explicit(
				    (_Atomic uint64_t *)&d->metrics.connections_admit_refused, 1,
				    memory_order_relaxed);
			}
		}
		pthread_mutex_lock(&conns_mu);
		c->next = &conns;
		c->prev = conns.prev;
		conns.prev->next = c;
		conns.prev = c;
		pthread_mutex_unlock(&conns_mu);
		*socket_context = c;
		return;
	}
	atomic_fetch_sub_explicit((_Atomic uint64_t *)&d->metrics.connections_open, 1,
				  memory_order_relaxed);
	atomic_fetch_sub(&sh->open, 1);
	c = *socket_context;
	*socket_context = NULL;
	if (!c)
		return;
	pthread_mutex_lock(&conns_mu);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	pthread_mutex_unlock(&conns_mu);
	if (c->unprivileged)
		atomic_fetch_sub_explicit((_Atomic uint64_t *)&d->metrics.connections_unprivileged,
					  1, memory_order_relaxed);
	if (c->admit)
		atomic_fetch_sub_explicit((_Atomic uint64_t *)&d->metrics.connections_admit, 1,
					  memory_order_relaxed);
	if (c->fd >= 0)
		close(c->fd);
	if (c->have_peer)
		egd_peer_release(&c->peer);
	free(c);
}

/* libmicrohttpd's own messages quote the request (a URL, a header) as the
 * client sent it: they go through egd_log, which escapes every byte a
 * client controls. Only MHD's own line end is dropped. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;

	(void)cls;
	/* A connection handed over by MHD_add_connection() is not known to be
	 * a Unix one, so libmicrohttpd tries TCP_NODELAY and TCP_CORK on it
	 * after every answer and says it failed. A Unix stream never holds
	 * data back: nothing to tell the operator. Matched on the format, so
	 * that the answer's hot path formats nothing. */
	if (!strncmp(fmt, "Setting %s option to %s state failed", 36) ||
	    !strncmp(fmt, "Failed to push the data from buffers", 36))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	egd_log(EGD_LOG_INFO, "http: %s", line);
}

/* --- accepting -------------------------------------------------------------- */

/* One libmicrohttpd daemon per worker thread, each without a listen socket;
 * one thread here accepts and hands each connection to the daemon with the
 * fewest. libmicrohttpd's own thread pool shares the listen socket among its
 * workers, and whichever worker is awake takes the next connection: under
 * load that is the busy one, so that every keep-alive client ended up on one
 * or two threads while the others idled, and admits per second fell as
 * clients were added (docs/bench/2026-12-03-admission-ipc.md). */
static pthread_t acceptor_thread;
static bool acceptor_started;
static int stop_pipe[2] = {-1, -1};

/* The least loaded shard, ties broken round-robin. */
static struct shard *pick_shard(unsigned *next)
{
	unsigned best = *next % nshards, best_load = atomic_load(&shards[best].open);

	for (unsigned i = 1; i < nshards && best_load; i++) {
		unsigned k = (*next + i) % nshards, load = atomic_load(&shards[k].open);

		if (load < best_load) {
			best = k;
			best_load = load;
		}
	}
	(*next)++;
	return &shards[best];
}

static unsigned handed(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nshards; i++)
		n += atomic_load(&shards[i].open);
	return n;
}

static unsigned hard_limit(const struct egd_config *cfg)
{
	/* The hard limit has headroom over max_connections (which counts the
	 * callers with a role) for the unprivileged share and then some, so
	 * that a connection beyond it still gets a 503 answer instead of a
	 * reset. */
	return cfg->max_connections + cfg->max_connections / 8 + 16;
}

static bool wait_stop(int ms)
{
	struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};

	return poll(&p, 1, ms) > 0;
}

static void *acceptor(void *arg)
{
	struct egd *d = arg;
	struct pollfd p[2] = {{.fd = d->listen_fd, .events = POLLIN},
			      {.fd = stop_pipe[0], .events = POLLIN}};
	unsigned next = 0, hard = hard_limit(&d->cfg);

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct shard *sh;
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			/* Not expected on two valid fds; said, since nothing
			 * is accepted any more. */
			egd_log(EGD_LOG_ERR, "http: poll on %s: %s: no longer accepting",
				d->cfg.socket, strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		if (handed() >= hard) {
			/* At the limit, as libmicrohttpd at its own: new
			 * connections wait in the backlog until one closes. */
			if (wait_stop(10))
				break;
			continue;
		}
		fd = accept4(d->listen_fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of fds: as libmicrohttpd does, leave the
				 * connection in the backlog for a while. */
				egd_log(EGD_LOG_WARNING, "http: accept: %s", strerror(errno));
				if (wait_stop(100))
					break;
			}
			continue;
		}
		sh = pick_shard(&next);
		atomic_fetch_add(&sh->open, 1);
		/* On failure libmicrohttpd has closed fd and logged why. */
		if (MHD_add_connection(sh->mhd, fd, (struct sockaddr *)&ss, len) != MHD_YES)
			atomic_fetch_sub(&sh->open, 1);
	}
	return NULL;
}

int egd_http_start(struct egd *d, char *err, size_t err_size)
{
	int fl = fcntl(d->listen_fd, F_GETFL);

	nshards = d->cfg.threads < SHARDS_MAX ? d->cfg.threads : SHARDS_MAX;
	if (fl < 0 || fcntl(d->listen_fd, F_SETFL, fl | O_NONBLOCK) ||
	    pipe2(stop_pipe, O_CLOEXEC)) {
		snprintf(err, err_size, "http: socket %s: %s", d->cfg.socket, strerror(errno));
		return -errno;
	}
	for (unsigned i = 0; i < nshards; i++) {
		/* Each shard may hold every connection: the acceptor applies
		 * the limit in all (handed()). */
		shards[i].d = d;
		atomic_store(&shards[i].open, 0);
		shards[i].mhd = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET |
			MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO | MHD_USE_ERROR_LOG,
		    0, NULL, NULL, egd_http_on_request, d, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, d,
		    MHD_OPTION_CONNECTION_LIMIT, hard_limit(&d->cfg) + 64,
		    MHD_OPTION_CONNECTION_TIMEOUT, d->cfg.connection_timeout,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
		    MHD_OPTION_NOTIFY_COMPLETED, egd_http_on_completed, d,
		    MHD_OPTION_NOTIFY_CONNECTION, on_connection, &shards[i], MHD_OPTION_END);
		if (!shards[i].mhd) {
			snprintf(err, err_size, "http: libmicrohttpd did not start on %s",
				 d->cfg.socket);
			egd_http_stop(d);
			return -EIO;
		}
	}
	if (pthread_create(&acceptor_thread, NULL, acceptor, d)) {
		snprintf(err, err_size, "http: no accept thread for %s", d->cfg.socket);
		egd_http_stop(d);
		return -EIO;
	}
	acceptor_started = true;
	if (pthread_create(&reaper_thread, NULL, reaper, d) == 0)
		reaper_started = true;
	return 0;
}

void egd_http_stop(struct egd *d)
{
	if (acceptor_started) {
		if (write(stop_pipe[1], "x", 1) != 1)
			egd_log(EGD_LOG_ERR, "http: could not stop the accept thread");
		else
			pthread_join(acceptor_thread, NULL);
		acceptor_started = false;
	}
	if (reaper_started) {
		atomic_store(&reaper_stop, true);
		pthread_join(reaper_thread, NULL);
		reaper_started = false;
	}
	for (unsigned i = 0; i < nshards; i++) {
		if (shards[i].mhd)
			MHD_stop_daemon(shards[i].mhd);
		shards[i].mhd = NULL;
	}
	nshards = 0;
	for (int i = 0; i < 2; i++) {
		if (stop_pipe[i] >= 0)
			close(stop_pipe[i]);
		stop_pipe[i] = -1;
	}
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	d->listen_fd = -1;
}
