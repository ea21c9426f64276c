// SPDX-License-Identifier: Apache-2.0
/* Inode endpoints (lsm/unix_stream_connect): a registered socket is checked
 * by the inode it is bound to, so a symlink or a relative path that the
 * path key does not know still reaches the check. The callers stay in the
 * scratch cgroup, so on kernels with connect_unix the path hook sees (and
 * lets through as unregistered) the other name first. An inode belongs to
 * one sandbox: another's install cannot take it by a link or a hard link. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "loader/endpoints/lsm_unix_inode.h"
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
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
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
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
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
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
	cr_assert_geq(agent_connect_unix(bridge, link), 0);

	rc = eg_retire(&env.rt, lsm_sandbox_s, &after, err, sizeof(err));
	cr_assert_eq(rc, 0, "retire: %s", err);
	rc = agent_connect_unix(bridge, link);
	cr_assert_eq(rc, -EPERM, "retired sandbox through the symlink: %d", rc);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "retired sandbox by path: %d", rc);
}

static const __u8 sandbox_b[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x02, 8};

static void assert_inode_owner(const char *path, const __u8 owner[EG_ID_BYTES])
{
	struct eg_inode_key key;
	struct eg_endpoint ep;
	int fd, rc;

	rc = eg_unix_bound_inode(path, &key, &fd);
	cr_assert_eq(rc, 0, "%s: not a listening socket: %s", path, strerror(-rc));
	rc = eg_endpoint_read(&env.rt.maps, EG_MAP_INODE_ENDPOINTS, &key, &ep);
	close(fd);
	cr_assert_eq(rc, 0, "%s: no inode entry", path);
	cr_assert_eq(memcmp(ep.sandbox, owner, EG_ID_BYTES), 0,
		     "%s: inode entry of another sandbox", path);
	cr_assert_eq(ep.role, EG_ROLE_VMM);
}

static int install_b(struct agent *bridge, struct agent *vmm, const char *vmm_socket, char *err,
		     size_t err_size)
{
	struct lsm_install in = {.generation = 3,
				 .activation = 1,
				 .bridge = bridge->pid,
				 .vmm = vmm->pid,
				 .vmm_socket = vmm_socket};
	struct eg_install_result res;

	memcpy(in.sandbox, sandbox_b, EG_ID_BYTES);
	return lsm_env_install(&env, &in, &res, err, err_size);
}

/* guarantees: unix-inode-endpoints */
Test(lsm_inode, another_sandbox_cannot_take_a_socket_through_a_link,
     .description = "B's install naming A's VMM socket through a link or a hard link is "
		    "refused; A's entry, bridge and guard survive B's retire and forget")
{
	struct agent *vmm_a, *bridge_a, *vmm_b, *bridge_b, *other;
	char a_vmm[256], b_dir[256], b_link[300], b_hard[256], b_own[256], err[512];
	struct eg_exec_record after;
	unsigned forgotten;
	int rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "a-vmm.sock", a_vmm, sizeof(a_vmm));
	lsm_env_path(&env, "b", b_dir, sizeof(b_dir));
	lsm_env_path(&env, "b-hard.sock", b_hard, sizeof(b_hard));
	lsm_env_path(&env, "b-own.sock", b_own, sizeof(b_own));
	snprintf(b_link, sizeof(b_link), "%s/vmm.sock", b_dir);
	vmm_a = agent_start(&env, false);
	bridge_a = agent_start(&env, true);
	vmm_b = agent_start(&env, false);
	bridge_b = agent_start(&env, true);
	other = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm_a, a_vmm), 0);
	cr_assert_geq(agent_listen_unix(vmm_b, b_own), 0);
	lsm_install_unix(&env, 7, 1, bridge_a, vmm_a, a_vmm, EG_INSTALLED_NEW);

	/* A's path itself: the path conflict. */
	rc = install_b(bridge_b, vmm_b, a_vmm, err, sizeof(err));
	cr_assert_eq(rc, -EEXIST, "install of A's path: %d: %s", rc, err);
	/* A link in B's own directory to A's socket. */
	cr_assert_eq(mkdir(b_dir, 0700), 0);
	cr_assert_eq(symlink(a_vmm, b_link), 0, "symlink: %s", strerror(errno));
	rc = install_b(bridge_b, vmm_b, b_link, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL, "install through a symlink: %d: %s", rc, err);
	cr_assert(strstr(err, "a component of the path is a symbolic link"), "%s", err);
	/* A hard link: no link to refuse, but the socket is A's. */
	cr_assert_eq(link(a_vmm, b_hard), 0, "link: %s", strerror(errno));
	rc = install_b(bridge_b, vmm_b, b_hard, err, sizeof(err));
	cr_assert_eq(rc, -EEXIST, "install of a hard link to A's socket: %d: %s", rc, err);
	cr_assert_eq(eg_record_read(&env.rt.maps, sandbox_b, &after), -ENOENT,
		     "a refused install wrote B's record");
	assert_inode_owner(a_vmm, lsm_sandbox_s);

	/* A's bridge reaches A's VMM by any name; B's bridge by none. */
	rc = agent_connect_unix(bridge_a, a_vmm);
	cr_assert_geq(rc, 0, "A's bridge: %s", strerror(-rc));
	rc = agent_connect_unix(bridge_a, b_link);
	cr_assert_geq(rc, 0, "A's bridge through B's link: %s", strerror(-rc));
	rc = agent_connect_unix(bridge_b, b_link);
	cr_assert_eq(rc, -EPERM, "B's bridge through B's link: %d", rc);
	rc = agent_connect_unix(bridge_b, b_hard);
	cr_assert_eq(rc, -EPERM, "B's bridge through the hard link: %d", rc);

	/* B with a socket of its own, retired and forgotten: A's VMM is still
	 * guarded, by every name. */
	rc = install_b(bridge_b, vmm_b, b_own, err, sizeof(err));
	cr_assert_eq(rc, 0, "install B: %s", err);
	cr_assert_eq(eg_retire(&env.rt, sandbox_b, &after, err, sizeof(err)), 0, "retire B: %s",
		     err);
	cr_assert_eq(eg_forget(&env.rt, sandbox_b, &forgotten, err, sizeof(err)), 0, "forget B: %s",
		     err);
	cr_assert_eq(forgotten, 2, "B's path and inode entries: %u", forgotten);
	assert_inode_owner(a_vmm, lsm_sandbox_s);
	rc = agent_connect_unix(other, b_link);
	cr_assert_eq(rc, -EPERM, "another process through a link: %d", rc);
	rc = agent_connect_unix(other, b_hard);
	cr_assert_eq(rc, -EPERM, "another process through the hard link: %d", rc);
	rc = agent_connect_unix(other, a_vmm);
	cr_assert_eq(rc, -EPERM, "another process by A's path: %d", rc);
	rc = agent_connect_unix(bridge_b, b_link);
	cr_assert_eq(rc, -EPERM, "B's forgotten bridge through B's link: %d", rc);
	rc = agent_connect_unix(bridge_a, a_vmm);
	cr_assert_geq(rc, 0, "A's bridge after B's forget: %s", strerror(-rc));
}
