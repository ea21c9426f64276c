/* SPDX-License-Identifier: Apache-2.0 */
/* The key-value calls of the etcd client (user/fleet/etcd.h): range (paged,
 * bounded by EG_ETCD_MAX_KVS), put, delete and compact, each one
 * eg_etcd_post(). */
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

#define PAGE_LIMIT "1000"

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
		rc = eg_etcd_post(e, "/v3/kv/range", req, &ans, err, err_size);
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

/* eg_etcd_post(), then the answer's header revision into *revision (may be
 * NULL); takes req. */
static int post_revision(struct eg_etcd *e, const char *path, json_t *req, int64_t *revision,
			 char *err, size_t err_size)
{
	json_t *ans = NULL;
	int64_t rev = 0;
	int rc = eg_etcd_post(e, path, req, &ans, err, err_size);

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
	rc = eg_etcd_post(e, "/v3/kv/compaction", req, &ans, err, err_size);
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
