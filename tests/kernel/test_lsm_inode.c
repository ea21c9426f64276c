// SPDX-License-Identifier: Apache-2.0
/* Inode endpoints (lsm/unix_stream_connect): a registered socket is checked
 * by the inode it is bound to, so a symlink or a relative path that the
 * path key does not know still reaches the check. The callers stay in the
 * scratch cgroup, so on kernels with connect_unix the path hook sees (and
 * lets through as unregistered) the other name first. */
#include <errno.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_inode, .fini = fini);

/* guarantees: unix-inode-endpoints */
Test(lsm_inode, symlink_route_checked,
     .description = "a connect through a symlink to a registered socket is checked")
{
	struct agent *vmm, *bridge, *other;
	char path[256], link[256];
	__u64 deny0;
	int rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	lsm_env_path(&env, "alias.sock", link, sizeof(link));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	other = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm, path), 0);
	cr_assert_eq(symlink(path, link), 0, "symlink: %s", strerror(errno));
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALL_NEW);
	deny0 = lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE);

	rc = agent_connect_unix(other, link);
	cr_assert_eq(rc, -EPERM, "other process through the symlink: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 1);
	cr_assert_eq(lsm_env_count_events(&env, other->pid, EG_K_DENY_NOT_BRIDGE,
					  EG_HOOK_LSM_UNIX_STREAM_CONNECT),
		     1);
	rc = agent_connect_unix(bridge, link);
	cr_assert_geq(rc, 0, "bridge through the symlink: %s", strerror(-rc));
}

/* guarantees: unix-inode-endpoints */
Test(lsm_inode, relative_path_route_checked,
     .description = "a connect by a relative path to a registered socket is checked")
{
	struct agent *vmm, *bridge, *other;
	char path[256];
	int rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	other = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm, path), 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALL_NEW);
	cr_assert_eq(agent_chdir(other, env.dir), 0);
	cr_assert_eq(agent_chdir(bridge, env.dir), 0);

	rc = agent_connect_unix(other, "vmm.sock");
	cr_assert_eq(rc, -EPERM, "other process by relative path: %d (%s)", rc, strerror(-rc));
	rc = agent_connect_unix(bridge, "./vmm.sock");
	cr_assert_geq(rc, 0, "bridge by relative path: %s", strerror(-rc));
}

/* guarantees: unix-inode-endpoints */
Test(lsm_inode, stale_inode_of_retired_sandbox_denies,
     .description = "after retire, a connect by any name to the socket is refused")
{
	struct agent *vmm, *bridge;
	struct eg_exec_record after;
	char path[256], link[256], err[256];
	int rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	lsm_env_path(&env, "alias.sock", link, sizeof(link));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm, path), 0);
	cr_assert_eq(symlink(path, link), 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALL_NEW);
	cr_assert_geq(agent_connect_unix(bridge, link), 0);

	rc = eg_retire(&env.rt, lsm_sandbox_s, &after, err, sizeof(err));
	cr_assert_eq(rc, 0, "retire: %s", err);
	rc = agent_connect_unix(bridge, link);
	cr_assert_eq(rc, -EPERM, "retired sandbox through the symlink: %d", rc);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "retired sandbox by path: %d", rc);
}
