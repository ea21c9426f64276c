// SPDX-License-Identifier: Apache-2.0
/* TCP ServicePort stream revocation under audit (docs/design.md §19):
 * every revocation that destroys a stale stream in enforce runs from one
 * table, once per mode (global, and the per-sandbox override both ways),
 * each in a world of its own. The TCP revokers decide per socket, in the
 * iterator, from the socket's sandbox's record (its own mode, else the
 * global one). Enforce: both streams are destroyed (the gateway's next
 * send ECONNABORTED, the guest's read ECONNRESET), tcp_cut 2, would_cut 0.
 * Audit: both keep echoing after the revocation, tcp_cut 0, would_cut 2,
 * and the CLI names the sandbox. By bpf_sock_destroy where the kernel has
 * it, and by the sock_diag fallback, forced. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/tiers/tcp_tier.h"
#include "not_offered.h"
#include "tcp_env.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000d9"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"

static void setup(void)
{
	kh_setup_shared_requiring(NULL);
}

TestSuite(revoke_audit_tcp, .init = setup, .fini = kh_teardown, .timeout = 120);

enum how { REPLACE, RETIRE, DIAG_RETIRE };
static const char *const hows[] = {"replace", "retire", "sock_diag retire"};
#define N_HOWS (sizeof(hows) / sizeof(hows[0]))

struct mode_case {
	const char *name, *global, *sandbox; /* sandbox "": inherit */
	bool audit;
};

static const struct mode_case modes[] = {
    {"enforce", "enforce", "", false},
    {"audit", "audit", "", true},
    {"sandbox audit over global enforce", "enforce", "audit", true},
    {"sandbox enforce over global audit", "audit", "enforce", false},
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

struct run {
	unsigned how, mode;
};

static void cli_ok(const char *what, int rc, const char *out)
{
	cr_assert_eq(rc, 0, "%s: exit %d: %s", what, rc, out);
}

static unsigned member(const char *out, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(out, key);
	cr_assert(p, "no %s in: %s", name, out);
	return (unsigned)strtoul(p + strlen(key), NULL, 10);
}

static void install(unsigned gen, const char *mode, char *out, size_t size)
{
	char g[16], me[16];
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(me, sizeof(me), "%d", (int)getpid());
	if (mode[0])
		rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER,
			    "--generation", g, "--activation", "1", "--bridge-pid", me,
			    "--service-addr", TE_GUEST_ADDR, "--service-addr", "::1",
			    "--service-port", "7000/tcp", "--mode", mode, "--json", NULL);
	else
		rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER,
			    "--generation", g, "--activation", "1", "--bridge-pid", me,
			    "--service-addr", TE_GUEST_ADDR, "--service-addr", "::1",
			    "--service-port", "7000/tcp", "--json", NULL);
	cli_ok("install", rc, out);
}

/* A gateway granted TCP 7000 of execution 7, in the run's modes. */
static void start_granted(struct te_env *e, const struct mode_case *m)
{
	char tok[1024], out[4096], seed[256];
	int rc;

	if (!kh_tier_loaded("tcp"))
		kh_not_offered(KH_NEED_ANY, "tcp tier not loaded (no links/tcp_connect4)");
	kh_keys();
	te_start(e);
	cli_ok("mode", kh_cli(out, sizeof(out), "mode", m->global, NULL), out);
	install(7, m->sandbox, out, sizeof(out));
	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	rc = kh_issue(tok, sizeof(tok), "cap", "--key", seed, "--sandbox", SANDBOX, "--worker",
		      WORKER, "--generation", "7", "--activation", "1", "--scope", "serviceport",
		      "--port", "7000/tcp", "--ttl", "120", NULL);
	cr_assert_eq(rc, 0, "execgate-issue cap: %s", tok);
	tok[strcspn(tok, "\n")] = '\0';
	cli_ok("admit", kh_cli(out, sizeof(out), "admit", "--pid", te_gateway_pid(e), tok, NULL),
	       out);
}

/* slot: connect to addr, then one echo, so that the guest's k-th accepted
 * connection is the k-th slot. */
static void connect_echo(struct te_env *e, int slot, const char *addr)
{
	cr_assert_eq(te_connect(e, slot, addr, TE_TCP_PORT, false), 0, "connect slot %d", slot);
	cr_assert_eq(te_send(e, slot), 0);
	cr_assert_eq(te_recv(e, slot), 1, "echo on slot %d", slot);
}

static void revoke_diag(unsigned *cut, unsigned *would)
{
	struct eg_revoke_report rep;
	struct eg_exec_record after;
	struct eg_runtime rt;
	__u8 sb[EG_ID_BYTES];
	char err[512];

	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(eg_runtime_open(&rt, kh.pin_dir, kh.state_dir, true, err, sizeof(err)), 0,
		     "%s", err);
	eg_revoke_tcp_force_diag(true);
	cr_assert_eq(eg_retire_report(&rt, sb, &after, &rep, err, sizeof(err)), 0, "%s", err);
	eg_revoke_tcp_force_diag(false);
	eg_runtime_close(&rt);
	cr_assert_str_eq(rep.err, "");
	cr_assert_str_eq(rep.kind[EG_REVOKE_TCP].method, EG_TCP_METHOD_DIAG);
	cr_assert_eq(rep.kind[EG_REVOKE_TCP].unreachable, 0);
	*cut = rep.kind[EG_REVOKE_TCP].cut;
	*would = rep.kind[EG_REVOKE_TCP].would_cut;
}

ParameterizedTestParameters(revoke_audit_tcp, every_tcp_cut_has_an_audit_twin)
{
	static struct run runs[N_HOWS * N_MODES];

	for (unsigned h = 0; h < N_HOWS; h++)
		for (unsigned m = 0; m < N_MODES; m++)
			runs[h * N_MODES + m] = (struct run){h, m};
	return cr_make_param_array(struct run, runs, N_HOWS * N_MODES);
}

/* guarantees: tcp-stream-revocation */
ParameterizedTest(struct run *r, revoke_audit_tcp, every_tcp_cut_has_an_audit_twin)
{
	const struct mode_case *m = &modes[r->mode];
	char out[8192], note[160], when[160];
	unsigned cut, would;
	struct te_env e;
	int rc;

	snprintf(when, sizeof(when), "%s, %s", hows[r->how], m->name);
	cr_log_info("%s", when);
	start_granted(&e, m);
	connect_echo(&e, 0, TE_GUEST_ADDR);
	connect_echo(&e, 1, "::1");

	switch ((enum how)r->how) {
	case REPLACE:
		install(8, "", out, sizeof(out));
		break;
	case RETIRE:
		rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, "--json", NULL);
		cli_ok("retire", rc, out);
		break;
	case DIAG_RETIRE:
		revoke_diag(&cut, &would);
		snprintf(out, sizeof(out), "{\"tcp_cut\":%u,\"would_cut\":%u}", cut, would);
		break;
	}
	cut = member(out, "tcp_cut");
	would = member(out, "would_cut");
	snprintf(note, sizeof(note), "audit: sandbox %s: would cut 2 stream(s)", SANDBOX);
	if (m->audit) {
		cr_assert_eq(cut, 0, "%s: audit destroyed %u: %s", when, cut, out);
		cr_assert_eq(would, 2, "%s: would_cut %u, enforce cuts 2: %s", when, would, out);
		if (r->how != DIAG_RETIRE)
			cr_assert(strstr(out, note), "%s: the CLI names the sandbox: %s", when,
				  out);
		for (int s = 0; s < 2; s++) {
			cr_assert_eq(te_send(&e, s), 0, "%s: slot %d sends", when, s);
			cr_assert_eq(te_recv(&e, s), 1, "%s: slot %d echoes", when, s);
		}
	} else {
		cr_assert_eq(cut, 2, "%s: enforce destroyed %u: %s", when, cut, out);
		cr_assert_eq(would, 0, "%s: would_cut %u in enforce: %s", when, would, out);
		for (int s = 0; s < 2; s++) {
			cr_assert_eq(te_peer_state(&e, s, TE_CUT_WAIT_MS), -ECONNRESET,
				     "%s: guest end %d", when, s);
			cr_assert_eq(te_send(&e, s), -ECONNABORTED, "%s: gateway end %d", when, s);
		}
	}
}

/* Audit left the streams of execution 7 running at generation 8; after the
 * sandbox's switch to enforce, generation 9 destroys them (their tags name
 * an epoch that is not current). The switch itself destroys nothing. */
/* guarantees: tcp-stream-revocation */
Test(revoke_audit_tcp, an_enforce_switch_destroys_what_audit_left_at_the_next_revocation)
{
	const struct mode_case audit = {"audit", "audit", "", true};
	char out[8192];
	struct te_env e;

	start_granted(&e, &audit);
	connect_echo(&e, 0, TE_GUEST_ADDR);
	install(8, "", out, sizeof(out));
	cr_assert_eq(member(out, "tcp_cut"), 0, "%s", out);
	cr_assert_eq(member(out, "would_cut"), 1, "%s", out);
	cli_ok("mode", kh_cli(out, sizeof(out), "mode", "enforce", "--sandbox", SANDBOX, NULL),
	       out);
	cr_assert_eq(te_send(&e, 0), 0, "the switch destroys nothing");
	cr_assert_eq(te_recv(&e, 0), 1);
	install(9, "", out, sizeof(out));
	cr_assert_eq(member(out, "tcp_cut"), 1, "%s", out);
	cr_assert_eq(member(out, "would_cut"), 0, "%s", out);
	cr_assert_eq(te_peer_state(&e, 0, TE_CUT_WAIT_MS), -ECONNRESET, "guest end");
	cr_assert_eq(te_send(&e, 0), -ECONNABORTED, "gateway end");
}

#define SANDBOX_B "5f0c2c1e-7a4b-4c1d-9e3f-0000000000da"

/* The TCP revokers see every stale socket of a namespace, whichever
 * sandbox's, and decide each by its own sandbox's mode: sandbox B audits,
 * A enforces (global enforce). B's replacement leaves B's stream; A's
 * replacement then destroys A's stream only, and counts nothing of B's. */
/* guarantees: tcp-stream-revocation */
Test(revoke_audit_tcp, an_enforced_sandbox_never_destroys_an_audited_sandboxs_stream)
{
	const struct mode_case enforce = {"enforce", "enforce", "", false};
	char out[8192], tok[1024], seed[256], me[16];
	struct te_env e;
	int rc;

	start_granted(&e, &enforce);
	snprintf(me, sizeof(me), "%d", (int)getpid());
	for (unsigned gen = 7; gen <= 8; gen++) {
		char g[16];

		snprintf(g, sizeof(g), "%u", gen);
		rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX_B, "--worker", WORKER,
			    "--generation", g, "--activation", "1", "--bridge-pid", me,
			    "--service-addr", TE_OTHER_ADDR, "--service-port", "7000/tcp", "--mode",
			    "audit", "--json", NULL);
		cli_ok("install B", rc, out);
		if (gen == 8)
			break;
		snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
		rc = kh_issue(tok, sizeof(tok), "cap", "--key", seed, "--sandbox", SANDBOX_B,
			      "--worker", WORKER, "--generation", "7", "--activation", "1",
			      "--scope", "serviceport", "--port", "7000/tcp", "--ttl", "120", NULL);
		cr_assert_eq(rc, 0, "execgate-issue cap: %s", tok);
		tok[strcspn(tok, "\n")] = '\0';
		cli_ok("admit B",
		       kh_cli(out, sizeof(out), "admit", "--pid", te_gateway_pid(&e), tok, NULL),
		       out);
		connect_echo(&e, 0, TE_GUEST_ADDR); /* A's */
		connect_echo(&e, 1, TE_OTHER_ADDR); /* B's */
	}
	cr_assert_eq(member(out, "tcp_cut"), 0, "B audits: %s", out);
	cr_assert_eq(member(out, "would_cut"), 1, "B's stream: %s", out);

	install(8, "", out, sizeof(out)); /* A, enforce */
	cr_assert_eq(member(out, "tcp_cut"), 1, "A's stream only: %s", out);
	cr_assert_eq(member(out, "would_cut"), 0, "B's is not A's to report: %s", out);
	cr_assert_eq(te_peer_state(&e, 0, TE_CUT_WAIT_MS), -ECONNRESET, "A's guest end");
	cr_assert_eq(te_send(&e, 0), -ECONNABORTED, "A's gateway end");
	cr_assert_eq(te_send(&e, 1), 0, "B's stream still sends");
	cr_assert_eq(te_recv(&e, 1), 1, "and echoes");
}
