/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd client (user/fleet/etcd.h) against a real etcd cluster
 * (tests/fleet/etcd_env.h): reads, writes, paging, watch order, resume,
 * compaction, and failover when the member in use dies. No etcd binary:
 * the tests fail. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"

static struct eg_test_etcd env;

static void fini(void)
{
	eg_test_etcd_stop(&env);
}

TestSuite(etcd, .fini = fini, .timeout = 120);

static struct eg_etcd *open_all(void)
{
	struct eg_etcd *e;
	char err[256];

	cr_assert_eq(eg_etcd_open(env.endpoints, EG_TEST_ETCD_CALL_MS, &e, err, sizeof(err)), 0,
		     "%s", err);
	return e;
}

static void start(size_t n)
{
	cr_assert_eq(eg_test_etcd_start(n, &env), 0, "etcd cluster of %zu did not start", n);
}

static int64_t put(struct eg_etcd *e, const char *k, const char *v)
{
	char err[256];
	int64_t rev = 0;

	cr_assert_eq(eg_etcd_put(e, k, v, strlen(v), &rev, err, sizeof(err)), 0, "put %s: %s", k,
		     err);
	cr_assert_gt(rev, 0);
	return rev;
}

Test(etcd, get_put_delete)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];
	int64_t r1, r2, rd;
	static const char bin[] = "a\0b\xff";

	start(1);
	e = open_all();
	cr_assert_eq(eg_etcd_get(e, "/t/none", false, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 0);
	cr_assert_gt(r.revision, 0);
	eg_etcd_range_free(&r);

	r1 = put(e, "/t/a", "one");
	r2 = put(e, "/t/a", "two");
	cr_assert_eq(r2, r1 + 1);
	cr_assert_eq(eg_etcd_put(e, "/t/bin", bin, 4, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_get(e, "/t/a", false, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.kvs[0].key, "/t/a");
	cr_assert_str_eq(r.kvs[0].value, "two");
	cr_assert_eq(r.kvs[0].mod_revision, r2);
	cr_assert_eq(r.kvs[0].create_revision, r1);
	cr_assert_eq(r.kvs[0].version, 2);
	eg_etcd_range_free(&r);

	/* a value is bytes: NUL and 0xff travel */
	cr_assert_eq(eg_etcd_get(e, "/t/bin", false, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 1);
	cr_assert_eq(r.kvs[0].value_len, 4);
	cr_assert_eq(memcmp(r.kvs[0].value, bin, 4), 0);
	eg_etcd_range_free(&r);

	/* "/t/a" is not a prefix match for "/t/ab" as a key, but is as a prefix */
	put(e, "/t/ab", "x");
	cr_assert_eq(eg_etcd_get(e, "/t/a", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2);
	eg_etcd_range_free(&r);

	cr_assert_eq(eg_etcd_delete(e, "/t/a", false, &rd, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(rd, r2);
	cr_assert_eq(eg_etcd_get(e, "/t/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2); /* /t/ab, /t/bin */
	cr_assert_str_eq(r.kvs[0].key, "/t/ab");
	cr_assert_str_eq(r.kvs[1].key, "/t/bin");
	eg_etcd_range_free(&r);
	cr_assert_eq(eg_etcd_delete(e, "/t/", true, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_get(e, "/t/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 0);
	eg_etcd_range_free(&r);

	/* an empty key is refused before anything is sent */
	cr_assert_eq(eg_etcd_put(e, "", "x", 1, NULL, err, sizeof(err)), -EINVAL);
	eg_etcd_close(e);
}

Test(etcd, prefix_paging_is_one_snapshot)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256], k[64];
	int64_t last = 0;
	size_t i;

	start(1);
	e = open_all();
	/* more than one page (the client asks for 1000 per page) */
	for (i = 0; i < 2100; i++) {
		snprintf(k, sizeof(k), "/p/%05zu", i);
		last = put(e, k, "v");
	}
	put(e, "/q", "outside");
	cr_assert_eq(eg_etcd_get(e, "/p/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2100);
	cr_assert_geq(r.revision, last);
	for (i = 0; i < r.n; i++) {
		snprintf(k, sizeof(k), "/p/%05zu", i);
		cr_assert_str_eq(r.kvs[i].key, k);
	}
	eg_etcd_range_free(&r);
	eg_etcd_close(e);
}

struct seen {
	char keys[256][32];
	int types[256];
	int64_t revs[256];
	size_t n, want;
	int progress;
	int64_t progress_rev;
	volatile int stop;
};

static int collect(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct seen *s = ctx;
	size_t i;

	if (!n) {
		s->progress++;
		s->progress_rev = revision;
	}
	for (i = 0; i < n && s->n < 256; i++) {
		snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", ev[i].kv.key);
		s->types[s->n] = ev[i].type;
		s->revs[s->n] = ev[i].kv.mod_revision;
		s->n++;
	}
	if (s->want && s->n >= s->want)
		s->stop = 1;
	return 0;
}

struct writer {
	struct eg_etcd *e;
	int n;
	const char *fmt;
	unsigned delay_ms;
	volatile int *kill_at; /* when set: written count after which to signal */
};

static void *write_keys(void *arg)
{
	struct writer *w = arg;
	char k[64], err[256];
	int i;

	usleep(300 * 1000); /* let the watch start */
	for (i = 0; i < w->n; i++) {
		snprintf(k, sizeof(k), w->fmt, i);
		while (eg_etcd_put(w->e, k, "v", 1, NULL, err, sizeof(err)))
			usleep(50 * 1000); /* the test kills members: retry */
		if (w->delay_ms)
			usleep(w->delay_ms * 1000);
	}
	return NULL;
}

Test(etcd, watch_streams_events_in_order)
{
	struct eg_etcd_watch_spec specs[] = {{"/w/", true}, {"/k", false}};
	struct seen s = {.want = 22};
	struct eg_etcd *e;
	char err[256], k[32];
	int64_t start_rev;
	size_t i, nw = 0;
	int rc;

	start(1);
	e = open_all();
	start_rev = put(e, "/before", "x") + 1;
	for (i = 0; i < 20; i++) {
		snprintf(k, sizeof(k), "/w/%02zu", i);
		put(e, k, "v");
	}
	put(e, "/k", "1");
	put(e, "/kk", "not watched");
	cr_assert_eq(eg_etcd_delete(e, "/k", false, NULL, err, sizeof(err)), 0, "%s", err);
	rc = eg_etcd_watch(e, specs, 2, start_rev, collect, &s, &s.stop, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "watch: %d %s", rc, err);
	cr_assert_eq(s.n, 22);
	/* per spec in revision order; the /w/ keys in the order written */
	for (i = 0; i < s.n; i++) {
		if (!strncmp(s.keys[i], "/w/", 3)) {
			snprintf(k, sizeof(k), "/w/%02zu", nw++);
			cr_assert_str_eq(s.keys[i], k);
			cr_assert_eq(s.types[i], EG_ETCD_PUT);
		}
	}
	cr_assert_eq(nw, 20);
	for (i = 0; i < s.n && strcmp(s.keys[i], "/k"); i++)
		;
	cr_assert_lt(i, s.n);
	cr_assert_eq(s.types[i], EG_ETCD_PUT);
	for (i++; i < s.n && strcmp(s.keys[i], "/k"); i++)
		;
	cr_assert_lt(i, s.n, "the delete of /k was not streamed");
	cr_assert_eq(s.types[i], EG_ETCD_DELETE);
	eg_etcd_close(e);
}

static int stop_on_progress(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct seen *s = ctx;

	(void)ev;
	if (n)
		return -100; /* nothing was written under the watch */
	s->progress++;
	s->progress_rev = revision;
	return 7;
}

Test(etcd, watch_live_and_progress)
{
	struct eg_etcd_watch_spec spec = {"/live/", true};
	struct eg_etcd_watch_spec two[] = {{"/quiet/", true}, {"/quiet2", false}};
	struct eg_etcd *e, *we;
	struct writer wr;
	struct seen s = {0};
	pthread_t t;
	char err[256];
	int64_t rev, now;
	size_t i;
	int rc;

	start(1);
	e = open_all();
	we = open_all();
	rev = put(e, "/live-start", "x");
	wr = (struct writer){.e = we, .n = 30, .fmt = "/live/%02d", .delay_ms = 10};
	pthread_create(&t, NULL, write_keys, &wr);
	s.want = 30;
	rc = eg_etcd_watch(e, &spec, 1, rev + 1, collect, &s, &s.stop, NULL, err, sizeof(err));
	pthread_join(t, NULL);
	cr_assert_eq(rc, 0, "watch: %d %s", rc, err);
	cr_assert_eq(s.n, 30);
	for (i = 1; i < s.n; i++)
		cr_assert_gt(s.revs[i], s.revs[i - 1]);

	/* nothing under the watch: a progress notification (every 1 s in
	 * tests/fleet/etcd_env.c) reaches fn as an empty batch, and fn's
	 * nonzero value is what the watch returns */
	s = (struct seen){0};
	now = put(e, "/other", "x");
	rc = eg_etcd_watch(e, two, 2, now + 1, stop_on_progress, &s, NULL, NULL, err, sizeof(err));
	cr_assert_eq(rc, 7, "watch: %d %s", rc, err);
	cr_assert_eq(s.progress, 1);
	cr_assert_geq(s.progress_rev, now);
	eg_etcd_close(we);
	eg_etcd_close(e);
}

Test(etcd, resume_from_revision)
{
	struct eg_etcd_watch_spec spec = {"/r/", true};
	struct seen s = {.want = 3};
	struct eg_etcd *e;
	int64_t revs[5];
	char err[256], k[16];
	int rc, i;

	start(1);
	e = open_all();
	for (i = 0; i < 5; i++) {
		snprintf(k, sizeof(k), "/r/%d", i);
		revs[i] = put(e, k, "v");
	}
	/* a caller that applied revs[1] resumes from revs[1] + 1 */
	rc = eg_etcd_watch(e, &spec, 1, revs[1] + 1, collect, &s, &s.stop, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(s.n, 3);
	cr_assert_str_eq(s.keys[0], "/r/2");
	cr_assert_eq(s.revs[0], revs[2]);
	cr_assert_str_eq(s.keys[2], "/r/4");
	eg_etcd_close(e);
}

Test(etcd, compaction_cancels_with_compact_revision)
{
	struct eg_etcd_watch_spec spec = {"/c/", true};
	struct seen s = {.want = 1};
	struct eg_etcd *e;
	int64_t r1, r3, compact = 0;
	char err[256];
	int rc;

	start(1);
	e = open_all();
	r1 = put(e, "/c/1", "a");
	put(e, "/c/2", "b");
	r3 = put(e, "/c/3", "c");
	cr_assert_eq(eg_etcd_compact(e, r3, err, sizeof(err)), 0, "%s", err);
	rc = eg_etcd_watch(e, &spec, 1, r1, collect, &s, &s.stop, &compact, err, sizeof(err));
	cr_assert_eq(rc, -ECANCELED, "watch: %d %s", rc, err);
	cr_assert_eq(compact, r3);
	cr_assert_eq(s.n, 0);
	cr_assert(strstr(err, "compacted"), "%s", err);
	/* compacting again at or below is what was asked already: 0, as a
	 * retry on another member after a timeout gets; a future revision is
	 * refused by etcd, named */
	cr_assert_eq(eg_etcd_compact(e, r1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_compact(e, r3, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_compact(e, r3 + 1000, err, sizeof(err)), -ERANGE, "%s", err);
	cr_assert(strstr(err, "future revision"), "%s", err);
	/* from the compact revision on, the watch works */
	s = (struct seen){.want = 1};
	rc = eg_etcd_watch(e, &spec, 1, compact, collect, &s, &s.stop, &compact, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(s.keys[0], "/c/3");
	eg_etcd_close(e);
}

static int endpoint_index(const char *url)
{
	size_t i;

	for (i = 0; i < env.n; i++)
		if (!strcmp(env.m[i].client_url, url))
			return (int)i;
	return -1;
}

Test(etcd, unary_calls_fail_over)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];
	int used, i;

	start(3);
	e = open_all();
	put(e, "/f/a", "1");
	used = endpoint_index(eg_etcd_endpoint(e));
	cr_assert_geq(used, 0);
	cr_assert_eq(eg_test_etcd_kill_member(&env, (size_t)used), 0);
	/* the member in use is gone: the next calls are served by another */
	put(e, "/f/b", "2");
	cr_assert_neq(endpoint_index(eg_etcd_endpoint(e)), used);
	cr_assert_eq(eg_etcd_get(e, "/f/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2);
	eg_etcd_range_free(&r);
	/* the leader survives a kill too (a new one is elected) */
	i = eg_test_etcd_leader(&env);
	cr_assert_geq(i, 0, "no leader");
	cr_assert_eq(eg_test_etcd_restart_member(&env, (size_t)used), 0);
	put(e, "/f/c", "3");
	/* nothing answers: -EHOSTUNREACH, named */
	for (i = 0; i < 3; i++)
		eg_test_etcd_kill_member(&env, (size_t)i);
	cr_assert_eq(eg_etcd_get(e, "/f/", true, &r, err, sizeof(err)), -EHOSTUNREACH);
	cr_assert(strstr(err, "no etcd endpoint answered"), "%s", err);
	eg_etcd_close(e);
}

struct resume_ctx {
	struct seen s;
	struct eg_etcd *e;
	int victim; /* -1 until killed */
	bool killed;
};

static int collect_and_kill(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct resume_ctx *c = ctx;

	collect(ev, n, revision, &c->s);
	if (c->s.n && !strcmp(c->s.keys[c->s.n - 1], "/s/59"))
		c->s.stop = 1;
	if (!c->killed && c->s.n >= 10) {
		c->victim = endpoint_index(eg_etcd_endpoint(c->e));
		eg_test_etcd_kill_member(&env, (size_t)c->victim);
		c->killed = true;
	}
	return 0;
}

Test(etcd, watch_resumed_after_member_kill)
{
	struct eg_etcd_watch_spec spec = {"/s/", true};
	struct resume_ctx c = {.victim = -1};
	struct eg_etcd *we;
	struct writer wr;
	pthread_t t;
	char err[256], k[32];
	int64_t from;
	int rc, resumes = 0;
	size_t i, n;

	start(3);
	c.e = open_all();
	we = open_all();
	from = put(we, "/s-start", "x") + 1;
	wr = (struct writer){.e = we, .n = 60, .fmt = "/s/%02d", .delay_ms = 20};
	pthread_create(&t, NULL, write_keys, &wr);
	for (;;) {
		rc = eg_etcd_watch(c.e, &spec, 1, from, collect_and_kill, &c, &c.s.stop, NULL, err,
				   sizeof(err));
		if (rc == 0)
			break;
		/* the caller resumes from the last applied revision + 1 */
		cr_assert(rc == -EPIPE || rc == -EHOSTUNREACH, "watch: %d %s", rc, err);
		cr_assert_lt(++resumes, 20, "%s", err);
		from = c.s.n ? c.s.revs[c.s.n - 1] + 1 : from;
		usleep(100 * 1000);
	}
	pthread_join(t, NULL);
	cr_assert(c.killed);
	cr_assert_geq(resumes, 1, "the kill did not end the stream");
	cr_assert_neq(endpoint_index(eg_etcd_endpoint(c.e)), c.victim);
	/* every event once (revisions strictly ascending: nothing replayed
	 * by the resume), every key in order; a key may come twice in a row
	 * when the writer's put was committed but its answer lost in the
	 * kill, and the writer put it again */
	for (i = 1; i < c.s.n; i++)
		cr_assert_gt(c.s.revs[i], c.s.revs[i - 1], "event %zu replayed", i);
	for (i = 0, n = 0; i < c.s.n; i++) {
		if (i && !strcmp(c.s.keys[i], c.s.keys[i - 1]))
			continue;
		snprintf(k, sizeof(k), "/s/%02zu", n++);
		cr_assert_str_eq(c.s.keys[i], k);
	}
	cr_assert_eq(n, 60);
	eg_etcd_close(we);
	eg_etcd_close(c.e);
}

/* The leader dies: a new one is elected among the two left, and writes
 * through the client succeed again within a few seconds (the caller
 * retries while the election runs). */
Test(etcd, leader_kill_and_reelection)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];
	int old, now = -1, tries = 0;
	struct timespec t0, t1;
	int64_t rev = 0;

	start(3);
	e = open_all();
	put(e, "/l/before", "1");
	old = eg_test_etcd_leader(&env);
	cr_assert_geq(old, 0, "no leader in a fresh cluster");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(eg_test_etcd_kill_member(&env, (size_t)old), 0);
	while (eg_etcd_put(e, "/l/after", "2", 1, &rev, err, sizeof(err))) {
		cr_assert_lt(++tries, 100, "no write within 10 s of the leader's death: %s", err);
		usleep(100 * 1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_log_info("first write after the leader's death: %.0f ms, %d retries",
		    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		    tries);
	while ((now = eg_test_etcd_leader(&env)) < 0) {
		cr_assert_lt(++tries, 100, "no new leader");
		usleep(100 * 1000);
	}
	cr_assert_neq(now, old);
	cr_assert_neq(endpoint_index(eg_etcd_endpoint(e)), old);
	cr_assert_eq(eg_etcd_get(e, "/l/", true, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 2);
	eg_etcd_range_free(&r);
	/* the old leader comes back as a follower and serves the new write */
	cr_assert_eq(eg_test_etcd_restart_member(&env, (size_t)old), 0);
	eg_etcd_close(e);
	{
		struct eg_etcd *one;

		cr_assert_eq(eg_etcd_open(env.m[old].client_url, 1000, &one, err, sizeof(err)), 0);
		/* A member that just rejoined answers a linearizable read with
		 * "leader changed" (503) until it has caught up with the new
		 * leader: retry that while it lasts, not a fixed wait. */
		for (tries = 0; eg_etcd_get(one, "/l/after", false, &r, err, sizeof(err));
		     tries++) {
			cr_assert_lt(tries, 100, "the restarted member serves no read in 10 s: %s",
				     err);
			usleep(100 * 1000);
		}
		cr_assert_eq(r.n, 1);
		cr_assert_eq(r.kvs[0].mod_revision, rev);
		eg_etcd_range_free(&r);
		eg_etcd_close(one);
	}
}
