// SPDX-License-Identifier: Apache-2.0
/* PUT /v1/sandboxes/ID refuses what install refuses, with the documented
 * status and nothing written: another active sandbox's socket by another
 * name (409), a linked endpoint path, a VSOCK CID no guest has and a
 * generation above 2^53 - 1 (400). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_install, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

static struct dd_resp put_b(const char *fmt, const char *value)
{
	char body[1024], field[600];

	snprintf(field, sizeof(field), fmt, value);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"" DD_WORKER "\",\"generation\":3,\"activation\":1,"
		 "\"bridge_pid\":%d,%s}",
		 (int)getpid(), field);
	return dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2, body);
}

static void expect_refused(struct dd_resp r, int status, const char *error, const char *reason,
			   const char *what)
{
	struct dd_resp s;

	cr_expect_eq(r.status, status, "%s: %d %s", what, r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), error, "%s: %s", what, r.body);
	cr_expect(strstr(dd_str(&r, "reason"), reason), "%s: %s", what, r.body);
	dd_resp_free(&r);
	s = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX2, NULL);
	cr_expect_eq(s.status, 404, "%s: a refused install wrote a record: %s", what, s.body);
	dd_resp_free(&s);
}

/* guarantees: none */
Test(daemon_install, refusals_have_their_status_and_write_nothing)
{
	const char *own = kh_path("bridge.sock"), *hard = kh_path("b-hard.sock"),
		   *sym = kh_path("b-link.sock");
	struct kh_child bridge;
	struct dd_resp r;

	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, own), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, own);
	cr_assert_eq(r.status, 200, "install A: %d %s", r.status, r.body);
	dd_resp_free(&r);

	/* A's socket: by A's path, by a hard link (its inode), by a link. */
	r = put_b("\"bridge_sockets\":[\"%s\"]", own);
	expect_refused(r, 409, "endpoint in use", "registered to active sandbox " DD_SANDBOX,
		       "A's path");
	cr_assert_eq(link(own, hard), 0, "link: %s", strerror(errno));
	r = put_b("\"bridge_sockets\":[\"%s\"]", hard);
	expect_refused(r, 409, "endpoint in use", "its socket (inode ", "a hard link");
	cr_assert_eq(symlink(own, sym), 0, "symlink: %s", strerror(errno));
	r = put_b("\"bridge_sockets\":[\"%s\"]", sym);
	expect_refused(r, 400, "bad request", "a component of the path is a symbolic link",
		       "a symlink");

	/* CIDs that are never a guest. */
	r = put_b("\"vsock\":[{\"cid\":%s,\"port\":52}]", "2");
	expect_refused(r, 400, "bad request", "vsock 2:52: CID 2 is never a VMM's guest", "CID 2");
	r = put_b("\"vsock\":[{\"cid\":%s,\"port\":52}]", "0");
	expect_refused(r, 400, "bad request", "CID 0 is never", "CID 0");
	r = put_b("\"vsock\":[{\"cid\":%s,\"port\":52}]", "4294967295");
	expect_refused(r, 400, "bad request", "CID 4294967295 is never", "CID -1");

	/* Generations above 2^53 - 1: the JSON field is checked first. */
	r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2,
		   "{\"worker\":\"" DD_WORKER "\",\"generation\":9223372036854775807,"
		   "\"activation\":1,\"bridge_pid\":1}");
	expect_refused(r, 400, "bad request",
		       "\"generation\": not an integer in 0..9007199254740991",
		       "generation 2^63 - 1");
	r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2,
		   "{\"worker\":\"" DD_WORKER "\",\"generation\":9007199254740992,"
		   "\"activation\":1,\"bridge_pid\":1}");
	expect_refused(r, 400, "bad request", "9007199254740991", "generation 2^53");
}

/* A record naming another worker would admit that worker's capabilities
 * here: PUT naming a worker other than the daemon's worker_id is 409
 * wrong-worker, with the fleet off as on (test_fleet.c), and changes
 * nothing (docs/fleet.md, "The install rule"). */
/* guarantees: none */
Test(daemon_install, another_worker_is_409_wrong_worker)
{
	const char *own = kh_path("bridge.sock");
	struct kh_child bridge;
	struct dd_resp r;
	char body[512];

	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, own), 0);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"" DD_WORKER_B "\",\"generation\":3,\"activation\":1,"
		 "\"bridge_pid\":%d,\"bridge_sockets\":[\"%s\"]}",
		 (int)bridge.pid, own);
	r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2, body);
	cr_assert_eq(r.status, 409, "%d %s", r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "error"), "wrong-worker", "%s", r.body);
	cr_assert_str_eq(dd_str(&r, "reason"),
			 "sandbox " DD_SANDBOX2 ": worker " DD_WORKER_B
			 ": not this worker, which is " DD_WORKER " (wrong-worker)");
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX2, NULL);
	cr_assert_eq(r.status, 404, "a refused install wrote a record: %s", r.body);
	dd_resp_free(&r);
	/* the daemon's own id installs */
	r = dd_install(DD_SANDBOX2, 3, 1, bridge.pid, own);
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
	dd_resp_free(&r);
	kh_child_stop(&bridge);
}
