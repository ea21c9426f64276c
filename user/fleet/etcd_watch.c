/* SPDX-License-Identifier: Apache-2.0 */
/* eg_etcd_watch() (user/fleet/etcd.h): one POST /v3/watch stream per spec,
 * all driven by one curl multi handle in the caller's thread. The gateway
 * streams one JSON object per watch response, in chunks that do not align
 * with the objects, so each stream keeps a bounded buffer and a brace-depth
 * scanner that finds where each object ends; each complete object is then
 * parsed strictly. */
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

#define WATCH_POLL_MS 200

struct watch;

struct stream {
	struct watch *w;
	const struct eg_etcd_watch_spec *spec;
	CURL *h;
	char *body;
	char *buf;
	size_t len, cap;
	/* scanner state over buf[0..len): where the current object began,
	 * how far it was scanned, and the lexical state there */
	size_t start, scan;
	int depth;
	bool in_obj, in_str, esc;
	bool got_data, created, done;
	int64_t last_rev;     /* newest event revision delivered */
	int64_t progress_rev; /* newest progress notification, 0: none */
	CURLcode cc;
};

struct watch {
	struct eg_etcd *e;
	size_t ep;
	struct stream *s;
	size_t n;
	int64_t start_revision;
	int (*fn)(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx);
	void *ctx;
	int64_t *compact_revision;
	char *err;
	size_t err_size;
	bool delivered; /* fn was called: no silent restart any more */
	int rc;		/* set: stop with this */
	bool rc_set;
	int64_t progress_out;	/* last progress revision given to fn */
	struct curl_slist *hdr; /* the Authorization header, NULL: none */
};

static void stop_with(struct watch *w, int rc)
{
	if (!w->rc_set) {
		w->rc = rc;
		w->rc_set = true;
	}
}

static bool key_matches(const struct eg_etcd_watch_spec *spec, const char *key)
{
	if (spec->prefix)
		return !strncmp(key, spec->key, strlen(spec->key));
	return !strcmp(key, spec->key);
}

/* A skipped key (it holds a NUL) must still be one the watch asked for. */
static bool key_prefix_matches(const struct eg_etcd_watch_spec *spec, const struct eg_etcd_kv *kv)
{
	size_t len = strlen(spec->key);

	return spec->prefix ? kv->key_len >= len && !memcmp(kv->key, spec->key, len) : false;
}

static void free_events(struct eg_etcd_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		eg_etcd_kv_free(&ev[i].kv);
	free(ev);
}

/* A progress notification says that this stream has sent everything up to
 * its revision. fn hears of it only up to the lowest such revision over all
 * streams, so that a caller may treat it as applied everywhere. */
static int progress(struct watch *w, struct stream *s, int64_t rev)
{
	int64_t low = INT64_MAX;
	size_t i;

	if (rev > s->progress_rev)
		s->progress_rev = rev;
	for (i = 0; i < w->n; i++) {
		if (!w->s[i].progress_rev)
			return 0;
		if (w->s[i].progress_rev < low)
			low = w->s[i].progress_rev;
	}
	if (low <= w->progress_out)
		return 0;
	w->progress_out = low;
	w->delivered = true;
	return w->fn(NULL, 0, low, w->ctx);
}

static int events(struct watch *w, struct stream *s, json_t *arr, int64_t rev)
{
	struct eg_etcd_event *ev;
	size_t n = json_array_size(arr), i, k = 0;
	int rc = 0;

	if (!json_is_array(arr) || !n) {
		eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: events is not a list",
			       eg_etcd_endpoint_at(w->e, w->ep));
		return -EPROTO;
	}
	ev = calloc(n, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_t *j = json_array_get(arr, i), *type;
		const char *t;

		type = json_object_get(j, "type");
		t = json_string_value(type);
		if (!json_is_object(j) || (type && !t)) {
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size, "etcd watch: an event is malformed");
			goto out;
		}
		/* proto3 leaves the zero value (PUT) out */
		if (!t || !strcmp(t, "PUT")) {
			ev[k].type = EG_ETCD_PUT;
		} else if (!strcmp(t, "DELETE")) {
			ev[k].type = EG_ETCD_DELETE;
		} else {
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size, "etcd watch: event type '%.20s'", t);
			goto out;
		}
		rc = eg_etcd_parse_kv(json_object_get(j, "kv"), &ev[k].kv,
				      ev[k].type == EG_ETCD_DELETE, w->err, w->err_size);
		if (rc == -EILSEQ && key_prefix_matches(s->spec, &ev[k].kv)) {
			/* a key holding a NUL: this event alone is skipped and
			 * counted, the rest of the message is delivered */
			eg_etcd_kv_free(&ev[k].kv);
			eg_etcd_count_skipped(w->e);
			continue;
		}
		if (rc == -EILSEQ) {
			eg_etcd_kv_free(&ev[k].kv);
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size,
				       "etcd watch: event for a key outside the watch");
		}
		if (rc < 0)
			goto out;
		if (!key_matches(s->spec, ev[k].kv.key)) {
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size,
				       "etcd watch: event for key '%.80s' outside the watch",
				       ev[k].kv.key);
			goto out;
		}
		if (ev[k].kv.mod_revision < s->last_rev ||
		    ev[k].kv.mod_revision < w->start_revision) {
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size,
				       "etcd watch: event revision %lld goes back (after %lld)",
				       (long long)ev[k].kv.mod_revision, (long long)s->last_rev);
			goto out;
		}
		s->last_rev = ev[k].kv.mod_revision;
		k++;
	}
	w->delivered = true;
	/* nothing left when every key was skipped: not a progress note */
	rc = k ? w->fn(ev, k, rev, w->ctx) : 0;
out:
	free_events(ev, n);
	return rc;
}

/* One watch response of a stream. */
static int message(struct watch *w, struct stream *s, const char *p, size_t len)
{
	const char *ep = eg_etcd_endpoint_at(w->e, w->ep);
	json_error_t jerr;
	json_t *j, *res, *evs;
	bool created, canceled;
	int64_t rev, compact;
	int rc;

	j = json_loadb(p, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: a message does not parse: %s",
			       ep, jerr.text);
		return -EPROTO;
	}
	res = json_object_get(j, "result");
	if (!res) {
		json_t *e = json_object_get(j, "error");
		const char *msg = json_string_value(json_object_get(e, "message"));

		eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: %s%.200s", ep,
			       e ? "error: " : "message without result",
			       e ? (msg ? msg : "(no message)") : "");
		json_decref(j);
		return e ? -EPIPE : -EPROTO;
	}
	rc = json_is_object(res) ? 0 : -EPROTO;
	if (rc < 0)
		eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: result is not an object", ep);
	if (!rc)
		rc = eg_etcd_json_bool(res, "created", &created, w->err, w->err_size);
	if (!rc)
		rc = eg_etcd_json_bool(res, "canceled", &canceled, w->err, w->err_size);
	if (!rc)
		rc = eg_etcd_json_i64(res, "compact_revision", &compact, w->err, w->err_size);
	if (!rc && !canceled)
		rc = eg_etcd_header_revision(res, &rev, w->err, w->err_size);
	if (rc < 0)
		goto out;
	evs = json_object_get(res, "events");
	if (canceled) {
		const char *why = json_string_value(json_object_get(res, "cancel_reason"));

		if (compact > 0) {
			if (w->compact_revision)
				*w->compact_revision = compact;
			eg_etcd_seterr(w->err, w->err_size,
				       "etcd watch %s: revision %lld compacted (oldest held %lld)",
				       ep, (long long)w->start_revision, (long long)compact);
			rc = -ECANCELED;
		} else {
			eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: canceled: %.200s", ep,
				       why ? why : "(no reason)");
			/* a token refused is asked for again (eg_etcd_watch);
			 * a caller refused is refused by every member */
			rc = eg_etcd_token_refused(why)	   ? -EKEYEXPIRED
			     : eg_etcd_caller_refused(why) ? -EACCES
							   : -EPIPE;
		}
		goto out;
	}
	if (created) {
		if (s->created || evs) {
			rc = -EPROTO;
			eg_etcd_seterr(w->err, w->err_size,
				       "etcd watch %s: a second or non-empty 'created'", ep);
		}
		s->created = true;
		goto out;
	}
	if (!s->created) {
		rc = -EPROTO;
		eg_etcd_seterr(w->err, w->err_size, "etcd watch %s: events before 'created'", ep);
		goto out;
	}
	if (evs)
		rc = events(w, s, evs, rev);
	else
		rc = progress(w, s, rev);
out:
	json_decref(j);
	return rc;
}

/* Scan from s->scan; hand every complete top-level object to message().
 * Between objects only whitespace is allowed. */
static int drain(struct stream *s)
{
	struct watch *w = s->w;
	size_t i;
	int rc;

	for (i = s->scan; i < s->len; i++) {
		char c = s->buf[i];

		if (!s->in_obj) {
			if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
				continue;
			if (c != '{') {
				eg_etcd_seterr(w->err, w->err_size,
					       "etcd watch %s: stream holds 0x%02x between objects",
					       eg_etcd_endpoint_at(w->e, w->ep), (unsigned char)c);
				return -EPROTO;
			}
			s->in_obj = true;
			s->start = i;
			s->depth = 1;
			continue;
		}
		if (s->in_str) {
			if (s->esc)
				s->esc = false;
			else if (c == '\\')
				s->esc = true;
			else if (c == '"')
				s->in_str = false;
			continue;
		}
		if (c == '"') {
			s->in_str = true;
		} else if (c == '{' || c == '[') {
			if (++s->depth > 64) {
				eg_etcd_seterr(w->err, w->err_size,
					       "etcd watch: a message nests deeper than 64");
				return -EPROTO;
			}
		} else if (c == '}' || c == ']') {
			if (--s->depth == 0) {
				s->in_obj = false;
				rc = message(w, s, s->buf + s->start, i + 1 - s->start);
				if (rc)
					return rc;
				s->start = i + 1;
			}
		}
	}
	/* keep only the unfinished object */
	if (!s->in_obj)
		s->start = s->len;
	if (s->len - s->start > EG_ETCD_MAX_ANSWER) {
		eg_etcd_seterr(w->err, w->err_size,
			       "etcd watch %s: a message above %u bytes refused",
			       eg_etcd_endpoint_at(w->e, w->ep), EG_ETCD_MAX_ANSWER);
		return -EPROTO;
	}
	memmove(s->buf, s->buf + s->start, s->len - s->start);
	s->len -= s->start;
	s->start = 0;
	s->scan = s->len;
	return 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
	struct stream *s = ud;
	size_t n = size * nmemb;
	long status = 0;
	int rc;

	if (s->w->rc_set)
		return 0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		return 0; /* an error page: this endpoint does not serve us */
	s->got_data = true;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 16384;
		char *nb;

		while (cap < s->len + n)
			cap *= 2;
		nb = realloc(s->buf, cap);
		if (!nb) {
			stop_with(s->w, -ENOMEM);
			return 0;
		}
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	rc = drain(s);
	if (rc) {
		stop_with(s->w, rc);
		return 0;
	}
	return n;
}

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
		curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_data);
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
		rc = c->user && !c->token ? eg_etcd_login(e, w.ep, err, err_size) : 0;
		if (rc == -EHOSTUNREACH)
			continue;
		if (!rc) {
			w.hdr = eg_etcd_auth_header(c);
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
