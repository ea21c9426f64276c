// SPDX-License-Identifier: Apache-2.0
/* GET /v1/audit (docs/api.md): real connects that audit mode lets through,
 * read by the daemon's own events consumer, come back as exact rows (reason,
 * hook, sandbox, comm, executable, count) next to the kernel's would-deny
 * totals; ?since keeps only the rows seen within it; enforce-mode denials
 * are not in it; a bad since or an unknown parameter is a 400. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_audit_report, .init = dd_setup, .fini = dd_teardown, .timeout = 120);

/* The comm and executable of pid, as /proc has them now. */
static void proc_of(pid_t pid, char comm[32], char exe[4096])
{
	char path[64];
	FILE *f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert(fgets(comm, 32, f), "%s", path);
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, 4095);
	cr_assert_gt(n, 0, "%s", path);
	exe[n] = '\0';
}

static json_t *report(const char *query, struct dd_resp *r)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/audit%s", query);
	*r = dd_req("GET", path, NULL);
	cr_assert_eq(r->status, 200, "GET %s: %d %s", path, r->status, r->body);
	cr_assert(json_is_object(r->json), "GET %s: %s", path, r->body);
	return r->json;
}

static long long jint(json_t *o, const char *member)
{
	json_t *v = json_object_get(o, member);

	cr_assert(json_is_integer(v), "%s: not an integer", member);
	return json_integer_value(v);
}

static const char *jstr(json_t *o, const char *member)
{
	json_t *v = json_object_get(o, member);

	cr_assert(json_is_string(v), "%s: not a string", member);
	return json_string_value(v);
}

/* Waits (up to 5 s) until the report has read want audit events. */
static void wait_events(long long want)
{
	struct dd_resp r;
	long long got = -1;

	for (int i = 0; i < 100; i++) {
		got = jint(report("", &r), "audit_events");
		dd_resp_free(&r);
		if (got == want)
			return;
		usleep(50000);
	}
	cr_assert_fail("audit_events: %lld, want %lld", got, want);
}

static void assert_row(json_t *row, const char *sandbox, const char *comm, const char *exe,
		       long long count)
{
	cr_assert(json_is_object(row));
	cr_assert_str_eq(jstr(row, "reason"), "deny-no-grant");
	cr_assert_str_eq(jstr(row, "hook"), "connect_unix");
	cr_assert_str_eq(jstr(row, "sandbox"), sandbox);
	cr_assert_str_eq(jstr(row, "comm"), comm);
	cr_assert_str_eq(jstr(row, "exe"), exe);
	cr_assert_eq(jint(row, "count"), count);
	cr_assert_leq(strcmp(jstr(row, "first_seen"), jstr(row, "last_seen")), 0);
}

static void bad_query(const char *query, const char *needle)
{
	char path[128];
	struct dd_resp r;

	snprintf(path, sizeof(path), "/v1/audit%s", query);
	r = dd_req("GET", path, NULL);
	cr_assert_eq(r.status, 400, "GET %s: %d %s", path, r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "error"), "bad request", "%s", r.body);
	cr_assert(strstr(dd_str(&r, "reason"), needle), "GET %s: %s", path, r.body);
	dd_resp_free(&r);
}

/* guarantees: none */
Test(daemon_audit_report, rows_counts_since_and_bad_queries)
{
	const char *bsock = kh_path("bridge.sock"), *bsock2 = kh_path("bridge2.sock");
	struct kh_child bridge, bridge2, client;
	char comm[32], exe[4096];
	struct dd_resp r;
	json_t *doc, *rows, *wd;

	kh_child_start(&bridge, false);
	kh_child_start(&bridge2, false);
	kh_child_start(&client, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	cr_assert_eq(kh_child_listen(&bridge2, bsock2), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, bsock);
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	dd_resp_free(&r);
	r = dd_install(DD_SANDBOX2, 8, 1, bridge2.pid, bsock2);
	cr_assert_eq(r.status, 200, "install 2: %d %s", r.status, r.body);
	dd_resp_free(&r);
	proc_of(client.pid, comm, exe);

	/* enforce: the denial is an event, but not a would-deny */
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), -EPERM, "enforce");
	doc = report("", &r);
	cr_assert_str_eq(jstr(doc, "mode"), "enforce");
	cr_assert_str_eq(jstr(doc, "source"), "daemon");
	cr_assert_str_eq(jstr(doc, "worker_id"), DD_WORKER);
	cr_assert_eq(json_array_size(json_object_get(doc, "rows")), 0, "%s", r.body);
	cr_assert_eq(json_array_size(json_object_get(doc, "would_deny")), 0, "%s", r.body);
	cr_assert_eq(jint(doc, "rows_max"), 4096);
	dd_resp_free(&r);

	r = dd_req("PUT", "/v1/mode", "{\"mode\":\"audit\"}");
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
	dd_resp_free(&r);
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "audit 1");
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "audit 2");
	wait_events(2);

	doc = report("", &r);
	cr_assert_str_eq(jstr(doc, "mode"), "audit");
	rows = json_object_get(doc, "rows");
	cr_assert_eq(json_array_size(rows), 1, "%s", r.body);
	assert_row(json_array_get(rows, 0), DD_SANDBOX, comm, exe, 2);
	wd = json_object_get(doc, "would_deny");
	cr_assert_eq(json_array_size(wd), 1, "%s", r.body);
	cr_assert_str_eq(jstr(json_array_get(wd, 0), "reason"), "deny-no-grant");
	cr_assert_str_eq(jstr(json_array_get(wd, 0), "hook"), "connect_unix");
	cr_assert_eq(jint(json_array_get(wd, 0), "count"), 2);
	cr_assert_eq(jint(doc, "events_dropped"), 0);
	cr_assert_eq(jint(json_object_get(doc, "other"), "count"), 0);
	cr_assert(json_is_null(json_object_get(doc, "since")));
	dd_resp_free(&r);

	/* three seconds later, the other sandbox: ?since=2s keeps only it */
	sleep(3);
	cr_assert_eq(kh_child_connect(&client, bsock2, NULL, NULL), 0, "audit, sandbox 2");
	wait_events(3);
	doc = report("?since=2s", &r);
	cr_assert_str_eq(jstr(doc, "since"), "2s");
	rows = json_object_get(doc, "rows");
	cr_assert_eq(json_array_size(rows), 1, "%s", r.body);
	assert_row(json_array_get(rows, 0), DD_SANDBOX2, comm, exe, 1);
	cr_assert_eq(jint(json_array_get(json_object_get(doc, "would_deny"), 0), "count"), 3);
	dd_resp_free(&r);
	doc = report("?since=1h", &r);
	rows = json_object_get(doc, "rows");
	cr_assert_eq(json_array_size(rows), 2, "%s", r.body);
	assert_row(json_array_get(rows, 0), DD_SANDBOX, comm, exe, 2);
	assert_row(json_array_get(rows, 1), DD_SANDBOX2, comm, exe, 1);
	dd_resp_free(&r);

	/* sandbox 2 enforced again: its denial is no row and no count */
	r = dd_req("PUT", "/v1/mode", "{\"mode\":\"enforce\",\"sandbox\":\"" DD_SANDBOX2 "\"}");
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
	dd_resp_free(&r);
	cr_assert_eq(kh_child_connect(&client, bsock2, NULL, NULL), -EPERM, "sandbox 2 enforced");
	cr_assert_eq(kh_child_connect(&client, bsock, NULL, NULL), 0, "sandbox 1 still audit");
	wait_events(4);
	doc = report("", &r);
	rows = json_object_get(doc, "rows");
	cr_assert_eq(json_array_size(rows), 2, "%s", r.body);
	assert_row(json_array_get(rows, 0), DD_SANDBOX, comm, exe, 3);
	assert_row(json_array_get(rows, 1), DD_SANDBOX2, comm, exe, 1);
	dd_resp_free(&r);

	/* the CLI asks the daemon that serves its pin dir: the same rows, and
	 * the ring is not read behind the daemon's back */
	{
		static char out[65536];
		json_t *cli;
		int rc;

		rc = kh_cli(out, sizeof(out), "audit-report", "--socket", dd.socket, "--json",
			    "--since", "1h", NULL);
		cr_assert_eq(rc, 0, "audit-report: exit %d: %s", rc, out);
		cli = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
		cr_assert(json_is_object(cli), "%s", out);
		cr_assert_str_eq(jstr(cli, "source"), "daemon");
		rows = json_object_get(cli, "rows");
		cr_assert_eq(json_array_size(rows), 2, "%s", out);
		assert_row(json_array_get(rows, 0), DD_SANDBOX, comm, exe, 3);
		assert_row(json_array_get(rows, 1), DD_SANDBOX2, comm, exe, 1);
		json_decref(cli);
		rc = kh_cli(out, sizeof(out), "audit-report", "--socket", dd.socket, NULL);
		cr_assert_eq(rc, 0, "audit-report: exit %d: %s", rc, out);
		cr_assert(strstr(out, "audit report from daemon, worker " DD_WORKER ", mode audit"),
			  "%s", out);
		/* a socket given that answers for another pin dir: refused */
		rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "audit-report", "--socket",
			    dd.socket, "--pin-dir", "/sys/fs/bpf", "--state-dir", kh.state_dir,
			    NULL);
		cr_assert_eq(rc, 1, "another pin dir: exit %d: %s", rc, out);
		cr_assert(strstr(out, "serves another pin dir than /sys/fs/bpf"), "%s", out);
		/* the daemon's refusal is the one line and exit 1, in JSON too: the
		 * report path once took this 1 for a report (and crashed on it) */
		rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "audit-report", "--json",
			    "--socket", dd.socket, "--pin-dir", "/sys/fs/bpf", "--state-dir",
			    kh.state_dir, NULL);
		cr_assert_eq(rc, 1, "another pin dir, --json: exit %d: %s", rc, out);
		cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
		rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "audit-report", "--json",
			    "--socket", "/nonexistent/api.sock", "--state-dir", kh.state_dir, NULL);
		cr_assert_eq(rc, 1, "no daemon at --socket: exit %d: %s", rc, out);
		cr_assert_str_eq(out, "execgate: audit-report: execgated at /nonexistent/api.sock: "
				      "No such file or directory\n");
		wait_events(4);
	}

	bad_query("?since=abc", "since abc: not a duration");
	bad_query("?since=10", "since 10: not a duration");
	bad_query("?since=0s", "since 0s: not a duration");
	bad_query("?since=-1m", "since -1m: not a duration");
	bad_query("?since=1w", "since 1w: not a duration");
	bad_query("?since=1h30m", "since 1h30m: not a duration");
	bad_query("?since=99999999999999999999d", "not a duration");
	bad_query("?since=", "since : not a duration");
	bad_query("?sinc=1h", "query parameter sinc: unknown");

	kh_child_stop(&client);
	kh_child_stop(&bridge);
	kh_child_stop(&bridge2);
}
