/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd v3 client over the JSON gateway (user/fleet/etcd.h): unary
 * calls with endpoint failover, and the watch, one HTTP stream per spec
 * driven together by one curl multi handle. Every answer is parsed
 * strictly and is bounded (EG_ETCD_MAX_ANSWER, EG_ETCD_MAX_KVS). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>
#include "fleet/etcd.h"
#include "fleet/etcd_impl.h"

#define DEFAULT_TIMEOUT_MS 2000u
#define ENDPOINT_MAX	   255u
#define PAGE_LIMIT	   "1000"
#define AUTH_PATH	   "/v3/auth/authenticate"

struct eg_etcd {
	char *ep[EG_ETCD_MAX_ENDPOINTS];
	size_t n_ep;
	size_t cur; /* the endpoint that answered last */
	unsigned timeout_ms;
	struct eg_etcd_creds creds; /* TLS files, user, password, token */
	CURL *easy;		    /* unary calls; reused for keep-alive */
	uint64_t skipped;	    /* keys holding a NUL, skipped (eg_etcd_skipped_keys) */
	volatile int *abort;	    /* eg_etcd_set_abort: ends a paged read between pages */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	/* the password lives in sodium_malloc'd memory (etcd_auth.c) */
	if (sodium_init() < 0)
		curl_init_rc = CURLE_FAILED_INIT;
}

void eg_etcd_seterr(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (!err || !err_size)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

static int add_endpoint(struct eg_etcd *e, const char *s, size_t len, char *err, size_t err_size)
{
	size_t i;

	while (len && s[len - 1] == '/')
		len--;
	if (!len || len > ENDPOINT_MAX) {
		eg_etcd_seterr(err, err_size, "etcd endpoint '%.*s': empty or longer than %u bytes",
			       (int)(len > 64 ? 64 : len), s, ENDPOINT_MAX);
		return -EINVAL;
	}
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8)) {
		eg_etcd_seterr(err, err_size, "etcd endpoint '%.*s': not http:// or https://",
			       (int)len, s);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#') {
			eg_etcd_seterr(err, err_size,
				       "etcd endpoint '%.*s': holds a space, control, '?' or '#'",
				       (int)len, s);
			return -EINVAL;
		}
	}
	if (len <= (size_t)(s[4] == 's' ? 8 : 7)) {
		eg_etcd_seterr(err, err_size, "etcd endpoint '%.*s': no host", (int)len, s);
		return -EINVAL;
	}
	if (memchr(s, '@', len)) {
		eg_etcd_seterr(err, err_size,
			       "etcd endpoint '%.*s': holds user info (give a user and a password "
			       "file)",
			       (int)len, s);
		return -EINVAL;
	}
	/* Whoever sits on the path of plain HTTP reads and forges every
	 * answer and ack: only to this host's own loopback. */
	if (s[4] != 's' && !eg_etcd_is_loopback_url(s, len)) {
		eg_etcd_seterr(err, err_size,
			       "etcd endpoint '%.*s': plain http:// to a host that is not loopback "
			       "(127.0.0.0/8, [::1], localhost): use https://",
			       (int)len, s);
		return -EINVAL;
	}
	if (e->n_ep == EG_ETCD_MAX_ENDPOINTS) {
		eg_etcd_seterr(err, err_size, "etcd endpoints: more than %d",
			       EG_ETCD_MAX_ENDPOINTS);
		return -EINVAL;
	}
	e->ep[e->n_ep] = strndup(s, len);
	if (!e->ep[e->n_ep])
		return -ENOMEM;
	e->n_ep++;
	return 0;
}

int eg_etcd_open(const char *endpoints, unsigned timeout_ms, struct eg_etcd **out, char *err,
		 size_t err_size)
{
	return eg_etcd_open_auth(endpoints, timeout_ms, NULL, out, err, err_size);
}

int eg_etcd_open_auth(const char *endpoints, unsigned timeout_ms, const struct eg_etcd_auth *auth,
		      struct eg_etcd **out, char *err, size_t err_size)
{
	struct eg_etcd *e;
	const char *p, *comma;
	int rc;

	*out = NULL;
	if (!endpoints || !*endpoints) {
		eg_etcd_seterr(err, err_size, "etcd endpoints: empty");
		return -EINVAL;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		eg_etcd_seterr(err, err_size, "libcurl: initialisation failed");
		return -EIO;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->timeout_ms = timeout_ms ? timeout_ms : DEFAULT_TIMEOUT_MS;
	for (p = endpoints;; p = comma + 1) {
		comma = strchr(p, ',');
		rc = add_endpoint(e, p, comma ? (size_t)(comma - p) : strlen(p), err, err_size);
		if (rc < 0) {
			eg_etcd_close(e);
			return rc;
		}
		if (!comma)
			break;
	}
	rc = eg_etcd_creds_load(auth, &e->creds, err, err_size);
	if (rc < 0) {
		eg_etcd_close(e);
		return rc;
	}
	e->easy = curl_easy_init();
	if (!e->easy) {
		eg_etcd_close(e);
		eg_etcd_seterr(err, err_size, "libcurl: no handle");
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

void eg_etcd_close(struct eg_etcd *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n_ep; i++)
		free(e->ep[i]);
	if (e->easy)
		curl_easy_cleanup(e->easy);
	eg_etcd_creds_free(&e->creds);
	free(e);
}

const char *eg_etcd_endpoint(const struct eg_etcd *e)
{
	return e->ep[e->cur];
}

uint64_t eg_etcd_skipped_keys(const struct eg_etcd *e)
{
	return e->skipped;
}

void eg_etcd_count_skipped(struct eg_etcd *e)
{
	e->skipped++;
}

void eg_etcd_set_abort(struct eg_etcd *e, volatile int *flag)
{
	e->abort = flag;
}

/* header.cluster_id, a uint64 as a decimal string (above INT64_MAX as
 * often as not); absent: 0. */
static int header_cluster(json_t *ans, uint64_t *out, char *err, size_t err_size)
{
	json_t *v = json_object_get(json_object_get(ans, "header"), "cluster_id");
	const char *s = json_string_value(v);
	uint64_t acc = 0;

	*out = 0;
	if (!v)
		return 0;
	if (!s || !*s || strlen(s) > 20 || json_string_length(v) != strlen(s))
		goto bad;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || acc > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			goto bad;
		acc = acc * 10 + (uint64_t)(*p - '0');
	}
	*out = acc;
	return 0;
bad:
	eg_etcd_seterr(err, err_size, "etcd answer: header.cluster_id is not a uint64 string");
	return -EPROTO;
}

void eg_etcd_range_free(struct eg_etcd_range *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		eg_etcd_kv_free(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

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
	char url[ENDPOINT_MAX + 64], why[CURL_ERROR_SIZE] = "";
	json_error_t jerr;
	CURLcode cc;
	long status = 0;
	json_t *j;

	snprintf(url, sizeof(url), "%s%s", e->ep[idx], path);
	curl_easy_reset(e->easy);
	curl_easy_setopt(e->easy, CURLOPT_URL, url);
	curl_easy_setopt(e->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e->easy, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
	curl_easy_setopt(e->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)e->timeout_ms);
	curl_easy_setopt(e->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->easy, CURLOPT_ERRORBUFFER, why);
	eg_etcd_curl_tls(&e->creds, e->easy);
	if (strcmp(path, AUTH_PATH)) {
		hdr = eg_etcd_auth_header(&e->creds);
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

int eg_etcd_login(struct eg_etcd *e, size_t idx, char *err, size_t err_size)
{
	json_t *req, *ans = NULL;
	const char *tok;
	char *body;
	int rc = -EHOSTUNREACH;
	enum attempt a;

	if (e->creds.token) {
		sodium_memzero(e->creds.token, strlen(e->creds.token));
		free(e->creds.token);
		e->creds.token = NULL;
	}
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
	if (!tok || !*tok || strlen(tok) > 512 || strpbrk(tok, "\r\n")) {
		json_decref(ans);
		eg_etcd_seterr(err, err_size, "etcd %s%s: no usable token in the answer",
			       e->ep[idx % e->n_ep], AUTH_PATH);
		return -EPROTO;
	}
	e->creds.token = strdup(tok);
	json_decref(ans);
	return e->creds.token ? 0 : -ENOMEM;
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

	if (e->creds.user && !e->creds.token) {
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
static int post(struct eg_etcd *e, const char *path, json_t *req, json_t **answer, char *err,
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

/* range_end for "every key starting with key": key with its last byte
 * below 0xff incremented and the rest cut; "\0" (to the end) when none. */
static json_t *prefix_end(const char *key, size_t len)
{
	unsigned char *end = malloc(len ? len : 1);
	json_t *j;

	if (!end)
		return NULL;
	memcpy(end, key, len);
	while (len && end[len - 1] == 0xff)
		len--;
	if (!len) {
		end[0] = 0;
		j = eg_etcd_b64(end, 1);
	} else {
		end[len - 1]++;
		j = eg_etcd_b64(end, len);
	}
	free(end);
	return j;
}

static int set_key(json_t *req, const char *key, bool prefix)
{
	size_t len = strlen(key);

	/* The empty key does not exist; as a prefix it is "every key". */
	if (!len && prefix) {
		if (json_object_set_new(req, "key", eg_etcd_b64("", 1)) ||
		    json_object_set_new(req, "range_end", eg_etcd_b64("", 1)))
			return -ENOMEM;
		return 0;
	}
	if (json_object_set_new(req, "key", eg_etcd_b64(key, len)))
		return -ENOMEM;
	if (prefix && json_object_set_new(req, "range_end", prefix_end(key, len)))
		return -ENOMEM;
	return 0;
}

static int check_key(const char *key, bool prefix, char *err, size_t err_size)
{
	if (!key || (!*key && !prefix)) {
		eg_etcd_seterr(err, err_size, "etcd: empty key");
		return -EINVAL;
	}
	return 0;
}

int eg_etcd_get(struct eg_etcd *e, const char *key, bool prefix, struct eg_etcd_range *r, char *err,
		size_t err_size)
{
	return eg_etcd_get_since(e, key, prefix, 0, r, err, err_size);
}

int eg_etcd_get_since(struct eg_etcd *e, const char *key, bool prefix, int64_t min_mod_revision,
		      struct eg_etcd_range *r, char *err, size_t err_size)
{
	json_t *req = NULL, *ans = NULL;
	char *next = NULL;
	size_t next_len = 0;
	int64_t at = 0;
	size_t cap = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = check_key(key, prefix, err, err_size);
	if (rc < 0)
		return rc;
	for (;;) {
		json_t *kvs;
		bool more = false;
		size_t i;

		if (e->abort && *e->abort) {
			rc = -ECANCELED;
			eg_etcd_seterr(err, err_size, "etcd range: aborted");
			goto out;
		}
		req = json_object();
		if (!req || set_key(req, key, prefix)) {
			rc = -ENOMEM;
			goto out;
		}
		if (next && json_object_set_new(req, "key", eg_etcd_b64(next, next_len + 1))) {
			rc = -ENOMEM; /* next page: from the last key + "\0" */
			goto out;
		}
		if (min_mod_revision > 0) {
			char mm[24];

			snprintf(mm, sizeof(mm), "%lld", (long long)min_mod_revision);
			if (json_object_set_new(req, "min_mod_revision", json_string(mm))) {
				rc = -ENOMEM;
				goto out;
			}
		}
		if (prefix && json_object_set_new(req, "limit", json_string(PAGE_LIMIT))) {
			rc = -ENOMEM;
			goto out;
		}
		if (at) {
			/* Every page at the first page's revision: one snapshot. */
			char rev[24];

			snprintf(rev, sizeof(rev), "%lld", (long long)at);
			if (json_object_set_new(req, "revision", json_string(rev))) {
				rc = -ENOMEM;
				goto out;
			}
		}
		rc = post(e, "/v3/kv/range", req, &ans, err, err_size);
		json_decref(req);
		req = NULL;
		if (rc < 0)
			goto out;
		rc = eg_etcd_header_revision(ans, at ? NULL : &r->revision, err, err_size);
		if (rc >= 0 && !at)
			rc = header_cluster(ans, &r->cluster_id, err, err_size);
		if (rc < 0)
			goto out;
		if (!at)
			at = r->revision;
		rc = eg_etcd_json_bool(ans, "more", &more, err, err_size);
		if (rc < 0)
			goto out;
		kvs = json_object_get(ans, "kvs");
		if (kvs && !json_is_array(kvs)) {
			rc = -EPROTO;
			eg_etcd_seterr(err, err_size, "etcd range: kvs is not an array");
			goto out;
		}
		if (more && (!kvs || !json_array_size(kvs))) {
			rc = -EPROTO;
			eg_etcd_seterr(err, err_size, "etcd range: more pages but no key");
			goto out;
		}
		if (json_array_size(kvs) > EG_ETCD_MAX_KVS - r->n) {
			rc = -EPROTO;
			eg_etcd_seterr(err, err_size, "etcd range: more than %u keys refused",
				       EG_ETCD_MAX_KVS);
			goto out;
		}
		if (r->n + json_array_size(kvs) > cap) {
			size_t ncap = cap ? cap : 16;
			struct eg_etcd_kv *nk;

			while (ncap < r->n + json_array_size(kvs))
				ncap *= 2;
			nk = realloc(r->kvs, ncap * sizeof(*nk));
			if (!nk) {
				rc = -ENOMEM;
				goto out;
			}
			r->kvs = nk;
			cap = ncap;
		}
		for (i = 0; i < json_array_size(kvs); i++) {
			struct eg_etcd_kv *kv = &r->kvs[r->n];

			rc = eg_etcd_parse_kv(json_array_get(kvs, i), kv, false, err, err_size);
			if (rc == -EILSEQ && (!prefix || !memcmp(kv->key, key, strlen(key)))) {
				/* a key holding a NUL: skipped alone, counted; the
				 * next page still starts after it */
				free(next);
				next = kv->key;
				next_len = kv->key_len;
				kv->key = NULL;
				eg_etcd_kv_free(kv);
				e->skipped++;
				continue;
			}
			if (rc == -EILSEQ) {
				eg_etcd_kv_free(kv);
				rc = -EPROTO;
				eg_etcd_seterr(err, err_size,
					       "etcd range: answered a key outside the prefix");
			}
			if (rc < 0)
				goto out;
			free(next);
			next = NULL;
			r->n++;
			if (!prefix && strcmp(kv->key, key)) {
				rc = -EPROTO;
				eg_etcd_seterr(err, err_size, "etcd range: answered another key");
				goto out;
			}
			if (prefix && strncmp(kv->key, key, strlen(key))) {
				rc = -EPROTO;
				eg_etcd_seterr(err, err_size,
					       "etcd range: answered a key outside the prefix");
				goto out;
			}
			if (r->n > 1 && strcmp(r->kvs[r->n - 2].key, kv->key) >= 0) {
				rc = -EPROTO;
				eg_etcd_seterr(err, err_size, "etcd range: keys not ascending");
				goto out;
			}
		}
		json_decref(ans);
		ans = NULL;
		if (!more || !prefix)
			break;
		if (!next) { /* the page ended on a key kept */
			next = strdup(r->kvs[r->n - 1].key);
			next_len = next ? strlen(next) : 0;
		}
		if (!next) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = 0;
out:
	free(next);
	json_decref(req);
	json_decref(ans);
	if (rc < 0)
		eg_etcd_range_free(r);
	return rc;
}

/* post(), then the answer's header revision into *revision (may be
 * NULL); takes req. */
static int post_revision(struct eg_etcd *e, const char *path, json_t *req, int64_t *revision,
			 char *err, size_t err_size)
{
	json_t *ans = NULL;
	int64_t rev = 0;
	int rc = post(e, path, req, &ans, err, err_size);

	json_decref(req);
	if (rc < 0)
		return rc;
	rc = eg_etcd_header_revision(ans, &rev, err, err_size);
	json_decref(ans);
	if (rc == 0 && revision)
		*revision = rev;
	return rc;
}

int eg_etcd_put(struct eg_etcd *e, const char *key, const char *value, size_t value_len,
		int64_t *revision, char *err, size_t err_size)
{
	json_t *req;
	int rc = check_key(key, false, err, err_size);

	if (rc < 0)
		return rc;
	req = json_object();
	if (!req || set_key(req, key, false) ||
	    json_object_set_new(req, "value", eg_etcd_b64(value, value_len))) {
		json_decref(req);
		return -ENOMEM;
	}
	return post_revision(e, "/v3/kv/put", req, revision, err, err_size);
}

int eg_etcd_delete(struct eg_etcd *e, const char *key, bool prefix, int64_t *revision, char *err,
		   size_t err_size)
{
	json_t *req;
	int rc = check_key(key, prefix, err, err_size);

	if (rc < 0)
		return rc;
	req = json_object();
	if (!req || set_key(req, key, prefix)) {
		json_decref(req);
		return -ENOMEM;
	}
	return post_revision(e, "/v3/kv/deleterange", req, revision, err, err_size);
}

int eg_etcd_compact(struct eg_etcd *e, int64_t revision, char *err, size_t err_size)
{
	json_t *req, *ans = NULL;
	char rev[24];
	int rc;

	if (revision <= 0) {
		eg_etcd_seterr(err, err_size, "etcd compact: revision %lld is not positive",
			       (long long)revision);
		return -EINVAL;
	}
	snprintf(rev, sizeof(rev), "%lld", (long long)revision);
	req = json_pack("{s:s, s:b}", "revision", rev, "physical", 1);
	if (!req)
		return -ENOMEM;
	rc = post(e, "/v3/kv/compaction", req, &ans, err, err_size);
	json_decref(req);
	/* Idempotent: "already compacted" means the store holds nothing below
	 * revision, which is what was asked. A physical compaction that
	 * outlived the call's timeout on one member and was sent again to the
	 * next one answers this (OUT_OF_RANGE; a future revision is also
	 * OUT_OF_RANGE, with another message, and stays an error). */
	if (rc == -ERANGE && err && strstr(err, "required revision has been compacted")) {
		if (err_size)
			err[0] = '\0';
		return 0;
	}
	if (rc < 0)
		return rc;
	rc = eg_etcd_header_revision(ans, NULL, err, err_size);
	json_decref(ans);
	return rc;
}

size_t eg_etcd_n_endpoints(const struct eg_etcd *e)
{
	return e->n_ep;
}

const char *eg_etcd_endpoint_at(const struct eg_etcd *e, size_t i)
{
	return e->ep[i % e->n_ep];
}

size_t eg_etcd_current(const struct eg_etcd *e)
{
	return e->cur;
}

void eg_etcd_set_current(struct eg_etcd *e, size_t i)
{
	e->cur = i % e->n_ep;
}

unsigned eg_etcd_timeout_ms(const struct eg_etcd *e)
{
	return e->timeout_ms;
}
