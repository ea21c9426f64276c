// SPDX-License-Identifier: Apache-2.0
/* The CLI against a loaded worker, as a new operator meets it: messages that
 * name the real cause (a missing cgroup, a thread id), exit codes (keys add
 * twice, status with nothing loaded), status without side effects, events
 * (--count exact, --drain, wall-clock time, escaped text), list/show/forget,
 * and one verdict form for admit and check. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "execgate/execgate.h"
#include "harness.h"
#include "loader/tiers/cgroup.h"

#define S	 "5f0c2c1e-7a4b-4c1d-9e3f-00000000c11e"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"

TestSuite(cli_worker, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 90);

static void install(pid_t bridge, const char *bsock)
{
	char b[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
		    "--generation", "7", "--activation", "1", "--bridge-pid", b, "--bridge-socket",
		    bsock, NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

/* guarantees: none */
Test(cli_worker, load_on_a_missing_cgroup_says_so)
{
	char out[2048], cg[700], pin[200], want[1024];
	int rc;

	snprintf(cg, sizeof(cg), "%s-missing", kh.cgroup);
	snprintf(pin, sizeof(pin), "%s-other", kh.pin_dir);
	rc = kh_cli(out, sizeof(out), "-n", "load", "--cgroup", cg, "--pin-dir", pin, "--state-dir",
		    kh_path("other-state"), NULL);
	snprintf(want, sizeof(want), "execgate: load: cgroup %s: No such file or directory\n", cg);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
	cr_assert_str_eq(out, want);
	cr_assert_neq(access(pin, F_OK), 0, "a refused load created %s", pin);
	/* A file that is not a cgroup: named as such. */
	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "load", "--cgroup", kh.dir,
		    "--pin-dir", pin, "--state-dir", kh_path("other-state"), NULL);
	snprintf(want, sizeof(want),
		 "execgate: load: cgroup %s: not a cgroup v2 directory (cgroup v2 is mounted at /",
		 kh.dir);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
	/* and where the tree is, for the mkdir under a hybrid host's tmpfs */
	cr_assert(strstr(out, want) == out && !strcmp(out + strlen(out) - 2, ")\n"), "%s", out);
}

/* guarantees: none */
Test(cli_worker, status_exits_7_when_nothing_is_loaded)
{
	static char out[65536];
	int rc;

	rc = kh_run(out, sizeof(out), getenv("EXECGATE_BIN"), "status", "--json", "--pin-dir",
		    "/sys/fs/bpf/execgate-test-none", "--state-dir", kh_path("none"), NULL);
	cr_assert_eq(rc, 7, "exit %d: %s", rc, out);
	cr_assert(strstr(out,
			 "{\"schema_version\":2,\"pin_dir\":\"/sys/fs/bpf/execgate-test-none\","
			 "\"loaded\":false,\"probed\":false,") == out,
		  "%s", out);
	cr_assert(strstr(out, "not probed: no probe record"), "%s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "status", NULL), 0, "loaded: %s", out);
}

/* The inotify events pending on fd (a watch on the cgroup root) that name
 * the probe cgroup of one of pids, execgate-probe-PID
 * (loader/tiers/tier_cgroup.c): only the commands this test ran count, as other
 * loaders (another suite's, side by side) probe under the same root. The
 * create and the remove both happen before the command exits, so both are
 * queued by the time it has returned: no wait is needed. */
static int probe_cgroup_events(int fd, char *buf, size_t size, const pid_t *pids, size_t npids)
{
	int seen = 0;
	ssize_t n;

	while ((n = read(fd, buf, size)) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			char want[64];

			for (size_t i = 0; ev->len && i < npids; i++) {
				snprintf(want, sizeof(want), "execgate-probe-%d", (int)pids[i]);
				seen += !strcmp(ev->name, want);
			}
			p += sizeof(*ev) + ev->len;
		}
	return seen;
}

/* guarantees: none */
Test(cli_worker, status_has_no_side_effects)
{
	static char out[65536];
	char root[400], buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct timespec t0, t1;
	double best = 1e9;
	pid_t pids[5];
	int fd, wd, rc;

	cr_assert_eq(eg_cgroup2_root(root, sizeof(root)), 0);
	/* The old status probed: a child cgroup of the root (execgate-probe-PID)
	 * made and removed on every call. */
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	cr_assert_geq(fd, 0);
	wd = inotify_add_watch(fd, root, IN_CREATE | IN_DELETE);
	cr_assert_geq(wd, 0, "inotify on %s", root);
	/* A control: the watch does see the probe's cgroup made under the
	 * root. Only the loader's own names count: anything else on the
	 * machine may make cgroups at the root meanwhile. */
	rc = kh_cli(out, sizeof(out), "probe", NULL);
	cr_assert_eq(rc, 0, "probe: %s", out);
	pids[0] = kh_last_pid;
	cr_assert_eq(probe_cgroup_events(fd, buf, sizeof(buf), pids, 1), 2,
		     "the watch did not see probe make and remove execgate-probe-%d", (int)pids[0]);

	for (int i = 0; i < 5; i++) {
		rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
		cr_assert_eq(rc, 0, "status: exit %d: %s", rc, out);
		pids[i] = kh_last_pid;
	}
	cr_assert(strstr(out, "\"loaded\":true,\"probed\":true,"), "%s", out);
	cr_assert(strstr(out, "{\"name\":\"cgroup\",\"offered\":true,\"loaded\":true"), "%s", out);
	cr_assert_eq(probe_cgroup_events(fd, buf, sizeof(buf), pids, 5), 0,
		     "status created or removed an execgate-probe-PID cgroup under %s", root);
	close(fd);

	/* The loader's share of a status: the library call itself, in this
	 * process (the best of 20). Logged, not asserted: a bound of 10 ms
	 * failed under TCG (23 to 37 ms in the 6.12 VM) for no fault of
	 * status; speed is measured by make bench, not by tests. */
	for (int i = 0; i < 20; i++) {
		FILE *f = fopen("/dev/null", "w");
		double ms;

		cr_assert_not_null(f);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = eg_status_write(kh.pin_dir, kh.state_dir, f, true);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fclose(f);
		cr_assert_eq(rc, 0);
		ms =
		    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (ms < best)
			best = ms;
	}
	cr_log_info("eg_status_write: best of 20 %.3f ms", best);
}

static void *report_tid(void *p)
{
	pid_t *tid = p;

	__atomic_store_n(tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) != -1)
		usleep(1000);
	return NULL;
}

/* guarantees: none */
Test(cli_worker, a_thread_id_is_named_as_one)
{
	char out[2048], want[256], t[16], token[512];
	pthread_t th;
	pid_t tid = 0;
	int rc;

	kh_keys();
	kh_cap(token, sizeof(token), S, WORKER_A, 7, 1, 120, 0);
	cr_assert_eq(pthread_create(&th, NULL, report_tid, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	cr_assert_neq(tid, getpid());
	snprintf(t, sizeof(t), "%d", (int)tid);

	rc = kh_cli(out, sizeof(out), "admit", "--pid", t, token, NULL);
	/* pidfd_open says EINVAL (before 6.9) or ENOENT (6.9+) for a thread;
	 * the message names it as a thread either way. */
	snprintf(want, sizeof(want),
		 "execgate: admit: pid %d: is a thread of process %d, not a process\n", (int)tid,
		 (int)getpid());
	cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
	cr_assert_str_eq(out, want);

	rc = kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
		    "--generation", "7", "--activation", "1", "--bridge-pid", t, NULL);
	snprintf(want, sizeof(want),
		 "execgate: install: pid %d: is a thread of process %d, not a process\n", (int)tid,
		 (int)getpid());
	cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
	cr_assert_str_eq(out, want);
	__atomic_store_n(&tid, -1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
}

/* guarantees: none */
Test(cli_worker, keys_add_of_a_present_key_exits_0)
{
	char out[1024], pub[256], want[128];
	int rc;

	kh_keys(); /* the first add */
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, NULL);
	snprintf(want, sizeof(want), "%s (already present)\n", kh.kid);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
	cr_assert_str_eq(out, want);
	rc = kh_cli(out, sizeof(out), "keys", "list", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"keys\":[{\"kid\":\"") == out, "%s", out);
	cr_assert_null(strstr(strchr(out, '}'), "\"kid\""), "one key, listed once: %s", out);
}

/* Lines of out. */
static int lines(const char *out)
{
	int n = 0;

	for (; *out; out++)
		n += *out == '\n';
	return n;
}

/* guarantees: none */
Test(cli_worker, events_count_drain_time_and_escaping)
{
	/* A backslash and a UTF-8 e-acute in a registered path: bytes the
	 * text form must not print raw. */
	static char out[16384], path[256];
	struct kh_child bridge, other;
	char *line, *save;
	time_t now = time(NULL);
	int rc;

	snprintf(path, sizeof(path), "%s/br\\idge-\xc3\xa9.sock", kh.dir);
	kh_child_start(&bridge, true);
	kh_child_start(&other, true);
	cr_assert_eq(kh_child_listen(&bridge, path), 0);
	install(bridge.pid, path);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(kh_child_connect(&other, path, NULL, NULL), -EPERM);

	/* --count 2 follows until it has 2, then exits: 2 lines, not 3. */
	rc = kh_cli(out, sizeof(out), "events", "--count", "2", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(lines(out), 2, "--count 2 printed: %s", out);
	/* --drain: what is left (the third), then exit 0. */
	rc = kh_cli(out, sizeof(out), "events", "--drain", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(lines(out), 1, "--drain printed: %s", out);
	cr_assert(strstr(out, "bridge-no-grant") || strstr(out, "deny"), "%s", out);
	cr_assert(strstr(out, "br\\x5cidge-\\xc3\\xa9.sock\n"), "escaped path: %s", out);
	/* Nothing pending: --drain prints nothing and exits 0. */
	rc = kh_cli(out, sizeof(out), "events", "--drain", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_str_empty(out);
	/* The JSON form escapes the same bytes the same way (\xNN, as
	 * execgated's GET /v1/events does), so it is valid UTF-8. */
	cr_assert_eq(kh_child_connect(&other, path, NULL, NULL), -EPERM);
	rc = kh_cli(out, sizeof(out), "events", "--drain", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(lines(out), 1, "%s", out);
	cr_assert(strstr(out, "br\\\\x5cidge-\\\\xc3\\\\xa9.sock\"}\n"), "escaped path: %s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"kind\":\"denial\",\"time\":\"") == out, "%s",
		  out);

	/* Wall-clock time, RFC 3339 UTC with nanoseconds, in both forms. */
	cr_assert_eq(kh_child_connect(&other, path, NULL, NULL), -EPERM);
	cr_assert_eq(kh_child_connect(&other, path, NULL, NULL), -EPERM);
	rc = kh_cli(out, sizeof(out), "events", "--drain", "--count", "1", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(lines(out), 1, "%s", out);
	rc = kh_cli(out + strlen(out), sizeof(out) - strlen(out), "events", "--drain", "--json",
		    NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(lines(out), 2, "%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *ts = line[0] == '{' ? strstr(line, "\"time\":\"") + 8 : line;
		struct tm tm = {0};
		unsigned long ns;
		char z;

		cr_assert_eq(sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%9lu%c", &tm.tm_year, &tm.tm_mon,
				    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ns, &z),
			     8, "%s", line);
		cr_assert_eq(z, 'Z', "%s", line);
		cr_assert_eq(ts[29], 'Z', "nine digits of ns: %s", line);
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		cr_assert_leq(labs((long)(timegm(&tm) - now)), 60, "%s is not now", line);
	}
}

/* guarantees: none */
Test(cli_worker, list_show_forget)
{
	static char out[16384];
	struct kh_child bridge;
	char want[256];
	int rc;

	kh_child_start(&bridge, true);
	cr_assert_eq(kh_child_listen(&bridge, kh_path("b.sock")), 0);
	install(bridge.pid, kh_path("b.sock"));

	rc = kh_cli(out, sizeof(out), "list", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, S " active  generation 7 attempt 1 epoch 1 worker " WORKER_A) == out,
		  "%s", out);
	/* The ServicePort profile: none installed here. */
	cr_assert(strstr(out, " ports none service-addrs none\n"), "%s", out);
	rc = kh_cli(out, sizeof(out), "list", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"records\":[{\"sandbox\":\"" S
			      "\",\"state\":\"active\"") == out,
		  "%s", out);
	rc = kh_cli(out, sizeof(out), "show", "--sandbox", S, "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "{\"schema_version\":2,\"record\":{\"sandbox\":\"" S "\""), "%s",
		  out);
	/* The path and the inode of the socket bound there (LSM tier keys). */
	cr_assert(strstr(out, ",\"endpoints\":2,\"grants\":0}\n"), "%s", out);

	/* An active record is not forgotten. */
	rc = kh_cli(out, sizeof(out), "forget", "--sandbox", S, NULL);
	cr_assert_eq(rc, 1, "%s", out);
	cr_assert_str_eq(out,
			 "execgate: forget: sandbox " S
			 ": still active: retire it first (execgate retire --sandbox " S ")\n");
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", S, NULL), 0, "%s", out);
	rc = kh_cli(out, sizeof(out), "forget", "--sandbox", S, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_str_eq(out, "sandbox " S ": forgotten, 2 endpoints removed\n");
	/* Gone: show and forget say so with exit 7, list is empty. */
	rc = kh_cli(out, sizeof(out), "show", "--sandbox", S, NULL);
	snprintf(want, sizeof(want), "execgate: show: sandbox %s: no runtime record\n", S);
	cr_assert_eq(rc, 7, "%s", out);
	cr_assert_str_eq(out, want);
	cr_assert_eq(kh_cli(out, sizeof(out), "forget", "--sandbox", S, NULL), 7, "%s", out);
	rc = kh_cli(out, sizeof(out), "list", "--json", NULL);
	cr_assert_str_eq(out, "{\"schema_version\":2,\"records\":[]}\n");
	/* The bridge socket is unregistered again: anyone connects. */
	cr_assert_eq(kh_child_connect(&bridge, kh_path("b.sock"), NULL, NULL), 0);
}

/* Drops ,"signed_verdict":... up to the next ,"grant": (the subject, which
 * only admit has, and the signature over it). */
static void drop_subject(char *json)
{
	char *s = strstr(json, ",\"signed_verdict\":"), *g = strstr(json, ",\"grant\":");

	cr_assert(s && g && g > s, "%s", json);
	memmove(s, g, strlen(g) + 1);
}

/* guarantees: none */
Test(cli_worker, admit_and_check_print_one_verdict_form)
{
	static char a[8192], c[8192], off[8192];
	struct kh_child bridge, mgr;
	char token[512], p[16], keys[256];
	int ra, rc;

	kh_keys();
	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	install(bridge.pid, kh_path("b.sock"));
	snprintf(p, sizeof(p), "%d", (int)mgr.pid);
	snprintf(keys, sizeof(keys), "%s/%s.pub", kh.keys_dir, kh.kid);

	/* refresh-route (generation 8 against 7): no grant, so the JSON of
	 * admit and check differ only in the subject. */
	kh_cap(token, sizeof(token), S, WORKER_A, 8, 1, 120, 0);
	ra = kh_cli(a, sizeof(a), "admit", "--pid", p, token, NULL);
	rc = kh_cli(c, sizeof(c), "check", token, NULL);
	cr_assert_eq(ra, 3, "%s", a);
	cr_assert_eq(rc, 3, "%s", c);
	cr_assert_str_eq(a, "refresh-route: generation-mismatch\n");
	cr_assert_str_eq(c, a);
	ra = kh_cli(a, sizeof(a), "admit", "--pid", p, "--json", token, NULL);
	rc = kh_cli(c, sizeof(c), "check", "--json", token, NULL);
	cr_assert_eq(ra, 3, "%s", a);
	cr_assert(strstr(a, "{\"schema_version\":2,\"verdict\":\"refresh-route\",\"reason\":"
			    "\"generation-mismatch\",\"detail\":null,") == a,
		  "%s", a);
	cr_assert(strstr(a, ",\"subject\":{\"tgid\":"), "%s", a);
	cr_assert(strstr(c, ",\"subject\":null,\"grant\":null}\n"), "%s", c);
	cr_assert(strstr(c, ",\"signed_verdict\":"), "%s", c);
	drop_subject(a);
	drop_subject(c);
	/* The worker's cache may serve check's verification: mask cache_hit. */
	{
		char *h = strstr(c, "\"cache_hit\":true");

		if (h)
			memcpy(h, "\"cache_hit\":fals", 16),
			    memmove(h + 16, h + 15, strlen(h + 15) + 1), h[16] = 'e';
	}
	cr_assert_str_eq(c, a);

	/* The offline check prints the same forms too. */
	rc = kh_cli(off, sizeof(off), "check", "--keys", keys, "--sandbox", S, "--worker", WORKER_A,
		    "--generation", "7", "--activation", "1", token, NULL);
	cr_assert_eq(rc, 3, "%s", off);
	cr_assert_str_eq(off, "refresh-route: generation-mismatch\n");
	/* A malformed token: one text for all three. */
	ra = kh_cli(a, sizeof(a), "admit", "--pid", p, "not*base64", NULL);
	rc = kh_cli(c, sizeof(c), "check", "not*base64", NULL);
	cr_assert_eq(ra, 4, "%s", a);
	cr_assert_str_eq(a, "deny: malformed: bad-text\n");
	cr_assert_str_eq(c, a);
	rc = kh_cli(off, sizeof(off), "check", "--keys", keys, "--no-record", "not*base64", NULL);
	cr_assert_eq(rc, 4, "%s", off);
	cr_assert_str_eq(off, a);

	/* allow: admit grants, check does not. */
	kh_cap(token, sizeof(token), S, WORKER_A, 7, 1, 120, 0);
	cr_assert_eq(kh_cli(c, sizeof(c), "check", token, NULL), 0, "%s", c);
	cr_assert_str_eq(c, "allow\n");
	cr_assert_eq(kh_cli(a, sizeof(a), "admit", "--pid", p, "--json", token, NULL), 0, "%s", a);
	cr_assert(strstr(a, "\"verdict\":\"allow\""), "%s", a);
	cr_assert(strstr(a, ",\"grant\":{\"sandbox\":\"" S "\",\"generation\":7,\"epoch\":1,"),
		  "%s", a);
}
