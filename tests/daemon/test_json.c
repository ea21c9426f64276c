// SPDX-License-Identifier: Apache-2.0
/* The verdict text execgated answers admit and check with
 * (egd_verdict_text) is exactly what the jansson form (eg_json_verdict)
 * dumps, for every shape of result: random contents, every verdict and
 * reason, each optional part present or not. No daemon needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "daemon/json.h"

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned long long next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill(void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)p)[i] = (unsigned char)next();
}

static void random_result(struct eg_verdict_result *res, struct eg_request *req)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

	fill(res, sizeof(*res));
	fill(req, sizeof(*req));
	res->d.verdict = (enum eg_verdict)(next() % 3);
	res->d.reason = (enum eg_reason)(next() % EG_REASON__COUNT);
	res->d.decode_err = (unsigned)(next() % 12);
	res->decoded = next() & 1;
	res->cache_hit = next() & 1;
	res->had_record = next() & 1;
	res->granted = next() & 1;
	if (next() & 1)
		res->subject.tgid = 0;
	res->record.retired = next() & 1;
	res->record.n_ports = (size_t)(next() % (EG_RECORD_MAX_PORTS + 2));
	res->record.substrate = (uint8_t)(next() % 4);
	for (int i = 0; i < EG_RECORD_MAX_PORTS; i++)
		res->record.ports[i].proto = (uint8_t)(next() % 3 ? (next() & 1 ? 6 : 17) : next());
	if (next() & 1) {
		size_t n = (size_t)(next() % (EG_SIGNED_VERDICT_TEXT_MAX - 1));

		for (size_t i = 0; i < n; i++)
			res->signed_verdict[i] = b64[next() % 64];
		res->signed_verdict[n] = '\0';
	} else {
		res->signed_verdict[0] = '\0';
	}
	req->proto = (uint8_t)(next() % 3 ? (next() & 1 ? 6 : 17) : 0);
	req->open_kind = next() & 1 ? EG_OPEN_ESTABLISHED : EG_OPEN_NEW;
}

Test(daemon_json, verdict_text_is_the_jansson_form)
{
	static char buf[4096];

	for (int i = 0; i < 20000; i++) {
		struct eg_verdict_result res;
		struct eg_request req;
		json_t *o;
		char *want;
		int n;

		random_result(&res, &req);
		o = eg_json_verdict(&res, &req);
		cr_assert_not_null(o, "case %d: jansson refused the result", i);
		want = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		n = egd_verdict_text(&res, &req, buf, sizeof(buf));
		cr_assert_geq(n, 0, "case %d: -ENOSPC", i);
		cr_assert_eq((size_t)n, strlen(buf), "case %d", i);
		cr_assert_str_eq(buf, want, "case %d", i);
		free(want);
	}
}

Test(daemon_json, verdict_text_says_when_it_does_not_fit)
{
	struct eg_verdict_result res;
	struct eg_request req;
	char buf[4096];
	int full;

	random_result(&res, &req);
	full = egd_verdict_text(&res, &req, buf, sizeof(buf));
	cr_assert_gt(full, 0);
	cr_expect_eq(egd_verdict_text(&res, &req, buf, (size_t)full), -ENOSPC);
	cr_expect_eq(egd_verdict_text(&res, &req, buf, (size_t)full + 1), full);
	cr_expect_eq(egd_verdict_text(&res, &req, buf, 0), -ENOSPC);
}
