// SPDX-License-Identifier: Apache-2.0
/* Stream leases on Unix streams (lsm/socket_sendmsg, lsm/socket_recvmsg):
 * both ends of an admitted stream carry its epoch; once a replacement moves
 * the epoch, send and recv fail with EPIPE on both ends, at once. An
 * activation-attempt change keeps the epoch, and so the stream; new opens
 * need the new identity. */
#include <errno.h>
#include <criterion/criterion.h>
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_lease, .fini = fini);

struct stream {
	int c, s; /* client slot in the bridge, accepted slot in the VMM */
};

static struct stream open_stream(struct agent *bridge, struct agent *vmm, int ls, const char *path)
{
	struct stream st;
	char buf[64];

	st.c = agent_connect_unix(bridge, path);
	cr_assert_geq(st.c, 0, "connect %s: %s", path, strerror(-st.c));
	st.s = agent_accept(vmm, ls);
	cr_assert_geq(st.s, 0, "accept: %s", strerror(-st.s));
	cr_assert_eq(agent_send(bridge, st.c, "ping"), 4);
	cr_assert_eq(agent_recv(vmm, st.s, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "ping");
	cr_assert_eq(agent_send(vmm, st.s, "pong"), 4);
	cr_assert_eq(agent_recv(bridge, st.c, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "pong");
	return st;
}

static void assert_stream_works(struct agent *bridge, struct agent *vmm, struct stream st)
{
	char buf[64];
	int rc;

	rc = agent_send(bridge, st.c, "more");
	cr_assert_eq(rc, 4, "bridge send: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(vmm, st.s, buf, sizeof(buf));
	cr_assert_eq(rc, 4, "vmm recv: %d (%s)", rc, strerror(-rc));
	rc = agent_send(vmm, st.s, "back");
	cr_assert_eq(rc, 4, "vmm send: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(bridge, st.c, buf, sizeof(buf));
	cr_assert_eq(rc, 4, "bridge recv: %d (%s)", rc, strerror(-rc));
}

/* guarantees: stream-lease, unix-path-machine-wide@lsm */
Test(lsm_lease, unix_stream_revoked_both_directions,
     .description = "a Unix stream of epoch E fails send and recv on both ends once E+1 is in")
{
	struct agent *vmm, *bridge7, *bridge8;
	struct stream st;
	char path[256], buf[64];
	__u64 deny0;
	int ls, rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge7 = agent_start(&env, true);
	bridge8 = agent_start(&env, true);
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0);
	lsm_install_unix(&env, 7, 1, bridge7, vmm, path, EG_INSTALLED_NEW);
	st = open_stream(bridge7, vmm, ls, path);

	/* Data queued before the replacement is not delivered after it. */
	cr_assert_eq(agent_send(vmm, st.s, "late"), 4);
	cr_assert_eq(agent_send(bridge7, st.c, "late"), 4);
	deny0 = lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH);
	lsm_install_unix(&env, 8, 1, bridge8, vmm, path, EG_INSTALLED_REPLACED);

	rc = agent_send(bridge7, st.c, "ping");
	cr_assert_eq(rc, -EPIPE, "bridge send: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(bridge7, st.c, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "bridge recv: %d (%s)", rc, strerror(-rc));
	rc = agent_send(vmm, st.s, "pong");
	cr_assert_eq(rc, -EPIPE, "vmm send: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(vmm, st.s, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "vmm recv: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH), deny0 + 4);
	cr_assert_eq(
	    lsm_env_count_events(&env, bridge7->pid, EG_K_DENY_STREAM_EPOCH, EG_HOOK_LSM_SENDMSG),
	    1);
	cr_assert_eq(
	    lsm_env_count_events(&env, vmm->pid, EG_K_DENY_STREAM_EPOCH, EG_HOOK_LSM_SENDMSG), 1);

	/* The new execution's bridge opens a working stream. */
	st = open_stream(bridge8, vmm, ls, path);
	assert_stream_works(bridge8, vmm, st);
}

/* guarantees: stream-lease, unix-path-machine-wide@lsm */
Test(lsm_lease, activation_change_keeps_stream_refuses_old_open,
     .description = "a new attempt keeps established streams; a new open by the old bridge fails")
{
	struct agent *vmm, *bridge1, *bridge2;
	struct stream st;
	char path[256];
	int ls, rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge1 = agent_start(&env, true);
	bridge2 = agent_start(&env, true);
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0);
	lsm_install_unix(&env, 7, 1, bridge1, vmm, path, EG_INSTALLED_NEW);
	st = open_stream(bridge1, vmm, ls, path);

	/* Attempt 2 of the same generation, with a new bridge process. */
	lsm_install_unix(&env, 7, 2, bridge2, vmm, path, EG_INSTALLED_ACTIVATION);
	assert_stream_works(bridge1, vmm, st);

	rc = agent_connect_unix(bridge1, path);
	cr_assert_eq(rc, -EPERM, "new open by attempt 1's bridge: %d (%s)", rc, strerror(-rc));
	rc = agent_connect_unix(bridge2, path);
	cr_assert_geq(rc, 0, "new open by attempt 2's bridge: %s", strerror(-rc));
	assert_stream_works(bridge1, vmm, st);
}

/* guarantees: stream-lease, unix-path-machine-wide@lsm */
Test(lsm_lease, retire_revokes_stream,
     .description = "retiring the sandbox stops I/O on its streams")
{
	struct agent *vmm, *bridge;
	struct eg_exec_record after;
	struct stream st;
	char path[256], buf[64], err[256];
	int ls, rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
	st = open_stream(bridge, vmm, ls, path);
	cr_assert_eq(eg_retire(&env.rt, lsm_sandbox_s, &after, err, sizeof(err)), 0, "%s", err);
	rc = agent_send(bridge, st.c, "x");
	cr_assert_eq(rc, -EPIPE, "send after retire: %d", rc);
	rc = agent_recv(vmm, st.s, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "recv after retire: %d", rc);
}

/* guarantees: stream-lease, unix-path-machine-wide@lsm */
Test(lsm_lease, untagged_streams_untouched,
     .description = "streams to unregistered sockets are never touched by a replacement")
{
	struct agent *vmm, *peer, *bridge;
	struct stream st;
	char path[256], free_path[256];
	int ls, fl;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	lsm_env_path(&env, "free.sock", free_path, sizeof(free_path));
	vmm = agent_start(&env, false);
	peer = agent_start(&env, true);
	bridge = agent_start(&env, true);
	ls = agent_listen_unix(vmm, path);
	fl = agent_listen_unix(vmm, free_path);
	cr_assert_geq(ls, 0);
	cr_assert_geq(fl, 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
	st = open_stream(peer, vmm, fl, free_path);
	lsm_install_unix(&env, 8, 1, bridge, vmm, path, EG_INSTALLED_REPLACED);
	assert_stream_works(peer, vmm, st);
}
