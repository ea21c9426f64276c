/* SPDX-License-Identifier: Apache-2.0 */
/* eg_etcd_watch() (user/fleet/etcd.h): one POST /v3/watch stream per spec,
 * all driven by one curl multi handle in the caller's thread; what the
 * streams carry is read by user/fleet/etcd_watch_read.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>
#include "fleet/etcd_impl.h"
#include "fleet/etcd_watch_impl.h"

#define WATCH_POLL_MS 200

static char *create_request(const struct eg_etcd_watch_spec *spec, int64_t start_revision)
{
	json_t *req = json_object(), *top;
	size_t len = strlen(spec->key);
	char *out = NULL;

	if (!req)
		return NULL;
	if (!len) {
		json_object_set_new(req, "key", eg_etcd_b64("", 1));
		json_object_set_new(req, "range_end", eg_etcd_b64("", 1));
	} else {
		json_object_set_new(req, "key", eg_etcd_b64(spec->key, len));
		if (spec->prefix) {
			char *end = strdup(spec->key);
			size_t l = len;

			if (!end)
				goto out;
			while (l && (unsigned char)end[l - 1] == 0xff)
				l--;
			if (l) {
				end[l - 1]++;
				json_object_set_new(req, "range_end", eg_etcd_b64(end, l));
			} else {
				json_object_set_new(req, "range_end", eg_etcd_b64("", 1));
			}
			free(end);
		}
	}
	if (start_revision > 0) {
		char rev[24];

		snprintf(rev, sizeof(rev), "%lld", (long long)start_revision);
		json_object_set_new(req, "start_revision", json_string(rev));
	}
	json_object_set_new(req, "progress_notify", json_true());
	top = json_pack("{s:o}", "create_request", req);
	req = NULL;
	if (top)
		out = json_dumps(top, JSON_COMPACT);
	json_decref(top);
out:
	json_decref(req);
	return out;
}

/* A member that vanishes without a FIN (a cut network, a frozen host) is
 * noticed in about 10 s: keepalive after 4 s idle, 3 probes 2 s apart, and
 * unacknowledged data given up after 10 s. */
static int sockopt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	int cnt = 3, user_timeout = 10000;

	(void)ud;
	if (purpose == CURLSOCKTYPE_IPCXN) {
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	}
	return CURL_SOCKOPT_OK;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void streams_free(struct watch *w, CURLM *m)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct stream *s = &w->s[i];

		if (s->h) {
			curl_multi_remove_handle(m, s->h);
			curl_easy_cleanup(s->h);
		}
		free(s->buf);
		free(s->body);
		memset(s, 0, sizeof(*s));
	}
}

static int streams_start(struct watch *w, CURLM *m, const struct eg_etcd_watch_spec *specs)
{
	char url[320];
	size_t i;

	snprintf(url, sizeof(url), "%s/v3/watch", eg_etcd_endpoint_at(w->e, w->ep));
	for (i = 0; i < w->n; i++) {
		struct stream *s = &w->s[i];

		s->w = w;
		s->spec = &specs[i];
		s->body = create_request(&specs[i], w->start_revision);
		s->h = curl_easy_init();
		if (!s->body || !s->h)
			return -ENOMEM;
		curl_easy_setopt(s->h, CURLOPT_URL, url);
		curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
		curl_easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT_MS, (long)eg_etcd_timeout_ms(w->e));
		curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
		eg_etcd_curl_tls(eg_etcd_creds(w->e), s->h);
		curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, w->hdr);
		curl_easy_setopt(s->h, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(s->h, CURLOPT_TCP_KEEPIDLE, 4L);
		curl_easy_setopt(s->h, CURLOPT_TCP_KEEPINTVL, 2L);
		curl_easy_setopt(s->h, CURLOPT_SOCKOPTFUNCTION, sockopt);
		curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, eg_etcd_watch_on_data);
		curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
		curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
		if (curl_multi_add_handle(m, s->h) != CURLM_OK)
			return -ENOMEM;
	}
	return 0;
}

/* Drive the streams on one endpoint. *next: that endpoint did not serve
 * the watch before anything was delivered (try the next one). */
static int run(struct watch *w, CURLM *m, volatile int *stop, bool *next)
{
	double t0 = mono_ms();

	*next = false;
	for (;;) {
		struct CURLMsg *msg;
		int running = 0, left;
		size_t i;

		if (stop && *stop)
			return 0;
		/* an endpoint that takes the request but does not create the
		 * watch in time (a frozen member) does not serve it */
		for (i = 0; i < w->n && w->s[i].created; i++)
			;
		if (i < w->n && !w->delivered && mono_ms() - t0 > 2.0 * eg_etcd_timeout_ms(w->e)) {
			eg_etcd_seterr(
			    w->err, w->err_size, "etcd watch %s: not created within %u ms",
			    eg_etcd_endpoint_at(w->e, w->ep), 2 * eg_etcd_timeout_ms(w->e));
			*next = true;
			return -EHOSTUNREACH;
		}
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			eg_etcd_seterr(w->err, w->err_size, "etcd watch: curl multi failed");
			return -EIO;
		}
		if (w->rc_set) {
			/* e.g. "no leader" from a cut-off member, before any event */
			*next = w->rc == -EPIPE && !w->delivered;
			return w->rc;
		}
		while ((msg = curl_multi_info_read(m, &left))) {
			struct stream *s = NULL;
			long status = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
			s->done = true;
			s->cc = msg->data.result;
			if (!w->delivered) {
				eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: %s%s",
					       eg_etcd_endpoint_at(w->e, w->ep),
					       s->cc ? curl_easy_strerror(s->cc) : "stream ended",
					       status && status != 200 ? " (HTTP error)" : "");
				*next = true;
				return -EHOSTUNREACH;
			}
			eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: stream broke: %s",
				       eg_etcd_endpoint_at(w->e, w->ep),
				       s->cc ? curl_easy_strerror(s->cc) : "ended by the server");
			return -EPIPE;
		}
		if (curl_multi_poll(m, NULL, 0, WATCH_POLL_MS, NULL) != CURLM_OK) {
			eg_etcd_seterr(w->err, w->err_size, "etcd watch: curl poll failed");
			return -EIO;
		}
	}
}

int eg_etcd_watch(struct eg_etcd *e, const struct eg_etcd_watch_spec *specs, size_t n_specs,
		  int64_t start_revision,
		  int (*fn)(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx),
		  void *ctx, volatile int *stop, int64_t *compact_revision, char *err,
		  size_t err_size)
{
	struct watch w = {
	    .e = e,
	    .n = n_specs,
	    .start_revision = start_revision,
	    .fn = fn,
	    .ctx = ctx,
	    .compact_revision = compact_revision,
	    .err = err,
	    .err_size = err_size,
	};
	struct eg_etcd_creds *c = eg_etcd_creds(e);
	size_t n_ep = eg_etcd_n_endpoints(e), k, i;
	bool tried_all = true, relogged = false;
	int rc = -EHOSTUNREACH;
	CURLM *m;

	if (!n_specs || n_specs > 64 || !fn || start_revision < 0) {
		eg_etcd_seterr(err, err_size,
			       "etcd watch: 1 to 64 specs, a callback, revision >= 0");
		return -EINVAL;
	}
	for (i = 0; i < n_specs; i++) {
		if (!specs[i].key || (!*specs[i].key && !specs[i].prefix)) {
			eg_etcd_seterr(err, err_size, "etcd watch: empty key");
			return -EINVAL;
		}
	}
	w.s = calloc(n_specs, sizeof(*w.s));
	m = curl_multi_init();
	if (!w.s || !m) {
		free(w.s);
		if (m)
			curl_multi_cleanup(m);
		return -ENOMEM;
	}
	for (k = 0; k < n_ep; k++) {
		bool next = false;

		w.ep = (eg_etcd_current(e) + k) % n_ep;
		w.rc_set = false;
		w.progress_out = 0;
		rc = c->user && !eg_etcd_has_token(e) ? eg_etcd_login(e, w.ep, err, err_size) : 0;
		if (rc == -EHOSTUNREACH)
			continue;
		if (!rc) {
			w.hdr = eg_etcd_auth_header(e);
			rc = streams_start(&w, m, specs);
			if (!rc)
				rc = run(&w, m, stop, &next);
			streams_free(&w, m);
			curl_slist_free_all(w.hdr);
			w.hdr = NULL;
		}
		if (rc == -EKEYEXPIRED && c->user && !relogged) {
			/* the token expired, or the auth store moved on: a new
			 * one, and the watch again on the same endpoint */
			relogged = true;
			rc = eg_etcd_login(e, w.ep, err, err_size);
			if (rc == -EHOSTUNREACH)
				continue;
			if (!rc) {
				k--; /* wraps at 0; the loop's k++ brings it back */
				continue;
			}
		}
		if (rc == -EKEYEXPIRED)
			rc = -EACCES;
		if (!next) {
			/* a broken stream: the caller's resume starts elsewhere */
			eg_etcd_set_current(e, rc == -EPIPE ? w.ep + 1 : w.ep);
			tried_all = false;
			break;
		}
		rc = -EHOSTUNREACH;
	}
	if (tried_all && n_ep > 1) {
		char last[256];

		snprintf(last, sizeof(last), "%s", err ? err : "");
		eg_etcd_seterr(err, err_size, "no etcd endpoint served the watch (last: %s)", last);
	}
	curl_multi_cleanup(m);
	free(w.s);
	return rc;
}
