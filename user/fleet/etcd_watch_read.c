/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a watch stream (user/fleet/etcd_watch_impl.h): the gateway
 * streams one JSON object per watch response, in chunks that do not align
 * with the objects, so each stream keeps a bounded buffer and a brace-depth
 * scanner that finds where each object ends; each complete object is then
 * parsed strictly and its events handed to the watch's callback. */
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

size_t eg_etcd_watch_on_data(char *data, size_t size, size_t nmemb, void *ud)
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
