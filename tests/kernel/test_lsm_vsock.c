// SPDX-License-Identifier: Apache-2.0
/* lsm/socket_connect on AF_VSOCK: a registered (CID, port) is a VMM endpoint
 * (the vhost-vsock VMM case); only the current execution's bridge connects.
 * Real connections to CID 1 through vsock_loopback, inside the VM matrix. */
#include <errno.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_vsock, .fini = fini);

static const __u8 sandbox_s[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x01, 7};

static void setup(void)
{
	lsm_env_init(&env);
	eg_test_require_vm_vsock();
}

static void install(__u64 gen, __u32 act, struct agent *bridge, struct agent *vmm, unsigned port,
		    enum eg_install_outcome want)
{
	lsm_env_install_vsock(&env, sandbox_s, gen, act, bridge, vmm, port, want);
}

/* guarantees: vsock-vmm-bridge-only */
Test(lsm_vsock, registered_bridge_connects_other_denied,
     .description = "a registered VSOCK endpoint admits the bridge, refuses anyone else")
{
	struct agent *vmm, *bridge, *other;
	unsigned port;
	__u64 allow0, deny0;
	int ls, rc;

	setup();
	port = lsm_env_vsock_port(0);
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, false);
	other = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen on port %u: %s", port, strerror(-ls));
	install(7, 1, bridge, vmm, port, EG_INSTALLED_NEW);
	allow0 = lsm_env_counter(&env, EG_K_ALLOW_BRIDGE);
	deny0 = lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE);

	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(rc, 0, "bridge connect to 1:%u: %s", port, strerror(-rc));
	rc = agent_connect_vsock(other, 1, port);
	cr_assert_eq(rc, -EPERM, "other process connect to 1:%u: %d (%s)", port, rc, strerror(-rc));

	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allow0 + 1);
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 1);
	cr_assert_eq(lsm_env_count_events(&env, other->pid, EG_K_DENY_NOT_BRIDGE,
					  EG_HOOK_LSM_SOCKET_CONNECT),
		     1, "one denial event for the other process");
}

/* The bridge's admitted connect is denied when its socket cannot get the
 * lease tag (no room under net.core.optmem_max, which socket-local storage
 * is charged against): an untagged stream would escape the lease. VSOCK
 * sockets are not per network namespace, so the VM's own sysctl is used. */
/* guarantees: stream-lease */
Test(lsm_vsock, an_admitted_connect_that_cannot_be_tagged_is_denied,
     .description = "the bridge's connect fails closed when its socket cannot be tagged")
{
	struct agent *vmm, *bridge;
	__u64 allow0, notag0;
	unsigned port;
	int ls, rc, old;

	setup();
	port = lsm_env_vsock_port(0);
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen on port %u: %s", port, strerror(-ls));
	install(7, 1, bridge, vmm, port, EG_INSTALLED_NEW);
	allow0 = lsm_env_counter(&env, EG_K_ALLOW_BRIDGE);
	notag0 = lsm_env_counter(&env, EG_K_DENY_NO_TAG);

	old = kh_vm_optmem_set(0);
	rc = agent_connect_vsock(bridge, 1, port);
	kh_vm_optmem_set(old);
	cr_assert_eq(rc, -EPERM, "bridge connect without room for its tag: %d (%s)", rc,
		     strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NO_TAG), notag0 + 1);
	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allow0, "not also an allow");
	cr_assert_eq(
	    lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NO_TAG, EG_HOOK_LSM_SOCKET_CONNECT),
	    1);

	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(rc, 0, "room again: %s", strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allow0 + 1);
}

/* guarantees: vsock-vmm-bridge-only */
Test(lsm_vsock, stale_bridge_denied_after_replacement,
     .description = "once execution 8 is installed, execution 7's bridge is refused")
{
	struct agent *vmm, *bridge7, *bridge8;
	unsigned port;
	int ls, rc;

	setup();
	port = lsm_env_vsock_port(1);
	vmm = agent_start(&env, false);
	bridge7 = agent_start(&env, false);
	bridge8 = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen: %s", strerror(-ls));

	install(7, 1, bridge7, vmm, port, EG_INSTALLED_NEW);
	rc = agent_connect_vsock(bridge7, 1, port);
	cr_assert_geq(rc, 0, "bridge of 7 before replacement: %s", strerror(-rc));
	rc = agent_connect_vsock(bridge8, 1, port);
	cr_assert_eq(rc, -EPERM, "bridge of 8 before 8 is installed: %d", rc);

	install(8, 1, bridge8, vmm, port, EG_INSTALLED_REPLACED);
	rc = agent_connect_vsock(bridge7, 1, port);
	cr_assert_eq(rc, -EPERM, "stale bridge of 7 after 8: %d (%s)", rc, strerror(-rc));
	rc = agent_connect_vsock(bridge8, 1, port);
	cr_assert_geq(rc, 0, "bridge of 8: %s", strerror(-rc));
}

/* guarantees: vsock-vmm-bridge-only */
Test(lsm_vsock, unregistered_port_untouched,
     .description = "a VSOCK destination nobody registered passes, counted as unregistered")
{
	struct agent *vmm, *bridge, *other;
	unsigned port, free_port;
	__u64 unreg0;
	int rc;

	setup();
	port = lsm_env_vsock_port(2);
	free_port = lsm_env_vsock_port(3);
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, false);
	other = agent_start(&env, false);
	cr_assert_geq(agent_listen_vsock(vmm, port), 0);
	cr_assert_geq(agent_listen_vsock(vmm, free_port), 0);
	install(7, 1, bridge, vmm, port, EG_INSTALLED_NEW);
	unreg0 = lsm_env_counter(&env, EG_K_ALLOW_UNREGISTERED);

	rc = agent_connect_vsock(other, 1, free_port);
	cr_assert_geq(rc, 0, "unregistered 1:%u: %s", free_port, strerror(-rc));
	cr_assert_geq(lsm_env_counter(&env, EG_K_ALLOW_UNREGISTERED), unreg0 + 1);
}

/* guarantees: stream-lease */
Test(lsm_vsock, stream_lease_revoked_on_replacement,
     .description = "a VSOCK stream of epoch E fails send and recv with EPIPE once E+1 is in")
{
	struct agent *vmm, *bridge7, *bridge8;
	char buf[64];
	unsigned port;
	int ls, c, s, rc;

	setup();
	port = lsm_env_vsock_port(0);
	vmm = agent_start(&env, false);
	bridge7 = agent_start(&env, false);
	bridge8 = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0);
	install(7, 1, bridge7, vmm, port, EG_INSTALLED_NEW);

	c = agent_connect_vsock(bridge7, 1, port);
	cr_assert_geq(c, 0, "connect: %s", strerror(-c));
	s = agent_accept(vmm, ls);
	cr_assert_geq(s, 0, "accept: %s", strerror(-s));
	cr_assert_eq(agent_send(bridge7, c, "ping"), 4);
	cr_assert_eq(agent_recv(vmm, s, buf, sizeof(buf)), 4);
	cr_assert_eq(agent_send(vmm, s, "pong"), 4);
	cr_assert_eq(agent_recv(bridge7, c, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "pong");

	/* data in flight when the replacement lands must not be readable */
	cr_assert_eq(agent_send(vmm, s, "late"), 4);
	install(8, 1, bridge8, vmm, port, EG_INSTALLED_REPLACED);
	rc = agent_send(bridge7, c, "ping");
	cr_assert_eq(rc, -EPIPE, "send on a revoked VSOCK stream: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(bridge7, c, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "recv on a revoked VSOCK stream: %d (%s)", rc, strerror(-rc));
	cr_assert_geq(lsm_env_counter(&env, EG_K_DENY_STREAM_EPOCH), 2);
	cr_assert_eq(
	    lsm_env_count_events(&env, bridge7->pid, EG_K_DENY_STREAM_EPOCH, EG_HOOK_LSM_SENDMSG),
	    1, "one lease event per revoked socket");
}
