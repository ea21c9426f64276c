/* SPDX-License-Identifier: Apache-2.0 */
/* How a fleet's clients spread over the members and back off a slow one
 * (user/fleet/etcd.c, etcd_post.c): the endpoint a handle starts on is
 * drawn at random, and after a call timed out the next calls' limit backs
 * off with jitter, then falls back at the first answer. The slow member is
 * a canned server on loopback that takes the request and never answers
 * (tests/fleet/fake_http.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fleet/etcd.h"
#include "fleet/etcd_impl.h"
#include "fleet/fake_http.h"

static struct eg_fake_http slow, good;

static void fini(void)
{
	if (slow.url[0])
		eg_fake_http_stop(&slow);
	if (good.url[0])
		eg_fake_http_stop(&good);
}

TestSuite(etcd_spread, .fini = fini, .timeout = 60);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A fleet's workers share one list of endpoints: were every handle to
 * start on the first, one member would carry the fleet. */
Test(etcd_spread, first_endpoint_is_drawn_at_random)
{
	const char *eps = "http://127.0.0.1:1,http://127.0.0.1:2,http://127.0.0.1:3";
	unsigned seen[3] = {0};
	struct eg_etcd *e;
	char err[256];

	/* 3 (2/3)^192 ≈ 1e-33: a start that is not drawn fails this */
	for (int i = 0; i < 192; i++) {
		cr_assert_eq(eg_etcd_open(eps, 0, &e, err, sizeof(err)), 0, "%s", err);
		cr_assert_lt(eg_etcd_current(e), 3);
		seen[eg_etcd_current(e)]++;
		cr_assert_str_eq(eg_etcd_endpoint(e), eg_etcd_endpoint_at(e, eg_etcd_current(e)));
		eg_etcd_close(e);
	}
	cr_log_info("first endpoints: %u %u %u", seen[0], seen[1], seen[2]);
	for (int i = 0; i < 3; i++)
		cr_assert_gt(seen[i], 0, "endpoint %d never drawn first of 192", i);
	cr_assert_eq(eg_etcd_open("http://127.0.0.1:1", 0, &e, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_current(e), 0);
	eg_etcd_close(e);
}

/* Each timed-out call doubles the back-off, up to four timeouts; each
 * call's limit is drawn from [back-off / 2, back-off], never below the
 * timeout; and curl does wait that long. */
Test(etcd_spread, limit_backs_off_after_timeouts)
{
	static const char *const none[] = {NULL};
	const unsigned t = 150;
	unsigned limits[6], distinct = 0;
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];

	slow = (struct eg_fake_http){.chunked = true, .pieces = none, .hold_open = true};
	cr_assert_eq(eg_fake_http_start(&slow), 0);
	cr_assert_eq(eg_etcd_open(slow.url, t, &e, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_backoff_ms(e), t);
	for (int i = 0; i < 6; i++) {
		unsigned b = eg_etcd_backoff_ms(e), lo = b / 2 < t ? t : b / 2;
		double t0 = now_ms(), took;
		int rc = eg_etcd_get(e, "/k", false, &r, err, sizeof(err));

		took = now_ms() - t0;
		cr_assert_eq(rc, -EHOSTUNREACH, "call %d: rc %d: %s", i, rc, err);
		cr_assert(strstr(err, "Timeout was reached"), "call %d: %s", i, err);
		limits[i] = eg_etcd_limit_ms(e);
		cr_log_info("call %d: back-off %u ms, limit %u ms, took %.0f ms", i, b, limits[i],
			    took);
		cr_assert_geq(limits[i], lo, "call %d: limit %u below %u", i, limits[i], lo);
		cr_assert_leq(limits[i], b, "call %d: limit %u above its back-off %u", i, limits[i],
			      b);
		cr_assert_geq(took, limits[i] - 5.0, "call %d gave up after %.0f ms of %u", i, took,
			      limits[i]);
		cr_assert_eq(eg_etcd_backoff_ms(e), b * 2 > 4 * t ? 4 * t : b * 2, "call %d", i);
	}
	cr_assert_eq(limits[0], t, "the first call's limit is the timeout");
	/* the last three are drawn from [2t, 4t]: the draw is not one value */
	for (int i = 3; i < 6; i++)
		distinct += limits[i] != limits[2];
	cr_assert_gt(distinct, 0, "limits %u %u %u %u: no jitter", limits[2], limits[3], limits[4],
		     limits[5]);
	eg_etcd_close(e);
}

/* An answer, here from the next member in the same call, sets the
 * back-off back to the timeout. */
Test(etcd_spread, an_answer_ends_the_back_off)
{
	static const char *const none[] = {NULL};
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char eps[160], err[256];

	slow = (struct eg_fake_http){.chunked = true, .pieces = none, .hold_open = true};
	good = (struct eg_fake_http){.body = "{\"header\":{\"revision\":\"9\"}}"};
	cr_assert_eq(eg_fake_http_start(&slow), 0);
	cr_assert_eq(eg_fake_http_start(&good), 0);
	snprintf(eps, sizeof(eps), "%s,%s", slow.url, good.url);
	cr_assert_eq(eg_etcd_open(eps, 150, &e, err, sizeof(err)), 0, "%s", err);
	eg_etcd_set_current(e, 0);
	cr_assert_eq(eg_etcd_get(e, "/k", false, &r, err, sizeof(err)), 0, "%s", err);
	eg_etcd_range_free(&r);
	cr_assert_str_eq(eg_etcd_endpoint(e), good.url);
	cr_assert_eq(slow.requests, 1, "the slow member was not asked first");
	/* the answer came within a limit drawn from the doubled back-off */
	cr_assert_geq(eg_etcd_limit_ms(e), 150);
	cr_assert_leq(eg_etcd_limit_ms(e), 300);
	cr_assert_eq(eg_etcd_backoff_ms(e), 150);
	cr_assert_eq(eg_etcd_get(e, "/k", false, &r, err, sizeof(err)), 0, "%s", err);
	eg_etcd_range_free(&r);
	cr_assert_eq(eg_etcd_limit_ms(e), 150, "the call after an answer waits the timeout");
	eg_etcd_close(e);
}

/* A login is not given up at the call limit: etcd checks the password
 * (bcrypt) whether or not the client still waits, so a login asked again
 * after 2 s is a second check queued behind the first. A member that
 * answers a login after four times the timeout gives its token; a read
 * from it in the same time is given up. */
Test(etcd_spread, a_login_waits_for_its_answer)
{
	char dir[] = "/tmp/eg-etcd-login.XXXXXX", pw[300], err[256] = "", tok[64];
	struct eg_etcd_auth a = {.user = "worker", .password_file = pw};
	struct eg_etcd_range r;
	struct eg_etcd *e;
	double t0, took;
	int fd, rc;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	fd = open(pw, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "s3cret\n", 7), 7);
	close(fd);
	slow = (struct eg_fake_http){
	    .body = "{\"header\":{\"revision\":\"9\"},\"token\":\"tok.9\"}", .delay_ms = 600};
	cr_assert_eq(eg_fake_http_start(&slow), 0);
	cr_assert_eq(eg_etcd_open_auth(slow.url, 150, &a, &e, err, sizeof(err)), 0, "%s", err);
	t0 = now_ms();
	rc = eg_etcd_login(e, 0, err, sizeof(err));
	took = now_ms() - t0;
	cr_assert_eq(rc, 0, "the login was given up after %.0f ms: %s", took, err);
	cr_assert_geq(took, 550.0);
	cr_assert_geq(eg_etcd_limit_ms(e), 30000, "a login's limit of %u ms", eg_etcd_limit_ms(e));
	cr_assert_gt(eg_etcd_token_copy(e, tok, sizeof(tok)), 0);
	cr_assert_str_eq(tok, "tok.9");
	cr_assert_eq(slow.requests, 1, "the login was sent %d times", slow.requests);
	/* the call itself keeps its limit */
	rc = eg_etcd_get(e, "/k", false, &r, err, sizeof(err));
	cr_assert_eq(rc, -EHOSTUNREACH, "rc %d: %s", rc, err);
	cr_assert_eq(eg_etcd_limit_ms(e), 150);
	eg_etcd_close(e);
	unlink(pw);
	rmdir(dir);
}
