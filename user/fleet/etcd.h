/* SPDX-License-Identifier: Apache-2.0 */
/* A small etcd v3 client over its JSON gateway (POST /v3/kv/range,
 * /v3/kv/put, /v3/watch; keys and values base64, int64 fields as JSON
 * strings), with libcurl and jansson. It holds no execgate logic: the
 * fleet watcher (execgated) and `execgate-issue fence` are built on it.
 *
 * Endpoints fail over: every call tries the endpoint that last answered
 * first, then the others in order, and fails only when none answers. One
 * handle is used by one thread at a time; a watch blocks its thread. */
#ifndef EXECGATE_FLEET_ETCD_H
#define EXECGATE_FLEET_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EG_ETCD_MAX_ENDPOINTS 8
/* Bounds on what etcd may send: one unary answer, and one message of a
 * watch stream, above EG_ETCD_MAX_ANSWER bytes is refused (-EPROTO), not
 * buffered; a get that would return more than EG_ETCD_MAX_KVS keys too. */
#define EG_ETCD_MAX_ANSWER (8u << 20)
#define EG_ETCD_MAX_KVS	   (1u << 20)

struct eg_etcd;

/* How the client proves itself to etcd and checks etcd (docs/fleet.md,
 * "The etcd client"); every member may be NULL:
 *   - cacert: a PEM file of the CA(s) that signed the members'
 *     certificates; when given, the server is verified against it alone,
 *     not the system's CAs; NULL: the system's CAs;
 *   - cert, key: a PEM client certificate and its key (mutual TLS), both
 *     or neither. With etcd's auth on, the JSON gateway refuses a client
 *     certificate that holds a CN: use one without (subject /O=...);
 *   - user, password_file: etcd's user/password authentication, both or
 *     neither. The password is the file's first line (a trailing newline
 *     is dropped); the file must be a regular file that neither group nor
 *     others may read or write (mode 0600 or 0400), and not empty. The
 *     token etcd gives for them (POST /v3/auth/authenticate) goes with
 *     every call as the Authorization header; when etcd answers that it is
 *     invalid (expired, or the auth store moved on), the client
 *     authenticates again once and repeats the call. The password is never
 *     part of an error. */
struct eg_etcd_auth {
	const char *cacert;
	const char *cert, *key;
	const char *user;
	const char *password_file;
};

/* endpoints: "https://10.0.0.1:2379[,https://...]" (at most
 * EG_ETCD_MAX_ENDPOINTS). Plain http:// is taken only to a loopback host
 * (127.0.0.0/8, [::1], localhost): anything else is -EINVAL, named. auth
 * may be NULL (no TLS files, no user); its files are checked here
 * (eg_etcd_auth_check), and the password read; no I/O to etcd happens
 * before the first call. timeout_ms bounds each connect and each unary
 * call (0: 2000); after a call timed out the next ones get up to four times
 * that, drawn at random, until one is answered. The first call goes to an
 * endpoint drawn at random. -EINVAL (or -errno of a file) with err naming
 * the bad endpoint or file. */
int eg_etcd_open_auth(const char *endpoints, unsigned timeout_ms, const struct eg_etcd_auth *auth,
		      struct eg_etcd **out, char *err, size_t err_size);
/* eg_etcd_open_auth() without TLS files or a user. */
int eg_etcd_open(const char *endpoints, unsigned timeout_ms, struct eg_etcd **out, char *err,
		 size_t err_size);
/* The checks eg_etcd_open_auth() makes of auth, without opening anything
 * of etcd's: the pairs are complete, each file can be read, the password
 * file is private and not empty. 0, or -EINVAL / -EPERM / -errno with err
 * naming the file and the reason. */
int eg_etcd_auth_check(const struct eg_etcd_auth *auth, char *err, size_t err_size);
/* Whether an endpoint's URL may be plain http://: its host is a loopback
 * address (127.0.0.0/8, [::1], localhost). */
bool eg_etcd_is_loopback_url(const char *url, size_t len);
void eg_etcd_close(struct eg_etcd *e);
/* One user's token, shared by handles (user/fleet/etcd_session.c). Every
 * handle has one of its own; handles given the same session log in once
 * between them: when etcd refuses the token, the first handle to see it
 * logs in again and the others take its token. A login costs etcd a
 * bcrypt of the password, and a fleet logs in all at once after a restart
 * or an auth change (docs/fleet.md, "Logins"). A session is counted:
 * eg_etcd_session_new() holds one reference, each handle set to it one;
 * it is freed with the last (eg_etcd_session_put, eg_etcd_close).
 * Handles on different threads may share one. */
struct eg_etcd_session;
struct eg_etcd_session *eg_etcd_session_new(void); /* NULL: out of memory */
void eg_etcd_session_put(struct eg_etcd_session *s);
/* Before the handle's first call. -EINVAL (named in err) when the session
 * already serves another user, or a user and the handle has none (or the
 * other way round); NULL s: no change. */
int eg_etcd_set_session(struct eg_etcd *e, struct eg_etcd_session *s, char *err, size_t err_size);
/* Tokens etcd gave the session's handles. */
uint64_t eg_etcd_session_logins(struct eg_etcd_session *s);
/* The endpoint that answered last (for logs and status). */
const char *eg_etcd_endpoint(const struct eg_etcd *e);
/* Keys that held a NUL byte, skipped by reads and watches on this handle
 * (each one alone: the rest of the answer is delivered). */
uint64_t eg_etcd_skipped_keys(const struct eg_etcd *e);

struct eg_etcd_kv {
	char *key; /* NUL-terminated (a key holding a NUL is skipped, counted) */
	size_t key_len;
	char *value; /* value_len bytes, NUL-terminated for convenience */
	size_t value_len;
	int64_t create_revision, mod_revision, version;
};

struct eg_etcd_range {
	int64_t revision; /* the store's revision when the read was served */
	/* header.cluster_id: a restored or re-created store may have
	 * another (0 when the answer did not say) */
	uint64_t cluster_id;
	size_t n;
	struct eg_etcd_kv *kvs;
};
void eg_etcd_range_free(struct eg_etcd_range *r);

/* One key (prefix false) or every key under it (prefix true), all pages.
 * 0 (also when nothing matched: r->n == 0), or a negative errno with err:
 * -EHOSTUNREACH when no endpoint answered (a refused TLS handshake
 * included: err says why), -EPROTO for an answer that does not parse,
 * -EACCES when etcd refused the caller: permission denied for its role, no
 * user given to an etcd with auth on, a wrong password, or a token refused
 * again right after a new one was obtained. The same for every call below. */
int eg_etcd_get(struct eg_etcd *e, const char *key, bool prefix, struct eg_etcd_range *r, char *err,
		size_t err_size);
/* A read of many pages ends between two pages with -ECANCELED once *flag
 * is nonzero (NULL: never), so that a thread that stops does not wait for
 * a read of a prefix a writer filled. */
void eg_etcd_set_abort(struct eg_etcd *e, volatile int *flag);
/* The same, only the keys written at min_mod_revision or later (0: all):
 * etcd filters them, so a read of a large prefix that changed little sends
 * little (r->revision is still the store's). */
int eg_etcd_get_since(struct eg_etcd *e, const char *key, bool prefix, int64_t min_mod_revision,
		      struct eg_etcd_range *r, char *err, size_t err_size);
/* Put; *revision (may be NULL) gets the store's revision after it. */
int eg_etcd_put(struct eg_etcd *e, const char *key, const char *value, size_t value_len,
		int64_t *revision, char *err, size_t err_size);
int eg_etcd_delete(struct eg_etcd *e, const char *key, bool prefix, int64_t *revision, char *err,
		   size_t err_size);
/* Compacts the history up to revision (tests and the soak force one). 0
 * also when the store was already compacted at or beyond revision (a
 * retry on another member after a timeout lands there). */
int eg_etcd_compact(struct eg_etcd *e, int64_t revision, char *err, size_t err_size);

enum eg_etcd_event_type { EG_ETCD_PUT = 0, EG_ETCD_DELETE = 1 };
struct eg_etcd_event {
	enum eg_etcd_event_type type;
	struct eg_etcd_kv kv; /* for a delete: key and mod_revision only */
};

/* What a watch follows: one key, or a prefix. */
struct eg_etcd_watch_spec {
	const char *key;
	bool prefix;
};

/* Calls fn for every batch of events the watch streams, in revision order
 * per spec, with the header revision of that batch. fn returns 0 to go on,
 * anything else to stop (returned). Blocks until then, or until *stop
 * becomes nonzero (checked at least every 200 ms), or the stream fails.
 * Returns:
 *   - fn's nonzero value, or 0 when *stop ended it;
 *   - -ECANCELED when etcd canceled the watch because start_revision was
 *     compacted: *compact_revision gets the oldest revision still held
 *     (read everything again, then watch from that read's revision + 1);
 *   - -EHOSTUNREACH / -EPIPE / -EPROTO when no endpoint answered, the
 *     stream broke or an answer did not parse (the caller resumes from its
 *     last applied revision + 1, on whatever endpoint answers).
 * All specs share start_revision. Progress notifications (empty batches)
 * reach fn with n == 0, so the caller can track the store's revision: the
 * revision given is the lowest that every spec's stream has confirmed, so
 * everything up to it has been delivered on all of them (etcd sends them
 * every 10 min by default, --experimental-watch-progress-notify-interval).
 * The watch is asked for on the endpoint that answered last, then the
 * others; one that refuses it, answers an error or does not create it
 * within 2 x timeout_ms is skipped until something was delivered. A stream
 * on a member that vanishes without a FIN breaks after about 10 s (TCP
 * keepalive and user timeout). A put whose answer was lost with its member
 * may be applied twice (retried on the next endpoint): a watch then sees
 * the same value at two revisions. */
int eg_etcd_watch(struct eg_etcd *e, const struct eg_etcd_watch_spec *specs, size_t n_specs,
		  int64_t start_revision,
		  int (*fn)(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx),
		  void *ctx, volatile int *stop, int64_t *compact_revision, char *err,
		  size_t err_size);

#endif
