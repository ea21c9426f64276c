// SPDX-License-Identifier: Apache-2.0
/* execgated's API over its socket: every verdict, every error status,
 * authorization by peer credentials, the record and key life cycles, and
 * real enforcement after an admit. */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "json_log.h"

TestSuite(daemon_api, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

#define EGD_KEPT 4096 /* lines the daemon keeps for slow readers (events.h) */

static struct kh_child bridge;

/* keys, a bridge process listening on bridge.sock, and S installed at
 * generation 8 activation 1. */
static void world(void)
{
	struct dd_resp r;

	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, kh_path("bridge.sock")), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, kh_path("bridge.sock"));
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "outcome"), "new");
	dd_resp_free(&r);
}

static struct dd_resp verdict(const char *op, const char *token, const char *scope)
{
	char *body = dd_admit_body(token, scope, 0), path[32];
	struct dd_resp r;

	snprintf(path, sizeof(path), "/v1/%s", op);
	r = dd_req("POST", path, body);
	free(body);
	return r;
}

static void expect(const char *op, const char *token, const char *scope, const char *v,
		   const char *reason)
{
	struct dd_resp r = verdict(op, token, scope);

	cr_assert_eq(r.status, 200, "%s: %d %s", op, r.status, r.body);
	cr_expect_eq(dd_int(&r, "schema_version"), 2);
	cr_expect_str_eq(dd_str(&r, "verdict"), v, "%s: %s", op, r.body);
	cr_expect_str_eq(dd_str(&r, "reason"), reason, "%s: %s", op, r.body);
	dd_resp_free(&r);
}

Test(daemon_api, every_verdict)
{
	char t8[1024], t7[1024], t9[1024], tb[1024], ts2[1024], texp[1024], tbad[1024];
	char tother[1024];
	char kid[32], out[256];
	struct dd_resp r;
	size_t n;

	world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	kh_cap(t7, sizeof(t7), DD_SANDBOX, DD_WORKER, 7, 1, 120, 0);
	kh_cap(t9, sizeof(t9), DD_SANDBOX, DD_WORKER, 9, 1, 120, 0);
	kh_cap(tb, sizeof(tb), DD_SANDBOX, DD_WORKER_B, 8, 1, 120, 0);
	kh_cap(ts2, sizeof(ts2), DD_SANDBOX2, DD_WORKER, 8, 1, 120, 0);
	kh_cap(texp, sizeof(texp), DD_SANDBOX, DD_WORKER, 8, 1, 120, (long long)time(NULL) - 1000);

	/* allow, then the same token from the verified-token cache */
	r = verdict("admit", t8, "file.read");
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(dd_str(&r, "verdict"), "allow", "%s", r.body);
	cr_assert(json_is_false(json_object_get(r.json, "cache_hit")), "%s", r.body);
	cr_assert_eq(
	    json_integer_value(json_object_get(json_object_get(r.json, "subject"), "tgid")),
	    getpid(), "the grant is for the caller: %s", r.body);
	cr_assert_not_null(json_object_get(r.json, "grant"), "%s", r.body);
	dd_resp_free(&r);
	r = verdict("admit", t8, "file.read");
	cr_assert_str_eq(dd_str(&r, "verdict"), "allow", "%s", r.body);
	cr_assert(json_is_true(json_object_get(r.json, "cache_hit")), "%s", r.body);
	dd_resp_free(&r);
	expect("check", t8, "exec", "allow", "ok");

	/* refresh-route */
	expect("admit", t9, "file.read", "refresh-route", "generation-mismatch");
	expect("admit", t7, "file.read", "refresh-route", "generation-retired");
	expect("check", tb, "file.read", "refresh-route", "worker-mismatch");
	expect("admit", ts2, "file.read", "refresh-route", "no-record");

	/* deny */
	expect("admit", texp, "file.read", "deny", "expired");
	expect("check", t8, "terminal", "deny", "scope-not-allowed");
	expect("admit", "AAAA", "file.read", "deny", "malformed");
	snprintf(tbad, sizeof(tbad), "%s", t8);
	n = strlen(tbad);
	tbad[n - 10] = tbad[n - 10] == 'A' ? 'B' : 'A'; /* inside the signature */
	expect("admit", tbad, "file.read", "deny", "bad-signature");

	/* refresh-route carries the node key's signature; a token whose
	 * signature failed shows none of its claims */
	r = verdict("admit", t9, "file.read");
	cr_expect(json_is_string(json_object_get(r.json, "signed_verdict")), "%s", r.body);
	cr_expect_str_eq(
	    json_string_value(json_object_get(json_object_get(r.json, "token"), "sandbox")),
	    DD_SANDBOX, "%s", r.body);
	dd_resp_free(&r);
	r = verdict("admit", tbad, "file.read");
	cr_expect(json_is_null(json_object_get(r.json, "token")), "%s", r.body);
	dd_resp_free(&r);
	r = verdict("check", t8, "file.read");
	cr_expect(json_is_null(json_object_get(r.json, "signed_verdict")), "%s", r.body);
	cr_expect(json_is_null(json_object_get(r.json, "grant")), "check grants nothing: %s",
		  r.body);
	dd_resp_free(&r);

	/* a key the worker does not hold */
	cr_assert_eq(kh_issue(out, sizeof(out), "keygen", "--out", kh.keys_dir, NULL), 0, "%s",
		     out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kid, sizeof(kid), "%s", kh.kid);
	snprintf(kh.kid, sizeof(kh.kid), "%.31s", out);
	kh_cap(tother, sizeof(tother), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	snprintf(kh.kid, sizeof(kh.kid), "%s", kid);
	expect("admit", tother, "file.read", "deny", "unknown-key");

	/* one journal line per denial and refresh-route, no token bytes */
	{
		char log[65536];
		FILE *f = fopen(dd.log, "r");
		size_t len = fread(log, 1, sizeof(log) - 1, f);

		fclose(f);
		log[len] = '\0';
		cr_expect(strstr(log, "verdict=deny reason=expired"), "%s", log);
		cr_expect(strstr(log, "verdict=refresh-route reason=generation-mismatch"), "%s",
			  log);
		cr_expect_null(strstr(log, t8), "a token in the log");
		cr_expect_null(strstr(log, texp), "a token in the log");
	}
}

Test(daemon_api, every_error_status)
{
	char big[70001], t8[1024], *body;
	struct dd_resp r;

	world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);

	/* 400 */
	r = dd_req("POST", "/v1/admit", "not json");
	cr_expect_eq(r.status, 400, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "bad request");
	cr_expect_neq(strlen(dd_str(&r, "reason")), 0);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/admit", "{}");
	cr_expect_eq(r.status, 400, "missing token: %s", r.body);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/check", "{\"token\":\"x\",\"pid\":1}");
	cr_expect_eq(r.status, 400, "check takes no pid: %s", r.body);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/admit", "{\"token\":\"x\",\"scope\":\"nope\"}");
	cr_expect_eq(r.status, 400, "unknown scope: %s", r.body);
	dd_resp_free(&r);
	r = dd_req("PUT", "/v1/sandboxes/not-a-uuid", "{}");
	cr_expect_eq(r.status, 400, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2, "{\"worker\":\"" DD_WORKER "\"}");
	cr_expect_eq(r.status, 400, "incomplete install: %s", r.body);
	dd_resp_free(&r);
	r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2,
		   "{\"worker\":\"" DD_WORKER "\",\"generation\":1,\"activation\":1,"
		   "\"bridge_pid\":1,\"bogus\":true}");
	cr_expect_eq(r.status, 400, "unknown field: %s", r.body);
	dd_resp_free(&r);

	/* 404 */
	r = dd_req("GET", "/v1/nothing", NULL);
	cr_expect_eq(r.status, 404, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not found");
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX2, NULL);
	cr_expect_eq(r.status, 404, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX2 "/retire", NULL);
	cr_expect_eq(r.status, 404, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("DELETE", "/v1/keys/0123456789abcdef", NULL);
	cr_expect_eq(r.status, 404, "%s", r.body);
	dd_resp_free(&r);
	body = dd_admit_body(t8, "file.read", 999999999);
	r = dd_req("POST", "/v1/admit", body);
	free(body);
	cr_expect_eq(r.status, 404, "admit for a pid that does not exist: %s", r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "no such process", "%s", r.body);
	dd_resp_free(&r);

	/* 405 */
	r = dd_req("GET", "/v1/admit", NULL);
	cr_expect_eq(r.status, 405, "%s", r.body);
	cr_expect(strstr(r.head, "Allow: POST"), "%s", r.head);
	dd_resp_free(&r);
	r = dd_req("DELETE", "/v1/status", NULL);
	cr_expect_eq(r.status, 405, "%s", r.body);
	dd_resp_free(&r);

	/* 409 */
	r = dd_install(DD_SANDBOX, 7, 1, bridge.pid, kh_path("bridge.sock"));
	cr_expect_eq(r.status, 409, "older generation: %s", r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "stale install", "%s", r.body);
	cr_expect_neq(strlen(dd_str(&r, "reason")), 0);
	dd_resp_free(&r);
	r = dd_req("DELETE", "/v1/sandboxes/" DD_SANDBOX, NULL);
	cr_expect_eq(r.status, 409, "forget of an active record: %s", r.body);
	dd_resp_free(&r);

	/* 413: by Content-Length, and chunked */
	/* Only the header: the answer must come from Content-Length alone.
	 * (Sending the whole body too races the daemon's early close against
	 * our write, and the answer can be lost on the way: seen once.) */
	snprintf(big, sizeof(big),
		 "POST /v1/admit HTTP/1.1\r\nHost: execgated\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		 1 << 20);
	r = dd_raw(big, strlen(big), 10000);
	cr_expect_eq(r.status, 413, "%d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "body too large");
	dd_resp_free(&r);
	{
		static char msg[80000];
		int n = snprintf(msg, sizeof(msg),
				 "POST /v1/admit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n");

		memset(big, 'a', 4096);
		big[4096] = '\0';
		for (int i = 0; i < 17; i++)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n, "1000\r\n%.4096s\r\n", big);
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "0\r\n\r\n");
		r = dd_raw(msg, (size_t)n, 10000);
		cr_expect_eq(r.status, 413, "chunked: %d %s", r.status, r.body);
		dd_resp_free(&r);
	}

	/* 403: see authorization; 503: see test_bad_clients (connection limit) */
}

Test(daemon_api, authorization_by_peer_credentials)
{
	char t8[1024], what[256], *body, *body_pid;
	int st;

	world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	body = dd_admit_body(t8, "file.read", 0);
	body_pid = dd_admit_body(t8, "file.read", getpid());

	/* nobody, no group: 403 everywhere */
	st = dd_req_as(65534, 65534, "POST", "/v1/admit", body, what, sizeof(what));
	cr_expect_eq(st, 403, "nobody admit: %d %s", st, what);
	st = dd_req_as(65534, 65534, "POST", "/v1/check", body, what, sizeof(what));
	cr_expect_eq(st, 403, "nobody check: %d %s", st, what);
	st = dd_req_as(65534, 65534, "GET", "/v1/sandboxes", NULL, what, sizeof(what));
	cr_expect_eq(st, 403, "nobody list: %d %s", st, what);
	st = dd_req_as(65534, 65534, "GET", "/metrics", NULL, what, sizeof(what));
	cr_expect_eq(st, 403, "nobody metrics: %d %s", st, what);

	/* admit_group: admit for itself, check, read; nothing else */
	st = dd_req_as(65534, DD_ADMIT_GID, "POST", "/v1/admit", body, what, sizeof(what));
	cr_expect_eq(st, 200, "admit_group admit: %d %s", st, what);
	cr_expect_str_eq(what, "ok");
	st = dd_req_as(65534, DD_ADMIT_GID, "POST", "/v1/check", body, what, sizeof(what));
	cr_expect_eq(st, 200, "admit_group check: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIT_GID, "POST", "/v1/admit", body_pid, what, sizeof(what));
	cr_expect_eq(st, 403, "admit_group naming another pid: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIT_GID, "GET", "/v1/sandboxes", NULL, what, sizeof(what));
	cr_expect_eq(st, 200, "admit_group list: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIT_GID, "POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL,
		       what, sizeof(what));
	cr_expect_eq(st, 403, "admit_group retire: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIT_GID, "DELETE",
		       "/v1/keys/"
		       "0123456789abcdef",
		       NULL, what, sizeof(what));
	cr_expect_eq(st, 403, "admit_group key delete: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIT_GID, "PUT", "/v1/sandboxes/" DD_SANDBOX2, "{}", what,
		       sizeof(what));
	cr_expect_eq(st, 403, "admit_group install: %d %s", st, what);

	/* admit_group as a supplementary group counts the same */
	st = dd_req_as_member(65534, DD_ADMIT_GID, "POST", "/v1/check", body, what, sizeof(what));
	cr_expect_eq(st, 200, "admit_group (supplementary) check: %d %s", st, what);
	st = dd_req_as_member(65534, DD_ADMIT_GID, "DELETE", "/v1/keys/0123456789abcdef", NULL,
			      what, sizeof(what));
	cr_expect_eq(st, 403, "admit_group (supplementary) key delete: %d %s", st, what);

	/* admin_group, primary or supplementary: past authorization on admin
	 * routes (404: no such key), and may name a pid */
	st = dd_req_as(65534, DD_ADMIN_GID, "DELETE", "/v1/keys/0123456789abcdef", NULL, what,
		       sizeof(what));
	cr_expect_eq(st, 404, "admin_group key delete: %d %s", st, what);
	st = dd_req_as_member(65534, DD_ADMIN_GID, "DELETE", "/v1/keys/0123456789abcdef", NULL,
			      what, sizeof(what));
	cr_expect_eq(st, 404, "admin_group (supplementary) key delete: %d %s", st, what);
	st = dd_req_as(65534, DD_ADMIN_GID, "POST", "/v1/admit", body_pid, what, sizeof(what));
	cr_expect_eq(st, 200, "admin_group admit for a pid: %d %s", st, what);
	cr_expect_str_eq(what, "ok");

	/* root (admin) may name a pid */
	{
		struct dd_resp r = dd_req("POST", "/v1/admit", body_pid);

		cr_expect_eq(r.status, 200, "%s", r.body);
		cr_expect_str_eq(dd_str(&r, "verdict"), "allow", "%s", r.body);
		dd_resp_free(&r);
	}
	free(body);
	free(body_pid);
}

Test(daemon_api, record_and_key_life_cycle)
{
	char t8[1024], path[128], seed[256], text[512];
	struct dd_resp r;
	FILE *f;
	size_t n;

	world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);

	r = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	{
		json_t *s = json_object_get(r.json, "record");

		cr_expect_str_eq(json_string_value(json_object_get(s, "sandbox")), DD_SANDBOX);
		cr_expect_str_eq(json_string_value(json_object_get(s, "state")), "active");
		cr_expect_eq(json_integer_value(json_object_get(s, "generation")), 8);
		cr_expect_geq(dd_int(&r, "endpoints"), 1, "%s", r.body);
		/* The ServicePort profile, as execgate show --json prints it:
		 * none installed here, so two empty arrays. */
		cr_expect(json_is_array(json_object_get(s, "ports")), "%s", r.body);
		cr_expect_eq(json_array_size(json_object_get(s, "service_addrs")), 0, "%s", r.body);
		cr_expect(json_is_array(json_object_get(s, "service_addrs")), "%s", r.body);
	}
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/sandboxes", NULL);
	cr_assert_eq(r.status, 200);
	cr_expect_eq(json_array_size(json_object_get(r.json, "records")), 1, "%s", r.body);
	dd_resp_free(&r);

	/* a newer generation replaces: epoch moves */
	r = dd_install(DD_SANDBOX, 9, 1, bridge.pid, kh_path("bridge.sock"));
	cr_expect_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "outcome"), "replaced", "%s", r.body);
	dd_resp_free(&r);
	expect("admit", t8, "file.read", "refresh-route", "generation-retired");

	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL);
	cr_expect_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(
	    json_string_value(json_object_get(json_object_get(r.json, "record"), "state")),
	    "retired", "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("DELETE", "/v1/sandboxes/" DD_SANDBOX, NULL);
	cr_expect_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX, NULL);
	cr_expect_eq(r.status, 404, "%s", r.body);
	dd_resp_free(&r);

	/* keys: listed, a secret refused, a wrong kid refused, removed */
	r = dd_req("GET", "/v1/keys", NULL);
	cr_assert_eq(r.status, 200);
	cr_expect_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(r.json, "keys"), 0), "kid")),
			 kh.kid, "%s", r.body);
	dd_resp_free(&r);
	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	f = fopen(seed, "r");
	cr_assert_not_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	snprintf(path, sizeof(path), "/v1/keys/%s", kh.kid);
	r = dd_req("PUT", path, text);
	cr_expect_eq(r.status, 400, "a secret key file: %s", r.body);
	dd_resp_free(&r);
	r = dd_req("PUT", "/v1/keys/0123456789abcdef", text);
	cr_expect_eq(r.status, 400, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("DELETE", path, NULL);
	cr_expect_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect_eq(json_array_size(json_object_get(r.json, "keys")), 0, "%s", r.body);
	dd_resp_free(&r);
}

Test(daemon_api, admit_opens_the_kernel_gate)
{
	char t8[1024], *body;
	struct kh_child client;
	struct dd_resp r;

	world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	kh_child_start(&client, true);
	cr_assert_eq(kh_child_connect(&client, kh_path("bridge.sock"), NULL, NULL), -EPERM);
	body = dd_admit_body(t8, "file.read", client.pid);
	r = dd_req("POST", "/v1/admit", body);
	free(body);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(dd_str(&r, "verdict"), "allow", "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(kh_child_connect(&client, kh_path("bridge.sock"), NULL, NULL), 0);
}

/* A token 10 s past its expiry, inside the 15 s clock skew: the answer and
 * the kernel agree. The verifier allows it, so the grant lives until the
 * verifier would stop accepting it, and the connect succeeds; the same
 * token 20 s past is refused and the connect fails. The UUID in the URL
 * is answered in its canonical lower-case form, whatever case was sent. */
Test(daemon_api, allow_inside_the_skew_is_a_grant_the_kernel_honours)
{
	char tok[1024], upper[64], path[128], *body;
	struct kh_child client, late;
	struct dd_resp r;

	world();
	kh_child_start(&client, true);
	kh_child_start(&late, true);
	kh_cap(tok, sizeof(tok), DD_SANDBOX, DD_WORKER, 8, 1, 60, (long long)time(NULL) - 70);
	body = dd_admit_body(tok, "file.read", client.pid);
	r = dd_req("POST", "/v1/admit", body);
	free(body);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "verdict"), "allow", "10 s past expiry: %s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(kh_child_connect(&client, kh_path("bridge.sock"), NULL, NULL), 0,
		     "allow 10 s past expiry, and the connect is refused");

	kh_cap(tok, sizeof(tok), DD_SANDBOX, DD_WORKER, 8, 1, 60, (long long)time(NULL) - 80);
	body = dd_admit_body(tok, "file.read", late.pid);
	r = dd_req("POST", "/v1/admit", body);
	free(body);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "verdict"), "deny", "20 s past expiry: %s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(kh_child_connect(&late, kh_path("bridge.sock"), NULL, NULL), -EPERM,
		     "deny 20 s past expiry, and the connect passes");

	/* upper-case UUID: the canonical form in every answer */
	for (size_t i = 0; i <= strlen(DD_SANDBOX); i++)
		upper[i] = (char)toupper((unsigned char)DD_SANDBOX[i]);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", upper);
	r = dd_req("GET", path, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(!strstr(r.body, upper), "GET echoes the upper-case form: %s", r.body);
	dd_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/retire", upper);
	r = dd_req("POST", path, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "sandbox"), DD_SANDBOX, "retire: %s", r.body);
	cr_expect(!strstr(r.body, upper), "retire echoes the upper-case form: %s", r.body);
	dd_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", upper);
	r = dd_req("DELETE", path, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "sandbox"), DD_SANDBOX, "forget: %s", r.body);
	dd_resp_free(&r);
}

/* Reads from fd until a line containing needle arrives (or ms pass). */
static bool read_until(int fd, char *buf, size_t size, const char *needle, int ms)
{
	double end = dd_now_ms() + ms;
	size_t len = 0;

	buf[0] = '\0';
	while (dd_now_ms() < end && len + 1 < size) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, needle))
			return true;
	}
	return false;
}

Test(daemon_api, events_fan_out_to_every_reader)
{
	const char *req = "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n";
	char buf[3][16384], needle[64];
	struct kh_child client;
	int fds[3];

	world();
	/* The child first: forked after the streams, it would hold their
	 * sockets open and the daemon could never see the readers go. */
	kh_child_start(&client, true);
	for (int i = 0; i < 3; i++) {
		fds[i] = dd_connect();
		cr_assert_geq(fds[i], 0);
		cr_assert_eq(write(fds[i], req, strlen(req)), (ssize_t)strlen(req));
		cr_assert(read_until(fds[i], buf[i], sizeof(buf[i]), "\r\n\r\n", 3000),
			  "stream %d: no header", i);
		cr_assert(strstr(buf[i], "200 OK"), "%s", buf[i]);
	}
	cr_assert_eq(kh_child_connect(&client, kh_path("bridge.sock"), NULL, NULL), -EPERM);
	snprintf(needle, sizeof(needle), "\"pid\":%d,", (int)client.pid);
	for (int i = 0; i < 3; i++) {
		char *line, *end;
		json_t *ev;

		cr_assert(read_until(fds[i], buf[i], sizeof(buf[i]), needle, 5000),
			  "reader %d got no event: %s", i, buf[i]);
		line = strstr(buf[i], "{\"schema_version\"");
		cr_assert_not_null(line, "%s", buf[i]);
		end = strchr(line, '\n');
		cr_assert_not_null(end);
		kh_json_log_event(line, (size_t)(end - line));
		ev = json_loadb(line, (size_t)(end - line), 0, NULL);
		cr_assert_not_null(ev, "not JSON: %s", line);
		cr_expect_str_eq(json_string_value(json_object_get(ev, "worker_id")), DD_WORKER);
		cr_expect_str_eq(json_string_value(json_object_get(ev, "reason")), "deny-no-grant");
		cr_expect_str_eq(json_string_value(json_object_get(ev, "sandbox")), DD_SANDBOX);
		cr_expect_str_eq(json_string_value(json_object_get(ev, "path")),
				 kh_path("bridge.sock"));
		{
			long long t = json_integer_value(json_object_get(ev, "time_unix_ns"));
			long long now = (long long)time(NULL) * 1000000000LL;

			cr_expect(t > now - 60000000000LL && t < now + 60000000000LL,
				  "wall-clock time: %lld vs %lld", t, now);
			cr_expect_not_null(json_object_get(ev, "time"));
		}
		json_decref(ev);
		close(fds[i]);
	}

	/* Readers that went away are noticed (within a second) and freed. */
	{
		double end = dd_now_ms() + 4000;
		char last[128] = "";
		bool gone = false;

		while (!gone && dd_now_ms() < end) {
			struct dd_resp r = dd_req("GET", "/metrics", NULL);
			const char *p = r.body ? strstr(r.body, "\nexecgate_event_readers ") : NULL;

			gone = p && !strncmp(p, "\nexecgate_event_readers 0\n", 26);
			if (p)
				snprintf(last, sizeof(last), "%.40s", p + 1);
			dd_resp_free(&r);
			if (!gone)
				usleep(100000);
		}
		cr_expect(gone, "event readers still counted after their clients closed: %s", last);
	}
}

/* Reads fd until needle has streamed past (or ms pass); copies up to 200
 * bytes from the needle on into out. */
static bool stream_until(int fd, const char *needle, int ms, char *out, size_t size)
{
	static char buf[65536 + 256];
	double end = dd_now_ms() + ms;
	size_t keep = 0;

	while (dd_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		char *hit;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + keep, sizeof(buf) - 1 - keep);
		if (n <= 0)
			return false;
		keep += (size_t)n;
		buf[keep] = '\0';
		hit = strstr(buf, needle);
		if (hit && strchr(hit, '\n')) {
			snprintf(out, size, "%.*s", (int)(strchr(hit, '\n') - hit), hit);
			return true;
		}
		if (hit)
			continue; /* the rest of its line is on the way */
		/* Keep a tail that may hold the start of needle. */
		if (keep > 256) {
			memmove(buf, buf + keep - 256, 256);
			keep = 256;
		}
	}
	return false;
}

/* A reader that does not keep up loses the oldest lines, never the
 * daemon's memory: one gap line says how many it missed. */
Test(daemon_api, slow_event_reader_gets_a_gap_line)
{
	const char *req = "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n";
	struct kh_loop_result res;
	struct kh_loop loop;
	char head[4096], gap[256];
	double end;
	int fd;

	world();
	kh_loop_start(&loop, kh_path("bridge.sock"), 0.5, NULL, NULL);
	fd = dd_connect();
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	cr_assert(read_until(fd, head, sizeof(head), "\r\n\r\n", 3000), "no header");
	/* Denied connects, thousands of them, while the reader reads nothing.
	 * On a loaded host the ring buffer drops most of a burst before the
	 * daemon drains it (it counts them: ringbuf_dropped), so bursts go
	 * on until the daemon has read enough events to overrun the reader. */
	for (int round = 0; round < 10; round++) {
		if (round)
			kh_loop_start(&loop, kh_path("bridge.sock"), 0.5, NULL, NULL);
		kh_loop_go(&loop);
		res = kh_loop_wait(&loop);
		cr_log_info("round %d: denied connects: %lu", round, res.eperm);
		cr_assert_gt(res.eperm, 0, "no denied connect in round %d", round);
		end = dd_now_ms() + 2000;
		while (dd_metric("execgate_events_total ") < 2 * EGD_KEPT && dd_now_ms() < end)
			usleep(50000);
		if (dd_metric("execgate_events_total ") >= 2 * EGD_KEPT)
			break;
	}
	cr_assert_geq(dd_metric("execgate_events_total "), 2 * EGD_KEPT,
		      "events read from the ring buffer: %lld (dropped %lld)",
		      dd_metric("execgate_events_total "),
		      dd_metric("execgate_ringbuf_dropped_events_total "));
	cr_assert(
	    stream_until(fd, "{\"schema_version\":2,\"kind\":\"gap\"", 10000, gap, sizeof(gap)),
	    "no gap line");
	{
		json_t *o = json_loads(gap, 0, NULL);

		kh_json_log_event(gap, strcspn(gap, "\n"));
		cr_assert_not_null(o, "not JSON: %s", gap);
		cr_expect_str_eq(json_string_value(json_object_get(o, "worker_id")), DD_WORKER);
		cr_expect_gt(json_integer_value(json_object_get(o, "missed")), 0, "%s", gap);
		json_decref(o);
	}
	cr_expect_gt(dd_metric("execgate_event_stream_skipped_total "), 0);
	close(fd);
}

Test(daemon_api, status_and_metrics)
{
	char out[8192], file[256];
	struct dd_resp r;
	FILE *f;
	int rc;

	world();
	r = dd_req("GET", "/v1/status", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(json_is_true(json_object_get(r.json, "loaded")), "%s", r.body);
	cr_expect_eq(dd_int(&r, "schema_version"), 2, "%s", r.body);
	/* The tests attach to a scratch cgroup: status warns (200 still). */
	cr_expect(json_is_false(json_object_get(r.json, "attach_root")), "%s", r.body);
	cr_expect_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(r.json, "warnings"), 0), "code")),
			 "cgroup-not-root", "%s", r.body);
	cr_expect_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(r.json, "warnings"), 0), "cgroup")),
			 kh.cgroup, "%s", r.body);
	dd_resp_free(&r);
	cr_expect(dd_log_has("<4>execgated: cgroup-not-root: connect_unix is attached at cgroup "),
		  "the daemon warned at start-up");

	expect("check", "AAAA", "file.read", "deny", "malformed");
	r = dd_req("GET", "/metrics", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(strstr(r.head, "text/plain; version=0.0.4"), "%s", r.head);
	cr_expect(strstr(r.body, "execgate_admissions_total{op=\"check\",verdict=\"deny\","
				 "reason=\"malformed\"} 1"),
		  "%s", r.body);
	cr_expect(strstr(r.body, "execgate_ringbuf_dropped_events_total "), "%s", r.body);
	cr_expect(strstr(r.body, "execgate_map_entries{map=\"eg_records\"} 1"), "%s", r.body);
	cr_expect(strstr(r.body, "execgate_token_cache_misses_total "), "%s", r.body);
	cr_expect(strstr(r.body, "\nexecgate_streams_cut_total{kind=\"tcp\"} 0\n"), "%s", r.body);
	cr_expect(strstr(r.body, "\nexecgate_streams_would_cut_total 0\n"), "%s", r.body);
	cr_expect(strstr(r.body, "\nexecgate_streams_unreachable_total{kind=\"unix\"} 0\n"), "%s",
		  r.body);
	cr_expect(strstr(r.body, "execgate_admission_duration_seconds_bucket{op=\"check\","
				 "le=\"+Inf\"} 1"),
		  "%s", r.body);
	snprintf(file, sizeof(file), "%s/metrics.txt", kh.dir);
	f = fopen(file, "w");
	fwrite(r.body, 1, r.body_len, f);
	fclose(f);
	dd_resp_free(&r);
	rc = kh_run(out, sizeof(out), "sh", "-c", "promtool check metrics < \"$0\"", file, NULL);
	cr_expect_eq(rc, 0, "promtool check metrics: exit %d: %s", rc, out);

	/* The TCP tier's maps have their gauges too: a record with a
	 * ServicePort address (installed through the CLI, on the daemon's
	 * pins) is one entry in eg_inet_endpoints. */
	{
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)bridge.pid);
		rc = kh_cli(out, sizeof(out), "install", "--sandbox", DD_SANDBOX2, "--worker",
			    DD_WORKER, "--generation", "1", "--activation", "1", "--bridge-pid",
			    pid, "--service-addr", "10.0.8.2", "--service-port", "8080/tcp", NULL);
		cr_assert_eq(rc, 0, "execgate install --service-addr: %s", out);
	}
	r = dd_req("GET", "/metrics", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(strstr(r.body, "\nexecgate_map_entries{map=\"eg_inet_endpoints\"} 1\n"), "%s",
		  r.body);
	cr_expect(strstr(r.body, "\nexecgate_map_entries{map=\"eg_service_grants\"} 0\n"), "%s",
		  r.body);
	cr_expect(strstr(r.body, "\nexecgate_map_entries{map=\"eg_inet_netns\"} "), "%s", r.body);
	snprintf(out, sizeof(out), "\nexecgate_map_max_entries{map=\"eg_inet_endpoints\"} %u\n",
		 EG_MAX_INET_ENDPOINTS);
	cr_expect(strstr(r.body, out), "%s", r.body);
	snprintf(out, sizeof(out), "\nexecgate_map_max_entries{map=\"eg_service_grants\"} %u\n",
		 EG_MAX_SERVICE_GRANTS);
	cr_expect(strstr(r.body, out), "%s", r.body);
	snprintf(out, sizeof(out), "\nexecgate_map_max_entries{map=\"eg_inet_netns\"} %u\n",
		 EG_MAX_INET_NETNS);
	cr_expect(strstr(r.body, out), "%s", r.body);
	snprintf(out, sizeof(out), "\nexecgate_map_max_entries{map=\"eg_inet_tags\"} %u\n",
		 EG_MAX_INET_TAGS);
	cr_expect(strstr(r.body, out), "%s", r.body);
	f = fopen(file, "w");
	fwrite(r.body, 1, r.body_len, f);
	fclose(f);
	dd_resp_free(&r);
	rc = kh_run(out, sizeof(out), "sh", "-c", "promtool check metrics < \"$0\"", file, NULL);
	cr_expect_eq(rc, 0, "promtool check metrics (with the TCP maps): exit %d: %s", rc, out);
}

/* --- stream revocation over the API ---------------------------------------- */

/* The bridge: a child that joined the scratch cgroup, so the sockets it
 * makes are checked and tagged there. On each byte from the test it
 * connects one stream to path, hands the connected fd to the test
 * (SCM_RIGHTS) and closes its own copy: the test holds the connecting end,
 * which the revoker must find in a process outside the cgroup (a passed fd
 * is cut like any other, docs/operators.md §8). */
static void stream_bridge_main(int ctl, const char *path)
{
	char procs[600], cmd;
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
	f = fopen(procs, "w");
	if (!f || fputs("0", f) < 0 || fclose(f))
		_exit(3);
	while (read(ctl, &cmd, 1) == 1) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		char cbuf[CMSG_SPACE(sizeof(int))] = {0};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0), err = 0;
		struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
			err = errno;
		if (!err) {
			struct cmsghdr *c;

			m.msg_control = cbuf;
			m.msg_controllen = sizeof(cbuf);
			c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		if (sendmsg(ctl, &m, 0) < 0)
			_exit(4);
		close(fd);
	}
	_exit(0);
}

/* One stream from the bridge: the connecting end's fd in the test. */
static int bridge_stream(int ctl)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	int err = -1, fd = -1;
	struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;

	cr_assert_eq(write(ctl, "c", 1), 1);
	cr_assert_eq(recvmsg(ctl, &m, 0), (ssize_t)sizeof(err), "bridge gone");
	cr_assert_eq(err, 0, "bridge connect: %s", strerror(err));
	c = CMSG_FIRSTHDR(&m);
	cr_assert(c && c->cmsg_type == SCM_RIGHTS, "no fd passed");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Each end of a cut stream: EOF (or EPIPE where the LSM lease is loaded
 * too) on receive, EPIPE on send. */
static void expect_cut(int fd, const char *end)
{
	char b[8];
	ssize_t r, s;
	int recv_errno;

	do
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	while (r > 0); /* what the peer sent before the cut */
	recv_errno = r < 0 ? errno : 0;
	cr_expect(r == 0 || recv_errno == EPIPE, "%s: recv %zd (%s), want EOF", end, r,
		  strerror(recv_errno));
	s = send(fd, "x", 1, MSG_NOSIGNAL);
	cr_expect(s < 0 && errno == EPIPE, "%s: send %zd (%s), want EPIPE", end, s,
		  strerror(errno));
}

static void expect_alive(int conn, int acc)
{
	char b;

	cr_assert_eq(send(conn, "a", 1, MSG_NOSIGNAL), 1, "connecting end sends");
	cr_assert_eq(recv(acc, &b, 1, 0), 1, "accepted end receives");
	cr_assert_eq(send(acc, "b", 1, MSG_NOSIGNAL), 1, "accepted end sends");
	cr_assert_eq(recv(conn, &b, 1, 0), 1, "connecting end receives");
}

static struct dd_resp install_vmm(unsigned gen, pid_t bridge, const char *vmm)
{
	char body[1024];

	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%u,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vmm_pid\":%d,\"vmm_sockets\":[\"%s\"]}",
		 DD_WORKER, gen, (int)bridge, (int)getpid(), vmm);
	return dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX, body);
}

/* The "streams" member: every key of `execgate install/retire --json`, with
 * unix_cut and would_cut as expected, nothing unreachable, no error. */
static void expect_streams_audit(const struct dd_resp *r, long long unix_cut, long long would_cut,
				 bool cut_ran)
{
	json_t *s = json_object_get(r->json, "streams");
	const char *const keys[] = {
	    "unix_cut",	 "unix_unreachable", "tcp_cut",	   "tcp_unreachable",
	    "would_cut", "unix_method",	     "tcp_method", "error"};

	cr_assert(json_is_object(s), "no streams object: %s", r->body);
	cr_expect_eq(json_object_size(s), sizeof(keys) / sizeof(keys[0]), "%s", r->body);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_expect_not_null(json_object_get(s, keys[i]), "streams.%s: %s", keys[i], r->body);
	cr_expect_eq(json_integer_value(json_object_get(s, "unix_cut")), unix_cut, "%s", r->body);
	cr_expect_eq(json_integer_value(json_object_get(s, "would_cut")), would_cut, "%s", r->body);
	cr_expect_eq(json_integer_value(json_object_get(s, "unix_unreachable")), 0, "%s", r->body);
	cr_expect(json_is_null(json_object_get(s, "error")), "%s", r->body);
	if (cut_ran)
		cr_expect(json_is_string(json_object_get(s, "unix_method")), "%s", r->body);
	else
		cr_expect(json_is_null(json_object_get(s, "unix_method")), "%s", r->body);
}

static void expect_streams(const struct dd_resp *r, long long unix_cut, bool cut_ran)
{
	expect_streams_audit(r, unix_cut, 0, cut_ran);
}

/* PUT of a new generation and retire answer after the cut, say what they
 * cut (the CLI's keys), log it and count it in /metrics; both ends of a
 * real stream see EOF/EPIPE. */
Test(daemon_api, install_and_retire_report_the_streams_they_cut)
{
	const char *vmm = kh_path("vmm.sock");
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), sv[2], conn, acc;
	struct dd_resp r;
	pid_t bridge;

	signal(SIGPIPE, SIG_IGN);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s: %m", vmm);
	cr_assert_eq(listen(lfd, 8), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	bridge = fork();
	cr_assert_geq(bridge, 0);
	if (bridge == 0) {
		close(sv[0]);
		stream_bridge_main(sv[1], vmm);
	}
	close(sv[1]);
	kh_track(bridge);

	r = install_vmm(8, bridge, vmm);
	cr_assert_eq(r.status, 200, "install 8: %s", r.body);
	expect_streams(&r, 0, false); /* new: nothing to cut */
	dd_resp_free(&r);
	conn = bridge_stream(sv[0]);
	acc = accept(lfd, NULL, NULL);
	cr_assert_geq(acc, 0, "accept: %m");
	expect_alive(conn, acc);

	/* Generation 9 replaces 8: the epoch moves and the stream is cut. */
	r = install_vmm(9, bridge, vmm);
	cr_assert_eq(r.status, 200, "install 9: %s", r.body);
	cr_expect_str_eq(dd_str(&r, "outcome"), "replaced", "%s", r.body);
	expect_streams(&r, 1, true);
	dd_resp_free(&r);
	expect_cut(conn, "connecting end (held outside the cgroup)");
	expect_cut(acc, "accepted end");
	close(conn);
	close(acc);
	cr_expect(dd_log_has("install: sandbox=" DD_SANDBOX
			     " outcome=replaced generation=9 epoch=2 "
			     "streams_cut=1 streams_unreachable=0"),
		  "install logs the cut");

	/* A stream of the new epoch lives until retire cuts it. */
	conn = bridge_stream(sv[0]);
	acc = accept(lfd, NULL, NULL);
	cr_assert_geq(acc, 0, "accept: %m");
	expect_alive(conn, acc);
	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL);
	cr_assert_eq(r.status, 200, "retire: %s", r.body);
	expect_streams(&r, 1, true);
	dd_resp_free(&r);
	expect_cut(conn, "connecting end after retire");
	expect_cut(acc, "accepted end after retire");
	cr_expect(dd_log_has("retire: sandbox=" DD_SANDBOX " epoch=3 streams_cut=1"),
		  "retire logs it");

	/* Retiring again cuts nothing and says so. */
	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL);
	cr_assert_eq(r.status, 200, "retire again: %s", r.body);
	expect_streams(&r, 0, false);
	dd_resp_free(&r);

	cr_expect_eq(dd_metric("execgate_streams_cut_total{kind=\"unix\"}"
			       " "),
		     2);
	cr_expect_eq(dd_metric("execgate_streams_cut_total{kind=\"tcp\"}"
			       " "),
		     0);
	cr_expect_eq(dd_metric("execgate_streams_unreachable_total{kind=\"unix\"}"
			       " "),
		     0);
	close(conn);
	close(acc);
	close(sv[0]);
	close(lfd);
}

/* The audit twin of install_and_retire_report_the_streams_they_cut
 * (docs/design.md §19): with the sandbox in audit, generation 9 and retire
 * cut nothing, report the stream in would_cut, log it naming the sandbox
 * and count it in /metrics; the stream keeps carrying data both ways. */
Test(daemon_api, in_audit_install_and_retire_report_the_streams_they_would_cut)
{
	const char *vmm = kh_path("vmm.sock");
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), sv[2], conn, acc;
	struct dd_resp r;
	pid_t bridge;

	signal(SIGPIPE, SIG_IGN);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s: %m", vmm);
	cr_assert_eq(listen(lfd, 8), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	bridge = fork();
	cr_assert_geq(bridge, 0);
	if (bridge == 0) {
		close(sv[0]);
		stream_bridge_main(sv[1], vmm);
	}
	close(sv[1]);
	kh_track(bridge);

	r = dd_req("PUT", "/v1/mode", "{\"mode\":\"audit\"}");
	cr_assert_eq(r.status, 200, "PUT /v1/mode: %s", r.body);
	dd_resp_free(&r);
	r = install_vmm(8, bridge, vmm);
	cr_assert_eq(r.status, 200, "install 8: %s", r.body);
	dd_resp_free(&r);
	conn = bridge_stream(sv[0]);
	acc = accept(lfd, NULL, NULL);
	cr_assert_geq(acc, 0, "accept: %m");
	expect_alive(conn, acc);

	r = install_vmm(9, bridge, vmm);
	cr_assert_eq(r.status, 200, "install 9: %s", r.body);
	expect_streams_audit(&r, 0, 1, true);
	dd_resp_free(&r);
	expect_alive(conn, acc);
	cr_expect(dd_log_has("install: sandbox " DD_SANDBOX ": audit: would cut 1 stream(s) of a "
			     "replaced execution (reason deny-stream-epoch)"),
		  "install logs the stream it left, naming the sandbox");
	cr_expect(dd_log_has("install: sandbox=" DD_SANDBOX " outcome=replaced generation=9 "
			     "epoch=2 streams_cut=0 streams_unreachable=0 streams_would_cut=1"),
		  "and counts it");

	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX "/retire", NULL);
	cr_assert_eq(r.status, 200, "retire: %s", r.body);
	expect_streams_audit(&r, 0, 1, true);
	dd_resp_free(&r);
	expect_alive(conn, acc);
	cr_expect(dd_log_has("retire: sandbox " DD_SANDBOX ": audit: would cut 1 stream(s)"),
		  "retire logs it");

	cr_expect_eq(dd_metric("execgate_streams_would_cut_total "), 2);
	cr_expect_eq(dd_metric("execgate_streams_cut_total{kind=\"unix\"}"
			       " "),
		     0);
	close(conn);
	close(acc);
	close(sv[0]);
	close(lfd);
}
