// SPDX-License-Identifier: Apache-2.0
/* The fleet at scale (`make soak-fleet-scale`, issue 39): hollow workers
 * (user/fleetd/hollow.h: the real fleet worker over a recording backend)
 * in this one process against a 3-member etcd on loopback with client TLS
 * and auth (tests/fleet/etcd_env.c), a control plane that places every
 * sandbox and then moves sandboxes at a steady rate and in bursts, fencing
 * each move (the old worker's signed ack says retired), and the faults of
 * the fleet soak: a leader kill, a member restart, a compaction, a tenth
 * of the workers cut off etcd. One table per phase; bounded (it stops by
 * itself); everything it makes is removed at exit, also on failure.
 *
 * The database bound (docs/fleet.md, "Database size"): once a move is
 * fenced the control plane deletes the old worker's copy of the selection
 * and its ack, and a maintenance thread compacts to the revision of one
 * period ago and defragments one member at a time when most of its file
 * is free (--maint-seconds; --no-gc turns both off, to compare). etcd's
 * own figures (watchers, db size in use) come from its /metrics.
 *
 * Beside the hollow workers run a few real execgated instances (--real,
 * real.h): the same etcd, the same control plane, moves to and from them
 * like any other; installed over their API, and the fence's safety check
 * asked of them as a caller would (POST /v1/check of a capability for the
 * old execution), with the new execution's check beside it as the
 * control that must allow. They are not cut off in the partition phase.
 * Every worker is etcd's root user (the roles of docs/fleet.md are the
 * fleet soak's to test). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <sodium.h>
#include "core/ids.h"
#include "core/key_file.h"
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"
#include "fleet/etcd_metrics.h"
#include "fleetd/hollow.h"
#include "fleetd/worker.h"
#include "soak/common.h"
#include "soak-fleet-scale/real.h"

#define MOVERS 64
/* The control plane's etcd handles: as many requests in flight. One
 * handle behind one lock made every put of 64 movers wait in turn (92
 * moves/s at most, docs/bench/2026-12-07-fleet-scale-spread.md). */
#define CLIENTS	    8
#define WAIT_MS	    10000
#define MAX_SAMPLES 400000
#define ERR_KINDS   11
#define PREFIX	    "/egscale"
#define PHASE_MAX   8

struct sc_worker {
	uint8_t id[EG_ID_BYTES];
	char id_text[EG_UUID_TEXT_LEN], state[300];
	struct eg_fleet_hollow *h;
	struct eg_fleet_worker *fw;
	int real; /* its slot in real.c, or -1: a hollow worker */
	bool cut;
	unsigned cuts; /* partitions it was cut off by (f_partition) */
};

/* What the acks say, per sandbox: the newest ack of each worker that
 * wrote one lately (the two ends of a move). */
struct sc_sandbox {
	uint8_t id[EG_ID_BYTES];
	int worker;
	uint64_t gen;
	bool busy;
	int ack_worker[2];
	char ack_state[2][10];
	uint64_t ack_gen[2];
	int fenced_from;     /* the old worker of its last fenced move, or -1 */
	uint64_t fenced_gen; /* the generation that move retired there */
};

struct sc_phase {
	const char *name;
	double *ack_ms, *fence_ms;
	size_t n_ack, n_fence;
	uint64_t moves, safety, late_safety, errors[ERR_KINDS];
	/* moves not acked or fenced in time because the soak's own partition
	 * cut one of their workers off while they were in flight: the fault
	 * did what it is there to do, so not errors (their own row) */
	uint64_t cut_moves;
	/* the first lines the workers logged at warning or above, to say
	 * what the log-error and log-warn counts are */
	char logged[3][240];
	unsigned n_logged;
	double reconnect_s, read_s, etcd_cpu_s, self_cpu_s, db_mib, rss_mib, seconds;
	size_t read_keys, ack_keys;
	/* etcd's /metrics at the phase's end: watchers and streams summed
	 * over the live members, the db of the largest one */
	double watchers, streams, db_in_use_mib, etcd_rss_mib, end_s;
	uint64_t deletes, compactions, defrags, maint_errors;
	double defrag_max_s;
	/* tokens etcd gave the hollow workers, all since the start, at the
	 * phase's end (status etcd_logins summed) */
	uint64_t logins;
	/* the real execgated instances: moves to or from one, checks of an
	 * old execution after its fence (and how many were refused), checks
	 * of the new one (allowed: the control), CPU of all, largest RSS */
	uint64_t real_moves, real_checks, real_refused, real_controls;
	double real_cpu_s, real_rss_mib;
};

static const char *const err_names[ERR_KINDS] = {
    "put",   "install", "ack-timeout", "fence-timeout", "log-error", "log-warn",
    "watch", "other",	"delete",      "real-install",	"real-check"};

static struct {
	char bin[400], dir[200], cp_seed[300], root_dir[260];
	unsigned n_workers, n_sandboxes, phase_s, rate, maint_s;
	unsigned n_hollow, n_real; /* n_workers = n_hollow + n_real, the real last */
	bool gc;
	uint64_t t_start;
	/* when main began, and the longest a phase took with its end */
	uint64_t t_launch, longest_phase_ns;
	unsigned skipped; /* phases not run: past the 20-minute bound */
	struct eg_test_etcd etcd;
	/* the control plane's etcd handles: one session (a login between
	 * them), each used by one thread at a time (cp_take) */
	struct eg_etcd *cli[CLIENTS];
	pthread_mutex_t cli_lock[CLIENTS];
	struct eg_etcd_session *cli_session;
	unsigned cli_next;
	pthread_mutex_t lock;
	pthread_cond_t acked;
	struct sc_worker *w;
	struct sc_sandbox *s;
	uint8_t cp_sk[64], cp_kid[EG_KEY_ID_LEN];
	struct sc_phase ph[PHASE_MAX];
	int n_ph;
	volatile int cur, stop, moving;
	volatile double rate_now;
} sc;

static void cleanup(void)
{
	static int done;
	char cmd[300];

	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;

	sc_real_stop_all();
	eg_test_etcd_stop(&sc.etcd);
	if (sc.dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sc.dir);
		if (system(cmd))
			fprintf(stderr, "soak-fleet-scale: %s failed\n", cmd);
	}
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "soak-fleet-scale: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	/* not exit(): the workers' threads still run, and must not meet
	 * what the exit handlers free */
	cleanup();
	_exit(1);
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(1);
}

static void count_err(int kind)
{
	__atomic_add_fetch(&sc.ph[sc.cur].errors[kind], 1, __ATOMIC_RELAXED);
}

static void sample(double *arr, size_t *n, double v)
{
	pthread_mutex_lock(&sc.lock);
	if (*n < MAX_SAMPLES)
		arr[(*n)++] = v;
	pthread_mutex_unlock(&sc.lock);
}

/* execgate-issue keygen --out dir: the kid printed. */
static void keygen(const char *dir, char *kid, size_t size)
{
	char cmd[700];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s/execgate-issue' keygen --out '%s'", sc.bin, dir);
	p = popen(cmd, "r");
	if (!p || !fgets(kid, (int)size, p))
		die("%s failed", cmd);
	kid[strcspn(kid, "\n")] = '\0';
	if (pclose(p))
		die("%s failed", cmd);
}

static void load_sk(const char *seed_path, uint8_t sk[64], uint8_t kid[EG_KEY_ID_LEN],
		    uint8_t pk_out[32])
{
	uint8_t seed[32], pk[32];

	if (eg_key_file_load(seed_path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, sizeof(seed),
			     NULL) != EG_KEY_OK)
		die("%s: not a seed", seed_path);
	crypto_sign_seed_keypair(pk, sk, seed);
	eg_key_id(pk, kid);
	if (pk_out)
		memcpy(pk_out, pk, 32);
}

/* A control-plane handle, the next in turn, for one thread; cp_give()
 * gives it back. */
static struct eg_etcd *cp_take(unsigned *slot)
{
	*slot = __atomic_fetch_add(&sc.cli_next, 1, __ATOMIC_RELAXED) % CLIENTS;
	pthread_mutex_lock(&sc.cli_lock[*slot]);
	return sc.cli[*slot];
}

static void cp_give(unsigned slot)
{
	pthread_mutex_unlock(&sc.cli_lock[slot]);
}

static void put(const char *key, const char *value, int64_t *rev)
{
	char err[EG_ERR_MAX];
	unsigned slot;
	int rc;

	rc = eg_etcd_put(cp_take(&slot), key, value, strlen(value), rev, err, sizeof(err));
	cp_give(slot);
	if (rc)
		count_err(0);
}

static void publish_keyset(const char *root_kid, const char *keys_dir)
{
	struct eg_keyset_doc d;
	uint8_t rsk[64], rkid[EG_KEY_ID_LEN], out[EG_KSD_MAX_LEN], pk[32];
	char path[600], text[EG_KSD_TEXT_MAX];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s.seed", keys_dir, root_kid);
	load_sk(path, rsk, rkid, NULL);
	memset(&d, 0, sizeof(d));
	d.version = 1;
	memcpy(d.root_key_id, rkid, EG_KEY_ID_LEN);
	d.keyset_version = 1;
	d.issued_at = (uint64_t)time(NULL);
	d.n = 1;
	memcpy(pk, sc.cp_sk + 32, 32);
	memcpy(d.keys[0].pk, pk, 32);
	memcpy(d.keys[0].kid, sc.cp_kid, EG_KEY_ID_LEN);
	if (eg_ksd_sign(&d, rsk, out, &len) != EG_KSD_OK)
		die("key set: not signed");
	eg_ksd_to_text(out, len, text);
	put(PREFIX "/keyset", text, NULL);
}

/* A selection of sandbox s for worker to, addressed to aud, written under
 * aud's prefix. The put's time in *t (CLOCK_MONOTONIC ns). */
static void publish_sel(int s, int to, uint64_t gen, int aud, uint64_t *t)
{
	struct eg_selection sel;
	uint8_t raw[EG_SEL_MAX_LEN];
	char text[EG_SEL_TEXT_MAX], key[300], u[EG_UUID_TEXT_LEN];
	size_t len;

	memset(&sel, 0, sizeof(sel));
	sel.version = 2;
	sel.id.substrate = 2;
	sel.id.activation = 1;
	memcpy(sel.key_id, sc.cp_kid, EG_KEY_ID_LEN);
	memcpy(sel.id.sandbox, sc.s[s].id, EG_ID_BYTES);
	memcpy(sel.id.worker, sc.w[to].id, EG_ID_BYTES);
	memcpy(sel.audience, sc.w[aud].id, EG_ID_BYTES);
	sel.id.generation = gen;
	sel.issued_at = (uint64_t)time(NULL);
	len = eg_sel_sign(&sel, sc.cp_sk, raw);
	eg_sel_to_text(raw, len, text);
	eg_uuid_format(sc.s[s].id, u);
	snprintf(key, sizeof(key), PREFIX "/workers/%s/selections/%s", sc.w[aud].id_text, u);
	*t = soak_now_ns();
	put(key, text, NULL);
}

static int index_of(const char *uuid_text)
{
	size_t n = strlen(uuid_text);

	return n < 12 ? -1 : (int)strtol(uuid_text + n - 12, NULL, 16);
}

/* The control plane's watch of every ack: the sandbox's table, and a
 * broadcast to the movers. */
static int on_acks(const struct eg_etcd_event *ev, size_t n, int64_t rev, void *ctx)
{
	(void)rev;
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		json_t *o;
		int w, s;
		const char *st;
		uint64_t g;
		struct sc_sandbox *sb;
		int slot;

		if (ev[i].type != EG_ETCD_PUT)
			continue;
		o = json_loadb(ev[i].kv.value, ev[i].kv.value_len, 0, NULL);
		if (!o)
			continue;
		w = index_of(json_string_value(json_object_get(o, "worker")) ?: "");
		s = index_of(json_string_value(json_object_get(o, "sandbox")) ?: "");
		st = json_string_value(json_object_get(o, "state")) ?: "";
		g = (uint64_t)json_integer_value(
		    json_object_get(json_object_get(o, "selection"), "generation"));
		if (w >= 0 && (unsigned)w < sc.n_workers && s >= 0 &&
		    (unsigned)s < sc.n_sandboxes) {
			pthread_mutex_lock(&sc.lock);
			sb = &sc.s[s];
			slot = sb->ack_worker[0] == w ? 0 : sb->ack_worker[1] == w ? 1 : -1;
			if (slot < 0) {
				slot = sb->ack_worker[0] == sb->worker ? 1 : 0;
				sb->ack_worker[slot] = w;
			}
			snprintf(sb->ack_state[slot], sizeof(sb->ack_state[slot]), "%s", st);
			sb->ack_gen[slot] = g;
			pthread_cond_broadcast(&sc.acked);
			pthread_mutex_unlock(&sc.lock);
		}
		json_decref(o);
	}
	return sc.stop ? 1 : 0;
}

static void *ack_watcher(void *arg)
{
	const struct eg_etcd_watch_spec spec = {PREFIX "/acks/", true};
	struct eg_etcd *e;
	char err[EG_ERR_MAX];
	int64_t compact = 0, from = 1;

	(void)arg;
	if (eg_etcd_open_auth(sc.etcd.endpoints, 5000, &sc.etcd.admin, &e, err, sizeof(err)))
		die("ack watch: %s", err);
	while (!sc.stop) {
		int rc = eg_etcd_watch(e, &spec, 1, from, on_acks, NULL, &sc.stop, &compact, err,
				       sizeof(err));

		if (rc == -ECANCELED)
			from = compact + 1;
		else if (rc && !sc.stop) {
			count_err(6);
			usleep(100000);
		}
	}
	eg_etcd_close(e);
	return NULL;
}

/* Waits until worker w acked sandbox s in one of the states with
 * generation gen; false after WAIT_MS. Under sc.lock. */
static bool wait_ack(int s, int w, uint64_t gen, const char *st1, const char *st2)
{
	struct timespec dl;
	struct sc_sandbox *sb = &sc.s[s];

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += WAIT_MS / 1000;
	for (;;) {
		for (int k = 0; k < 2; k++)
			if (sb->ack_worker[k] == w && sb->ack_gen[k] == gen &&
			    (!strcmp(sb->ack_state[k], st1) || !strcmp(sb->ack_state[k], st2)))
				return true;
		if (pthread_cond_timedwait(&sc.acked, &sc.lock, &dl) == ETIMEDOUT)
			return false;
	}
}

/* 0, or the kind of error to count (err_names). */
static int install(int w, int s, uint64_t gen)
{
	struct eg_install_spec spec;
	struct eg_install_report rep;
	char err[EG_ERR_MAX];

	if (sc.w[w].real >= 0) {
		char u[EG_UUID_TEXT_LEN], out[2048];
		int st;

		eg_uuid_format(sc.s[s].id, u);
		st = sc_real_install(sc.w[w].real, u, sc.w[w].id_text, gen, out, sizeof(out));
		if (st == 200)
			return 0;
		fprintf(stderr,
			"soak-fleet-scale: install of %s g%llu on real worker %d: %d %.300s\n", u,
			(unsigned long long)gen, w, st, out);
		return 9; /* real-install */
	}
	memset(&spec, 0, sizeof(spec));
	memcpy(spec.sandbox, sc.s[s].id, EG_ID_BYTES);
	memcpy(spec.worker, sc.w[w].id, EG_ID_BYTES);
	spec.substrate = 2;
	spec.generation = gen;
	spec.activation = 1;
	spec.bridge_pid = getpid();
	return eg_fleet_worker_install(sc.w[w].fw, &spec, NULL, &rep, err, sizeof(err)) ? 1 : 0;
}

/* After the fence, what the old worker a was sent for sandbox s and what
 * it acked are of no more use (docs/fleet.md, "Database size"): both are
 * deleted. The worker keeps the selection in force (a delete changes
 * nothing there), so it goes on refusing the old execution; phase_end()
 * checks that again once the deletes have reached it. */
static void forget_old_copy(struct sc_phase *p, int s, int a)
{
	struct eg_etcd *cli;
	unsigned slot;
	char key[300], u[EG_UUID_TEXT_LEN], err[EG_ERR_MAX];

	eg_uuid_format(sc.s[s].id, u);
	for (int k = 0; k < 2; k++) {
		int rc;

		snprintf(key, sizeof(key),
			 k ? PREFIX "/acks/%s/%s" : PREFIX "/workers/%s/selections/%s",
			 sc.w[a].id_text, u);
		cli = cp_take(&slot);
		rc = eg_etcd_delete(cli, key, false, NULL, err, sizeof(err));
		cp_give(slot);
		if (rc)
			count_err(8);
		else
			__atomic_add_fetch(&p->deletes, 1, __ATOMIC_RELAXED);
	}
}

/* Would worker w admit sandbox s's execution at generation gen? A hollow
 * worker answers from its recording backend; a real one is asked as a
 * caller asks it, POST /v1/check of a capability the control plane signs
 * for that execution (an answer that is no verdict counts real-check and
 * gives -1). */
static int admits(int s, int w, uint64_t gen)
{
	struct eg_identity id;
	char token[EG_CAP_TEXT_MAX], why[300];
	int rc;

	if (sc.w[w].real < 0)
		return eg_fleet_hollow_admits(sc.w[w].h, sc.s[s].id, gen, 1) ? 1 : 0;
	memset(&id, 0, sizeof(id));
	memcpy(id.sandbox, sc.s[s].id, EG_ID_BYTES);
	memcpy(id.worker, sc.w[w].id, EG_ID_BYTES);
	id.substrate = EG_SUBSTRATE_FC_HOST;
	id.generation = gen;
	id.activation = 1;
	soak_cap_text(token, sc.cp_sk, sc.cp_kid, &id, EG_SCOPE_EXEC, 60);
	rc = sc_real_check(sc.w[w].real, token, why, sizeof(why));
	if (rc < 0) {
		count_err(10);
		fprintf(stderr, "soak-fleet-scale: check on real worker %d: %s\n", w, why);
	}
	return rc;
}

/* After its fence: the old execution must not be admitted by the old
 * worker. */
static bool old_admitted(struct sc_phase *p, int s, int a, uint64_t gen)
{
	int rc = admits(s, a, gen);

	if (sc.w[a].real >= 0) {
		__atomic_add_fetch(&p->real_checks, 1, __ATOMIC_RELAXED);
		if (rc == 0)
			__atomic_add_fetch(&p->real_refused, 1, __ATOMIC_RELAXED);
	}
	return rc == 1;
}

/* The control beside the safety check: a real worker that just installed
 * the new execution admits it (a check that cannot allow would pass the
 * safety check too). */
static void real_control(struct sc_phase *p, int s, int b, uint64_t gen)
{
	int rc = admits(s, b, gen);

	if (rc == 1)
		__atomic_add_fetch(&p->real_controls, 1, __ATOMIC_RELAXED);
	else if (rc == 0)
		count_err(10);
}

/* Was worker a or b cut off since the move read their partition counts? */
static bool cut_during(int a, unsigned ca, int b, unsigned cb)
{
	bool r;

	pthread_mutex_lock(&sc.lock);
	r = sc.w[a].cut || sc.w[b].cut || sc.w[a].cuts != ca || sc.w[b].cuts != cb;
	pthread_mutex_unlock(&sc.lock);
	return r;
}

/* A move that timed out: cut off by the partition, or an error of kind. */
static void timed_out(struct sc_phase *p, int kind, int a, unsigned ca, int b, unsigned cb)
{
	if (cut_during(a, ca, b, cb))
		__atomic_add_fetch(&p->cut_moves, 1, __ATOMIC_RELAXED);
	else
		count_err(kind);
}

/* One move, make-before-break: B is selected and installed, then A is
 * told, and the move is fenced once A's signed ack says retired. */
static void move(int s)
{
	struct sc_phase *p = &sc.ph[sc.cur];
	int a = sc.s[s].worker, b;
	uint64_t g = sc.s[s].gen + 1, t0, t1;
	unsigned ca, cb;
	bool ok;
	int k;

	do
		b = (int)soak_rand(sc.n_workers);
	while ((b == a || sc.w[b].cut) && sc.n_workers > 1);
	pthread_mutex_lock(&sc.lock);
	ca = sc.w[a].cuts;
	cb = sc.w[b].cuts;
	pthread_mutex_unlock(&sc.lock);
	if (sc.w[a].real >= 0 || sc.w[b].real >= 0)
		__atomic_add_fetch(&p->real_moves, 1, __ATOMIC_RELAXED);
	publish_sel(s, b, g, b, &t0);
	pthread_mutex_lock(&sc.lock);
	ok = wait_ack(s, b, g, "pending", "active");
	pthread_mutex_unlock(&sc.lock);
	if (!ok) {
		timed_out(p, 2, a, ca, b, cb);
		return; /* the next move of it starts above the generation */
	}
	sample(p->ack_ms, &p->n_ack, (double)(soak_now_ns() - t0) / 1e6);
	k = install(b, s, g);
	if (k)
		count_err(k);
	else if (sc.w[b].real >= 0)
		real_control(p, s, b, g);
	publish_sel(s, b, g, a, &t1);
	pthread_mutex_lock(&sc.lock);
	ok = wait_ack(s, a, g, "retired", "absent");
	sc.s[s].worker = b;
	sc.s[s].gen = g;
	pthread_mutex_unlock(&sc.lock);
	if (!ok) {
		timed_out(p, 3, a, ca, b, cb);
		return;
	}
	sample(p->fence_ms, &p->n_fence, (double)(soak_now_ns() - t1) / 1e6);
	__atomic_add_fetch(&p->moves, 1, __ATOMIC_RELAXED);
	/* the fence passed: the old execution must not be admitted there */
	if (old_admitted(p, s, a, g - 1))
		__atomic_add_fetch(&p->safety, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&sc.lock);
	sc.s[s].fenced_from = a;
	sc.s[s].fenced_gen = g - 1;
	pthread_mutex_unlock(&sc.lock);
	if (sc.gc)
		forget_old_copy(p, s, a);
}

static uint64_t next_ns; /* under sc.lock */

/* A mover takes a free sandbox at the rate's pace (shared by all). */
static void *mover(void *arg)
{
	(void)arg;
	while (!sc.stop) {
		int s = -1;
		double r = sc.rate_now;

		uint64_t now, at;

		if (!sc.moving || r <= 0) {
			usleep(20000);
			continue;
		}
		/* one shared pace: the next move starts 1/rate after the last
		 * one started, whichever mover is free (a mover late by more
		 * than a second does not make up for it) */
		pthread_mutex_lock(&sc.lock);
		now = soak_now_ns();
		if (next_ns + 1000000000ull < now)
			next_ns = now;
		at = next_ns;
		next_ns += (uint64_t)(1e9 / r);
		pthread_mutex_unlock(&sc.lock);
		if (at > now)
			usleep((useconds_t)((at - now) / 1000));
		pthread_mutex_lock(&sc.lock);
		for (int tries = 0; tries < 8 && s < 0; tries++) {
			int c = (int)soak_rand(sc.n_sandboxes);

			if (!sc.s[c].busy && !sc.w[sc.s[c].worker].cut)
				s = c;
		}
		if (s >= 0)
			sc.s[s].busy = true;
		pthread_mutex_unlock(&sc.lock);
		if (s < 0)
			continue;
		move(s);
		pthread_mutex_lock(&sc.lock);
		sc.s[s].busy = false;
		pthread_mutex_unlock(&sc.lock);
	}
	return NULL;
}

static void worker_log(int prio, const char *line, void *ctx)
{
	struct sc_phase *p = &sc.ph[sc.cur];
	unsigned i;

	(void)ctx;
	if (prio > 4)
		return;
	count_err(prio <= 3 ? 4 : 5);
	i = __atomic_fetch_add(&p->n_logged, 1, __ATOMIC_RELAXED);
	if (i < 3)
		snprintf(p->logged[i], sizeof(p->logged[i]), "%s", line);
}

/* A real worker: execgated with its own files under the run's directory. */
static void real_start(int i)
{
	struct sc_worker *w = &sc.w[i];
	char err[EG_ERR_MAX], dir[300];
	const struct sc_real_etcd e = {
	    .endpoints = sc.etcd.endpoints,
	    .cacert = sc.etcd.ca,
	    .cert = sc.etcd.client_cert,
	    .key = sc.etcd.client_key,
	    .user = "root",
	    .password_file = sc.etcd.root_password_file,
	    .prefix = PREFIX,
	    .root_keys = sc.root_dir,
	};

	snprintf(dir, sizeof(dir), "%s/real%d", sc.dir, i);
	w->real = sc_real_start(sc.bin, dir, &e, w->id_text, err, sizeof(err));
	if (w->real < 0)
		die("real worker %d: %s", i, err);
}

static void worker_start(int i)
{
	struct sc_worker *w = &sc.w[i];
	char err[EG_ERR_MAX], pub[400];
	bool created;
	struct eg_fleet_worker_config fc = {
	    .backend = &eg_fleet_backend_hollow,
	    .state_dir = w->state,
	    .worker_id = w->id,
	    .endpoints = sc.etcd.endpoints,
	    .etcd_auth = &sc.etcd.admin,
	    .prefix = PREFIX,
	    .root_keys = sc.root_dir,
	    .reconcile_interval = 60,
	    .log = worker_log,
	};

	snprintf(w->id_text, sizeof(w->id_text), "00000000-0000-4000-8000-%012x", i);
	eg_uuid_from_text(w->id_text, w->id);
	w->real = -1;
	if ((unsigned)i >= sc.n_hollow) {
		real_start(i);
		return;
	}
	snprintf(w->state, sizeof(w->state), "%s/w%d", sc.dir, i);
	if (mkdir(w->state, 0700))
		die("%s: %s", w->state, strerror(errno));
	if (eg_node_key_init(w->state, w->id_text, pub, sizeof(pub), &created, err, sizeof(err)))
		die("worker %d: %s", i, err);
	if (eg_fleet_hollow_new(w->id, w->state, NULL, &w->h, err, sizeof(err)))
		die("worker %d: %s", i, err);
	fc.backend_ctx = w->h;
	if (eg_fleet_worker_open(&fc, &w->fw, err, sizeof(err)) ||
	    eg_fleet_worker_start(w->fw, err, sizeof(err)))
		die("worker %d: %s", i, err);
}

static bool all_connected(int skip_member_port)
{
	char port[16];

	snprintf(port, sizeof(port), ":%d", skip_member_port);
	for (unsigned i = 0; i < sc.n_workers; i++) {
		json_t *st;
		bool ok;
		const char *ep;

		if (sc.w[i].cut)
			continue;
		if (sc.w[i].real >= 0) {
			char ep[200];

			if (sc_real_connected(sc.w[i].real, ep, sizeof(ep)) != 1 ||
			    (skip_member_port && strstr(ep, port)))
				return false;
			continue;
		}
		st = eg_fleet_worker_status(sc.w[i].fw);
		ep = json_string_value(json_object_get(st, "endpoint")) ?: "";
		ok = json_is_true(json_object_get(st, "connected")) &&
		     (!skip_member_port || !strstr(ep, port));
		json_decref(st);
		if (!ok)
			return false;
	}
	return true;
}

static double cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Each member's CPU seconds into c, its pid into pids. */
static void etcd_cpu(double c[EG_TEST_ETCD_MAX], pid_t pids[EG_TEST_ETCD_MAX])
{
	for (size_t i = 0; i < sc.etcd.n; i++) {
		pids[i] = sc.etcd.m[i].pid;
		c[i] = pids[i] ? cpu_of(pids[i]) : 0;
	}
}

/* The CPU the members used between two etcd_cpu(): a member killed or
 * restarted in between counts from its new start (or not at all). */
static double etcd_cpu_delta(const double c0[], const pid_t p0[])
{
	double c1[EG_TEST_ETCD_MAX], d = 0;
	pid_t p1[EG_TEST_ETCD_MAX];

	etcd_cpu(c1, p1);
	for (size_t i = 0; i < sc.etcd.n; i++)
		d += p1[i] == p0[i] ? c1[i] - c0[i] : c1[i];
	return d;
}

/* CPU seconds of the real workers' daemons, all told. */
static double real_cpu(void)
{
	double c = 0;

	for (unsigned i = sc.n_hollow; i < sc.n_workers; i++)
		c += cpu_of(sc_real_pid(sc.w[i].real));
	return c;
}

static double rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(size_t)(q * (double)(n - 1))];
}

/* The current store revision (a read of the key set), 0 if unknown. */
static int64_t store_revision(void)
{
	struct eg_etcd *cli;
	unsigned slot;
	struct eg_etcd_range r;
	char err[EG_ERR_MAX];
	int64_t rev = 0;

	cli = cp_take(&slot);
	if (!eg_etcd_get(cli, PREFIX "/keyset", false, &r, err, sizeof(err))) {
		rev = r.revision;
		eg_etcd_range_free(&r);
	}
	cp_give(slot);
	return rev;
}

/* The maintenance policy of docs/fleet.md ("Database size"), every
 * maint_s seconds: compact to the revision read one period ago (a watcher
 * more than a period behind reads again in full, as after any
 * compaction), then defragment, one member at a time, each member whose
 * file is more than half free. */
static void *maintenance(void *arg)
{
	int64_t prev = 0;

	(void)arg;
	while (!sc.stop) {
		int64_t now;

		for (unsigned t = 0; t < sc.maint_s * 10 && !sc.stop; t++)
			usleep(100000);
		if (sc.stop)
			break;
		now = store_revision();
		if (prev > 0) {
			char err[EG_ERR_MAX];
			struct eg_etcd *cli;
			unsigned slot;
			int rc;

			cli = cp_take(&slot);
			rc = eg_etcd_compact(cli, prev, err, sizeof(err));
			cp_give(slot);
			if (rc && !strstr(err, "compacted"))
				__atomic_add_fetch(&sc.ph[sc.cur].maint_errors, 1,
						   __ATOMIC_RELAXED);
			else
				__atomic_add_fetch(&sc.ph[sc.cur].compactions, 1, __ATOMIC_RELAXED);
		}
		prev = now;
		for (size_t i = 0; i < sc.etcd.n && !sc.stop; i++) {
			struct eg_test_etcd_metrics m;
			struct sc_phase *p = &sc.ph[sc.cur];
			double d;

			if (eg_test_etcd_metrics(&sc.etcd, i, &m) ||
			    m.db_bytes - m.db_in_use_bytes <= m.db_bytes / 2)
				continue; /* a member down (a fault) waits for the next period */
			if (eg_test_etcd_defrag(&sc.etcd, i, &d)) {
				__atomic_add_fetch(&p->maint_errors, 1, __ATOMIC_RELAXED);
				continue;
			}
			__atomic_add_fetch(&p->defrags, 1, __ATOMIC_RELAXED);
			if (d > p->defrag_max_s)
				p->defrag_max_s = d;
		}
	}
	return NULL;
}

/* etcd's own figures at a phase's end, and the safety check again: every
 * sandbox's last fenced move, on its old worker, after the deletes had
 * time to arrive. */
static void phase_end(struct sc_phase *p)
{
	struct eg_etcd *cli;
	unsigned slot;
	struct eg_etcd_range r;
	char err[EG_ERR_MAX];

	for (size_t i = 0; i < sc.etcd.n; i++) {
		struct eg_test_etcd_metrics m;

		if (eg_test_etcd_metrics(&sc.etcd, i, &m))
			continue;
		p->watchers += m.watchers;
		p->streams += m.watch_streams;
		if (m.db_bytes / 1048576.0 > p->db_mib) {
			p->db_mib = m.db_bytes / 1048576.0;
			p->db_in_use_mib = m.db_in_use_bytes / 1048576.0;
		}
		if (m.rss_bytes / 1048576.0 > p->etcd_rss_mib)
			p->etcd_rss_mib = m.rss_bytes / 1048576.0;
	}
	for (unsigned i = 0; i < sc.n_hollow; i++) {
		json_t *st = sc.w[i].fw ? eg_fleet_worker_status(sc.w[i].fw) : NULL;

		p->logins += (uint64_t)json_integer_value(json_object_get(st, "etcd_logins"));
		json_decref(st);
	}
	cli = cp_take(&slot);
	if (!eg_etcd_get(cli, PREFIX "/acks/", true, &r, err, sizeof(err))) {
		p->ack_keys = r.n;
		eg_etcd_range_free(&r);
	} else {
		count_err(7);
	}
	cp_give(slot);
	for (unsigned s = 0; s < sc.n_sandboxes; s++) {
		int a;
		uint64_t g;

		pthread_mutex_lock(&sc.lock);
		a = sc.s[s].busy ? -1 : sc.s[s].fenced_from;
		g = sc.s[s].fenced_gen;
		pthread_mutex_unlock(&sc.lock);
		if (a >= 0 && old_admitted(p, (int)s, a, g))
			p->late_safety++;
	}
	p->end_s = (double)(soak_now_ns() - sc.t_start) / 1e9;
}

/* make's timeout (1200 s) less the report and the cleanup: a phase that
 * would end after it is not run, and the report says so, so that a run
 * at a scale whose phases take longer than planned still prints what it
 * measured (the first 100 000-sandbox run was killed in its phases). */
#define SOAK_BOUND_S 1110

static bool phase_fits(const char *name)
{
	uint64_t need =
	    sc.longest_phase_ns ? sc.longest_phase_ns : ((uint64_t)sc.phase_s + 30) * 1000000000ull;

	if (soak_now_ns() + need <= sc.t_launch + SOAK_BOUND_S * 1000000000ull)
		return true;
	printf("phase %s: not run: it would end past the %u s bound (a phase took %.0f s)\n", name,
	       SOAK_BOUND_S, (double)need / 1e9);
	fflush(stdout);
	sc.skipped++;
	return false;
}

/* Runs a phase: moves at rate for the phase's seconds, fault() at its
 * start (may be NULL) and undo() at its end. */
static void phase(const char *name, double rate, void (*fault)(struct sc_phase *),
		  void (*undo)(void))
{
	struct eg_etcd *cli;
	unsigned slot;
	struct sc_phase *p = &sc.ph[sc.n_ph];
	double c0[EG_TEST_ETCD_MAX], s0 = cpu_of(getpid()), r0 = real_cpu();
	pid_t p0[EG_TEST_ETCD_MAX];
	uint64_t t0 = soak_now_ns(), tr;
	struct eg_etcd_range r;
	char err[EG_ERR_MAX];

	if (!phase_fits(name))
		return;
	etcd_cpu(c0, p0);
	p->name = name;
	p->ack_ms = calloc(MAX_SAMPLES, sizeof(double));
	p->fence_ms = calloc(MAX_SAMPLES, sizeof(double));
	sc.cur = sc.n_ph++;
	sc.rate_now = rate;
	sc.moving = 1;
	if (fault)
		fault(p);
	while (soak_now_ns() - t0 < (uint64_t)sc.phase_s * 1000000000ull)
		usleep(100000);
	sc.moving = 0;
	usleep(WAIT_MS * 1000 / 4);
	if (undo)
		undo();
	p->seconds = (double)(soak_now_ns() - t0) / 1e9;
	p->etcd_cpu_s = etcd_cpu_delta(c0, p0);
	p->self_cpu_s = cpu_of(getpid()) - s0;
	p->real_cpu_s = real_cpu() - r0;
	for (unsigned i = sc.n_hollow; i < sc.n_workers; i++)
		p->real_rss_mib = fmax(p->real_rss_mib, sc_real_rss_mib(sc.w[i].real));
	tr = soak_now_ns();
	cli = cp_take(&slot);
	if (!eg_etcd_get(cli, PREFIX "/workers/", true, &r, err, sizeof(err))) {
		p->read_keys = r.n;
		eg_etcd_range_free(&r);
	} else {
		count_err(7);
	}
	cp_give(slot);
	p->read_s = (double)(soak_now_ns() - tr) / 1e9;
	phase_end(p);
	p->rss_mib = rss_mib();
	if (soak_now_ns() - t0 > sc.longest_phase_ns)
		sc.longest_phase_ns = soak_now_ns() - t0;
}

static int killed = -1;
static void f_leader(struct sc_phase *p)
{
	uint64_t t0;
	int port;

	killed = eg_test_etcd_leader(&sc.etcd);
	if (killed < 0) {
		count_err(7);
		return;
	}
	port = sc.etcd.m[killed].client_port;
	t0 = soak_now_ns();
	eg_test_etcd_kill_member(&sc.etcd, (size_t)killed);
	usleep(200000);
	while (!all_connected(port) && soak_now_ns() - t0 < 60000000000ull)
		usleep(50000);
	p->reconnect_s = (double)(soak_now_ns() - t0) / 1e9;
}
static void u_leader(void)
{
	if (killed >= 0 && eg_test_etcd_restart_member(&sc.etcd, (size_t)killed))
		count_err(7);
	killed = -1;
}
static void f_restart(struct sc_phase *p)
{
	(void)p;
	killed = (eg_test_etcd_leader(&sc.etcd) + 1) % 3;
	eg_test_etcd_kill_member(&sc.etcd, (size_t)killed);
	usleep(500000);
	u_leader();
}
static void f_compact(struct sc_phase *p)
{
	struct eg_etcd *cli;
	unsigned slot;
	char err[EG_ERR_MAX];
	int64_t rev = 0;

	(void)p;
	put(PREFIX "/compact-mark", "x", &rev);
	cli = cp_take(&slot);
	if (eg_etcd_compact(cli, rev, err, sizeof(err)))
		count_err(7);
	cp_give(slot);
}
/* A tenth of the workers cut off etcd: their fleet threads stop (the
 * watch ends, acks stop), as a partition would; no move involves them. */
static void f_partition(struct sc_phase *p)
{
	(void)p;
	for (unsigned i = 0; i < sc.n_hollow; i += 10) {
		pthread_mutex_lock(&sc.lock);
		sc.w[i].cut = true;
		sc.w[i].cuts++;
		pthread_mutex_unlock(&sc.lock);
		eg_fleet_worker_stop(sc.w[i].fw);
	}
}
static void u_partition(void)
{
	char err[EG_ERR_MAX];

	for (unsigned i = 0; i < sc.n_hollow; i += 10) {
		if (eg_fleet_worker_start(sc.w[i].fw, err, sizeof(err)))
			count_err(7);
		pthread_mutex_lock(&sc.lock);
		sc.w[i].cut = false;
		pthread_mutex_unlock(&sc.lock);
	}
}

/* The db's growth over the moving phases, extrapolated to a day at the
 * run's rate: in use (what a defragmentation leaves) and the file. */
static void growth(void)
{
	const struct sc_phase *a = &sc.ph[1], *b = &sc.ph[sc.n_ph - 1];
	uint64_t moves = 0;
	double secs = 0, min, top_use = 0, top_file = 0;

	if (sc.n_ph < 3 || b->end_s <= a->end_s)
		return;
	for (int i = 1; i < sc.n_ph; i++) {
		moves += sc.ph[i].moves;
		secs += sc.ph[i].seconds;
		top_use = fmax(top_use, sc.ph[i].db_in_use_mib);
		top_file = fmax(top_file, sc.ph[i].db_mib);
	}
	min = (b->end_s - a->end_s) / 60.0;
	printf("\n## database growth (%s)\n\n", sc.gc ? "deletes and maintenance on" : "--no-gc");
	printf("| figure | value |\n| --- | --- |\n");
	printf("| moves fenced over the moving phases | %llu in %.0f s (%.1f/s) |\n",
	       (unsigned long long)moves, secs, (double)moves / secs);
	printf("| in use, end of %s → end of %s | %.1f → %.1f MiB (%+.2f MiB/min) |\n", a->name,
	       b->name, a->db_in_use_mib, b->db_in_use_mib,
	       (b->db_in_use_mib - a->db_in_use_mib) / min);
	printf("| file, end of %s → end of %s | %.1f → %.1f MiB (%+.2f MiB/min) |\n", a->name,
	       b->name, a->db_mib, b->db_mib, (b->db_mib - a->db_mib) / min);
	printf("| largest at a phase's end | in use %.1f MiB, file %.1f MiB |\n", top_use,
	       top_file);
	/* two points: with the policy on, in use swings with each compaction,
	 * so this line is an upper bound, not a forecast */
	printf(
	    "| a day at this rate, linear from the two ends | in use %.0f MiB, file %.0f MiB |\n",
	    b->db_in_use_mib + 1440 * (b->db_in_use_mib - a->db_in_use_mib) / min,
	    b->db_mib + 1440 * (b->db_mib - a->db_mib) / min);
}

static void report(void)
{
	printf("\nsoak-fleet-scale: %u hollow workers and %u real execgated, %u sandboxes, %u s a "
	       "phase, %u moves/s\n",
	       sc.n_hollow, sc.n_real, sc.n_sandboxes, sc.phase_s, sc.rate);
	if (sc.skipped)
		printf("\n%u phases not run: they would have ended past the %u s bound (above)\n",
		       sc.skipped, SOAK_BOUND_S);
	for (int i = 0; i < sc.n_ph; i++) {
		struct sc_phase *p = &sc.ph[i];
		uint64_t errs = 0;

		printf("\n## phase %s (%.0f s)\n\n", p->name, p->seconds);
		printf("| figure | value |\n| --- | --- |\n");
		printf("| moves fenced | %llu (%.1f/s) |\n", (unsigned long long)p->moves,
		       (double)p->moves / p->seconds);
		printf("| put→ack ms p50 / p99 / max | %.1f / %.1f / %.1f |\n",
		       pct(p->ack_ms, p->n_ack, 0.5), pct(p->ack_ms, p->n_ack, 0.99),
		       pct(p->ack_ms, p->n_ack, 1));
		printf("| put→fence ms p50 / p99 / max | %.1f / %.1f / %.1f |\n",
		       pct(p->fence_ms, p->n_fence, 0.5), pct(p->fence_ms, p->n_fence, 0.99),
		       pct(p->fence_ms, p->n_fence, 1));
		if (p->reconnect_s > 0)
			printf("| all workers watching again after the leader kill | %.2f s |\n",
			       p->reconnect_s);
		printf("| etcd CPU (3 members) | %.1f s (%.0f %% of one core) |\n", p->etcd_cpu_s,
		       100 * p->etcd_cpu_s / p->seconds);
		printf("| etcd db, largest member: file / in use | %.1f / %.1f MiB |\n", p->db_mib,
		       p->db_in_use_mib);
		printf("| etcd watchers / watch streams (all members) | %.0f / %.0f |\n",
		       p->watchers, p->streams);
		printf("| etcd RSS (largest member) | %.0f MiB |\n", p->etcd_rss_mib);
		printf("| etcd logins of the hollow workers: in the phase (since the start) | "
		       "%llu (%llu) |\n",
		       (unsigned long long)(p->logins - (i ? sc.ph[i - 1].logins : 0)),
		       (unsigned long long)p->logins);
		printf("| old copies deleted (selection + ack) | %llu |\n",
		       (unsigned long long)p->deletes);
		printf("| compactions / defrags (slowest) / maintenance errors | %llu / %llu (%.2f "
		       "s) / %llu |\n",
		       (unsigned long long)p->compactions, (unsigned long long)p->defrags,
		       p->defrag_max_s, (unsigned long long)p->maint_errors);
		printf("| hollow workers' CPU, per worker | %.3f s (all, with the control plane: "
		       "%.1f s) |\n",
		       p->self_cpu_s / sc.n_hollow, p->self_cpu_s);
		printf("| hollow workers' memory (peak RSS of the process), per worker | %.2f MiB "
		       "(all: %.0f MiB) |\n",
		       p->rss_mib / sc.n_hollow, p->rss_mib);
		if (sc.n_real) {
			printf("| real execgated: CPU per daemon / largest RSS | %.2f s / %.1f MiB "
			       "|\n",
			       p->real_cpu_s / sc.n_real, p->real_rss_mib);
			printf("| real execgated: moves to or from one | %llu |\n",
			       (unsigned long long)p->real_moves);
			printf("| real execgated: old execution checked after its fence "
			       "(POST /v1/check), refused | %llu of %llu |\n",
			       (unsigned long long)p->real_refused,
			       (unsigned long long)p->real_checks);
			printf("| real execgated: new execution checked after its install, allowed "
			       "(the control) | %llu |\n",
			       (unsigned long long)p->real_controls);
		}
		if (i) /* the placement reads nothing */
			printf("| full read of %s/workers/ | %zu keys in %.2f s |\n", PREFIX,
			       p->read_keys, p->read_s);
		printf("| keys under %s/acks/ | %zu |\n", PREFIX, p->ack_keys);
		for (int k = 0; k < ERR_KINDS; k++) {
			errs += p->errors[k];
			if (p->errors[k])
				printf("| errors: %s | %llu |\n", err_names[k],
				       (unsigned long long)p->errors[k]);
		}
		printf("| errors in all | %llu |\n", (unsigned long long)errs);
		for (unsigned l = 0; l < 3 && l < p->n_logged; l++) {
			printf("| logged by a worker (%u of %u) | ", l + 1, p->n_logged);
			for (const char *c = p->logged[l]; *c; c++)
				putchar(*c == '|' || (unsigned char)*c < 0x20 ? ' ' : *c);
			printf(" |\n");
		}
		if (p->cut_moves)
			printf("| moves cut off in flight by the partition (not errors) | %llu |\n",
			       (unsigned long long)p->cut_moves);
		printf("| safety violations (old execution admitted after its fence) | %llu |\n",
		       (unsigned long long)p->safety);
		printf(
		    "| the same, checked again at the phase's end (after the deletes) | %llu |\n",
		    (unsigned long long)p->late_safety);
	}
	growth();
}

/* The placement's writers: the next sandbox, until all are written or
 * the placement's time is up. */
static unsigned place_next, placed;
static uint64_t place_until;

static void *placer(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned i = __atomic_fetch_add(&place_next, 1, __ATOMIC_RELAXED);
		uint64_t t;

		if (i >= sc.n_sandboxes)
			break;
		if (soak_now_ns() > place_until)
			break;
		publish_sel((int)i, sc.s[i].worker, 1, sc.s[i].worker, &t);
		__atomic_add_fetch(&placed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: soak-fleet-scale --bin BUILD_DIR [--workers N] [--real R] "
			"[--sandboxes M] [--phase-seconds S] [--rate MOVES_PER_S] "
			"[--maint-seconds P] [--no-gc]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"bin", 1, 0, 'b'},		  {"workers", 1, 0, 'w'}, {"sandboxes", 1, 0, 's'},
	    {"phase-seconds", 1, 0, 'p'}, {"rate", 1, 0, 'r'},	  {"maint-seconds", 1, 0, 'm'},
	    {"no-gc", 0, 0, 'n'},	  {"real", 1, 0, 'R'},	  {0, 0, 0, 0}};
	char root_kid[40], cp_kid[40], path[1200], keys[220];
	pthread_t ack_thr, maint_thr, movers[MOVERS], placers[CLIENTS];
	uint64_t t0, tmax;
	unsigned place_s;
	int c, k;

	sc.t_launch = soak_now_ns();
	sc.n_workers = 1000;
	sc.n_real = 3;
	sc.n_sandboxes = 100000;
	sc.phase_s = 60;
	sc.rate = 200;
	sc.maint_s = 30;
	sc.gc = true;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			snprintf(sc.bin, sizeof(sc.bin), "%s", optarg);
			break;
		case 'w':
			sc.n_workers = (unsigned)atoi(optarg);
			break;
		case 's':
			sc.n_sandboxes = (unsigned)atoi(optarg);
			break;
		case 'p':
			sc.phase_s = (unsigned)atoi(optarg);
			break;
		case 'r':
			sc.rate = (unsigned)atoi(optarg);
			break;
		case 'm':
			sc.maint_s = (unsigned)atoi(optarg);
			break;
		case 'n':
			sc.gc = false;
			break;
		case 'R':
			sc.n_real = (unsigned)atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!sc.bin[0] || sc.n_workers < 2 || sc.n_real > SC_REAL_MAX ||
	    sc.n_sandboxes < sc.n_workers + sc.n_real || !sc.phase_s || !sc.rate || !sc.maint_s)
		usage();
	if (sc.n_real && geteuid())
		die("--real %u: real execgated instances need root (BPF programs, cgroups); "
		    "--real 0 runs the hollow workers alone",
		    sc.n_real);
	/* --workers counts the hollow ones; the real ones come after them */
	sc.n_hollow = sc.n_workers;
	sc.n_workers += sc.n_real;
	/* bounded: 6 phases and the placement must fit 20 minutes (make's
	 * timeout), with 2 minutes for the start and the end and 5 s a phase
	 * for its own start and end: the placement writes its selections in
	 * what the phases leave (690 s at the default 60 s a phase) */
	if (sc.phase_s * 6 > 900)
		die("--phase-seconds %u: six phases would pass the 20-minute bound", sc.phase_s);
	place_s = 1080 - 6 * (sc.phase_s + 5);
	if (sodium_init() < 0)
		die("libsodium");
	pthread_mutex_init(&sc.lock, NULL);
	for (int i = 0; i < CLIENTS; i++)
		pthread_mutex_init(&sc.cli_lock[i], NULL);
	pthread_cond_init(&sc.acked, NULL);
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	snprintf(sc.dir, sizeof(sc.dir), "/tmp/egscale-XXXXXX");
	if (!mkdtemp(sc.dir))
		die("mkdtemp: %s", strerror(errno));
	if (eg_test_etcd_start_tls(3, true, 0, &sc.etcd))
		die("etcd did not start");
	sc.cli_session = eg_etcd_session_new();
	if (!sc.cli_session)
		die("etcd session: out of memory");
	for (int i = 0; i < CLIENTS; i++)
		if (eg_etcd_open_auth(sc.etcd.endpoints, 5000, &sc.etcd.admin, &sc.cli[i], path,
				      sizeof(path)) ||
		    eg_etcd_set_session(sc.cli[i], sc.cli_session, path, sizeof(path)))
			die("etcd: %s", path);
	snprintf(keys, sizeof(keys), "%s/keys", sc.dir);
	snprintf(sc.root_dir, sizeof(sc.root_dir), "%s/root", sc.dir);
	if (mkdir(keys, 0700) || mkdir(sc.root_dir, 0700))
		die("mkdir: %s", strerror(errno));
	keygen(keys, root_kid, sizeof(root_kid));
	keygen(keys, cp_kid, sizeof(cp_kid));
	snprintf(path, sizeof(path), "cp '%s/%s.pub' '%s/'", keys, root_kid, sc.root_dir);
	if (system(path))
		die("%s failed", path);
	snprintf(path, sizeof(path), "%s/%s.seed", keys, cp_kid);
	load_sk(path, sc.cp_sk, sc.cp_kid, NULL);
	publish_keyset(root_kid, keys);

	sc.w = calloc(sc.n_workers, sizeof(*sc.w));
	sc.s = calloc(sc.n_sandboxes, sizeof(*sc.s));
	for (unsigned i = 0; i < sc.n_workers; i++)
		worker_start((int)i);
	pthread_create(&ack_thr, NULL, ack_watcher, NULL);

	/* the placement: sandbox i on worker i mod N, generation 1 */
	sc.ph[0].name = "placement";
	sc.ph[0].ack_ms = calloc(MAX_SAMPLES, sizeof(double));
	sc.ph[0].fence_ms = calloc(MAX_SAMPLES, sizeof(double));
	sc.n_ph = 1;
	t0 = soak_now_ns();
	sc.t_start = t0;
	tmax = t0 + place_s * 1000000000ull;
	for (unsigned i = 0; i < sc.n_sandboxes; i++) {
		snprintf(path, sizeof(path), "5c000000-0000-4000-8000-%012x", i);
		eg_uuid_from_text(path, sc.s[i].id);
		sc.s[i].worker = (int)(i % sc.n_workers);
		sc.s[i].gen = 1;
		sc.s[i].ack_worker[0] = sc.s[i].ack_worker[1] = -1;
		sc.s[i].fenced_from = -1;
	}
	/* as many writers as the control plane has handles */
	place_until = tmax;
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&placers[i], NULL, placer, NULL);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(placers[i], NULL);
	if (placed < sc.n_sandboxes)
		die("placement: %u of %u sandboxes placed in %u s", placed, sc.n_sandboxes,
		    place_s);
	printf("placement: %u selections written in %.1f s\n", sc.n_sandboxes,
	       (double)(soak_now_ns() - t0) / 1e9);
	fflush(stdout);
	for (unsigned i = 0; i < sc.n_sandboxes; i++) {
		bool ok;

		pthread_mutex_lock(&sc.lock);
		ok = wait_ack((int)i, sc.s[i].worker, 1, "pending", "active");
		pthread_mutex_unlock(&sc.lock);
		if (!ok)
			count_err(2);
		else if ((k = install(sc.s[i].worker, (int)i, 1)))
			count_err(k);
	}
	sc.ph[0].seconds = (double)(soak_now_ns() - t0) / 1e9;
	sc.ph[0].rss_mib = rss_mib();
	phase_end(&sc.ph[0]);
	printf("placement: %u sandboxes on %u workers in %.1f s\n", sc.n_sandboxes, sc.n_workers,
	       sc.ph[0].seconds);
	fflush(stdout);

	for (int i = 0; i < MOVERS; i++)
		pthread_create(&movers[i], NULL, mover, NULL);
	if (sc.gc)
		pthread_create(&maint_thr, NULL, maintenance, NULL);
	phase("steady", sc.rate, NULL, NULL);
	phase("burst (3x)", 3.0 * sc.rate, NULL, NULL);
	phase("leader kill", sc.rate, f_leader, u_leader);
	phase("member restart", sc.rate, f_restart, NULL);
	phase("compaction", sc.rate, f_compact, NULL);
	phase("partition (a tenth)", sc.rate, f_partition, u_partition);
	sc.stop = 1;
	for (int i = 0; i < MOVERS; i++)
		pthread_join(movers[i], NULL);
	if (sc.gc)
		pthread_join(maint_thr, NULL);
	report();
	fflush(stdout);
	/* the workers' threads end with the process; etcd and the directory
	 * go first */
	cleanup();
	_exit(0);
}
