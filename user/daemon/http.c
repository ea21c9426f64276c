// SPDX-License-Identifier: Apache-2.0
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

/* --- routes ----------------------------------------------------------------- */

struct route {
	const char *method;
	const char *pattern; /* "{}" matches one non-empty segment */
	egd_handler handler;
	enum egd_role need;
	enum egd_route_maps maps;
};

#define ROUTE_ROW(method, pattern, handler, need, maps) {method, pattern, handler, need, maps},
static const struct route routes[] = {EGD_ROUTES(ROUTE_ROW)};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

#define ARG_MAX 128

/* Matches url against pattern; copies the {} segment into arg. */
static bool match(const char *pattern, const char *url, char arg[ARG_MAX])
{
	const char *p = pattern, *u = url;

	arg[0] = '\0';
	while (*p) {
		if (p[0] == '{' && p[1] == '}') {
			size_t n = strcspn(u, "/");

			if (!n || n >= ARG_MAX)
				return false;
			memcpy(arg, u, n);
			arg[n] = '\0';
			u += n;
			p += 2;
			continue;
		}
		if (*p++ != *u++)
			return false;
	}
	return *u == '\0';
}

/* --- replies ------------------------------------------------------------------ */

enum MHD_Result egd_reply_buf(struct egd_call *c, unsigned status, const char *content_type,
			      char *buf, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (c->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, c->allow);
	ret = MHD_queue_response(c->conn, status, resp);
	MHD_destroy_response(resp);
	egd_metrics_http(&c->d->metrics, status);
	return ret;
}

enum MHD_Result egd_reply_json(struct egd_call *c, unsigned status, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t len;

	json_decref(o);
	if (!text)
		return MHD_NO;
	len = strlen(text);
	text[len] = '\n'; /* json_dumps' NUL becomes the line end */
	return egd_reply_buf(c, status, "application/json", text, len + 1);
}

/* A reason quotes the client (a path segment, a field name) and the kernel
 * (socket paths): bytes outside printable ASCII become \xNN, so that text
 * that is not UTF-8, or a UTF-8 sequence cut by a %.64s, still makes a JSON
 * answer (jansson refuses such strings, and the client would get none). */
void egd_printable(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 5 < size; in++) {
		unsigned char ch = (unsigned char)*in;

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
	}
	out[o] = '\0';
}

enum MHD_Result egd_reply_error(struct egd_call *c, unsigned status, const char *error,
				const char *reason_fmt, ...)
{
	char reason[EG_ERR_MAX], text[EG_ERR_MAX];
	va_list ap;

	va_start(ap, reason_fmt);
	vsnprintf(reason, sizeof(reason), reason_fmt, ap);
	va_end(ap);
	egd_printable(reason, text, sizeof(text));
	return egd_reply_json(c, status, eg_json_error(error, text));
}

json_t *egd_body_object(struct egd_call *c, enum MHD_Result *replied)
{
	json_error_t jerr;
	json_t *o;

	o = json_loadb(c->body ? c->body : "", c->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		*replied =
		    egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				    "body: not JSON: %s (offset %d)", jerr.text, jerr.position);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		*replied = egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
					   "body: not a JSON object");
		return NULL;
	}
	return o;
}

/* --- connections --------------------------------------------------------------- */

/* MHD's own timeout counts inactivity, so a client sending one byte a
 * second would hold a connection (and a pool slot) forever. The reaper
 * gives every request phase -- from connect, or from the previous answer,
 * until the request is complete -- connection_timeout seconds in total,
 * and then shuts the socket down; MHD sees the hang-up and closes the
 * connection the usual way. It shuts down a dup() of MHD's fd, so it can
 * never hit a number MHD has closed and reused. */
struct egd_conn {
	struct egd_peer peer;
	bool have_peer;
	int fd;		    /* dup of the connection's socket */
	double phase_start; /* ms, CLOCK_MONOTONIC */
	atomic_bool busy;   /* answered or streaming: MHD's business now */
	bool reaped;
	bool unprivileged; /* no role: counted in connections_unprivileged */
	bool admit;	   /* admit_group: counted in connections_admit */
	struct egd_conn *prev, *next;
};

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

static void set_busy(struct MHD_Connection *conn, bool busy)
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

/* --- requests ------------------------------------------------------------------ */

struct request {
	const struct route *route;
	bool answered; /* replied on the header: discard the body */
	bool too_big;
	/* Decided on the header, answered once the body is read (early()). */
	bool deferred;
	unsigned status;
	const char *error;
	char reason[EG_ERR_MAX];
	char allow[64];
	char arg[ARG_MAX];
	char *body;
	size_t len, cap;
};

/* Is a body of at most EGD_BODY_MAX bytes coming? */
static bool bounded_body(struct egd_call *c)
{
	const char *clen =
	    MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);

	if (clen)
		return strtoull(clen, NULL, 10) > 0 && strtoull(clen, NULL, 10) <= EGD_BODY_MAX;
	return te != NULL; /* chunked: discarded up to the bound, then cut (on_request) */
}

/* An answer decided on the header. With a body on its way, the answer
 * waits until the body has been read and thrown away: a client still
 * writing its body would otherwise find the socket closed under it
 * (EPIPE, or a reset that loses the answer) and never read why. Only a
 * body of at most EGD_BODY_MAX bytes is waited for, within the reaper's
 * connection_timeout; a bigger one is answered at once. */
static enum MHD_Result early(struct egd_call *c, struct request *rq, unsigned status,
			     const char *error, const char *fmt, const char *detail)
{
	if (status != MHD_HTTP_CONTENT_TOO_LARGE && bounded_body(c)) {
		rq->deferred = true;
		rq->status = status;
		rq->error = error;
		snprintf(rq->reason, sizeof(rq->reason), fmt, detail);
		if (c->allow)
			snprintf(rq->allow, sizeof(rq->allow), "%s", c->allow);
		c->allow = NULL;
		return MHD_YES;
	}
	rq->answered = true;
	set_busy(c->conn, true);
	return egd_reply_error(c, status, error, fmt, detail);
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
static bool over_budget(struct egd *d, enum egd_role role)
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

/* On the header: route, role, size and load decide before any body byte. */
static enum MHD_Result on_header(struct egd_call *c, struct request *rq, const char *url,
				 const char *method)
{
	const struct route *path_hit = NULL;
	const char *clen;
	char arg[ARG_MAX], allow[64] = "";

	for (size_t i = 0; i < NROUTES; i++) {
		if (!match(routes[i].pattern, url, arg))
			continue;
		path_hit = &routes[i];
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
			 allow[0] ? ", " : "", routes[i].method);
		if (!strcmp(routes[i].method, method)) {
			rq->route = &routes[i];
			memcpy(rq->arg, arg, sizeof(arg));
			break;
		}
	}
	if (!path_hit)
		return early(c, rq, MHD_HTTP_NOT_FOUND, "not found", "%s: no such endpoint", url);
	c->allow = allow;
	if (!rq->route)
		return early(c, rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", "%s",
			     method);
	c->allow = NULL;
	if (!c->peer || c->peer->role < rq->route->need)
		return early(c, rq, MHD_HTTP_FORBIDDEN, "forbidden", "%s",
			     c->peer ? (rq->route->need == EGD_ROLE_ADMIN
					    ? "needs root or admin_group"
					    : "needs root, admin_group or admit_group")
				     : "no peer credentials");
	clen =
	    MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (clen && strtoull(clen, NULL, 10) > EGD_BODY_MAX)
		return early(c, rq, MHD_HTTP_CONTENT_TOO_LARGE, "body too large",
			     "more than %s bytes", "65536");
	if (over_budget(c->d, c->peer->role))
		return early(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded", "%s",
			     "too many connections, retry later");
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	const union MHD_ConnectionInfo *ci;
	struct egd_call c = {.d = cls, .conn = conn};
	struct request *rq = *con_cls;

	(void)version;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context && ((struct egd_conn *)ci->socket_context)->have_peer)
		c.peer = &((struct egd_conn *)ci->socket_context)->peer;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		return on_header(&c, rq, url, method);
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (rq->deferred) {
			rq->len += n;
			/* Chunked past the bound: nothing more is read. */
			return rq->len > EGD_BODY_MAX ? MHD_NO : MHD_YES;
		}
		if (rq->answered || rq->too_big)
			return MHD_YES;
		if (rq->len + n > EGD_BODY_MAX) {
			/* Chunked, so no Content-Length said so up front. */
			rq->too_big = true;
			return MHD_YES;
		}
		if (rq->len + n > rq->cap) {
			size_t cap = rq->cap ? rq->cap : 1024;
			char *b;

			while (cap < rq->len + n)
				cap *= 2;
			b = realloc(rq->body, cap);
			if (!b)
				return MHD_NO;
			rq->body = b;
			rq->cap = cap;
		}
		memcpy(rq->body + rq->len, upload_data, n);
		rq->len += n;
		return MHD_YES;
	}
	if (rq->answered)
		return MHD_YES;
	rq->answered = true;
	set_busy(conn, true);
	if (rq->deferred) {
		c.allow = rq->allow[0] ? rq->allow : NULL;
		return egd_reply_error(&c, rq->status, rq->error, "%s", rq->reason);
	}
	if (rq->too_big)
		return egd_reply_error(&c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large",
				       "more than %d bytes", EGD_BODY_MAX);
	c.arg = rq->arg;
	c.body = rq->body;
	c.body_len = rq->len;
	{
		enum MHD_Result replied;

		if (!egd_pins_gate(&c, rq->route->maps == EGD_MAPS, &replied))
			return replied;
	}
	return rq->route->handler(&c);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls;
	(void)toe;
	set_busy(conn, false);
	if (!rq)
		return;
	free(rq->body);
	free(rq);
	*con_cls = NULL;
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
			 * and leave an admin no connection (over_budget). */
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
		    0, NULL, NULL, on_request, d, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, d,
		    MHD_OPTION_CONNECTION_LIMIT, hard_limit(&d->cfg) + 64,
		    MHD_OPTION_CONNECTION_TIMEOUT, d->cfg.connection_timeout,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
		    MHD_OPTION_NOTIFY_COMPLETED, on_completed, d, MHD_OPTION_NOTIFY_CONNECTION,
		    on_connection, &shards[i], MHD_OPTION_END);
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
