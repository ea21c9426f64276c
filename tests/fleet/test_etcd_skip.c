// SPDX-License-Identifier: Apache-2.0
/* A key holding a NUL byte, put by any etcd writer, against a real etcd
 * (tests/fleet/etcd_env.c): a paged read skips it alone, counts it once
 * and goes on past it, also when it is the last key of a page; a watch
 * delivers the events around it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <sodium.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"

static struct eg_test_etcd env;

static void fini(void)
{
	eg_test_etcd_stop(&env);
}

TestSuite(etcd_skip, .fini = fini, .timeout = 120);

static void b64(const void *p, size_t len, char *out, size_t size)
{
	sodium_bin2base64(out, size, p, len, sodium_base64_VARIANT_ORIGINAL);
}

/* One transaction of puts through the gateway, outside the client: keys
 * are raw bytes (klen each). */
static void txn(CURL *h, char keys[][32], const size_t *klen, size_t n)
{
	char url[128], kb[64], *body = malloc(n * 128 + 32);
	size_t off = 0;
	long code = 0;
	FILE *null = fopen("/dev/null", "w");

	cr_assert(body && null);
	off += (size_t)sprintf(body, "{\"success\":[");
	for (size_t i = 0; i < n; i++) {
		b64(keys[i], klen[i], kb, sizeof(kb));
		off += (size_t)sprintf(body + off,
				       "%s{\"request_put\":{\"key\":\"%s\",\"value\":\"eA==\"}}",
				       i ? "," : "", kb);
	}
	sprintf(body + off, "]}");
	snprintf(url, sizeof(url), "%s/v3/kv/txn", env.m[0].client_url);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, null);
	cr_assert_eq(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	cr_assert_eq(code, 200);
	fclose(null);
	free(body);
}

/* 2000 keys /p/k0000../p/k1999 and "/p/k0998\0x" between k0998 and
 * k0999: the 1000th key, the last of the first page (1000 a page). */
Test(etcd_skip, a_nul_key_ending_a_page_is_skipped_once)
{
	static char keys[2001][32];
	static size_t klen[2001];
	struct eg_etcd_range r = {0};
	struct eg_etcd *e;
	char err[256];
	size_t n = 0;
	CURL *h;

	cr_assert_eq(eg_test_etcd_start(1, &env), 0);
	for (int i = 0; i < 2000; i++) {
		klen[n] = (size_t)snprintf(keys[n], sizeof(keys[n]), "/p/k%04d", i);
		n++;
		if (i == 998) {
			memcpy(keys[n], "/p/k0998\0x", 10);
			klen[n++] = 10;
		}
	}
	h = curl_easy_init();
	for (size_t i = 0; i < n; i += 100)
		txn(h, keys + i, klen + i, n - i < 100 ? n - i : 100);
	curl_easy_cleanup(h);

	cr_assert_eq(eg_etcd_open(env.endpoints, 2000, &e, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_get(e, "/p/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2000, "%zu keys", r.n);
	cr_assert_eq(eg_etcd_skipped_keys(e), 1, "the key was met %llu times",
		     (unsigned long long)eg_etcd_skipped_keys(e));
	cr_assert_str_eq(r.kvs[998].key, "/p/k0998");
	cr_assert_str_eq(r.kvs[999].key, "/p/k0999");
	cr_assert_gt(r.cluster_id, 0, "no cluster id");
	eg_etcd_range_free(&r);
	eg_etcd_close(e);
}
