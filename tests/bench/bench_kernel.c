/* SPDX-License-Identifier: Apache-2.0 */
/* In-kernel cost of the connect_unix program, in one run:
 *
 * 1. bpf_stats (bpf_enable_stats(BPF_STATS_RUN_TIME), held only for the
 *    run): run_time_ns / run_cnt of eg_connect_unix for an unregistered
 *    destination, a registered + allowed connect (grant path: endpoint,
 *    record and grant lookups, socket tag) and a registered + denied one
 *    (with its event), beside an empty connect_unix program attached to the
 *    same cgroup, so both run on the very same connects.
 * 2. connect() latency with and without enforcement, interleaved batch by
 *    batch: this process moves between the enforced scratch cgroup and a
 *    plain sibling, median of per-batch means, as a ratio.
 * Both at 1, 1 000 and 100 000 map entries (endpoints + filter entries and
 * grants; records up to EG_MAX_SANDBOXES).
 * 3. The per-step breakdown, at 1 entry: copies of the program built with
 *    -DEG_STOP_AFTER=N (scripts/make/speed.mk, enum eg_step), each allowing
 *    right after step N, attached one at a time beside the empty program to
 *    a cgroup of their own, in rounds; median per step. The increments are
 *    what each step costs; the last row is the whole program.
 *
 * Targets (printed, not asserted): unregistered <= 2x empty, allowed <=
 * 250 ns, connect ratio <= 1.03, 100 000 entries within 1.2x of 1 entry.
 * BENCH_CONNECTS overrides the connects per measurement (default 20000). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup_connect_unix_empty.skel.h"
#include "core/ids.h"
#include "loader/cgroup.h"
#include "loader/path_filter.h"
#include "loader/pins.h"
#include "loader/proc_id.h"
#include "loader/runtime.h"
#include "loader/tier.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-00000000be1c"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"
#define BATCH	500

static char dir[128], pin_dir[128], cg_on[512], cg_off[512], cg_steps[600], cg_lead[600],
    state_dir[160];
/* The empty program's link on cg_on, and cg_on's fd (measure()). */
static struct bpf_link *elink;
static struct bpf_program *empty_prog;
static int cgfd = -1;
static pid_t kids[4];
static int nkids;
static struct eg_runtime rt;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-kernel: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void join(const char *cg)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		die(path, errno);
}

static void unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		die(path, ENAMETOOLONG);
	memcpy(sun->sun_path, path, strlen(path));
}

static pid_t listener(const char *path)
{
	struct sockaddr_un sun;
	int fd, p[2];
	char b;
	pid_t pid;

	unix_addr(path, &sun);
	if (pipe(p))
		die("pipe", errno);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 4096))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;) {
			int c = accept(fd, NULL, NULL);

			if (c >= 0)
				close(c);
		}
	}
	kids[nkids++] = pid;
	if (read(p[0], &b, 1) != 1)
		die("listener", EIO);
	close(p[0]);
	close(p[1]);
	return pid;
}

/* n connects to path; returns how many succeeded. */
static long connects(const char *path, long n)
{
	struct sockaddr_un sun;
	long ok = 0;

	unix_addr(path, &sun);
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			ok++;
		close(fd);
	}
	return ok;
}

static void prog_stats(int prog_fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		die("prog info", errno);
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
}

static int real_prog_fd(void)
{
	char pin[EG_PIN_PATH_MAX];
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int lfd, pfd;

	eg_link_pin_path(pin, sizeof(pin), pin_dir, "cgroup_connect_unix");
	lfd = bpf_obj_get(pin);
	if (lfd < 0)
		die(pin, errno);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(lfd, &info, &len))
		die("link info", errno);
	close(lfd);
	pfd = bpf_prog_get_fd_by_id(info.prog_id);
	if (pfd < 0)
		die("prog by id", errno);
	return pfd;
}

struct per_run {
	double prog, empty;
	long ok;
};

/* One row of the closing summary, per entry level. */
struct level_figures {
	long entries;
	double unreg, allowed, denied, empty, ratio_unreg, ratio_allowed;
};

static struct per_run measure_once(int real_fd, int empty_fd, const char *path, long n)
{
	__u64 c0, t0, c1, t1, e0, et0, e1, et1;
	struct per_run r;

	prog_stats(real_fd, &c0, &t0);
	prog_stats(empty_fd, &e0, &et0);
	r.ok = connects(path, n);
	prog_stats(real_fd, &c1, &t1);
	prog_stats(empty_fd, &e1, &et1);
	r.prog = c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 0;
	r.empty = e1 > e0 ? (double)(et1 - et0) / (double)(e1 - e0) : 0;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Where a program sits in the cgroup's program array changes what bpf_stats
 * charges it: the first program of a run costs ~40-50 ns more than the same
 * program second (measured by the breakdown's position row, two empty
 * programs). The loader's program is alone in production; here the empty
 * program shares the array, so each figure is the mean of both orders:
 * half the connects in cg_on (real, then empty), half in cg_lead, a child
 * of cg_on whose own empty link runs first (empty, then real). */
static struct per_run measure(int real_fd, int empty_fd, const char *path, long n,
			      struct per_run *first, struct per_run *second)
{
	struct per_run a, b, r;
	struct bpf_link *lead;
	int lfd = open(cg_lead, O_RDONLY | O_DIRECTORY);

	join(cg_on);
	a = measure_once(real_fd, empty_fd, path, n / 2);
	bpf_link__destroy(elink);
	lead = bpf_program__attach_cgroup(empty_prog, lfd);
	if (lfd < 0 || !lead)
		die("attaching the empty program to the lead cgroup", errno);
	join(cg_lead);
	b = measure_once(real_fd, empty_fd, path, n - n / 2);
	join(cg_on);
	bpf_link__destroy(lead);
	close(lfd);
	elink = bpf_program__attach_cgroup(empty_prog, cgfd);
	if (!elink)
		die("re-attaching the empty program", errno);
	r.prog = (a.prog + b.prog) / 2;
	r.empty = (a.empty + b.empty) / 2;
	r.ok = a.ok + b.ok;
	if (first)
		*first = (struct per_run){.prog = a.prog, .empty = b.empty};
	if (second)
		*second = (struct per_run){.prog = b.prog, .empty = a.empty};
	return r;
}

/* Interleaved batches, enforced vs plain cgroup; median per-connect ns. */
static void latency(const char *path, long n, double *on, double *off)
{
	size_t nb = (size_t)(n / BATCH);
	double *a = calloc(nb, sizeof(double)), *b = calloc(nb, sizeof(double)), t;

	for (size_t i = 0; i < nb; i++) {
		join(cg_on);
		t = now_ns();
		connects(path, BATCH);
		a[i] = (now_ns() - t) / BATCH;
		join(cg_off);
		t = now_ns();
		connects(path, BATCH);
		b[i] = (now_ns() - t) / BATCH;
	}
	qsort(a, nb, sizeof(double), cmp_double);
	qsort(b, nb, sizeof(double), cmp_double);
	*on = a[nb / 2];
	*off = b[nb / 2];
	free(a);
	free(b);
}

/* Fill the maps up to n entries each (endpoints + filter, grants, records). */
static void fill(long have, long n)
{
	struct eg_path_filter_key fk;
	struct eg_path_key key;
	struct eg_endpoint ep;
	struct eg_exec_record rec;
	struct eg_grant g;
	char path[128];
	__u32 one = 1;

	for (long i = have; i < n; i++) {
		memset(&ep, 0, sizeof(ep));
		ep.role = EG_ROLE_BRIDGE;
		memset(ep.sandbox, 0, EG_ID_BYTES);
		memcpy(ep.sandbox, &i, sizeof(i));
		ep.sandbox[15] = 0xdd;
		snprintf(path, sizeof(path), "/run/execgate-bench/sandbox-%08ld/bridge.sock", i);
		eg_path_key_make(path, &key);
		eg_path_filter_key_make(&key, &fk);
		if (eg_endpoint_write(&rt.maps, EG_MAP_ENDPOINTS, &key, &ep) ||
		    bpf_map_update_elem(rt.maps.fd[EG_MAP_PATH_FILTER], &fk, &one, BPF_ANY) ||
		    eg_path_hint_set(rt.maps.fd[EG_MAP_PATH_HINT], &fk))
			die("filling eg_endpoints", errno);
		memset(&g, 0, sizeof(g));
		g.key.proc.tgid = 4000000 + (__u32)i;
		memcpy(g.key.sandbox, ep.sandbox, EG_ID_BYTES);
		g.epoch = g.generation = 1;
		g.expiry_ns = eg_boottime_ns() + 3600ULL * 1000000000ULL;
		if (eg_grant_write(&rt.maps, &g))
			die("filling eg_grants", errno);
		if (i < EG_MAX_SANDBOXES - 2) {
			memset(&rec, 0, sizeof(rec));
			memcpy(rec.sandbox, ep.sandbox, EG_ID_BYTES);
			rec.state = EG_RECORD_ACTIVE;
			rec.generation = rec.epoch = 1;
			if (eg_record_write(&rt.maps, &rec))
				die("filling eg_records", errno);
		}
	}
}

/* ---- per-step breakdown ---------------------------------------------------- */

#define STEP_BUILDS 7		      /* enum eg_step: EG_STEP_PATH .. EG_STEP_COUNT */
#define STEP_ROWS   (STEP_BUILDS + 1) /* + the whole program */
#define STEP_ROUNDS 3

static const char *const step_names[STEP_ROWS] = {
    "path read + scan",
    "pre-filter (hint, filter)",
    "endpoint (key, lookup, copy)",
    "record (lookup, copy)",
    "caller identity",
    "grant (lookup, copy), verdict",
    "reason counter",
    "socket tag = whole program",
};

/* A step build (1..STEP_BUILDS) or the real object (STEP_ROWS), loaded on
 * the benchmark's pinned maps. */
static struct bpf_object *step_load(int step, struct bpf_program **prog)
{
	char exe[512], path[700], pins[160];
	struct bpf_object *obj;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		die("/proc/self/exe", errno);
	exe[n] = 0;
	if (step <= STEP_BUILDS)
		snprintf(path, sizeof(path), "%s/bpf-steps/cgroup_connect_unix_step%d.bpf.o",
			 dirname(exe), step);
	else
		snprintf(path, sizeof(path), "%s/bpf/cgroup_connect_unix.bpf.o", dirname(exe));
	snprintf(pins, sizeof(pins), "%s", pin_dir);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pins);
	obj = bpf_object__open_file(path, &opts);
	if (!obj)
		die(path, errno);
	*prog = bpf_object__next_program(obj, NULL);
	bpf_program__set_expected_attach_type(*prog, 49); /* BPF_CGROUP_UNIX_CONNECT */
	if (bpf_object__load(obj))
		die(path, errno);
	return obj;
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

/* Every step build alone (beside the empty program) on the same connects:
 * allowed (bsock, we hold a grant) and unregistered (other). */
static void breakdown(int empty_fd, struct bpf_program *empty2, const char *bsock,
		      const char *other, long n)
{
	double a[STEP_ROWS][STEP_ROUNDS], u[STEP_ROWS][STEP_ROUNDS], e[STEP_ROWS][STEP_ROUNDS];
	double am[STEP_ROWS], um[STEP_ROWS], em[STEP_ROWS];
	struct bpf_object *obj[STEP_ROWS];
	struct bpf_program *prog[STEP_ROWS];
	struct bpf_link *slink, *l2;
	struct per_run p1, p2;
	int fd;

	snprintf(cg_steps, sizeof(cg_steps), "%s-steps", cg_on);
	if (mkdir(cg_steps, 0755))
		die(cg_steps, errno);
	fd = open(cg_steps, O_RDONLY | O_DIRECTORY);
	slink = bpf_program__attach_cgroup(empty_prog, fd);
	if (fd < 0 || !slink)
		die("attaching the empty program to the step cgroup", errno);
	for (int s = 0; s < STEP_ROWS; s++)
		obj[s] = step_load(s + 1, &prog[s]);
	join(cg_steps);
	/* Position: a second empty program after the first, same connects. */
	l2 = bpf_program__attach_cgroup(empty2, fd);
	if (!l2)
		die("attaching the second empty program", errno);
	connects(other, 500);
	p1 = measure_once(bpf_program__fd(empty2), empty_fd, other, n);
	p2 = measure_once(bpf_program__fd(empty2), empty_fd, bsock, n);
	bpf_link__destroy(l2);
	for (int r = 0; r < STEP_ROUNDS; r++) {
		for (int s = 0; s < STEP_ROWS; s++) {
			struct bpf_link *l = bpf_program__attach_cgroup(prog[s], fd);
			int pfd = bpf_program__fd(prog[s]);
			struct per_run pa, pu;

			if (!l)
				die("attaching a step build", errno);
			connects(bsock, 500); /* warm up */
			pa = measure_once(pfd, empty_fd, bsock, n);
			pu = measure_once(pfd, empty_fd, other, n);
			if (pa.ok != n || pu.ok != n)
				fprintf(stderr,
					"bench-kernel: step %d: %ld/%ld allowed, %ld/%ld "
					"unregistered\n",
					s + 1, pa.ok, n, pu.ok, n);
			a[s][r] = pa.prog;
			u[s][r] = pu.prog;
			e[s][r] = (pa.empty + pu.empty) / 2;
			bpf_link__destroy(l);
		}
	}
	join(cg_on);
	bpf_link__destroy(slink);
	close(fd);
	for (int s = 0; s < STEP_ROWS; s++) {
		am[s] = median_of(a[s], STEP_ROUNDS);
		um[s] = median_of(u[s], STEP_ROUNDS);
		em[s] = median_of(e[s], STEP_ROUNDS);
		bpf_object__close(obj[s]);
	}
	printf("per-step breakdown, 1 entry (bpf_stats; step builds -DEG_STOP_AFTER=N, one at a "
	       "time beside the empty program; median of %d rounds of %ld connects)\n",
	       STEP_ROUNDS, n);
	printf("  %-2s %-30s %9s %7s %7s   %9s %7s\n", "", "allowed path: stop after", "ns/run",
	       "+step", "empty", "unreg", "/empty");
	for (int s = 0; s < STEP_ROWS; s++)
		printf("  %-2d %-30s %9.0f %+7.0f %7.0f   %9.0f %6.2fx\n", s + 1, step_names[s],
		       am[s], am[s] - (s ? am[s - 1] : em[s]), em[s], um[s], um[s] / em[s]);
	printf("  (+step of row 1 is over the empty program; unregistered stops after row 2;\n"
	       "   every step build runs second, after the empty program)\n");
	printf("  position: the same empty program costs %.0f ns first vs %.0f ns second in the "
	       "array (+%.0f ns for running first)\n\n",
	       (p1.empty + p2.empty) / 2, (p1.prog + p2.prog) / 2,
	       (p1.empty + p2.empty - p1.prog - p2.prog) / 2);
}

static void cleanup(void)
{
	char out[EG_PIN_PATH_MAX];
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};

	for (int i = 0; i < nkids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	eg_runtime_close(&rt);
	for (size_t i = 0; i < eg_tier_count; i++)
		eg_tiers[i]->unload(&ctx, out, sizeof(out));
	eg_pins_remove_maps(pin_dir);
	{
		char root[400];

		if (!eg_cgroup2_root(root, sizeof(root)))
			join(root);
	}
	if (cg_lead[0])
		rmdir(cg_lead);
	rmdir(cg_on);
	rmdir(cg_off);
	if (cg_steps[0])
		rmdir(cg_steps);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	if (system(out))
		fprintf(stderr, "bench-kernel: could not remove %s\n", dir);
}

int main(void)
{
	static const long levels[] = {1, 1000, 100000};
	struct cgroup_connect_unix_empty *empty;
	struct eg_install_result res;
	static struct eg_install_req req;
	struct eg_tier_ctx ctx;
	struct cgroup_connect_unix_empty *empty2;
	char root[400], err[768], bsock[160], vsock[160], other[160];
	long n = getenv("BENCH_CONNECTS") ? atol(getenv("BENCH_CONNECTS")) : 20000;
	double base_allowed = 0, base_unreg = 0;
	struct level_figures sum[3];
	int stats_fd, real_fd, rc;
	pid_t dummy;

	if (geteuid()) {
		fprintf(stderr, "bench-kernel: needs root\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "/tmp/egbench-%d", (int)getpid());
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/egbench-%d", (int)getpid());
	if (mkdir(dir, 0700) || eg_cgroup2_root(root, sizeof(root)))
		die("scratch dir / cgroup v2", errno);
	snprintf(cg_on, sizeof(cg_on), "%s/egbench-%d-on", root, (int)getpid());
	snprintf(cg_off, sizeof(cg_off), "%s/egbench-%d-off", root, (int)getpid());
	if (mkdir(cg_on, 0755) || mkdir(cg_off, 0755))
		die("scratch cgroups", errno);
	atexit(cleanup);

	ctx = (struct eg_tier_ctx){.pin_dir = pin_dir, .cgroup_path = cg_on};
	rc = eg_pins_prepare(pin_dir, err, sizeof(err));
	if (!rc)
		rc = eg_tier_cgroup.probe(&ctx, err, sizeof(err));
	if (!rc)
		rc = eg_tier_cgroup.load(&ctx, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench-kernel: %s\n", err);
		return 1;
	}
	/* The empty program on the same cgroup: both run on every connect. */
	empty = cgroup_connect_unix_empty__open();
	bpf_program__set_expected_attach_type(empty->progs.eg_connect_unix_empty, 49);
	if (cgroup_connect_unix_empty__load(empty))
		die("loading the empty program", errno);
	empty2 = cgroup_connect_unix_empty__open();
	bpf_program__set_expected_attach_type(empty2->progs.eg_connect_unix_empty, 49);
	if (cgroup_connect_unix_empty__load(empty2))
		die("loading the second empty program", errno);
	empty_prog = empty->progs.eg_connect_unix_empty;
	snprintf(cg_lead, sizeof(cg_lead), "%s/lead", cg_on);
	if (mkdir(cg_lead, 0755))
		die(cg_lead, errno);
	cgfd = open(cg_on, O_RDONLY | O_DIRECTORY);
	elink = bpf_program__attach_cgroup(empty->progs.eg_connect_unix_empty, cgfd);
	if (!elink)
		die("attaching the empty program", errno);

	if (eg_runtime_open(&rt, pin_dir, state_dir, false, err, sizeof(err)))
		die(err, EINVAL);
	snprintf(bsock, sizeof(bsock), "%s/bridge.sock", dir);
	snprintf(vsock, sizeof(vsock), "%s/fc.sock", dir);
	snprintf(other, sizeof(other), "%s/unregistered.sock", dir);
	listener(bsock);
	dummy = listener(vsock);
	listener(other);

	/* Registered: bridge socket (we hold a grant) and VMM socket (we are
	 * not its bridge: denied). */
	eg_uuid_parse(SANDBOX, req.id.sandbox);
	eg_uuid_parse(WORKER, req.id.worker);
	req.id.generation = 1;
	req.id.activation = 1;
	req.id.substrate = 2;
	req.bridge_pid = dummy;
	req.bridge_sockets[0] = bsock;
	req.n_bridge_sockets = 1;
	req.vmm_sockets[0] = vsock;
	req.n_vmm_sockets = 1;
	if (eg_install(&rt, &req, &res, err, sizeof(err)))
		die(err, EINVAL);
	{
		struct eg_grant g;

		memset(&g, 0, sizeof(g));
		if (eg_proc_identify(getpid(), &g.key.proc, err, sizeof(err)))
			die(err, ESRCH);
		memcpy(g.key.sandbox, req.id.sandbox, EG_ID_BYTES);
		g.generation = res.after.generation;
		g.epoch = res.after.epoch;
		g.expiry_ns = eg_boottime_ns() + 3600ULL * 1000000000ULL;
		if (eg_grant_write(&rt.maps, &g))
			die("own grant", errno);
	}

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		die("bpf_enable_stats", errno);
	real_fd = real_prog_fd();
	breakdown(bpf_program__fd(empty_prog), empty2->progs.eg_connect_unix_empty, bsock, other,
		  n / 2);

	printf("connect_unix in-kernel cost (bpf_stats, %ld connects each; empty program on "
	       "the same connects)\n",
	       n);
	printf("%9s  %-22s %9s %9s %7s\n", "entries", "destination", "ns/run", "empty", "ratio");
	for (size_t l = 0, have = 1; l < sizeof(levels) / sizeof(levels[0]); l++) {
		struct per_run u, a, d, uf, us;
		double on, off, aon, aoff;

		fill((long)have, levels[l]);
		have = (size_t)levels[l];
		join(cg_on);
		connects(other, 2000); /* warm up */
		u = measure(real_fd, bpf_program__fd(empty_prog), other, n, &uf, &us);
		a = measure(real_fd, bpf_program__fd(empty_prog), bsock, n, NULL, NULL);
		d = measure(real_fd, bpf_program__fd(empty_prog), vsock, n, NULL, NULL);
		if (a.ok != n || d.ok != 0 || u.ok != n)
			fprintf(stderr,
				"bench-kernel: unexpected verdicts: %ld/%ld allowed, %ld "
				"denied-path successes, %ld/%ld unregistered\n",
				a.ok, n, d.ok, u.ok, n);
		printf("%9ld  %-22s %9.0f %9.0f %6.2fx\n", levels[l], "unregistered", u.prog,
		       u.empty, u.prog / u.empty);
		printf(
		    "%9s  unregistered by position: first %.0f / %.0f = %.2fx, second %.0f / %.0f "
		    "= %.2fx\n",
		    "", uf.prog, uf.empty, uf.prog / uf.empty, us.prog, us.empty,
		    us.prog / us.empty);
		printf("%9ld  %-22s %9.0f %9.0f %6.2fx\n", levels[l], "registered, allowed", a.prog,
		       a.empty, a.prog / a.empty);
		printf("%9ld  %-22s %9.0f %9.0f %6.2fx\n", levels[l], "registered, denied", d.prog,
		       d.empty, d.prog / d.empty);
		if (l == 0) {
			base_unreg = u.prog;
			base_allowed = a.prog;
		} else {
			printf("%9s  vs 1 entry: unregistered %.2fx, allowed %.2fx\n", "",
			       u.prog / base_unreg, a.prog / base_allowed);
		}
		/* Latency without the empty program's share. */
		bpf_link__detach(elink);
		bpf_link__destroy(elink);
		latency(other, n, &on, &off);
		latency(bsock, n, &aon, &aoff);
		printf("%9s  connect() median ns: unregistered %.0f vs %.0f plain = %.3fx; "
		       "allowed %.0f vs %.0f plain = %.3fx\n",
		       "", on, off, on / off, aon, aoff, aon / aoff);
		sum[l] = (struct level_figures){
		    .entries = levels[l],
		    .unreg = u.prog,
		    .allowed = a.prog,
		    .denied = d.prog,
		    .empty = (u.empty + a.empty + d.empty) / 3,
		    .ratio_unreg = on / off,
		    .ratio_allowed = aon / aoff,
		};
		elink = bpf_program__attach_cgroup(empty->progs.eg_connect_unix_empty, cgfd);
		if (!elink)
			die("re-attaching the empty program", errno);
	}
	printf("\nsummary (ns/run from bpf_stats; connect ratio = enforced / plain median)\n");
	printf("%9s %7s %7s %8s %7s %8s %7s %8s %8s\n", "entries", "empty", "unreg", "unreg/",
	       "allowed", "denied", "connect", "connect", "x1 entry");
	printf("%9s %7s %7s %8s %7s %8s %7s %8s %8s\n", "", "", "", "empty", "", "", "unreg",
	       "allowed", "allowed");
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
		printf("%9ld %7.0f %7.0f %7.2fx %7.0f %8.0f %6.3fx %7.3fx %7.2fx\n", sum[l].entries,
		       sum[l].empty, sum[l].unreg, sum[l].unreg / sum[l].empty, sum[l].allowed,
		       sum[l].denied, sum[l].ratio_unreg, sum[l].ratio_allowed,
		       sum[l].allowed / sum[0].allowed);
	printf("targets: unreg/empty <= 2x; allowed <= 250 ns; connect ratio <= 1.03; "
	       "100000 entries within 1.2x of 1 entry\n");
	bpf_link__destroy(elink);
	cgroup_connect_unix_empty__destroy(empty);
	cgroup_connect_unix_empty__destroy(empty2);
	close(cgfd);
	close(stats_fd);
	return 0;
}
