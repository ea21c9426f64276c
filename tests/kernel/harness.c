// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h> /* struct clone_args */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "not_offered.h"
#include "harness.h"
#include "json_log.h"
#include "restrict.h"
#include "world_pool.h"
#include "core/keyset.h"
#include "loader/tiers/cgroup.h"
#include "loader/maps/pins.h"
#include "loader/process/proc_id.h"

struct kh_env kh;
static unsigned kh_seq;
pid_t kh_last_pid;

static const char *bin(const char *env, const char *fallback)
{
	const char *b = getenv(env);

	return b && *b ? b : fallback;
}

const char *kh_path(const char *name)
{
	static char bufs[8][256];
	static unsigned n;
	char *b = bufs[n++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", kh.dir, name);
	return b;
}

void kh_track(pid_t pid)
{
	if (kh.npids < KH_MAX_PIDS)
		kh.pids[kh.npids++] = pid;
}

/* --- running programs ----------------------------------------------------- */

/* EXECGATE_EXEC_LOG=FILE appends a line per program run: its wall time
 * in ms and its first two words; and the world pool's refusals
 * (kh_exec_note). It is how the check's time in a TCG guest was split
 * between process starts, loads and the tests' own work (docs/bench/). */
static void exec_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void exec_logf(const char *fmt, ...)
{
	const char *path = getenv("EXECGATE_EXEC_LOG");
	char line[600];
	va_list ap;
	ssize_t w;
	int fd, n;

	if (!path || !*path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (n <= 0 || fd < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* a lost line only thins the log */
	w = write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	(void)w;
	close(fd);
}

void kh_exec_note(const char *what, const char *detail)
{
	const struct criterion_test *t = criterion_current_test;

	exec_logf("0\t%s %s %s::%s\n", what, detail, t ? t->category : "-", t ? t->name : "-");
}

static void exec_log(const struct timespec *t0, char *const argv[])
{
	const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	exec_logf("%.1f\t%s %s\n",
		  (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6,
		  base ? base + 1 : argv[0], argv[0] && argv[1] ? argv[1] : "");
}

static int run_argv(char *out, size_t size, char *const argv[])
{
	struct timespec t0;
	char scratch[256];
	int pipefd[2], status, rc;
	size_t used = 0, all_len = 0, all_cap = 0;
	char *all = NULL; /* everything, for the JSON log (json_log.h) */
	ssize_t n;
	pid_t pid;

	if (!out) {
		out = scratch;
		size = sizeof(scratch);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	kh_last_pid = pid;
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		if (kh_child_restrict && kr_apply(kh_child_restrict))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	/* Keep reading past a full buffer so the child never blocks. */
	for (;;) {
		bool room = used + 1 < size;
		char *at = room ? out + used : scratch;

		n = read(pipefd[0], at, room ? size - 1 - used : sizeof(scratch));
		if (n <= 0)
			break;
		if (all_len + (size_t)n > all_cap) {
			all_cap = 2 * (all_len + (size_t)n);
			all = realloc(all, all_cap);
			cr_assert_not_null(all);
		}
		memcpy(all + all_len, at, (size_t)n);
		all_len += (size_t)n;
		if (room)
			used += (size_t)n;
	}
	close(pipefd[0]);
	out[used] = '\0';
	if (waitpid(pid, &status, 0) < 0) {
		free(all);
		return -1;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	exec_log(&t0, argv);
	kh_json_log_cli(argv, rc, all ? all : "", all_len);
	free(all);
	return rc;
}

static int run_va(char *out, size_t size, const char *prog, bool dirs, va_list ap)
{
	char *argv[64];
	int n = 0;
	const char *a;

	argv[n++] = (char *)prog;
	while ((a = va_arg(ap, const char *)) && n < 58)
		argv[n++] = (char *)a;
	if (dirs) {
		argv[n++] = "--pin-dir";
		argv[n++] = kh.pin_dir;
		argv[n++] = "--state-dir";
		argv[n++] = kh.state_dir;
	}
	argv[n] = NULL;
	return run_argv(out, size, argv);
}

int kh_cli(char *out, size_t size, ...)
{
	const char *first;
	va_list ap;
	int rc;

	/* "-n" first: the arguments after it, without the test's dirs. */
	va_start(ap, size);
	first = va_arg(ap, const char *);
	if (first && !strcmp(first, "-n")) {
		rc = run_va(out, size, bin("EXECGATE_BIN", "build/execgate"), false, ap);
		va_end(ap);
		return rc;
	}
	va_end(ap);
	va_start(ap, size);
	rc = run_va(out, size, bin("EXECGATE_BIN", "build/execgate"), true, ap);
	va_end(ap);
	return rc;
}

int kh_issue(char *out, size_t size, ...)
{
	va_list ap;
	int rc;

	va_start(ap, size);
	rc = run_va(out, size, bin("EXECGATE_ISSUE_BIN", "build/execgate-issue"), false, ap);
	va_end(ap);
	return rc;
}

int kh_run(char *out, size_t size, const char *prog, ...)
{
	va_list ap;
	int rc;

	/* callers pass getenv("EXECGATE_BIN"): unset outside make, and a NULL
	 * argv[0] would only show up as the child's SIGSEGV */
	cr_assert_not_null(prog, "program to run is NULL: run the suite through make test-kernel, "
				 "or set EXECGATE_BIN and EXECGATE_ISSUE_BIN");
	va_start(ap, prog);
	rc = run_va(out, size, prog, false, ap);
	va_end(ap);
	return rc;
}

static void drain_fd(int fd, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t n;

	while (used + 1 < size && (n = read(fd, buf + used, size - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = '\0';
}

/* A copy of the binary at path `to`, mode 0755: another user may not reach
 * the build tree (a clone under /root is 0700), but reaches the world's
 * scratch dir, as it reaches the daemon's socket there. */
static void copy_exec(const char *from, const char *to)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	if (!access(to, X_OK))
		return;
	in = open(from, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(in, 0, "open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(out, 0, "create %s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n, "copy to %s: %s", to, strerror(errno));
	cr_assert_eq(n, 0, "read %s: %s", from, strerror(errno));
	close(in);
	cr_assert_eq(close(out), 0, "close %s: %s", to, strerror(errno));
	cr_assert_eq(chmod(to, 0755), 0, "chmod %s: %s", to, strerror(errno));
}

void kh_cli_split(struct kh_split *r, uid_t uid, gid_t supp, const char *const *args)
{
	const char *bin = getenv("EXECGATE_BIN"), *argv[32];
	int o[2], e[2], st, n = 0;
	pid_t pid;

	cr_assert_not_null(bin, "EXECGATE_BIN must name the execgate binary");
	if (uid) {
		const char *copy = kh_path("execgate-as-user");

		copy_exec(bin, copy);
		bin = copy;
	}
	argv[n++] = "execgate";
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	cr_assert_eq(pipe(o), 0);
	cr_assert_eq(pipe(e), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(o[0]);
		close(e[0]);
		if (uid && (setgroups(1, &supp) || setgid(65534) || setuid(uid)))
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	/* Small outputs: stderr after stdout cannot deadlock below 64 KiB. */
	drain_fd(o[0], r->out, sizeof(r->out));
	drain_fd(e[0], r->err, sizeof(r->err));
	close(o[0]);
	close(e[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void kh_keys(void)
{
	char out[512], pub[256], seed[256];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	int rc;

	rc = kh_issue(out, sizeof(out), "keygen", "--out", kh.keys_dir, NULL);
	cr_assert_eq(rc, 0, "execgate-issue keygen: %s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kh.kid, sizeof(kh.kid), "%.31s", out);
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	/* keygen writes typed key files (core/key_file.h): the worker's
	 * reader takes the .pub and refuses the .seed by its content. */
	cr_assert_eq(eg_pubkey_read(pub, pk), EG_KEY_OK, "%s", pub);
	cr_assert_eq(eg_pubkey_read(seed, pk), EG_KEY_FILE_SECRET, "%s", seed);
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, NULL);
	cr_assert_eq(rc, 0, "execgate keys add: %s", out);
}

void kh_cap(char *token, size_t size, const char *sandbox, const char *worker, unsigned gen,
	    unsigned act, unsigned ttl, long long now_unix)
{
	char seed[256], g[16], a[16], t[16], now[32];
	int rc;

	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	snprintf(t, sizeof(t), "%u", ttl);
	if (now_unix)
		snprintf(now, sizeof(now), "%lld", now_unix);
	if (now_unix)
		rc = kh_issue(token, size, "cap", "--key", seed, "--sandbox", sandbox, "--worker",
			      worker, "--generation", g, "--activation", a, "--scope",
			      "file.read,exec", "--ttl", t, "--now", now, NULL);
	else
		rc = kh_issue(token, size, "cap", "--key", seed, "--sandbox", sandbox, "--worker",
			      worker, "--generation", g, "--activation", a, "--scope",
			      "file.read,exec", "--ttl", t, NULL);
	cr_assert_eq(rc, 0, "execgate-issue cap: %s", token);
	token[strcspn(token, "\n")] = '\0';
}

/* --- setup / teardown ----------------------------------------------------- */

void kh_setup(void)
{
	kh_setup_requiring("cgroup");
}

void kh_scratch_make(const char *prefix, unsigned n)
{
	char root[400], *name;

	/* mkdtemp, not the pid alone: a run killed before its teardown
	 * leaves /tmp/<prefix>-<pid>-<n>, and a later run that gets the same
	 * pid must not trip on it. The pin dir and cgroup take the same
	 * unique name. */
	snprintf(kh.dir, sizeof(kh.dir), "/tmp/%s-%d-%u-XXXXXX", prefix, (int)getpid(), n);
	cr_assert_not_null(mkdtemp(kh.dir), "mkdtemp %s: %s", kh.dir, strerror(errno));
	name = strrchr(kh.dir, '/') + 1;
	snprintf(kh.state_dir, sizeof(kh.state_dir), "%s/state", kh.dir);
	snprintf(kh.keys_dir, sizeof(kh.keys_dir), "%s/issuer", kh.dir);
	snprintf(kh.pin_dir, sizeof(kh.pin_dir), "/sys/fs/bpf/%s", name);
	cr_assert_eq(mkdir(kh.keys_dir, 0700), 0, "mkdir %s", kh.keys_dir);
	cr_assert_eq(eg_cgroup2_root(root, sizeof(root)), 0,
		     "no cgroup v2 mount in /proc/self/mountinfo");
	snprintf(kh.cgroup, sizeof(kh.cgroup), "%s/%s", root, name);
	cr_assert_eq(mkdir(kh.cgroup, 0755), 0, "mkdir %s: %s", kh.cgroup, strerror(errno));
	kh.cgroup_made = true;
}

static int rmdir_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path); /* files of cgroupfs go with their directory */
	return 0;
}

int kh_cgroup_remove(const char *path)
{
	char kill_path[PATH_MAX];
	int fd;

	if (!rmdir(path) || errno == ENOENT)
		return 0;
	if (errno != EBUSY)
		return -1;
	/* cgroup.kill (5.14+) SIGKILLs every process in it and below: all of
	 * them the test's, as the cgroup was made for it alone. */
	snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", path);
	fd = open(kill_path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* A failed write leaves the retries below to a slow exit. */
		ssize_t n = write(fd, "1", 1);

		(void)n;
		close(fd);
	}
	for (int i = 0; i < 500; i++) {
		/* Child cgroups a test left go first, deepest first. */
		nftw(path, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (access(path, F_OK) && errno == ENOENT)
			return 0;
		usleep(10000);
	}
	errno = EBUSY;
	return -1;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* What this kernel offers, probed once for every test of the run (on the
 * host and in each VM guest alike) by `execgate probe --json` on a pin dir
 * nothing is loaded in, and kept in /tmp/egk-probe-<pool>.json (world_pool.h's
 * kh_pool_id: the runner's pid, or the id several runs share): each test
 * is a child of Criterion's runner, whose report hook below removes the
 * file at the end of the run (of the last run, for a shared id).
 * A test that needs a tier the probe found not offered ends there, before
 * a load that could only fail: on 6.1 (no connect_unix) each such load
 * cost a probe of every tier under TCG. A tier the probe offers is loaded
 * and probed again by the test's own load, as before: the cache only
 * spares the loads that must fail, and a failing probe is never cached.
 * Returns true when tier is offered; why: the probe's reason otherwise. */
static bool kh_probe_offers(const char *tier, char *why, size_t size)
{
	char path[160], tmp[200], out[65536], none[160], id[40];
	json_t *doc, *tiers, *t;
	json_error_t jerr;
	size_t i;
	bool offered = false, found = false;
	FILE *f;

	kh_pool_id(id, sizeof(id), false);
	snprintf(path, sizeof(path), "/tmp/egk-probe-%s.json", id);
	if (access(path, R_OK)) {
		int rc;

		snprintf(none, sizeof(none), "/tmp/egk-probe-state-%d", (int)getpid());
		snprintf(tmp, sizeof(tmp), "/sys/fs/bpf/egk-probe-none-%d", (int)getpid());
		rc = kh_cli(out, sizeof(out), "-n", "probe", "--json", "--pin-dir", tmp,
			    "--state-dir", none, NULL);
		nftw(none, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		cr_assert_eq(rc, 0, "execgate probe --json: exit %d: %s", rc, out);
		snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
		f = fopen(tmp, "we");
		cr_assert_not_null(f, "%s: %s", tmp, strerror(errno));
		cr_assert_eq(fputs(out, f) >= 0 && fclose(f) == 0, true, "%s", tmp);
		cr_assert_eq(rename(tmp, path), 0, "%s: %s", path, strerror(errno));
	}
	doc = json_load_file(path, 0, &jerr);
	cr_assert_not_null(doc, "%s: %s", path, jerr.text);
	tiers = json_object_get(doc, "tiers");
	json_array_foreach(tiers, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "name"));

		/* "full", as load --require reads it: every tier. */
		if (!name || (strcmp(tier, "full") && strcmp(name, tier)))
			continue;
		found = true;
		offered = json_is_true(json_object_get(t, "offered"));
		if (!offered) {
			snprintf(why, size,
				 "execgate probe (%s): tier %s is not offered by this kernel: %s",
				 path, name, json_string_value(json_object_get(t, "why_not")));
			break;
		}
	}
	json_decref(doc);
	cr_assert(found, "%s: no tier named %s", path, tier);
	return offered;
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	char path[160], id[40];

	(void)stats;
	if (kh_pool_kept())
		return;
	kh_pool_id(id, sizeof(id), true);
	snprintf(path, sizeof(path), "/tmp/egk-probe-%s.json", id);
	unlink(path);
}

bool kh_tier_loaded(const char *tier)
{
	static const char *const first_link[][2] = {
	    {"cgroup", "cgroup_connect_unix"},
	    {"lsm", "lsm_socket_connect"},
	    {"tcp", "tcp_connect4"},
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(first_link) / sizeof(first_link[0]); i++) {
		if (strcmp(tier, first_link[i][0]))
			continue;
		snprintf(path, sizeof(path), "%s/links/%s", kh.pin_dir, first_link[i][1]);
		return access(path, F_OK) == 0;
	}
	cr_assert_fail("kh_tier_loaded: no tier %s", tier);
	return false;
}

/* The world kh names goes: its loaded tiers, cgroup and scratch dir. */
static void world_destroy(void)
{
	char out[1024];

	if (kh.maps_open)
		eg_maps_close(&kh.maps);
	kh.maps_open = false;
	if (kh.pin_dir[0] && access(kh.pin_dir, F_OK) == 0)
		kh_cli(out, sizeof(out), "unload", NULL);
	if (kh.cgroup_made) {
		if (kh_cgroup_remove(kh.cgroup))
			cr_log_info("scratch cgroup %s left behind: %s", kh.cgroup,
				    strerror(errno));
		kh.cgroup_made = false;
	}
	if (kh.dir[0])
		nftw(kh.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(const char *tier, bool pooled)
{
	char out[4096], err[512];
	unsigned n = kh_seq++;
	int rc;

	memset(&kh, 0, sizeof(kh));
	kh_child_restrict = 0;
	if (geteuid() != 0)
		kh_not_offered(KH_NEED_ROOT, "not running as root");
	kh_on_skip(kh_teardown);
	kh_json_log_open();
	if (tier) {
		char why[1024];

		if (!kh_probe_offers(tier, why, sizeof(why)))
			kh_not_offered(KH_NEED_CGROUP, why);
	}
	if (pooled && kh_pool_take(tier))
		return;
	if (kh.dir[0]) {
		/* A pooled world that could not be reset (world_pool.h). */
		world_destroy();
		memset(&kh, 0, sizeof(kh));
	}
	kh_scratch_make("egk", n);

	/* Without a tier, the NULL in place of "--require" ends the list. */
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, tier ? "--require" : NULL,
		    tier, NULL);
	if (rc == 5)
		kh_not_offered(KH_NEED_CGROUP, out);
	cr_assert_eq(rc, 0, "execgate load --cgroup %s: exit %d: %s", kh.cgroup, rc, out);
	kh.loaded = true;
	rc = eg_maps_open(&kh.maps, kh.pin_dir, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	kh.maps_open = true;
	if (pooled)
		kh_pool_record(tier);
}

void kh_setup_requiring(const char *tier)
{
	setup(tier, false);
}

void kh_setup_shared(void)
{
	setup("cgroup", true);
}

void kh_setup_shared_requiring(const char *tier)
{
	setup(tier, true);
}

/* Whether pid is still a child of this process, alive or a zombie (whose
 * pid nobody else can have). A tracked child a test reaped itself is not:
 * its pid may belong to any process of the host by now, and a SIGKILL
 * meant for the child would hit that one. (In a make check an etcdctl
 * of the fleet suite, which runs beside this one, died of a SIGKILL
 * nothing else explains.) */
static bool still_our_child(pid_t pid)
{
	siginfo_t si;

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

void kh_teardown(void)
{
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] > 0 && still_our_child(kh.pids[i]))
			kill(kh.pids[i], SIGKILL);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] > 0)
			waitpid(kh.pids[i], NULL, 0);
	kh.npids = 0;
	if (kh.maps_open)
		eg_maps_close(&kh.maps);
	kh.maps_open = false;
	/* A world recorded after its load goes to the next test when it can
	 * (world_pool.h); any other is unloaded and removed. Either way kh
	 * names no world after: a second teardown (a skip's, not_offered.h)
	 * must not destroy a world the pool now holds. */
	if (!kh.dir[0])
		return;
	if (!kh_pool_give())
		world_destroy();
	kh.dir[0] = kh.pin_dir[0] = '\0';
	kh.cgroup_made = false;
}

/* --- kernel state ----------------------------------------------------------- */

__u64 kh_counter(__u32 reason)
{
	__u64 c[EG_K_REASON_COUNT];

	cr_assert_eq(eg_counters_read(&kh.maps, c), 0, "reading eg_counters");
	return c[reason];
}

struct ev_match {
	__u32 pid, reason;
	int n;
};

static int ev_cb(void *ctx, void *data, size_t size)
{
	struct ev_match *m = ctx;
	const struct eg_event *ev = data;

	if (size >= sizeof(*ev) && ev->pid == m->pid && ev->reason == m->reason)
		m->n++;
	return 0;
}

int kh_events(__u32 pid, __u32 reason)
{
	return kh_events_in(kh.maps.fd[EG_MAP_EVENTS], pid, reason);
}

int kh_admit_entries(int fd, pid_t tgid, struct eg_admit_key *key, struct eg_admit_entry *one)
{
	struct eg_admit_key k, next;
	struct eg_admit_entry e;
	bool have = false;
	int n = 0;

	while (!bpf_map_get_next_key(fd, have ? &k : NULL, &next)) {
		have = true;
		k = next;
		if (k.tgid != (__u32)tgid || bpf_map_lookup_elem(fd, &k, &e))
			continue;
		if (key)
			*key = k;
		if (one)
			*one = e;
		n++;
	}
	return n;
}

int kh_events_in(int ring_fd, __u32 pid, __u32 reason)
{
	struct ev_match m = {.pid = pid, .reason = reason};
	struct ring_buffer *rb;

	rb = ring_buffer__new(ring_fd, ev_cb, &m, NULL);
	cr_assert_not_null(rb, "ring_buffer__new");
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return m.n;
}

__u64 kh_would_deny(__u32 hook, __u32 reason)
{
	static __u64 c[EG_HOOK_SLOTS][EG_COUNTER_SLOTS];

	cr_assert_lt(hook, EG_HOOK_SLOTS);
	cr_assert_lt(reason, EG_COUNTER_SLOTS);
	cr_assert_eq(eg_would_deny_read(&kh.maps, c), 0, "reading eg_would_deny");
	return c[hook][reason];
}

struct ev_split {
	__u32 pid, reason, hook; /* hook 0: any */
	int plain, audit;
};

static int ev_split_cb(void *ctx, void *data, size_t size)
{
	struct ev_split *m = ctx;
	const struct eg_event *ev = data;

	if (size < sizeof(*ev) || ev->reason != m->reason || (m->pid && ev->pid != m->pid) ||
	    (m->hook && ev->hook != m->hook))
		return 0;
	if (ev->flags & EG_EVENT_AUDIT)
		m->audit++;
	else
		m->plain++;
	return 0;
}

void kh_events_split(__u32 pid, __u32 reason, int *plain, int *audit)
{
	kh_events_split_hook(pid, reason, 0, plain, audit);
}

void kh_events_split_hook(__u32 pid, __u32 reason, __u32 hook, int *plain, int *audit)
{
	struct ev_split m = {.pid = pid, .reason = reason, .hook = hook};
	struct ring_buffer *rb;

	rb = ring_buffer__new(kh.maps.fd[EG_MAP_EVENTS], ev_split_cb, &m, NULL);
	cr_assert_not_null(rb, "ring_buffer__new");
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	*plain = m.plain;
	*audit = m.audit;
}

struct eg_proc_id kh_proc_id(pid_t pid)
{
	struct eg_proc_id id;
	char err[256];

	cr_assert_eq(eg_proc_identify(pid, &id, err, sizeof(err)), 0, "%s", err);
	return id;
}

/* --- children ----------------------------------------------------------------- */

enum kh_op { KH_CONNECT, KH_LISTEN, KH_EXEC_CONNECT, KH_OPTMEM };

struct kh_msg {
	int op;
	int mode;
	char path[EG_UNIX_PATH_MAX];
};

struct kh_reply {
	int rc;
	int tagged;
	struct eg_sk_tag tag;
};

static int unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

static const char *exec_connect_py = "import socket,sys\n"
				     "s=socket.socket(socket.AF_UNIX)\n"
				     "try:\n"
				     "  s.connect(sys.argv[1]); sys.exit(0)\n"
				     "except OSError as e:\n"
				     "  sys.exit(e.errno or 255)\n";

/* Unix path sockets connect across network namespaces, so the child keeps
 * reaching the test's listeners from a namespace of its own. */
static int child_optmem(int value, bool *own_netns)
{
	FILE *f;

	if (!*own_netns) {
		if (unshare(CLONE_NEWNET))
			return -errno;
		*own_netns = true;
	}
	f = fopen("/proc/sys/net/core/optmem_max", "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%d\n", value) < 0 || fclose(f))
		return -EIO;
	return 0;
}

static void child_loop(int ctl, const char *pin_dir)
{
	struct sockaddr_un sun;
	struct kh_msg m;
	struct kh_reply r;
	char tags_pin[256];
	int listen_fd = -1, tags_fd, fd;
	bool own_netns = false;

	snprintf(tags_pin, sizeof(tags_pin), "%s/%s", pin_dir, eg_map_names[EG_MAP_SK_TAGS]);
	tags_fd = bpf_obj_get(tags_pin);
	while (read(ctl, &m, sizeof(m)) == sizeof(m)) {
		memset(&r, 0, sizeof(r));
		m.path[sizeof(m.path) - 1] = '\0';
		if (m.op == KH_OPTMEM) {
			r.rc = child_optmem(m.mode, &own_netns);
		} else if (unix_addr(m.path, &sun)) {
			r.rc = -ENAMETOOLONG;
		} else if (m.op == KH_CONNECT) {
			socklen_t len = sizeof(sun);
			size_t plen = strlen(m.path);

			if (m.mode == 1)
				memset(sun.sun_path + plen + 1, 'X',
				       sizeof(sun.sun_path) - plen - 1);
			else if (m.mode == 2)
				len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (connect(fd, (struct sockaddr *)&sun, len)) {
				r.rc = -errno;
			} else if (tags_fd >= 0 && bpf_map_lookup_elem(tags_fd, &fd, &r.tag) == 0) {
				r.tagged = 1;
			}
			close(fd);
		} else if (m.op == KH_LISTEN) {
			unlink(m.path);
			listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (bind(listen_fd, (struct sockaddr *)&sun, sizeof(sun)) ||
			    listen(listen_fd, 1024))
				r.rc = -errno;
		} else if (m.op == KH_EXEC_CONNECT) {
			execlp("python3", "python3", "-c", exec_connect_py, m.path, (char *)NULL);
			r.rc = -errno;
		}
		if (write(ctl, &r, sizeof(r)) != sizeof(r))
			break;
		while (listen_fd >= 0 && (fd = accept(listen_fd, NULL, NULL)) >= 0)
			close(fd);
	}
	_exit(0);
}

static void join_cgroup(void)
{
	if (eg_cgroup_join(kh.cgroup))
		_exit(90);
}

pid_t kh_fork_as(pid_t want)
{
	struct clone_args args = {.exit_signal = SIGCHLD};

	if (want <= 0)
		return fork();
	args.set_tid = (uintptr_t)&want;
	args.set_tid_size = 1;
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

void kh_child_start(struct kh_child *c, bool in_cgroup)
{
	cr_assert_eq(kh_child_start_as(c, in_cgroup, 0), 0, "fork: %s", strerror(errno));
}

int kh_child_start_as(struct kh_child *c, bool in_cgroup, pid_t want)
{
	int sv[2], err;
	char ready;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0, "socketpair");
	pid = kh_fork_as(want);
	if (pid < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		errno = err;
		return -err;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		if (in_cgroup)
			join_cgroup();
		ready = 1;
		if (write(sv[1], &ready, 1) != 1)
			_exit(91);
		child_loop(sv[1], kh.pin_dir);
	}
	close(sv[1]);
	c->pid = pid;
	c->ctl = sv[0];
	kh_track(pid);
	cr_assert_eq(read(c->ctl, &ready, 1), 1, "child %d did not start", (int)pid);
	return 0;
}

static struct kh_reply child_send(struct kh_child *c, const struct kh_msg *m)
{
	struct kh_reply r;

	cr_assert_eq(write(c->ctl, m, sizeof(*m)), (ssize_t)sizeof(*m), "child %d: command",
		     (int)c->pid);
	cr_assert_eq(read(c->ctl, &r, sizeof(r)), (ssize_t)sizeof(r), "child %d: no reply",
		     (int)c->pid);
	return r;
}

static struct kh_reply child_call(struct kh_child *c, int op, const char *path)
{
	struct kh_msg m = {.op = op};

	snprintf(m.path, sizeof(m.path), "%s", path);
	return child_send(c, &m);
}

int kh_vm_optmem_set(int value)
{
	const char *sysctl = "/proc/sys/net/core/optmem_max";
	int old = -1;
	FILE *f;

	cr_assert(getenv("EXECGATE_VM"),
		  "changing the machine-wide net.core.optmem_max is for a VM only (make vmtest)");
	f = fopen(sysctl, "r+");
	cr_assert_not_null(f, "%s: %s", sysctl, strerror(errno));
	cr_assert_eq(fscanf(f, "%d", &old), 1, "%s", sysctl);
	rewind(f);
	fprintf(f, "%d\n", value);
	cr_assert_eq(fclose(f), 0, "writing %s", sysctl);
	return old;
}

int kh_child_optmem(struct kh_child *c, int value)
{
	struct kh_msg m = {.op = KH_OPTMEM, .mode = value};

	return child_send(c, &m).rc;
}

int kh_child_connect(struct kh_child *c, const char *path, struct eg_sk_tag *tag, bool *tagged)
{
	struct kh_reply r = child_call(c, KH_CONNECT, path);

	if (tag)
		*tag = r.tag;
	if (tagged)
		*tagged = r.tagged;
	return r.rc;
}

int kh_child_connect_mode(struct kh_child *c, const char *path, int mode)
{
	struct kh_msg m = {.op = KH_CONNECT, .mode = mode};
	struct kh_reply r;

	snprintf(m.path, sizeof(m.path), "%s", path);
	cr_assert_eq(write(c->ctl, &m, sizeof(m)), (ssize_t)sizeof(m), "child command");
	cr_assert_eq(read(c->ctl, &r, sizeof(r)), (ssize_t)sizeof(r), "child reply");
	return r.rc;
}

int kh_child_listen(struct kh_child *c, const char *path)
{
	return child_call(c, KH_LISTEN, path).rc;
}

int kh_child_exec_connect(struct kh_child *c, const char *path)
{
	struct kh_msg m = {.op = KH_EXEC_CONNECT};
	int status;

	snprintf(m.path, sizeof(m.path), "%s", path);
	cr_assert_eq(write(c->ctl, &m, sizeof(m)), (ssize_t)sizeof(m), "child command");
	cr_assert_eq(waitpid(c->pid, &status, 0), c->pid, "waitpid");
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == c->pid)
			kh.pids[i] = 0;
	close(c->ctl);
	c->pid = 0;
	cr_assert(WIFEXITED(status), "python3 child died by a signal");
	return -WEXITSTATUS(status);
}

void kh_child_stop(struct kh_child *c)
{
	if (c->pid <= 0)
		return;
	close(c->ctl);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == c->pid)
			kh.pids[i] = 0;
	c->pid = 0;
}

pid_t kh_listener_start(const char *path)
{
	struct sockaddr_un sun;
	int fd, sv[2];
	char ready = 0;
	pid_t pid;

	cr_assert_eq(unix_addr(path, &sun), 0, "path too long: %s", path);
	cr_assert_eq(pipe2(sv, O_CLOEXEC), 0, "pipe");
	pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 4096))
			_exit(92);
		ready = 1;
		if (write(sv[1], &ready, 1) != 1)
			_exit(93);
		for (;;) {
			int c = accept(fd, NULL, NULL);

			if (c >= 0)
				close(c);
		}
	}
	close(sv[1]);
	kh_track(pid);
	cr_assert_eq(read(sv[0], &ready, 1), 1, "listener on %s did not start", path);
	close(sv[0]);
	return pid;
}

/* --- connect loops ---------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void kh_loop_start(struct kh_loop *l, const char *path, double seconds, kh_tag_check check,
		   void *arg)
{
	int go[2], res[2];
	struct sockaddr_un sun;
	char tags_pin[256], b;
	pid_t pid;

	cr_assert_eq(unix_addr(path, &sun), 0, "path too long");
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0, "pipe");
	cr_assert_eq(pipe2(res, O_CLOEXEC), 0, "pipe");
	snprintf(tags_pin, sizeof(tags_pin), "%s/%s", kh.pin_dir, eg_map_names[EG_MAP_SK_TAGS]);
	pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		struct kh_loop_result r = {0};
		struct eg_sk_tag tag;
		int tags_fd, fd;
		double end;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(res[0]);
		join_cgroup();
		tags_fd = bpf_obj_get(tags_pin);
		b = 1;
		if (write(res[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(94);
		end = now_s() + seconds;
		while (now_s() < end) {
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
				r.ok++;
				if (tags_fd >= 0 && bpf_map_lookup_elem(tags_fd, &fd, &tag) == 0) {
					r.tagged++;
					if (check && !check(&tag, arg))
						r.bad_tag++;
				}
			} else if (errno == EPERM) {
				r.eperm++;
			} else {
				r.other++;
				r.other_errno = errno;
			}
			close(fd);
		}
		if (write(res[1], &r, sizeof(r)) != sizeof(r))
			_exit(95);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->res_fd = res[0];
	kh_track(pid);
	cr_assert_eq(read(l->res_fd, &b, 1), 1, "loop child %d did not start", (int)pid);
}

void kh_loop_go(struct kh_loop *l)
{
	char b = 1;

	cr_assert_eq(write(l->go_fd, &b, 1), 1, "loop go");
	close(l->go_fd);
}

struct kh_loop_result kh_loop_wait(struct kh_loop *l)
{
	struct kh_loop_result r;

	cr_assert_eq(read(l->res_fd, &r, sizeof(r)), (ssize_t)sizeof(r), "loop child %d: no result",
		     (int)l->pid);
	close(l->res_fd);
	waitpid(l->pid, NULL, 0);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == l->pid)
			kh.pids[i] = 0;
	return r;
}
