// SPDX-License-Identifier: Apache-2.0
/* soak-fleet: the fleet under churn and faults (fleet.h says what runs).
 *
 *   soak-fleet --bin DIR [--quick] [--phase-seconds S] [--fe-threads N]
 *
 * Phases, in order: steady, etcd-leader-kill, etcd-member-kill,
 * daemon-kill9, cut-30s (with a compaction while the worker is away),
 * compaction, forged-docs, steady-end. Quick: 8 s a phase (the cut lasts
 * its 30 s), about 100 s in all. Prints one row per phase and exits
 * non-zero on any safety violation, dropped stream, error above the
 * target, or failed step. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <jansson.h>
#include "client/route_cache.h"
#include "core/capability.h"
#include "core/keyset.h"
#include "fleet.h"

static struct eg_route_cache *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct eg_node_key nk[FS_WORKERS];
static struct eg_node_keys node_keys = {nk, FS_WORKERS};
static double phase_seconds = 8;
static unsigned long long op_seq;

static void bump(uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&fs.lock);
	*field += n;
	pthread_mutex_unlock(&fs.lock);
}

static struct fs_phase *phase(void)
{
	return &fs.ph[fs.cur_ph];
}

static void route_of(struct fs_sandbox *s, int worker, uint64_t gen, struct eg_route *r)
{
	(void)s;
	memset(r, 0, sizeof(*r));
	memcpy(r->worker, fs.w[worker].id_bin, EG_ID_BYTES);
	r->substrate = EG_SUBSTRATE_FC_HOST;
	r->generation = gen;
	r->activation = 1;
}

static int worker_of(const uint8_t id[EG_ID_BYTES])
{
	for (int i = 0; i < FS_WORKERS; i++)
		if (!memcmp(fs.w[i].id_bin, id, EG_ID_BYTES))
			return i;
	return -1;
}

/* The bridge socket of s's newest execution on worker w, or NULL: a worker
 * hands an operation to its own bridge for the sandbox, whatever
 * generation the front end's route names (the worker's admission judges
 * the capability). */
static const char *bridge_of(struct fs_sandbox *s, int w)
{
	for (size_t i = s->n_ex; i-- > 0;)
		if (s->ex[i].worker == w && s->ex[i].bridge)
			return s->ex[i].bridge_sock;
	return NULL;
}

/* One operation with the documented retries: at most 5 s from its issue
 * (longer than a worker daemon's restart: the unit's RestartSec=1s and a
 * start-up that took 2.3 s in a loaded make check, where a 3 s budget
 * failed an operation in flight at the daemon-kill9 phase's SIGKILL);
 * a signed refresh moves the route and retries at once; a refusal the
 * route cache does not act on waits (at most 200 ms) for the control plane
 * to hand out a newer capability; an error backs off 50 ms doubling to
 * 400 ms. */
static void one_op(void)
{
	struct fs_sandbox *s = &fs.s[fs_rand(FS_SANDBOXES)];
	uint64_t issue = fs_now_ns(), deadline = issue + 5000000000ULL, backoff = 50;
	struct fs_phase *p = phase();
	unsigned long long n = __atomic_add_fetch(&op_seq, 1, __ATOMIC_RELAXED);
	char line[64], last[160] = "";
	unsigned tries = 0;
	bool held;

	snprintf(line, sizeof(line), "op %llu", n);
	bump(&p->ops, 1);
	while (fs_now_ns() < deadline && !fs.stop) {
		char token[1024];
		uint64_t gen, now = (uint64_t)time(NULL);
		int worker, rw;
		struct eg_route_entry e;
		struct eg_route fresh;
		struct eg_route_attempt att;
		struct fs_op_res res;
		struct eg_capability cap;
		const char *bridge;

		uint64_t attempt = fs_now_ns();

		if (tries++)
			bump(&p->retries, 1);
		pthread_mutex_lock(&s->lock);
		snprintf(token, sizeof(token), "%s", s->token);
		gen = s->gen;
		worker = s->worker;
		pthread_mutex_unlock(&s->lock);
		route_of(s, worker, gen, &fresh);
		pthread_mutex_lock(&cache_lock);
		if (eg_route_cache_lookup(cache, s->id_bin, now, &e))
			eg_route_cache_put(cache, s->id_bin, &fresh, now + 3600, now, &e);
		pthread_mutex_unlock(&cache_lock);
		rw = worker_of(e.route.worker);
		pthread_mutex_lock(&s->lock);
		bridge = rw >= 0 ? bridge_of(s, rw) : NULL;
		pthread_mutex_unlock(&s->lock);
		if (rw < 0) {
			snprintf(last, sizeof(last), "route names no worker");
			usleep(10000);
			continue;
		}
		/* a route to an execution gone from that worker: the worker
		 * refuses the capability before any connect, signed */
		if (!bridge)
			bridge = "/nonexistent/bridge.sock";
		fs_agent_op(&fs.w[rw], bridge, token, line, &res);
		if (res.rc == FS_OP_OK) {
			int rs, rg_w;
			unsigned long long rg;

			if (sscanf(res.reply, "s%d-g%llu-w%d:", &rs, &rg, &rg_w) != 3 ||
			    rs != s->idx || rg != gen || rg_w != worker) {
				bump(&p->safety, 1);
				fprintf(stderr,
					"soak-fleet: SAFETY: s%d op with capability g%llu w%d "
					"answered %s\n",
					s->idx, (unsigned long long)gen, worker, res.reply);
			}
			/* answered by the execution its capability named, but
			 * after the put of the selection that replaces it and
			 * before the fence: the window the fence closes for the
			 * next capability (counted, not a safety failure) */
			pthread_mutex_lock(&s->lock);
			for (size_t i = 0; i < s->n_ex; i++)
				if (s->ex[i].worker == rg_w && s->ex[i].gen == rg &&
				    s->ex[i].put_ns && s->ex[i].put_ns < attempt)
					bump(&p->window, 1);
			pthread_mutex_unlock(&s->lock);
			bump(&p->ok, 1);
			return;
		}
		snprintf(last, sizeof(last), "%s on w%d: %s",
			 res.rc == FS_OP_REFRESH ? "refresh-route"
			 : res.rc == FS_OP_DENY	 ? "deny"
						 : "error",
			 rw, res.reason);
		if (res.rc == FS_OP_REFRESH && res.signed_verdict[0] &&
		    eg_cap_decode_text(token, strlen(token), &cap, NULL) == EG_DECODE_OK) {
			enum eg_route_outcome o;

			att.entry = e;
			memcpy(att.token_id, cap.token_id, EG_ID_BYTES);
			pthread_mutex_lock(&cache_lock);
			o = eg_route_cache_on_refresh_text(cache, res.signed_verdict,
							   strlen(res.signed_verdict), &node_keys,
							   &att, &fresh, now, NULL);
			pthread_mutex_unlock(&cache_lock);
			if (o == EG_ROUTE_REPAIRED || o == EG_ROUTE_LOST_RACE)
				continue;
			/* why the cache did not move: in the error line */
			snprintf(last + strlen(last), sizeof(last) - strlen(last),
				 " (route cache: %s)", eg_route_outcome_name(o));
		}
		if (res.rc == FS_OP_REFRESH || res.rc == FS_OP_DENY) {
			struct timespec ts;

			/* the selected execution refused: a move is under way
			 * and its capability is not out yet */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&s->lock);
			if (s->gen == gen)
				pthread_cond_timedwait(&s->changed, &s->lock, &ts);
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		usleep(backoff * 1000);
		if (backoff < 400)
			backoff *= 2;
	}
	if (fs.stop) {
		bump(&p->ops, (uint64_t)-1); /* cut short by the end of the run: not counted */
		return;
	}
	/* Held by the cut: a fence waited, during this operation, on a
	 * worker cut off etcd. The old execution is refused (that worker
	 * learned the move before the cut, or anyway the new worker does
	 * not answer the old capability), and the control plane issues no
	 * capability for the new one until the fence: the operation has
	 * none that any execution answers. Counted apart, and named. */
	pthread_mutex_lock(&s->lock);
	held = s->held_from && s->held_to >= issue;
	pthread_mutex_unlock(&s->lock);
	bump(held ? &p->held : &p->errors, 1);
	pthread_mutex_lock(&fs.lock);
	for (int i = 0; i < 3 && !held; i++)
		if (!p->first_error[i][0]) {
			snprintf(p->first_error[i], sizeof(p->first_error[i]),
				 "s%d op %llu after %u tries: %.150s", s->idx, n, tries, last);
			break;
		}
	pthread_mutex_unlock(&fs.lock);
	fprintf(stderr, "soak-fleet: %s: s%d op %llu after %u tries: %s\n",
		held ? "held by the cut" : "error", s->idx, n, tries, last);
}

static void *fe_thread(void *arg)
{
	(void)arg;
	while (!fs.stop)
		one_op();
	return NULL;
}

/* Moves sandboxes one after another, each to a random other worker that
 * is not cut off etcd (a control plane moves only to workers whose acks
 * are current). */
static void *mover_thread(void *arg)
{
	/* two movers, each with half the sandboxes: a move stalled on a
	 * fence does not stop the other half */
	int half = (int)(intptr_t)arg;

	while (!fs.stop) {
		struct fs_sandbox *s = &fs.s[2 * fs_rand(FS_SANDBOXES / 2) + (uint64_t)half];
		int to;

		do
			to = (int)fs_rand(FS_WORKERS);
		while (to == s->worker); /* a cut-off target aborts (cp.c) */
		fs_move(s, to);
		usleep(100000);
	}
	return NULL;
}

/* Reads the stream holders' reports: a cut while its execution was still
 * selected is a dropped connection. */
static void *stream_thread(void *arg)
{
	(void)arg;
	while (!fs.stop) {
		for (int i = 0; i < FS_SANDBOXES; i++) {
			struct fs_sandbox *s = &fs.s[i];

			pthread_mutex_lock(&s->lock);
			for (size_t k = 0; k < s->n_ex; k++) {
				struct fs_exec *x = &s->ex[k];
				struct pollfd p = {.fd = x->stream_fd, .events = POLLIN};
				uint64_t v;

				if (x->stream_fd < 0 || poll(&p, 1, 0) != 1)
					continue;
				if (read(x->stream_fd, &v, sizeof(v)) != sizeof(v)) {
					close(x->stream_fd);
					x->stream_fd = -1;
					continue;
				}
				if (v == 1) {
					x->stream_open = true;
				} else if (v == 2) {
					fprintf(stderr,
						"soak-fleet: stream s%d g%llu never opened\n", i,
						(unsigned long long)x->gen);
					bump(&phase()->drops, 1);
				} else if (!x->put_ns || v < x->put_ns) {
					bump(&phase()->drops, 1);
					fprintf(stderr,
						"soak-fleet: DROPPED: stream s%d g%llu on w%d cut "
						"while selected\n",
						i, (unsigned long long)x->gen, x->worker);
				} else {
					bump(&phase()->cuts_expected, 1);
				}
			}
			pthread_mutex_unlock(&s->lock);
		}
		usleep(20000);
	}
	return NULL;
}

/* A number of worker w's status fleet object, -1 when absent. */
static long long fleet_status(struct fs_worker *w, const char *member)
{
	char body[16384];
	long long v = -1;
	json_t *j, *m;

	if (fs_http(w, "GET", "/v1/status", NULL, body, sizeof(body)) != 200)
		return -1;
	j = json_loads(body, 0, NULL);
	m = json_object_get(json_object_get(j, "fleet"), member);
	if (json_is_integer(m))
		v = json_integer_value(m);
	json_decref(j);
	return v;
}

/* Documents each worker has refused so far (GET /v1/status, fleet.refused,
 * every document and reason), into out; -1 when a worker did not answer. */
static int refused_counts(long long out[FS_WORKERS])
{
	for (int i = 0; i < FS_WORKERS; i++) {
		char body[16384];
		json_t *j, *r, *doc, *n;
		const char *k1, *k2;

		out[i] = 0;
		if (fs_http(&fs.w[i], "GET", "/v1/status", NULL, body, sizeof(body)) != 200)
			return -1;
		j = json_loads(body, 0, NULL);
		r = json_object_get(json_object_get(j, "fleet"), "refused");
		json_object_foreach(r, k1, doc) json_object_foreach(doc, k2, n) out[i] +=
		    json_integer_value(n);
		json_decref(j);
	}
	return 0;
}

static void sleep_s(double s)
{
	uint64_t end = fs_now_ns() + (uint64_t)(s * 1e9);

	while (!fs.stop && fs_now_ns() < end)
		usleep(50000);
}

/* utime + stime of pid, seconds; 0 when it is gone */
static double cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* fields after the comm's closing parenthesis: 14 and 15 are
	 * utime and stime */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* What the run costs where, per phase: the slowdown of a long run shows
 * which part grows (docs/bench/2026-12-04-soak-fleet-704k.md). */
struct cost {
	double etcd[EG_TEST_ETCD_MAX], daemons[FS_WORKERS], soak;
	pid_t etcd_pid[EG_TEST_ETCD_MAX], daemon_pid[FS_WORKERS];
};

static void cost_take(struct cost *u)
{
	struct rusage ru;

	for (size_t i = 0; i < fs.etcd.n; i++) {
		u->etcd_pid[i] = fs.etcd.m[i].pid;
		u->etcd[i] = cpu_of(u->etcd_pid[i]);
	}
	for (int i = 0; i < FS_WORKERS; i++) {
		u->daemon_pid[i] = fs.w[i].daemon;
		u->daemons[i] = cpu_of(u->daemon_pid[i]);
	}
	getrusage(RUSAGE_SELF, &ru);
	u->soak = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void cost_charge(struct fs_phase *p, const struct cost *a, const struct cost *b)
{
	for (size_t i = 0; i < fs.etcd.n; i++) {
		char db[400];
		struct stat st;

		if (a->etcd_pid[i] && a->etcd_pid[i] == b->etcd_pid[i])
			p->cpu_etcd += b->etcd[i] - a->etcd[i];
		snprintf(db, sizeof(db), "%s/%s.data/member/snap/db", fs.etcd.dir,
			 fs.etcd.m[i].name);
		if (!stat(db, &st) && (double)st.st_size / 1048576.0 > p->etcd_db_mib)
			p->etcd_db_mib = (double)st.st_size / 1048576.0;
	}
	for (int i = 0; i < FS_WORKERS; i++)
		if (a->daemon_pid[i] && a->daemon_pid[i] == b->daemon_pid[i])
			p->cpu_daemons += b->daemons[i] - a->daemons[i];
	p->cpu_soak = b->soak - a->soak;
}

static void begin(const char *name)
{
	uint64_t now = fs_now_ns();
	static uint64_t started;
	static struct cost before;
	struct cost u;

	cost_take(&u);
	pthread_mutex_lock(&fs.lock);
	if (fs.n_ph)
		cost_charge(&fs.ph[fs.cur_ph], &before, &u);
	before = u;
	if (fs.n_ph)
		fs.ph[fs.cur_ph].seconds = (double)(now - started) / 1e9;
	started = now;
	if (name) {
		struct fs_phase *p = &fs.ph[fs.n_ph];

		snprintf(p->name, sizeof(p->name), "%s", name);
		p->ack_ms = calloc(FS_MAX_SAMPLES, sizeof(double));
		p->kern_ms = calloc(FS_MAX_SAMPLES, sizeof(double));
		fs.cur_ph = fs.n_ph++;
	}
	pthread_mutex_unlock(&fs.lock);
	if (name)
		printf("phase %s\n", name);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	struct fs_phase *p = phase();
	size_t n = strlen(p->note);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->note + n, sizeof(p->note) - n, fmt, ap);
	va_end(ap);
}

/* Compacts the store's whole history (the control plane's handle). */
static int compact(struct eg_etcd_range *rr, char *err, size_t size)
{
	int rc;

	pthread_mutex_lock(&fs.cli_lock);
	rc = eg_etcd_get(fs.cli, "/", false, rr, err, size);
	if (!rc)
		rc = eg_etcd_compact(fs.cli, rr->revision, err, size);
	pthread_mutex_unlock(&fs.cli_lock);
	return rc;
}

static void etcd_restart(size_t m)
{
	if (eg_test_etcd_restart_member(&fs.etcd, m))
		fs_fail("etcd member %zu did not restart", m);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pct(double *v, size_t n, char *out, size_t size)
{
	if (!n) {
		snprintf(out, size, "%7s %7s %7s", "-", "-", "-");
		return;
	}
	qsort(v, n, sizeof(*v), cmp_d);
	snprintf(out, size, "%7.1f %7.1f %7.1f", v[n / 2], v[(size_t)ceil(0.99 * (double)n) - 1],
		 v[n - 1]);
}

static bool report(void)
{
	struct fs_phase all = {.name = "all"};
	double *ack = calloc((size_t)FS_MAX_SAMPLES * FS_PHASES, sizeof(double));
	double *kern = calloc((size_t)FS_MAX_SAMPLES * FS_PHASES, sizeof(double));
	bool bad = false;
	char a[64], k[64];

	printf("\n%-18s %6s %8s %6s %4s %7s %6s %6s %5s %5s %5s %5s %7s %6s %23s %23s\n", "phase",
	       "secs", "ops", "errors", "held", "retries", "safety", "probes", "drops", "cuts",
	       "moves", "abort", "fence-t", "window", "put->ack p50/p99/max ms",
	       "put->kernel p50/p99/max");
	for (int i = 0; i <= fs.n_ph; i++) {
		struct fs_phase *p = i < fs.n_ph ? &fs.ph[i] : &all;

		if (i < fs.n_ph) {
			all.seconds += p->seconds;
			all.ops += p->ops;
			all.errors += p->errors;
			all.held += p->held;
			all.retries += p->retries;
			all.safety += p->safety;
			all.probes += p->probes;
			all.probe_refused += p->probe_refused;
			all.drops += p->drops;
			all.cuts_expected += p->cuts_expected;
			all.moves += p->moves;
			all.fence_timeouts += p->fence_timeouts;
			all.aborted += p->aborted;
			all.window += p->window;
			all.uncut += p->uncut;
			all.open_failed += p->open_failed;
			memcpy(ack + all.n_ack, p->ack_ms, p->n_ack * sizeof(double));
			all.n_ack += p->n_ack;
			memcpy(kern + all.n_kern, p->kern_ms, p->n_kern * sizeof(double));
			all.n_kern += p->n_kern;
			pct(p->ack_ms, p->n_ack, a, sizeof(a));
			pct(p->kern_ms, p->n_kern, k, sizeof(k));
		} else {
			pct(ack, all.n_ack, a, sizeof(a));
			pct(kern, all.n_kern, k, sizeof(k));
		}
		printf(
		    "%-18s %6.1f %8llu %6llu %4llu %7llu %6llu %6llu %5llu %5llu %5llu %5llu %7llu "
		    "%6llu %23s %23s\n",
		    p->name, p->seconds, (unsigned long long)p->ops, (unsigned long long)p->errors,
		    (unsigned long long)p->held, (unsigned long long)p->retries,
		    (unsigned long long)p->safety, (unsigned long long)p->probes,
		    (unsigned long long)p->drops, (unsigned long long)p->cuts_expected,
		    (unsigned long long)p->moves, (unsigned long long)p->aborted,
		    (unsigned long long)p->fence_timeouts, (unsigned long long)p->window, a, k);
	}
	printf(
	    "(errors: operations unanswered after the retries (5 s); held: the same, while "
	    "the sandbox's fence waited on a worker cut off etcd (its ack cannot reach the "
	    "store, and the new execution's capability waits for the fence); safety: answers by an "
	    "execution other than the selected one the capability named, plus probes of the "
	    "old capability answered after the fence; drops: streams cut while selected; "
	    "cuts: streams cut after their execution was replaced; abort: moves whose target "
	    "had not learned its selection in 2 s, sent elsewhere; fence-t: fences that "
	    "waited out 135 s; window: answers by the execution the capability named, issued "
	    "after the put that replaced it and before the fence; propagation samples: put->ack "
	    "%zu, put->kernel %zu)\n",
	    all.n_ack, all.n_kern);
	for (int i = 0; i < fs.n_ph; i++)
		if (fs.ph[i].note[0])
			printf("%s: %s\n", fs.ph[i].name, fs.ph[i].note);
	for (int i = 0; i < fs.n_ph; i++)
		if (fs.ph[i].seconds > 0)
			printf("%s: CPU seconds a second: etcd members %.2f, execgated %.2f, "
			       "soak %.2f; etcd db %.1f MiB\n",
			       fs.ph[i].name, fs.ph[i].cpu_etcd / fs.ph[i].seconds,
			       fs.ph[i].cpu_daemons / fs.ph[i].seconds,
			       fs.ph[i].cpu_soak / fs.ph[i].seconds, fs.ph[i].etcd_db_mib);
	for (int i = 0; i < fs.n_ph; i++)
		for (int j = 0; j < 3 && fs.ph[i].first_error[j][0]; j++)
			printf("%s: error: %s\n", fs.ph[i].name, fs.ph[i].first_error[j]);
	printf("error rate: %.6f%% (%llu of %llu); target <= 0.0002%%; with the %llu held by the "
	       "cut: %.6f%%\n",
	       all.ops ? 100.0 * (double)all.errors / (double)all.ops : 0.0,
	       (unsigned long long)all.errors, (unsigned long long)all.ops,
	       (unsigned long long)all.held,
	       all.ops ? 100.0 * (double)(all.errors + all.held) / (double)all.ops : 0.0);
	if (all.open_failed)
		printf("streams that could not be opened (10 s of tries): %llu\n",
		       (unsigned long long)all.open_failed);
	if (all.uncut)
		printf("streams still open two moves after their execution was replaced: %llu\n",
		       (unsigned long long)all.uncut);
	bad = all.safety || all.drops || all.uncut || all.open_failed || !all.ops || !all.moves ||
	      !all.n_ack || all.probe_refused != all.probes;
	if (all.ops && (double)all.errors / (double)all.ops > 0.000002)
		bad = true;
	free(ack);
	free(kern);
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: soak-fleet --bin DIR [--quick] [--phase-seconds S] "
			"[--fe-threads N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"bin", required_argument, NULL, 'b'},
	    {"quick", no_argument, NULL, 'q'},
	    {"phase-seconds", required_argument, NULL, 'p'},
	    {"fe-threads", required_argument, NULL, 't'},
	    {0},
	};
	const char *bin = NULL;
	bool quick = false, bad;
	unsigned fe = 6;
	pthread_t t[64];
	int c, leader, other;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bin = optarg;
			break;
		case 'q':
			quick = true;
			break;
		case 'p':
			phase_seconds = atof(optarg);
			break;
		case 't':
			fe = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (!bin || optind != argc || !fe || fe > 32 || phase_seconds <= 0)
		usage();
	if (!quick && phase_seconds == 8)
		phase_seconds = 300;
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_mutex_init(&fs.lock, NULL);
	pthread_mutex_init(&fs.cli_lock, NULL);
	fs_setup(bin, quick);
	if (!(cache = eg_route_cache_new(64, 4096)))
		fs_fail("route cache");
	for (int i = 0; i < FS_WORKERS; i++) {
		char path[300];
		uint8_t pk[32];

		snprintf(path, sizeof(path), "%s/node.pub", fs.w[i].state);
		if (eg_pubkey_read(path, pk) != EG_KEY_OK ||
		    eg_route_node_key_init(&nk[i], fs.w[i].id_bin, pk))
			fs_fail("worker %d: %s: no node key", i, path);
	}
	printf("soak-fleet (%s): etcd %s, %d workers, %d sandboxes, %u front-end threads, "
	       "%.0f s a phase\n",
	       quick ? "quick" : "full", fs.etcd.endpoints, FS_WORKERS, FS_SANDBOXES, fe,
	       phase_seconds);
	begin("setup");
	fs_cp_init();
	begin("steady");
	for (unsigned i = 0; i < fe; i++)
		pthread_create(&t[i], NULL, fe_thread, NULL);
	pthread_create(&t[fe], NULL, mover_thread, (void *)0);
	pthread_create(&t[fe + 1], NULL, mover_thread, (void *)1);
	pthread_create(&t[fe + 2], NULL, stream_thread, NULL);
	sleep_s(phase_seconds);

	begin("etcd-leader-kill");
	leader = eg_test_etcd_leader(&fs.etcd);
	if (leader < 0 || eg_test_etcd_kill_member(&fs.etcd, (size_t)leader))
		fs_fail("no etcd leader to kill");
	note("killed member %d (leader); restarted after %.0f s", leader, phase_seconds / 2);
	sleep_s(phase_seconds / 2);
	etcd_restart((size_t)leader);
	sleep_s(phase_seconds / 2);

	begin("etcd-member-kill");
	leader = eg_test_etcd_leader(&fs.etcd);
	other = (leader + 1) % 3;
	if (eg_test_etcd_kill_member(&fs.etcd, (size_t)other))
		fs_fail("kill member %d", other);
	note("killed member %d (follower); restarted after %.0f s", other, phase_seconds / 2);
	sleep_s(phase_seconds / 2);
	etcd_restart((size_t)other);
	sleep_s(phase_seconds / 2);

	begin("daemon-kill9");
	{
		struct fs_worker *w = &fs.w[1];
		uint64_t t0 = fs_now_ns();

		fs_daemon_kill(w);
		usleep(500000);
		fs_daemon_start(w);
		note("execgated of worker 1 SIGKILLed, restarted after 0.5 s, serving again "
		     "%.2f s after the kill",
		     (double)(fs_now_ns() - t0) / 1e9);
	}
	sleep_s(phase_seconds);

	begin("cut-30s");
	{
		struct fs_worker *w = &fs.w[2];
		char err[256];
		struct eg_etcd_range rr = {0};

		long long c0 = fleet_status(w, "compactions");

		fs_cut(w, true);
		sleep_s(15);
		/* a compaction while it is away: its watch resumes from a
		 * compacted revision when it comes back */
		if (compact(&rr, err, sizeof(err)))
			fs_fail("compaction: %s", err);
		note("worker 2 cut off etcd (its proxies closed) for 30 s; compacted to "
		     "revision %lld at 15 s",
		     (long long)rr.revision);
		eg_etcd_range_free(&rr);
		sleep_s(15);
		fs_cut(w, false);
		sleep_s(phase_seconds);
		note("; its watch canceled by the compaction: %lld time(s), lag now %lld",
		     fleet_status(w, "compactions") - c0, fleet_status(w, "lag"));
	}

	begin("compaction");
	{
		char err[256];
		struct eg_etcd_range rr = {0};

		if (compact(&rr, err, sizeof(err)))
			fs_fail("compaction: %s", err);
		note("compacted to revision %lld", (long long)rr.revision);
		eg_etcd_range_free(&rr);
	}
	sleep_s(phase_seconds);

	begin("forged-docs");
	{
		long long r0[FS_WORKERS], r1[FS_WORKERS], sum = 0;
		int fewest = 0;

		if (refused_counts(r0))
			fs_fail("GET /v1/status of a worker failed");
		fs_publish_forged();
		sleep_s(phase_seconds);
		if (refused_counts(r1))
			fs_fail("GET /v1/status of a worker failed");
		for (int i = 0; i < FS_WORKERS; i++) {
			sum += r1[i] - r0[i];
			if (r1[i] - r0[i] < r1[fewest] - r0[fewest])
				fewest = i;
		}
		note("wrote 3 forged selections to every worker, one older selection, key set "
		     "version 1 (older) and 2 (equal); refused: %lld in all, worker %d the fewest "
		     "(%lld)",
		     sum, fewest, r1[fewest] - r0[fewest]);
		/* a full read between the watches sees only the last value of
		 * a key, so each worker must have refused at least the last
		 * forged selection and the key set */
		if (r1[fewest] - r0[fewest] < 2)
			fs.ph[fs.cur_ph].refused_docs = 1;
	}

	begin("steady-end");
	sleep_s(phase_seconds);
	begin(NULL);
	fs.stop = 1;
	for (unsigned i = 0; i < fe + 3; i++)
		pthread_join(t[i], NULL);
	bad = report();
	for (int i = 0; i < fs.n_ph; i++)
		if (fs.ph[i].refused_docs) {
			printf("forged-docs: fewer refusals than documents written\n");
			bad = true;
		}
	printf("soak-fleet: %s\n", bad ? "FAILED" : "ok");
	fs_cleanup();
	return bad ? 1 : 0;
}
