/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP / ServicePort tier, in one run:
 *
 * 1. bpf_stats: run_time_ns / run_cnt of eg_connect4 for an unregistered
 *    destination and for an allowed one (registered guest address, live
 *    ServicePort grant, socket tag), against an empty connect4 program on
 *    the same TCP connects; each program alone in its cgroup, in
 *    interleaved rounds (why: main). In the same rounds, the tag alone
 *    (bpf/bench/cgroup_inet_tag_probe.bpf.c) on the unregistered
 *    address's connects: the allowed row's floor.
 * 2. connect() latency of a loopback TCP connect (closed with an RST, so
 *    no TIME_WAIT piles up) in the enforced cgroup vs a plain sibling,
 *    interleaved batch by batch, median of per-batch means, as a ratio.
 * 3. Stream revocation: N admitted TCP streams (1, 100, 10 000) held by
 *    the gateway, then an install of the next generation; the time install
 *    takes (it returns after the revokers ran), and a check that every one
 *    of the N streams is cut (the gateway's next send fails).
 *
 * The loader (this process) stays in the host network namespace; the
 * gateway runs in a namespace of its own with the guest on its loopback,
 * so revocation takes the setns path, as in production. Targets (printed,
 * not asserted): unregistered <= 2x empty, connect ratio <= 1.03,
 * revocation <= 50 ms at 10 000 streams. BENCH_CONNECTS overrides the
 * connects per measurement (default 20000); BENCH_INET_TAGS the capacity of
 * eg_inet_tags (load --inet-tags: every tag insert pays for its size). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench/cgroup_inet_empty.skel.h"
#include "bench/cgroup_inet_tag_probe.skel.h"
#include "core/ids.h"
#include "loader/tiers/clock.h"
#include "loader/tiers/cgroup.h"
#include "loader/endpoints/inet.h"
#include "loader/maps/pins.h"
#include "loader/process/proc_id.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/tiers/tcp_tier.h"
#include "loader/tiers/tier.h"

#define SANDBOX	    "5f0c2c1e-7a4b-4c1d-9e3f-00000000be7c"
#define WORKER	    "a0000000-0000-4000-8000-00000000000a"
#define GUEST	    "127.0.0.2"
#define OTHER	    "127.0.0.3"
#define PORT	    7000
#define BATCH	    200
#define MAX_STREAMS 10000

enum cmd { C_COST = 1, C_COST_EMPTY, C_COST_TAG, C_LATENCY, C_OPEN, C_CHECK, C_QUIT };

static char dir[128], pin_dir[128], cg_on[512], cg_off[512], cg_empty[520], cg_tag[520],
    state_dir[160];
static pid_t gateway;
static int to_gw = -1, from_gw = -1;
static struct eg_runtime rt;
static int real_fd = -1, empty_fd = -1, tag_fd = -1;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-tcp: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_RAW);
}

static void join(const char *cg)
{
	int rc = eg_cgroup_join(cg);

	if (rc)
		die(cg, rc);
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		die("lo", errno);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		die("lo up", errno);
	close(s);
}

static struct sockaddr_in addr_of(const char *ip)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* ---- the guest: accepts and holds every connection ---------------------- */

static void guest(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	raise_nofile();
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 4096))
		_exit(1);
	for (;;) {
		int c = accept(s, NULL, NULL);

		/* A full table closes the newcomer: the holders stay. */
		if (c >= 0 && c > 19000)
			close(c);
	}
}

/* ---- the gateway ---------------------------------------------------------- */

static int streams[MAX_STREAMS];
static int nstreams;

/* One TCP connect + close with an RST (SO_LINGER 0). 0 or -errno. */
static int connect_once(const struct sockaddr_in *a)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = 0;

	if (connect(s, (const struct sockaddr *)a, sizeof(*a)))
		rc = -errno;
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
	return rc;
}

static void prog_stats(int fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("prog info", errno);
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
}

/* Per-run ns of program a and program b over n connects to ip. */
static void cost_of(int a_fd, int b_fd, const char *ip, long n, double out[2])
{
	struct sockaddr_in a = addr_of(ip);
	__u64 c0, t0, e0, et0, c1, t1, e1, et1;
	long bad = 0;

	prog_stats(a_fd, &c0, &t0);
	prog_stats(b_fd, &e0, &et0);
	for (long i = 0; i < n; i++)
		bad += connect_once(&a) != 0;
	prog_stats(a_fd, &c1, &t1);
	prog_stats(b_fd, &e1, &et1);
	if (bad)
		fprintf(stderr, "bench-tcp: %ld of %ld connects to %s failed\n", bad, n, ip);
	out[0] = c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 0;
	out[1] = e1 > e0 ? (double)(et1 - et0) / (double)(e1 - e0) : 0;
}

/* Per-run ns of the real and the empty program over n connects to ip. */
static void cost(const char *ip, long n, double out[2])
{
	cost_of(real_fd, empty_fd, ip, n, out);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 4

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

/* Median per-connect ns, enforced vs plain cgroup, batches interleaved. */
static void latency(const char *ip, long n, double out[2])
{
	struct sockaddr_in a = addr_of(ip);
	size_t nb = (size_t)(n / BATCH);
	double *on = calloc(nb, sizeof(double)), *off = calloc(nb, sizeof(double)), t;

	for (size_t i = 0; i < nb; i++) {
		join(cg_on);
		t = now_ns();
		for (int k = 0; k < BATCH; k++)
			connect_once(&a);
		on[i] = (now_ns() - t) / BATCH;
		join(cg_off);
		t = now_ns();
		for (int k = 0; k < BATCH; k++)
			connect_once(&a);
		off[i] = (now_ns() - t) / BATCH;
	}
	join(cg_on);
	qsort(on, nb, sizeof(double), cmp_double);
	qsort(off, nb, sizeof(double), cmp_double);
	out[0] = on[nb / 2];
	out[1] = off[nb / 2];
	free(on);
	free(off);
}

static void reply(const void *p, size_t n)
{
	if (write(from_gw, p, n) != (ssize_t)n)
		_exit(2);
}

static void gateway_main(void)
{
	struct sockaddr_in g = addr_of(GUEST);
	long arg[2];
	double out[4];
	pid_t k;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	raise_nofile();
	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET)", errno);
	lo_up();
	k = fork();
	if (k == 0)
		guest();
	join(cg_on);
	usleep(100000); /* the guest's listen() */
	reply(&k, sizeof(k));
	while (read(to_gw, arg, sizeof(arg)) == sizeof(arg)) {
		switch (arg[0]) {
		case C_COST:
		case C_COST_EMPTY:
			/* C_COST_EMPTY: from cg_empty, where the empty program
			 * runs alone (see main) */
			if (arg[0] == C_COST_EMPTY)
				join(cg_empty);
			cost(OTHER, arg[1], out);
			cost(GUEST, arg[1], out + 2);
			join(cg_on);
			reply(out, sizeof(out));
			break;
		case C_COST_TAG:
			/* from cg_tag, where the tag probe runs alone, on the
			 * unregistered address: each connect a new socket */
			join(cg_tag);
			cost_of(tag_fd, empty_fd, OTHER, arg[1], out);
			join(cg_on);
			reply(out, 2 * sizeof(double));
			break;
		case C_LATENCY:
			latency(OTHER, arg[1], out);
			reply(out, 2 * sizeof(double));
			break;
		case C_OPEN: {
			long ok = 0;

			for (int i = 0; i < nstreams; i++)
				close(streams[i]);
			nstreams = 0;
			for (long i = 0; i < arg[1] && i < MAX_STREAMS; i++) {
				int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

				if (connect(s, (struct sockaddr *)&g, sizeof(g))) {
					close(s);
					continue;
				}
				streams[nstreams++] = s;
				ok++;
			}
			reply(&ok, sizeof(ok));
			break;
		}
		case C_CHECK: {
			long cut = 0;
			char c = 'x';

			for (int i = 0; i < nstreams; i++)
				if (send(streams[i], &c, 1, MSG_NOSIGNAL) < 0 &&
				    errno == ECONNABORTED)
					cut++;
			reply(&cut, sizeof(cut));
			break;
		}
		default:
			_exit(0);
		}
	}
	_exit(0);
}

static void gw_call(long cmd, long n, void *out, size_t size)
{
	long arg[2] = {cmd, n};

	if (write(to_gw, arg, sizeof(arg)) != sizeof(arg) ||
	    read(from_gw, out, size) != (ssize_t)size)
		die("gateway", EIO);
}

/* ---- the loader side ------------------------------------------------------ */

static void grant(const struct eg_exec_record *rec)
{
	struct eg_service_grant g;
	char err[256];

	memset(&g, 0, sizeof(g));
	if (eg_proc_identify(gateway, &g.key.proc, err, sizeof(err)))
		die(err, ESRCH);
	memcpy(g.key.sandbox, rec->sandbox, EG_ID_BYTES);
	g.key.port = PORT;
	g.key.proto = IPPROTO_TCP;
	g.generation = rec->generation;
	g.epoch = rec->epoch;
	g.expiry_ns = eg_boottime_ns() + 3600ULL * 1000000000ULL;
	if (eg_service_grant_write(&rt.maps, &g))
		die("eg_service_grants", errno);
}

static void install(struct eg_install_spec *req, unsigned gen, struct eg_install_result *res)
{
	char err[768];

	req->generation = gen;
	if (eg_install(&rt, req, res, err, sizeof(err)))
		die(err, EINVAL);
}

static int prog_fd_of_link(const char *name)
{
	char pin[EG_PIN_PATH_MAX];
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int lfd, pfd;

	eg_link_pin_path(pin, sizeof(pin), pin_dir, name);
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

/* The capacity of the pinned eg_inet_tags, or 0. */
static unsigned inet_tags_capacity(void)
{
	char pin[EG_PIN_PATH_MAX];
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	int fd;

	snprintf(pin, sizeof(pin), "%s/eg_inet_tags", pin_dir);
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

static void cleanup(void)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};
	char out[EG_PIN_PATH_MAX], root[400];

	if (gateway > 0) {
		kill(gateway, SIGKILL);
		waitpid(gateway, NULL, 0);
	}
	eg_runtime_close(&rt);
	for (size_t i = 0; i < eg_tier_count; i++)
		eg_tiers[i]->unload(&ctx, out, sizeof(out));
	eg_pins_remove_maps(pin_dir);
	if (!eg_cgroup2_root(root, sizeof(root)))
		join(root);
	/* The guest dies with the gateway (PDEATHSIG); its cgroup empties. */
	rmdir(cg_empty);
	rmdir(cg_tag);
	for (int i = 0; i < 100 && rmdir(cg_on) && errno == EBUSY; i++)
		usleep(10000);
	rmdir(cg_off);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	if (system(out))
		fprintf(stderr, "bench-tcp: could not remove %s\n", dir);
}

/* n streams opened, the epoch moved by hand, then the TCP revoker alone
 * (sock_diag forced or not): out = wall ms, streams reported cut, streams
 * the gateway found cut, this process's CPU ms (the destroys run in it, in
 * the kernel: wall time on a loaded host is mostly waiting), streams
 * reported unreachable, streams the gateway opened. */
static void revoker_alone(struct eg_exec_record *rec, long n, bool diag, double out[6])
{
	struct eg_revoke_target t = {.current_epoch = 0};
	struct eg_revoke_count cnt;
	long opened, cut;
	char err[512];
	double t0, t1, c0, c1;
	int rc;

	gw_call(C_OPEN, n, &opened, sizeof(opened));
	rec->epoch++;
	if (eg_record_write(&rt.maps, rec))
		die("eg_records", errno);
	memcpy(t.sandbox, rec->sandbox, EG_ID_BYTES);
	t.current_epoch = rec->epoch;
	memset(&cnt, 0, sizeof(cnt));
	eg_revoke_tcp_force_diag(diag);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now_ns();
	rc = eg_revoker_tcp.run(&rt, &t, &cnt, err, sizeof(err));
	t1 = now_ns();
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	eg_revoke_tcp_force_diag(false);
	if (rc)
		die(err, rc);
	gw_call(C_CHECK, 0, &cut, sizeof(cut));
	out[0] = (t1 - t0) / 1e6;
	out[1] = cnt.cut;
	out[2] = (double)cut;
	out[3] = (c1 - c0) / 1e6;
	out[4] = cnt.unreachable;
	out[5] = (double)opened;
	grant(rec);
}

/* prog attached alone to cgroup cg (nothing else is attached there). */
static struct bpf_link *attach_alone(struct bpf_program *prog, const char *cg, const char *what)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	struct bpf_link *link = fd < 0 ? NULL : bpf_program__attach_cgroup(prog, fd);

	if (!link)
		die(what, errno);
	close(fd);
	return link;
}

int main(void)
{
	static const long sizes[] = {1, 100, MAX_STREAMS};
	long n = getenv("BENCH_CONNECTS") ? atol(getenv("BENCH_CONNECTS")) : 20000;
	struct cgroup_inet_empty *empty;
	struct cgroup_inet_tag_probe *tag;
	static struct eg_install_spec req;
	struct eg_install_result res;
	struct bpf_link *elink, *tlink;
	struct eg_tier_ctx ctx;
	char root[400], err[768];
	int p1[2], p2[2], stats_fd, rc, release_fd;
	__u64 rel_cnt0, rel_ns0, rel_cnt1, rel_ns1;
	double c[5], rounds[5][ROUNDS], lat[2];
	unsigned gen = 1;
	pid_t guest_pid;

	if (geteuid()) {
		fprintf(stderr, "bench-tcp: needs root\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "/tmp/egbench-tcp-%d", (int)getpid());
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/egbench-tcp-%d", (int)getpid());
	if (mkdir(dir, 0700) || eg_cgroup2_root(root, sizeof(root)))
		die("scratch dir / cgroup v2", errno);
	snprintf(cg_on, sizeof(cg_on), "%s/egbench-tcp-%d-on", root, (int)getpid());
	snprintf(cg_off, sizeof(cg_off), "%s/egbench-tcp-%d-off", root, (int)getpid());
	snprintf(cg_empty, sizeof(cg_empty), "%s-empty", cg_on);
	snprintf(cg_tag, sizeof(cg_tag), "%s-tag", cg_on);
	if (mkdir(cg_on, 0755) || mkdir(cg_off, 0755) || mkdir(cg_empty, 0755) ||
	    mkdir(cg_tag, 0755))
		die("scratch cgroups", errno);
	atexit(cleanup);

	ctx = (struct eg_tier_ctx){
	    .pin_dir = pin_dir,
	    .cgroup_path = cg_on,
	    .inet_tags = getenv("BENCH_INET_TAGS") ? (unsigned)atoi(getenv("BENCH_INET_TAGS")) : 0};
	rc = eg_pins_prepare(pin_dir, err, sizeof(err));
	if (!rc)
		rc = eg_tier_tcp.probe(&ctx, err, sizeof(err));
	if (!rc)
		rc = eg_tier_tcp.load(&ctx, err, sizeof(err));
	/* as load does: the Unix revoker's iterator pinned once, so the first
	 * install below does not pay its 70-80 ms verifier load */
	if (!rc && eg_revoke_unix_prepare(pin_dir))
		fprintf(stderr, "bench-tcp: the Unix revoker's iterator did not load\n");
	if (rc) {
		fprintf(stderr, "bench-tcp: %s\n", err);
		return 1;
	}
	/* As load does: the grant clock kept by its tracepoint program
	 * (loader/tiers/clock.h), so the hooks measured are the ones a worker runs. */
	if (eg_clock_keep(pin_dir, err, sizeof(err)))
		fprintf(stderr, "bench-tcp: %s\n", err);
	if (eg_runtime_open(&rt, pin_dir, state_dir, false, err, sizeof(err)))
		die(err, EINVAL);
	empty = cgroup_inet_empty__open_and_load();
	if (!empty)
		die("loading the empty connect4 program", errno);
	elink =
	    attach_alone(empty->progs.eg_connect4_empty, cg_empty, "attaching the empty program");
	tag = cgroup_inet_tag_probe__open_and_load();
	if (!tag)
		die("loading the tag probe", errno);
	tlink = attach_alone(tag->progs.eg_connect4_tag_probe, cg_tag, "attaching the tag probe");
	real_fd = prog_fd_of_link("tcp_connect4");
	empty_fd = bpf_program__fd(empty->progs.eg_connect4_empty);
	tag_fd = bpf_program__fd(tag->progs.eg_connect4_tag_probe);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		die("bpf_enable_stats", errno);

	if (pipe(p1) || pipe(p2))
		die("pipe", errno);
	gateway = fork();
	if (gateway == 0) {
		to_gw = p1[0];
		from_gw = p2[1];
		gateway_main();
	}
	to_gw = p1[1];
	from_gw = p2[0];
	if (read(from_gw, &guest_pid, sizeof(guest_pid)) != sizeof(guest_pid))
		die("gateway start", EIO);

	eg_uuid_parse(SANDBOX, req.sandbox);
	eg_uuid_parse(WORKER, req.worker);
	req.activation = 1;
	req.substrate = 2;
	req.ports[0].port = PORT;
	req.ports[0].proto = IPPROTO_TCP;
	req.n_ports = 1;
	req.bridge_pid = gateway;
	eg_inet_addr_parse(GUEST, &req.service_addrs[0]);
	req.n_service_addrs = 1;
	install(&req, gen, &res);
	grant(&res.after);

	printf("connect4 cost per run (bpf_stats, %ld TCP connects each; the tier's program alone "
	       "in its cgroup, the empty program alone in another, on the same connects; median "
	       "of %d rounds):\n",
	       n, ROUNDS);
	/* Each program alone in its cgroup's array, as the tier's is in
	 * production: bpf_stats charges the first program of a shared array
	 * 40-65 ns more than the second (bench_kernel.c). The tier's program
	 * in cg_on, the empty one in cg_empty, in interleaved rounds. */
	release_fd = prog_fd_of_link("tcp_sock_release");
	prog_stats(release_fd, &rel_cnt0, &rel_ns0);
	for (int r = 0; r < ROUNDS; r++) {
		double got[4];

		/* c[0], c[2]: the tier's program; c[1], c[3]: the empty one */
		gw_call(C_COST, n / ROUNDS, got, sizeof(got));
		rounds[0][r] = got[0];
		rounds[2][r] = got[2];
		gw_call(C_COST_EMPTY, n / ROUNDS, got, sizeof(got));
		rounds[1][r] = got[1];
		rounds[3][r] = got[3];
		/* c[4]: the tag alone, on the unregistered address's connects */
		gw_call(C_COST_TAG, n / ROUNDS, got, 2 * sizeof(double));
		rounds[4][r] = got[0];
	}
	for (int k = 0; k < 5; k++)
		c[k] = median_of(rounds[k], ROUNDS);
	bpf_link__destroy(elink);
	elink = NULL;
	bpf_link__destroy(tlink);
	if (tag->bss->probe_tag_full)
		fprintf(stderr, "bench-tcp: the tag probe's map refused %llu inserts\n",
			(unsigned long long)tag->bss->probe_tag_full);
	cgroup_inet_tag_probe__destroy(tag);
	printf("  unregistered %7.0f ns   empty %5.0f ns   ratio %.2fx (target <= 2x)\n", c[0],
	       c[1], c[1] > 0 ? c[0] / c[1] : 0);
	printf("  allowed      %7.0f ns   empty %5.0f ns   ratio %.2fx (grant path + socket tag; "
	       "target <= 450 ns; eg_inet_tags %u entries)\n",
	       c[2], c[3], c[3] > 0 ? c[2] / c[3] : 0, inet_tags_capacity());
	printf("  tag alone    %7.0f ns   empty %5.0f ns: the floor of the allowed row, a cookie "
	       "tag inserted into a preallocated hash of %u (htab_map_update_elem); allowed / "
	       "tag alone %.2fx\n",
	       c[4], c[1], EG_MAX_INET_TAGS, c[4] > 0 ? c[2] / c[4] : 0);
	/* What the tag costs at close: the collector runs on every inet
	 * socket released in the cgroup, tagged (a delete) or not (a miss). */
	prog_stats(release_fd, &rel_cnt1, &rel_ns1);
	printf("  sock_release %7.0f ns per run over %llu closes of the same sockets (the tag's "
	       "collector: a delete, or a miss for the unregistered ones)\n",
	       rel_cnt1 > rel_cnt0 ? (double)(rel_ns1 - rel_ns0) / (double)(rel_cnt1 - rel_cnt0)
				   : 0,
	       (unsigned long long)(rel_cnt1 - rel_cnt0));
	close(release_fd);
	close(stats_fd);

	/* latency: the tier's programs only (the empty links are gone) */
	gw_call(C_LATENCY, n, lat, sizeof(lat));
	printf("connect() latency, unregistered address, median of %d-connect batches:\n", BATCH);
	printf("  enforced %.0f ns   plain %.0f ns   ratio %.3f (target <= 1.03)\n", lat[0], lat[1],
	       lat[1] > 0 ? lat[0] / lat[1] : 0);

	printf("revocation: N admitted TCP streams, then the epoch moves; time until every one "
	       "is cut (gateway in its own netns; target <= 50 ms at 10 000):\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long opened, cut;
		double t0, t1, alone[2][6];

		/* The whole install: record, endpoints, then every revoker
		 * (Unix and TCP) before it returns. */
		gw_call(C_OPEN, sizes[i], &opened, sizeof(opened));
		t0 = now_ns();
		install(&req, ++gen, &res);
		t1 = now_ns();
		gw_call(C_CHECK, 0, &cut, sizeof(cut));
		grant(&res.after);
		/* The TCP revoker alone, by each method. */
		for (int m = 0; m < 2; m++)
			revoker_alone(&res.after, sizes[i], m == 1, alone[m]);
		printf("  %5ld streams: install %7.2f ms (%ld of %ld cut); tcp revoker alone: "
		       "iter/tcp %7.2f ms, CPU %.2f ms (%.0f opened, %.0f reported cut + %.0f "
		       "unreachable, %.0f cut), iter/tcp+sock_diag %7.2f ms, CPU %.2f ms (%.0f "
		       "opened, %.0f reported cut + %.0f unreachable, %.0f cut)\n",
		       sizes[i], (t1 - t0) / 1e6, cut, sizes[i], alone[0][0], alone[0][3],
		       alone[0][5], alone[0][1], alone[0][4], alone[0][2], alone[1][0], alone[1][3],
		       alone[1][5], alone[1][1], alone[1][4], alone[1][2]);
		install(&req, ++gen, &res);
		grant(&res.after);
	}
	gw_call(C_QUIT, 0, c, 0);
	return 0;
}
