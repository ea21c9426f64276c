// SPDX-License-Identifier: Apache-2.0
/* The loader killed under load: `execgate load` runs again and again and is
 * SIGKILLed at random points while a stranger and the registered bridge
 * hammer a registered VSOCK port and a registered Unix socket. The stranger
 * must never get in, the bridge must never be turned away, and afterwards
 * the same pinned links still enforce, with no leftover pins. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>
#include <criterion/criterion.h>
#include "loader/tiers/lsm_tier.h"
#include "loader/maps/pins.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_loader, .fini = fini);

static const __u8 sandbox_k[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x03, 7};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The VMM stand-in: listens on path and on VSOCK port, accepts and closes
 * until killed. */
static pid_t acceptor_start(const char *path, unsigned port, int ready_fd)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		struct sockaddr_vm svm = {
		    .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port};
		struct pollfd pfd[2];
		int u = socket(AF_UNIX, SOCK_STREAM, 0), v = socket(AF_VSOCK, SOCK_STREAM, 0);

		memcpy(sun.sun_path, path, strnlen(path, sizeof(sun.sun_path) - 1));
		unlink(path);
		if (u < 0 || v < 0 || bind(u, (struct sockaddr *)&sun, sizeof(sun)) ||
		    listen(u, 1024) || bind(v, (struct sockaddr *)&svm, sizeof(svm)) ||
		    listen(v, 1024))
			_exit(1);
		if (write(ready_fd, "r", 1) != 1)
			_exit(1);
		pfd[0] = (struct pollfd){.fd = u, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = v, .events = POLLIN};
		for (;;) {
			if (poll(pfd, 2, -1) < 0)
				continue;
			for (int i = 0; i < 2; i++)
				if (pfd[i].revents & POLLIN) {
					int c = accept(pfd[i].fd, NULL, NULL);

					if (c >= 0)
						close(c);
				}
		}
	}
	return pid;
}

struct loop_result {
	unsigned long ok, eperm, other;
	int other_errno;
};

struct loop {
	pid_t pid;
	int go, res;
};

/* Connectors run in the scratch cgroup, so that where the cgroup tier
 * exists its (re-loaded) connect_unix program sees them too. */
static void join_cgroup(pid_t pid)
{
	char procs[300], num[32];
	int fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", env.cgroup);
	snprintf(num, sizeof(num), "%d\n", (int)pid);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", procs, strerror(errno));
	cr_assert_eq(write(fd, num, strlen(num)), (ssize_t)strlen(num));
	close(fd);
}

/* A connector: once told to go, alternates VSOCK 1:port and Unix path
 * connects for `seconds`, then reports. */
static void loop_start(struct loop *l, const char *path, unsigned port, double seconds)
{
	int go[2], res[2];

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(res), 0);
	l->pid = fork();
	cr_assert_geq(l->pid, 0);
	if (l->pid == 0) {
		struct loop_result r = {0};
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		struct sockaddr_vm svm = {.svm_family = AF_VSOCK, .svm_cid = 1, .svm_port = port};
		char c;
		double end;

		close(go[1]);
		close(res[0]);
		memcpy(sun.sun_path, path, strnlen(path, sizeof(sun.sun_path) - 1));
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		end = mono() + seconds;
		for (unsigned long i = 0; mono() < end; i++) {
			bool vs = i & 1;
			int fd = socket(vs ? AF_VSOCK : AF_UNIX, SOCK_STREAM, 0), rc;

			if (fd < 0)
				_exit(2);
			rc = vs ? connect(fd, (struct sockaddr *)&svm, sizeof(svm))
				: connect(fd, (struct sockaddr *)&sun, sizeof(sun));
			if (!rc)
				r.ok++;
			else if (errno == EPERM)
				r.eperm++;
			else {
				r.other++;
				r.other_errno = errno;
			}
			close(fd);
		}
		if (write(res[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	l->go = go[1];
	l->res = res[0];
	join_cgroup(l->pid);
}

static struct loop_result loop_wait(struct loop *l)
{
	struct loop_result r;

	cr_assert_eq(read(l->res, &r, sizeof(r)), (ssize_t)sizeof(r), "connector %d died",
		     (int)l->pid);
	waitpid(l->pid, NULL, 0);
	close(l->go);
	close(l->res);
	return r;
}

static pid_t loader_spawn(void)
{
	const char *bin = getenv("EXECGATE_BIN");
	pid_t pid;

	cr_assert_not_null(bin, "EXECGATE_BIN must name the execgate binary");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl(bin, "execgate", "load", "--pin-dir", env.pin_dir, "--state-dir",
		      env.state_dir, "--cgroup", env.cgroup, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void lsm_link_ids(unsigned ids[EG_LSM_PROG__COUNT])
{
	struct eg_tier_ctx ctx = {.pin_dir = env.pin_dir, .cgroup_path = env.cgroup};
	struct eg_tier_status st;

	cr_assert_eq(eg_tier_lsm.status(&ctx, &st), 0);
	cr_assert(st.loaded, "lsm tier not loaded: %s", st.detail);
	cr_assert_eq(st.nprogs, EG_LSM_PROG__COUNT);
	for (size_t i = 0; i < st.nprogs; i++)
		ids[i] = st.progs[i].link_id;
}

/* guarantees: lsm-survives-loader-exit, unix-path-machine-wide@lsm */
Test(lsm_loader, killed_loader_keeps_enforcing,
     .description = "SIGKILLed loaders under connect load leave no gap and no stray pins",
     .timeout = 120)
{
	struct lsm_install in = {.generation = 7, .activation = 1};
	struct eg_install_result res;
	struct loop stranger, bridge;
	struct loop_result rs, rb;
	unsigned before[EG_LSM_PROG__COUNT], after[EG_LSM_PROG__COUNT];
	char path[256], err[512], pin[EG_PIN_PATH_MAX], c;
	unsigned port;
	int ready[2], status, kills = 0;
	pid_t vmm;

	lsm_env_init(&env);
	eg_test_require_vm_vsock();
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	port = lsm_env_vsock_port(0);
	cr_assert_eq(pipe(ready), 0);
	vmm = acceptor_start(path, port, ready[1]);
	cr_assert_eq(read(ready[0], &c, 1), 1, "acceptor did not start");

	loop_start(&stranger, path, port, 6.0);
	loop_start(&bridge, path, port, 6.0);
	memcpy(in.sandbox, sandbox_k, EG_ID_BYTES);
	in.bridge = bridge.pid;
	in.vmm = vmm;
	in.vmm_socket = path;
	in.vsock_port = port;
	cr_assert_eq(lsm_env_install(&env, &in, &res, err, sizeof(err)), 0, "install: %s", err);
	lsm_link_ids(before);

	cr_assert_eq(write(stranger.go, "g", 1), 1);
	cr_assert_eq(write(bridge.go, "g", 1), 1);
	srand((unsigned)getpid());
	for (double end = mono() + 5.0; mono() < end;) {
		pid_t loader = loader_spawn();

		usleep(20000 + rand() % 400000);
		if (kill(loader, SIGKILL) == 0)
			kills++;
		cr_assert_eq(waitpid(loader, &status, 0), loader);
	}
	rs = loop_wait(&stranger);
	rb = loop_wait(&bridge);
	kill(vmm, SIGKILL);
	waitpid(vmm, NULL, 0);

	cr_log_info("%d loaders killed; stranger denied %lu times, bridge admitted %lu times",
		    kills, rs.eperm, rb.ok);
	cr_assert_gt(kills, 3, "loaders killed: %d", kills);
	cr_assert_gt(rs.eperm, 100, "the stranger tried (%lu)", rs.eperm);
	cr_assert_eq(rs.ok, 0, "the stranger got in %lu times", rs.ok);
	cr_assert_eq(rs.other, 0, "stranger: errno %d (%lu times)", rs.other_errno, rs.other);
	cr_assert_gt(rb.ok, 100, "the bridge connected (%lu)", rb.ok);
	cr_assert_eq(rb.eperm + rb.other, 0, "the bridge was refused %lu times (errno %d)",
		     rb.eperm + rb.other, rb.other_errno);

	/* A loader that completes adopts everything: same links, no stray
	 * half-replaced pins. */
	{
		pid_t loader = loader_spawn();

		cr_assert_eq(waitpid(loader, &status, 0), loader);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "a complete load after the kills: status %d", status);
	}
	lsm_link_ids(after);
	for (int i = 0; i < EG_LSM_PROG__COUNT; i++) {
		cr_assert_eq(after[i], before[i], "%s: link %u replaced by %u",
			     eg_lsm_link_pin_name(i), before[i], after[i]);
		cr_assert_eq(
		    eg_link_pin_path(pin, sizeof(pin) - 16, env.pin_dir, eg_lsm_link_pin_name(i)),
		    0);
		strcat(pin, "_replacing");
		cr_assert_neq(access(pin, F_OK), 0, "stray pin %s", pin);
	}
}
