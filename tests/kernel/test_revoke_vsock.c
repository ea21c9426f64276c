// SPDX-License-Identifier: Apache-2.0
/* The accepted end of a VSOCK stream carries the lease too (bpf/lsm.bpf.c,
 * lsm/sock_graft): once the epoch moves, I/O on the end accept() returned
 * fails with EPIPE, as on the connecting end; an activation change keeps
 * both. In audit (docs/design.md §19) the same replacement stops nothing:
 * the lease counts a would-deny and reports it marked audit, and both ends
 * keep working until the sandbox is switched to enforce. Real connections
 * to CID 1 through vsock_loopback, inside the VM matrix only
 * (eg_test_require_vm_vsock). */
#include <errno.h>
#include <string.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
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

/* --- the audit twin: one table of modes, the case above in each -------------- */

struct vsock_mode {
	const char *name;
	__u32 global, sandbox; /* sandbox EG_MODE_INHERIT: the record takes the global */
	bool audit;
};

static const struct vsock_mode vsock_modes[] = {
    {"enforce", EG_MODE_ENFORCE, EG_MODE_INHERIT, false},
    {"audit", EG_MODE_AUDIT, EG_MODE_INHERIT, true},
    {"sandbox audit over global enforce", EG_MODE_ENFORCE, EG_MODE_AUDIT, true},
    {"sandbox enforce over global audit", EG_MODE_AUDIT, EG_MODE_ENFORCE, false},
};
#define N_VSOCK_MODES (sizeof(vsock_modes) / sizeof(vsock_modes[0]))

/* Events of (pid, reason, hook) seen so far, split by the audit mark. */
static void lease_events(__u32 pid, int *plain, int *audit)
{
	lsm_env_count_events(&env, pid, EG_K_DENY_STREAM_EPOCH, EG_HOOK_LSM_SENDMSG);
	*plain = *audit = 0;
	for (size_t i = 0; i < env.nevents; i++) {
		const struct eg_event *ev = &env.events[i];

		if (ev->pid != pid || ev->reason != EG_K_DENY_STREAM_EPOCH ||
		    ev->hook != EG_HOOK_LSM_SENDMSG)
			continue;
		if (ev->flags & EG_EVENT_AUDIT) {
			(*audit)++;
			cr_assert_arr_eq(ev->sandbox, sandbox_v, EG_ID_BYTES,
					 "the audit event names the stream's sandbox");
		} else {
			(*plain)++;
		}
	}
}

static __u64 lease_would_deny(void)
{
	static __u64 wd[EG_HOOK_SLOTS][EG_COUNTER_SLOTS];

	cr_assert_eq(eg_would_deny_read(&env.rt.maps, wd), 0);
	return wd[EG_HOOK_LSM_SENDMSG][EG_K_DENY_STREAM_EPOCH] +
	       wd[EG_HOOK_LSM_RECVMSG][EG_K_DENY_STREAM_EPOCH];
}

static void set_mode(__u32 global, __u32 sandbox)
{
	char err[256];
	__u32 before;

	cr_assert_eq(eg_mode_switch_global(&env.rt, global, "test", &before, err, sizeof(err)), 0,
		     "%s", err);
	if (sandbox != EG_MODE_INHERIT)
		cr_assert_eq(eg_mode_switch_sandbox(&env.rt, sandbox_v, sandbox, "test", &before,
						    err, sizeof(err)),
			     0, "%s", err);
}

ParameterizedTestParameters(revoke_vsock, the_epoch_move_has_an_audit_twin)
{
	static unsigned idx[N_VSOCK_MODES];

	for (unsigned i = 0; i < N_VSOCK_MODES; i++)
		idx[i] = i;
	return cr_make_param_array(unsigned, idx, N_VSOCK_MODES);
}

/* guarantees: stream-lease */
ParameterizedTest(unsigned *mi, revoke_vsock, the_epoch_move_has_an_audit_twin)
{
	const struct vsock_mode *m = &vsock_modes[*mi];
	struct agent *vmm, *bridge7, *bridge8;
	int ls, c, s, rc, plain, audit;
	char buf[64];
	unsigned port;

	lsm_env_init(&env);
	eg_test_require_vm_vsock();
	cr_log_info("%s", m->name);
	port = lsm_env_vsock_port(2);
	vmm = agent_start(&env, false);
	bridge7 = agent_start(&env, false);
	bridge8 = agent_start(&env, false);
	ls = agent_listen_vsock(vmm, port);
	cr_assert_geq(ls, 0, "vsock listen: %s", strerror(-ls));
	set_mode(m->global, EG_MODE_INHERIT);
	install(7, 1, bridge7, vmm, port, EG_INSTALLED_NEW);
	set_mode(m->global, m->sandbox);
	open_stream(bridge7, vmm, ls, port, &c, &s);
	cr_assert_eq(lease_would_deny(), 0);

	install(8, 1, bridge8, vmm, port, EG_INSTALLED_REPLACED);
	rc = agent_send(vmm, s, "pong");
	lease_events(vmm->pid, &plain, &audit);
	if (!m->audit) {
		cr_assert_eq(rc, -EPIPE, "%s: send on the accepted end: %d", m->name, rc);
		rc = agent_recv(vmm, s, buf, sizeof(buf));
		cr_assert_eq(rc, -EPIPE, "%s: recv on the accepted end: %d", m->name, rc);
		cr_assert_eq(plain, 1, "%s: one lease event", m->name);
		cr_assert_eq(audit, 0, "%s: no audit event in enforce", m->name);
		cr_assert_eq(lease_would_deny(), 0, "%s", m->name);
		return;
	}
	/* Audit: both ends keep working, each stale I/O a would-deny. */
	cr_assert_eq(rc, 4, "%s: send on the accepted end: %d (%s)", m->name, rc,
		     rc < 0 ? strerror(-rc) : "");
	cr_assert_eq(agent_recv(bridge7, c, buf, sizeof(buf)), 4, "%s: the old bridge receives",
		     m->name);
	cr_assert_eq(agent_send(bridge7, c, "ping"), 4, "%s: the old bridge sends", m->name);
	cr_assert_eq(agent_recv(vmm, s, buf, sizeof(buf)), 4, "%s: the accepted end receives",
		     m->name);
	cr_assert_eq(plain, 0, "%s: no enforce event in audit", m->name);
	cr_assert_eq(audit, 1, "%s: one audit lease event, reported once per socket", m->name);
	cr_assert_geq(lease_would_deny(), 1, "%s: counted as a would-deny", m->name);

	/* The switch to enforce: the lease stops the stale stream at once. */
	set_mode(EG_MODE_ENFORCE, EG_MODE_ENFORCE);
	rc = agent_send(vmm, s, "pong");
	cr_assert_eq(rc, -EPIPE, "%s: after the switch, send on the accepted end: %d", m->name, rc);
	rc = agent_send(bridge7, c, "ping");
	cr_assert_eq(rc, -EPIPE, "%s: after the switch, send on the old bridge's end: %d", m->name,
		     rc);
}
