// SPDX-License-Identifier: Apache-2.0
/* The two-worker demo (scripts/demo-two-workers.sh) as a test: the seed's
 * worked example end to end on this kernel, with exact asserts.
 *
 * Sandbox S runs as execution 7 on worker A (the harness's world) and is
 * restored as execution 8 on worker B (a second scratch cgroup, pin dir and
 * state dir made here). Each worker has its own node key and an
 * execgate-bridge; behind each VMM socket is execgate-demo's stand-in
 * Firecracker (hybrid VSOCK) with its guest agent. The sandbox managers are
 * execgate-demo manager processes (they join the worker's cgroup and admit
 * themselves); the front end is this test, with a real route cache
 * (client/route_cache.h) fed with the workers' signed verdicts.
 *
 * The assertions are the cgroup tier's decisions; with BPF LSM loaded the
 * kernel refuses some hops earlier (listener identity, stream leases), which
 * the LSM suites test on their own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include "core/capability.h"
#include "core/keyset.h"
#include "client/retry.h"
#include "client/route_cache.h"
#include "core/signed_verdict.h"
#include "execgate/execgate.h"
#include "harness.h"
#include "not_offered.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000002a7"
#define WORKER_A "aaaaaaaa-0000-4000-8000-00000000000a"
#define WORKER_B "bbbbbbbb-0000-4000-8000-00000000000b"
#define OUT_MAX	 16384

struct tw_worker {
	const char *id;
	char pin[160], state[200], cgroup[560], bridge[200], vmm[200], log[200];
	__u8 uuid[EG_ID_BYTES];
	struct eg_worker *w;
	uint64_t mark[EG_K_REASON_COUNT];
};

static struct tw_worker A, B;
static bool b_cgroup_made;

/* --- binaries and processes ------------------------------------------------- */

static const char *bin_beside(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned n;
	char *p = paths[n++ % 4];
	const char *eg = getenv("EXECGATE_BIN");
	const char *slash = eg ? strrchr(eg, '/') : NULL;

	cr_assert(slash, "EXECGATE_BIN must name the build's execgate (make test-kernel sets it)");
	snprintf(p, PATH_MAX, "%.*s/%s", (int)(slash - eg), eg, name);
	cr_assert_eq(access(p, X_OK), 0, "%s: %s", p, strerror(errno));
	return p;
}

/* Forks argv (NULL-terminated) with stdout into out_file and stderr into
 * err_file (either may be NULL), in cgroup when given; tracked for teardown. */
static pid_t spawn(char *const argv[], const char *cgroup, const char *out_file,
		   const char *err_file)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		char procs[600];
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cgroup) {
			FILE *f;

			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
			f = fopen(procs, "w");
			if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
				_exit(90);
		}
		if (out_file) {
			fd = open(out_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(91);
		}
		if (err_file) {
			fd = open(err_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(91);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	kh_track(pid);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == pid)
			kh.pids[i] = 0;
}

/* Running (not gone, not a zombie); reaps it if it became our child (the
 * runner may be a subreaper). */
static bool alive(pid_t pid)
{
	char path[64], buf[256];
	const char *p;
	ssize_t n;
	int fd;

	waitpid(pid, NULL, WNOHANG);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z';
}

static char *slurp(const char *path)
{
	static char buf[OUT_MAX];
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool wait_for(const char *path, const char *needle, int timeout_ms)
{
	for (int i = 0; i < timeout_ms / 20; i++) {
		if (needle ? strstr(slurp(path), needle) != NULL : access(path, F_OK) == 0)
			return true;
		usleep(20000);
	}
	return false;
}

static unsigned count_of(const char *path, const char *needle)
{
	unsigned n = 0;

	for (const char *p = slurp(path); (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static pid_t firecracker_start(struct tw_worker *w, const char *name)
{
	char log[200];
	char *argv[] = {(char *)bin_beside("execgate-demo"),
			"firecracker",
			"--socket",
			w->vmm,
			"--name",
			(char *)name,
			"--log",
			log,
			NULL};
	pid_t pid;

	snprintf(log, sizeof(log), "%s/%s.log", kh.dir, name);
	pid = spawn(argv, NULL, NULL, NULL);
	cr_assert(wait_for(w->vmm, NULL, 3000), "%s did not appear", w->vmm);
	return pid;
}

/* execgate-bridge for S on worker w, in w's cgroup; as_pid: under that
 * (reused) pid, through execgate-demo as-pid (its pid in *as_parent: the
 * bridge dies with it). Returns the bridge's pid. */
static pid_t bridge_start(struct tw_worker *w, pid_t as_pid, pid_t *as_parent)
{
	char pid_text[24], as_out[240];
	char *bargs[] = {(char *)bin_beside("execgate-bridge"),
			 "--sandbox",
			 SANDBOX,
			 "--listen",
			 w->bridge,
			 "--vmm-socket",
			 w->vmm,
			 "--vsock-port",
			 "52",
			 "--pin-dir",
			 w->pin,
			 "--state-dir",
			 w->state,
			 NULL};
	char *aargs[20] = {
	    (char *)bin_beside("execgate-demo"), "as-pid", pid_text, "--cgroup", w->cgroup, "--"};
	pid_t pid;

	unlink(w->bridge);
	if (!as_pid) {
		pid = spawn(bargs, w->cgroup, NULL, w->log);
	} else {
		snprintf(pid_text, sizeof(pid_text), "%d", (int)as_pid);
		snprintf(as_out, sizeof(as_out), "%s/as-pid.out", kh.dir);
		for (int i = 0; bargs[i]; i++)
			aargs[6 + i] = bargs[i];
		*as_parent = spawn(aargs, NULL, as_out, w->log);
		pid = as_pid;
	}
	/* as-pid waits up to 5 s for a pid another fork holds for a moment */
	cr_assert(wait_for(w->bridge, NULL, as_pid ? 10000 : 5000), "%s did not appear: %s",
		  w->bridge, slurp(w->log));
	return pid;
}

/* --- workers ---------------------------------------------------------------- */

static void worker_fill(struct tw_worker *w, const char *id, char name)
{
	w->id = id;
	snprintf(w->bridge, sizeof(w->bridge), "%s/%c-bridge.sock", kh.dir, name);
	snprintf(w->vmm, sizeof(w->vmm), "%s/%c-vmm.vsock", kh.dir, name);
	snprintf(w->log, sizeof(w->log), "%s/%c-bridge.log", kh.dir, name);
	cr_assert_eq(eg_uuid_from_text(id, w->uuid), 0);
}

static void worker_open(struct tw_worker *w)
{
	struct eg_worker_config cfg = {.pin_dir = w->pin, .state_dir = w->state};
	char err[EG_ERR_MAX];

	cr_assert_eq(eg_worker_open(&cfg, &w->w, err, sizeof(err)), 0, "%s", err);
}

static void run_cli(struct tw_worker *w, int want, char *out, char *const args[])
{
	char *argv[40] = {NULL};
	int n = 0, rc;

	for (; args[n]; n++)
		argv[n] = args[n];
	argv[n++] = "--pin-dir";
	argv[n++] = w->pin;
	argv[n++] = "--state-dir";
	argv[n++] = w->state;
	argv[n] = NULL;
	rc = kh_run(out, OUT_MAX, getenv("EXECGATE_BIN"), argv[0], argv[1], argv[2], argv[3],
		    argv[4], argv[5], argv[6], argv[7], argv[8], argv[9], argv[10], argv[11],
		    argv[12], argv[13], argv[14], argv[15], argv[16], argv[17], argv[18], argv[19],
		    argv[20], argv[21], argv[22], argv[23], argv[24], (char *)NULL);
	cr_assert_eq(rc, want, "execgate %s: exit %d, not %d: %s", args[0], rc, want, out);
}

static void install(struct tw_worker *w, unsigned gen, unsigned act, pid_t bridge, pid_t vmm,
		    char *out)
{
	char g[16], a[16], bp[16], vp[16];

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	snprintf(bp, sizeof(bp), "%d", (int)bridge);
	snprintf(vp, sizeof(vp), "%d", (int)vmm);
	run_cli(w, 0, out,
		(char *const[]){"install", "--sandbox", SANDBOX, "--worker", (char *)w->id,
				"--generation", g, "--activation", a, "--bridge-pid", bp,
				"--vmm-pid", vp, "--bridge-socket", w->bridge, "--vmm-socket",
				w->vmm, NULL});
}

static void mark(struct tw_worker *w)
{
	cr_assert_eq(eg_worker_counters(w->w, w->mark, EG_K_REASON_COUNT), EG_K_REASON_COUNT);
}

/* How much reason r moved on w since mark(w). */
static __u64 moved(struct tw_worker *w, __u32 r)
{
	uint64_t now[EG_K_REASON_COUNT];

	cr_assert_eq(eg_worker_counters(w->w, now, EG_K_REASON_COUNT), EG_K_REASON_COUNT);
	return now[r] - w->mark[r];
}

static void assert_nothing_denied(struct tw_worker *w, const char *step)
{
	for (__u32 r = EG_K_DENY_NO_RECORD; r < EG_K_EVENT_DROPPED; r++)
		cr_assert_eq(moved(w, r), 0, "%s: kernel reason %u moved", step, r);
}

/* Pending events on w of (pid, reason), drained. */
static int events(struct tw_worker *w, pid_t pid, __u32 reason)
{
	return kh_events_in(eg_worker_events_fd(w->w), (__u32)pid, reason);
}

/* --- the sandbox manager (execgate-demo manager) ---------------------------- */

struct mgr {
	int exit;
	char out[OUT_MAX];
	char verdict[128], signed_verdict[EG_SIGNED_VERDICT_TEXT_MAX], connect[EG_ERR_MAX],
	    reply[600];
	pid_t pid;
};

static void field(const char *out, const char *key, char *dst, size_t size)
{
	size_t kl = strlen(key);

	dst[0] = '\0';
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			snprintf(dst, size, "%.*s", (int)strcspn(l + kl + 1, "\n"), l + kl + 1);
			return;
		}
}

static void manager(struct tw_worker *w, const char *token, const char *request, const char *flag,
		    struct mgr *m)
{
	char pid[32];

	m->exit = kh_run(m->out, sizeof(m->out), bin_beside("execgate-demo"), "manager",
			 "--pin-dir", w->pin, "--state-dir", w->state, "--cgroup", w->cgroup,
			 "--sandbox", SANDBOX, "--bridge-socket", w->bridge, "--token", token,
			 "--request", request, "--scope", "file.read,exec", flag, (char *)NULL);
	field(m->out, "verdict", m->verdict, sizeof(m->verdict));
	field(m->out, "signed_verdict", m->signed_verdict, sizeof(m->signed_verdict));
	field(m->out, "connect", m->connect, sizeof(m->connect));
	field(m->out, "reply", m->reply, sizeof(m->reply));
	field(m->out, "pid", pid, sizeof(pid));
	m->pid = (pid_t)atoi(pid);
}

static void token_id(const char *token, uint8_t out[EG_ID_BYTES])
{
	struct eg_capability cap;

	cr_assert_eq(eg_cap_decode_text(token, strlen(token), &cap, NULL), EG_DECODE_OK);
	memcpy(out, cap.token_id, EG_ID_BYTES);
}

static void node_key(struct tw_worker *w, struct eg_node_key *k)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	char path[260];

	snprintf(path, sizeof(path), "%s/node.pub", w->state);
	cr_assert_eq(eg_pubkey_read(path, pk), EG_KEY_OK, "%s", path);
	cr_assert_eq(eg_route_node_key_init(k, w->uuid, pk), 0);
}

static void assert_entry(const struct eg_route_entry *e, struct tw_worker *w, uint64_t gen,
			 uint32_t act, uint64_t version, uint64_t expiry, const char *step)
{
	cr_assert_eq(e->version, version, "%s: entry version %llu, not %llu", step,
		     (unsigned long long)e->version, (unsigned long long)version);
	cr_assert_eq(memcmp(e->route.worker, w->uuid, EG_ID_BYTES), 0,
		     "%s: entry names another worker", step);
	cr_assert_eq(e->route.generation, gen, "%s", step);
	cr_assert_eq(e->route.activation, act, "%s", step);
	cr_assert_eq(e->expiry, expiry,
		     "%s: the expiry moved (route repair is not re-authentication)", step);
}

/* --- set-up and teardown ---------------------------------------------------- */

static void tw_teardown(void);

static void tw_setup(void)
{
	char out[OUT_MAX];
	int rc;

	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	b_cgroup_made = false;
	kh_setup();
	worker_fill(&A, WORKER_A, 'A');
	snprintf(A.pin, sizeof(A.pin), "%s", kh.pin_dir);
	snprintf(A.state, sizeof(A.state), "%s", kh.state_dir);
	snprintf(A.cgroup, sizeof(A.cgroup), "%s", kh.cgroup);
	worker_fill(&B, WORKER_B, 'B');
	snprintf(B.pin, sizeof(B.pin), "%s-B", kh.pin_dir);
	snprintf(B.state, sizeof(B.state), "%s/B-state", kh.dir);
	snprintf(B.cgroup, sizeof(B.cgroup), "%s-B", kh.cgroup); /* a sibling scratch cgroup */
	/* Criterion runs no .fini after a failure in .init either: each
	 * failure below cleans up A (kh_setup) and B first. */
	if (mkdir(B.cgroup, 0755)) {
		rc = errno;
		tw_teardown();
		cr_assert_fail("mkdir %s: %s", B.cgroup, strerror(rc));
	}
	b_cgroup_made = true;
	if (!getenv("EXECGATE_BIN")) {
		tw_teardown();
		cr_assert_fail("EXECGATE_BIN is not set: run the suite through make test-kernel");
	}
	rc =
	    kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "load", "--cgroup", B.cgroup,
		   "--require", "cgroup", "--pin-dir", B.pin, "--state-dir", B.state, (char *)NULL);
	if (rc) {
		tw_teardown();
		cr_assert_fail("load worker B: exit %d: %s", rc, out);
	}
	/* Criterion runs no .fini after a skip: B too is cleaned up first */
	kh_on_skip(tw_teardown);
	if (strstr(out, "tier lsm: loaded")) {
		kh_not_offered(KH_NEED_NO_LSM, "the LSM tier refuses some hops earlier than the "
					       "cgroup tier this scenario asserts (the LSM suites "
					       "cover those hooks)");
	}
	worker_open(&A);
	worker_open(&B);
}

static void tw_teardown(void)
{
	char out[OUT_MAX];
	FILE *f;

	eg_worker_close(A.w);
	eg_worker_close(B.w);
	A.w = B.w = NULL;
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] > 0)
			reap(kh.pids[i]);
	/* what is left in B's scratch cgroup was started by this test */
	if (b_cgroup_made) {
		char procs[600];
		int pid;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", B.cgroup);
		f = fopen(procs, "r");
		while (f && fscanf(f, "%d", &pid) == 1)
			kill(pid, SIGKILL);
		if (f)
			fclose(f);
	}
	if (B.pin[0] && access(B.pin, F_OK) == 0 && getenv("EXECGATE_BIN"))
		kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "unload", "--pin-dir", B.pin,
		       "--state-dir", B.state, (char *)NULL);
	if (b_cgroup_made && kh_cgroup_remove(B.cgroup))
		cr_log_info("scratch cgroup %s left behind: %s", B.cgroup, strerror(errno));
	b_cgroup_made = false;
	kh_teardown();
}

TestSuite(two_workers, .init = tw_setup, .fini = tw_teardown, .timeout = 120);

/* guarantees: unix-bridge-socket-grant@cgroup, unix-vmm-socket-bridge-only@cgroup,
 * epoch-revokes-grants@cgroup */
Test(two_workers, worked_example_end_to_end)
{
	char out[OUT_MAX], seed_pub[300], cap7[512], cap8a[512], cap8b[512], cap8c[512], cap82[512],
	    log7[200], log8[200], term[200], imp_log[200],
	    first_verdict[EG_SIGNED_VERDICT_TEXT_MAX];
	char node_pub_a[260], node_pub_b[260];
	struct eg_node_key nk[2];
	struct eg_node_keys keys = {nk, 2};
	struct eg_route_cache *cache;
	struct eg_route stale = {0}, fresh = {0};
	struct eg_route_attempt at1, at2;
	struct eg_route_entry e, cur;
	struct eg_verdict_claim cl;
	struct mgr m;
	uint8_t raw[EG_SV_LEN + 8];
	size_t raw_len;
	__u8 sbx[EG_ID_BYTES];
	uint64_t now = (uint64_t)time(NULL), expiry = now + 600;
	pid_t fc7, fc8, ba, bb, bb2, imp, stale_parent = 0;
	unsigned requests7;
	struct timespec t0, t1;
	long long cut_ms;

	/* keys: one control-plane key on both workers, a node key each */
	kh_keys();
	snprintf(seed_pub, sizeof(seed_pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	run_cli(&B, 0, out, (char *const[]){"keys", "add", seed_pub, NULL});
	run_cli(&A, 0, out, (char *const[]){"node-key", "init", "--worker-id", WORKER_A, NULL});
	run_cli(&B, 0, out, (char *const[]){"node-key", "init", "--worker-id", WORKER_B, NULL});
	snprintf(node_pub_a, sizeof(node_pub_a), "%s/node.pub", A.state);
	snprintf(node_pub_b, sizeof(node_pub_b), "%s/node.pub", B.state);
	/* the handles were opened before the node keys existed */
	eg_worker_close(A.w);
	eg_worker_close(B.w);
	worker_open(&A);
	worker_open(&B);
	snprintf(log7, sizeof(log7), "%s/exec-7.log", kh.dir);
	snprintf(log8, sizeof(log8), "%s/exec-8.log", kh.dir);
	snprintf(term, sizeof(term), "%s/terminal.out", kh.dir);
	snprintf(imp_log, sizeof(imp_log), "%s/impostor.log", kh.dir);

	/* worker A runs execution 7, with a terminal open on it */
	fc7 = firecracker_start(&A, "exec-7");
	ba = bridge_start(&A, 0, NULL);
	install(&A, 7, 1, ba, fc7, out);
	kh_cap(cap7, sizeof(cap7), SANDBOX, WORKER_A, 7, 1, 120, 0);
	spawn((char *const[]){(char *)bin_beside("execgate-demo"),
			      "manager",
			      "--pin-dir",
			      A.pin,
			      "--state-dir",
			      A.state,
			      "--cgroup",
			      A.cgroup,
			      "--sandbox",
			      SANDBOX,
			      "--bridge-socket",
			      A.bridge,
			      "--token",
			      cap7,
			      "--request",
			      "open terminal",
			      "--scope",
			      "exec",
			      "--terminal",
			      NULL},
	      NULL, term, term);
	cr_assert(wait_for(term, "reply exec-7: open terminal", 5000), "terminal: %s", slurp(term));

	/* S is restored as execution 8 on worker B */
	fc8 = firecracker_start(&B, "exec-8");
	bb = bridge_start(&B, 0, NULL);
	install(&B, 8, 1, bb, fc8, out);

	/* the front end: its cache still holds the route from before the restore */
	cr_assert_eq(sodium_init() < 0, 0);
	node_key(&A, &nk[0]);
	node_key(&B, &nk[1]);
	cache = eg_route_cache_new(64, 64);
	cr_assert_not_null(cache);
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sbx), 0);
	memcpy(stale.worker, A.uuid, EG_ID_BYTES);
	stale.substrate = EG_SUBSTRATE_FC_HOST;
	stale.generation = 7;
	stale.activation = 1;
	memcpy(fresh.worker, B.uuid, EG_ID_BYTES);
	fresh.substrate = EG_SUBSTRATE_FC_HOST;
	fresh.generation = 8;
	fresh.activation = 1;
	cr_assert_eq(eg_route_cache_put(cache, sbx, &stale, expiry, now, &e), 0);
	assert_entry(&e, &A, 7, 1, 1, expiry, "put");
	kh_cap(cap8a, sizeof(cap8a), SANDBOX, WORKER_B, 8, 1, 120, 0);
	kh_cap(cap8b, sizeof(cap8b), SANDBOX, WORKER_B, 8, 1, 120, 0);
	cr_assert_eq(eg_route_cache_lookup(cache, sbx, now, &at1.entry), 0);
	cr_assert_eq(eg_route_cache_lookup(cache, sbx, now, &at2.entry), 0);
	token_id(cap8a, at1.token_id);
	token_id(cap8b, at2.token_id);

	/* 1. a request selected for 8 reaches worker A: refused before it is
	 * forwarded, with a refresh signed by A */
	requests7 = count_of(log7, "agent: request");
	mark(&A);
	manager(&A, cap8a, "read /etc/hostname", NULL, &m);
	cr_assert_eq(m.exit, 3, "%s", m.out);
	cr_assert_str_eq(m.verdict, "refresh-route: worker-mismatch", "%s", m.out);
	cr_assert_str_eq(m.connect, "none: refused before forwarding", "%s", m.out);
	assert_nothing_denied(&A, "step 1");
	cr_assert_eq(moved(&A, EG_K_ALLOW_GRANT), 0, "step 1: a connect was let through");
	cr_assert_eq(count_of(log7, "agent: request"), requests7, "step 1 reached execution 7");
	cr_assert_eq(eg_verdict_verify(node_pub_a, m.signed_verdict, &cl, out, EG_ERR_MAX), 0, "%s",
		     out);
	cr_assert_eq(cl.verdict, EG_REFRESH_ROUTE);
	cr_assert_eq(cl.reason, EG_REASON_WORKER_MISMATCH);
	cr_assert_eq(memcmp(cl.worker, A.uuid, EG_ID_BYTES), 0);
	cr_assert_eq(memcmp(cl.token_id, at1.token_id, EG_ID_BYTES), 0);
	cr_assert(cl.has_record && cl.generation == 7 && cl.activation == 1);
	cr_assert_eq(eg_verdict_verify(node_pub_b, m.signed_verdict, &cl, out, EG_ERR_MAX),
		     -EBADMSG, "B's node key must not vouch for A's verdict");
	snprintf(first_verdict, sizeof(first_verdict), "%s", m.signed_verdict);
	/* a manager that ignores the verdict is stopped by the kernel */
	manager(&A, cap8b, "exec ls /", "--force-connect", &m);
	cr_assert_str_eq(m.verdict, "refresh-route: worker-mismatch", "%s", m.out);
	cr_assert(!strncmp(m.connect, "refused EPERM:", 14), "%s", m.out);
	cr_assert_eq(moved(&A, EG_K_DENY_NO_GRANT), 1);
	cr_assert_eq(kh_events((__u32)m.pid, EG_K_DENY_NO_GRANT), 1);
	cr_assert_eq(count_of(log7, "agent: request"), requests7);
	cr_assert_eq(eg_verdict_verify(node_pub_a, m.signed_verdict, &cl, out, EG_ERR_MAX), 0);

	/* 2. the signed refresh repairs the cache by compare-and-swap */
	cr_assert_eq(eg_route_cache_on_refresh_text(cache, first_verdict, strlen(first_verdict),
						    &keys, &at1, &fresh, (uint64_t)time(NULL),
						    &cur),
		     EG_ROUTE_REPAIRED);
	assert_entry(&cur, &B, 8, 1, 2, expiry, "step 2");
	cr_assert_eq(eg_route_cache_lookup(cache, sbx, (uint64_t)time(NULL), &e), 0);
	assert_entry(&e, &B, 8, 1, 2, expiry, "step 2 lookup");
	cr_assert_eq(eg_route_retry_action(EG_OP_IDEMPOTENT, EG_ROUTE_REPAIRED, 0, false),
		     EG_RETRY_CURRENT);
	mark(&B);
	manager(&B, cap8a, "read /etc/hostname", NULL, &m);
	cr_assert_eq(m.exit, 0, "%s", m.out);
	cr_assert_str_eq(m.verdict, "allow");
	cr_assert_str_eq(m.reply, "exec-8: read /etc/hostname", "%s", m.out);
	cr_assert_eq(m.signed_verdict[0], '\0', "an allow is never signed");
	cr_assert_eq(moved(&B, EG_K_ALLOW_GRANT), 1);
	assert_nothing_denied(&B, "step 2");
	/* the bridge asked for guest port 52; the VMM assigned its own host port */
	cr_assert(strstr(slurp(log8), "exec-8: connection 1: CONNECT 52 -> OK 1073741825\n"), "%s",
		  slurp(log8));

	/* 3. the late rejection of op 2 (refused on the old entry) loses the
	 * race; replays and forgeries are ignored */
	manager(&A, cap8b, "exec ls /", NULL, &m); /* its verdict, as A sent it */
	cr_assert_eq(m.exit, 3, "%s", m.out);
	cr_assert_eq(eg_route_cache_on_refresh_text(cache, m.signed_verdict,
						    strlen(m.signed_verdict), &keys, &at2, &fresh,
						    (uint64_t)time(NULL), &cur),
		     EG_ROUTE_LOST_RACE);
	assert_entry(&cur, &B, 8, 1, 2, expiry, "step 3");
	cr_assert_eq(eg_route_cache_on_refresh_text(cache, first_verdict, strlen(first_verdict),
						    &keys, &at1, &fresh, (uint64_t)time(NULL),
						    &cur),
		     EG_ROUTE_IGNORED_REPLAYED);
	cr_assert_eq(sodium_base642bin(raw, sizeof(raw), m.signed_verdict, strlen(m.signed_verdict),
				       NULL, &raw_len, NULL,
				       sodium_base64_VARIANT_URLSAFE_NO_PADDING),
		     0);
	cr_assert_eq(raw_len, EG_SV_LEN);
	raw[raw_len - 1] ^= 1;
	cr_assert_eq(eg_route_cache_on_refresh(cache, raw, raw_len, &keys, &at2, &fresh,
					       (uint64_t)time(NULL), &cur),
		     EG_ROUTE_IGNORED_BAD_SIGNATURE);
	cr_assert_eq(eg_route_cache_on_refresh(cache, NULL, 0, &keys, &at2, &fresh,
					       (uint64_t)time(NULL), &cur),
		     EG_ROUTE_IGNORED_UNSIGNED);
	assert_entry(&cur, &B, 8, 1, 2, expiry, "step 3, after the ignored verdicts");
	cr_assert_eq(eg_route_retry_action(EG_OP_AT_MOST_ONCE, EG_ROUTE_LOST_RACE, 0, true),
		     EG_RETRY_CURRENT);
	manager(&B, cap8b, "exec ls /", NULL, &m);
	cr_assert_str_eq(m.reply, "exec-8: exec ls /", "%s", m.out);
	cr_assert_eq(count_of(log7, "agent: request"), requests7, "steps 1-3 reached execution 7");

	/* 4. worker A retires 7: a capability for 7 is refused there and on B,
	 * and 7's grant no longer opens A's bridge socket */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_cli(&A, 0, out, (char *const[]){"retire", "--sandbox", SANDBOX, NULL});
	run_cli(&A, 3, out, (char *const[]){"check", cap7, NULL});
	cr_assert(!strncmp(out, "refresh-route: generation-retired\n", 34), "%s", out);
	run_cli(&B, 3, out, (char *const[]){"check", cap7, NULL});
	cr_assert(!strncmp(out, "refresh-route: generation-retired\n", 34), "%s", out);
	mark(&A);
	manager(&A, cap7, "read /etc/hostname", "--force-connect", &m);
	cr_assert_str_eq(m.verdict, "refresh-route: generation-retired", "%s", m.out);
	cr_assert(!strncmp(m.connect, "refused EPERM:", 14), "%s", m.out);
	cr_assert_eq(moved(&A, EG_K_DENY_RETIRED), 1);
	cr_assert_eq(kh_events((__u32)m.pid, EG_K_DENY_RETIRED), 1);

	/* 5. the terminal on 7 is cut, within the bridge's lease period */
	cr_assert(wait_for(term, "terminal: stopped", 2000), "terminal still runs: %s",
		  slurp(term));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cut_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cr_assert(strstr(slurp(A.log), "revoked:") || strstr(slurp(A.log), "closed"), "%s",
		  slurp(A.log));
	cr_assert(count_of(log7, "closed after") >= 1, "%s", slurp(log7));
	cr_log_info("two_workers: terminal on 7 cut %lld ms after retire began", cut_ms);

	/* 6. B's bridge dies and a new process gets its pid: the record keeps
	 * the old start time, so the manager's verification and the kernel
	 * (for the stale bridge's connect to the VMM socket) refuse it */
	reap(bb);
	cr_assert_eq(bridge_start(&B, bb, &stale_parent), bb);
	cr_assert(kh_proc_id(bb).start_boottime_ns != 0);
	kh_cap(cap8c, sizeof(cap8c), SANDBOX, WORKER_B, 8, 1, 120, 0);
	manager(&B, cap8c, "read /etc/hostname", NULL, &m);
	cr_assert_str_eq(m.verdict, "allow", "%s", m.out);
	cr_assert(!strncmp(m.connect, "refused EPERM:", 14), "%s", m.out);
	cr_assert(strstr(m.connect, "pid reused (another start time)"), "%s", m.out);
	/* the stale bridge may still be handling that connection: let it
	 * finish before counting */
	usleep(300 * 1000);
	events(&B, bb, EG_K_DENY_NOT_BRIDGE);
	mark(&B);
	manager(&B, cap8c, "read /etc/hostname", "--unverified", &m);
	cr_assert_str_eq(m.connect, "ok (unverified)", "%s", m.out);
	cr_assert(!strncmp(m.reply, "none", 4), "%s", m.out);
	cr_assert(wait_for(B.log, "refused by the kernel (Operation not permitted)", 2000), "%s",
		  slurp(B.log));
	cr_assert_eq(moved(&B, EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(events(&B, bb, EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(count_of(log8, "agent: request"), 2, "the stale bridge reached execution 8");

	/* a new bridge, installed as activation 2 of the same execution */
	reap(stale_parent);
	kill(bb, SIGKILL);
	for (int i = 0; i < 100 && alive(bb); i++)
		usleep(10000);
	cr_assert(!alive(bb), "the stale bridge %d still runs", (int)bb);
	bb2 = bridge_start(&B, 0, NULL);
	install(&B, 8, 2, bb2, fc8, out);
	cr_assert(strstr(out, ": activation generation 8 attempt 2, epoch 1;"), "%s", out);
	kh_cap(cap82, sizeof(cap82), SANDBOX, WORKER_B, 8, 2, 120, 0);
	manager(&B, cap82, "read /etc/hostname", NULL, &m);
	cr_assert_str_eq(m.reply, "exec-8: read /etc/hostname", "%s", m.out);

	/* 7. an impostor bound 8's VMM socket path: the bridge's peer check
	 * refuses it before anything is sent */
	imp = spawn((char *const[]){(char *)bin_beside("execgate-demo"), "impostor", "--socket",
				    B.vmm, "--log", imp_log, NULL},
		    NULL, NULL, NULL);
	cr_assert(wait_for(imp_log, "bound", 3000));
	mark(&B);
	manager(&B, cap82, "read /etc/hostname", NULL, &m);
	cr_assert(!strncmp(m.connect, "verified: bridge pid", 20), "%s", m.out);
	cr_assert(!strncmp(m.reply, "none", 4), "%s", m.out);
	cr_assert(wait_for(imp_log, "connection 1: received", 2000), "%s", slurp(imp_log));
	cr_assert(strstr(slurp(imp_log), "connection 1: received 0 bytes"), "%s", slurp(imp_log));
	cr_assert(strstr(slurp(B.log), "another process"), "%s", slurp(B.log));
	/* the cgroup tier sees only who connects: the registered bridge */
	cr_assert_eq(moved(&B, EG_K_ALLOW_BRIDGE), 1);
	assert_nothing_denied(&B, "step 7");
	reap(imp);
	eg_route_cache_free(cache);
}
