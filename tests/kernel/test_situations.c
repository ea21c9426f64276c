// SPDX-License-Identifier: Apache-2.0
/* One decision on every connect hook (bpf/execgate_connect.bpf.h): one
 * table of situations runs against each hook this kernel offers, and each
 * situation must give the same reason, the same counter, the same event
 * and the same audit behaviour whichever hook decides it:
 *
 *   unix-path   the registered path by its name: cgroup connect_unix, or
 *               LSM socket_connect on kernels without it (6.1)
 *   unix-inode  the same socket through a symbolic link, a name the path
 *               hook does not know: LSM unix_stream_connect, by inode
 *   inet        a guest ServicePort address: cgroup connect4
 *
 * A row a hook cannot see says why in the table (the why columns); the
 * table_is_complete test holds every row to one or the other. The VSOCK
 * hook takes the same decision, exercised by test_lsm_vsock.c and
 * test_revoke_vsock.c in the VM matrix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/endpoints/inet.h"
#include "loader/records/runtime.h"
#include "not_offered.h"
#include "tcp_env.h"
#include "unix_world.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000e7"

static void setup(void)
{
	kh_setup_shared_requiring(NULL);
}

TestSuite(situations, .init = setup, .fini = kh_teardown, .timeout = 120);

/* --- the inet world ----------------------------------------------------- */

/* tcp_env.h's gateway (in the scratch cgroup) and guest, the sandbox
 * installed at generation gen with TE_GUEST_ADDR's port 7000/tcp. */
static void inet_install(const char *gen)
{
	char me[16], out[4096];
	int rc;

	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", UW_WORKER,
		    "--generation", gen, "--activation", "1", "--bridge-pid", me, "--service-addr",
		    TE_GUEST_ADDR, "--service-port", "7000/tcp", NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

static struct eg_exec_record inet_record(void)
{
	struct unix_world w = {.sandbox = SANDBOX};

	return uw_record(&w);
}

static void inet_grant(struct te_env *e, const __u8 *sandbox, __u64 epoch, __u64 expiry)
{
	struct eg_exec_record r = inet_record();
	struct eg_service_grant g;

	memset(&g, 0, sizeof(g));
	g.key.proc = kh_proc_id(e->gateway);
	memcpy(g.key.sandbox, sandbox ? sandbox : r.sandbox, EG_ID_BYTES);
	g.key.port = TE_TCP_PORT;
	g.key.proto = 6;
	g.generation = r.generation;
	g.epoch = epoch;
	g.expiry_ns = expiry;
	cr_assert_eq(eg_service_grant_write(&kh.maps, &g), 0, "writing a ServicePort grant");
}

/* An inet situation puts the sandbox into its state and returns the
 * address the gateway then connects to (port TE_TCP_PORT). */
typedef const char *(*inet_prepare_fn)(struct te_env *e);

static const char *in_unregistered(struct te_env *e)
{
	(void)e;
	return TE_OTHER_ADDR;
}

static const char *in_no_grant(struct te_env *e)
{
	(void)e;
	return TE_GUEST_ADDR;
}

static const char *in_granted(struct te_env *e)
{
	inet_grant(e, NULL, inet_record().epoch, eg_boottime_ns() + UW_ALIVE_NS);
	return TE_GUEST_ADDR;
}

static const char *in_grant_other(struct te_env *e)
{
	__u8 other[EG_ID_BYTES];

	memcpy(other, inet_record().sandbox, EG_ID_BYTES);
	other[EG_ID_BYTES - 1] ^= 0x5a;
	inet_grant(e, other, inet_record().epoch, eg_boottime_ns() + UW_ALIVE_NS);
	return TE_GUEST_ADDR;
}

static const char *in_grant_epoch(struct te_env *e)
{
	inet_install("8"); /* epoch 2 */
	inet_grant(e, NULL, inet_record().epoch - 1, eg_boottime_ns() + UW_ALIVE_NS);
	return TE_GUEST_ADDR;
}

static const char *in_grant_expired(struct te_env *e)
{
	inet_grant(e, NULL, inet_record().epoch, eg_boottime_ns() - UW_EXPIRED_AGO_NS);
	return TE_GUEST_ADDR;
}

static const char *in_retired(struct te_env *e)
{
	char out[1024];

	(void)e;
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL), 0, "%s", out);
	return TE_GUEST_ADDR;
}

static const char *in_no_record(struct te_env *e)
{
	__u8 sb[EG_ID_BYTES];

	(void)e;
	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_RECORDS], sb), 0);
	return TE_GUEST_ADDR;
}

static const char *in_inconsistent(struct te_env *e)
{
	struct eg_inet_key key;
	struct eg_endpoint ep;

	(void)e;
	cr_assert_eq(eg_inet_key_parse(TE_GUEST_ADDR, &key), 0);
	cr_assert_eq(eg_endpoint_read(&kh.maps, EG_MAP_INET_ENDPOINTS, &key, &ep), 0);
	ep.role = 99;
	cr_assert_eq(eg_endpoint_write(&kh.maps, EG_MAP_INET_ENDPOINTS, &key, &ep), 0);
	return TE_GUEST_ADDR;
}

/* --- the Unix situations this file adds to unix_world.h's ----------------- */

static const char *uw_unregistered(struct unix_world *w)
{
	const char *path = kh_path("elsewhere.sock");

	(void)w;
	kh_listener_start(path);
	return path;
}

static const char *uw_vmm_socket(struct unix_world *w)
{
	return w->vsock;
}

/* --- the table ------------------------------------------------------------ */

enum who {
	CALLER,	     /* a process in the cgroup, neither bridge nor VMM */
	BRIDGE,	     /* the record's bridge */
	CALLER_EXEC, /* the caller, after exec() into another binary */
};

struct situation {
	const char *name;
	__u32 reason; /* what every hook that sees it must give */
	enum who who;
	bool audit; /* the sandbox's own mode is audit */
	uw_prepare_fn unix_prep;
	const char *unix_why; /* unix_prep NULL: why no Unix hook sees it */
	inet_prepare_fn inet_prep;
	const char *inet_why;
	void (*unix_done)(struct unix_world *w);
};

#define NOT_BY_TEST                                                                                \
	"a task whose identity eg_current_proc() cannot read (no mm or no exe file: a kernel "     \
	"thread) never calls connect() from a test; eg_connect_decide() puts it after the "        \
	"record, step 4"
#define NO_VMM_ROLE "a guest address has one role, ServicePort: there is no VMM socket"

static const struct situation table[] = {
    {"unregistered", EG_K_ALLOW_UNREGISTERED, CALLER, false, uw_unregistered, NULL, in_unregistered,
     NULL, NULL},
    {"bridge-at-vmm-socket", EG_K_ALLOW_BRIDGE, BRIDGE, false, uw_vmm_socket, NULL, NULL,
     NO_VMM_ROLE, NULL},
    {"granted", EG_K_ALLOW_GRANT, CALLER, false, uw_granted, NULL, in_granted, NULL, NULL},
    {"not-bridge", EG_K_DENY_NOT_BRIDGE, CALLER, false, uw_not_bridge, NULL, NULL, NO_VMM_ROLE,
     NULL},
    {"no-grant", EG_K_DENY_NO_GRANT, CALLER, false, uw_no_grant, NULL, in_no_grant, NULL, NULL},
    {"grant-of-another-sandbox", EG_K_DENY_NO_GRANT, CALLER, false, uw_grant_other, NULL,
     in_grant_other, NULL, NULL},
    {"stale-epoch", EG_K_DENY_GRANT_EPOCH, CALLER, false, uw_grant_epoch, NULL, in_grant_epoch,
     NULL, NULL},
    {"expired-grant", EG_K_DENY_GRANT_EXPIRED, CALLER, false, uw_grant_expired, NULL,
     in_grant_expired, NULL, NULL},
    {"retired", EG_K_DENY_RETIRED, CALLER, false, uw_retired, NULL, in_retired, NULL, NULL},
    {"no-record", EG_K_DENY_NO_RECORD, CALLER, false, uw_no_record, NULL, in_no_record, NULL, NULL},
    {"inconsistent", EG_K_DENY_INCONSISTENT, CALLER, false, uw_inconsistent, NULL, in_inconsistent,
     NULL, NULL},
    {"wrong-executable", EG_K_DENY_NO_GRANT, CALLER_EXEC, false, uw_granted, NULL, NULL,
     "tcp_env.h's gateway cannot exec() and keep serving the test; the grant's key is the same "
     "eg_proc_id (executable inode included) as the Unix column's",
     NULL},
    {"unknown-caller", EG_K_DENY_NO_TASK, CALLER, false, NULL, NOT_BY_TEST, NULL, NOT_BY_TEST,
     NULL},
    {"no-tag", EG_K_DENY_NO_TAG, CALLER, false, uw_no_tag, NULL, NULL,
     "the inet tag is an entry of the preallocated eg_inet_tags, full only when the map is: "
     "test_map_fill.c",
     uw_no_tag_done},
    {"audit-no-grant", EG_K_DENY_NO_GRANT, CALLER, true, uw_no_grant, NULL, in_no_grant, NULL,
     NULL},
    {"audit-retired", EG_K_DENY_RETIRED, CALLER, true, uw_retired, NULL, in_retired, NULL, NULL},
    {"audit-not-bridge", EG_K_DENY_NOT_BRIDGE, CALLER, true, uw_not_bridge, NULL, NULL, NO_VMM_ROLE,
     NULL},
};
#define N_ROWS (sizeof(table) / sizeof(table[0]))

/* guarantees: none */
Test(situations, table_is_complete)
{
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct situation *s = &table[i];

		cr_assert(!s->unix_prep != !s->unix_why, "%s: a Unix prepare or a why, not both",
			  s->name);
		cr_assert(!s->inet_prep != !s->inet_why, "%s: an inet prepare or a why, not both",
			  s->name);
		cr_assert(!s->audit || (s->reason > EG_K_ALLOW_GRANT), "%s: audit of an allow",
			  s->name);
	}
}

static bool allows(__u32 reason)
{
	return reason <= EG_K_ALLOW_GRANT;
}

/* The row's outcome as hook saw it, given rc (the connect's) and the
 * counters from before it. pid: whose events. */
static void assert_outcome(const struct situation *s, __u32 hook, int rc, __u64 counted0,
			   __u64 would0, __u32 pid)
{
	__u64 counted = kh_counter(s->reason) - counted0;
	__u64 would = kh_would_deny(hook, s->reason) - would0;
	int plain = 0, audit = 0;

	if (allows(s->reason)) {
		cr_assert_eq(rc, 0, "%s: allowed (got %s)", s->name, strerror(-rc));
		cr_assert_eq(counted, 1, "%s: counted once under its reason (%llu)", s->name,
			     (unsigned long long)counted);
		return;
	}
	kh_events_split_hook(pid, s->reason, hook, &plain, &audit);
	if (s->audit) {
		cr_assert_eq(rc, 0, "%s in audit: goes through (got %s)", s->name, strerror(-rc));
		cr_assert_eq(counted, 0, "%s in audit: not counted as a denial", s->name);
		cr_assert_eq(would, 1, "%s: one would-deny of hook %u", s->name, hook);
		cr_assert_eq(audit, 1, "%s: one audit event of hook %u", s->name, hook);
		cr_assert_eq(plain, 0, "%s: no unmarked event", s->name);
	} else {
		cr_assert_eq(rc, -EPERM, "%s: denied (got %s)", s->name, strerror(-rc));
		cr_assert_eq(counted, 1, "%s: counted once under its reason (%llu)", s->name,
			     (unsigned long long)counted);
		cr_assert_eq(would, 0, "%s: no would-deny", s->name);
		cr_assert_eq(plain, 1, "%s: one denial event of hook %u", s->name, hook);
		cr_assert_eq(audit, 0, "%s: no audit event", s->name);
	}
}

/* One row on a Unix hook: by the path's name, or through a link. */
static void unix_row(const struct situation *s, bool by_link, __u32 hook)
{
	struct unix_world w;
	struct kh_child *who;
	const char *path;
	__u64 counted0, would0;
	int rc;

	uw_start(&w, SANDBOX);
	if (s->audit)
		uw_mode("audit", SANDBOX);
	path = s->unix_prep(&w);
	if (by_link) {
		const char *link = kh_path("link.sock");

		cr_assert_eq(symlink(path, link), 0, "symlink %s: %s", link, strerror(errno));
		path = link;
	}
	who = s->who == BRIDGE ? &w.bridge : &w.caller;
	counted0 = kh_counter(s->reason);
	would0 = kh_would_deny(hook, s->reason);
	rc = s->who == CALLER_EXEC ? kh_child_exec_connect(who, path)
				   : kh_child_connect(who, path, NULL, NULL);
	if (s->unix_done)
		s->unix_done(&w);
	assert_outcome(s, hook, rc, counted0, would0, (__u32)who->pid);
}

static struct criterion_test_params rows_of(bool inet)
{
	static size_t unix_rows[N_ROWS], inet_rows[N_ROWS];
	size_t *rows = inet ? inet_rows : unix_rows, n = 0;

	for (size_t i = 0; i < N_ROWS; i++)
		if (inet ? table[i].inet_prep != NULL : table[i].unix_prep != NULL)
			rows[n++] = i;
	return cr_make_param_array(size_t, rows, n);
}

ParameterizedTestParameters(situations, on_the_unix_path_hook)
{
	return rows_of(false);
}

/* guarantees: none */
ParameterizedTest(size_t *row, situations, on_the_unix_path_hook)
{
	bool cgroup = kh_tier_loaded("cgroup");

	if (!cgroup && !kh_tier_loaded("lsm"))
		kh_not_offered(KH_NEED_ANY, "neither the cgroup nor the lsm tier is loaded");
	unix_row(&table[*row], false, cgroup ? EG_HOOK_CONNECT_UNIX : EG_HOOK_LSM_SOCKET_CONNECT);
}

ParameterizedTestParameters(situations, on_the_unix_inode_hook)
{
	return rows_of(false);
}

/* guarantees: none */
ParameterizedTest(size_t *row, situations, on_the_unix_inode_hook)
{
	if (!kh_tier_loaded("lsm"))
		kh_not_offered(KH_NEED_LSM, "lsm/unix_stream_connect needs the lsm tier");
	unix_row(&table[*row], true, EG_HOOK_LSM_UNIX_STREAM_CONNECT);
}

ParameterizedTestParameters(situations, on_the_inet_hook)
{
	return rows_of(true);
}

/* guarantees: none */
ParameterizedTest(size_t *row, situations, on_the_inet_hook)
{
	const struct situation *s = &table[*row];
	__u64 counted0, would0;
	const char *addr;
	struct te_env e;
	int rc;

	if (!kh_tier_loaded("tcp"))
		kh_not_offered(KH_NEED_ANY, "tcp tier not loaded (no links/tcp_connect4)");
	te_start(&e);
	inet_install("7");
	if (s->audit)
		uw_mode("audit", SANDBOX);
	addr = s->inet_prep(&e);
	counted0 = kh_counter(s->reason);
	would0 = kh_would_deny(EG_HOOK_CONNECT4, s->reason);
	rc = te_connect(&e, 0, addr, TE_TCP_PORT, false);
	assert_outcome(s, EG_HOOK_CONNECT4, rc, counted0, would0, (__u32)e.gateway);
}
