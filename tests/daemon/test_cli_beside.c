// SPDX-License-Identifier: Apache-2.0
/* The CLI beside a serving execgated (user/execgate/daemon_ask.h): a user
 * of the admit group, who cannot read root's 0700 pins, is told that and
 * what the daemon answers, never "not loaded"; `execgate events` does not
 * take events from the daemon's ring unless forced. Real processes: the
 * CLI runs as uid 65534 with the admit group, by setuid. And a pin dir off
 * bpffs is the operator's mistake in the daemon's config too. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_cli_beside, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* execgate ARGS... --pin-dir P --state-dir S, as uid (0: as root) with
 * the admit group. */
static void run_as(struct kh_split *r, uid_t uid, const char *const *args)
{
	const char *argv[32];
	int n = 0;

	for (; *args && n < 27; args++)
		argv[n++] = *args;
	argv[n++] = "--pin-dir";
	argv[n++] = kh.pin_dir;
	argv[n++] = "--state-dir";
	argv[n++] = kh.state_dir;
	argv[n] = NULL;
	kh_cli_split(r, uid, DD_ADMIT_GID, argv);
}

#define RUN_AS(r, uid, ...) run_as((r), (uid), (const char *const[]){__VA_ARGS__, NULL})

Test(daemon_cli_beside, status_without_access_names_what_the_daemon_answers)
{
	static struct kh_split r;
	static char want[1024];
	struct dd_resp s;

	/* the same user gets 200 loaded from the API */
	cr_assert_eq(dd_req_as_member(65534, DD_ADMIT_GID, "GET", "/v1/status", NULL, NULL, 0),
		     200);
	s = dd_req("GET", "/v1/status", NULL);
	cr_assert_eq(s.status, 200, "%s", s.body);
	dd_resp_free(&s);

	RUN_AS(&r, 65534, "status", "--socket", dd.socket);
	snprintf(want, sizeof(want),
		 "execgate: status: permission denied on %s; the daemon at %s answers: loaded\n",
		 kh.pin_dir, dd.socket);
	cr_expect_eq(r.rc, 11, "status as uid 65534: exit %d: %s%s", r.rc, r.out, r.err);
	cr_expect_str_eq(r.err, want);
	cr_expect_null(strstr(r.out, "not loaded"), "%s", r.out);

	/* JSON asked: no document that says not loaded either */
	RUN_AS(&r, 65534, "status", "--json", "--socket", dd.socket);
	cr_expect_eq(r.rc, 11, "status --json: exit %d: %s%s", r.rc, r.out, r.err);
	cr_expect_str_eq(r.out, "");

	/* the read-only commands without --socket: the default socket's answer */
	RUN_AS(&r, 65534, "list");
	cr_expect_eq(r.rc, 11, "list: exit %d: %s%s", r.rc, r.out, r.err);
	snprintf(want, sizeof(want), "execgate: list: permission denied on %s; ", kh.pin_dir);
	cr_expect(strstr(r.err, want) == r.err, "%s", r.err);
	RUN_AS(&r, 65534, "show", "--sandbox", DD_SANDBOX);
	cr_expect_eq(r.rc, 11, "show: exit %d: %s%s", r.rc, r.out, r.err);
	RUN_AS(&r, 65534, "events", "--drain", "--socket", dd.socket);
	cr_expect_eq(r.rc, 11, "events: exit %d: %s%s", r.rc, r.out, r.err);
	cr_expect(strstr(r.err, "answers: loaded"), "%s", r.err);

	/* audit-report asks the daemon before the map it cannot open: the
	 * report, for this pin dir (issue 38 saw it fail on the map) */
	RUN_AS(&r, 65534, "audit-report", "--json", "--socket", dd.socket);
	cr_expect_eq(r.rc, 0, "audit-report: exit %d: %s%s", r.rc, r.out, r.err);
	snprintf(want, sizeof(want), "\"pin_dir\":\"%s\"", kh.pin_dir);
	cr_expect(strstr(r.out, want), "audit-report: no %s in %s", want, r.out);
	/* no daemon at the default socket: said, not a map error */
	RUN_AS(&r, 65534, "audit-report");
	cr_expect_eq(r.rc, 11, "audit-report, no daemon: exit %d: %s%s", r.rc, r.out, r.err);
	snprintf(want, sizeof(want), "execgate: audit-report: permission denied on %s; ",
		 kh.pin_dir);
	cr_expect(strstr(r.err, want) == r.err, "%s", r.err);

	/* root reads the pins: the report as before */
	RUN_AS(&r, 0, "status", "--socket", dd.socket);
	cr_expect_eq(r.rc, 0, "status as root: exit %d: %s", r.rc, r.err);
	cr_expect(strstr(r.out, ": loaded\n"), "%s", r.out);
}

Test(daemon_cli_beside, events_does_not_steal_from_the_daemon)
{
	static struct kh_split r;
	static char want[1024];

	RUN_AS(&r, 0, "events", "--drain", "--socket", dd.socket);
	snprintf(want, sizeof(want),
		 "execgate: events: execgated at %s reads the events of %s: a second reader "
		 "would take events from it; read its stream (curl --unix-socket %s "
		 "http://localhost/v1/events), or --force\n",
		 dd.socket, kh.pin_dir, dd.socket);
	cr_expect_eq(r.rc, 12, "events beside the daemon: exit %d: %s%s", r.rc, r.out, r.err);
	cr_expect_str_eq(r.err, want);
	RUN_AS(&r, 0, "events", "--drain", "--force", "--socket", dd.socket);
	cr_expect_eq(r.rc, 0, "events --force: exit %d: %s%s", r.rc, r.out, r.err);

	/* the daemon gone, the ring is free to read */
	cr_assert_eq(dd_stop(SIGTERM), 0);
	RUN_AS(&r, 0, "events", "--drain", "--socket", dd.socket);
	cr_expect_eq(r.rc, 0, "events without a daemon: exit %d: %s%s", r.rc, r.out, r.err);
}

/* The same mistake in the daemon's config: a pin_dir off bpffs is a
 * config error (exit 2, which the unit's RestartPreventExitStatus keeps
 * systemd from retrying), not "tier not offered" (5). */
Test(daemon_cli_beside, pin_dir_off_bpffs_is_a_config_error)
{
	char out[8192], saved[sizeof(kh.pin_dir)];
	int rc;

	cr_assert_eq(dd_stop(SIGTERM), 0);
	memcpy(saved, kh.pin_dir, sizeof(saved));
	cr_assert_lt(strlen(kh.dir) + 6, sizeof(kh.pin_dir));
	strcat(strcpy(kh.pin_dir, kh.dir), "/pins");
	dd_write_config();
	memcpy(kh.pin_dir, saved, sizeof(saved));
	rc = kh_run(out, sizeof(out), "timeout", "30", dd_bin(), "--config", dd.config, NULL);
	cr_expect_eq(rc, 2, "pin_dir off bpffs: exit %d: %s", rc, out);
	cr_expect(strstr(out, "is not on bpffs"), "%s", out);
}
