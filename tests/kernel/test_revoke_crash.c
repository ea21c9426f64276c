// SPDX-License-Identifier: Apache-2.0
/* A stream cut lost to a crash (user/loader/revokers/cut_intent.h): the writer
 * (`execgate install` / `retire`) dies after the record's epoch moved and
 * before the old execution's streams were cut. The test stops it there
 * with the test-only crash point EXECGATE_TEST_FAULT=epoch-moved
 * (user/loader/fault.h), checks that the hole is real (the stale streams
 * still carry data, the record holds the intent), and then that whoever
 * writes next cuts them and says so: a retried install (`unchanged`), a
 * retried retire, forget, and the next CLI call that opens the worker.
 * Cut means what test_revoke.c asserts: EOF on receive and EPIPE on send,
 * at both ends. The daemon's start-up finishes them too
 * (tests/daemon/test_restart.c). Each finisher has an audit twin (the last
 * test): the sandbox audits, so the same finisher counts the streams it
 * would cut, cuts none and clears the intent. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/fault.h"
#include "stream_holder.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c9"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define NSTREAMS 3

TestSuite(revoke_crash, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

/* The world of every test: execution 7 installed by the CLI with h as its
 * bridge, and NSTREAMS streams of it open to the VMM socket, data flowing
 * both ways. */
struct world {
	const char *vmm;
	int lfd, acc[NSTREAMS];
	struct sh_holder h;
	__u8 sb[EG_ID_BYTES];
};

static int install(struct world *w, unsigned gen, const char *fault, char *out, size_t size)
{
	char g[16], b[16], v[16];
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(b, sizeof(b), "%d", (int)w->h.pid);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (fault)
		setenv(EG_FAULT_ENV, fault, 1);
	rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", g, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--vmm-socket", w->vmm, "--json", NULL);
	unsetenv(EG_FAULT_ENV);
	return rc;
}

static int retire(const char *fault, char *out, size_t size)
{
	int rc;

	if (fault)
		setenv(EG_FAULT_ENV, fault, 1);
	rc = kh_cli(out, size, "retire", "--sandbox", SANDBOX, NULL);
	unsetenv(EG_FAULT_ENV);
	return rc;
}

static void world_start(struct world *w)
{
	char out[4096];

	signal(SIGPIPE, SIG_IGN);
	w->vmm = kh_path("vmm.sock");
	w->lfd = sh_listen(w->vmm);
	cr_assert_eq(eg_uuid_parse(SANDBOX, w->sb), 0);
	sh_start(&w->h, w->vmm);
	cr_assert_eq(install(w, 7, NULL, out, sizeof(out)), 0, "install 7: %s", out);
	for (int i = 0; i < NSTREAMS; i++) {
		cr_assert_eq(sh_cmd(&w->h, 'c'), 0, "bridge connect %d", i);
		w->acc[i] = accept(w->lfd, NULL, NULL);
		cr_assert(w->acc[i] >= 0, "accept");
	}
	cr_assert_eq(sh_cmd(&w->h, 'w'), NSTREAMS, "streams carry data at epoch 1");
}

/* The writer died at the crash point: the record is at the new epoch with
 * the intent set, and the stale streams still carry data both ways (the
 * hole the intent closes). */
static void assert_crashed(struct world *w, int rc, const char *out, __u64 epoch, __u32 state)
{
	struct eg_exec_record rec;

	cr_assert_eq(rc, EG_FAULT_EXIT, "the writer died at the crash point: exit %d: %s", rc, out);
	cr_assert_eq(eg_record_read(&kh.maps, w->sb, &rec), 0);
	cr_assert_eq(rec.epoch, epoch, "epoch moved to %llu", (unsigned long long)epoch);
	cr_assert_eq(rec.state, state);
	cr_assert_neq(rec.cut_pending, 0, "the intent to cut is in the record");
	if (sh_lease_loaded()) {
		/* The LSM tier's lease already refuses them; the cut is
		 * still owed, and counted below. */
		cr_assert_eq(sh_cmd(&w->h, 'w'), 0, "the lease refuses stale streams");
		return;
	}
	cr_assert_eq(sh_cmd(&w->h, 'w'), NSTREAMS, "stale streams still send (not cut yet)");
	for (int i = 0; i < NSTREAMS; i++)
		cr_assert_eq(send(w->acc[i], "y", 1, MSG_NOSIGNAL), 1, "accepted end %d sends", i);
}

static void assert_cut(struct world *w)
{
	struct eg_exec_record rec;

	cr_assert_eq(sh_cmd(&w->h, 'e'), NSTREAMS, "connecting ends: EOF and EPIPE");
	for (int i = 0; i < NSTREAMS; i++)
		cr_assert(sh_end_cut(w->acc[i]), "accepted end %d: EOF and EPIPE", i);
	if (eg_record_read(&kh.maps, w->sb, &rec) == 0)
		cr_assert_eq(rec.cut_pending, 0, "the intent is cleared");
}

static void world_stop(struct world *w)
{
	for (int i = 0; i < NSTREAMS; i++)
		close(w->acc[i]);
	close(w->lfd);
}

static int json_int(const char *out, const char *member)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", member);
	p = strstr(out, key);
	cr_assert(p, "%s in %s", member, out);
	return atoi(p + strlen(key));
}

/* guarantees: unix-stream-revocation */
Test(revoke_crash, retried_install_answers_unchanged_and_cuts)
{
	struct world w;
	char out[4096];

	world_start(&w);
	assert_crashed(&w, install(&w, 8, "epoch-moved", out, sizeof(out)), out, 2,
		       EG_RECORD_ACTIVE);

	cr_assert_eq(install(&w, 8, NULL, out, sizeof(out)), 0, "retried install: %s", out);
	cr_assert(strstr(out, "\"outcome\":\"unchanged\""), "unchanged: %s", out);
	cr_assert_eq(json_int(out, "unix_cut"), NSTREAMS, "the retry reports the cut: %s", out);
	cr_assert_eq(json_int(out, "unix_unreachable"), 0, "%s", out);
	cr_assert(strstr(out, "\"error\":null}"), "no stream error: %s", out);
	assert_cut(&w);

	/* Done is done: the next identical install cuts nothing. */
	cr_assert_eq(install(&w, 8, NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"unix_method\":null"), "no cut ran: %s", out);
	world_stop(&w);
}

/* guarantees: unix-stream-revocation */
Test(revoke_crash, retried_retire_cuts)
{
	struct world w;
	char out[4096];

	world_start(&w);
	assert_crashed(&w, retire("epoch-moved", out, sizeof(out)), out, 2, EG_RECORD_RETIRED);

	cr_assert_eq(retire(NULL, out, sizeof(out)), 0, "retried retire: %s", out);
	cr_assert(strstr(out, "streams: 3 cut, 0 unreachable"), "the retry reports the cut: %s",
		  out);
	assert_cut(&w);
	cr_assert_eq(retire(NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert_null(strstr(out, "streams:"), "nothing left to cut: %s", out);
	world_stop(&w);
}

/* guarantees: unix-stream-revocation */
Test(revoke_crash, forget_cuts_before_it_deletes)
{
	struct world w;
	struct eg_exec_record rec;
	char out[4096];

	world_start(&w);
	assert_crashed(&w, retire("epoch-moved", out, sizeof(out)), out, 2, EG_RECORD_RETIRED);

	cr_assert_eq(kh_cli(out, sizeof(out), "forget", "--sandbox", SANDBOX, "--json", NULL), 0,
		     "forget: %s", out);
	cr_assert_eq(json_int(out, "unix_cut"), NSTREAMS, "forget reports the cut: %s", out);
	cr_assert_geq(json_int(out, "endpoints_removed"), 1, "%s", out);
	cr_assert_eq(eg_record_read(&kh.maps, w.sb, &rec), -ENOENT, "record forgotten");
	assert_cut(&w);
	world_stop(&w);
}

/* guarantees: unix-stream-revocation */
Test(revoke_crash, next_cli_call_cuts)
{
	struct world w;
	char out[4096];

	world_start(&w);
	assert_crashed(&w, install(&w, 8, "epoch-moved", out, sizeof(out)), out, 2,
		       EG_RECORD_ACTIVE);

	/* A read-only command about nothing in particular. */
	cr_assert_eq(kh_cli(out, sizeof(out), "list", NULL), 0, "list: %s", out);
	cr_assert(strstr(out, "sandbox " SANDBOX ": finished the stream cut of epoch 2 that an "
			      "interrupted writer left: 3 cut, 0 unreachable"),
		  "list says what it finished: %s", out);
	assert_cut(&w);

	cr_assert_eq(install(&w, 8, NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"outcome\":\"unchanged\""), "%s", out);
	cr_assert(strstr(out, "\"unix_method\":null"), "already cut: %s", out);
	world_stop(&w);
}

/* An install refused as stale still leaves no stale stream behind: the CLI
 * finishes the pending cut of the sandbox it was refused for. */
/* guarantees: unix-stream-revocation */
Test(revoke_crash, refused_install_still_cuts)
{
	struct world w;
	char out[4096];

	world_start(&w);
	assert_crashed(&w, install(&w, 8, "epoch-moved", out, sizeof(out)), out, 2,
		       EG_RECORD_ACTIVE);

	cr_assert_eq(install(&w, 7, NULL, out, sizeof(out)), 6, "generation 7 is stale: %s", out);
	cr_assert(strstr(out, "sandbox " SANDBOX ": finished the stream cut of epoch 2 that an "
			      "interrupted writer left: 3 cut, 0 unreachable"),
		  "the refused install still cut: %s", out);
	assert_cut(&w);
	world_stop(&w);
}

/* A crash point is only ever a crash: without the variable the same
 * install runs to the end and cuts in the same call. */
/* guarantees: unix-stream-revocation */
Test(revoke_crash, other_fault_names_change_nothing)
{
	struct world w;
	char out[4096];

	world_start(&w);
	cr_assert_eq(install(&w, 8, "no-such-point", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"outcome\":\"replaced\""), "%s", out);
	cr_assert_eq(json_int(out, "unix_cut"), NSTREAMS, "%s", out);
	assert_cut(&w);
	world_stop(&w);
}

/* The audit twins of the finishers above (docs/design.md §19, "The rule":
 * a pending cut is finished against the record in the map, in its mode). */
enum finisher { F_INSTALL, F_RETIRE, F_FORGET, F_LIST, F_REFUSED, N_FINISHERS };

static const char *const finisher_names[N_FINISHERS] = {"a retried install", "a retried retire",
							"forget", "the next CLI call",
							"an install refused as stale"};

ParameterizedTestParameters(revoke_crash, every_finisher_has_an_audit_twin)
{
	static int f[N_FINISHERS];

	for (int i = 0; i < N_FINISHERS; i++)
		f[i] = i;
	return cr_make_param_array(int, f, N_FINISHERS);
}

/* guarantees: unix-stream-revocation */
ParameterizedTest(int *f, revoke_crash, every_finisher_has_an_audit_twin)
{
	const char *name = finisher_names[*f];
	bool retire_first = *f == F_RETIRE || *f == F_FORGET;
	struct eg_exec_record rec;
	struct world w;
	char out[4096], note[256];
	int rc;

	cr_log_info("audit, finished by %s", name);
	world_start(&w);
	rc = kh_cli(out, sizeof(out), "mode", "audit", "--sandbox", SANDBOX, NULL);
	cr_assert_eq(rc, 0, "mode audit: %s", out);
	rc = retire_first ? retire("epoch-moved", out, sizeof(out))
			  : install(&w, 8, "epoch-moved", out, sizeof(out));
	cr_assert_eq(rc, EG_FAULT_EXIT, "the writer died at the crash point: exit %d: %s", rc, out);
	cr_assert_eq(eg_record_read(&kh.maps, w.sb, &rec), 0);
	cr_assert_neq(rec.cut_pending, 0, "the intent to cut is in the record");

	snprintf(note, sizeof(note),
		 "sandbox " SANDBOX ": finished the stream cut of epoch 2%s that an interrupted "
		 "writer left: 0 cut, 0 unreachable, %d would be cut (audit, left running)",
		 retire_first ? " (retired)" : "", NSTREAMS);
	switch ((enum finisher) * f) {
	case F_INSTALL:
		rc = install(&w, 8, NULL, out, sizeof(out));
		cr_assert_eq(rc, 0, "retried install: %s", out);
		cr_assert(strstr(out, "\"outcome\":\"unchanged\""), "unchanged: %s", out);
		cr_assert_eq(json_int(out, "unix_cut"), 0, "%s", out);
		cr_assert_eq(json_int(out, "would_cut"), NSTREAMS, "%s", out);
		break;
	case F_RETIRE:
		rc = retire(NULL, out, sizeof(out));
		cr_assert_eq(rc, 0, "retried retire: %s", out);
		cr_assert(strstr(out, "streams: 0 cut, 0 unreachable, 3 would be cut (audit)"),
			  "%s", out);
		break;
	case F_FORGET:
		rc = kh_cli(out, sizeof(out), "forget", "--sandbox", SANDBOX, "--json", NULL);
		cr_assert_eq(rc, 0, "forget: %s", out);
		cr_assert_eq(json_int(out, "unix_cut"), 0, "%s", out);
		cr_assert_eq(json_int(out, "would_cut"), NSTREAMS, "%s", out);
		cr_assert_eq(eg_record_read(&kh.maps, w.sb, &rec), -ENOENT, "record forgotten");
		break;
	case F_LIST:
		rc = kh_cli(out, sizeof(out), "list", NULL);
		cr_assert_eq(rc, 0, "list: %s", out);
		cr_assert(strstr(out, note), "list says what it finished: %s", out);
		break;
	case F_REFUSED:
		rc = install(&w, 7, NULL, out, sizeof(out));
		cr_assert_eq(rc, 6, "generation 7 is stale: %s", out);
		cr_assert(strstr(out, note), "the refused install still finished: %s", out);
		break;
	case N_FINISHERS:
		break;
	}
	if (*f == F_FORGET && sh_lease_loaded()) {
		/* Nothing was cut, but the sandbox's own mode went with its
		 * record: the LSM tier's lease now decides the stale streams
		 * in the global mode, enforce, and refuses their I/O. */
		cr_assert_eq(sh_cmd(&w.h, 'w'), 0,
			     "forget: the lease enforces once the record "
			     "and its audit mode are gone");
	} else {
		/* Nothing cut: every stream still carries data both ways (the
		 * LSM tier's lease, where loaded, audits too). */
		cr_assert_eq(sh_cmd(&w.h, 'w'), NSTREAMS, "%s: audit left every stream running",
			     name);
		for (int i = 0; i < NSTREAMS; i++)
			cr_assert_eq(send(w.acc[i], "y", 1, MSG_NOSIGNAL), 1,
				     "accepted end %d sends", i);
	}
	/* The intent is done. */
	if (eg_record_read(&kh.maps, w.sb, &rec) == 0)
		cr_assert_eq(rec.cut_pending, 0, "%s: the intent is cleared", name);
	world_stop(&w);
}
