// SPDX-License-Identifier: Apache-2.0
/* GET /v1/live and GET /v1/ready, the DaemonSet's probes
 * (deploy/kubernetes/execgated.yaml): liveness answers while the process
 * serves, also after `execgate unload`; readiness answers 200 only while
 * the guarantees GET /v1/status reports cover every kind of endpoint_kinds,
 * else 503 naming the kinds and why, and follows an unload and a new load.
 * The host has no usable BPF LSM, so the default unix,vsock is not ready
 * here: the loud failure a 6.1 node without bpf in lsm= must give. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_health, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

/* Restarts the daemon with endpoint_kinds = kinds (NULL: the default). */
static void restart_with(const char *kinds)
{
	cr_assert_eq(dd_stop(SIGTERM), 0);
	if (kinds)
		snprintf(dd.extra, sizeof(dd.extra), "endpoint_kinds = %s\n", kinds);
	else
		dd.extra[0] = '\0';
	dd_start();
}

/* Whether GET /v1/status holds (or holds in audit) guarantee name. */
static bool status_holds(const char *name)
{
	struct dd_resp r = dd_req("GET", "/v1/status", NULL);
	json_t *g;
	size_t i;
	bool held = false, found = false;

	cr_assert_eq(r.status, 200, "%s", r.body);
	json_array_foreach(json_object_get(r.json, "guarantees"), i, g)
	{
		if (strcmp(json_string_value(json_object_get(g, "name")), name))
			continue;
		found = true;
		held = json_is_true(json_object_get(g, "held")) ||
		       json_is_true(json_object_get(g, "audit"));
	}
	dd_resp_free(&r);
	cr_assert(found, "GET /v1/status reports no guarantee %s", name);
	return held;
}

/* The "kinds" entry of r for kind. */
static json_t *kind_of(struct dd_resp *r, const char *kind)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(r->json, "kinds"), i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "kind")), kind))
			return e;
	}
	cr_assert_fail("GET /v1/ready: no kind %s in %s", kind, r->body);
	return NULL;
}

/* The JSON array a of strings as "a,b". */
static const char *joined(json_t *a)
{
	static char buf[64];
	size_t used = 0, i;
	json_t *s;

	buf[0] = '\0';
	json_array_foreach(a, i, s)
	{
		used += snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
				 json_string_value(s));
	}
	return buf;
}

/* guarantees: none */
Test(daemon_health, live_answers_while_unloaded)
{
	struct dd_resp r;
	char out[4096];
	int rc;

	r = dd_req("GET", "/v1/live", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(json_is_true(json_object_get(r.json, "live")), "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "worker_id"), DD_WORKER, "%s", r.body);
	cr_expect_eq(dd_int(&r, "schema_version"), 2, "%s", r.body);
	dd_resp_free(&r);

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "execgate unload: %s", out);
	/* The process serves: a kubelet must not restart it, which would
	 * load everything the operator just unloaded. */
	r = dd_req("GET", "/v1/live", NULL);
	cr_expect_eq(r.status, 200, "live after unload: %d %s", r.status, r.body);
	cr_expect(json_is_true(json_object_get(r.json, "live")), "%s", r.body);
	dd_resp_free(&r);
	r = dd_req("GET", "/v1/status", NULL);
	cr_expect_eq(r.status, 503, "status after unload: %d %s", r.status, r.body);
	dd_resp_free(&r);
}

/* guarantees: none */
Test(daemon_health, ready_follows_unload_and_load)
{
	struct dd_resp r;
	char out[4096];
	json_t *e;
	int rc;

	restart_with("unix");
	cr_assert(status_holds("unix-bridge-socket-grant") ||
		      status_holds("unix-path-machine-wide"),
		  "this test needs a kernel whose tiers enforce Unix endpoints");
	r = dd_req("GET", "/v1/ready", NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_expect(json_is_true(json_object_get(r.json, "ready")), "%s", r.body);
	cr_expect_str_eq(joined(json_object_get(r.json, "endpoint_kinds")), "unix", "%s", r.body);
	cr_expect_eq(json_array_size(json_object_get(r.json, "missing")), 0, "%s", r.body);
	e = kind_of(&r, "unix");
	cr_expect(json_is_true(json_object_get(e, "covered")), "%s", r.body);
	cr_expect(json_is_string(json_object_get(e, "guarantee")), "%s", r.body);
	cr_expect_eq(json_object_get(r.json, "error"), NULL, "%s", r.body);
	dd_resp_free(&r);

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "execgate unload: %s", out);
	r = dd_req("GET", "/v1/ready", NULL);
	cr_expect_eq(r.status, 503, "ready after unload: %d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not loaded", "%s", r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "nothing is loaded at"), "%s", r.body);
	cr_expect(json_is_false(json_object_get(r.json, "ready")), "%s", r.body);
	cr_expect_str_eq(joined(json_object_get(r.json, "missing")), "unix", "%s", r.body);
	dd_resp_free(&r);

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--require", "cgroup", NULL);
	cr_assert_eq(rc, 0, "execgate load: %s", out);
	r = dd_req("GET", "/v1/ready", NULL);
	cr_expect_eq(r.status, 200, "ready after a new load: %d %s", r.status, r.body);
	dd_resp_free(&r);
	dd.extra[0] = '\0';
}

/* guarantees: none */
Test(daemon_health, ready_names_the_kinds_not_enforced)
{
	static const struct {
		const char *kind, *g1, *g2;
	} kinds[] = {
	    /* in the order of the endpoint_kinds below */
	    {"tcp", "tcp-serviceport-profile", NULL},
	    {"vsock", "vsock-vmm-bridge-only", NULL},
	    {"unix", "unix-bridge-socket-grant", "unix-path-machine-wide"},
	};
	char want_missing[64] = "";
	struct dd_resp r;
	json_t *e;

	/* The default, unix,vsock: VSOCK needs the lsm tier, which this host
	 * refuses (BPF LSM programs get EPERM at load). */
	cr_assert(!status_holds("vsock-vmm-bridge-only"),
		  "this test needs a kernel without the lsm tier (the host), where VSOCK "
		  "endpoints go unenforced");
	r = dd_req("GET", "/v1/ready", NULL);
	cr_log_info("GET /v1/ready: %d %s", r.status, r.body);
	cr_assert_eq(r.status, 503, "default endpoint_kinds on a node without BPF LSM: %d %s",
		     r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not ready", "%s", r.body);
	cr_expect(json_is_false(json_object_get(r.json, "ready")), "%s", r.body);
	cr_expect_str_eq(joined(json_object_get(r.json, "endpoint_kinds")), "unix,vsock", "%s",
			 r.body);
	cr_expect_str_eq(joined(json_object_get(r.json, "missing")), "vsock", "%s", r.body);
	cr_expect(
	    strstr(dd_str(&r, "reason"), "not enforced: vsock (vsock: vsock-vmm-bridge-only: "),
	    "%s", r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "lsm"), "the reason names the tier: %s", r.body);
	dd_resp_free(&r);

	/* Every kind: each answer agrees with the guarantees status holds. */
	restart_with("tcp,vsock,unix");
	r = dd_req("GET", "/v1/ready", NULL);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		bool held = status_holds(kinds[i].g1) || (kinds[i].g2 && status_holds(kinds[i].g2));

		e = kind_of(&r, kinds[i].kind);
		cr_expect_eq(json_is_true(json_object_get(e, "covered")), held, "%s: %s",
			     kinds[i].kind, r.body);
		if (!held)
			snprintf(want_missing + strlen(want_missing),
				 sizeof(want_missing) - strlen(want_missing), "%s%s",
				 want_missing[0] ? "," : "", kinds[i].kind);
	}
	cr_expect_eq(r.status, want_missing[0] ? 503 : 200, "%s", r.body);
	cr_expect_str_eq(joined(json_object_get(r.json, "endpoint_kinds")), "tcp,vsock,unix", "%s",
			 r.body);
	/* missing in the order endpoint_kinds names them */
	cr_expect_str_eq(joined(json_object_get(r.json, "missing")), want_missing, "%s", r.body);
	dd_resp_free(&r);
	dd.extra[0] = '\0';
}

/* guarantees: none */
Test(daemon_health, endpoint_kinds_is_parsed_strictly)
{
	static const struct {
		const char *value, *why;
	} bad[] = {
	    {"unix,smtp", "endpoint_kinds = unix,smtp: smtp: not one of unix, vsock, tcp"},
	    {"unix,unix", "endpoint_kinds = unix,unix: unix: given twice"},
	    {"unix,", "endpoint_kinds = unix,: empty kind after a comma"},
	    {"unix vsock", "endpoint_kinds = unix vsock: unix vsock: not one of"},
	};
	char out[4096], want[256];
	int rc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(dd.extra, sizeof(dd.extra), "endpoint_kinds = %s\n", bad[i].value);
		dd_write_config();
		rc = kh_run(out, sizeof(out), dd_bin(), "--config", dd.config, "--check-config",
			    NULL);
		cr_expect_eq(rc, 2, "%s: exit %d: %s", bad[i].value, rc, out);
		snprintf(want, sizeof(want), "execgated: config %s:", dd.config);
		cr_expect(strstr(out, want) && strstr(out, bad[i].why), "%s: %s", bad[i].value,
			  out);
	}
	snprintf(dd.extra, sizeof(dd.extra), "endpoint_kinds = vsock,tcp\n");
	dd_write_config();
	rc = kh_run(out, sizeof(out), dd_bin(), "--config", dd.config, "--check-config", NULL);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "endpoint_kinds = vsock,tcp\n"), "%s", out);
	dd.extra[0] = '\0';
	dd_write_config();
	rc = kh_run(out, sizeof(out), dd_bin(), "--config", dd.config, "--check-config", NULL);
	cr_expect(strstr(out, "endpoint_kinds = unix,vsock\n"), "the default: %s", out);
}
