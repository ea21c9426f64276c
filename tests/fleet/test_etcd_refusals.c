/* SPDX-License-Identifier: Apache-2.0 */
/* What the etcd client refuses (user/fleet/etcd.h): answers that a real
 * etcd does not send, served by a canned HTTP server on loopback
 * (tests/fleet/fake_http.h), since etcd cannot be made to send them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"
#include "fleet/etcd_impl.h"
#include "fleet/fake_http.h"

#define HDR "\"header\":{\"revision\":\"9\"}"

static struct eg_fake_http fake;

static void fini(void)
{
	if (fake.url[0])
		eg_fake_http_stop(&fake);
}

TestSuite(etcd_refusals, .fini = fini, .timeout = 60);

static int get_from(const char *body, struct eg_etcd_range *r, char *err, size_t err_size)
{
	struct eg_etcd *e;
	int rc;

	fake.body = body;
	cr_assert_eq(eg_fake_http_start(&fake), 0);
	cr_assert_eq(eg_etcd_open(fake.url, EG_TEST_ETCD_CALL_MS, &e, err, err_size), 0, "%s", err);
	rc = eg_etcd_get(e, "/k", true, r, err, err_size);
	eg_etcd_close(e);
	return rc;
}

static void refused(const char *body, const char *why)
{
	struct eg_etcd_range r;
	char err[256] = "";
	int rc = get_from(body, &r, err, sizeof(err));

	cr_assert_eq(rc, -EPROTO, "%s: rc %d (%s)", body, rc, err);
	cr_assert(strstr(err, why), "err '%s' does not say '%s'", err, why);
}

/* the base64 of "/k/a\0b" */
#define KEY_NUL "L2svYQBi"

Test(etcd_refusals, answer_that_is_not_json)
{
	refused("{\"header\":", "does not parse");
}
Test(etcd_refusals, answer_that_is_not_an_object)
{
	refused("[1,2]", "does not parse");
}
Test(etcd_refusals, revision_that_is_not_an_integer)
{
	refused("{\"header\":{\"revision\":\"12a\"}}", "not an integer");
}
Test(etcd_refusals, revision_as_a_number)
{
	refused("{\"header\":{\"revision\":12}}", "not an int64 string");
}
Test(etcd_refusals, revision_out_of_range)
{
	refused("{\"header\":{\"revision\":\"9223372036854775808\"}}", "out of range");
}
Test(etcd_refusals, no_header)
{
	refused("{\"kvs\":[]}", "no header");
}
/* Any writer can put a key holding a NUL: it is skipped alone and
 * counted, the rest of the answer is delivered (one bad key blinds
 * nothing); outside the prefix it is still refused. */
Test(etcd_refusals, key_holding_a_nul_is_skipped_and_counted)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256] = "";
	int rc;

	fake.body = "{" HDR ",\"kvs\":[{\"key\":\"" KEY_NUL "\",\"mod_revision\":\"3\"},"
		    "{\"key\":\"L2svYw==\",\"mod_revision\":\"4\",\"value\":\"e30=\"}]}";
	cr_assert_eq(eg_fake_http_start(&fake), 0);
	cr_assert_eq(eg_etcd_open(fake.url, EG_TEST_ETCD_CALL_MS, &e, err, sizeof(err)), 0, "%s",
		     err);
	rc = eg_etcd_get(e, "/k", true, &r, err, sizeof(err));
	cr_assert_eq(rc, 0, "rc %d: %s", rc, err);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.kvs[0].key, "/k/c");
	cr_assert_eq(eg_etcd_skipped_keys(e), 1);
	eg_etcd_range_free(&r);
	eg_etcd_close(e);
}
Test(etcd_refusals, key_holding_a_nul_outside_the_prefix)
{
	/* "/x\0b" */
	refused("{" HDR ",\"kvs\":[{\"key\":\"L3gAYg==\",\"mod_revision\":\"3\"}]}", "outside");
}
Test(etcd_refusals, key_not_base64)
{
	refused("{" HDR ",\"kvs\":[{\"key\":\"L2sv*\",\"mod_revision\":\"3\"}]}", "not base64");
}
Test(etcd_refusals, key_outside_the_prefix)
{
	/* "/x" */
	refused("{" HDR ",\"kvs\":[{\"key\":\"L3g=\",\"mod_revision\":\"3\"}]}", "outside");
}
Test(etcd_refusals, more_without_keys)
{
	refused("{" HDR ",\"more\":true}", "more pages");
}
Test(etcd_refusals, duplicate_member)
{
	refused("{" HDR "," HDR "}", "does not parse");
}

Test(etcd_refusals, answer_above_the_cap)
{
	size_t n = EG_ETCD_MAX_ANSWER + 100;
	char *big = malloc(n + 1);

	cr_assert(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	refused(big, "answer above");
	free(big);
}

Test(etcd_refusals, error_answer_is_named)
{
	struct eg_etcd_range r;
	char err[256] = "";

	fake.status = 400;
	cr_assert_eq(get_from("{\"error\":\"etcdserver: bad thing\",\"message\":\"etcdserver: "
			      "bad thing\",\"code\":3}",
			      &r, err, sizeof(err)),
		     -EIO);
	cr_assert(strstr(err, "bad thing"), "%s", err);
}

/* A closed port first, the fake second: the client fails over. */
Test(etcd_refusals, unreachable_endpoint_is_skipped)
{
	struct eg_fake_http dead = {0};
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char eps[160], err[256];

	cr_assert_eq(eg_fake_http_start(&dead), 0);
	eg_fake_http_stop(&dead); /* its port now refuses */
	fake.body = "{" HDR ",\"kvs\":[{\"key\":\"L2s=\",\"value\":\"dg==\",\"mod_revision\":"
		    "\"3\",\"create_revision\":\"3\",\"version\":\"1\"}]}";
	cr_assert_eq(eg_fake_http_start(&fake), 0);
	snprintf(eps, sizeof(eps), "%s,%s", dead.url, fake.url);
	cr_assert_eq(eg_etcd_open(eps, EG_TEST_ETCD_CALL_MS, &e, err, sizeof(err)), 0, "%s", err);
	eg_etcd_set_current(e, 0); /* the first endpoint is drawn at random */
	cr_assert_eq(eg_etcd_get(e, "/k", false, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(eg_etcd_endpoint(e), fake.url);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.kvs[0].value, "v");
	eg_etcd_range_free(&r);
	eg_etcd_close(e);
}

Test(etcd_refusals, bad_endpoints)
{
	static const char *const bad[] = {"",
					  "ftp://x",
					  "http://",
					  "http://a b",
					  "http://a,",
					  ("http://a,http://b,http://c,http://d,http://e,http://f,"
					   "http://g,http://h,http://i")};
	struct eg_etcd *e;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(eg_etcd_open(bad[i], 0, &e, err, sizeof(err)), -EINVAL, "'%s'",
			     bad[i]);
}

/* --- the watch stream ---------------------------------------------------- */

struct got {
	size_t events, progress;
	char last_key[32];
	int64_t last_rev;
};

static int count(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct got *g = ctx;

	if (!n)
		g->progress++;
	g->events += n;
	if (n)
		snprintf(g->last_key, sizeof(g->last_key), "%s", ev[n - 1].kv.key);
	g->last_rev = revision;
	return 0;
}

static int stop_after_one(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	count(ev, n, revision, ctx);
	return 5;
}

static int watch_pieces(const char *const *pieces, struct got *g, char *err, size_t err_size)
{
	struct eg_etcd_watch_spec spec = {"/k/", true};
	struct eg_etcd *e;
	int rc;

	fake.chunked = true;
	fake.pieces = pieces;
	cr_assert_eq(eg_fake_http_start(&fake), 0);
	cr_assert_eq(eg_etcd_open(fake.url, EG_TEST_ETCD_CALL_MS, &e, err, err_size), 0, "%s", err);
	rc = eg_etcd_watch(e, &spec, 1, 3, count, g, NULL, NULL, err, err_size);
	eg_etcd_close(e);
	return rc;
}

#define CREATED "{\"result\":{" HDR ",\"created\":true}}\n"
/* key "/k/a" = L2svYQ==; "/k/\"}" = L2svIn0= */
#define EV(key, rev)                                                                               \
	"{\"result\":{" HDR ",\"events\":[{\"kv\":{\"key\":\"" key "\",\"mod_revision\":\"" rev    \
	"\",\"value\":\"e30=\"}}]}}\n"

/* Chunks cut inside strings, escapes and numbers: the stream is still
 * read object by object; then the server ends the stream: -EPIPE. */
Test(etcd_refusals, watch_reassembles_chunks)
{
	static const char *const pieces[] = {
	    "{\"result\":{\"hea",
	    "der\":{\"revision\":\"9\"},\"created\":true}}\n{\"res",
	    "ult\":{" HDR ",\"events\":[{\"kv\":{\"key\":\"L2svYQ==\",\"mod_rev",
	    "ision\":\"4\",\"value\":\"e30=\"}},{\"type\":\"DELETE\",\"kv\":{\"key\":\"L2sv",
	    "YQ==\",\"mod_revision\":\"5\"}}],\"x\":\"}{\\\"\\\\\"}}\n  \r\n",
	    "{\"result\":{" HDR "}}",
	    NULL};
	struct got g = {0};
	char err[256] = "";
	int rc = watch_pieces(pieces, &g, err, sizeof(err));

	cr_assert_eq(rc, -EPIPE, "rc %d: %s", rc, err);
	cr_assert_eq(g.events, 2, "%s", err);
	cr_assert_eq(g.progress, 1);
	cr_assert_str_eq(g.last_key, "/k/a");
}

static void watch_refused(const char *const *pieces, int want, const char *why)
{
	struct got g = {0};
	char err[256] = "";
	int rc = watch_pieces(pieces, &g, err, sizeof(err));

	cr_assert_eq(rc, want, "rc %d: %s", rc, err);
	cr_assert(strstr(err, why), "err '%s' does not say '%s'", err, why);
	cr_assert_eq(g.events, 0);
}

Test(etcd_refusals, watch_garbage_between_objects)
{
	static const char *const p[] = {CREATED, "]", NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "between objects");
}
Test(etcd_refusals, watch_message_that_does_not_parse)
{
	static const char *const p[] = {CREATED, "{\"result\":{\"header\":{,}}}", NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "does not parse");
}
Test(etcd_refusals, watch_event_before_created)
{
	static const char *const p[] = {EV("L2svYQ==", "4"), NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "before 'created'");
}
/* A key holding a NUL: that event alone is skipped, the next ones are
 * delivered. */
Test(etcd_refusals, watch_key_with_nul_is_skipped)
{
	static const char *const p[] = {CREATED, EV("L2svYQBi", "4"), EV("L2svYQ==", "5"), NULL};
	struct got g = {0};
	char err[256] = "";
	int rc = watch_pieces(p, &g, err, sizeof(err));

	cr_assert_eq(rc, -EPIPE, "rc %d: %s", rc, err);
	cr_assert_eq(g.events, 1, "%s", err);
	cr_assert_str_eq(g.last_key, "/k/a");
}
Test(etcd_refusals, watch_key_outside)
{
	static const char *const p[] = {CREATED, EV("L3g=", "4"), NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "outside the watch");
}
Test(etcd_refusals, watch_revision_not_integer)
{
	static const char *const p[] = {CREATED, EV("L2svYQ==", "4x"), NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "not an integer");
}
Test(etcd_refusals, watch_revision_going_back)
{
	static const char *const p[] = {CREATED, EV("L2svYQ==", "5"), EV("L2svYQ==", "4"), NULL};
	struct got g = {0};
	char err[256] = "";
	int rc;

	fake.hold_open = true;
	rc = watch_pieces(p, &g, err, sizeof(err));
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "goes back"), "%s", err);
	cr_assert_eq(g.events, 1);
}
Test(etcd_refusals, watch_revision_before_start)
{
	static const char *const p[] = {CREATED, EV("L2svYQ==", "2"), NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "goes back");
}
Test(etcd_refusals, watch_unknown_event_type)
{
	static const char *const p[] = {
	    CREATED,
	    "{\"result\":{" HDR ",\"events\":[{\"type\":\"EXPIRE\",\"kv\":{\"key\":\"L2svYQ==\","
	    "\"mod_revision\":\"4\"}}]}}",
	    NULL};

	fake.hold_open = true;
	watch_refused(p, -EPROTO, "event type");
}
Test(etcd_refusals, watch_canceled_without_compaction)
{
	static const char *const p[] = {
	    CREATED, "{\"result\":{\"canceled\":true,\"cancel_reason\":\"because\"}}", NULL};

	/* not served on this endpoint, before anything was delivered: the
	 * next endpoint is tried; none is left */
	fake.hold_open = true;
	watch_refused(p, -EHOSTUNREACH, "because");
}
Test(etcd_refusals, watch_error_object)
{
	static const char *const p[] = {
	    CREATED, "{\"error\":{\"grpc_code\":14,\"message\":\"etcdserver: no leader\"}}", NULL};

	fake.hold_open = true;
	watch_refused(p, -EHOSTUNREACH, "no leader");
}

/* A message that never ends is refused at the cap, not buffered on. */
Test(etcd_refusals, watch_message_above_the_cap)
{
	static char *p[4];
	size_t n = 1 << 20, i;
	struct got g = {0};
	char err[256] = "";
	const char **pieces = calloc(16, sizeof(char *));
	int rc;

	cr_assert(pieces);
	p[0] = malloc(n + 1);
	cr_assert(p[0]);
	memset(p[0], 'a', n);
	p[0][n] = '\0';
	pieces[0] = CREATED "{\"result\":{\"x\":\"";
	for (i = 1; i < 12; i++)
		pieces[i] = p[0]; /* 11 MiB of one string */
	fake.hold_open = true;
	rc = watch_pieces(pieces, &g, err, sizeof(err));
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "above"), "%s", err);
	eg_fake_http_stop(&fake);
	fake.url[0] = '\0';
	free(p[0]);
	free(pieces);
}

/* The watch ends within ~200 ms of *stop, even when nothing arrives. */
Test(etcd_refusals, watch_stops_on_flag)
{
	static const char *const p[] = {CREATED, NULL};
	struct eg_etcd_watch_spec spec = {"/k/", true};
	struct eg_etcd *e;
	volatile int stop = 1;
	struct got g = {0};
	char err[256];

	fake.chunked = true;
	fake.pieces = p;
	fake.hold_open = true;
	cr_assert_eq(eg_fake_http_start(&fake), 0);
	cr_assert_eq(eg_etcd_open(fake.url, 1000, &e, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_watch(e, &spec, 1, 3, count, &g, &stop, NULL, err, sizeof(err)), 0);
	eg_etcd_close(e);
}

/* A member that takes the watch but never creates it (frozen) is left
 * for the next endpoint after twice the call timeout. */
Test(etcd_refusals, watch_frozen_endpoint_is_skipped)
{
	static const char *const none[] = {NULL};
	static const char *const good[] = {CREATED, EV("L2svYQ==", "4"), NULL};
	struct eg_fake_http frozen = {.chunked = true, .pieces = none, .hold_open = true};
	struct eg_etcd_watch_spec spec = {"/k/", true};
	struct got g = {0};
	struct eg_etcd *e;
	char eps[160], err[256] = "";
	int rc;

	cr_assert_eq(eg_fake_http_start(&frozen), 0);
	fake.chunked = true;
	fake.pieces = good;
	fake.hold_open = true;
	cr_assert_eq(eg_fake_http_start(&fake), 0);

	/* alone: the watch gives up on it, named */
	cr_assert_eq(eg_etcd_open(frozen.url, 300, &e, err, sizeof(err)), 0, "%s", err);
	rc = eg_etcd_watch(e, &spec, 1, 3, count, &g, NULL, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EHOSTUNREACH, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "not created within 600 ms"), "%s", err);
	eg_etcd_close(e);

	/* first of two: the second serves the watch. Its limit is its own
	 * as well: 600 ms for the fake to answer was missed once in a fresh
	 * root, beside three guests and a build on two cores */
	snprintf(eps, sizeof(eps), "%s,%s", frozen.url, fake.url);
	cr_assert_eq(eg_etcd_open(eps, 1500, &e, err, sizeof(err)), 0, "%s", err);
	eg_etcd_set_current(e, 0);
	rc = eg_etcd_watch(e, &spec, 1, 3, stop_after_one, &g, NULL, NULL, err, sizeof(err));
	cr_assert_eq(rc, 5, "rc %d: %s", rc, err);
	cr_assert_eq(g.events, 1);
	cr_assert_str_eq(eg_etcd_endpoint(e), fake.url);
	eg_etcd_close(e);
	eg_fake_http_stop(&frozen);
}
