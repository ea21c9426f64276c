// SPDX-License-Identifier: Apache-2.0
/* bench-revoke: the time from install (a new generation) and from retire to
 * every stale Unix stream being stopped, for 1, 100 and 10 000 streams
 * (target: <= 50 ms at 10 000). The call returns after the cut,
 * so its wall time is that time; the cut count is checked against the
 * streams held. A bridge child in a scratch cgroup holds the connecting ends,
 * a VMM child the accepted ones (the loader holds none of them, as in
 * production: its re-check walks only its own files); scratch cgroup and
 * pins are removed at exit. Root; prints figures, asserts only that every
 * stream was cut. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/ids.h"
#include "loader/tiers/clock.h"
#include "loader/tiers/cgroup.h"
#include "loader/maps/pins.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/tiers/tier.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-00000000be1d"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"
#define MAX_N	10000

static char dir[128], pin_dir[128], state_dir[160], cg[512], vmm[100];
static struct eg_runtime rt;
static bool rt_open;
static pid_t bridge = -1, vmm_child = -1;

static void cleanup(void)
{
	char out[EG_PIN_PATH_MAX], root[400];
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};

	if (bridge > 0) {
		kill(bridge, SIGKILL);
		waitpid(bridge, NULL, 0);
	}
	if (vmm_child > 0) {
		kill(vmm_child, SIGKILL);
		waitpid(vmm_child, NULL, 0);
	}
	if (rt_open)
		eg_runtime_close(&rt);
	for (size_t i = 0; i < eg_tier_count; i++)
		eg_tiers[i]->unload(&ctx, out, sizeof(out));
	eg_pins_remove_maps(pin_dir);
	if (!eg_cgroup2_root(root, sizeof(root)))
		rmdir(cg);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	if (system(out))
		fprintf(stderr, "bench-revoke: could not remove %s\n", dir);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-revoke: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of this process (user + system): the cost without the time
 * other tasks on a loaded machine took from it. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void raise_nofile(void)
{
	struct rlimit r;

	getrlimit(RLIMIT_NOFILE, &r);
	r.rlim_cur = r.rlim_max;
	setrlimit(RLIMIT_NOFILE, &r);
}

/* The bridge: on each count n read from ctl, closes what it holds and
 * connects n streams, then answers with how many connected. */
static void bridge_main(int ctl)
{
	static int fds[MAX_N];
	int held = 0, n;

	raise_nofile();
	while (read(ctl, &n, sizeof(n)) == sizeof(n)) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		int ok = 0;

		for (int i = 0; i < held; i++)
			close(fds[i]);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
		for (held = 0; held < n; held++) {
			fds[held] = socket(AF_UNIX, SOCK_STREAM, 0);
			if (fds[held] < 0 || connect(fds[held], (struct sockaddr *)&a, sizeof(a)))
				break;
			ok++;
		}
		if (write(ctl, &ok, sizeof(ok)) != sizeof(ok))
			break;
	}
	_exit(0);
}

/* The VMM: on each count n read from ctl, closes what it holds, accepts n
 * streams on lfd and answers with how many it accepted. */
static void vmm_main(int ctl, int lfd)
{
	static int fds[MAX_N];
	int held = 0, n;

	raise_nofile();
	while (read(ctl, &n, sizeof(n)) == sizeof(n)) {
		for (int i = 0; i < held; i++)
			close(fds[i]);
		for (held = 0; held < n; held++) {
			fds[held] = accept(lfd, NULL, NULL);
			if (fds[held] < 0)
				break;
		}
		if (write(ctl, &held, sizeof(held)) != sizeof(held))
			break;
	}
	_exit(0);
}

static int ctl_fd, vmm_ctl;

/* Connects n fresh streams (bridge and VMM drop their old ones). */
static void streams(int n)
{
	int got, acc;

	if (write(vmm_ctl, &n, sizeof(n)) != sizeof(n) || write(ctl_fd, &n, sizeof(n)) != sizeof(n))
		die("bridge / vmm", errno);
	if (read(ctl_fd, &got, sizeof(got)) != sizeof(got) || got != n ||
	    read(vmm_ctl, &acc, sizeof(acc)) != sizeof(acc) || acc != n) {
		fprintf(stderr, "bench-revoke: bridge connected / vmm accepted %d, %d of %d\n", got,
			acc, n);
		exit(1);
	}
}

static void install(struct eg_install_spec *req, unsigned gen, struct eg_install_result *res)
{
	char err[768];

	req->generation = gen;
	if (eg_install(&rt, req, res, err, sizeof(err))) {
		fprintf(stderr, "bench-revoke: install: %s\n", err);
		exit(1);
	}
}

int main(void)
{
	static const int levels[] = {1, 100, MAX_N};
	static struct eg_install_spec req;
	struct eg_install_result res;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct eg_tier_ctx ctx;
	char root[400], err[768];
	unsigned gen = 1;
	int sv[2], lfd, rc;
	double t_prep;

	if (geteuid()) {
		fprintf(stderr, "bench-revoke: needs root\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	snprintf(dir, sizeof(dir), "/tmp/egbench-revoke-%d", (int)getpid());
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(vmm, sizeof(vmm), "%.80s/vmm.sock", dir);
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/egbench-revoke-%d", (int)getpid());
	if (mkdir(dir, 0700) || eg_cgroup2_root(root, sizeof(root)))
		die("scratch dir / cgroup v2", errno);
	snprintf(cg, sizeof(cg), "%s/egbench-revoke-%d", root, (int)getpid());
	if (mkdir(cg, 0755))
		die("scratch cgroup", errno);
	atexit(cleanup);

	ctx = (struct eg_tier_ctx){.pin_dir = pin_dir, .cgroup_path = cg};
	rc = eg_pins_prepare(pin_dir, err, sizeof(err));
	if (!rc)
		rc = eg_tier_cgroup.probe(&ctx, err, sizeof(err));
	if (!rc)
		rc = eg_tier_cgroup.load(&ctx, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench-revoke: %s\n", err);
		return 1;
	}
	/* As load does: the grant clock kept by its tracepoint program
	 * (loader/tiers/clock.h), so the hooks measured are the ones a worker runs. */
	if (eg_clock_keep(pin_dir, err, sizeof(err)))
		fprintf(stderr, "bench-revoke: %s\n", err);
	/* As `load` does: the iterator is loaded and pinned once, here. */
	t_prep = now_ms();
	rc = eg_revoke_unix_prepare(pin_dir);
	t_prep = now_ms() - t_prep;
	if (rc)
		fprintf(stderr,
			"bench-revoke: the iterator did not load (%s): installs fall back\n",
			strerror(-rc));
	if (eg_runtime_open(&rt, pin_dir, state_dir, false, err, sizeof(err))) {
		fprintf(stderr, "bench-revoke: %s\n", err);
		return 1;
	}
	rt_open = true;

	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4096))
		die("listening", errno);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair", errno);
	bridge = fork();
	if (bridge == 0) {
		close(sv[0]);
		if (eg_cgroup_join(cg))
			_exit(1);
		bridge_main(sv[1]);
	}
	close(sv[1]);
	ctl_fd = sv[0];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair", errno);
	vmm_child = fork();
	if (vmm_child == 0) {
		close(sv[0]);
		vmm_main(sv[1], lfd);
	}
	close(sv[1]);
	close(lfd);
	vmm_ctl = sv[0];

	eg_uuid_parse(SANDBOX, req.sandbox);
	eg_uuid_parse(WORKER, req.worker);
	req.substrate = 2;
	req.activation = 1;
	req.bridge_pid = bridge;
	req.vmm_pid = vmm_child;
	req.vmm_sockets[0] = vmm;
	req.n_vmm_sockets = 1;
	install(&req, gen, &res);

	printf("Unix stream revocation: ms per call (it returns after the cut), wall and this\n"
	       "process's CPU (its threads included); the iterator was loaded and pinned at\n"
	       "load time: %.1f ms\n",
	       t_prep);
	printf("%8s  %17s  %17s  %s\n", "streams", "install wall/cpu", "retire wall/cpu", "cut");
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		struct eg_revoke_report rr;
		struct eg_exec_record after;
		double t0, c0, ti, tr, ci, cr;

		streams(levels[l]);
		t0 = now_ms();
		c0 = cpu_ms();
		install(&req, ++gen, &res);
		ti = now_ms() - t0;
		ci = cpu_ms() - c0;
		if (res.streams.kind[EG_REVOKE_UNIX].cut != (unsigned)levels[l]) {
			fprintf(stderr, "bench-revoke: install cut %u of %d\n",
				res.streams.kind[EG_REVOKE_UNIX].cut, levels[l]);
			return 1;
		}
		streams(levels[l]);
		t0 = now_ms();
		c0 = cpu_ms();
		if (eg_retire_report(&rt, req.sandbox, &after, &rr, err, sizeof(err))) {
			fprintf(stderr, "bench-revoke: retire: %s\n", err);
			return 1;
		}
		tr = now_ms() - t0;
		cr = cpu_ms() - c0;
		if (rr.kind[EG_REVOKE_UNIX].cut != (unsigned)levels[l]) {
			fprintf(stderr, "bench-revoke: retire cut %u of %d\n",
				rr.kind[EG_REVOKE_UNIX].cut, levels[l]);
			return 1;
		}
		printf("%8d  %8.2f %8.2f  %8.2f %8.2f  %u + %u%s\n", levels[l], ti, ci, tr, cr,
		       res.streams.kind[EG_REVOKE_UNIX].cut, rr.kind[EG_REVOKE_UNIX].cut,
		       levels[l] == MAX_N
			   ? (ti <= 50 && tr <= 50 ? "  (target <= 50 ms wall: met)"
						   : "  (target <= 50 ms wall: MISSED)")
			   : "");
		printf("%8s  find %.2f + cut %.2f ms (install), find %.2f + cut %.2f ms (retire)\n",
		       "", res.streams.kind[EG_REVOKE_UNIX].find_ns / 1e6,
		       res.streams.kind[EG_REVOKE_UNIX].cut_ns / 1e6,
		       rr.kind[EG_REVOKE_UNIX].find_ns / 1e6, rr.kind[EG_REVOKE_UNIX].cut_ns / 1e6);
		install(&req, ++gen, &res); /* reactivate for the next level */
	}
	return 0;
}
