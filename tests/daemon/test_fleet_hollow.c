// SPDX-License-Identifier: Apache-2.0
/* A hollow worker (user/fleetd/hollow.h) decides as the real one does: the
 * same fleet worker code over two backends, the real one on a loaded world
 * (BPF maps, the library's install path) and the hollow one in memory, both
 * as worker DD_WORKER, each under its own prefix of one real etcd
 * (tests/fleet/etcd_env.c). Every document is written to both prefixes, every
 * install asked of both; their decision logs (what each applied, refused,
 * retired and dropped, the installs' outcomes, the acks they wrote and their
 * refusal counters) must be the same, step by step. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"
#include "fleet/fake_http.h"
#include "fleetd/hollow.h"
#include "fleetd/worker.h"
#include "fleetd/worker_impl.h"

#define HW_SB1 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a1"
#define HW_SB2 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a2"
#define HW_SB3 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a3"
/* the sandbox whose selections mark the end of a step */
#define HW_SYNC	     "5f0c2c1e-7a4b-4c1d-9e3f-0000000000ff"
#define HW_MAX_LINES 256

/* One side: its fleet worker, and what it decided, one line each. */
struct side {
	const char *name;
	char prefix[96];
	char state_dir[200];
	struct eg_fleet_worker *fw;
	pthread_mutex_t lock;
	char *lines[HW_MAX_LINES];
	size_t n, step_from;
};

static struct eg_test_etcd etcd;
static struct eg_etcd *cli;
static struct eg_worker *real_worker;
static struct eg_fleet_hollow *hollow;
static struct side real = {.name = "real", .lock = PTHREAD_MUTEX_INITIALIZER};
static struct side hol = {.name = "hollow", .lock = PTHREAD_MUTEX_INITIALIZER};
static char root_dir[200], root_sec[200], root_kid[32], cp2_kid[32], rogue_dir[200], rogue_kid[32];
/* one bridge socket per sandbox (an endpoint belongs to one sandbox: the
 * hollow backend has none, and would not refuse a second claim) */
static const char *const sandboxes[3] = {HW_SB1, HW_SB2, HW_SB3};
static char bridge_sock[3][200];
static int bridge_fd[3] = {-1, -1, -1};
static unsigned sync_gen;

static void add_line(struct side *s, const char *line)
{
	pthread_mutex_lock(&s->lock);
	if (s->n < HW_MAX_LINES)
		s->lines[s->n++] = strdup(line);
	pthread_mutex_unlock(&s->lock);
}

/* A fleet log line as a decision: what the worker did, without what
 * differs by prefix or by store revision. NULL: not a decision. */
static char *decision(const struct side *s, const char *line)
{
	static const char *const kinds[] = {
	    "selection applied", "selection refused", "retired sandbox",
	    "key set version",	 "key set refused",   "withdrawn",
	    "dropped",		 "deleted at",	      "stored selection dropped",
	};
	char *out, *p;
	bool is = false;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		is = is || strstr(line, kinds[i]);
	if (!is || strstr(line, "applied already"))
		return NULL;
	out = strdup(line);
	/* the prefix becomes <P> */
	while ((p = strstr(out, s->prefix))) {
		size_t pl = strlen(s->prefix);

		memcpy(p, "<P>", 3);
		memmove(p + 3, p + pl, strlen(p + pl) + 1);
	}
	/* revisions differ between the prefixes: cut from the first one */
	p = strstr(out, "mod_revision");
	if (p)
		*p = '\0';
	p = strstr(out, "(mod_revision");
	if (p)
		*p = '\0';
	return out;
}

static void side_log(int prio, const char *line, void *ctx)
{
	struct side *s = ctx;
	char *d = decision(s, line);

	(void)prio;
	if (d) {
		add_line(s, d);
		free(d);
	}
}

static void put_both(const char *rel, const char *value)
{
	const struct side *sides[2] = {&real, &hol};
	char key[300], err[EG_ERR_MAX];

	for (size_t i = 0; i < 2; i++) {
		snprintf(key, sizeof(key), "%s/%s", sides[i]->prefix, rel);
		cr_assert_eq(eg_etcd_put(cli, key, value, strlen(value), NULL, err, sizeof(err)), 0,
			     "put %s: %s", key, err);
	}
}

/* Deletes <prefix>/rel on both sides. */
static void delete_both(const char *rel)
{
	const struct side *sides[2] = {&real, &hol};
	char key[300], err[EG_ERR_MAX];

	for (size_t i = 0; i < 2; i++) {
		snprintf(key, sizeof(key), "%s/%s", sides[i]->prefix, rel);
		cr_assert_eq(eg_etcd_delete(cli, key, false, NULL, err, sizeof(err)), 0,
			     "delete %s: %s", key, err);
	}
}

static void keygen(const char *dir, char *kid, size_t size)
{
	char out[512];

	cr_assert_eq(kh_issue(out, sizeof(out), "keygen", "--out", dir, NULL), 0, "%s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kid, size, "%.31s", out);
}

/* execgate-issue keyset of version with kid_a (and kid_b), into out. */
static void keyset_text(unsigned version, const char *kid_a, const char *kid_b, char *out,
			size_t size)
{
	char seed[300], pa[300], pb[300], v[16];
	int rc;

	snprintf(seed, sizeof(seed), "%s/%s.seed", root_sec, root_kid);
	snprintf(pa, sizeof(pa), "%s/%s.pub", kh.keys_dir, kid_a);
	snprintf(pb, sizeof(pb), "%s/%s.pub", kh.keys_dir, kid_b ? kid_b : "");
	snprintf(v, sizeof(v), "%u", version);
	rc = kid_b ? kh_issue(out, size, "keyset", "--root-key", seed, "--version", v, pa, pb, NULL)
		   : kh_issue(out, size, "keyset", "--root-key", seed, "--version", v, pa, NULL);
	cr_assert_eq(rc, 0, "execgate-issue keyset: %s", out);
	out[strcspn(out, "\n")] = '\0';
}

static void publish_keyset(unsigned version, const char *kid_a, const char *kid_b)
{
	char out[4096];

	keyset_text(version, kid_a, kid_b, out, sizeof(out));
	put_both("keyset", out);
}

/* A selection signed by key kid of dir, addressed to to, written under
 * DD_WORKER's selections of both prefixes. */
/* execgate-issue selection, signed by key kid of dir, into out (512). */
static void sel_text(const char *dir, const char *kid, const char *sandbox, const char *worker,
		     unsigned gen, unsigned act, const char *to, char *out)
{
	char seed[300], g[16], a[16];

	snprintf(seed, sizeof(seed), "%s/%s.seed", dir, kid);
	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	cr_assert_eq(kh_issue(out, 512, "selection", "--key", seed, "--sandbox", sandbox,
			      "--worker", worker, "--generation", g, "--activation", a, "--for", to,
			      NULL),
		     0, "execgate-issue selection: %s", out);
	out[strcspn(out, "\n")] = '\0';
}

/* A selection signed by key kid of dir, addressed to to, written under
 * DD_WORKER's selections of both prefixes. */
static void publish_sel(const char *dir, const char *kid, const char *sandbox, const char *worker,
			unsigned gen, unsigned act, const char *to)
{
	char out[512], rel[200];

	sel_text(dir, kid, sandbox, worker, gen, act, to, out);
	snprintf(rel, sizeof(rel), "workers/%s/selections/%s", DD_WORKER, sandbox);
	put_both(rel, out);
}

static bool side_has(struct side *s, const char *needle)
{
	bool yes = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = s->step_from; i < s->n && !yes; i++)
		yes = strstr(s->lines[i], needle) != NULL;
	pthread_mutex_unlock(&s->lock);
	return yes;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of s since the last step, sorted (two threads of a worker may
 * log one step's decisions in either order), one string. */
static char *step_lines(struct side *s)
{
	size_t n, len = 1;
	char **v, *out;

	pthread_mutex_lock(&s->lock);
	n = s->n - s->step_from;
	v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i] = s->lines[s->step_from + i];
		len += strlen(v[i]) + 1;
	}
	s->step_from = s->n;
	pthread_mutex_unlock(&s->lock);
	qsort(v, n, sizeof(*v), cmp_str);
	out = calloc(1, len);
	for (size_t i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	free(v);
	return out;
}

/* Ends a step: a selection of HW_SYNC (a generation of its own) applied
 * on both sides says each has read every document before it; then both
 * sides' decisions of the step must be the same. want: a line the step
 * must have decided (NULL: none), so that the comparison is not of two
 * empty logs. */
static void step(const char *what, const char *want)
{
	char needle[160];
	double end = dd_now_ms() + 15000;
	char *a, *b;

	sync_gen++;
	publish_sel(kh.keys_dir, cp2_kid, HW_SYNC, DD_WORKER, sync_gen, 1, DD_WORKER);
	snprintf(needle, sizeof(needle), "sandbox=%s worker=%s generation=%u ", HW_SYNC, DD_WORKER,
		 sync_gen);
	while (!side_has(&real, needle) || !side_has(&hol, needle)) {
		cr_assert_lt(dd_now_ms(), end, "%s: a side did not read the step's end", what);
		usleep(20000);
	}
	usleep(200000); /* a reconcile a key set started, if any */
	a = step_lines(&real);
	b = step_lines(&hol);
	if (want)
		cr_assert(strstr(a, want), "%s: the real worker did not decide %s:\n%s", what, want,
			  a);
	cr_assert_str_eq(a, b, "%s: the hollow worker decided otherwise\nreal:\n%s\nhollow:\n%s",
			 what, a, b);
	free(a);
	free(b);
}

/* Asks both sides for the same install, writes both outcomes to the
 * decision logs; they must be the same. */
static void install_both(const char *sandbox, unsigned gen, unsigned act)
{
	struct side *sides[2] = {&real, &hol};
	struct eg_install_spec spec;
	char line[2][200];

	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(eg_uuid_from_text(sandbox, spec.sandbox), 0);
	cr_assert_eq(eg_uuid_from_text(DD_WORKER, spec.worker), 0);
	spec.substrate = 2;
	spec.generation = gen;
	spec.activation = act;
	spec.bridge_pid = getpid();
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(sandbox, sandboxes[i]))
			spec.bridge_sockets[0] = bridge_sock[i];
	cr_assert_not_null(spec.bridge_sockets[0]);
	spec.n_bridge_sockets = 1;
	for (size_t i = 0; i < 2; i++) {
		struct eg_install_report rep;
		char err[EG_ERR_MAX] = "";
		int rc = eg_fleet_worker_install(sides[i]->fw, &spec, NULL, &rep, err, sizeof(err));

		snprintf(line[i], sizeof(line[i]), "install %s generation=%u activation=%u: %s%s%s",
			 sandbox, gen, act, rc ? strerror(-rc) : "ok",
			 rc ? "" : " outcome=", rc ? "" : rep.outcome_name);
		if (!rc)
			snprintf(line[i] + strlen(line[i]), sizeof(line[i]) - strlen(line[i]),
				 " epoch=%llu", (unsigned long long)rep.after.epoch);
		add_line(sides[i], line[i]);
	}
	cr_assert_str_eq(line[0], line[1],
			 "install: real and hollow differ\nreal:   %s\nhollow: %s", line[0],
			 line[1]);
}

/* The acks a side wrote, "sandbox state generation activation epoch mode"
 * one line each, sorted by sandbox. */
static char *acks_of(struct side *s)
{
	struct eg_etcd_range r;
	char key[200], err[EG_ERR_MAX], *out;
	size_t len = 1;
	char **v;

	snprintf(key, sizeof(key), "%s/acks/%s/", s->prefix, DD_WORKER);
	cr_assert_eq(eg_etcd_get(cli, key, true, &r, err, sizeof(err)), 0, "%s", err);
	v = calloc(r.n + 1, sizeof(*v));
	for (size_t i = 0; i < r.n; i++) {
		json_t *o = json_loads(r.kvs[i].value, 0, NULL);
		char *dump;

		cr_assert_not_null(o, "ack %s: %s", r.kvs[i].key, r.kvs[i].value);
		/* what differs by side: the revisions, the time, the signature */
		json_object_del(o, "revision");
		json_object_del(o, "acked_at");
		json_object_del(o, "signature");
		json_object_del(json_object_get(o, "selection"), "revision");
		dump = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(o);
		v[i] = dump;
		len += strlen(dump) + 1;
	}
	qsort(v, r.n, sizeof(*v), cmp_str);
	out = calloc(1, len);
	for (size_t i = 0; i < r.n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
		free(v[i]);
	}
	free(v);
	eg_etcd_range_free(&r);
	return out;
}

static void open_side(struct side *s, const struct eg_fleet_backend *be, void *be_ctx)
{
	uint8_t id[EG_ID_BYTES];
	char err[EG_ERR_MAX], pub[300];
	bool created;
	struct eg_fleet_worker_config fc = {
	    .worker = real_worker,
	    .backend = be,
	    .backend_ctx = be_ctx,
	    .state_dir = s->state_dir,
	    .worker_id = id,
	    .endpoints = etcd.endpoints,
	    .prefix = s->prefix,
	    .root_keys = root_dir,
	    .reconcile_interval = 60,
	    .log = side_log,
	    .ctx = s,
	};

	cr_assert_eq(eg_uuid_from_text(DD_WORKER, id), 0);
	cr_assert_eq(
	    eg_node_key_init(s->state_dir, DD_WORKER, pub, sizeof(pub), &created, err, sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(eg_fleet_worker_open(&fc, &s->fw, err, sizeof(err)), 0, "%s: %s", s->name,
		     err);
	cr_assert_eq(eg_fleet_worker_start(s->fw, err, sizeof(err)), 0, "%s: %s", s->name, err);
}

static void hw_setup(void)
{
	struct eg_worker_config wc = {0};
	uint8_t id[EG_ID_BYTES];
	char err[EG_ERR_MAX], out[256], from[300], to[300], keys[200];

	dd_setup();
	dd_stop(SIGTERM); /* the world stays loaded; this test is its only writer */
	memset(&etcd, 0, sizeof(etcd));
	cr_assert_eq(eg_test_etcd_start(1, &etcd), 0, "etcd did not start");
	cr_assert_eq(eg_etcd_open(etcd.endpoints, EG_TEST_ETCD_CALL_MS, &cli, err, sizeof(err)), 0,
		     "%s", err);
	snprintf(real.prefix, sizeof(real.prefix), "/egtest/%d/real", (int)getpid());
	snprintf(hol.prefix, sizeof(hol.prefix), "/egtest/%d/hollow", (int)getpid());
	snprintf(root_dir, sizeof(root_dir), "%s/root", kh.dir);
	snprintf(root_sec, sizeof(root_sec), "%s/rootsec", kh.dir);
	snprintf(rogue_dir, sizeof(rogue_dir), "%s/rogue", kh.dir);
	cr_assert_eq(mkdir(root_dir, 0700), 0);
	cr_assert_eq(mkdir(root_sec, 0700), 0);
	cr_assert_eq(mkdir(rogue_dir, 0700), 0);
	keygen(root_sec, root_kid, sizeof(root_kid));
	keygen(kh.keys_dir, kh.kid, sizeof(kh.kid));
	keygen(kh.keys_dir, cp2_kid, sizeof(cp2_kid));
	keygen(rogue_dir, rogue_kid, sizeof(rogue_kid));
	snprintf(from, sizeof(from), "%s/%s.pub", root_sec, root_kid);
	snprintf(to, sizeof(to), "%s/%s.pub", root_dir, root_kid);
	cr_assert_eq(kh_run(out, sizeof(out), "cp", from, to, NULL), 0, "%s", out);

	/* the bridge sockets both installs name: this process listens */
	for (size_t i = 0; i < 3; i++) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		snprintf(bridge_sock[i], sizeof(bridge_sock[i]), "%s/bridge%zu.sock", kh.dir, i);
		cr_assert_lt(strlen(bridge_sock[i]), sizeof(sa.sun_path));
		memcpy(sa.sun_path, bridge_sock[i], strlen(bridge_sock[i]) + 1);
		bridge_fd[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_geq(bridge_fd[i], 0);
		cr_assert_eq(bind(bridge_fd[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
		cr_assert_eq(listen(bridge_fd[i], 8), 0);
	}

	/* the real side: the loaded world, as execgated opens it */
	wc.pin_dir = kh.pin_dir;
	wc.state_dir = kh.state_dir;
	wc.worker_id = DD_WORKER;
	wc.skip_namespace_check = true;
	cr_assert_eq(eg_worker_open(&wc, &real_worker, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_worker_fleet_set(real_worker, true, err, sizeof(err)), 0, "%s", err);
	snprintf(real.state_dir, sizeof(real.state_dir), "%s", kh.state_dir);
	open_side(&real, NULL, NULL);

	/* the hollow side: its own state dir, the real one's keys at start */
	snprintf(hol.state_dir, sizeof(hol.state_dir), "%s/hollow", kh.dir);
	cr_assert_eq(mkdir(hol.state_dir, 0700), 0);
	snprintf(keys, sizeof(keys), "%s/keys", kh.state_dir);
	cr_assert_eq(eg_uuid_from_text(DD_WORKER, id), 0);
	cr_assert_eq(eg_fleet_hollow_new(id, hol.state_dir, access(keys, F_OK) ? NULL : keys,
					 &hollow, err, sizeof(err)),
		     0, "%s", err);
	open_side(&hol, &eg_fleet_backend_hollow, hollow);
}

static void hw_teardown(void)
{
	struct side *sides[2] = {&real, &hol};

	for (size_t i = 0; i < 2; i++) {
		eg_fleet_worker_close(sides[i]->fw);
		sides[i]->fw = NULL;
		for (size_t j = 0; j < sides[i]->n; j++)
			free(sides[i]->lines[j]);
		sides[i]->n = sides[i]->step_from = 0;
	}
	eg_fleet_hollow_free(hollow);
	hollow = NULL;
	if (real_worker)
		eg_worker_close(real_worker);
	real_worker = NULL;
	for (size_t i = 0; i < 3; i++) {
		if (bridge_fd[i] >= 0)
			close(bridge_fd[i]);
		bridge_fd[i] = -1;
	}
	if (cli)
		eg_etcd_close(cli);
	cli = NULL;
	eg_test_etcd_stop(&etcd);
	dd_teardown();
}

TestSuite(fleet_hollow, .init = hw_setup, .fini = hw_teardown, .timeout = 180);

/* guarantees: none */
Test(fleet_hollow, decides_as_the_real_worker)
{
	char *a, *b, rel[200];

	publish_keyset(1, kh.kid, cp2_kid);
	step("key set 1", "key set version 1 applied");

	/* selections, then installs: what is selected installs, the rest not */
	publish_sel(kh.keys_dir, kh.kid, HW_SB1, DD_WORKER, 8, 1, DD_WORKER);
	publish_sel(kh.keys_dir, kh.kid, HW_SB2, DD_WORKER, 3, 1, DD_WORKER);
	step("selections", "selection applied: sandbox=" HW_SB1);
	install_both(HW_SB1, 8, 1);
	install_both(HW_SB2, 2, 1); /* not the selected generation */
	install_both(HW_SB2, 3, 1);
	install_both(HW_SB3, 1, 1); /* no selection at all */
	install_both(HW_SB1, 7, 1); /* older than installed */
	step("installs", "install " HW_SB2 " generation=2 activation=1: No message");

	/* forged, garbage, older, another worker's audience */
	publish_sel(rogue_dir, rogue_kid, HW_SB1, DD_WORKER, 99, 1, DD_WORKER);
	snprintf(rel, sizeof(rel), "workers/%s/selections/%s", DD_WORKER, HW_SB2);
	put_both(rel, "not-a-selection");
	snprintf(rel, sizeof(rel), "workers/%s/selections/NOT-A-UUID", DD_WORKER);
	put_both(rel, "x");
	publish_sel(kh.keys_dir, kh.kid, HW_SB1, DD_WORKER, 7, 1, DD_WORKER);
	publish_sel(kh.keys_dir, kh.kid, HW_SB2, DD_WORKER, 9, 1, DD_WORKER_B);
	step("refusals", "selection refused: older");

	/* a move away: the record retires; a new activation here installs */
	publish_sel(kh.keys_dir, kh.kid, HW_SB1, DD_WORKER_B, 9, 1, DD_WORKER);
	publish_sel(kh.keys_dir, cp2_kid, HW_SB2, DD_WORKER, 3, 2, DD_WORKER);
	step("move", "retired sandbox=" HW_SB1);
	install_both(HW_SB1, 8, 1); /* retired and not selected */
	install_both(HW_SB2, 3, 2);
	install_both(HW_SB2, 3, 1);
	step("after the move", "install " HW_SB2 " generation=3 activation=2: ok");

	/* the control plane deletes the old worker's copy once the move is
	 * fenced (docs/fleet.md, "Database size"): the selection in force
	 * stays, so the old selection put back is older and the old
	 * execution stays refused */
	delete_both("workers/" DD_WORKER "/selections/" HW_SB1);
	publish_sel(kh.keys_dir, kh.kid, HW_SB1, DD_WORKER, 8, 1, DD_WORKER);
	step("the old copy deleted, the old selection put back", "selection refused: older");
	install_both(HW_SB1, 8, 1);
	step("after the put back", "install " HW_SB1 " generation=8 activation=1: No message");

	/* key set 2 withdraws kh.kid: what it signed stops counting; the
	 * older set and what the withdrawn key signs now are refused */
	publish_keyset(2, cp2_kid, NULL);
	step("withdrawal", "withdrawn");
	publish_keyset(1, kh.kid, cp2_kid);
	publish_sel(kh.keys_dir, kh.kid, HW_SB3, DD_WORKER, 1, 1, DD_WORKER);
	delete_both("workers/" DD_WORKER "/selections/" HW_SB2);
	step("after the withdrawal", "key set refused: refuse-older");
	install_both(HW_SB3, 1, 1); /* its selection's key is withdrawn */
	publish_sel(kh.keys_dir, cp2_kid, HW_SB3, DD_WORKER, 2, 1, DD_WORKER);
	step("a new selection by the key left", "selection applied: sandbox=" HW_SB3);
	install_both(HW_SB3, 2, 1);
	step("the end", "install " HW_SB3 " generation=2 activation=1: ok");

	/* what each told the control plane */
	usleep(1500000); /* the acker writes within its recheck period */
	a = acks_of(&real);
	b = acks_of(&hol);
	cr_assert(strstr(a, "\"state\":\"retired\""), "no retired ack:\n%s", a);
	cr_assert_str_eq(a, b, "acks differ\nreal:\n%s\nhollow:\n%s", a, b);
	free(a);
	free(b);
	{
		json_t *ra = eg_fleet_worker_status(real.fw), *ha = eg_fleet_worker_status(hol.fw);
		char *x = json_dumps(json_object_get(ra, "refused"), JSON_SORT_KEYS),
		     *y = json_dumps(json_object_get(ha, "refused"), JSON_SORT_KEYS);

		cr_assert_str_eq(x, y, "refusal counters differ\nreal: %s\nhollow: %s", x, y);
		free(x);
		free(y);
		json_decref(ra);
		json_decref(ha);
	}
}

static long long keyset_refused(struct eg_fleet_worker *fw, const char *reason, long long *version)
{
	json_t *st = eg_fleet_worker_status(fw);
	long long n = json_integer_value(
	    json_object_get(json_object_get(json_object_get(st, "refused"), "keyset"), reason));

	*version = json_integer_value(json_object_get(st, "keyset_version"));
	json_decref(st);
	return n;
}

/* A key-set write read ahead of its stream (user/fleetd/keys_ahead.c), or
 * applied by the periodic read, is judged, and counted, once: its delivery on the stream later is
 * not refused as equal; a new write of the same set still is. Revisions far above this store's, as
 * a read ahead can find a key set newer than the batch that made it read: the applied revision does
 * not hide the second judgement, only the read-ahead mark does. */
Test(fleet_hollow, a_key_set_read_ahead_is_judged_once)
{
	char text[4096], key[200];
	long long v;

	keyset_text(7, kh.kid, cp2_kid, text, sizeof(text));
	snprintf(key, sizeof(key), "%s/keyset", hol.prefix);
	eg_fw_apply_keyset_ahead(hol.fw, key, text, strlen(text), 100000);
	cr_assert_eq(keyset_refused(hol.fw, "refuse-equal", &v), 0);
	cr_assert_eq(v, 7, "the key set read ahead was not applied");
	eg_fleet_worker_apply_keyset(hol.fw, key, text, strlen(text), 100000);
	cr_assert_eq(keyset_refused(hol.fw, "refuse-equal", &v), 0,
		     "the stream's delivery of a write read ahead was judged again");
	eg_fleet_worker_apply_keyset(hol.fw, key, text, strlen(text), 100001);
	cr_assert_eq(keyset_refused(hol.fw, "refuse-equal", &v), 1,
		     "a new write of the same set was not refused as equal");
	/* the periodic read beside the watch applies a newer write first (it
	 * counts nothing): the stream's delivery of that write is no refusal
	 * either (the fresh-root check met it as refuse-equal) */
	keyset_text(8, kh.kid, cp2_kid, text, sizeof(text));
	eg_fw_apply_keyset(hol.fw, key, text, strlen(text), 200000, false);
	eg_fleet_worker_apply_keyset(hol.fw, key, text, strlen(text), 200000);
	cr_assert_eq(keyset_refused(hol.fw, "refuse-equal", &v), 1,
		     "the write in force, applied by the periodic read, refused as equal");
	cr_assert_eq(v, 8);
}

/* The read ahead of the key-set stream is paced: a batch that holds a
 * selection of a key the worker does not hold reads the key-set key at
 * most once a second while the reads bring no new key set (a writer of
 * the prefix who fills it with junk gets one read a second), and a batch
 * of known keys reads nothing. The member is a canned server that counts
 * the reads and answers that the key set is not there. */
Test(fleet_hollow, a_read_ahead_for_unknown_keys_is_paced)
{
	struct eg_fake_http member = {.body = "{\"header\":{\"revision\":\"5\"}}"};
	char rogue[512], known[512], key[300], err[EG_ERR_MAX];
	struct eg_etcd_event ev = {.type = EG_ETCD_PUT};
	uint64_t ahead_at = 0;
	struct eg_etcd *e;

	sel_text(rogue_dir, rogue_kid, HW_SB1, DD_WORKER, 5, 1, DD_WORKER, rogue);
	sel_text(kh.keys_dir, kh.kid, HW_SB1, DD_WORKER, 5, 1, DD_WORKER, known);
	cr_assert_eq(eg_fake_http_start(&member), 0);
	cr_assert_eq(eg_etcd_open(member.url, 2000, &e, err, sizeof(err)), 0, "%s", err);
	snprintf(key, sizeof(key), "%s/workers/%s/selections/%s", hol.prefix, DD_WORKER, HW_SB1);
	ev.kv.key = key;
	ev.kv.value = rogue;
	ev.kv.value_len = strlen(rogue);
	for (int i = 0; i < 5; i++)
		eg_fw_keys_ahead(hol.fw, e, &ev, 1, &ahead_at);
	cr_assert_eq(member.requests, 1, "%d reads ahead for five batches in a second",
		     member.requests);
	usleep(1100 * 1000);
	eg_fw_keys_ahead(hol.fw, e, &ev, 1, &ahead_at);
	cr_assert_eq(member.requests, 2, "no read ahead a second later");
	/* the key the real worker's set brought at start: nothing to read */
	publish_keyset(1, kh.kid, cp2_kid);
	ev.kv.value = known;
	ev.kv.value_len = strlen(known);
	for (double end = dd_now_ms() + 15000; eg_fw_sel_key_unknown(hol.fw, known, strlen(known));)
		cr_assert_lt(dd_now_ms(), end, "the hollow worker never applied key set 1");
	usleep(1100 * 1000);
	eg_fw_keys_ahead(hol.fw, e, &ev, 1, &ahead_at);
	cr_assert_eq(member.requests, 2, "a batch of known keys was read ahead");
	eg_etcd_close(e);
	eg_fake_http_stop(&member);
}
