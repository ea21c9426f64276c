/* SPDX-License-Identifier: Apache-2.0 */
/* In-kernel cost of the LSM tier's programs, in one run (bpf_stats:
 * run_time_ns / run_cnt, held only for the run), each beside an empty LSM
 * program on the same hook (bpf/bench/lsm_empty.bpf.c), attached together so both
 * run on the very same calls:
 *
 *   socket_connect       AF_VSOCK to CID 1: unregistered, registered +
 *                        allowed (we are the bridge: the admission cache
 *                        decides), the same with every connect a cache
 *                        miss (the full checks), registered + denied
 *   unix_stream_connect  unregistered socket; registered inode, allowed
 *   socket_sendmsg/recvmsg  untagged stream (the path every I/O on the host
 *                        takes); tagged stream at the current epoch
 *   floor                the socket tag alone (bpf/bench/lsm_tag_probe.bpf.c,
 *                        found in bpf-steps/ beside this binary) on
 *                        unregistered connects, in rounds interleaved with
 *                        allowed ones: what an allowed connect pays for its
 *                        tag(s) whatever its checks cost, against the same
 *                        empty program, in the same run
 *
 * Targets (printed, not asserted): untagged sendmsg/recvmsg <= 2x empty;
 * allowed connects <= 5x empty, out of reach when the tag alone is more.
 * Needs BPF LSM and vsock_loopback: run inside the VM matrix
 * (scripts/vmtest.sh run -- build/bench-lsm); elsewhere it says why and
 * exits 3 (scripts/bench.sh then runs it in a VM). Under TCG the absolute figures are meaningless,
 * the ratios are not. BENCH_RUNS overrides the calls per measurement (default 5000). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench/lsm_empty.skel.h"
#include "loader/tiers/clock.h"
#include "loader/tiers/lsm_probe.h"
#include "loader/tiers/lsm_tier.h"
#include "loader/maps/pins.h"
#include "loader/records/runtime.h"
#include "loader/maps/tag_maps.h"
#include "loader/tiers/tier.h"

#define PORT_REG   47001
#define PORT_UNREG 47002

static char dir[128], pin_dir[128], state_dir[160], sock_reg[200], sock_unreg[200];
static struct eg_runtime rt;
static struct lsm_empty *empty;
static struct bpf_object *probe;
static pid_t acceptor;
static int runs = 5000;
static bool quiet; /* floor rounds: figures are collected, not printed */
static bool miss;  /* drop our admission-cache entry before every connect */

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-lsm: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};
	char err[256];

	if (acceptor > 0) {
		kill(acceptor, SIGKILL);
		waitpid(acceptor, NULL, 0);
	}
	lsm_empty__destroy(empty);
	bpf_object__close(probe);
	if (probe) {
		char pin[200];

		snprintf(pin, sizeof(pin), "%s/probe_tags", pin_dir);
		unlink(pin);
	}
	eg_runtime_close(&rt);
	eg_tier_lsm.unload(&ctx, err, sizeof(err));
	eg_pins_remove_maps(pin_dir);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(sun.sun_path, path, strnlen(path, sizeof(sun.sun_path) - 1));
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 1024))
		return -1;
	return fd;
}

static int listen_vsock(unsigned port)
{
	struct sockaddr_vm svm = {
	    .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port};
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&svm, sizeof(svm)) || listen(fd, 1024))
		return -1;
	return fd;
}

/* The VMM stand-in: listens on both sockets and both ports; echoes on every
 * accepted connection until it closes. */
static void acceptor_main(int ready)
{
	struct pollfd pfd[128];
	int n = 4;

	pfd[0].fd = listen_unix(sock_reg);
	pfd[1].fd = listen_unix(sock_unreg);
	pfd[2].fd = listen_vsock(PORT_REG);
	pfd[3].fd = listen_vsock(PORT_UNREG);
	for (int i = 0; i < n; i++) {
		if (pfd[i].fd < 0)
			_exit(1);
		pfd[i].events = POLLIN;
	}
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;) {
		if (poll(pfd, n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			char buf[256];
			ssize_t r;

			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (i < 4) {
				int c = accept(pfd[i].fd, NULL, NULL);

				if (c >= 0 && n < 128)
					pfd[n++] = (struct pollfd){.fd = c, .events = POLLIN};
				else if (c >= 0)
					close(c);
				continue;
			}
			r = read(pfd[i].fd, buf, sizeof(buf));
			if (r > 0 && write(pfd[i].fd, buf, r) == r)
				continue;
			close(pfd[i].fd);
			pfd[i] = pfd[--n];
			i--;
		}
	}
}

struct stats {
	__u64 cnt, ns;
};

static struct stats prog_stats(int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct stats s = {0};

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		s.cnt = info.run_cnt;
		s.ns = info.run_time_ns;
	}
	return s;
}

static int real_prog_fd(enum eg_lsm_prog which)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};
	struct eg_tier_status st;
	int fd;

	if (eg_tier_lsm.status(&ctx, &st) || st.nprogs != EG_LSM_PROG__COUNT)
		die("lsm tier status", EINVAL);
	fd = bpf_prog_get_fd_by_id(st.progs[which].prog_id);
	if (fd < 0)
		die("prog fd", errno);
	return fd;
}

/* ns per run of the real, empty and (when attached) probe program over one
 * case; ratios are to the empty program of the same calls. */
struct cost {
	double real, empty, probe;
};

struct pair {
	int real, empty, probe; /* probe: -1 when none */
	struct stats r0, e0, p0;
};

static void pair_begin(struct pair *p)
{
	p->r0 = prog_stats(p->real);
	p->e0 = prog_stats(p->empty);
	if (p->probe >= 0)
		p->p0 = prog_stats(p->probe);
}

static double per_run(struct stats now, struct stats before, __u64 *cnt)
{
	*cnt = now.cnt - before.cnt;
	return *cnt ? (double)(now.ns - before.ns) / *cnt : 0;
}

static void print_row(const char *hook, const char *what, __u64 cnt, double ns, double empty_ns)
{
	printf("%-20s %-34s %8llu %9.0f %9.0f %7.2fx\n", hook, what, (unsigned long long)cnt, ns,
	       empty_ns, empty_ns > 0 ? ns / empty_ns : 0);
}

static struct cost pair_end(struct pair *p, const char *hook, const char *what)
{
	struct cost c = {0};
	__u64 rc, ec, pc;

	c.real = per_run(prog_stats(p->real), p->r0, &rc);
	c.empty = per_run(prog_stats(p->empty), p->e0, &ec);
	if (p->probe >= 0)
		c.probe = per_run(prog_stats(p->probe), p->p0, &pc);
	if (!quiet)
		print_row(hook, what, rc, c.real, c.empty);
	return c;
}

/* Kernels without connect_unix tag a Unix stream's connecting end in
 * socket_connect, so the tier's unix_stream_connect tags only the accepted
 * end there: the probe does what the program it is compared with does. */
static bool unix_tags_both_ends(void)
{
	/* Asked once: the answer probes the cgroup tier (a program load and
	 * a scratch cgroup), not something to repeat between rounds. */
	static int both = -1;

	if (both < 0) {
		struct eg_tier_ctx ctx = {.pin_dir = pin_dir};

		both = !eg_lsm_unix_connect_needed(&ctx);
	}
	return both;
}

/* The tag probe: one of its programs attached for one case. */
static struct bpf_link *probe_attach(const char *name, int *fd)
{
	struct bpf_program *prog;
	struct bpf_link *link;

	if (!probe) {
		LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_dir);
		char exe[512], path[700];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			die("/proc/self/exe", errno);
		exe[n] = 0;
		snprintf(path, sizeof(path), "%s/bpf-steps/lsm_tag_probe.bpf.o", dirname(exe));
		probe = bpf_object__open_file(path, &opts);
		if (!probe)
			die(path, errno);
		/* its map, made as the loader makes eg_sk_tags */
		eg_tag_maps_create_unaccounted(probe);
		if (bpf_object__load(probe))
			die(path, errno);
	}
	prog = bpf_object__find_program_by_name(probe, name);
	if (!prog)
		die(name, ENOENT);
	link = bpf_program__attach(prog);
	if (!link)
		die(name, errno);
	*fd = bpf_program__fd(prog);
	return link;
}

static int connect_vsock(unsigned port)
{
	struct sockaddr_vm svm = {.svm_family = AF_VSOCK, .svm_cid = 1, .svm_port = port};
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0), rc;

	if (fd < 0)
		die("socket(AF_VSOCK)", errno);
	rc = connect(fd, (struct sockaddr *)&svm, sizeof(svm)) ? -errno : 0;
	close(fd);
	return rc;
}

static int connect_unix(const char *path, bool keep)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(sun.sun_path, path, strnlen(path, sizeof(sun.sun_path) - 1));
	if (fd < 0)
		die("socket(AF_UNIX)", errno);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (keep)
		return fd;
	close(fd);
	return 0;
}

/* probe: the tag probe's program to attach for these calls, or NULL. */
static struct cost bench_connect(const char *what, unsigned port, int want, const char *probe)
{
	struct pair p = {.real = real_prog_fd(EG_LSM_PROG_CONNECT),
			 .empty = bpf_program__fd(empty->progs.eg_empty_socket_connect),
			 .probe = -1};
	struct bpf_link *link = probe ? probe_attach(probe, &p.probe) : NULL;
	struct cost c;

	pair_begin(&p);
	for (int i = 0; i < runs; i++) {
		struct eg_admit_key k = {.path_hash = (__u64)1 << 32 | port,
					 .tgid = (__u32)getpid(),
					 .len = EG_ADMIT_LEN_VSOCK};
		int rc;

		/* outside the programs' run time: only the connect is timed */
		if (miss)
			bpf_map_delete_elem(rt.maps.fd[EG_MAP_ADMIT_CACHE], &k);
		rc = connect_vsock(port);

		if (rc != want)
			die(what, rc ? rc : EINVAL);
	}
	c = pair_end(&p, "socket_connect", what);
	bpf_link__destroy(link);
	close(p.real);
	return c;
}

static struct cost bench_stream_connect(const char *what, const char *path, bool with_probe)
{
	struct pair p = {.real = real_prog_fd(EG_LSM_PROG_UNIX_STREAM),
			 .empty = bpf_program__fd(empty->progs.eg_empty_unix_stream_connect),
			 .probe = -1};
	struct bpf_link *link = NULL;
	struct cost c;

	if (with_probe)
		link = probe_attach(unix_tags_both_ends() ? "eg_probe_unix_tags"
							  : "eg_probe_unix_accepted_tag",
				    &p.probe);
	pair_begin(&p);
	for (int i = 0; i < runs; i++) {
		int rc = connect_unix(path, false);

		if (rc)
			die(what, rc);
	}
	c = pair_end(&p, "unix_stream_connect", what);
	bpf_link__destroy(link);
	close(p.real);
	return c;
}

static void bench_io(const char *what, int a, int b, int n)
{
	struct pair s = {.real = real_prog_fd(EG_LSM_PROG_SENDMSG),
			 .empty = bpf_program__fd(empty->progs.eg_empty_socket_sendmsg),
			 .probe = -1};
	struct pair r = {.real = real_prog_fd(EG_LSM_PROG_RECVMSG),
			 .empty = bpf_program__fd(empty->progs.eg_empty_socket_recvmsg),
			 .probe = -1};
	char c = 'x';

	pair_begin(&s);
	pair_begin(&r);
	for (int i = 0; i < n; i++)
		if (send(a, &c, 1, 0) != 1 || recv(b, &c, 1, 0) != 1)
			die(what, errno);
	pair_end(&s, "socket_sendmsg", what);
	pair_end(&r, "socket_recvmsg", what);
	close(s.real);
	close(r.real);
}

/* ---- the floor of an allowed connect ---------------------------------------- */

#define FLOOR_ROUNDS 5

/* FLOOR_VSOCK_COOKIE: the VSOCK row again, with a cookie-keyed tag in a
 * preallocated hash as the probe instead of the sk-storage tag the tier
 * creates (bpf/bench/lsm_tag_probe.bpf.c). */
enum floor_hook { FLOOR_VSOCK, FLOOR_UNIX, FLOOR_VSOCK_COOKIE };

static int floor_calls(void)
{
	return runs / FLOOR_ROUNDS > 200 ? runs / FLOOR_ROUNDS : 200;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Allowed rounds (the real program tags) interleaved with unregistered
 * rounds carrying the tag probe (the real program takes its untagged path).
 * Both ratios are to one reference, the median of the empty program over
 * every round of both kinds: under TCG its cost per run moves from round to
 * round by more than the difference being measured. */
static void floor_row(enum floor_hook hook)
{
	double empty_ns[2 * FLOOR_ROUNDS], real_ns[FLOOR_ROUNDS], tag_ns[FLOOR_ROUNDS];
	double empty, real, tag;
	int saved = runs;
	struct cost a, t;

	runs = floor_calls();
	quiet = true;
	for (int r = 0; r < FLOOR_ROUNDS; r++) {
		if (hook != FLOOR_UNIX) {
			a = bench_connect("vsock allowed (floor round)", PORT_REG, 0, NULL);
			t = bench_connect("vsock tag probe (floor round)", PORT_UNREG, 0,
					  hook == FLOOR_VSOCK_COOKIE ? "eg_probe_vsock_cookie_tag"
								     : "eg_probe_vsock_tag");
		} else {
			a = bench_stream_connect("unix allowed (floor round)", sock_reg, false);
			t = bench_stream_connect("unix tag probe (floor round)", sock_unreg, true);
		}
		real_ns[r] = a.real;
		tag_ns[r] = t.probe;
		empty_ns[2 * r] = a.empty;
		empty_ns[2 * r + 1] = t.empty;
	}
	quiet = false;
	runs = saved;
	empty = median(empty_ns, 2 * FLOOR_ROUNDS);
	real = median(real_ns, FLOOR_ROUNDS);
	tag = median(tag_ns, FLOOR_ROUNDS);
	printf("  %-20s empty %5.0f ns; allowed %6.0f ns = %6.2fx; %s alone %6.0f ns = %6.2fx "
	       "(%.0f%% of the allowed program)\n",
	       hook == FLOOR_VSOCK	    ? "socket_connect vsock"
	       : hook == FLOOR_VSOCK_COOKIE ? "vsock, cookie tag"
					    : "unix_stream_connect",
	       empty, real, empty > 0 ? real / empty : 0,
	       hook != FLOOR_UNIX || !unix_tags_both_ends() ? "its tag" : "its two tags", tag,
	       empty > 0 ? tag / empty : 0, real > 0 ? 100.0 * tag / real : 0);
}

int main(void)
{
	struct eg_tier_ctx ctx;
	struct eg_install_spec req;
	struct eg_install_result res;
	struct eg_lsm_probe lsm;
	char err[512], c;
	int ready[2], stats_fd, sp[2], tagged, rc;

	if (getenv("BENCH_RUNS"))
		runs = atoi(getenv("BENCH_RUNS"));
	if (eg_lsm_probe(&lsm)) {
		printf("bench-lsm: not offered by this kernel: %s\n", lsm.reason);
		return 3;
	}
	if (!getenv("EXECGATE_VM")) {
		printf("bench-lsm: needs vsock_loopback (CID 1): runs only in the VM matrix\n");
		return 3;
	}
	snprintf(dir, sizeof(dir), "/tmp/egb-lsm-%d", (int)getpid());
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/egb-lsm-%d", (int)getpid());
	snprintf(sock_reg, sizeof(sock_reg), "%s/vmm.sock", dir);
	snprintf(sock_unreg, sizeof(sock_unreg), "%s/free.sock", dir);
	if (mkdir(dir, 0755))
		die(dir, errno);
	atexit(cleanup);

	ctx = (struct eg_tier_ctx){.pin_dir = pin_dir};
	rc = eg_pins_prepare(pin_dir, err, sizeof(err));
	if (rc)
		die(err, rc);
	rc = eg_tier_lsm.load(&ctx, err, sizeof(err));
	if (rc)
		die(err, rc);
	/* As load does: the grant clock kept by its tracepoint program
	 * (loader/tiers/clock.h), so the hooks measured are the ones a worker runs. */
	if (eg_clock_keep(pin_dir, err, sizeof(err)))
		fprintf(stderr, "bench-lsm: %s\n", err);
	empty = lsm_empty__open_and_load();
	if (!empty || lsm_empty__attach(empty))
		die("empty LSM programs", errno);
	rc = eg_runtime_open(&rt, pin_dir, state_dir, true, err, sizeof(err));
	if (rc)
		die(err, rc);

	if (pipe(ready))
		die("pipe", errno);
	acceptor = fork();
	if (acceptor == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		acceptor_main(ready[1]);
	}
	if (read(ready[0], &c, 1) != 1)
		die("acceptor", EIO);

	/* We are the bridge, the acceptor the VMM. */
	memset(&req, 0, sizeof(req));
	memset(req.sandbox, 0x5b, sizeof(req.sandbox));
	memset(req.worker, 0xa0, sizeof(req.worker));
	req.substrate = EG_SUBSTRATE_FC_HOST;
	req.generation = 7;
	req.activation = 1;
	req.bridge_pid = getpid();
	req.vmm_pid = acceptor;
	req.vmm_sockets[req.n_vmm_sockets++] = sock_reg;
	req.vsock[0] = (struct eg_vsock_addr){.cid = 1, .port = PORT_REG};
	req.n_vsock = 1;
	rc = eg_install(&rt, &req, &res, err, sizeof(err));
	if (rc)
		die(err, rc);

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0 && errno != EBUSY)
		die("bpf_enable_stats", errno);

	printf("bench-lsm on %d calls per case (ns per program run, bpf_stats)\n", runs);
	printf("%-20s %-34s %8s %9s %9s %8s\n", "hook", "case", "runs", "execgate", "empty",
	       "ratio");
	bench_connect("vsock unregistered", PORT_UNREG, 0, NULL);
	bench_connect("vsock registered, bridge allowed", PORT_REG, 0, NULL);
	/* the full checks: what a first connect (or one after any change to
	 * the sandbox) costs, the admission cache's insert included */
	miss = true;
	bench_connect("vsock allowed, cache miss", PORT_REG, 0, NULL);
	miss = false;

	/* Denied: make a child the bridge (activation 2) so we are not. */
	{
		pid_t other = fork();

		if (other == 0) {
			pause();
			_exit(0);
		}
		req.bridge_pid = other;
		req.activation = 2;
		rc = eg_install(&rt, &req, &res, err, sizeof(err));
		if (rc)
			die(err, rc);
		bench_connect("vsock registered, denied", PORT_REG, -EPERM, NULL);
		req.bridge_pid = getpid();
		req.activation = 3;
		rc = eg_install(&rt, &req, &res, err, sizeof(err));
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
		if (rc)
			die(err, rc);
	}

	bench_stream_connect("unregistered socket", sock_unreg, false);
	bench_stream_connect("registered socket, allowed", sock_reg, false);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("socketpair", errno);
	/* 4x the calls: every other process's I/O on the host runs these hooks
	 * too and would otherwise weigh in the average. */
	bench_io("untagged stream", sp[0], sp[1], 4 * runs);
	tagged = connect_unix(sock_reg, true);
	if (tagged < 0)
		die("tagged stream", tagged);
	bench_io("tagged stream, current epoch", tagged, tagged, runs);
	printf("target: untagged sendmsg/recvmsg <= 2x empty\n");
	printf("target: allowed connects <= 5x empty; their floor, the socket tag alone, in %d "
	       "interleaved rounds of %d calls (medians; ratios to the empty program's median over "
	       "all of them):\n",
	       FLOOR_ROUNDS, floor_calls());
	floor_row(FLOOR_VSOCK);
	floor_row(FLOOR_UNIX);
	floor_row(FLOOR_VSOCK_COOKIE);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
