// SPDX-License-Identifier: Apache-2.0
/* Audit mode on the cgroup tier (docs/design.md, "Modes: enforce and
 * audit"). Every deny case of the Unix connect hook runs from one table,
 * once per mode, each in a world of its own: in enforce the connect fails
 * with EPERM, is counted under its reason and reported by an unmarked
 * event; in audit the same connect succeeds, untagged, is counted as a
 * would-deny of (connect_unix, that reason) and not in eg_counters, and
 * its event carries the same reason with the audit mark. Then the
 * per-sandbox override both ways, `load --mode`, and a switch under a
 * connect storm. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/ids.h"
#include "execgate/admin.h"
#include "harness.h"
#include "not_offered.h"
#include "unix_world.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a7"

/* 240 s: load_sets_the_mode_... loads every tier three times, and a load
 * in the 6.12 VM under TCG takes tens of seconds (it timed out at 90 s). */
TestSuite(audit, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 240);

static void install_sb(pid_t bridge, pid_t vmm, const char *bsock, const char *vsock,
		       const char *gen)
{
	struct unix_world w = {.sandbox = SANDBOX, .bsock = bsock, .vsock = vsock, .fc = vmm};

	w.bridge.pid = bridge;
	uw_install(&w, gen);
}

static struct eg_exec_record record(void)
{
	struct unix_world w = {.sandbox = SANDBOX};

	return uw_record(&w);
}

static void mode(const char *m, const char *sandbox)
{
	uw_mode(m, sandbox);
}

static __u64 would_deny(__u32 hook, __u32 reason)
{
	return kh_would_deny(hook, reason);
}

struct ev_count {
	int plain, audit;
};

/* The events of the connect_unix hook: on the full tier, a connect audit
 * lets on also meets lsm/unix_stream_connect, which decides it again and
 * reports its own event (docs/design.md, "Modes"). */
static struct ev_count events(__u32 pid, __u32 reason)
{
	struct ev_count m;

	kh_events_split_hook(pid, reason, EG_HOOK_CONNECT_UNIX, &m.plain, &m.audit);
	return m;
}

/* --- the deny cases, one table for both modes ------------------------------ */

/* Each case's prepare() (unix_world.h) puts the sandbox into its denying
 * state and returns the path the caller then connects to. */
struct deny_case {
	const char *name;
	uw_prepare_fn prepare;
	__u32 reason;
	void (*done)(struct unix_world *w); /* after the connect, or NULL */
};

static const struct deny_case deny_cases[] = {
    {"not-bridge", uw_not_bridge, EG_K_DENY_NOT_BRIDGE, NULL},
    {"no-grant", uw_no_grant, EG_K_DENY_NO_GRANT, NULL},
    {"grant-epoch", uw_grant_epoch, EG_K_DENY_GRANT_EPOCH, NULL},
    {"grant-expired", uw_grant_expired, EG_K_DENY_GRANT_EXPIRED, NULL},
    {"retired", uw_retired, EG_K_DENY_RETIRED, NULL},
    {"no-record", uw_no_record, EG_K_DENY_NO_RECORD, NULL},
    {"inconsistent", uw_inconsistent, EG_K_DENY_INCONSISTENT, NULL},
    {"no-tag", uw_no_tag, EG_K_DENY_NO_TAG, uw_no_tag_done},
};
#define N_CASES (sizeof(deny_cases) / sizeof(deny_cases[0]))

struct run {
	unsigned idx;
	bool audit;
};

ParameterizedTestParameters(audit, every_deny_case_has_an_audit_twin)
{
	static struct run runs[2 * N_CASES];

	for (unsigned i = 0; i < N_CASES; i++) {
		runs[2 * i] = (struct run){i, false};
		runs[2 * i + 1] = (struct run){i, true};
	}
	return cr_make_param_array(struct run, runs, 2 * N_CASES);
}

/* guarantees: none */
ParameterizedTest(struct run *r, audit, every_deny_case_has_an_audit_twin)
{
	const struct deny_case *dc = &deny_cases[r->idx];
	struct unix_world w;
	struct ev_count ev;
	const char *path;
	bool tagged = true;
	int rc;

	uw_start(&w, SANDBOX);
	if (r->audit)
		mode("audit", NULL);
	path = dc->prepare(&w);

	rc = kh_child_connect(&w.caller, path, NULL, &tagged);
	if (dc->done)
		dc->done(&w);
	ev = events((__u32)w.caller.pid, dc->reason);
	if (r->audit) {
		cr_assert_eq(rc, 0, "%s in audit: the connect succeeds (got %s)", dc->name,
			     strerror(-rc));
		cr_assert(!tagged, "%s in audit: the socket audit let through has no tag",
			  dc->name);
		cr_assert_eq(would_deny(EG_HOOK_CONNECT_UNIX, dc->reason), 1, "%s: one would-deny",
			     dc->name);
		cr_assert_eq(kh_counter(dc->reason), 0, "%s: not counted as a denial", dc->name);
		cr_assert_eq(ev.audit, 1, "%s: one audit event with the reason", dc->name);
		cr_assert_eq(ev.plain, 0, "%s: no unmarked event", dc->name);
	} else {
		cr_assert_eq(rc, -EPERM, "%s in enforce: denied (got %s)", dc->name, strerror(-rc));
		cr_assert_eq(kh_counter(dc->reason), 1, "%s: one denial", dc->name);
		cr_assert_eq(would_deny(EG_HOOK_CONNECT_UNIX, dc->reason), 0, "%s: no would-deny",
			     dc->name);
		cr_assert_eq(ev.plain, 1, "%s: one denial event", dc->name);
		cr_assert_eq(ev.audit, 0, "%s: no audit event", dc->name);
	}
}

/* --- the per-sandbox mode --------------------------------------------------- */

/* guarantees: none */
Test(audit, the_sandbox_mode_overrides_the_global_one_both_ways)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("vmm.sock");
	struct kh_child bridge, caller;
	pid_t fc = kh_listener_start(vsock);
	char out[1024];
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&caller, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install_sb(bridge.pid, fc, bsock, vsock, "7");

	/* global audit, this sandbox enforced */
	mode("audit", NULL);
	mode("enforce", SANDBOX);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), -EPERM, "sandbox enforce wins");
	cr_assert_eq(record().mode, EG_MODE_ENFORCE);

	/* an install (a replacement) keeps the sandbox's mode */
	install_sb(bridge.pid, fc, bsock, vsock, "8");
	cr_assert_eq(record().mode, EG_MODE_ENFORCE, "a replacement keeps the mode");
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), -EPERM, "still enforced");

	/* global enforce, this sandbox audited */
	mode("enforce", NULL);
	mode("audit", SANDBOX);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), 0, "sandbox audit wins");

	/* inherit: back to the global mode */
	mode("inherit", SANDBOX);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), -EPERM, "global enforce");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 3);
	cr_assert_eq(would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE), 1);

	/* bad words and unknown sandboxes: usage (2) and not found (7) */
	rc = kh_cli(out, sizeof(out), "mode", "permissive", NULL);
	cr_assert_eq(rc, 2, "mode permissive: exit %d: %s", rc, out);
	rc = kh_cli(out, sizeof(out), "mode", "inherit", NULL);
	cr_assert_eq(rc, 2, "global inherit: exit %d: %s", rc, out);
	rc = kh_cli(out, sizeof(out), "mode", "audit", "--sandbox",
		    "5f0c2c1e-7a4b-4c1d-9e3f-0000000000ff", NULL);
	cr_assert_eq(rc, 7, "unknown sandbox: exit %d: %s", rc, out);
}

/* guarantees: none */
Test(audit, load_sets_the_mode_and_a_reload_without_it_enforces)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("vmm.sock");
	struct kh_child bridge, caller;
	pid_t fc = kh_listener_start(vsock);
	char out[8192];
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&caller, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install_sb(bridge.pid, fc, bsock, vsock, "7");

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--mode", "audit", NULL);
	cr_assert_eq(rc, 0, "load --mode audit: exit %d: %s", rc, out);
	cr_assert(strstr(out, "mode: global enforce -> audit"), "%s", out);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), 0, "audit after load");
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--mode", "monitor", NULL);
	cr_assert_eq(rc, 2, "load --mode monitor: exit %d: %s", rc, out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "load: exit %d: %s", rc, out);
	cr_assert(strstr(out, "mode: global audit -> enforce"), "%s", out);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), -EPERM, "enforce after reload");
	/* The switch line only where the mode changed or was given: a reload
	 * of an enforcing node without --mode switches nothing. */
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "load: exit %d: %s", rc, out);
	cr_assert_null(strstr(out, "mode: global"), "%s", out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--mode", "enforce", NULL);
	cr_assert_eq(rc, 0, "load --mode enforce: exit %d: %s", rc, out);
	cr_assert(strstr(out, "mode: global enforce -> enforce"), "%s", out);
	cr_assert_eq(kh_child_connect(&caller, vsock, NULL, NULL), -EPERM, "enforce, given");
}

/* --- the switch under a storm ----------------------------------------------- */

/* Two callers (both cores) connect to the VMM socket in a loop, which
 * audit allows and enforce denies. Audit is switched to enforce half-way.
 * Each hook decided every connect in exactly one mode: each allowed one is
 * a would-deny, each refused one a denial, nothing else; a second storm
 * that starts after the switch returned is refused every time.
 *
 * Where lsm/unix_stream_connect runs too (the full tier), it decides the
 * VMM connect again, after the path hook. A connect in flight across the
 * switch can pass the path hook in audit and be refused by the LSM hook in
 * enforce (docs/design.md, "Modes: enforce and audit"): refused, one
 * denial, and one would-deny of the path hook. Each caller connects one at
 * a time and the switch happens once, so there is at most one such connect
 * per storming caller, and none in the storm that starts after it. */
/* guarantees: none */
Test(audit, the_switch_to_enforce_under_a_connect_storm_never_mixes)
{
	const char *vsock = kh_path("vmm.sock");
	struct kh_loop a, b, after;
	struct kh_loop_result ra, rb, rafter;
	struct kh_child bridge;
	pid_t fc = kh_listener_start(vsock);
	struct timespec half = {.tv_sec = 1, .tv_nsec = 0};
	unsigned long ok, eperm, path_audits, straddled;
	char err[EG_ERR_MAX];
	int rc;

	kh_child_start(&bridge, true);
	kh_loop_start(&a, vsock, 3.0, NULL, NULL);
	kh_loop_start(&b, vsock, 3.0, NULL, NULL);
	install_sb(bridge.pid, fc, kh_path("bridge.sock"), vsock, "7");
	mode("audit", NULL);
	kh_loop_go(&a);
	kh_loop_go(&b);
	nanosleep(&half, NULL);
	/* the library's switch, in this process: an `execgate mode` process
	 * can take longer to start under TCG than the storm lasts */
	rc = eg_mode_set(kh.pin_dir, kh.state_dir, NULL, "enforce", "test_audit storm", NULL, err,
			 sizeof(err));
	cr_assert_eq(rc, 0, "eg_mode_set enforce: %s", err);
	kh_loop_start(&after, vsock, 0.5, NULL, NULL);
	kh_loop_go(&after);
	ra = kh_loop_wait(&a);
	rb = kh_loop_wait(&b);
	rafter = kh_loop_wait(&after);

	ok = ra.ok + rb.ok;
	eperm = ra.eperm + rb.eperm + rafter.eperm;
	cr_log_info("storm: %lu allowed in audit, %lu denied in enforce; after the switch %lu "
		    "denied, %lu allowed",
		    ok, eperm, rafter.eperm, rafter.ok);
	cr_assert_eq(ra.other + rb.other + rafter.other, 0, "unexpected errno");
	cr_assert_gt(ok, 0, "the storm ran in audit");
	cr_assert_gt(ra.eperm + rb.eperm, 0, "the storm ran on in enforce");
	cr_assert_eq(ra.tagged + rb.tagged, 0, "audit tagged nothing");
	cr_assert_eq(rafter.ok, 0, "a connect after the switch returned was let through");
	cr_assert_gt(rafter.eperm, 0, "the storm after the switch ran");
	path_audits = would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE);
	cr_assert_geq(path_audits, ok, "each allowed connect is a would-deny of the path hook");
	straddled = path_audits - ok;
	cr_log_info("storm: %lu connects passed the path hook in audit and the LSM hook in "
		    "enforce",
		    straddled);
	if (kh_promised(KH_NEED_LSM)) {
		cr_assert_eq(would_deny(EG_HOOK_LSM_UNIX_STREAM_CONNECT, EG_K_DENY_NOT_BRIDGE), ok,
			     "each allowed connect is exactly one would-deny of the LSM hook");
		cr_assert_leq(straddled, 2, "at most one connect per caller straddles the switch");
	} else {
		cr_assert_eq(straddled, 0, "each allowed connect is exactly one would-deny");
	}
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), eperm,
		     "each refused connect is exactly one denial");
}

/* --- status under audit ----------------------------------------------------- */

static int status(char *out, size_t size, const char *flag)
{
	return flag ? kh_cli(out, size, "status", flag, NULL) : kh_cli(out, size, "status", NULL);
}

/* guarantees: none */
Test(audit, status_never_reports_audit_as_held_and_require_enforce_fails)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("vmm.sock");
	static char out[65536];
	struct kh_child bridge;
	pid_t fc = kh_listener_start(vsock);
	int rc;

	kh_child_start(&bridge, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install_sb(bridge.pid, fc, bsock, vsock, "7");

	rc = status(out, sizeof(out), "--require-enforce");
	cr_assert_eq(rc, 0, "enforce: exit %d: %s", rc, out);
	cr_assert_not_null(strstr(out, "mode: enforce"), "%s", out);
	cr_assert_null(strstr(out, "audit (not enforced)"), "%s", out);
	cr_assert_not_null(strstr(out, "  held "), "something is held in enforce: %s", out);
	rc = status(out, sizeof(out), "--json");
	cr_assert_not_null(strstr(out, "\"held\":true"), "enforce, --json: %s", out);

	mode("audit", NULL);
	rc = status(out, sizeof(out), NULL);
	cr_assert_eq(rc, 0, "audit, plain status: exit %d: %s", rc, out);
	cr_assert_not_null(strstr(out, "audit (not enforced)"), "%s", out);
	cr_assert_null(strstr(out, "  held "), "a guarantee reads held under audit: %s", out);
	cr_assert_not_null(strstr(out, "tier cgroup: loaded, mode audit"), "%s", out);
	cr_assert_not_null(strstr(out, "sandboxes: 0 enforce, 1 audit"), "%s", out);
	rc = status(out, sizeof(out), "--require-enforce");
	cr_assert_eq(rc, 1, "audit, --require-enforce: exit %d: %s", rc, out);
	rc = status(out, sizeof(out), "--json");
	cr_assert_eq(rc, 0, "audit, --json: exit %d", rc);
	cr_assert_null(strstr(out, "\"held\":true"), "JSON holds a guarantee under audit: %s", out);
	cr_assert_not_null(strstr(out, "\"audit\":true"), "%s", out);

	/* global enforce, one sandbox in audit: still not enforced everywhere */
	mode("enforce", NULL);
	mode("audit", SANDBOX);
	rc = status(out, sizeof(out), "--require-enforce");
	cr_assert_eq(rc, 1, "a sandbox in audit, --require-enforce: exit %d: %s", rc, out);
	rc = status(out, sizeof(out), NULL);
	cr_assert_not_null(strstr(out, "audit (not enforced) for 1 sandbox;"), "%s", out);
	mode("inherit", SANDBOX);
	rc = status(out, sizeof(out), "--require-enforce");
	cr_assert_eq(rc, 0, "all enforced again: exit %d: %s", rc, out);
}
