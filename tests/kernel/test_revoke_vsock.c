// SPDX-License-Identifier: Apache-2.0
/* The accepted end of a VSOCK stream carries the lease too (bpf/lsm.bpf.c,
 * lsm/sock_graft): once the epoch moves, I/O on the end accept() returned
 * fails with EPIPE, as on the connecting end; an activation change keeps
 * both. Real connections to CID 1 through vsock_loopback, inside the VM
 * matrix only (eg_test_require_vm_vsock). */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>
#include "test_lsm_common.h"
#include "test_lsm_env.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(revoke_vsock, .fini = fini);

static const __u8 sandbox_v[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x01, 0xac};

static void install(__u64 gen, __u32 act, struct agent *bridge, struct agent *vmm, unsigned port,
		    enum eg_install_outcome want)
{
	lsm_env_install_vsock(&env, sandbox_v, gen, act, bridge, vmm, port, want);
}

/* A stream from bridge to the VMM's listener, checked both ways. */
static void open_stream(struct agent *bridge, struct agent *vmm, int ls, unsigned port, int *c,
			int *s)
{
	char buf[64];

	*c = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(*c, 0, "connect: %s", strerror(-*c));
	*s = agent_accept(vmm, ls);
	cr_assert_geq(*s, 0, "accept: %s", strerror(-*s));
	cr_assert_eq(agent_send(bridge, *c, "ping"), 4);
	cr_assert_eq(agent_recv(vmm, *s, buf, sizeof(buf)), 4);
	cr_assert_eq(agent_send(vmm, *s, "pong"), 4);
	cr_assert_eq(agent_recv(bridge, *c, buf, sizeof(buf)), 4);
}

/* guarantees: stream-lease */
Test(revoke_vsock, accepted_end_stops_when_the_epoch_moves,
     .description = "the accept()ed end of a VSOCK stream fails send and recv with EPIPE at E+1")
{
	struct agent *vmm, *bridge7, *bridge8;
	char buf[64];
	unsigned port;
	int ls, c, s, rc;

	lsm_env_init(&env);
	eg_test_require_vm_vsock();
	port = lsm_env_vsock_port(0);
	vmm = agent_start(&env, false);
	bridge7 = agent_start(&env, false);
	bridge8 = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen: %s", strerror(-ls));
	install(7, 1, bridge7, vmm, port, EG_INSTALLED_NEW);
	open_stream(bridge7, vmm, ls, port, &c, &s);

	/* Data the old bridge sent before the replacement is not readable
	 * after it, on the accepted end either. */
	cr_assert_eq(agent_send(bridge7, c, "late"), 4);
	install(8, 1, bridge8, vmm, port, EG_INSTALLED_REPLACED);
	rc = agent_send(vmm, s, "pong");
	cr_assert_eq(rc, -EPIPE, "send on the accepted end: %d (%s)", rc, strerror(-rc));
	rc = agent_recv(vmm, s, buf, sizeof(buf));
	cr_assert_eq(rc, -EPIPE, "recv on the accepted end: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(
	    lsm_env_count_events(&env, vmm->pid, EG_K_DENY_STREAM_EPOCH, EG_HOOK_LSM_SENDMSG), 1,
	    "one lease event for the accepted end");

	/* The new execution's stream works on both ends. */
	open_stream(bridge8, vmm, ls, port, &c, &s);
}

/* guarantees: stream-lease */
Test(revoke_vsock, accepted_end_kept_across_an_activation_change,
     .description = "same generation, new attempt: the accepted VSOCK end keeps working")
{
	struct agent *vmm, *bridge;
	char buf[64];
	unsigned port;
	int ls, c, s;

	lsm_env_init(&env);
	eg_test_require_vm_vsock();
	port = lsm_env_vsock_port(1);
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen: %s", strerror(-ls));
	install(7, 1, bridge, vmm, port, EG_INSTALLED_NEW);
	open_stream(bridge, vmm, ls, port, &c, &s);
	install(7, 2, bridge, vmm, port, EG_INSTALLED_ACTIVATION);
	cr_assert_eq(agent_send(vmm, s, "pong"), 4, "accepted end sends");
	cr_assert_eq(agent_recv(bridge, c, buf, sizeof(buf)), 4);
	cr_assert_eq(agent_send(bridge, c, "ping"), 4);
	cr_assert_eq(agent_recv(vmm, s, buf, sizeof(buf)), 4, "accepted end receives");
}
