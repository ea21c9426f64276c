/* SPDX-License-Identifier: Apache-2.0 */
/* One call to the cluster (user/fleet/etcd_impl.h, eg_etcd_post): a POST
 * to each endpoint in turn, the last good one first, as the user when the
 * handle has one (a token taken first, and again once when etcd refuses
 * it). Every answer is parsed strictly and is bounded
 * (EG_ETCD_MAX_ANSWER). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>
#include "fleet/backoff.h"
#include "fleet/etcd.h"
#include "fleet/etcd_impl.h"

#define AUTH_PATH "/v3/auth/authenticate"
/* The most a call's limit grows to, in timeouts. */
#define LIMIT_GROWTH 4u
/* A login's limit: etcd checks the password with bcrypt (tens of ms of a
 * core at its default cost) before it looks at anything else, and goes on
 * checking it when the client has given up. A fleet that logs in at once
 * (a restart, a member that forgot its tokens) queues thousands of
 * checks: clients that gave up after 2 s and asked again queued them
 * again, and the queue never drained (1 003 workers on two cores,
 * docs/bench/2026-12-07-fleet-scale-logins.md). A login waits for its
 * answer; the connect limit still finds a member that is down. */
#define LOGIN_LIMIT_MS 30000u

/* --- unary calls ------------------------------------------------------- */

struct membuf {
	char *p;
	size_t len, cap;
	bool over;
};

static size_t membuf_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct membuf *b = ud;
	size_t n = size * nmemb;

	if (n > EG_ETCD_MAX_ANSWER - b->len) {
		b->over = true;
		return 0; /* refused, not grown */
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;

		while (cap < b->len + n + 1)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np)
			return 0;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* TLS 1.3 servers refuse a client without a certificate by an alert after
 * the handshake: curl then sees only a send or receive failing. */
static const char *tls_hint(const struct eg_etcd *e, size_t idx, CURLcode cc)
{
	if (e->creds.cert || strncmp(e->ep[idx], "https://", 8))
		return "";
	if (cc != CURLE_SEND_ERROR && cc != CURLE_RECV_ERROR && cc != CURLE_SSL_CONNECT_ERROR)
		return "";
	return "; no client certificate was given, which an etcd with --client-cert-auth "
	       "refuses";
}

/* After a call timed out, the next ones get longer: the fleet's retry
 * back-off (fleet/backoff.h) applied to the limit, doubled up to
 * LIMIT_GROWTH times the timeout, each call's limit drawn between half and
 * all of it (never below the timeout). A member behind on its work still
 * does a request whose client gave up, and a fleet whose clients all gave
 * up at the same 2 s sent it all again to the next member at once. An
 * answer sets it back to the timeout. */
static void slower(struct eg_etcd *e)
{
	uint64_t top = (uint64_t)e->timeout_ms * LIMIT_GROWTH;

	/* curl takes a long */
	e->backoff_ms =
	    eg_backoff_next(e->backoff_ms, (unsigned)(top > INT32_MAX ? INT32_MAX : top));
}

static unsigned call_limit(const struct eg_etcd *e)
{
	unsigned drawn;

	if (e->backoff_ms <= e->timeout_ms)
		return e->timeout_ms;
	drawn = eg_backoff_jittered(e->backoff_ms, randombytes_random());
	return drawn < e->timeout_ms ? e->timeout_ms : drawn;
}

/* ATTEMPT_AUTH: etcd refused the token (expired, or the auth store moved
 * on): authenticate again and repeat, once. */
enum attempt { ATTEMPT_OK, ATTEMPT_NEXT, ATTEMPT_FAIL, ATTEMPT_AUTH };

/* One POST to one endpoint, with the token when there is one.
 * ATTEMPT_NEXT: that endpoint did not serve it (unreachable, a refused
 * TLS handshake, timed out, no leader): try another. */
static enum attempt post_one(struct eg_etcd *e, size_t idx, const char *path, const char *body,
			     json_t **answer, int *rc, char *err, size_t err_size)
{
	struct membuf b = {0};
	struct curl_slist *hdr = NULL;
	char url[EG_ETCD_ENDPOINT_MAX + 64], why[CURL_ERROR_SIZE] = "";
	json_error_t jerr;
	CURLcode cc;
	long status = 0;
	json_t *j;
	bool login = !strcmp(path, AUTH_PATH);

	snprintf(url, sizeof(url), "%s%s", e->ep[idx], path);
	curl_easy_reset(e->easy);
	curl_easy_setopt(e->easy, CURLOPT_URL, url);
	curl_easy_setopt(e->easy, CURLOPT_POSTFIELDS, body);
	e->limit_ms = login ? (e->timeout_ms > LOGIN_LIMIT_MS ? e->timeout_ms : LOGIN_LIMIT_MS)
			    : call_limit(e);
	curl_easy_setopt(e->easy, CURLOPT_TIMEOUT_MS, (long)e->limit_ms);
	curl_easy_setopt(e->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)e->timeout_ms);
	curl_easy_setopt(e->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->easy, CURLOPT_ERRORBUFFER, why);
	eg_etcd_curl_tls(&e->creds, e->easy);
	if (!login) {
		hdr = eg_etcd_auth_header(e);
		curl_easy_setopt(e->easy, CURLOPT_HTTPHEADER, hdr);
	}
	curl_easy_setopt(e->easy, CURLOPT_WRITEFUNCTION, membuf_write);
	curl_easy_setopt(e->easy, CURLOPT_WRITEDATA, &b);
	cc = curl_easy_perform(e->easy);
	curl_easy_setopt(e->easy, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(e->easy, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdr);
	if (b.over) {
		free(b.p);
		*rc = -EPROTO;
		eg_etcd_seterr(err, err_size, "etcd %s%s: answer above %u bytes refused",
			       e->ep[idx], path, EG_ETCD_MAX_ANSWER);
		return ATTEMPT_FAIL;
	}
	if (cc == CURLE_OPERATION_TIMEDOUT)
		slower(e);
	else if (cc == CURLE_OK)
		e->backoff_ms = e->timeout_ms;
	if (cc != CURLE_OK) {
		free(b.p);
		*rc = -EHOSTUNREACH;
		/* curl's detail names a refused handshake: "tlsv13 alert
		 * certificate required", "unable to get local issuer" */
		eg_etcd_seterr(err, err_size, "etcd %s: %s%s%.160s%s%s", e->ep[idx],
			       curl_easy_strerror(cc), why[0] ? " (" : "", why, why[0] ? ")" : "",
			       tls_hint(e, idx, cc));
		return ATTEMPT_NEXT;
	}
	curl_easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE, &status);
	j = b.p ? json_loadb(b.p, b.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!j || !json_is_object(j)) {
		json_decref(j);
		free(b.p);
		if (status != 200) {
			/* A proxy or a member that is not ready: not etcd's answer. */
			*rc = -EHOSTUNREACH;
			eg_etcd_seterr(err, err_size, "etcd %s%s: HTTP %ld", e->ep[idx], path,
				       status);
			return ATTEMPT_NEXT;
		}
		*rc = -EPROTO;
		eg_etcd_seterr(err, err_size, "etcd %s%s: answer does not parse as a JSON object",
			       e->ep[idx], path);
		return ATTEMPT_FAIL;
	}
	free(b.p);
	if (status != 200 || json_object_get(j, "error")) {
		json_t *code = json_object_get(j, "code");
		const char *msg = json_string_value(json_object_get(j, "message"));
		long gc = json_is_integer(code) ? (long)json_integer_value(code) : -1;

		eg_etcd_seterr(err, err_size, "etcd %s%s: HTTP %ld: %.200s", e->ep[idx], path,
			       status, msg ? msg : "(no message)");
		if (e->creds.user && eg_etcd_token_refused(msg)) {
			json_decref(j);
			*rc = -EACCES;
			return ATTEMPT_AUTH;
		}
		if (eg_etcd_caller_refused(msg) || eg_etcd_token_refused(msg)) {
			eg_etcd_seterr(err, err_size, "etcd %s%s: refused for %s%s%s: %.200s",
				       e->ep[idx], path, e->creds.user ? "user '" : "",
				       e->creds.user ? e->creds.user : "a client without a user",
				       e->creds.user ? "'" : "", msg);
			json_decref(j);
			*rc = -EACCES;
			return ATTEMPT_FAIL;
		}
		json_decref(j);
		/* gRPC UNAVAILABLE / DEADLINE_EXCEEDED (no leader, timeout):
		 * another member may serve it. */
		if (gc == 14 || gc == 4 || status == 503 || status == 504) {
			*rc = -EHOSTUNREACH;
			return ATTEMPT_NEXT;
		}
		*rc = gc == 11 ? -ERANGE : -EIO; /* OUT_OF_RANGE: compacted */
		return ATTEMPT_FAIL;
	}
	*answer = j;
	return ATTEMPT_OK;
}

int eg_etcd_authenticate(struct eg_etcd *e, size_t idx, char **token, char *err, size_t err_size)
{
	json_t *req, *ans = NULL;
	const char *tok;
	char *body;
	int rc = -EHOSTUNREACH;
	enum attempt a;

	*token = NULL;
	req = json_pack("{s:s, s:s}", "name", e->creds.user, "password", e->creds.password);
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req); /* jansson copied the password: wiped below with body */
	if (!body)
		return -ENOMEM;
	a = post_one(e, idx % e->n_ep, AUTH_PATH, body, &ans, &rc, err, err_size);
	sodium_memzero(body, strlen(body));
	free(body);
	if (a != ATTEMPT_OK)
		return rc == -EIO ? -EACCES : rc;
	tok = json_string_value(json_object_get(ans, "token"));
	if (!tok || !*tok || strlen(tok) > EG_ETCD_TOKEN_MAX || strpbrk(tok, "\r\n")) {
		json_decref(ans);
		eg_etcd_seterr(err, err_size, "etcd %s%s: no usable token in the answer",
			       e->ep[idx % e->n_ep], AUTH_PATH);
		return -EPROTO;
	}
	*token = strdup(tok);
	json_decref(ans);
	return *token ? 0 : -ENOMEM;
}

struct eg_etcd_creds *eg_etcd_creds(struct eg_etcd *e)
{
	return &e->creds;
}

/* One POST to endpoint idx as the user: a token first if there is none,
 * and once more when etcd refuses the one sent. */
static enum attempt post_auth(struct eg_etcd *e, size_t idx, const char *path, const char *body,
			      json_t **answer, int *rc, char *err, size_t err_size)
{
	enum attempt a;

	if (e->creds.user && !eg_etcd_has_token(e)) {
		*rc = eg_etcd_login(e, idx, err, err_size);
		if (*rc)
			return *rc == -EHOSTUNREACH ? ATTEMPT_NEXT : ATTEMPT_FAIL;
	}
	a = post_one(e, idx, path, body, answer, rc, err, err_size);
	if (a != ATTEMPT_AUTH)
		return a;
	*rc = eg_etcd_login(e, idx, err, err_size);
	if (*rc)
		return *rc == -EHOSTUNREACH ? ATTEMPT_NEXT : ATTEMPT_FAIL;
	a = post_one(e, idx, path, body, answer, rc, err, err_size);
	return a == ATTEMPT_AUTH ? ATTEMPT_FAIL : a; /* a new token refused: -EACCES */
}

/* POST body to every endpoint in turn, the last good one first. */
int eg_etcd_post(struct eg_etcd *e, const char *path, json_t *req, json_t **answer, char *err,
		 size_t err_size)
{
	char *body = json_dumps(req, JSON_COMPACT);
	size_t k;
	int rc = -EHOSTUNREACH;

	*answer = NULL;
	if (!body)
		return -ENOMEM;
	for (k = 0; k < e->n_ep; k++) {
		size_t idx = (e->cur + k) % e->n_ep;
		enum attempt a = post_auth(e, idx, path, body, answer, &rc, err, err_size);

		if (a == ATTEMPT_OK) {
			e->cur = idx;
			rc = 0;
			break;
		}
		if (a == ATTEMPT_FAIL) {
			e->cur = idx;
			break;
		}
	}
	free(body);
	if (rc == -EHOSTUNREACH && k == e->n_ep && e->n_ep > 1) {
		char last[256];

		snprintf(last, sizeof(last), "%s", err ? err : "");
		eg_etcd_seterr(err, err_size, "no etcd endpoint answered (last: %s)", last);
	}
	return rc;
}
