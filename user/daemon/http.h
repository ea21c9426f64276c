/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP/1.1 side: libmicrohttpd on the Unix socket execgated binds, the
 * route table, body collection, authorization and the JSON replies every
 * handler uses.
 *
 * One libmicrohttpd daemon per worker thread (epoll, no listen socket of
 * its own) and one accept thread that hands each connection to the worker
 * holding the fewest (http_conns.c says why); every handler runs on a worker
 * thread and calls the worker handle directly (the handle is thread safe,
 * execgate.h). Per connection: the peer (auth.h) is
 * read once when the connection starts. Per request: the route, its role
 * check and the Content-Length limit are decided on the header, before any
 * body byte is read. */
#ifndef EXECGATE_DAEMON_HTTP_H
#define EXECGATE_DAEMON_HTTP_H

#include <stddef.h>
#include <jansson.h>
#include <microhttpd.h>
#include "daemon/auth.h"
#include "daemon/daemon.h"

#define EGD_BODY_MAX (64 * 1024)

struct egd_call {
	struct egd *d;
	struct MHD_Connection *conn;
	struct egd_peer *peer;		  /* per connection: admit caches the identity here */
	const char *arg;		  /* the {uuid} / {kid} path segment, or "" */
	char arg_canon[EG_UUID_TEXT_LEN]; /* a {uuid}'s canonical text (h_sandboxes.c) */
	const char *body;
	size_t body_len;
	const char *allow; /* 405: the Allow header */
};

typedef enum MHD_Result (*egd_handler)(struct egd_call *c);

/* Replies. Each queues exactly one response and returns MHD's result. */
enum MHD_Result egd_reply_json(struct egd_call *c, unsigned status, json_t *o); /* steals o */
/* in as text for a JSON string or a log line: bytes outside printable
 * ASCII become \xNN. */
void egd_printable(const char *in, char *out, size_t size);
enum MHD_Result egd_reply_error(struct egd_call *c, unsigned status, const char *error,
				const char *reason_fmt, ...) __attribute__((format(printf, 4, 5)));
/* buf is malloc'ed; the response takes it. */
enum MHD_Result egd_reply_buf(struct egd_call *c, unsigned status, const char *content_type,
			      char *buf, size_t len);

/* The body as a JSON object; NULL after replying 400 (why in the reply). */
json_t *egd_body_object(struct egd_call *c, enum MHD_Result *replied);

int egd_http_start(struct egd *d, char *err, size_t err_size);
void egd_http_stop(struct egd *d);

/* execgate status --json's document for d's pins (h_status.c): 0, -ENOENT
 * when nothing is loaded there, -EBADMSG or another -errno on failure. */
int egd_status_doc(struct egd *d, json_t **doc);

/* Handlers (h_*.c). */
enum MHD_Result egd_h_admit(struct egd_call *c);
enum MHD_Result egd_h_check(struct egd_call *c);
enum MHD_Result egd_h_sandbox_list(struct egd_call *c);
enum MHD_Result egd_h_sandbox_show(struct egd_call *c);
enum MHD_Result egd_h_sandbox_install(struct egd_call *c);
enum MHD_Result egd_h_sandbox_retire(struct egd_call *c);
enum MHD_Result egd_h_sandbox_forget(struct egd_call *c);
enum MHD_Result egd_h_sandbox_revoke(struct egd_call *c);
enum MHD_Result egd_h_node_key(struct egd_call *c);
enum MHD_Result egd_h_keys_list(struct egd_call *c);
enum MHD_Result egd_h_key_put(struct egd_call *c);
enum MHD_Result egd_h_key_delete(struct egd_call *c);
enum MHD_Result egd_h_status(struct egd_call *c);
enum MHD_Result egd_h_live(struct egd_call *c);
enum MHD_Result egd_h_ready(struct egd_call *c);
enum MHD_Result egd_h_events(struct egd_call *c);
enum MHD_Result egd_h_metrics(struct egd_call *c);
enum MHD_Result egd_h_mode_put(struct egd_call *c);
enum MHD_Result egd_h_audit(struct egd_call *c);

#endif
