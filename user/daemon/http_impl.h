/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the HTTP side (daemon/http.h): what the request side (http.c) and
 * the connection side (http_conns.c) share. */
#ifndef EXECGATE_DAEMON_HTTP_IMPL_H
#define EXECGATE_DAEMON_HTTP_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <microhttpd.h>
#include "daemon/auth.h"
#include "daemon/daemon.h"

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

/* A connection's request phase is over (busy: answered or streaming, the
 * reaper leaves it alone) or a new one begins (its clock restarts). */
void egd_http_set_busy(struct MHD_Connection *conn, bool busy);
/* Whether a caller of role would pass its role's share of
 * max_connections (http_conns.c says how the shares are set). */
bool egd_http_over_budget(struct egd *d, enum egd_role role);

/* libmicrohttpd's access handler and completion callback (http.c), given to
 * every shard by egd_http_start(). */
enum MHD_Result egd_http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size,
				    void **con_cls);
void egd_http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			   enum MHD_RequestTerminationCode toe);

#endif
