// SPDX-License-Identifier: Apache-2.0
/* The config key inet_tags sizes the tcp tier's tag map (eg_inet_tags) the
 * daemon's start-up load creates, as execgate load --inet-tags: a start
 * whose capacity differs from the pinned map's is refused with the reason
 * and leaves the pins alone, and after an unload the daemon creates the map
 * at the capacity asked for, which /metrics reports. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "abi/abi.h"

TestSuite(daemon_inet_tags, .init = dd_setup, .fini = dd_teardown, .timeout = 120);

static void expect_capacity(unsigned n)
{
	struct dd_resp r = dd_req("GET", "/metrics", NULL);
	char want[128];

	cr_assert_eq(r.status, 200, "%s", r.body);
	snprintf(want, sizeof(want), "\nexecgate_map_max_entries{map=\"eg_inet_tags\"} %u\n", n);
	cr_expect(strstr(r.body, want), "no %s in %s", want + 1, r.body);
	cr_expect(strstr(r.body, "\nexecgate_map_entries{map=\"eg_inet_tags\"} 0\n"), "%s", r.body);
	dd_resp_free(&r);
}

/* guarantees: none */
Test(daemon_inet_tags, the_config_sizes_the_tag_map_and_a_pinned_other_size_refuses_start)
{
	char out[8192];
	int rc;

	expect_capacity(EG_MAX_INET_TAGS);
	cr_assert_eq(dd_stop(SIGTERM), 0);

	snprintf(dd.extra, sizeof(dd.extra), "inet_tags = 16384\n");
	dd_write_config();
	rc = kh_run(out, sizeof(out), "timeout", "30", dd_bin(), "--config", dd.config, NULL);
	cr_assert_eq(rc, 1, "a start with another capacity than the pinned one: exit %d: %s", rc,
		     out);
	cr_assert(strstr(out, "inet tags 16384") && strstr(out, "holds 65536") &&
		      strstr(out, "execgate unload"),
		  "%s", out);

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "unload: %s", out);
	dd_start();
	expect_capacity(16384);

	snprintf(dd.extra, sizeof(dd.extra), "inet_tags = 100\n");
	dd_write_config();
	rc = kh_run(out, sizeof(out), "timeout", "30", dd_bin(), "--config", dd.config, NULL);
	cr_assert_eq(rc, 2, "inet_tags = 100: exit %d: %s", rc, out);
	cr_assert(strstr(out, "inet_tags"), "%s", out);
}
