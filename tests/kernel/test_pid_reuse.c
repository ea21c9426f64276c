// SPDX-License-Identifier: Apache-2.0
/* A reused pid is another process, to the nanosecond. The hooks compare the
 * group leader's task->start_boottime in ns, and the loader reads the very
 * same value through a task iterator (loader/process/task_start.c), so a process
 * that gets a dead bridge's or grantee's pid back is denied even when it
 * starts within the same 10 ms tick (where /proc/PID/stat, in USER_HZ
 * ticks, cannot tell the two apart).
 *
 * The pid is forced with /proc/sys/kernel/ns_last_pid: write pid - 1, fork.
 * Other processes on the machine may take it first, so a few tries are
 * allowed; every test that steers the allocator holds PID_LOCK meanwhile so
 * that two of them never steal each other's pid. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "core/peer_check.h"
#include "harness.h"
#include "iter_task_start.skel.h"
#include "loader/process/proc_id.h"
#include "loader/process/task_start.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

#define SANDBOX	    "5f0c2c1e-7a4b-4c1d-9e3f-000000000007"
#define WORKER_A    "a0000000-0000-4000-8000-00000000000a"
#define NS_LAST_PID "/proc/sys/kernel/ns_last_pid"
#define PID_LOCK    "/tmp/execgate-ns_last_pid.lock"

TestSuite(pid_reuse, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

static int pid_lock(void)
{
	int fd = open(PID_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0, "%s: %s", PID_LOCK, strerror(errno));
	cr_assert_eq(flock(fd, LOCK_EX), 0, "flock %s: %s", PID_LOCK, strerror(errno));
	return fd;
}

static void pid_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

/* The next fork gets want, unless someone else forks first; through fd,
 * NS_LAST_PID opened for writing. */
static void steer_next_pid_fd(int fd, pid_t want)
{
	char num[32];
	int len = snprintf(num, sizeof(num), "%d", (int)want - 1);

	cr_assert_eq(pwrite(fd, num, (size_t)len, 0), len, "%s: %s", NS_LAST_PID, strerror(errno));
}

/* Kills *c and starts a new child in the cgroup with the same pid, asked
 * for by number (kh_fork_as): nothing else can take it in between. */
static void restart_with_same_pid(struct kh_child *c)
{
	pid_t want = c->pid;

	kh_child_stop(c);
	cr_assert_eq(kh_child_start_as(c, true, want), 0, "pid %d: %s", (int)want, strerror(errno));
}

static void install(pid_t bridge, pid_t vmm, const char *bridge_sock, const char *vmm_sock)
{
	char b[16], v[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", "7", "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--vmm-socket", vmm_sock, bridge_sock ? "--bridge-socket" : NULL, bridge_sock,
		    NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

static struct eg_exec_record record(void)
{
	struct eg_exec_record r;
	__u8 sb[EG_ID_BYTES];

	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &r), 0, "reading the record");
	return r;
}

/* What userspace says about the newcomer: the same pid and executable, a
 * start time that differs in ns. */
static void assert_start_mismatch(const struct eg_proc_id *old, const struct eg_proc_id *now)
{
	char t_old[96], t_now[96];

	eg_peer_id_text(old, t_old, sizeof(t_old));
	eg_peer_id_text(now, t_now, sizeof(t_now));
	cr_assert_eq(eg_peer_diff(old, now), EG_PEER_OTHER_START, "old %s, new %s: diff %#x", t_old,
		     t_now, eg_peer_diff(old, now));
	cr_assert_str_eq(eg_peer_diff_reason(eg_peer_diff(old, now)),
			 "pid reused (another start time)");
	cr_assert_gt(now->start_boottime_ns, old->start_boottime_ns, "old %s, new %s", t_old,
		     t_now);
	cr_log_info("pid %u reused %llu ns later (ticks %llu -> %llu)", now->tgid,
		    (unsigned long long)(now->start_boottime_ns - old->start_boottime_ns),
		    (unsigned long long)(old->start_boottime_ns / EG_NSEC_PER_TICK),
		    (unsigned long long)(now->start_boottime_ns / EG_NSEC_PER_TICK));
}

/* guarantees: pid-reuse-ns-identity */
Test(pid_reuse, reused_bridge_pid_is_denied_at_the_vmm_socket)
{
	const char *vmm = kh_path("vmm.sock");
	struct eg_proc_id old, now;
	struct kh_child bridge;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	install(bridge.pid, fc, NULL, vmm);
	old = record().bridge;
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0, "the registered bridge");
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 1);

	restart_with_same_pid(&bridge);
	now = kh_proc_id(bridge.pid);
	assert_start_mismatch(&old, &now);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "same pid, new process");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 1);
	cr_assert_eq(kh_events((__u32)bridge.pid, EG_K_DENY_NOT_BRIDGE), 1);
}

/* guarantees: pid-reuse-ns-identity */
Test(pid_reuse, reused_grantee_pid_is_denied_at_the_bridge_socket)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	char token[512], out[1024], pid[16];
	struct kh_child bridge, mgr;
	struct eg_proc_id old, now;
	pid_t fc = kh_listener_start(vmm);
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(bridge.pid, fc, bsock, vmm);
	kh_keys();
	kh_cap(token, sizeof(token), SANDBOX, WORKER_A, 7, 1, 120, 0);
	snprintf(pid, sizeof(pid), "%d", (int)mgr.pid);
	rc = kh_cli(out, sizeof(out), "admit", "--pid", pid, token, NULL);
	cr_assert_eq(rc, 0, "admit: exit %d: %s", rc, out);
	cr_assert_str_eq(out, "allow\n");
	old = kh_proc_id(mgr.pid);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "the granted process");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 1);

	restart_with_same_pid(&mgr);
	now = kh_proc_id(mgr.pid);
	assert_start_mismatch(&old, &now);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "same pid, new process");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1, "the grant names the dead process");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 1);
	cr_assert_eq(kh_events((__u32)mgr.pid, EG_K_DENY_NO_GRANT), 1);
}

/* A bare child: clone(CLONE_VM), so that neither its start nor its death
 * copies or tears down this process's page tables (under TCG each of those
 * costs about 3 ms, and a round must fit both starts into one 10 ms tick).
 * It runs on bare_stack (one bare child lives at a time), waits for a byte
 * on go, joins the cgroup through procs_fd when >= 0 (a migration waits for
 * RCU, but it comes after the start that is timed), connects to path and
 * exits with the errno (0 on success). While it runs the parent only blocks
 * in read/waitpid, which leave the errno they share untouched. */
struct bare_args {
	int go, procs_fd;
	const char *path;
};
static char bare_stack[64 * 1024] __attribute__((aligned(16)));

static int bare_main(void *arg)
{
	const struct bare_args *a = arg;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char c;
	int fd;

	if (read(a->go, &c, 1) != 1)
		_exit(200);
	if (a->procs_fd >= 0 && write(a->procs_fd, "0", 1) != 1)
		_exit(201);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", a->path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		_exit(202);
	_exit(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ? errno : 0);
}

static pid_t bare_child(const struct bare_args *a)
{
	pid_t pid =
	    clone(bare_main, bare_stack + sizeof(bare_stack), CLONE_VM | SIGCHLD, (void *)a);

	cr_assert_geq(pid, 0, "clone: %s", strerror(errno));
	kh_track(pid);
	return pid;
}

/* Kills and reaps a bare child, and forgets it, so that teardown never
 * signals whoever gets the pid next. */
static void bare_reap(pid_t pid, int sig, int *status)
{
	if (sig)
		kill(pid, sig);
	cr_assert_eq(waitpid(pid, status, 0), pid);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == pid)
			kh.pids[i] = 0;
}

/* The case USER_HZ could not see: a grant is written for P, P dies and its
 * pid is back, all within one 10 ms tick. Every round is denied; rounds
 * start right after a tick boundary and go on until one lands in the same
 * tick, so the test shows that case itself. Between the two starts sits
 * only what must happen while P lives (its identity) and its death, since
 * under TCG every syscall there costs a tenth of a tick: P's tick is its
 * start in ns rounded as /proc/PID/stat rounds it (checked against /proc
 * for the newcomer here, and for the bridge in
 * iterator_ns_is_what_the_hook_reads), the pid is steered through an open
 * fd, and the grant for P's identity is written once the newcomer exists,
 * which is the map state the hook sees either way. */
/* guarantees: pid-reuse-ns-identity */
Test(pid_reuse, reuse_within_one_tick_is_denied)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	int rounds, denied = 0, same_tick = 0, go[2], lock, status, last_pid;
	struct bare_args outside = {.procs_fd = -1}, inside;
	struct kh_child bridge;
	struct eg_exec_record rec;
	struct eg_proc_id old, now;
	struct eg_grant g;
	__u64 t_old, t_now, gap, closest = UINT64_MAX;
	char procs[PATH_MAX];
	pid_t fc = kh_listener_start(vmm), p, q;

	kh_child_start(&bridge, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(bridge.pid, fc, bsock, vmm);
	rec = record();
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
	cr_assert_eq(pipe(go), 0);
	outside.go = go[0];
	outside.path = bsock;
	inside = outside;
	inside.procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(inside.procs_fd, 0, "%s: %s", procs, strerror(errno));
	last_pid = open(NS_LAST_PID, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(last_pid, 0, "%s: %s", NS_LAST_PID, strerror(errno));
	kh_proc_id(bridge.pid); /* loads the iterator once, outside the rounds */
	for (rounds = 1; rounds <= 200 && !same_tick; rounds++) {
		lock = pid_lock();
		while (eg_boottime_ns() % EG_NSEC_PER_TICK > EG_NSEC_PER_TICK / 10)
			;
		p = bare_child(&outside); /* never connects */
		old = kh_proc_id(p);
		bare_reap(p, SIGKILL, NULL);
		steer_next_pid_fd(last_pid, p);
		q = bare_child(&inside);
		pid_unlock(lock);
		if (q != p) { /* someone else forked first: another round */
			bare_reap(q, SIGKILL, NULL);
			continue;
		}
		cr_assert_eq(eg_proc_stat_start_ticks(q, &t_now), 0);
		now = kh_proc_id(q);
		cr_assert_eq(now.start_boottime_ns / EG_NSEC_PER_TICK, t_now,
			     "ns %llu against /proc's tick %llu",
			     (unsigned long long)now.start_boottime_ns, (unsigned long long)t_now);
		t_old = old.start_boottime_ns / EG_NSEC_PER_TICK;
		cr_assert_eq(eg_peer_diff(&old, &now), EG_PEER_OTHER_START);
		memset(&g, 0, sizeof(g));
		g.key.proc = old;
		memcpy(g.key.sandbox, rec.sandbox, EG_ID_BYTES);
		g.generation = rec.generation;
		g.epoch = rec.epoch;
		g.expiry_ns = eg_boottime_ns() + 100ULL * 1000000000ULL;
		g.scope = 1;
		cr_assert_eq(eg_grant_write(&kh.maps, &g), 0, "writing the grant");
		cr_assert_eq(write(go[1], "g", 1), 1);
		bare_reap(q, 0, &status);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EPERM,
			  "round %d: the newcomer's connect: status %#x", rounds, status);
		denied++;
		cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), (__u64)denied);
		cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_GRANTS], &g.key), 0);
		gap = now.start_boottime_ns - old.start_boottime_ns;
		if (gap < closest)
			closest = gap;
		same_tick = t_old == t_now;
		if (same_tick)
			cr_log_info("round %d: pid %u back after %llu ns, both in tick %llu "
				    "(/proc cannot tell them apart): denied",
				    rounds, now.tgid, (unsigned long long)gap,
				    (unsigned long long)t_now);
	}
	close(inside.procs_fd);
	close(last_pid);
	cr_assert(same_tick,
		  "no round of %d put both processes in one tick (%d denied; the closest "
		  "started %llu ns apart)",
		  rounds - 1, denied, (unsigned long long)closest);
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 0);
}

/* The loader's ns and the kernel's agree to the ns: a record naming the
 * bridge as the iterator read it admits the bridge, and 1 ns either way
 * does not. The iterator's tick and executable match /proc's as well. */
/* guarantees: pid-reuse-ns-identity */
Test(pid_reuse, iterator_ns_is_what_the_hook_reads)
{
	const char *vmm = kh_path("vmm.sock");
	struct eg_exec_record rec;
	struct eg_task_start ts;
	struct kh_child bridge;
	struct eg_proc_id id;
	struct stat st;
	char err[256], exe[64];
	__u64 ticks;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	cr_assert_eq(eg_task_start_read(bridge.pid, &ts, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ts.tid, (__u32)bridge.pid);
	cr_assert_eq(ts.tgid, (__u32)bridge.pid);
	cr_assert_eq(ts.has_exe, 1);
	cr_assert_eq(eg_proc_stat_start_ticks(bridge.pid, &ticks), 0);
	cr_assert_eq(ts.start_boottime_ns / EG_NSEC_PER_TICK, ticks, "/proc tick %llu, ns %llu",
		     (unsigned long long)ticks, (unsigned long long)ts.start_boottime_ns);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)bridge.pid);
	cr_assert_eq(stat(exe, &st), 0);
	cr_assert_eq(ts.exe_ino, (__u64)st.st_ino);

	install(bridge.pid, fc, NULL, vmm);
	rec = record();
	id = kh_proc_id(bridge.pid);
	cr_assert_eq(memcmp(&rec.bridge, &id, sizeof(id)), 0, "installed identity");
	cr_assert_eq(rec.bridge.start_boottime_ns, ts.start_boottime_ns);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0, "exact ns");
	rec.bridge.start_boottime_ns = ts.start_boottime_ns + 1;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "ns + 1");
	rec.bridge.start_boottime_ns = ts.start_boottime_ns - 1;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "ns - 1");
	rec.bridge.start_boottime_ns = ts.start_boottime_ns;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0, "exact ns again");
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 2);
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 2);
}

/* The name of the program behind the iterator link pinned at pin. */
static void pinned_prog_name(const char *pin, char *name, size_t size)
{
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	__u32 len = sizeof(li);
	int lfd = bpf_obj_get(pin), pfd;

	cr_assert_geq(lfd, 0, "%s: %s", pin, strerror(errno));
	memset(&li, 0, sizeof(li));
	cr_assert_eq(bpf_obj_get_info_by_fd(lfd, &li, &len), 0, "%s", pin);
	close(lfd);
	pfd = bpf_prog_get_fd_by_id(li.prog_id);
	cr_assert_geq(pfd, 0, "%s: program %u: %s", pin, li.prog_id, strerror(errno));
	memset(&pi, 0, sizeof(pi));
	len = sizeof(pi);
	cr_assert_eq(bpf_obj_get_info_by_fd(pfd, &pi, &len), 0, "%s", pin);
	close(pfd);
	snprintf(name, size, "%s", pi.name);
}

/* `execgate -v install` of generation gen with bridge and vmm: whether its
 * first identify adopted the pinned task iterator (its debug line). */
static bool install_adopts(pid_t bridge, pid_t vmm, const char *vmm_sock, int gen)
{
	char b[16], v[16], g[16], out[16384];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	snprintf(g, sizeof(g), "%d", gen);
	rc = kh_cli(out, sizeof(out), "-v", "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", g, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--vmm-socket", vmm_sock, NULL);
	cr_assert_eq(rc, 0, "install of generation %d: exit %d: %s", gen, rc, out);
	return strstr(out, "task iterator: adopted") != NULL;
}

/* `load` verifies the task iterator once and pins it (links/task_start):
 * an install adopts it instead of loading its own, and never adopts
 * another program pinned there (another build's, or anything else): it
 * loads its own then, gets the same identity, and the next load puts this
 * build's program back. */
/* guarantees: pid-reuse-ns-identity */
Test(pid_reuse, installs_adopt_the_pinned_task_iterator_and_no_other)
{
	const char *vmm = kh_path("vmm.sock");
	char pin[PATH_MAX], other[PATH_MAX], name[BPF_OBJ_NAME_LEN], out[4096];
	struct eg_exec_record rec;
	struct kh_child bridge;
	struct eg_proc_id id;
	pid_t fc = kh_listener_start(vmm);
	int rc, fd;

	kh_child_start(&bridge, true);
	snprintf(pin, sizeof(pin), "%s/links/task_start", kh.pin_dir);
	pinned_prog_name(pin, name, sizeof(name));
	cr_assert_str_eq(name, "eg_task_start", "%s", pin);

	cr_assert(install_adopts(bridge.pid, fc, vmm, 7), "install loaded its own");

	/* Another iterator program in its place: the revoker's. */
	snprintf(other, sizeof(other), "%s/links/revoke_unix_iter", kh.pin_dir);
	fd = bpf_obj_get(other);
	cr_assert_geq(fd, 0, "%s: %s", other, strerror(errno));
	cr_assert_eq(unlink(pin), 0, "%s", pin);
	cr_assert_eq(bpf_obj_pin(fd, pin), 0, "%s: %s", pin, strerror(errno));
	close(fd);
	cr_assert_not(install_adopts(bridge.pid, fc, vmm, 8), "adopted another program");
	rec = record();
	id = kh_proc_id(bridge.pid);
	cr_assert_eq(memcmp(&rec.bridge, &id, sizeof(id)), 0, "installed identity");
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0);

	/* The same program of another build (another object hash in .data):
	 * not adopted either. */
	{
		struct iter_task_start *other_build = iter_task_start__open();
		struct bpf_link *l;

		cr_assert_not_null(other_build);
		other_build->data->eg_task_start_build = 12345;
		cr_assert_eq(iter_task_start__load(other_build), 0);
		l = bpf_program__attach_iter(other_build->progs.eg_task_start, NULL);
		cr_assert_not_null(l, "%s", strerror(errno));
		cr_assert_eq(unlink(pin), 0, "%s", pin);
		cr_assert_eq(bpf_link__pin(l, pin), 0, "%s: %s", pin, strerror(errno));
		bpf_link__destroy(l);
		iter_task_start__destroy(other_build);
	}
	pinned_prog_name(pin, name, sizeof(name));
	cr_assert_str_eq(name, "eg_task_start", "%s", pin);
	cr_assert_not(install_adopts(bridge.pid, fc, vmm, 9), "adopted another build's program");

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "load again: exit %d: %s", rc, out);
	pinned_prog_name(pin, name, sizeof(name));
	cr_assert_str_eq(name, "eg_task_start", "%s after a load", pin);
	cr_assert(install_adopts(bridge.pid, fc, vmm, 10),
		  "the load did not put this build's program back");
}

/* ---- LSM tier (6.1, 6.12): the same through unix_stream_connect ---------- */

static struct lsm_env env;

static void lsm_fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(pid_reuse_lsm, .fini = lsm_fini, .timeout = 120);

/* Stops agent a and starts one with the same pid (outside the cgroup). */
static struct agent *agent_restart_with_same_pid(struct agent *a)
{
	pid_t want = a->pid;
	struct agent *n;

	agent_stop(a);
	n = agent_start_as(&env, false, want);
	cr_assert_not_null(n, "pid %d: %s", (int)want, strerror(errno));
	return n;
}

/* guarantees: lsm-pid-reuse-ns-identity */
Test(pid_reuse_lsm, reused_bridge_pid_is_denied_by_the_lsm_tier)
{
	struct agent *vmm, *bridge;
	struct eg_proc_id old;
	char path[256];
	__u64 deny0;
	int rc;

	eg_test_require_lsm();
	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, false);
	cr_assert_geq(agent_listen_unix(vmm, path), 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);
	rc = agent_connect_unix(bridge, path);
	cr_assert_geq(rc, 0, "the registered bridge: %s", strerror(-rc));
	old = bridge->id;
	deny0 = lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE);

	bridge = agent_restart_with_same_pid(bridge);
	assert_start_mismatch(&old, &bridge->id);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "same pid, new process: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 1);
}
