// SPDX-License-Identifier: Apache-2.0
/* execgate unload and a new execgate load under a running execgated: while
 * nothing is loaded every route that reads the maps answers 503 with the
 * reason (never a record or an allow from the dead maps); after the load
 * the same daemon answers from the new maps, which the kernel enforces,
 * and its events consumer reads the new ring buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_reload, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

static void expect_503(const char *method, const char *path, const char *body)
{
	struct dd_resp r = dd_req(method, path, body);

	cr_expect_eq(r.status, 503, "%s %s after unload: %d %s", method, path, r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not loaded", "%s %s: %s", method, path, r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "not loaded"), "%s %s: %s", method, path, r.body);
	dd_resp_free(&r);
}

/* dd_log_has, waiting up to 2 s for the line to come. */
static bool log_has(const char *needle)
{
	for (int i = 0; i < 200; i++) {
		if (dd_log_has(needle))
			return true;
		usleep(10000);
	}
	return false;
}

static const char *verdict_of(const char *path, const char *token, int pid)
{
	static char v[64];
	char *body = dd_admit_body(token, "file.read", pid);
	struct dd_resp r = dd_req("POST", path, body);

	free(body);
	cr_assert_eq(r.status, 200, "%s: %d %s", path, r.status, r.body);
	snprintf(v, sizeof(v), "%s", dd_str(&r, "verdict"));
	dd_resp_free(&r);
	return v;
}

Test(daemon_reload, unload_answers_503_and_a_new_load_is_followed)
{
	struct kh_child bridge, granted, other;
	const char *sock = kh_path("bridge.sock");
	char t8[1024], out[4096], path[128], *body, *check;
	struct dd_resp r;
	long long events;
	int rc;

	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, sock), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, sock);
	cr_assert_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	kh_child_start(&granted, true);
	kh_child_start(&other, true);
	cr_assert_str_eq(verdict_of("/v1/admit", t8, granted.pid), "allow");
	cr_assert_eq(kh_child_connect(&granted, sock, NULL, NULL), 0);

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "execgate unload: %s", out);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", DD_SANDBOX);
	body = dd_admit_body(t8, "file.read", granted.pid);
	check = dd_admit_body(t8, "file.read", 0);
	expect_503("GET", "/v1/sandboxes", NULL);
	expect_503("GET", path, NULL);
	expect_503("POST", "/v1/check", check);
	expect_503("POST", "/v1/admit", body);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/retire", DD_SANDBOX);
	expect_503("POST", path, NULL);
	r = dd_install(DD_SANDBOX2, 1, 1, bridge.pid, kh_path("other.sock"));
	cr_expect_eq(r.status, 503, "install after unload: %d %s", r.status, r.body);
	dd_resp_free(&r);
	/* status reads the pins itself and says so; keys need no maps. */
	r = dd_req("GET", "/v1/status", NULL);
	cr_expect_eq(r.status, 503, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not loaded", "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	cr_expect(log_has("answering 503 until execgate load"), "no log line for the unload");

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--require", "cgroup", NULL);
	cr_assert_eq(rc, 0, "execgate load: %s", out);
	/* The new maps: no record, so no allow, and the list is empty. */
	r = dd_req("GET", "/v1/sandboxes", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(json_is_array(json_object_get(r.json, "records")), "%s", r.body);
	cr_expect_eq(json_array_size(json_object_get(r.json, "records")), 0, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/check", check);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "reason"), "no-record", "%s", r.body);
	dd_resp_free(&r);
	cr_expect(log_has("reopened, answering from the new maps"), "no log line for the load");
	/* Install and admit through the same daemon: the kernel enforces what
	 * it wrote, so the maps it answers from are the ones in use. */
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, sock);
	cr_assert_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	events = dd_metric("execgate_events_total ");
	cr_expect_eq(kh_child_connect(&other, sock, NULL, NULL), -EPERM);
	/* The denial went to the new eg_events: the consumer reads it there. */
	for (int i = 0; i < 50 && dd_metric("execgate_events_total ") <= events; i++)
		usleep(100000);
	cr_expect_gt(dd_metric("execgate_events_total "), events,
		     "the events consumer did not follow the new ring buffer");
	cr_expect_eq(kh_child_connect(&granted, sock, NULL, NULL), -EPERM,
		     "a grant of the unloaded maps still lets a client in");
	cr_assert_str_eq(verdict_of("/v1/admit", t8, granted.pid), "allow");
	cr_expect_eq(kh_child_connect(&granted, sock, NULL, NULL), 0);
	free(body);
	free(check);
}
