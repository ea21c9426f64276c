// SPDX-License-Identifier: Apache-2.0
/* Audit mode on the TCP / ServicePort tier (docs/design.md, "Modes"): each
 * deny case of the four sock_addr hooks runs from one table, once per
 * mode, in a world of its own. Enforce: EPERM, counted under its reason, an
 * unmarked event. Audit: the connect or send goes through, counted as a
 * would-deny of (hook, reason) and not in eg_counters, and the event has
 * the same reason with the audit mark. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "harness.h"
#include "not_offered.h"
#include "tcp_env.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000d7"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"

static void setup(void)
{
	kh_setup_shared_requiring(NULL);
}

TestSuite(audit_tcp, .init = setup, .fini = kh_teardown, .timeout = 120);

static void install(void)
{
	char me[16], out[4096];
	int rc;

	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
		    "--generation", "7", "--activation", "1", "--bridge-pid", me, "--service-addr",
		    TE_GUEST_ADDR, "--service-addr", "::1", "--service-port", "7000/tcp",
		    "--service-port", "7001/udp", NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

enum act { CONNECT, SENDTO };

struct tcp_case {
	const char *name;
	enum act act;
	const char *addr;
	int port;
	bool udp, retire;
	__u32 hook, reason;
};

static const struct tcp_case tcp_cases[] = {
    {"connect4 no grant", CONNECT, TE_GUEST_ADDR, TE_TCP_PORT, false, false, EG_HOOK_CONNECT4,
     EG_K_DENY_NO_GRANT},
    {"connect6 no grant", CONNECT, "::1", TE_TCP_PORT, false, false, EG_HOOK_CONNECT6,
     EG_K_DENY_NO_GRANT},
    {"udp connect4 no grant", CONNECT, TE_GUEST_ADDR, TE_UDP_PORT, true, false, EG_HOOK_CONNECT4,
     EG_K_DENY_NO_GRANT},
    {"sendmsg4 no grant", SENDTO, TE_GUEST_ADDR, TE_UDP_PORT, true, false, EG_HOOK_SENDMSG4,
     EG_K_DENY_NO_GRANT},
    {"sendmsg6 no grant", SENDTO, "::1", TE_UDP_PORT, true, false, EG_HOOK_SENDMSG6,
     EG_K_DENY_NO_GRANT},
    {"connect4 retired", CONNECT, TE_GUEST_ADDR, TE_TCP_PORT, false, true, EG_HOOK_CONNECT4,
     EG_K_DENY_RETIRED},
};
#define N_TCP_CASES (sizeof(tcp_cases) / sizeof(tcp_cases[0]))

struct tcp_run {
	unsigned idx;
	bool audit;
};

ParameterizedTestParameters(audit_tcp, every_serviceport_deny_case_has_an_audit_twin)
{
	static struct tcp_run runs[2 * N_TCP_CASES];

	for (unsigned i = 0; i < N_TCP_CASES; i++) {
		runs[2 * i] = (struct tcp_run){i, false};
		runs[2 * i + 1] = (struct tcp_run){i, true};
	}
	return cr_make_param_array(struct tcp_run, runs, 2 * N_TCP_CASES);
}

/* guarantees: none */
ParameterizedTest(struct tcp_run *r, audit_tcp, every_serviceport_deny_case_has_an_audit_twin)
{
	const struct tcp_case *tc = &tcp_cases[r->idx];
	char out[8192];
	struct te_env e;
	int rc, plain, audit;

	if (!kh_tier_loaded("tcp"))
		kh_not_offered(KH_NEED_ANY, "tcp tier not loaded (no links/tcp_connect4)");
	te_start(&e);
	install();
	if (tc->retire) {
		rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL);
		cr_assert_eq(rc, 0, "retire: %s", out);
	}
	if (r->audit) {
		rc = kh_cli(out, sizeof(out), "mode", "audit", NULL);
		cr_assert_eq(rc, 0, "mode audit: %s", out);
	}
	rc = tc->act == CONNECT ? te_connect(&e, 1, tc->addr, tc->port, tc->udp)
				: te_sendto(&e, tc->addr, tc->port);
	kh_events_split((__u32)e.gateway, tc->reason, &plain, &audit);
	if (r->audit) {
		cr_assert_eq(rc, 0, "%s in audit: goes through (got %s)", tc->name, strerror(-rc));
		cr_assert_eq(kh_would_deny(tc->hook, tc->reason), 1, "%s: one would-deny",
			     tc->name);
		cr_assert_eq(kh_counter(tc->reason), 0, "%s: not counted as a denial", tc->name);
		cr_assert_eq(audit, 1, "%s: one audit event", tc->name);
		cr_assert_eq(plain, 0, "%s: no unmarked event", tc->name);
	} else {
		cr_assert_eq(rc, -EPERM, "%s in enforce: denied (got %s)", tc->name, strerror(-rc));
		cr_assert_eq(kh_counter(tc->reason), 1, "%s: one denial", tc->name);
		cr_assert_eq(kh_would_deny(tc->hook, tc->reason), 0, "%s: no would-deny", tc->name);
		cr_assert_eq(plain, 1, "%s: one denial event", tc->name);
		cr_assert_eq(audit, 0, "%s: no audit event", tc->name);
	}
}
