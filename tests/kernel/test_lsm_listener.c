// SPDX-License-Identifier: Apache-2.0
/* The listener check (lsm/socket_listen + lsm/unix_stream_connect): the
 * process behind a registered Unix socket must be the current execution's
 * VMM. The original listener exits, another process binds the same path:
 * the bridge's connect is refused, although path and caller are right. */
#include <errno.h>
#include <criterion/criterion.h>
#include "loader/tiers/lsm_tier.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_listener, .fini = fini);

/* guarantees: unix-listener-identity, unix-path-machine-wide@lsm */
Test(lsm_listener, replacement_listener_denied,
     .description = "another process bound on a registered path after the VMM died is refused")
{
	struct agent *vmm, *bridge, *impostor;
	char path[256];
	__u64 deny0;
	int ls, rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	impostor = agent_start(&env, false);
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0, "listen %s: %s", path, strerror(-ls));
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);

	rc = agent_connect_unix(bridge, path);
	cr_assert_geq(rc, 0, "bridge to the real VMM: %s", strerror(-rc));

	/* The VMM dies; another process takes the path over. */
	agent_stop(vmm);
	ls = agent_listen_unix(impostor, path);
	cr_assert_geq(ls, 0, "impostor listen: %s", strerror(-ls));
	deny0 = lsm_env_counter(&env, EG_K_DENY_LISTENER);

	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "bridge to a replacement listener: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_LISTENER), deny0 + 1);
	cr_assert_eq(lsm_env_count_events(&env, bridge->pid, EG_K_DENY_LISTENER,
					  EG_HOOK_LSM_UNIX_STREAM_CONNECT),
		     1);
}

/* guarantees: unix-listener-identity, unix-path-machine-wide@lsm */
Test(lsm_listener, restarted_vmm_admitted_after_install,
     .description = "a new VMM registered by install (new attempt) is the expected listener")
{
	struct agent *vmm1, *vmm2, *bridge;
	char path[256];
	int rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm1 = agent_start(&env, false);
	vmm2 = agent_start(&env, false);
	bridge = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm1, path), 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm1, path, EG_INSTALLED_NEW);
	cr_assert_geq(agent_connect_unix(bridge, path), 0);

	agent_stop(vmm1);
	cr_assert_geq(agent_listen_unix(vmm2, path), 0);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "before install names the new VMM: %d", rc);

	lsm_install_unix(&env, 7, 2, bridge, vmm2, path, EG_INSTALLED_ACTIVATION);
	rc = agent_connect_unix(bridge, path);
	cr_assert_geq(rc, 0, "after install of attempt 2 with the new VMM: %s", strerror(-rc));
}

/* guarantees: unix-listener-identity, unix-path-machine-wide@lsm */
Test(lsm_listener, listener_older_than_lsm_tier_fails_closed,
     .description = "a VMM that called listen() before the LSM tier was loaded is refused")
{
	struct eg_tier_ctx ctx;
	struct agent *vmm, *bridge;
	char path[256], err[512];
	int ls, rc;

	lsm_env_init(&env);
	ctx = (struct eg_tier_ctx){.pin_dir = env.pin_dir, .cgroup_path = env.cgroup};
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);

	/* No LSM tier while the VMM listens: its socket carries no owner. */
	cr_assert_eq(eg_tier_lsm.unload(&ctx, err, sizeof(err)), 0, "%s", err);
	lsm_env_wait_listen_hook_gone(&env);
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0);
	cr_assert_eq(eg_tier_lsm.load(&ctx, err, sizeof(err)), 0, "%s", err);

	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "unverifiable listener: %d (%s)", rc, strerror(-rc));

	/* The VMM listening again (a restart) is verifiable and admitted. */
	ls = agent_listen_unix(vmm, path);
	cr_assert_geq(ls, 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_UNCHANGED);
	rc = agent_connect_unix(bridge, path);
	cr_assert_geq(rc, 0, "relistened VMM: %s", strerror(-rc));
}
