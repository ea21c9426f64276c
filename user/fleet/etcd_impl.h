/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the etcd client: the strict readers of the gateway's JSON
 * (user/fleet/etcd_json.c), the handle and its endpoints (etcd.c) and one
 * POST with failover (etcd_post.c), shared by the key-value calls
 * (etcd_kv.c) and the watch (etcd_watch.c, etcd_watch_read.c). */
#ifndef EXECGATE_FLEET_ETCD_IMPL_H
#define EXECGATE_FLEET_ETCD_IMPL_H

#include <curl/curl.h>
#include <jansson.h>
#include "fleet/etcd.h"

void eg_etcd_seterr(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An int64 the gateway sends as a JSON string of decimal digits
 * ("-" allowed). Absent: 0 (proto3 leaves zero values out). Anything else,
 * a number, an empty string, "12a", out of range: -EPROTO. */
int eg_etcd_json_i64(json_t *obj, const char *name, int64_t *out, char *err, size_t err_size);
/* A bool: absent is false, a non-boolean is -EPROTO. */
int eg_etcd_json_bool(json_t *obj, const char *name, bool *out, char *err, size_t err_size);
/* header.revision of an answer; rev may be NULL (just checked). */
int eg_etcd_header_revision(json_t *ans, int64_t *rev, char *err, size_t err_size);
/* A mvccpb.KeyValue: key (base64, non-empty, no NUL), value (base64,
 * absent = empty), the revisions. for_delete: a delete event's kv, which
 * has no value. On error kv is left empty, except -EILSEQ: a key that
 * holds a NUL, which the callers skip and count (eg_etcd_skipped_keys);
 * kv->key then holds its key_len raw bytes, to be freed. */
int eg_etcd_parse_kv(json_t *j, struct eg_etcd_kv *kv, bool for_delete, char *err, size_t err_size);
void eg_etcd_kv_free(struct eg_etcd_kv *kv);
/* len bytes as the JSON string of their base64 (the gateway's bytes
 * fields); NULL when out of memory. */
json_t *eg_etcd_b64(const void *p, size_t len);

size_t eg_etcd_n_endpoints(const struct eg_etcd *e);
const char *eg_etcd_endpoint_at(const struct eg_etcd *e, size_t i);
size_t eg_etcd_current(const struct eg_etcd *e);
void eg_etcd_set_current(struct eg_etcd *e, size_t i);
unsigned eg_etcd_timeout_ms(const struct eg_etcd *e);
/* The back-off of the calls' limit (etcd_post.c): the timeout, or up to
 * four times it while calls time out; and the limit the last call had. */
unsigned eg_etcd_backoff_ms(const struct eg_etcd *e);
unsigned eg_etcd_limit_ms(const struct eg_etcd *e);

/* TLS and authentication (user/fleet/etcd_auth.c, etcd_post.c). */
/* The handle's copy of an eg_etcd_auth, and the password read. */
struct eg_etcd_creds {
	char *cacert, *cert, *key, *user;
	char *password; /* NUL-terminated, wiped when freed */
};
/* The longest token taken from etcd (etcd's simple tokens are 16 letters
 * and a revision; JWTs a few hundred bytes). */
#define EG_ETCD_TOKEN_MAX 512u

/* The handle (user/fleet/etcd.c). */
#define EG_ETCD_ENDPOINT_MAX 255u /* bytes of one endpoint URL */

struct eg_etcd {
	char *ep[EG_ETCD_MAX_ENDPOINTS];
	size_t n_ep;
	size_t cur; /* the endpoint that answered last; at first one drawn at random */
	unsigned timeout_ms;
	unsigned backoff_ms;	    /* timeout_ms; doubled by each timeout (etcd_post.c) */
	unsigned limit_ms;	    /* the last call's limit, drawn from backoff_ms */
	struct eg_etcd_creds creds; /* TLS files, user, password */
	/* the token, its own or shared (etcd_session.c); never NULL */
	struct eg_etcd_session *sess;
	uint64_t sent_gen;   /* the session's generation of the last token sent */
	CURL *easy;	     /* unary calls; reused for keep-alive */
	uint64_t skipped;    /* keys holding a NUL, skipped (eg_etcd_skipped_keys) */
	volatile int *abort; /* eg_etcd_set_abort: ends a paged read between pages */
};

/* POST req (JSON) to path on every endpoint in turn, the last good one
 * first (user/fleet/etcd_post.c); *answer: the parsed answer (json_decref)
 * on 0, else -errno with err set. */
int eg_etcd_post(struct eg_etcd *e, const char *path, json_t *req, json_t **answer, char *err,
		 size_t err_size);

/* Checks auth (eg_etcd_auth_check) and copies it into c, the password
 * read from its file. */
int eg_etcd_creds_load(const struct eg_etcd_auth *auth, struct eg_etcd_creds *c, char *err,
		       size_t err_size);
void eg_etcd_creds_free(struct eg_etcd_creds *c);
/* The TLS options of every request: protocols, TLS 1.2 at least, the CA
 * file alone when one is given, the client certificate and key. */
void eg_etcd_curl_tls(const struct eg_etcd_creds *c, CURL *h);
/* "Authorization: TOKEN" when the session has a token, else NULL (also
 * when out of memory: the call then goes without it and etcd refuses it);
 * notes which token was sent (etcd_session.c). */
struct curl_slist *eg_etcd_auth_header(struct eg_etcd *e);
/* Whether the handle's session holds a token. */
bool eg_etcd_has_token(struct eg_etcd *e);
/* The session's token into buf (the tests): its length, 0 when none. */
size_t eg_etcd_token_copy(struct eg_etcd *e, char *buf, size_t size);
/* Whether an etcd error message says that the token is not (or no
 * longer) good: authenticate again and repeat. */
bool eg_etcd_token_refused(const char *msg);
/* Whether it says the caller was refused (permission, no user, bad
 * password): -EACCES. */
bool eg_etcd_caller_refused(const char *msg);
struct eg_etcd_creds *eg_etcd_creds(struct eg_etcd *e);
/* A token for the handle's session (etcd_session.c): the one another
 * handle got since this one's was sent, else a new one from endpoint i
 * (eg_etcd_authenticate). 0; -EHOSTUNREACH when it did not answer (try
 * another); -EACCES when etcd refused the user or password; -EPROTO. */
int eg_etcd_login(struct eg_etcd *e, size_t i, char *err, size_t err_size);
/* The request itself (etcd_post.c): *token (free, wipe) on 0. */
int eg_etcd_authenticate(struct eg_etcd *e, size_t i, char **token, char *err, size_t err_size);
void eg_etcd_count_skipped(struct eg_etcd *e);

#endif
