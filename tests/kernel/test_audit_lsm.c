// SPDX-License-Identifier: Apache-2.0
/* Audit mode on the LSM tier (docs/design.md, "Modes: enforce and audit"):
 * the twins of the deny cases of test_lsm_vsock.c, test_lsm_inode.c,
 * test_lsm_listener.c and test_lsm_lease.c. Every case runs from one table,
 * once per mode, each in a world of its own. In enforce the connect or the
 * stream I/O fails with the errno its suite asserts (EPERM, EPIPE), is
 * counted under its reason in eg_counters and reported by unmarked events;
 * in audit the same calls succeed (a real round trip of data), eg_would_deny
 * counts them under (hook, that reason) by exactly as many calls, the deny
 * reason of eg_counters does not move, and the events carry the same reason
 * with the audit mark. Then the per-sandbox mode overriding the global one,
 * both ways, for a connect and for a stream lease.
 *
 * A Unix connect by the registered path passes two hooks: the path hook
 * (connect_unix on kernels with the cgroup tier, lsm/socket_connect
 * without) and lsm/unix_stream_connect. In enforce the first one's denial
 * ends the connect; in audit it lets the connect on, untagged, and the
 * second hook decides the same case again, so such a case counts one
 * would-deny in each hook (docs/design.md says so).
 *
 * The stream cases move the record's epoch (or retire it) by writing the
 * record, not through eg_install()/eg_retire(): those also run the
 * revokers, which shut the old streams down whatever the mode (test_revoke*
 * covers them); here only the lease hooks decide. VSOCK cases run only
 * inside the VM matrix (test_lsm_common.h), on CID 1. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "harness.h"
#include "loader/tiers/lsm_tier.h"
#include "loader/maps/maps.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(audit_lsm, .fini = fini);

/* The path hook of this kernel, for callers in the scratch cgroup. */
#define HOOK_PATH 0

static __u32 hook_of(__u32 h)
{
	if (h != HOOK_PATH)
		return h;
	return env.cgroup_tier ? EG_HOOK_CONNECT_UNIX : EG_HOOK_LSM_SOCKET_CONNECT;
}

/* The world every case starts from: sandbox S generation 7 attempt 1, its
 * VMM listening on a Unix path (or on CID 1:port), its bridge, and another
 * process; the bridge and the other process in the scratch cgroup. A
 * case's prepare() puts it into the denying state and names the caller,
 * its target and the process that accepts. */
struct world {
	struct agent *vmm, *bridge, *other;
	struct agent *caller, *listener;
	char path[256], alt[256];
	const char *target; /* Unix: what the caller connects to */
	unsigned port;	    /* VSOCK: CID 1:port */
	int ls;		    /* the listener's listening slot */
	int c, s;	    /* stream cases: the bridge's and the VMM's end */
};

enum kind {
	CONNECT_UNIX,
	CONNECT_VSOCK,
	STREAM,
};

struct lsm_case {
	const char *name;
	enum kind kind;
	void (*prepare)(struct world *w);
	__u32 reason;
	__u32 hook;	 /* connects: the hook that denies in enforce (or HOOK_PATH) */
	__u32 also_hook; /* audit only: the second hook that decides again, or 0 */
	bool no_room;	 /* connect with net.core.optmem_max 0: no room for the tag */
};

/* ---- prepare: one per deny case of the LSM suites ------------------------------ */

/* test_lsm_inode.c symlink_route_checked */
static void inode_symlink(struct world *w)
{
	lsm_env_path(&env, "alias.sock", w->alt, sizeof(w->alt));
	cr_assert_eq(symlink(w->path, w->alt), 0, "symlink: %s", strerror(errno));
	w->target = w->alt;
}

/* test_lsm_inode.c another_sandbox_cannot_take_a_socket_through_a_link */
static void inode_hard_link(struct world *w)
{
	lsm_env_path(&env, "hard.sock", w->alt, sizeof(w->alt));
	cr_assert_eq(link(w->path, w->alt), 0, "link: %s", strerror(errno));
	w->target = w->alt;
}

/* test_lsm_inode.c relative_path_route_checked */
static void inode_relative(struct world *w)
{
	cr_assert_eq(agent_chdir(w->other, env.dir), 0);
	w->target = "vmm.sock";
}

static void retire(void)
{
	struct eg_exec_record after;
	char err[256];

	cr_assert_eq(eg_retire(&env.rt, lsm_sandbox_s, &after, err, sizeof(err)), 0, "retire: %s",
		     err);
}

/* test_lsm_inode.c stale_inode_of_retired_sandbox_denies, through a link */
static void retired_by_link(struct world *w)
{
	inode_symlink(w);
	retire();
	w->caller = w->bridge;
}

/* the same, by the registered path */
static void retired_by_path(struct world *w)
{
	retire();
	w->caller = w->bridge;
}

/* test_lsm_lease.c activation_change_keeps_stream_refuses_old_open */
static void old_attempt_bridge(struct world *w)
{
	struct agent *bridge2 = agent_start(&env, true);

	lsm_install_unix(&env, 7, 2, bridge2, w->vmm, w->path, EG_INSTALLED_ACTIVATION);
	w->caller = w->bridge;
}

/* test_lsm_listener.c replacement_listener_denied (and
 * restarted_vmm_admitted_after_install before its install) */
static void listener_replaced(struct world *w)
{
	struct agent *impostor = agent_start(&env, false);

	agent_stop(w->vmm);
	w->ls = agent_listen_unix(impostor, w->path);
	cr_assert_geq(w->ls, 0, "impostor listen: %s", strerror(-w->ls));
	w->listener = impostor;
	w->caller = w->bridge;
}

/* test_lsm_listener.c listener_older_than_lsm_tier_fails_closed: the VMM
 * listens again (a new socket, a new inode) while no LSM tier runs. */
static void listener_unverifiable(struct world *w)
{
	struct eg_tier_ctx ctx = {.pin_dir = env.pin_dir, .cgroup_path = env.cgroup};
	char err[512];

	cr_assert_eq(eg_tier_lsm.unload(&ctx, err, sizeof(err)), 0, "%s", err);
	lsm_env_wait_listen_hook_gone(&env);
	w->ls = agent_listen_unix(w->vmm, w->path);
	cr_assert_geq(w->ls, 0, "listen: %s", strerror(-w->ls));
	cr_assert_eq(eg_tier_lsm.load(&ctx, err, sizeof(err)), 0, "%s", err);
	w->caller = w->bridge;
}

/* test_lsm_vsock.c registered_bridge_connects_other_denied */
static void vsock_other(struct world *w)
{
	(void)w;
}

/* test_lsm_vsock.c stale_bridge_denied_after_replacement */
static void vsock_stale_bridge(struct world *w)
{
	struct agent *bridge8 = agent_start(&env, false);

	lsm_env_install_vsock(&env, lsm_sandbox_s, 8, 1, bridge8, w->vmm, w->port,
			      EG_INSTALLED_REPLACED);
	w->caller = w->bridge;
}

/* test_lsm_vsock.c an_admitted_connect_that_cannot_be_tagged_is_denied */
static void vsock_bridge(struct world *w)
{
	w->caller = w->bridge;
}

/* An admitted stream, data both ways, in enforce. */
static void open_stream(struct world *w, bool vsock)
{
	char buf[64];

	w->c = vsock ? agent_connect_vsock(w->bridge, 1, w->port)
		     : agent_connect_unix(w->bridge, w->path);
	cr_assert_geq(w->c, 0, "bridge connect: %s", strerror(-w->c));
	w->s = agent_accept(w->vmm, w->ls);
	cr_assert_geq(w->s, 0, "accept: %s", strerror(-w->s));
	cr_assert_eq(agent_send(w->bridge, w->c, "ping"), 4);
	cr_assert_eq(agent_recv(w->vmm, w->s, buf, sizeof(buf)), 4);
	cr_assert_eq(agent_send(w->vmm, w->s, "pong"), 4);
	cr_assert_eq(agent_recv(w->bridge, w->c, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "pong");
}

/* The record as a replacement (epoch + 1) or a retire leaves it, written
 * without running the revokers (see the top of this file). */
static void move_record(bool retired)
{
	struct eg_exec_record r;

	cr_assert_eq(eg_record_read(&env.rt.maps, lsm_sandbox_s, &r), 0, "reading the record");
	if (retired)
		r.state = EG_RECORD_RETIRED;
	else
		r.epoch++;
	cr_assert_eq(eg_record_write(&env.rt.maps, &r), 0, "writing the record");
}

/* test_lsm_lease.c unix_stream_revoked_both_directions */
static void unix_stream_replaced(struct world *w)
{
	open_stream(w, false);
	move_record(false);
}

/* test_lsm_lease.c retire_revokes_stream */
static void unix_stream_retired(struct world *w)
{
	open_stream(w, false);
	move_record(true);
}

/* test_lsm_vsock.c stream_lease_revoked_on_replacement */
static void vsock_stream_replaced(struct world *w)
{
	open_stream(w, true);
	move_record(false);
}

static const struct lsm_case cases[] = {
    {"inode-symlink", CONNECT_UNIX, inode_symlink, EG_K_DENY_NOT_BRIDGE,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"inode-hard-link", CONNECT_UNIX, inode_hard_link, EG_K_DENY_NOT_BRIDGE,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"inode-relative", CONNECT_UNIX, inode_relative, EG_K_DENY_NOT_BRIDGE,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"retired-by-link", CONNECT_UNIX, retired_by_link, EG_K_DENY_RETIRED,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"retired-by-path", CONNECT_UNIX, retired_by_path, EG_K_DENY_RETIRED, HOOK_PATH,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, false},
    {"old-attempt-bridge", CONNECT_UNIX, old_attempt_bridge, EG_K_DENY_NOT_BRIDGE, HOOK_PATH,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, false},
    {"listener-replaced", CONNECT_UNIX, listener_replaced, EG_K_DENY_LISTENER,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"listener-unverifiable", CONNECT_UNIX, listener_unverifiable, EG_K_DENY_LISTENER,
     EG_HOOK_LSM_UNIX_STREAM_CONNECT, 0, false},
    {"vsock-other", CONNECT_VSOCK, vsock_other, EG_K_DENY_NOT_BRIDGE, EG_HOOK_LSM_SOCKET_CONNECT, 0,
     false},
    {"vsock-stale-bridge", CONNECT_VSOCK, vsock_stale_bridge, EG_K_DENY_NOT_BRIDGE,
     EG_HOOK_LSM_SOCKET_CONNECT, 0, false},
    {"vsock-no-tag", CONNECT_VSOCK, vsock_bridge, EG_K_DENY_NO_TAG, EG_HOOK_LSM_SOCKET_CONNECT, 0,
     true},
    {"unix-stream-replaced", STREAM, unix_stream_replaced, EG_K_DENY_STREAM_EPOCH, 0, 0, false},
    {"unix-stream-retired", STREAM, unix_stream_retired, EG_K_DENY_STREAM_EPOCH, 0, 0, false},
    {"vsock-stream-replaced", STREAM, vsock_stream_replaced, EG_K_DENY_STREAM_EPOCH, 0, 0, false},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static bool is_vsock(const struct lsm_case *lc)
{
	return lc->kind == CONNECT_VSOCK || lc->prepare == vsock_stream_replaced;
}

static void world_init(struct world *w, bool vsock)
{
	memset(w, 0, sizeof(*w));
	w->vmm = agent_start(&env, false);
	w->bridge = agent_start(&env, true);
	w->other = agent_start(&env, true);
	w->caller = w->other;
	w->listener = w->vmm;
	if (vsock) {
		w->port = lsm_env_vsock_port(0);
		w->ls = agent_listen_vsock(w->vmm, w->port);
		cr_assert_geq(w->ls, 0, "vsock listen on port %u: %s", w->port, strerror(-w->ls));
		lsm_env_install_vsock(&env, lsm_sandbox_s, 7, 1, w->bridge, w->vmm, w->port,
				      EG_INSTALLED_NEW);
		return;
	}
	lsm_env_path(&env, "vmm.sock", w->path, sizeof(w->path));
	w->ls = agent_listen_unix(w->vmm, w->path);
	cr_assert_geq(w->ls, 0, "listen %s: %s", w->path, strerror(-w->ls));
	lsm_install_unix(&env, 7, 1, w->bridge, w->vmm, w->path, EG_INSTALLED_NEW);
	w->target = w->path;
}

/* The denied connect; in audit, data both ways over what it opened. */
static void run_connect(const struct lsm_case *lc, struct world *w, bool audit)
{
	char buf[64];
	int rc, s, old = -1;

	if (lc->no_room)
		old = kh_vm_optmem_set(0);
	rc = lc->kind == CONNECT_VSOCK ? agent_connect_vsock(w->caller, 1, w->port)
				       : agent_connect_unix(w->caller, w->target);
	if (lc->no_room)
		kh_vm_optmem_set(old);
	if (!audit) {
		cr_assert_eq(rc, -EPERM, "%s in enforce: %d (%s)", lc->name, rc, strerror(-rc));
		return;
	}
	cr_assert_geq(rc, 0, "%s in audit: the connect succeeds (got %s)", lc->name, strerror(-rc));
	s = agent_accept(w->listener, w->ls);
	cr_assert_geq(s, 0, "%s in audit: accept: %s", lc->name, strerror(-s));
	cr_assert_eq(agent_send(w->caller, rc, "ping"), 4, "%s: send", lc->name);
	cr_assert_eq(agent_recv(w->listener, s, buf, sizeof(buf)), 4, "%s: recv", lc->name);
	cr_assert_str_eq(buf, "ping");
	cr_assert_eq(agent_send(w->listener, s, "pong"), 4, "%s: send back", lc->name);
	cr_assert_eq(agent_recv(w->caller, rc, buf, sizeof(buf)), 4, "%s: recv back", lc->name);
	cr_assert_str_eq(buf, "pong");
}

/* I/O on both ends of the stale stream, in one order for both modes: the
 * bridge sends, the VMM receives, the VMM sends, the bridge receives. */
static void run_stream(const struct lsm_case *lc, struct world *w, bool audit)
{
	char buf[64];
	int rc[4];

	rc[0] = agent_send(w->bridge, w->c, "ping");
	rc[1] = agent_recv(w->vmm, w->s, buf, sizeof(buf));
	if (audit)
		cr_assert_str_eq(buf, "ping", "%s in audit: the data gets through", lc->name);
	rc[2] = agent_send(w->vmm, w->s, "pong");
	rc[3] = agent_recv(w->bridge, w->c, buf, sizeof(buf));
	if (audit)
		cr_assert_str_eq(buf, "pong", "%s in audit: the data gets back", lc->name);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(rc[i], audit ? 4 : -EPIPE, "%s in %s, call %d: %d (%s)", lc->name,
			     audit ? "audit" : "enforce", i, rc[i],
			     strerror(rc[i] < 0 ? -rc[i] : 0));
}

/* One expected event: (pid, hook) with the case's reason. */
struct ev_want {
	__u32 pid, hook;
};

struct run {
	unsigned idx;
	bool audit;
};

ParameterizedTestParameters(audit_lsm, every_lsm_deny_case_has_an_audit_twin)
{
	static struct run runs[2 * N_CASES];

	for (unsigned i = 0; i < N_CASES; i++) {
		runs[2 * i] = (struct run){i, false};
		runs[2 * i + 1] = (struct run){i, true};
	}
	return cr_make_param_array(struct run, runs, 2 * N_CASES);
}

/* guarantees: none */
ParameterizedTest(struct run *r, audit_lsm, every_lsm_deny_case_has_an_audit_twin)
{
	const struct lsm_case *lc = &cases[r->idx];
	__u64 want[EG_HOOK_SLOTS] = {0}, wd0[EG_HOOK_SLOTS], deny0, calls;
	struct ev_want ev[2];
	size_t nev = 0;
	struct world w;

	lsm_env_init(&env);
	if (is_vsock(lc))
		eg_test_require_vm_vsock();
	world_init(&w, is_vsock(lc));
	lc->prepare(&w);
	if (r->audit)
		lsm_env_mode(&env, NULL, EG_MODE_AUDIT);

	if (lc->kind == STREAM) {
		want[EG_HOOK_LSM_SENDMSG] = want[EG_HOOK_LSM_RECVMSG] = 2;
		ev[nev++] = (struct ev_want){(__u32)w.bridge->pid, EG_HOOK_LSM_SENDMSG};
		ev[nev++] = (struct ev_want){(__u32)w.vmm->pid, EG_HOOK_LSM_RECVMSG};
		calls = 4;
	} else {
		want[hook_of(lc->hook)] = 1;
		ev[nev++] = (struct ev_want){(__u32)w.caller->pid, hook_of(lc->hook)};
		if (r->audit && lc->also_hook) {
			want[lc->also_hook] = 1;
			ev[nev++] = (struct ev_want){(__u32)w.caller->pid, lc->also_hook};
		}
		calls = 1;
	}
	for (__u32 h = 0; h < EG_HOOK_SLOTS; h++)
		wd0[h] = lsm_env_would_deny(&env, h, lc->reason);
	deny0 = lsm_env_counter(&env, lc->reason);

	if (lc->kind == STREAM)
		run_stream(lc, &w, r->audit);
	else
		run_connect(lc, &w, r->audit);

	cr_assert_eq(lsm_env_counter(&env, lc->reason), deny0 + (r->audit ? 0 : calls),
		     "%s in %s: eg_counters' deny reason", lc->name,
		     r->audit ? "audit" : "enforce");
	for (__u32 h = 0; h < EG_HOOK_SLOTS; h++)
		cr_assert_eq(lsm_env_would_deny(&env, h, lc->reason) - wd0[h],
			     r->audit ? want[h] : 0, "%s in %s: would-denies of hook %u", lc->name,
			     r->audit ? "audit" : "enforce", h);
	for (size_t i = 0; i < nev; i++) {
		cr_assert_eq(
		    lsm_env_count_events_marked(&env, ev[i].pid, lc->reason, ev[i].hook, r->audit),
		    1, "%s: one %s event of hook %u", lc->name, r->audit ? "audit" : "denial",
		    ev[i].hook);
		cr_assert_eq(
		    lsm_env_count_events_marked(&env, ev[i].pid, lc->reason, ev[i].hook, !r->audit),
		    0, "%s: no %s event of hook %u", lc->name, r->audit ? "unmarked" : "audit",
		    ev[i].hook);
	}
}

/* ---- the per-sandbox mode ------------------------------------------------------ */

/* Global audit with the sandbox enforced denies a connect by a link and
 * the I/O of a stale stream; global enforce with the sandbox audited lets
 * both through; back to inherit, the global enforce denies again. */
/* guarantees: none */
Test(audit_lsm, the_sandbox_mode_overrides_the_global_one_both_ways)
{
	struct world w;
	char buf[64];
	int rc, s;

	lsm_env_init(&env);
	world_init(&w, false);
	inode_symlink(&w);
	open_stream(&w, false);
	move_record(false);

	/* global audit, this sandbox enforced */
	lsm_env_mode(&env, NULL, EG_MODE_AUDIT);
	lsm_env_mode(&env, lsm_sandbox_s, EG_MODE_ENFORCE);
	rc = agent_connect_unix(w.other, w.alt);
	cr_assert_eq(rc, -EPERM, "sandbox enforce wins for a connect: %d (%s)", rc, strerror(-rc));
	rc = agent_send(w.bridge, w.c, "ping");
	cr_assert_eq(rc, -EPIPE, "sandbox enforce wins for a lease: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH), 1);
	cr_assert_eq(
	    lsm_env_would_deny(&env, EG_HOOK_LSM_UNIX_STREAM_CONNECT, EG_K_DENY_NOT_BRIDGE), 0);
	cr_assert_eq(lsm_env_would_deny(&env, EG_HOOK_LSM_SENDMSG, EG_K_DENY_STREAM_EPOCH), 0);

	/* global enforce, this sandbox audited */
	lsm_env_mode(&env, NULL, EG_MODE_ENFORCE);
	lsm_env_mode(&env, lsm_sandbox_s, EG_MODE_AUDIT);
	rc = agent_connect_unix(w.other, w.alt);
	cr_assert_geq(rc, 0, "sandbox audit wins for a connect: %s", strerror(-rc));
	s = agent_accept(w.vmm, w.ls);
	cr_assert_geq(s, 0, "accept: %s", strerror(-s));
	cr_assert_eq(agent_send(w.other, rc, "hi"), 2);
	cr_assert_eq(agent_recv(w.vmm, s, buf, sizeof(buf)), 2);
	rc = agent_send(w.bridge, w.c, "ping");
	cr_assert_eq(rc, 4, "sandbox audit wins for a lease: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(agent_recv(w.vmm, w.s, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "ping");
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), 1, "no new denial");
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH), 1, "no new denial");
	cr_assert_eq(
	    lsm_env_would_deny(&env, EG_HOOK_LSM_UNIX_STREAM_CONNECT, EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(lsm_env_would_deny(&env, EG_HOOK_LSM_SENDMSG, EG_K_DENY_STREAM_EPOCH), 1);
	cr_assert_eq(lsm_env_would_deny(&env, EG_HOOK_LSM_RECVMSG, EG_K_DENY_STREAM_EPOCH), 1);

	/* inherit: the global enforce again */
	lsm_env_mode(&env, lsm_sandbox_s, EG_MODE_INHERIT);
	rc = agent_connect_unix(w.other, w.alt);
	cr_assert_eq(rc, -EPERM, "global enforce: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(w.bridge, w.c, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "global enforce for a lease: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), 2);
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH), 2);
}
