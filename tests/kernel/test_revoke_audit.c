// SPDX-License-Identifier: Apache-2.0
/* Unix stream revocation under audit (docs/design.md §19): every revocation
 * that cuts in enforce runs from one table, once per mode, each in a world
 * of its own. The mode is the sandbox's effective one at the revocation:
 * its record's own mode, else the global one; the table runs both plain
 * modes and the per-sandbox override both ways. Enforce: the streams are
 * cut (EOF in, EPIPE out on both ends), counted in unix_cut, would_cut 0.
 * Audit: the same streams keep working (a real round trip after the
 * revocation), unix_cut is 0, would_cut is the count enforce cuts, and
 * the CLI names the sandbox and the reason. Then the switch: what an
 * enforce switch catches afterwards, and what it does not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "stream_holder.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a9"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define NSTREAMS 3

TestSuite(revoke_audit, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 90);

/* How the revocation is made: each cuts every stream of execution 7 in
 * enforce. */
enum how {
	REPLACE,	/* install generation 8 (CLI) */
	RETIRE,		/* retire (CLI) */
	PROCFS_REPLACE, /* the revoker in process, procfs fallback forced */
	ITER_REPLACE,	/* the revoker in process, iterator */
};

/* Which mode decides: global and the record's own ("" inherits). */
struct mode_case {
	const char *name, *global, *sandbox;
	bool audit; /* the effective mode */
};

static const struct mode_case modes[] = {
    {"enforce", "enforce", "", false},
    {"audit", "audit", "", true},
    {"sandbox audit over global enforce", "enforce", "audit", true},
    {"sandbox enforce over global audit", "audit", "enforce", false},
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

static const char *const hows[] = {"replace", "retire", "procfs replace", "iterator replace"};
#define N_HOWS (sizeof(hows) / sizeof(hows[0]))

struct run {
	unsigned how, mode;
};

static void set_global(const char *m)
{
	char out[1024];
	int rc = kh_cli(out, sizeof(out), "mode", m, NULL);

	cr_assert_eq(rc, 0, "execgate mode %s: exit %d: %s", m, rc, out);
}

static void set_sandbox(const char *m)
{
	char out[1024];
	int rc = kh_cli(out, sizeof(out), "mode", m, "--sandbox", SANDBOX, NULL);

	cr_assert_eq(rc, 0, "execgate mode %s --sandbox: exit %d: %s", m, rc, out);
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

/* install generation gen with the bridge h and the VMM socket, --json;
 * mode: the record's own ("" keeps it). */
static void install(unsigned gen, pid_t bridge, const char *vmm, const char *mode, char *out,
		    size_t size)
{
	char g[16], b[16], v[16];
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (mode[0])
		rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
			    "--generation", g, "--activation", "1", "--bridge-pid", b, "--vmm-pid",
			    v, "--vmm-socket", vmm, "--mode", mode, "--json", NULL);
	else
		rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
			    "--generation", g, "--activation", "1", "--bridge-pid", b, "--vmm-pid",
			    v, "--vmm-socket", vmm, "--json", NULL);
	cr_assert_eq(rc, 0, "install generation %u: exit %d: %s", gen, rc, out);
}

/* Each held stream carries a byte each way: the holder's 'x' arrives at
 * the accepted end, the accepted end's 'y' at the holder. */
static void round_trip(struct sh_holder *h, const int *acc, int n, const char *when)
{
	char b[8];

	cr_assert_eq(sh_cmd(h, 'w'), n, "%s: every connecting end sends", when);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(recv(acc[i], b, sizeof(b), 0), 1, "%s: accepted end %d receives", when,
			     i);
		cr_assert_eq(send(acc[i], "y", 1, MSG_NOSIGNAL), 1, "%s: accepted end %d sends",
			     when, i);
	}
	cr_assert_eq(sh_cmd(h, 'r'), n, "%s: every connecting end receives", when);
}

static void connect_streams(struct sh_holder *h, int lfd, int n, int *acc)
{
	for (int i = 0; i < n; i++) {
		cr_assert_eq(sh_cmd(h, 'c'), 0, "bridge connect %d", i);
		acc[i] = accept(lfd, NULL, NULL);
		cr_assert(acc[i] >= 0, "accept");
	}
}

/* The revocation, in process: the record's epoch moved by hand is not
 * needed, the revoker is asked for epoch 2 against streams of epoch 1. */
static void revoke_in_process(bool procfs, unsigned *cut, unsigned *would)
{
	struct eg_revoke_report rep;
	struct eg_runtime rt;
	__u8 sb[EG_ID_BYTES];
	char err[512];

	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(eg_runtime_open(&rt, kh.pin_dir, kh.state_dir, true, err, sizeof(err)), 0,
		     "%s", err);
	eg_revoke_unix_force_procfs(procfs);
	cr_assert_eq(eg_revoke_stale(&rt, sb, 2, false, &rep), 0, "%s", rep.err);
	eg_revoke_unix_force_procfs(false);
	eg_runtime_close(&rt);
	cr_assert_str_eq(rep.kind[EG_REVOKE_UNIX].method, procfs ? "procfs" : "iter/task_file");
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].unreachable, 0);
	*cut = rep.kind[EG_REVOKE_UNIX].cut;
	*would = rep.kind[EG_REVOKE_UNIX].would_cut;
}

ParameterizedTestParameters(revoke_audit, every_unix_cut_has_an_audit_twin)
{
	static struct run runs[N_HOWS * N_MODES];

	for (unsigned h = 0; h < N_HOWS; h++)
		for (unsigned m = 0; m < N_MODES; m++)
			runs[h * N_MODES + m] = (struct run){h, m};
	return cr_make_param_array(struct run, runs, N_HOWS * N_MODES);
}

/* guarantees: unix-stream-revocation */
ParameterizedTest(struct run *r, revoke_audit, every_unix_cut_has_an_audit_twin)
{
	const struct mode_case *m = &modes[r->mode];
	const char *vmm = kh_path("vmm.sock");
	int lfd = sh_listen(vmm), acc[NSTREAMS], rc;
	unsigned cut, would;
	struct sh_holder h;
	char out[8192], note[160], when[160];

	snprintf(when, sizeof(when), "%s, %s", hows[r->how], m->name);
	cr_log_info("%s", when);
	sh_start(&h, vmm);
	set_global(m->global);
	install(7, h.pid, vmm, m->sandbox, out, sizeof(out));
	connect_streams(&h, lfd, NSTREAMS, acc);
	round_trip(&h, acc, NSTREAMS, "before");

	switch ((enum how)r->how) {
	case REPLACE:
		install(8, h.pid, vmm, "", out, sizeof(out));
		break;
	case RETIRE:
		rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, "--json", NULL);
		cr_assert_eq(rc, 0, "retire: exit %d: %s", rc, out);
		break;
	case PROCFS_REPLACE:
	case ITER_REPLACE:
		revoke_in_process(r->how == PROCFS_REPLACE, &cut, &would);
		snprintf(out, sizeof(out), "{\"unix_cut\":%u,\"would_cut\":%u}", cut, would);
		break;
	}
	cut = member(out, "unix_cut");
	would = member(out, "would_cut");
	snprintf(note, sizeof(note), "audit: sandbox %s: would cut %d stream(s)", SANDBOX,
		 NSTREAMS);
	if (m->audit) {
		cr_assert_eq(cut, 0, "%s: audit cut %u: %s", when, cut, out);
		cr_assert_eq(would, NSTREAMS, "%s: would_cut %u, enforce cuts %d: %s", when, would,
			     NSTREAMS, out);
		if (r->how == REPLACE || r->how == RETIRE)
			cr_assert(strstr(out, note), "%s: the CLI names the sandbox: %s", when,
				  out);
		round_trip(&h, acc, NSTREAMS, "after the revocation");
	} else {
		cr_assert_eq(cut, NSTREAMS, "%s: enforce cut %u: %s", when, cut, out);
		cr_assert_eq(would, 0, "%s: would_cut %u in enforce: %s", when, would, out);
		cr_assert(!strstr(out, "audit: sandbox"), "%s: an audit note in enforce: %s", when,
			  out);
		cr_assert_eq(sh_cmd(&h, 'e'), NSTREAMS, "%s: connecting ends: EOF and EPIPE", when);
		for (int i = 0; i < NSTREAMS; i++)
			cr_assert(sh_end_cut(acc[i]), "%s: accepted end %d cut", when, i);
	}
	for (int i = 0; i < NSTREAMS; i++)
		close(acc[i]);
	close(lfd);
}

/* The switch. Streams the bridge opened while the sandbox audited carry
 * their epoch's tag, so after a switch to enforce the next revocation cuts
 * every one of an older epoch, the ones audit let survive earlier
 * included; the switch itself cuts nothing (where the LSM tier is loaded
 * too, its lease refuses the stale streams' I/O from the switch on, and
 * the current one keeps working). A stream that only audit let through (a
 * connect enforce denies: here a process that is not the bridge) carries
 * no tag, and no later revocation or lease finds it. */
/* guarantees: unix-stream-revocation */
Test(revoke_audit, an_enforce_switch_cuts_what_audit_left_at_the_next_revocation)
{
	const char *vmm = kh_path("vmm.sock");
	int lfd = sh_listen(vmm), acc[3], stranger_acc;
	struct sh_holder h, stranger;
	char out[8192];

	sh_start(&h, vmm);
	sh_start(&stranger, vmm);
	set_global("audit");
	install(7, h.pid, vmm, "", out, sizeof(out));
	connect_streams(&h, lfd, 2, acc);		   /* tagged, epoch 1 */
	connect_streams(&stranger, lfd, 1, &stranger_acc); /* audit let it through */
	cr_assert_eq(kh_would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE), 1,
		     "the stranger's connect is a would-deny");

	install(8, h.pid, vmm, "", out, sizeof(out));
	cr_assert_eq(member(out, "unix_cut"), 0, "%s", out);
	cr_assert_eq(member(out, "would_cut"), 2, "the two tagged streams: %s", out);
	connect_streams(&h, lfd, 1, acc + 2); /* tagged, epoch 2 */
	round_trip(&h, acc, 3, "audit, after generation 8");
	round_trip(&stranger, &stranger_acc, 1, "the stranger, after generation 8");

	/* The switch cuts nothing by itself. */
	set_sandbox("enforce");
	if (sh_lease_loaded())
		cr_assert_eq(sh_cmd(&h, 'w'), 1, "the lease stops the two stale streams' sends");
	else
		round_trip(&h, acc, 3, "after the switch");

	/* The next revocation cuts every tagged stream of an older epoch:
	 * the two audit left at generation 8, and the one of epoch 2. */
	install(9, h.pid, vmm, "", out, sizeof(out));
	cr_assert_eq(member(out, "unix_cut"), 3, "%s", out);
	cr_assert_eq(member(out, "would_cut"), 0, "%s", out);
	cr_assert_eq(sh_cmd(&h, 'e'), 3, "the bridge's streams: EOF and EPIPE");
	for (int i = 0; i < 3; i++)
		cr_assert(sh_end_cut(acc[i]), "accepted end %d cut", i);
	/* Untagged: not found, still flowing. */
	round_trip(&stranger, &stranger_acc, 1, "the stranger, after generation 9");
	for (int i = 0; i < 3; i++)
		close(acc[i]);
	close(stranger_acc);
	close(lfd);
}
