/* SPDX-License-Identifier: Apache-2.0 */
/* Strict readers of the etcd gateway's JSON: int64 strings, booleans,
 * headers and key-values (user/fleet/etcd_impl.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "fleet/etcd_impl.h"

int eg_etcd_json_i64(json_t *obj, const char *name, int64_t *out, char *err, size_t err_size)
{
	json_t *v = json_object_get(obj, name);
	const char *s, *p;
	bool neg;
	uint64_t acc = 0;

	*out = 0;
	if (!v)
		return 0;
	s = json_string_value(v);
	if (!s || json_string_length(v) != strlen(s) || !*s || strlen(s) > 20) {
		eg_etcd_seterr(err, err_size, "etcd answer: %s is not an int64 string", name);
		return -EPROTO;
	}
	neg = *s == '-';
	p = s + neg;
	if (!*p) {
		eg_etcd_seterr(err, err_size, "etcd answer: %s '%s' is not an integer", name, s);
		return -EPROTO;
	}
	for (; *p; p++) {
		if (*p < '0' || *p > '9') {
			eg_etcd_seterr(err, err_size, "etcd answer: %s '%s' is not an integer",
				       name, s);
			return -EPROTO;
		}
		acc = acc * 10 + (uint64_t)(*p - '0');
		if (acc > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
			eg_etcd_seterr(err, err_size, "etcd answer: %s '%s' is out of range", name,
				       s);
			return -EPROTO;
		}
	}
	*out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
	return 0;
}

int eg_etcd_json_bool(json_t *obj, const char *name, bool *out, char *err, size_t err_size)
{
	json_t *v = json_object_get(obj, name);

	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		eg_etcd_seterr(err, err_size, "etcd answer: %s is not a boolean", name);
		return -EPROTO;
	}
	*out = json_is_true(v);
	return 0;
}

int eg_etcd_header_revision(json_t *ans, int64_t *rev, char *err, size_t err_size)
{
	json_t *h = json_object_get(ans, "header");
	int64_t r;
	int rc;

	if (!json_is_object(h)) {
		eg_etcd_seterr(err, err_size, "etcd answer: no header");
		return -EPROTO;
	}
	rc = eg_etcd_json_i64(h, "revision", &r, err, err_size);
	if (rc < 0)
		return rc;
	if (r < 0) {
		eg_etcd_seterr(err, err_size, "etcd answer: negative header revision");
		return -EPROTO;
	}
	if (rev)
		*rev = r;
	return 0;
}

/* base64 (standard, padded) into a NUL-terminated buffer. */
static int unb64(json_t *v, const char *what, char **out, size_t *out_len, char *err,
		 size_t err_size)
{
	const char *s = json_string_value(v);
	size_t len, max, got = 0;
	const char *end;
	char *buf;

	*out = NULL;
	*out_len = 0;
	if (!v) {
		s = "";
	} else if (!s) {
		eg_etcd_seterr(err, err_size, "etcd answer: %s is not a string", what);
		return -EPROTO;
	}
	len = strlen(s);
	if (v && json_string_length(v) != len) {
		eg_etcd_seterr(err, err_size, "etcd answer: %s holds a NUL", what);
		return -EPROTO;
	}
	max = len / 4 * 3 + 3;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	if (sodium_base642bin((unsigned char *)buf, max, s, len, NULL, &got, &end,
			      sodium_base64_VARIANT_ORIGINAL) ||
	    end != s + len) {
		free(buf);
		eg_etcd_seterr(err, err_size, "etcd answer: %s is not base64", what);
		return -EPROTO;
	}
	buf[got] = '\0';
	*out = buf;
	*out_len = got;
	return 0;
}

void eg_etcd_kv_free(struct eg_etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

int eg_etcd_parse_kv(json_t *j, struct eg_etcd_kv *kv, bool for_delete, char *err, size_t err_size)
{
	size_t key_len;
	int rc;

	memset(kv, 0, sizeof(*kv));
	if (!json_is_object(j)) {
		eg_etcd_seterr(err, err_size, "etcd answer: a kv is not an object");
		return -EPROTO;
	}
	rc = unb64(json_object_get(j, "key"), "key", &kv->key, &key_len, err, err_size);
	if (rc < 0)
		goto fail;
	kv->key_len = key_len;
	if (!key_len) {
		eg_etcd_seterr(err, err_size, "etcd answer: a key is empty");
		rc = -EPROTO;
		goto fail;
	}
	if (memchr(kv->key, '\0', key_len)) {
		/* Any writer can make one: the caller skips this key alone
		 * (and counts it) rather than the whole answer, so one bad
		 * key blinds nobody. kv->key keeps its key_len raw bytes. */
		eg_etcd_seterr(err, err_size, "etcd answer: a key holds a NUL");
		return -EILSEQ;
	}
	rc = unb64(for_delete ? NULL : json_object_get(j, "value"), "value", &kv->value,
		   &kv->value_len, err, err_size);
	if (rc < 0)
		goto fail;
	rc = eg_etcd_json_i64(j, "create_revision", &kv->create_revision, err, err_size);
	if (!rc)
		rc = eg_etcd_json_i64(j, "mod_revision", &kv->mod_revision, err, err_size);
	if (!rc)
		rc = eg_etcd_json_i64(j, "version", &kv->version, err, err_size);
	if (rc < 0)
		goto fail;
	if (kv->mod_revision <= 0 || kv->create_revision < 0 || kv->version < 0) {
		eg_etcd_seterr(err, err_size, "etcd answer: key '%.80s' has revisions out of range",
			       kv->key);
		rc = -EPROTO;
		goto fail;
	}
	return 0;
fail:
	eg_etcd_kv_free(kv);
	return rc;
}

json_t *eg_etcd_b64(const void *p, size_t len)
{
	size_t n = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	char *t = malloc(n);
	json_t *j;

	if (!t)
		return NULL;
	sodium_bin2base64(t, n, p, len, sodium_base64_VARIANT_ORIGINAL);
	j = json_string(t);
	free(t);
	return j;
}
