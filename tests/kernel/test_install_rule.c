// SPDX-License-Identifier: Apache-2.0
/* The install rule is the library's (docs/fleet.md, "The install rule"), so
 * `execgate install` obeys it as PUT /v1/sandboxes/{uuid} does: a worker
 * other than this one's id (node.worker) is refused, fleet on or off, and
 * while execgated runs the fleet (<state_dir>/fleet/on, written here through
 * the library call execgated makes) only the execution the selection stored
 * in <state_dir>/fleet/selections names installs, that selection verified
 * against the worker's key set. Refusals exit 10 and write nothing. The
 * daemon's side, with a real etcd: tests/daemon/test_fleet.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "execgate/execgate.h"
#include "harness.h"

#define S	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000011e5"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define WORKER_B "b0000000-0000-4000-8000-00000000000b"

TestSuite(install_rule, .init = kh_setup, .fini = kh_teardown, .timeout = 90);

/* gen "7.2": generation 7, activation 2; "7": activation 1 */
static int install(const char *worker, const char *gen, pid_t bridge, const char *sock, char *out,
		   size_t size)
{
	char b[16], g[16];
	const char *dot = strchr(gen, '.');

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(g, sizeof(g), "%.*s", dot ? (int)(dot - gen) : (int)strlen(gen), gen);
	return kh_cli(out, size, "install", "--sandbox", S, "--worker", worker, "--generation", g,
		      "--activation", dot ? dot + 1 : "1", "--bridge-pid", b, "--bridge-socket",
		      sock, NULL);
}

/* `execgate show`'s state of S: "absent" (exit 7), "active", "retired". */
static const char *state(void)
{
	static char out[4096];
	int rc = kh_cli(out, sizeof(out), "show", "--sandbox", S, "--json", NULL);

	if (rc == 7)
		return "absent";
	cr_assert_eq(rc, 0, "show: exit %d: %s", rc, out);
	return strstr(out, "\"state\":\"retired\"") ? "retired" : "active";
}

static void node_worker(const char *id)
{
	char out[1024];
	int rc = kh_cli(out, sizeof(out), "node-key", "init", "--worker-id", id, NULL);

	cr_assert_eq(rc, 0, "node-key init: %s", out);
}

/* What execgated does at start (eg_worker_fleet_set). */
static void fleet(bool on)
{
	struct eg_worker_config cfg = {.pin_dir = kh.pin_dir, .state_dir = kh.state_dir};
	char err[EG_ERR_MAX];
	struct eg_worker *w;

	cr_assert_eq(eg_worker_open(&cfg, &w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_worker_fleet_set(w, on, err, sizeof(err)), 0, "%s", err);
	eg_worker_close(w);
}

/* A selection of S signed by the test's key, addressed to WORKER_A, stored
 * as execgated's fleet worker stores it ("<revision> <text>\n"). */
static void store(const char *worker, const char *gen, const char *seed_kid, bool tamper)
{
	char seed[300], text[512], path[300];
	FILE *f;
	int rc;

	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, seed_kid);
	rc = kh_issue(text, sizeof(text), "selection", "--key", seed, "--sandbox", S, "--worker",
		      worker, "--generation", gen, "--activation", "1", "--for", WORKER_A, NULL);
	cr_assert_eq(rc, 0, "execgate-issue selection: %s", text);
	text[strcspn(text, "\n")] = '\0';
	if (tamper) /* a byte of the signature: still base64url, no longer signed */
		text[strlen(text) - 5] = text[strlen(text) - 5] == 'A' ? 'B' : 'A';
	snprintf(path, sizeof(path), "%s/fleet/selections/%s", kh.state_dir, S);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "12 %s\n", text);
	fclose(f);
}

/* An install that the rule refuses: exit 10, exactly this message, and
 * the record in state after as before. */
static void refused(const char *worker, const char *gen, pid_t bridge, const char *sock,
		    const char *why, const char *after)
{
	char out[2048], want[1024];
	int rc = install(worker, gen, bridge, sock, out, sizeof(out));

	snprintf(want, sizeof(want), "execgate: install: sandbox %s: %s\n", S, why);
	cr_assert_eq(rc, 10, "exit %d: %s", rc, out);
	cr_assert_str_eq(out, want);
	cr_assert_str_eq(state(), after);
}

/* guarantees: none */
Test(install_rule, another_worker_is_refused_exit_10)
{
	struct kh_child bridge;
	const char *sock = kh_path("bridge.sock");
	char out[2048], why[256];
	int rc;

	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, sock), 0);
	node_worker(WORKER_A);
	snprintf(why, sizeof(why), "worker %s: not this worker, which is %s (wrong-worker)",
		 WORKER_B, WORKER_A);
	refused(WORKER_B, "7", bridge.pid, sock, why, "absent");
	/* the fleet off: this worker's own id installs */
	rc = install(WORKER_A, "7", bridge.pid, sock, out, sizeof(out));
	cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
	cr_assert_str_eq(state(), "active");
	/* and a later install naming another worker leaves it as it is */
	refused(WORKER_B, "8", bridge.pid, sock, why, "active");
}

/* guarantees: none */
Test(install_rule, fleet_on_only_the_stored_selection_installs)
{
	struct kh_child bridge;
	const char *sock = kh_path("bridge.sock");
	char out[2048], why[768], path[300];
	int rc;

	kh_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, sock), 0);
	node_worker(WORKER_A);
	fleet(true);
	snprintf(path, sizeof(path), "%s/fleet/on", kh.state_dir);
	cr_assert_eq(access(path, F_OK), 0, "no marker %s", path);

	/* no selection stored: refused, nothing written */
	refused(WORKER_A, "7", bridge.pid, sock,
		"not selected: no signed selection for this sandbox yet", "absent");

	/* a stored selection that does not verify is no selection */
	snprintf(path, sizeof(path), "%s/fleet/selections", kh.state_dir);
	cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
	store(WORKER_A, "7", kh.kid, true);
	snprintf(why, sizeof(why), "not selected: stored selection %s/%s: bad-signature", path, S);
	refused(WORKER_A, "7", bridge.pid, sock, why, "absent");

	/* the genuine one: only its execution installs */
	store(WORKER_A, "7", kh.kid, false);
	refused(WORKER_A, "8", bridge.pid, sock,
		"not selected: \"generation\" is not the selection's", "absent");
	rc = install(WORKER_A, "7", bridge.pid, sock, out, sizeof(out));
	cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
	cr_assert_str_eq(state(), "active");

	/* the fleet moves it to B and retires it here: an install cannot
	 * bring it back (a new attempt of the same generation would) */
	store(WORKER_B, "8", kh.kid, false);
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", S, NULL);
	cr_assert_eq(rc, 0, "retire: exit %d: %s", rc, out);
	refused(WORKER_A, "7.2", bridge.pid, sock,
		"not selected: the selection names another worker", "retired");

	/* the fleet off (execgated started without it): the rule is the
	 * worker's own again */
	fleet(false);
	rc = install(WORKER_A, "7.2", bridge.pid, sock, out, sizeof(out));
	cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
	cr_assert_str_eq(state(), "active");
}
