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
#include "daemon/http_impl.h"

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
	return te != NULL; /* chunked: discarded up to the bound, then cut (egd_http_on_request) */
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
	egd_http_set_busy(c->conn, true);
	return egd_reply_error(c, status, error, fmt, detail);
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
	if (egd_http_over_budget(c->d, c->peer->role))
		return early(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded", "%s",
			     "too many connections, retry later");
	return MHD_YES;
}

enum MHD_Result egd_http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size,
				    void **con_cls)
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
	egd_http_set_busy(conn, true);
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

void egd_http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			   enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls;
	(void)toe;
	egd_http_set_busy(conn, false);
	if (!rq)
		return;
	free(rq->body);
	free(rq);
	*con_cls = NULL;
}
