// SPDX-License-Identifier: Apache-2.0
/* PUT /v1/mode and the install member "mode" (docs/design.md, "Modes"):
 * admin only, every bad body refused, the switch logged with who and
 * counted, and the kernel then lets through (audit) or refuses (enforce)
 * a real connect without a grant, as /metrics reports. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_mode, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

static bool metrics_has(const char *line)
{
	struct dd_resp r = dd_req("GET", "/metrics", NULL);
	bool has = r.status == 200 && r.body && strstr(r.body, line);

	cr_assert_eq(r.status, 200, "/metrics: %d", r.status);
	dd_resp_free(&r);
	return has;
}

static void put_mode(const char *body, int want, const char *what)
{
	struct dd_resp r = dd_req("PUT", "/v1/mode", body);

	cr_assert_eq(r.status, want, "%s: %s -> %d %s", what, body, r.status, r.body);
	dd_resp_free(&r);
}

/* guarantees: none */
Test(daemon_mode, put_mode_switches_logs_counts_and_the_kernel_follows)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, client;
	struct dd_resp r;
	char why[256] = "";
	int st;

	kh_child_start(&bridge, false);
	kh_child_start(&client, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, bsock);
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	dd_resp_free(&r);

	cr_assert(metrics_has("execgate_mode{mode=\"enforce\"} 1\n"));
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), -EPERM, "enforce, no grant");

	/* admit role: forbidden; bad bodies: 400; unknown sandbox: 404 */
	st = dd_req_as_member(65534, DD_ADMIT_GID, "PUT", "/v1/mode", "{\"mode\":\"audit\"}", why,
			      sizeof(why));
	cr_assert_eq(st, 403, "admit role: %d %s", st, why);
	put_mode("{\"mode\":\"permissive\"}", 400, "bad word");
	put_mode("{\"mode\":\"inherit\"}", 400, "global inherit");
	put_mode("{}", 400, "no mode");
	put_mode("{\"mode\":\"audit\",\"who\":\"me\"}", 400, "unknown field");
	put_mode("{\"mode\":\"audit\",\"sandbox\":\"nope\"}", 400, "bad uuid");
	put_mode("{\"mode\":\"audit\",\"sandbox\":\"" DD_SANDBOX2 "\"}", 404, "no record");
	cr_assert(metrics_has("execgate_mode{mode=\"enforce\"} 1\n"), "nothing switched yet");

	r = dd_req("PUT", "/v1/mode", "{\"mode\":\"audit\"}");
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "mode"), "audit");
	cr_assert_str_eq(dd_str(&r, "before"), "enforce");
	cr_assert_str_eq(dd_str(&r, "global"), "audit");
	dd_resp_free(&r);
	cr_assert(dd_log_has("mode: global enforce -> audit, by uid 0 pid "), "logged with who");
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "audit, no grant");
	cr_assert(metrics_has("execgate_mode{mode=\"audit\"} 1\n"));
	cr_assert(metrics_has("execgate_sandboxes_by_mode{mode=\"audit\"} 1\n"));
	cr_assert(metrics_has("execgate_would_deny_total{reason=\"deny-no-grant\","
			      "hook=\"connect_unix\"} 1\n"));
	cr_assert(metrics_has("execgate_mode_switches_total 1\n"));
	cr_assert(metrics_has("execgate_api_mode_switches_total{scope=\"global\"} 1\n"));

	/* this sandbox enforced again, the node still in audit */
	r = dd_req("PUT", "/v1/mode", "{\"mode\":\"enforce\",\"sandbox\":\"" DD_SANDBOX "\"}");
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "before"), "inherit");
	cr_assert_str_eq(dd_str(&r, "global"), "audit");
	dd_resp_free(&r);
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), -EPERM, "sandbox enforced");
	cr_assert(metrics_has("execgate_api_mode_switches_total{scope=\"sandbox\"} 1\n"));
	cr_assert(dd_log_has("mode: sandbox " DD_SANDBOX " inherit -> enforce, by uid 0 pid "));

	/* the install member: written with the record; a bad word is a 400
	 * that names it, and nothing is written */
	{
		char body[512];

		snprintf(body, sizeof(body),
			 "{\"worker\":\"" DD_WORKER "\",\"generation\":10,\"activation\":1,"
			 "\"bridge_pid\":%d,\"bridge_sockets\":[\"%s\"],\"mode\":\"maybe\"}",
			 (int)bridge.pid, bsock);
		r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX, body);
		cr_assert_eq(r.status, 400, "bad install mode: %d %s", r.status, r.body);
		cr_assert(strstr(r.body, "mode maybe"), "%s", r.body);
		dd_resp_free(&r);
		r = dd_req("GET", "/v1/sandboxes/" DD_SANDBOX, NULL);
		cr_assert(r.body && strstr(r.body, "\"generation\":8"), "nothing written: %s",
			  r.body);
		dd_resp_free(&r);
	}
	put_mode("{\"mode\":\"enforce\"}", 200, "global enforce");
	{
		char body[512];

		snprintf(body, sizeof(body),
			 "{\"worker\":\"" DD_WORKER "\",\"generation\":9,\"activation\":1,"
			 "\"bridge_pid\":%d,\"bridge_sockets\":[\"%s\"],\"mode\":\"audit\"}",
			 (int)bridge.pid, bsock);
		r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX, body);
		cr_assert_eq(r.status, 200, "install with mode: %d %s", r.status, r.body);
		dd_resp_free(&r);
	}
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "installed in audit");
	cr_assert(metrics_has("execgate_would_deny_total{reason=\"deny-no-grant\","
			      "hook=\"connect_unix\"} 2\n"));
}

/* How often needle is in the daemon's log (appended across starts). */
static int log_count(const char *needle)
{
	char *buf = calloc(1, 1 << 20);
	FILE *f = fopen(dd.log, "r");
	size_t n = 0;
	int count = 0;

	cr_assert_not_null(buf);
	if (f) {
		n = fread(buf, 1, (1 << 20) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	for (const char *p = buf; (p = strstr(p, needle)); p++)
		count++;
	free(buf);
	return count;
}

static void status_mode(char *global, size_t size, long long *switches, long long *audit)
{
	struct dd_resp r = dd_req("GET", "/v1/status", NULL);
	json_t *m = json_object_get(r.json, "mode");

	cr_assert_eq(r.status, 200, "status: %d %s", r.status, r.body);
	snprintf(global, size, "%s", json_string_value(json_object_get(m, "global")));
	*switches = json_integer_value(json_object_get(m, "switches"));
	*audit = json_integer_value(json_object_get(json_object_get(m, "sandboxes"), "audit"));
	dd_resp_free(&r);
}

/* The config's mode wins at every start (docs/operators.md, "Rolling
 * enforcement out"): a global audit switched over the API is put back to
 * enforce by a restart, loudly, and the kernel refuses again; a sandbox's
 * own audit mode is its record's and stays, named in a warning. With
 * mode = audit in the config the start sets audit, and a start that finds
 * the config's mode in place switches nothing. */
Test(daemon_mode, a_start_puts_the_configs_mode_back_and_says_so)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, client;
	struct dd_resp r;
	char global[16];
	long long switches, audit, before;

	kh_child_start(&bridge, false);
	kh_child_start(&client, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, bsock);
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	dd_resp_free(&r);
	cr_assert(dd_log_has("mode: global enforce (config)"), "the first start");

	put_mode("{\"mode\":\"audit\"}", 200, "global audit over the API");
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "audit, no grant");
	cr_assert_eq(dd_stop(SIGTERM), 0);
	dd_start();
	status_mode(global, sizeof(global), &switches, &audit);
	cr_assert_str_eq(global, "enforce", "the restart put the config's mode back");
	cr_assert_eq(audit, 0);
	cr_assert_eq(log_count("mode: global audit -> enforce at start: the config's mode = "
			       "enforce wins"),
		     1, "the reset is logged");
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), -EPERM, "enforce again");

	/* a sandbox's own audit stays, and is named */
	put_mode("{\"mode\":\"audit\",\"sandbox\":\"" DD_SANDBOX "\"}", 200, "sandbox audit");
	cr_assert_eq(dd_stop(SIGTERM), 0);
	dd_start();
	status_mode(global, sizeof(global), &switches, &audit);
	cr_assert_str_eq(global, "enforce");
	cr_assert_eq(audit, 1, "the sandbox's own audit mode stays");
	cr_assert_eq(log_count("mode: 1 sandbox(es) keep their own audit mode"), 1);
	cr_assert_eq(log_count("mode: global audit -> enforce at start"), 1, "no second reset");
	put_mode("{\"mode\":\"inherit\",\"sandbox\":\"" DD_SANDBOX "\"}", 200, "sandbox inherit");

	/* mode = audit in the config: the start sets it; the next start
	 * finds it in place and switches nothing */
	snprintf(dd.extra, sizeof(dd.extra), "mode = audit\n");
	cr_assert_eq(dd_stop(SIGTERM), 0);
	dd_start();
	status_mode(global, sizeof(global), &before, &audit);
	cr_assert_str_eq(global, "audit", "the config's audit");
	cr_assert_eq(log_count("mode: global enforce -> audit at start: the config's mode = audit "
			       "wins"),
		     1);
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "audit, no grant");
	cr_assert_eq(dd_stop(SIGTERM), 0);
	dd_start();
	status_mode(global, sizeof(global), &switches, &audit);
	cr_assert_str_eq(global, "audit");
	cr_assert_eq(switches, before, "a start in the config's mode is no switch");
	cr_assert(dd_log_has("mode: global audit (config)"));
	dd.extra[0] = '\0';
	kh_child_stop(&client);
	kh_child_stop(&bridge);
}
