// SPDX-License-Identifier: Apache-2.0
/* execgate node-key init, the signed_verdict of check/admit --json, and
 * execgate verdict verify: exit 0 only for a valid signature, 4 for a
 * tampered, truncated, extended or other-key verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"

#define S	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c1"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"

TestSuite(cli_verdict, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 60);

/* The value of "signed_verdict" in a JSON line: base64url text or "". */
static void signed_verdict_of(const char *json, char *out, size_t size)
{
	const char *p = strstr(json, "\"signed_verdict\":");
	size_t n = 0;

	cr_assert_not_null(p, "no signed_verdict in %s", json);
	p += strlen("\"signed_verdict\":");
	if (*p == '"')
		for (p++; p[n] && p[n] != '"' && n + 1 < size; n++)
			out[n] = p[n];
	out[n] = '\0';
}

/* guarantees: none */
Test(cli_verdict, node_key_signs_refresh_and_verify_accepts_only_the_real_thing)
{
	char out[4096], pub[512], sv[512], bad[600], tok[512], issuer_pub[512], tid[4096];
	const char *bsock = kh_path("bridge.sock");
	pid_t bridge = kh_listener_start(bsock);
	char b[16];
	int rc;

	kh_keys();
	snprintf(b, sizeof(b), "%d", (int)bridge);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
		    "--generation", "8", "--activation", "1", "--bridge-pid", b, "--bridge-socket",
		    bsock, NULL);
	cr_assert_eq(rc, 0, "install: %s", out);

	/* Before a node key exists, verdicts are not signed. */
	kh_cap(tok, sizeof(tok), S, WORKER_A, 7, 1, 120, 0);
	rc = kh_cli(out, sizeof(out), "check", "--json", tok, NULL);
	cr_assert_eq(rc, 3, "refresh-route exits 3: %s", out);
	signed_verdict_of(out, sv, sizeof(sv));
	cr_assert_str_eq(sv, "", "unsigned without a node key: %s", out);

	rc = kh_cli(out, sizeof(out), "node-key", "init", "--worker-id", WORKER_A, NULL);
	cr_assert_eq(rc, 0, "node-key init: %s", out);
	cr_assert(strstr(out, "created"), "%s", out);
	snprintf(pub, sizeof(pub), "%s/node.pub", kh.state_dir);
	cr_assert(strstr(out, pub), "prints the public key path: %s", out);
	cr_assert_eq(access(pub, R_OK), 0);
	rc = kh_cli(out, sizeof(out), "node-key", "init", NULL);
	cr_assert_eq(rc, 0, "again: %s", out);
	cr_assert(strstr(out, "already present"), "%s", out);
	rc = kh_cli(out, sizeof(out), "node-key", "init", "--worker-id", S, NULL);
	cr_assert_eq(rc, 6, "another worker id: %s", out);

	rc = kh_cli(out, sizeof(out), "check", "--json", tok, NULL);
	cr_assert_eq(rc, 3, "%s", out);
	signed_verdict_of(out, sv, sizeof(sv));
	cr_assert_eq(strlen(sv), 198, "a 148-byte signed verdict: %s", out);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    pub, sv, NULL);
	cr_assert_eq(rc, 0, "valid: %s", out);
	cr_assert(strstr(out, "refresh-route: generation-retired"), "%s", out);
	cr_assert(strstr(out, "generation 8 activation 1"), "the installed identity: %s", out);
	cr_assert(strstr(out, WORKER_A), "the signing worker: %s", out);
	/* The token id as admit prints it (token.token_id): 32 hex digits,
	 * in the text and in the JSON form. */
	rc = kh_cli(tid, sizeof(tid), "check", "--json", tok, NULL);
	cr_assert_eq(rc, 3, "%s", tid);
	{
		const char *t = strstr(tid, "\"token_id\":\"");

		cr_assert_not_null(t, "%s", tid);
		snprintf(tid, sizeof(tid), "%.32s", t + strlen("\"token_id\":\""));
	}
	cr_assert_eq(strspn(tid, "0123456789abcdef"), 32, "%s", tid);
	cr_assert(strstr(out, tid), "token %s in: %s", tid, out);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    pub, "--json", sv, NULL);
	cr_assert_eq(rc, 0, "valid: %s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"valid\":true,\"verdict\":\"refresh-route\","
			      "\"reason\":\"generation-retired\","),
		  "%s", out);
	snprintf(bad, sizeof(bad), "\"token_id\":\"%.32s\",", tid);
	cr_assert(strstr(out, bad), "%s in: %s", bad, out);
	cr_assert(strstr(out, "\"record\":{\"generation\":8,\"activation\":1}"), "%s", out);
	snprintf(issuer_pub, sizeof(issuer_pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    issuer_pub, "--json", sv, NULL);
	cr_assert_eq(rc, 4, "another key: %s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"valid\":false}\n"), "%s", out);

	/* One character changed, cut short, one group more, another key. */
	snprintf(bad, sizeof(bad), "%s", sv);
	bad[100] = bad[100] == 'A' ? 'B' : 'A';
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    pub, bad, NULL);
	cr_assert_eq(rc, 4, "tampered: %s", out);
	snprintf(bad, sizeof(bad), "%.196s", sv);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    pub, bad, NULL);
	cr_assert_eq(rc, 4, "truncated: %s", out);
	cr_assert(strstr(out, "bad-length"), "%s", out);
	snprintf(bad, sizeof(bad), "%sAAAA", sv);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    pub, bad, NULL);
	cr_assert_eq(rc, 4, "trailing bytes: %s", out);
	snprintf(issuer_pub, sizeof(issuer_pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "verdict", "verify", "--node-key",
		    issuer_pub, sv, NULL);
	cr_assert_eq(rc, 4, "another key: %s", out);
	cr_assert(strstr(out, "wrong-key"), "%s", out);

	/* Allow is never signed. */
	kh_cap(tok, sizeof(tok), S, WORKER_A, 8, 1, 120, 0);
	rc = kh_cli(out, sizeof(out), "check", "--json", tok, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	signed_verdict_of(out, sv, sizeof(sv));
	cr_assert_str_eq(sv, "", "%s", out);
}
