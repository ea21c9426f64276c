/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd v3 client over the JSON gateway (user/fleet/etcd.h): the handle,
 * its endpoints and its settings. One call to the cluster is etcd_post.c
 * (endpoint failover, the user's token), the key-value calls etcd_kv.c, the
 * watch etcd_watch.c. */
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
	if (!len || len > EG_ETCD_ENDPOINT_MAX) {
		eg_etcd_seterr(err, err_size, "etcd endpoint '%.*s': empty or longer than %u bytes",
			       (int)(len > 64 ? 64 : len), s, EG_ETCD_ENDPOINT_MAX);
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
	e->sess = eg_etcd_session_new();
	e->easy = curl_easy_init();
	if (!e->sess || !e->easy) {
		eg_etcd_close(e);
		eg_etcd_seterr(err, err_size, "libcurl: no handle");
		return -ENOMEM;
	}
	e->backoff_ms = e->limit_ms = e->timeout_ms;
	/* Every worker of a fleet is given the same list: one that started on
	 * the first endpoint would put the whole fleet's watches and writes on
	 * one member (docs/fleet.md, "Failover"). */
	e->cur = e->n_ep > 1 ? randombytes_uniform((uint32_t)e->n_ep) : 0;
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
	eg_etcd_session_put(e->sess);
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

unsigned eg_etcd_backoff_ms(const struct eg_etcd *e)
{
	return e->backoff_ms;
}

unsigned eg_etcd_limit_ms(const struct eg_etcd *e)
{
	return e->limit_ms;
}
