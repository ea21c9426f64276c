// SPDX-License-Identifier: Apache-2.0
/* execgate audit-report without a daemon (docs/operators.md, "Rolling
 * enforcement out"): it reads the events pending in the ring itself. Real
 * connects that audit mode lets through come back as exact rows (reason,
 * hook, sandbox, comm, executable, count), an executable unknown when the
 * process is gone, next to the kernel's would-deny totals, which still
 * count what a second report no longer sees; the text form keeps a row
 * on one line whatever the caller's comm holds; a bad --since is a usage
 * error. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "harness.h"
#include "not_offered.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a8"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"

TestSuite(audit_report, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 90);

static char out[65536];

static json_t *report_json(void)
{
	json_t *doc;
	int rc;

	rc = kh_cli(out, sizeof(out), "audit-report", "--json", NULL);
	cr_assert_eq(rc, 0, "audit-report --json: exit %d: %s", rc, out);
	doc = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert(json_is_object(doc), "not JSON: %s", out);
	return doc;
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

/* The hooks that decide a connect to the bridge socket: connect_unix,
 * and on the full tier (6.12 VMs) lsm/unix_stream_connect as well, which
 * decides it again and reports its own would-deny (docs/design.md,
 * "Modes: enforce and audit"). */
static const char *const hooks[] = {"connect_unix", "lsm/unix_stream_connect"};

static size_t n_hooks(void)
{
	return kh_promised(KH_NEED_LSM) ? 2 : 1;
}

/* The row of hook for comm and exe (NULL: the executable unknown). */
static void assert_row(json_t *rows, const char *hook, const char *comm, const char *exe,
		       long long count)
{
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *row = json_array_get(rows, i), *e = json_object_get(row, "exe");

		cr_assert(json_is_object(row));
		if (strcmp(jstr(row, "hook"), hook) ||
		    (exe ? !json_is_string(e) || strcmp(json_string_value(e), exe)
			 : !json_is_null(e)))
			continue;
		cr_assert_str_eq(jstr(row, "reason"), "deny-no-grant");
		cr_assert_str_eq(jstr(row, "sandbox"), SANDBOX);
		cr_assert_str_eq(jstr(row, "comm"), comm);
		cr_assert_eq(jint(row, "count"), count, "%s %s", hook, exe ? exe : "(gone)");
		return;
	}
	cr_assert_fail("no row for hook %s, exe %s: %s", hook, exe ? exe : "(gone)", out);
}

static void assert_totals(json_t *doc, long long want)
{
	json_t *wd = json_object_get(doc, "would_deny");

	cr_assert_eq(json_array_size(wd), n_hooks(), "would_deny: %zu", json_array_size(wd));
	for (size_t h = 0; h < n_hooks(); h++) {
		bool seen = false;

		for (size_t i = 0; i < json_array_size(wd); i++) {
			json_t *t = json_array_get(wd, i);

			if (strcmp(jstr(t, "hook"), hooks[h]))
				continue;
			seen = true;
			cr_assert_str_eq(jstr(t, "reason"), "deny-no-grant");
			cr_assert_eq(jint(t, "count"), want, "%s", hooks[h]);
		}
		cr_assert(seen, "no would-deny total for %s", hooks[h]);
	}
}

/* A process in the cgroup named comm that connects to path, then waits
 * to be killed. */
static pid_t named_connect(const char *comm, const char *path)
{
	char procs[600], pid[32];
	int ready[2], rc = 1;
	pid_t p;

	cr_assert_eq(pipe(ready), 0);
	p = fork();
	cr_assert_geq(p, 0);
	if (!p) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		FILE *f;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
		snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		f = fopen(procs, "w");
		if (f && fputs(pid, f) >= 0 && !fclose(f)) {
			prctl(PR_SET_NAME, comm);
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
			fd = socket(AF_UNIX, SOCK_STREAM, 0);
			rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
		}
		if (write(ready[1], &rc, sizeof(rc)) != sizeof(rc))
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	cr_assert_eq(read(ready[0], &rc, sizeof(rc)), (ssize_t)sizeof(rc));
	close(ready[0]);
	kh.pids[kh.npids++] = p;
	cr_assert_eq(rc, 0, "connect as %s: errno %d", comm, rc);
	return p;
}

static void install_sb(pid_t bridge, const char *bsock)
{
	char b[16];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", "7", "--activation", "1", "--bridge-pid", b, "--bridge-socket",
		    bsock, NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

/* The comm and executable of pid, as /proc has them now. */
static void proc_of(pid_t pid, char comm[32], char exe[4096])
{
	char path[64];
	FILE *f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	cr_assert(f && fgets(comm, 32, f), "%s", path);
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, 4095);
	cr_assert_gt(n, 0, "%s", path);
	exe[n] = '\0';
}

/* guarantees: none */
Test(audit_report, rows_from_the_ring_exe_unknown_when_gone_and_text_one_line)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, caller, gone;
	char comm[32], exe[4096], line[8192];
	json_t *doc, *rows;
	pid_t odd;
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&caller, true);
	kh_child_start(&gone, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install_sb(bridge.pid, bsock);
	proc_of(caller.pid, comm, exe);

	/* enforce: no would-deny, no row */
	cr_assert_eq(kh_child_connect(&caller, bsock, NULL, NULL), -EPERM, "enforce");
	rc = kh_cli(out, sizeof(out), "mode", "audit", NULL);
	cr_assert_eq(rc, 0, "mode audit: exit %d: %s", rc, out);

	cr_assert_eq(kh_child_connect(&caller, bsock, NULL, NULL), 0, "audit 1");
	cr_assert_eq(kh_child_connect(&caller, bsock, NULL, NULL), 0, "audit 2");
	cr_assert_eq(kh_child_connect(&gone, bsock, NULL, NULL), 0, "audit, then gone");
	kh_child_stop(&gone);

	doc = report_json();
	cr_assert_str_eq(jstr(doc, "source"), "ring");
	cr_assert_str_eq(jstr(doc, "mode"), "audit");
	cr_assert_str_eq(jstr(doc, "pin_dir"), kh.pin_dir);
	cr_assert_eq(jint(doc, "audit_events"), 3 * (long long)n_hooks(), "%s", out);
	cr_assert_eq(jint(doc, "events_dropped"), 0);
	cr_assert_eq(jint(json_object_get(doc, "other"), "count"), 0);
	rows = json_object_get(doc, "rows");
	cr_assert_eq(json_array_size(rows), 2 * n_hooks(), "%s", out);
	for (size_t h = 0; h < n_hooks(); h++) {
		assert_row(rows, hooks[h], comm, exe, 2);
		assert_row(rows, hooks[h], comm, NULL, 1);
	}
	/* the busiest row first */
	cr_assert_eq(jint(json_array_get(rows, 0), "count"), 2, "%s", out);
	assert_totals(doc, 3);
	json_decref(doc);

	/* the ring was read: a second report has no rows, the kernel's
	 * totals still count them, so the gap shows */
	doc = report_json();
	cr_assert_eq(json_array_size(json_object_get(doc, "rows")), 0, "%s", out);
	cr_assert_eq(jint(doc, "audit_events"), 0);
	assert_totals(doc, 3);
	json_decref(doc);

	/* text: a comm with a space, a newline and an escape stays one line */
	odd = named_connect("a b\nc\x1b", bsock);
	rc = kh_cli(out, sizeof(out), "audit-report", "--since", "1h", NULL);
	cr_assert_eq(rc, 0, "audit-report: exit %d: %s", rc, out);
	snprintf(line, sizeof(line), "\n%-8s %-24s %-16s %-36s %-16s %s ", "1", "deny-no-grant",
		 "connect_unix", SANDBOX, "a\\x20b\\x0ac\\x1b", exe);
	cr_assert(strstr(out, line), "no row %s in:\n%s", line, out);
	cr_assert(strstr(out, "\nkernel would-deny totals since load (all events, seen or not):\n"
			      "4        deny-no-grant            connect_unix\n"),
		  "%s", out);
	if (n_hooks() == 2) {
		snprintf(line, sizeof(line), "\n%-8s %-24s %-16s %-36s %-16s %s ", "1",
			 "deny-no-grant", hooks[1], SANDBOX, "a\\x20b\\x0ac\\x1b", exe);
		cr_assert(strstr(out, line), "no row %s in:\n%s", line, out);
		cr_assert(
		    strstr(out, "\n4        deny-no-grant            lsm/unix_stream_connect\n"),
		    "%s", out);
	}
	snprintf(line, sizeof(line), "\naudit events read: %zu; events dropped, the ring full: 0\n",
		 n_hooks());
	cr_assert(strstr(out, line), "%s", out);
	cr_assert(strstr(out, "audit report from ring, worker "), "%s", out);
	kill(odd, SIGKILL);
	waitpid(odd, NULL, 0);

	/* bad --since: usage errors, exit 2, one line naming the value */
	rc = kh_cli(out, sizeof(out), "audit-report", "--since", "10", NULL);
	cr_assert_eq(rc, 2, "--since 10: exit %d: %s", rc, out);
	cr_assert(strstr(out, "--since 10: not a duration (e.g. 30s, 10m, 2h, 1d)"), "%s", out);
	rc = kh_cli(out, sizeof(out), "audit-report", "--since", "0m", NULL);
	cr_assert_eq(rc, 2, "--since 0m: exit %d: %s", rc, out);
	rc = kh_cli(out, sizeof(out), "audit-report", "--since", "2h30m", NULL);
	cr_assert_eq(rc, 2, "--since 2h30m: exit %d: %s", rc, out);

	kh_child_stop(&caller);
	kh_child_stop(&bridge);
}
