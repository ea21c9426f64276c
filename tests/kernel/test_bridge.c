// SPDX-License-Identifier: Apache-2.0
/* Verified connections (include/execgate/connect.h) and execgate-bridge on
 * the host kernel: a stand-in Firecracker listener speaking the hybrid
 * VSOCK handshake, impostors that bound the VMM path, a bridge that exec()ed
 * another binary, malformed replies, dropped connections, and the bridge
 * binary forwarding for an admitted client until its sandbox is retired.
 * AF_VSOCK: only the refusals that never make a socket (no host VSOCK
 * address is ever connected to here). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/vm_sockets.h>
#include <criterion/criterion.h>
#include "execgate/admin.h"
#include "execgate/connect.h"
#include "execgate/execgate.h"
#include "harness.h"
#include "loader/tiers/cgroup.h"
#include "lib/connect_int.h" /* eg_cn_peer_cred: the pre-6.5 path */
#include "not_offered.h"
#include "test_lsm_common.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000b9"
#define OTHER	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000ba"
#define WORKER	 "a0000000-0000-4000-8000-00000000000b"
#define GREETING "guest says hi\n"
#define ASSIGNED "OK 1073741824\n" /* not the port asked for, as Firecracker */

TestSuite(bridge, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

/* kh_path() returns a static buffer: copy each path. */
#define PATHS                                                                                      \
	char bsock[128], vsock[128];                                                               \
	snprintf(bsock, sizeof(bsock), "%s", kh_path("bridge.sock"));                              \
	snprintf(vsock, sizeof(vsock), "%s", kh_path("v.sock"))

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The voluntary context switches of a process's threads other than its
 * main one, all told: how often the bridge's stream threads went to sleep.
 * An idle stream's thread sleeps only in poll(), for the time left to its
 * next lease check (user/bridge/stream.c, forward()). */
static long stream_thread_switches(pid_t pid)
{
	char path[96], line[256];
	struct dirent *e;
	long sum = 0, v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d, "%s: %s", path, strerror(errno));
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/status", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* a thread that ended meanwhile */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
				sum += v;
		fclose(f);
	}
	closedir(d);
	return sum;
}

static struct eg_worker *open_worker(void)
{
	struct eg_worker_config cfg = {.pin_dir = kh.pin_dir, .state_dir = kh.state_dir};
	struct eg_worker *w = NULL;
	char err[EG_ERR_MAX];

	cr_assert_eq(eg_worker_open(&cfg, &w, err, sizeof(err)), 0, "worker open: %s", err);
	return w;
}

/* --- stand-in listeners ------------------------------------------------------ */

/* What a stand-in listener saw on one connection, reported when it ended. */
struct seen {
	char line[64];		  /* Firecracker: the CONNECT line read */
	unsigned long long bytes; /* bytes received (after the line) */
};

enum standin { FIRECRACKER, IMPOSTOR };

struct listener {
	pid_t pid;
	int report; /* read end: one struct seen per ended connection */
	int sync;   /* write end: a byte asks for the count of connections */
	int count;  /* read end: the answer, an unsigned */
};

static int bind_listen(const char *path, bool cloexec)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | (cloexec ? SOCK_CLOEXEC : 0), 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 64))
		return -1;
	return fd;
}

/* FIRECRACKER: reads the CONNECT line, answers replies[i] for the i-th
 * connection (the last one again after), then sends GREETING and echoes
 * what it receives. An empty reply closes without answering; a reply
 * without '\n' is sent and the connection closed. IMPOSTOR: sends nothing
 * and counts every byte it receives. */
static struct listener listener_start(const char *path, enum standin kind,
				      const char *const *replies, size_t n)
{
	struct listener l;
	int rep[2], ready[2], sync[2], count[2];
	char c = 0;

	cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(sync, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(count, O_CLOEXEC), 0);
	l.pid = fork();
	cr_assert_geq(l.pid, 0, "fork");
	if (l.pid == 0) {
		unsigned accepted = 0;
		int lfd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGCHLD, SIG_IGN); /* connection processes reap themselves */
		lfd = bind_listen(path, true);
		if (lfd < 0 || fcntl(lfd, F_SETFL, O_NONBLOCK))
			_exit(92);
		if (write(ready[1], &c, 1) != 1)
			_exit(93);
		for (size_t i = 0;;) {
			struct pollfd p[2] = {{.fd = lfd, .events = POLLIN},
					      {.fd = sync[0], .events = POLLIN}};
			struct seen s = {{0}, 0};
			const char *reply = n ? replies[i < n ? i : n - 1] : ASSIGNED;
			char buf[4096];
			size_t got = 0;
			ssize_t r;
			int fd;

			if (poll(p, 2, -1) < 0)
				continue;
			fd = accept4(lfd, NULL, NULL, 0);
			if (fd < 0 && errno == EAGAIN && (p[1].revents & POLLIN)) {
				/* The backlog is empty: every connect() that
				 * returned before the question was asked has
				 * been accepted and counted (listener_count). */
				if (read(sync[0], &c, 1) != 1 ||
				    write(count[1], &accepted, sizeof(accepted)) !=
					sizeof(accepted))
					_exit(96);
				continue;
			}
			if (fd < 0)
				continue;
			accepted++;
			i++;
			/* Each connection in its own process, so that streams run
			 * side by side; the listener (the identity checked) stays. */
			if (fork() != 0) {
				close(fd);
				continue;
			}
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(lfd);
			if (kind == FIRECRACKER) {
				while (got + 1 < sizeof(s.line) &&
				       recv(fd, s.line + got, 1, 0) == 1)
					if (s.line[got++] == '\n')
						break;
				if (!got || s.line[got - 1] != '\n') {
					/* closed before a whole CONNECT line */
					if (write(rep[1], &s, sizeof(s)) != sizeof(s))
						_exit(95);
					_exit(0);
				}
				if (*reply && send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
					_exit(94);
				if (!strchr(reply, '\n')) {
					if (write(rep[1], &s, sizeof(s)) != sizeof(s))
						_exit(95);
					_exit(0);
				}
				if (send(fd, GREETING, strlen(GREETING), MSG_NOSIGNAL) < 0)
					_exit(94);
			}
			while ((r = recv(fd, buf, sizeof(buf), 0)) > 0) {
				s.bytes += (unsigned long long)r;
				if (kind == FIRECRACKER &&
				    send(fd, buf, (size_t)r, MSG_NOSIGNAL) < 0)
					break;
			}
			close(fd);
			if (write(rep[1], &s, sizeof(s)) != sizeof(s))
				_exit(95);
			_exit(0);
		}
	}
	close(rep[1]);
	close(ready[1]);
	close(sync[0]);
	close(count[1]);
	kh_track(l.pid);
	cr_assert_eq(read(ready[0], &c, 1), 1, "listener on %s did not start", path);
	close(ready[0]);
	l.report = rep[0];
	l.sync = sync[1];
	l.count = count[0];
	return l;
}

/* How many connections the listener has accepted, all told. A Unix stream
 * connect() that returned has queued its connection on the listener's
 * backlog, and the listener answers only once that backlog is empty: so a
 * 0 here proves that no connect() made before this call reached it, with
 * no wait that merely hopes it would have arrived by then. */
static unsigned listener_count(struct listener *l)
{
	struct pollfd p = {.fd = l->count, .events = POLLIN};
	unsigned n = 0;
	char c = 0;

	cr_assert_eq(write(l->sync, &c, 1), 1, "asking the listener for its count");
	cr_assert_eq(poll(&p, 1, 10000), 1, "the listener did not answer within 10 s");
	cr_assert_eq(read(l->count, &n, sizeof(n)), (ssize_t)sizeof(n));
	return n;
}

/* The next connection report, waiting up to timeout_ms. */
static bool listener_seen(struct listener *l, struct seen *s, int timeout_ms)
{
	struct pollfd p = {.fd = l->report, .events = POLLIN};

	if (poll(&p, 1, timeout_ms) != 1)
		return false;
	return read(l->report, s, sizeof(*s)) == sizeof(*s);
}

static void listener_kill(struct listener *l)
{
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == l->pid)
			kh.pids[i] = 0;
}

/* --- records ------------------------------------------------------------------ */

static void install(struct eg_worker *w, pid_t bridge, pid_t vmm, const char *bsock,
		    const char *vsock_path, unsigned gen)
{
	struct eg_install_spec s;
	struct eg_install_report rep;
	char err[EG_ERR_MAX];

	memset(&s, 0, sizeof(s));
	cr_assert_eq(eg_uuid_from_text(SANDBOX, s.sandbox), 0);
	cr_assert_eq(eg_uuid_from_text(WORKER, s.worker), 0);
	s.substrate = 2;
	s.generation = gen;
	s.activation = 1;
	s.bridge_pid = bridge;
	s.vmm_pid = vmm;
	if (bsock) {
		s.bridge_sockets[0] = bsock;
		s.n_bridge_sockets = 1;
	}
	if (vsock_path) {
		s.vmm_sockets[0] = vsock_path;
		s.n_vmm_sockets = 1;
	}
	cr_assert_eq(eg_worker_install(w, &s, &rep, err, sizeof(err)), 0, "install: %s", err);
}

static struct eg_verdict_result admit(struct eg_worker *w, pid_t pid, const char *token)
{
	struct eg_subject who = {.pid = pid, .pidfd = -1};
	struct eg_admit_args a = {.token_text = token};
	struct eg_verdict_result r;
	char err[EG_ERR_MAX];

	cr_assert_eq(eg_worker_admit(w, &who, &a, &r, err, sizeof(err)), 0, "admit: %s", err);
	return r;
}

/* Admits this process for the sandbox: a client of the bridge socket. The
 * LSM tier checks a client machine-wide, not only in the scratch cgroup. */
static void admit_self(struct eg_worker *w)
{
	char tok[512];

	kh_keys(); /* after the handle was opened: it reloads */
	cr_assert_eq(eg_worker_keys_reload(w, tok, sizeof(tok)), 0, "%s", tok);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	struct eg_verdict_result r = admit(w, getpid(), tok);

	cr_assert_eq(r.d.verdict, EG_ALLOW, "admit self: %s", eg_reason_name(r.d.reason));
}

static struct eg_connect_target target(__u32 role, const char *path, bool hybrid)
{
	struct eg_connect_target t = {.role = role,
				      .path = path,
				      .hybrid_vsock = hybrid,
				      .vsock_port = 52,
				      .timeout_ms = 3000};

	cr_assert_eq(eg_uuid_from_text(SANDBOX, t.sandbox), 0);
	return t;
}

static void recv_exact(struct eg_conn *c, const char *want)
{
	char buf[256], err[EG_ERR_MAX];
	size_t got = 0, n = strlen(want);

	while (got < n) {
		ssize_t r = eg_conn_recv(c, buf + got, n - got, err, sizeof(err));

		cr_assert_gt(r, 0, "recv after %zu bytes: %zd: %s", got, r, err);
		got += (size_t)r;
	}
	cr_assert_arr_eq(buf, want, n, "received '%.*s', want '%s'", (int)n, buf, want);
}

/* guarantees: none */
Test(bridge, verified_connects_on_both_hops_and_the_assigned_port)
{
	PATHS;
	/* This process is the sandbox's bridge (the LSM tier lets only the
	 * bridge reach a VMM socket) and listens on the bridge socket. */
	int blfd = bind_listen(bsock, true);
	pid_t bridge = getpid();
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_VMM, vsock, true);
	const struct eg_conn_info *info;
	struct eg_proc_id want_vmm = kh_proc_id(fc.pid), want_bridge = kh_proc_id(bridge);
	struct eg_conn *c = NULL;
	struct seen s;
	char err[EG_ERR_MAX];
	int rc;

	install(w, bridge, fc.pid, bsock, vsock, 8);

	/* The bridge's hop: the VMM socket's listener is the record's VMM. */
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "connect VMM: %s", err);
	info = eg_conn_info(c);
	cr_assert_eq(info->assigned_port, 1073741824u, "the port Firecracker assigned");
	cr_assert(info->via_peerpidfd, "SO_PEERPIDFD on this kernel");
	cr_assert_arr_eq(&info->peer, &want_vmm, sizeof(want_vmm));
	cr_assert_eq(info->record.epoch, 1);
	snprintf(err, sizeof(err), "connect %s", vsock);
	cr_assert_str_eq(eg_conn_name(c), err);
	recv_exact(c, GREETING);
	cr_assert_eq(eg_conn_send(c, "ping\n", 5, err, sizeof(err)), 5, "%s", err);
	recv_exact(c, "ping\n");
	cr_assert_eq(eg_conn_lease_check(w, c, err, sizeof(err)), 0, "%s", err);
	eg_conn_close(c);
	cr_assert(listener_seen(&fc, &s, 2000), "the stand-in saw the connection end");
	cr_assert_str_eq(s.line, "CONNECT 52\n");
	cr_assert_eq(s.bytes, 5);

	/* The manager's hop: the bridge socket's listener is the record's bridge. */
	cr_assert_geq(blfd, 0, "listen on %s", bsock);
	admit_self(w);
	t = target(EG_ROLE_BRIDGE, bsock, false);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "connect bridge: %s", err);
	cr_assert_arr_eq(&eg_conn_info(c)->peer, &want_bridge, sizeof(want_bridge));
	cr_assert_eq(eg_conn_info(c)->assigned_port, 0, "no handshake on the bridge hop");
	/* SO_PEERCRED + pidfd_open (kernels before 6.5) finds the same process. */
	{
		struct eg_proc_id via_cred;
		int pidfd = -1;

		rc = eg_cn_peer_cred(eg_conn_fd(c), "peer", &pidfd, &via_cred, err, sizeof(err));
		cr_assert_eq(rc, 0, "%s", err);
		cr_assert_arr_eq(&via_cred, &want_bridge, sizeof(want_bridge));
		close(pidfd);
	}
	eg_conn_close(c);
	{
		int a = accept4(blfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (a >= 0)
			close(a);
	}

	/* What verification costs: plain connect() vs eg_connect_unix on the
	 * same socket (both accepted and closed each round). */
	{
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		const int n = 300;
		long long t0, t1, t2;

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s", bsock);
		t0 = now_ms();
		for (int i = 0; i < n; i++) {
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			cr_assert_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
			close(fd);
			close(accept4(blfd, NULL, NULL, SOCK_CLOEXEC));
		}
		t1 = now_ms();
		for (int i = 0; i < n; i++) {
			cr_assert_eq(eg_connect_unix(w, &t, &c, err, sizeof(err)), 0, "%s", err);
			eg_conn_close(c);
			close(accept4(blfd, NULL, NULL, SOCK_CLOEXEC));
		}
		t2 = now_ms();
		cr_log_info("connect: plain %.1f us, verified (SO_PEERPIDFD, /proc, record "
			    "twice) %.1f us per connection",
			    (double)(t1 - t0) * 1000 / n, (double)(t2 - t1) * 1000 / n);
	}

	/* Roles are not interchangeable: the bridge socket is no VMM socket. */
	t = target(EG_ROLE_VMM, bsock, true);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "the bridge socket of sandbox " SANDBOX ", not its VMM socket"), "%s",
		  err);
	cr_assert_null(c);
	close(blfd);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, impostor_on_the_vmm_path_is_refused_before_anything_is_sent)
{
	PATHS;
	pid_t bridge = getpid(); /* the bridge is the process that connects */
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0), imp;
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_VMM, vsock, true);
	struct eg_conn *c = NULL;
	struct seen s;
	char err[EG_ERR_MAX], want[512], id[96];
	struct eg_proc_id vmm_id = kh_proc_id(fc.pid), imp_id;
	int rc;

	install(w, bridge, fc.pid, NULL, vsock, 8);
	/* Another process unlinks the path and binds it again. */
	imp = listener_start(vsock, IMPOSTOR, NULL, 0);
	imp_id = kh_proc_id(imp.pid);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert_null(c);
	snprintf(id, sizeof(id), "pid %u (start %llu, exe %u:%u/%llu)", vmm_id.tgid,
		 (unsigned long long)vmm_id.start_boottime_ns, vmm_id.exe_dev >> 20,
		 vmm_id.exe_dev & 0xfffff, (unsigned long long)vmm_id.exe_ino);
	snprintf(want, sizeof(want),
		 "connect %s: listener is pid %u (start %llu, exe %u:%u/%llu), expected the VMM "
		 "of sandbox " SANDBOX " (%s): another process",
		 vsock, imp_id.tgid, (unsigned long long)imp_id.start_boottime_ns,
		 imp_id.exe_dev >> 20, imp_id.exe_dev & 0xfffff, (unsigned long long)imp_id.exe_ino,
		 id);
	cr_assert_str_eq(err, want);
	cr_assert(listener_seen(&imp, &s, 2000), "the impostor was connected to and closed");
	cr_assert_eq(s.bytes, 0, "the impostor received %llu bytes", s.bytes);
	cr_assert_eq(listener_count(&fc), 0, "the real VMM was connected to");
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, replaced_bridge_executable_and_other_process_are_refused)
{
	PATHS;
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_BRIDGE, bsock, false);
	struct eg_conn *c = NULL;
	char err[EG_ERR_MAX], c1;
	int go[2], execd[2], rc;
	pid_t pid, other;

	/* A bridge whose listening socket survives exec() into another
	 * binary: same pid, same start time, another executable. */
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe2(execd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (bind_listen(bsock, false) < 0)
			_exit(92);
		if (write(execd[1], "l", 1) != 1) /* listening */
			_exit(93);
		if (read(go[0], &c1, 1) != 1)
			_exit(93);
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(94);
	}
	kh_track(pid);
	close(go[0]);
	close(execd[1]);
	cr_assert_eq(read(execd[0], &c1, 1), 1, "the bridge stand-in did not listen");
	install(w, pid, 0, bsock, NULL, 8);
	admit_self(w); /* a client of the bridge socket, on every tier */
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "before exec: %s", err);
	eg_conn_close(c);
	cr_assert_eq(write(go[1], "x", 1), 1);
	/* The exec closed execd's write end (CLOEXEC) in the child. */
	cr_assert_eq(read(execd[0], &c1, 1), 0);
	usleep(50 * 1000); /* past exec's point of no return: the new mm is in */
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "after exec: rc %d: %s", rc, err);
	cr_assert(strstr(err, ", expected the bridge of sandbox " SANDBOX " (pid "), "%s", err);
	cr_assert(strstr(err, "): replaced executable"), "%s", err);

	/* Another process on the path. */
	other = kh_listener_start(bsock);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "): another process"), "%s", err);
	(void)other;

	/* A path that is no endpoint at all, and a sandbox with no record. */
	t = target(EG_ROLE_BRIDGE, kh_path("nothing.sock"), false);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "not an installed endpoint (expected the bridge socket of sandbox"),
		  "%s", err);
	cr_assert_eq(eg_uuid_from_text(OTHER, t.sandbox), 0);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -ENOENT, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "sandbox " OTHER ": no runtime record"), "%s", err);
	t.path = "relative.sock";
	cr_assert_eq(eg_connect_unix(w, &t, &c, err, sizeof(err)), -EINVAL, "%s", err);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, malformed_handshake_reply_is_an_error_naming_it)
{
	PATHS;
	static const char *const replies[] = {"ERR no listener\r\n", "OK 52", "", "OK 7\n"};
	pid_t bridge = getpid(); /* the bridge is the process that connects */
	struct listener fc = listener_start(vsock, FIRECRACKER, replies, 4);
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_VMM, vsock, true);
	struct eg_conn *c = NULL;
	char err[EG_ERR_MAX], want[512];
	int rc;

	install(w, bridge, fc.pid, NULL, vsock, 8);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, err);
	snprintf(want, sizeof(want),
		 "connect %s: CONNECT 52: hybrid vsock handshake: unexpected reply \"ERR no "
		 "listener\\r\\n\" (expected \"OK <port>\\n\")",
		 vsock);
	cr_assert_str_eq(err, want);
	cr_assert_null(c);

	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, err);
	snprintf(want, sizeof(want),
		 "connect %s: CONNECT 52: hybrid vsock handshake: reply \"OK 52\" has no end of "
		 "line within 32 bytes (expected \"OK <port>\\n\") (the VMM closed the connection)",
		 vsock);
	cr_assert_str_eq(err, want);

	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -EPROTO, "rc %d: %s", rc, err);
	cr_assert(strstr(err, "hybrid vsock handshake: no reply"), "%s", err);

	/* Every connection passes the handshake anew; "OK 7" is fine. */
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(eg_conn_info(c)->assigned_port, 7);
	recv_exact(c, GREETING);
	eg_conn_close(c);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, dropped_connection_is_reported_not_reconnected)
{
	PATHS;
	pid_t bridge = getpid(); /* the bridge is the process that connects */
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0), fc2;
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_VMM, vsock, true);
	struct eg_conn *c = NULL, *c2 = NULL;
	struct seen s;
	char err[EG_ERR_MAX], buf[16], want[256];
	int rc;

	install(w, bridge, fc.pid, NULL, vsock, 8);
	cr_assert_eq(eg_connect_unix(w, &t, &c, err, sizeof(err)), 0, "%s", err);
	recv_exact(c, GREETING);
	listener_kill(&fc);
	/* A new VMM takes the path: nothing may quietly connect to it. */
	fc2 = listener_start(vsock, FIRECRACKER, NULL, 0);

	cr_assert_eq(eg_conn_recv(c, buf, sizeof(buf), err, sizeof(err)), -ECONNRESET, "%s", err);
	snprintf(want, sizeof(want),
		 "connect %s: connection dropped (closed by the peer); not reconnecting", vsock);
	cr_assert_str_eq(err, want);
	cr_assert_eq(eg_conn_send(c, "x", 1, err, sizeof(err)), -ENOTCONN);
	cr_assert(strstr(err, "the connection was dropped; not reconnecting"), "%s", err);
	cr_assert_eq(eg_conn_recv(c, buf, sizeof(buf), err, sizeof(err)), -ENOTCONN);
	cr_assert_eq(eg_conn_lease_check(w, c, err, sizeof(err)), -ESRCH, "%s", err);
	cr_assert(strstr(err, "has exited"), "%s", err);
	cr_assert_eq(listener_count(&fc2), 0, "a connection reached the new listener");
	eg_conn_close(c);

	/* An explicit new connection passes every check again: the record
	 * still names the old VMM, so the new one is refused... */
	rc = eg_connect_unix(w, &t, &c2, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "rc %d: %s", rc, err);
	cr_assert(listener_seen(&fc2, &s, 2000));
	cr_assert_str_eq(s.line, "", "refused before CONNECT was written");
	cr_assert_eq(s.bytes, 0);
	/* ...until it is installed. */
	install(w, bridge, fc2.pid, NULL, vsock, 9);
	cr_assert_eq(eg_connect_unix(w, &t, &c2, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_conn_info(c2)->record.epoch, 2);
	eg_conn_close(c2);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, lease_follows_the_record_and_vsock_refusals_make_no_socket)
{
	PATHS;
	pid_t bridge = getpid(); /* the bridge is the process that connects */
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct eg_worker *w = open_worker();
	struct eg_connect_target t = target(EG_ROLE_VMM, vsock, true);
	struct eg_runtime_record after;
	__u8 sb[EG_ID_BYTES];
	struct eg_conn *c = NULL, *v = NULL;
	char err[EG_ERR_MAX];
	int rc;

	install(w, bridge, fc.pid, NULL, vsock, 8);
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sb), 0);
	cr_assert_eq(eg_connect_unix(w, &t, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_conn_lease_check(w, c, err, sizeof(err)), 0, "%s", err);

	/* Never a guest: refused before any socket exists. The host (2) is
	 * refused even though nothing else would stop it here. */
	rc = eg_connect_vsock(w, sb, 2, 52, 1000, &v, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL, "%s", err);
	cr_assert_str_eq(err, "connect vsock 2:52: CID 2 is not a guest (0, 2 and 4294967295 never "
			      "are)");
	cr_assert_eq(eg_connect_vsock(w, sb, 0, 52, 1000, &v, err, sizeof(err)), -EINVAL);
	cr_assert_eq(eg_connect_vsock(w, sb, UINT_MAX, 52, 1000, &v, err, sizeof(err)), -EINVAL);
	/* Not an address of the record: refused without connecting. */
	rc = eg_connect_vsock(w, sb, 3, 52, 1000, &v, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "%s", err);
	cr_assert(strstr(err, "connect vsock 3:52: not a VSOCK endpoint of sandbox " SANDBOX), "%s",
		  err);
	cr_assert_null(v);

	/* Retire: the lease is revoked, and new connections are refused. */
	cr_assert_eq(eg_worker_retire(w, sb, &after, err, sizeof(err)), 0, "%s", err);
	rc = eg_conn_lease_check(w, c, err, sizeof(err));
	cr_assert_eq(rc, -ESTALE, "%s", err);
	cr_assert(strstr(err, "sandbox " SANDBOX ": retired (epoch 2)"), "%s", err);
	eg_conn_close(c);
	rc = eg_connect_unix(w, &t, &c, err, sizeof(err));
	cr_assert_eq(rc, -ESTALE, "%s", err);
	rc = eg_connect_vsock(w, sb, 3, 52, 1000, &v, err, sizeof(err));
	cr_assert_eq(rc, -ESTALE, "%s", err);
	eg_worker_close(w);
}

/* An AF_VSOCK echo listener on CID 1 (vsock_loopback), VM only. */
static pid_t vsock_echo_start(unsigned port)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sockaddr_vm svm = {
		    .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port};
		int lfd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;
		char buf[256];
		ssize_t n;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&svm, sizeof(svm)) || listen(lfd, 8))
			_exit(92);
		if (write(ready[1], &c, 1) != 1)
			_exit(93);
		while ((fd = accept(lfd, NULL, NULL)) >= 0) {
			while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
				if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
					break;
			close(fd);
		}
		_exit(0);
	}
	close(ready[1]);
	kh_track(pid);
	cr_assert_eq(read(ready[0], &c, 1), 1, "vsock listener on port %u did not start", port);
	close(ready[0]);
	return pid;
}

/* Its own suite: the VSOCK check comes before kh_setup, because Criterion
 * runs no .fini after a skip, and a skip after setup left the scratch pin
 * dir and cgroup behind on every host run. */
TestSuite(bridge_vsock, .fini = kh_teardown, .timeout = 120);

/* guarantees: none */
Test(bridge_vsock, vsock_connect_to_the_records_cid_inside_the_vm)
{
	unsigned port;
	pid_t vmm;
	struct eg_worker *w;
	struct eg_install_spec sp;
	struct eg_install_report rep;
	struct eg_conn *v = NULL;
	__u8 sb[EG_ID_BYTES];
	char err[EG_ERR_MAX], buf[8];
	int rc;

	/* Real VSOCK connections: CID 1 through vsock_loopback, matrix VM
	 * only (never a VSOCK socket on the host). */
	eg_test_require_vm_vsock();
	kh_setup();
	port = 30000 + (unsigned)getpid() % 20000;
	vmm = vsock_echo_start(port);
	w = open_worker();
	memset(&sp, 0, sizeof(sp));
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sp.sandbox), 0);
	cr_assert_eq(eg_uuid_from_text(WORKER, sp.worker), 0);
	sp.substrate = 2;
	sp.generation = 8;
	sp.activation = 1;
	sp.bridge_pid = getpid(); /* this process connects: the LSM tier admits only the bridge */
	sp.vmm_pid = vmm;
	sp.vsock[0].cid = VMADDR_CID_LOCAL;
	sp.vsock[0].port = port;
	sp.n_vsock = 1;
	cr_assert_eq(eg_worker_install(w, &sp, &rep, err, sizeof(err)), 0, "install: %s", err);
	memcpy(sb, sp.sandbox, EG_ID_BYTES);

	rc = eg_connect_vsock(w, sb, VMADDR_CID_LOCAL, port, 3000, &v, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(eg_conn_info(v)->cid, VMADDR_CID_LOCAL);
	cr_assert_eq(eg_conn_send(v, "ping", 4, err, sizeof(err)), 4, "%s", err);
	cr_assert_eq(eg_conn_recv(v, buf, 4, err, sizeof(err)), 4, "%s", err);
	cr_assert_arr_eq(buf, "ping", 4);
	eg_conn_close(v);
	/* The same CID with a port the record does not have: no socket. */
	rc = eg_connect_vsock(w, sb, VMADDR_CID_LOCAL, port + 1, 3000, &v, err, sizeof(err));
	cr_assert_eq(rc, -EPERM, "%s", err);
	eg_worker_close(w);
}

/* --- execgate-bridge ------------------------------------------------------------ */

static const char *bridge_bin(void)
{
	static char path[PATH_MAX];
	const char *eg = getenv("EXECGATE_BIN");
	const char *slash = eg ? strrchr(eg, '/') : NULL;

	cr_assert(slash, "EXECGATE_BIN must name the build's execgate (make test-kernel sets it)");
	snprintf(path, sizeof(path), "%.*s/execgate-bridge", (int)(slash - eg), eg);
	cr_assert_eq(access(path, X_OK), 0, "%s: %s", path, strerror(errno));
	return path;
}

static void join_cgroup(void)
{
	if (eg_cgroup_join(kh.cgroup))
		_exit(90);
}

/* execgate-bridge in the scratch cgroup (so the kernel checks its connects
 * to the VMM socket too), stderr into <dir>/bridge.log. */
static pid_t bridge_start(const char *bsock, const char *vsock)
{
	const char *bin = bridge_bin(), *log = kh_path("bridge.log");
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		join_cgroup();
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(91);
		execl(bin, bin, "--sandbox", SANDBOX, "--listen", bsock, "--vmm-socket", vsock,
		      "--vsock-port", "52", "--pin-dir", kh.pin_dir, "--state-dir", kh.state_dir,
		      (char *)NULL);
		_exit(92);
	}
	kh_track(pid);
	return pid;
}

static void read_log(char *buf, size_t size)
{
	int fd = open(kh_path("bridge.log"), O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : 0;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

static bool wait_log(const char *needle, int timeout_ms, char *buf, size_t size)
{
	long long end = now_ms() + timeout_ms;

	do {
		read_log(buf, size);
		if (strstr(buf, needle))
			return true;
		usleep(5000);
	} while (now_ms() < end);
	return false;
}

/* wait_log for whichever of the NULL-terminated needles comes first. */
static bool wait_log_any(const char *const *needles, int timeout_ms, char *buf, size_t size)
{
	long long end = now_ms() + timeout_ms;

	do {
		read_log(buf, size);
		for (const char *const *n = needles; *n; n++)
			if (strstr(buf, *n))
				return true;
		usleep(5000);
	} while (now_ms() < end);
	return false;
}

/* A client in the scratch cgroup connects (so the kernel checks it at the
 * bridge socket) and hands the connected socket to the test over
 * SCM_RIGHTS; it stays alive, as the socket's owner, until ctl closes. */
struct client {
	pid_t pid;
	int ctl;
};

static void client_start(struct client *cl)
{
	int sv[2];
	char c;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	cl->pid = fork();
	cr_assert_geq(cl->pid, 0);
	if (cl->pid == 0) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		char cbuf[CMSG_SPACE(sizeof(int))], path[sizeof(sun.sun_path)];
		struct iovec iov = {.iov_base = &c, .iov_len = 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		join_cgroup();
		if (write(sv[1], "r", 1) != 1)
			_exit(93);
		/* One connect per path received, until the test closes ctl. */
		while ((n = read(sv[1], path, sizeof(path) - 1)) > 0) {
			char *payload;

			path[n] = '\0';
			payload = strchr(path, '\n');
			if (payload)
				*payload++ = '\0';
			snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			c = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ? (char)errno : 0;
			/* Bytes sent at once: queued before the bridge even accepts. */
			if (!c && payload &&
			    send(fd, payload, strlen(payload), MSG_NOSIGNAL) !=
				(ssize_t)strlen(payload))
				c = (char)(errno ? errno : EIO);
			m.msg_control = NULL;
			m.msg_controllen = 0;
			if (c)
				close(fd);
			else {
				m.msg_control = cbuf;
				m.msg_controllen = sizeof(cbuf);
				CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
				CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
				CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &fd, sizeof(int));
			}
			if (sendmsg(sv[1], &m, 0) != 1)
				_exit(95);
			/* The socket stays open here too: this process is its
			 * owner, the one the bridge identifies. */
		}
		_exit(0);
	}
	close(sv[1]);
	kh_track(cl->pid);
	cl->ctl = sv[0];
	cr_assert_eq(read(cl->ctl, &c, 1), 1, "client did not start");
}

/* -errno of the client's connect (or of sending payload right after it),
 * or the connected fd. */
static int client_connect_send(struct client *cl, const char *path, const char *payload)
{
	char cbuf[CMSG_SPACE(sizeof(int))], c = 0;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	int fd = -1;

	char msg[256];
	int len =
	    snprintf(msg, sizeof(msg), "%s%s%s", path, payload ? "\n" : "", payload ? payload : "");

	cr_assert_eq(write(cl->ctl, msg, (size_t)len), len);
	cr_assert_eq(recvmsg(cl->ctl, &m, 0), 1, "client reply");
	if (c)
		return -c;
	cr_assert_not_null(CMSG_FIRSTHDR(&m), "no fd passed");
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

static int client_connect(struct client *cl, const char *path)
{
	return client_connect_send(cl, path, NULL);
}

static void fd_recv_exact(int fd, const char *want)
{
	char buf[256];
	size_t got = 0, n = strlen(want);

	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		char log[8192];

		if (poll(&p, 1, 3000) != 1) {
			read_log(log, sizeof(log));
			cr_assert_fail("nothing after %zu bytes; bridge log:\n%s", got, log);
		}
		r = recv(fd, buf + got, n - got, 0);
		cr_assert_gt(r, 0, "recv after %zu bytes: %zd (%s)", got, r, strerror(errno));
		got += (size_t)r;
	}
	cr_assert_arr_eq(buf, want, n, "received '%.*s', want '%s'", (int)n, buf, want);
}

/* Waits for end of stream (0 or ECONNRESET) on fd; returns ms taken. */
static long long wait_eof(int fd, int timeout_ms)
{
	long long start = now_ms();
	char buf[64];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		cr_assert_eq(poll(&p, 1, timeout_ms), 1, "stream still open after %d ms",
			     timeout_ms);
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		/* EPIPE: the LSM tier's stream lease, where it is loaded. */
		if (r == 0 || (r < 0 && (errno == ECONNRESET || errno == EPIPE)))
			return now_ms() - start;
		cr_assert(r > 0 || errno == EAGAIN, "recv: %s", strerror(errno));
	}
}

static void bridge_stop(pid_t pid, const char *bsock)
{
	int status;

	cr_assert_eq(kill(pid, SIGTERM), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	for (size_t i = 0; i < kh.npids; i++)
		if (kh.pids[i] == pid)
			kh.pids[i] = 0;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bridge exit status 0x%x", status);
	cr_assert_neq(access(bsock, F_OK), 0, "the bridge removed its socket");
}

/* guarantees: none */
Test(bridge, bridge_forwards_for_an_admitted_client_and_cuts_streams_on_retire)
{
	PATHS;
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct eg_worker *w;
	struct eg_runtime_record after;
	struct client cl, stranger;
	struct seen s, s2;
	char log[16384], tok[512], err[EG_ERR_MAX], want[256];
	__u8 sb[EG_ID_BYTES];
	long long cut_ms;
	pid_t bridge;
	int fd, fd2, fd3;

	kh_keys();
	w = open_worker();
	bridge = bridge_start(bsock, vsock);
	cr_assert(wait_log("listening on", 5000, log, sizeof(log)), "bridge log: %s", log);
	install(w, bridge, fc.pid, bsock, vsock, 8);

	/* A client without a grant: the kernel refuses it at the bridge socket. */
	client_start(&stranger);
	cr_assert_eq(client_connect(&stranger, bsock), -EPERM);

	/* An admitted client: bytes both ways through the verified VMM hop. */
	client_start(&cl);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	cr_assert_eq(admit(w, cl.pid, tok).d.verdict, EG_ALLOW);
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "admitted client: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert_eq(send(fd, "ping\n", 5, MSG_NOSIGNAL), 5);
	fd_recv_exact(fd, "ping\n");
	snprintf(want, sizeof(want), "connection 1: verified: client pid %d ", (int)cl.pid);
	cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
	snprintf(want, sizeof(want), "VMM pid %d ", (int)fc.pid);
	cr_assert(strstr(log, want), "%s", log);
	cr_assert(strstr(log, "vsock port 52 (assigned 1073741824)"), "%s", log);

	/* A half-close passes through: the client's end of input reaches the
	 * VMM, which answers and closes; the stream ends on its own. */
	fd3 = client_connect(&cl, bsock);
	cr_assert_geq(fd3, 0, "%s", strerror(-fd3));
	fd_recv_exact(fd3, GREETING);
	cr_assert_eq(send(fd3, "abc", 3, MSG_NOSIGNAL), 3);
	cr_assert_eq(shutdown(fd3, SHUT_WR), 0);
	fd_recv_exact(fd3, "abc");
	wait_eof(fd3, 2000);
	close(fd3);
	cr_assert(listener_seen(&fc, &s, 2000));
	cr_assert_str_eq(s.line, "CONNECT 52\n");
	cr_assert_eq(s.bytes, 3);
	cr_assert(wait_log("connection 2: closed (client->vmm 3 bytes, vmm->client 17 bytes)\n",
			   2000, log, sizeof(log)),
		  "%s", log);

	/* A third stream from the same client, then retire: 1 and 3 are cut. */
	fd2 = client_connect(&cl, bsock);
	cr_assert_geq(fd2, 0, "%s", strerror(-fd2));
	fd_recv_exact(fd2, GREETING);
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sb), 0);
	cr_assert_eq(eg_worker_retire(w, sb, &after, err, sizeof(err)), 0, "%s", err);
	cut_ms = wait_eof(fd, 2000);
	wait_eof(fd2, 2000);
	cr_log_info("retire -> stream cut in %lld ms", cut_ms);
	cr_assert_lt(cut_ms, 1000, "the lease is checked every 100 ms");
	snprintf(want, sizeof(want),
		 "connection 1: revoked: connect %s: sandbox " SANDBOX ": retired (epoch 2)",
		 vsock);
	/* Three cutters race, and each leaves its own line: the bridge's lease
	 * check ("revoked"), the LSM tier's stream lease (the bridge's next send
	 * gets EPIPE), and retire's own Unix stream revocation, which shuts the
	 * client's end down so the bridge sees an orderly end of input
	 * ("closed (" with byte counts). The stream is cut either way. */
	{
		const char *one[] = {want, "connection 1: closed: Broken pipe",
				     "connection 1: closed (client->vmm 5 bytes", NULL};
		const char *three[] = {
		    "connection 3: revoked: ", "connection 3: closed: Broken pipe",
		    "connection 3: closed (client->vmm 0 bytes", NULL};

		/* Each stream's line comes when its cutter ran: wait for both
		 * (the third one's came after the first's under TCG). */
		cr_assert(wait_log_any(one, 2000, log, sizeof(log)), "%s", log);
		cr_assert(wait_log_any(three, 2000, log, sizeof(log)), "%s", log);
	}
	/* The VMM side of both streams was closed too: the ping, nothing after. */
	cr_assert(listener_seen(&fc, &s, 2000));
	cr_assert(listener_seen(&fc, &s2, 2000));
	cr_assert_eq(s.bytes + s2.bytes, 5, "%llu + %llu bytes", s.bytes, s2.bytes);
	/* I/O has stopped: a write into the cut stream fails. */
	cr_assert_lt(send(fd, "late\n", 5, MSG_NOSIGNAL), 0);
	close(fd);
	close(fd2);
	bridge_stop(bridge, bsock);
	eg_worker_close(w);
}

/* The audit twin of the retire case above: under the sandbox's audit mode
 * the bridge's lease reports the revoked lease once and keeps forwarding
 * (so do retire's revoker and the LSM tier's lease, each in its own
 * tests); the switch to enforce cuts the stream at the next check. */
/* guarantees: none */
Test(bridge, audit_mode_reports_the_revoked_lease_and_keeps_the_stream)
{
	PATHS;
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct eg_worker *w;
	struct eg_runtime_record after;
	struct client cl;
	char log[16384], tok[512], err[EG_ERR_MAX], want[256], mode[8];
	__u8 sb[EG_ID_BYTES];
	long long cut_ms, waited;
	long switches;
	pid_t bridge;
	int fd;

	kh_keys();
	w = open_worker();
	bridge = bridge_start(bsock, vsock);
	cr_assert(wait_log("listening on", 5000, log, sizeof(log)), "bridge log: %s", log);
	install(w, bridge, fc.pid, bsock, vsock, 8);
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sb), 0);
	cr_assert_eq(eg_worker_mode(w, sb, mode, sizeof(mode), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(mode, "enforce");
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, sb, "audit", "test_bridge", NULL, err,
				 sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(eg_worker_mode(w, sb, mode, sizeof(mode), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(mode, "audit");

	client_start(&cl);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	cr_assert_eq(admit(w, cl.pid, tok).d.verdict, EG_ALLOW);
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "admitted client: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert_eq(send(fd, "ping\n", 5, MSG_NOSIGNAL), 5);
	fd_recv_exact(fd, "ping\n");

	/* Retire: enforce would cut (the retire case above); audit reports. */
	cr_assert_eq(eg_worker_retire(w, sb, &after, err, sizeof(err)), 0, "%s", err);
	snprintf(
	    want, sizeof(want),
	    "connection 1: would be revoked (audit, not enforced): connect %s: sandbox " SANDBOX
	    ": retired (epoch 2)",
	    vsock);
	cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
	/* Several lease checks later the stream still carries bytes both ways,
	 * and the report was made once. The bridge's one stream is idle here,
	 * so its thread sleeps only in poll(): once between two lease checks,
	 * twice when poll returns a moment before the check is due. Eight
	 * sleeps after the report are at least three checks (a fixed wait
	 * proved nothing on a starved machine). */
	switches = stream_thread_switches(bridge);
	waited = now_ms();
	for (long long end = waited + 30000; stream_thread_switches(bridge) < switches + 8;
	     usleep(20 * 1000))
		cr_assert_lt(now_ms(), end,
			     "the bridge's stream thread slept fewer than 8 times in 30 s");
	cr_log_info("eight sleeps of the stream thread in %lld ms", now_ms() - waited);
	cr_assert_eq(send(fd, "pong\n", 5, MSG_NOSIGNAL), 5);
	fd_recv_exact(fd, "pong\n");
	read_log(log, sizeof(log));
	cr_assert_eq(strstr(strstr(log, want) + 1, want), NULL, "reported twice: %s", log);
	cr_assert_null(strstr(log, "connection 1: revoked"), "%s", log);

	/* Enforce: the next lease check cuts it. */
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, sb, "enforce", "test_bridge", NULL, err,
				 sizeof(err)),
		     0, "%s", err);
	cut_ms = wait_eof(fd, 2000);
	cr_log_info("enforce -> stream cut in %lld ms", cut_ms);
	cr_assert_lt(cut_ms, 1000, "the lease is checked every 100 ms");
	snprintf(want, sizeof(want),
		 "connection 1: revoked: connect %s: sandbox " SANDBOX ": retired (epoch 2)",
		 vsock);
	cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
	close(fd);
	bridge_stop(bridge, bsock);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, bridge_refuses_an_impostor_vmm_and_no_client_byte_reaches_it)
{
	PATHS;
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0), imp;
	struct eg_worker *w;
	struct client cl;
	struct seen s;
	char log[16384], tok[512], want[256];
	pid_t bridge;
	int fd;

	kh_keys();
	w = open_worker();
	bridge = bridge_start(bsock, vsock);
	cr_assert(wait_log("listening on", 5000, log, sizeof(log)), "bridge log: %s", log);
	install(w, bridge, fc.pid, bsock, vsock, 8);
	imp = listener_start(vsock, IMPOSTOR, NULL, 0);

	client_start(&cl);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	cr_assert_eq(admit(w, cl.pid, tok).d.verdict, EG_ALLOW);
	/* The client speaks first, before the bridge has verified anything.
	 * The bridge may have refused and closed before the client's send
	 * (EPIPE, or ECONNRESET): its bytes then went nowhere at all, which
	 * the checks below hold as well. */
	fd = client_connect_send(&cl, bsock, "secret operation");
	cr_assert(fd >= 0 || fd == -EPIPE || fd == -ECONNRESET, "%s", strerror(-fd));
	if (fd >= 0)
		wait_eof(fd, 3000);
	snprintf(want, sizeof(want), "connection 1: refused: connect %s: ", vsock);
	cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
	snprintf(want, sizeof(want), "connection 1: refused: connect %s: refused by the kernel",
		 vsock);
	if (kh_promised(KH_NEED_LSM)) {
		/* The LSM tier's listener check (unix_stream_connect) holds on
		 * this kernel: it refuses the connect itself, so the impostor
		 * is never reached and the bridge's own check never runs. */
		cr_assert(strstr(log, want), "the kernel did not refuse it:\n%s", log);
		cr_assert_eq(listener_count(&imp), 0, "the impostor was reached");
	} else {
		/* No kernel listener check (the cgroup tier): the bridge's. */
		snprintf(want, sizeof(want),
			 "connection 1: refused: connect %s: listener is pid %d ", vsock,
			 (int)imp.pid);
		cr_assert(strstr(log, want), "%s", log);
		snprintf(want, sizeof(want), "expected the VMM of sandbox " SANDBOX " (pid %d ",
			 (int)fc.pid);
		cr_assert(strstr(log, want), "%s", log);
		cr_assert(strstr(log, "): another process\n"), "%s", log);
		cr_assert(listener_seen(&imp, &s, 2000), "the impostor was connected to");
		cr_assert_eq(s.bytes, 0, "the impostor received %llu bytes", s.bytes);
	}
	cr_assert_eq(listener_count(&fc), 0, "the real VMM was connected to");
	if (fd >= 0)
		close(fd);
	bridge_stop(bridge, bsock);
	eg_worker_close(w);
}

/* guarantees: none */
Test(bridge, bridge_command_line)
{
	PATHS;
	char out[4096];
	const char *bin = bridge_bin();

	cr_assert_eq(kh_run(out, sizeof(out), bin, "--version", NULL), 0);
	cr_assert_str_eq(out, "execgate-bridge " EXECGATE_VERSION "\n");
	cr_assert_eq(kh_run(out, sizeof(out), bin, "--help", NULL), 0);
	cr_assert(strstr(out, "usage: execgate-bridge --sandbox UUID --listen PATH --vmm-socket "
			      "PATH --vsock-port N\n"),
		  "%s", out);
	cr_assert_eq(kh_run(out, sizeof(out), bin, "--sand", SANDBOX, NULL), 2);
	cr_assert_str_eq(out, "execgate-bridge: --sand: unknown option (execgate-bridge --help)\n");
	cr_assert_eq(
	    kh_run(out, sizeof(out), bin, "--sandbox", SANDBOX, "--sandbox", SANDBOX, NULL), 2);
	cr_assert_str_eq(
	    out, "execgate-bridge: --sandbox: given more than once (execgate-bridge --help)\n");
	cr_assert_eq(kh_run(out, sizeof(out), bin, "--sandbox", SANDBOX, "--listen", "/tmp/x",
			    "--vmm-socket", "/tmp/y", NULL),
		     2);
	cr_assert_str_eq(out,
			 "execgate-bridge: --vsock-port is required (execgate-bridge --help)\n");
	cr_assert_eq(kh_run(out, sizeof(out), bin, "--sandbox", SANDBOX, "--listen", "/tmp/x",
			    "--vmm-socket", "/tmp/y", "--vsock-port", "-1", NULL),
		     2);
	cr_assert_str_eq(out, "execgate-bridge: --vsock-port -1: not a port (0 to 4294967295)\n");
	/* Nothing loaded at the pin dir: said so, exit 1, nothing listening. */
	char nopins[128];

	snprintf(nopins, sizeof(nopins), "%s", kh_path("nopins"));
	cr_assert_eq(kh_run(out, sizeof(out), bin, "--sandbox", SANDBOX, "--listen", bsock,
			    "--vmm-socket", vsock, "--vsock-port", "52", "--pin-dir", nopins, NULL),
		     1);
	cr_assert(strstr(out, "not loaded"), "%s", out);
	cr_assert_neq(access(bsock, F_OK), 0);
}

/* execgate unload and a new load under a running bridge and an open library
 * handle: while nothing is loaded the bridge cuts its streams and refuses
 * clients with the reason; after the load both answer from the new maps
 * (the kernel, the bridge and the handle agree), with no restart. Where the
 * LSM tier is loaded, its listener check refuses the old bridge socket after
 * the load instead (its documented limit). */
/* guarantees: none */
Test(bridge, bridge_and_handle_follow_an_unload_and_a_new_load)
{
	PATHS;
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct eg_worker *w;
	struct eg_sandbox_info info;
	struct client cl, stranger;
	char log[32768], tok[512], err[EG_ERR_MAX], out[4096];
	__u8 sb[EG_ID_BYTES];
	uint64_t gen0 = 0, gen1 = 0;
	pid_t bridge;
	int fd, rc;

	kh_keys();
	w = open_worker();
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sb), 0);
	bridge = bridge_start(bsock, vsock);
	cr_assert(wait_log("listening on", 5000, log, sizeof(log)), "bridge log: %s", log);
	install(w, bridge, fc.pid, bsock, vsock, 8);
	client_start(&cl);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	cr_assert_eq(admit(w, cl.pid, tok).d.verdict, EG_ALLOW);
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "admitted client: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert_eq(eg_worker_refresh(w, &gen0, err, sizeof(err)), 0, "%s", err);

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "execgate unload: %s", out);
	/* The handle: no answer from the dead maps, the reason instead. */
	rc = eg_worker_show(w, sb, &info, err, sizeof(err));
	cr_assert_eq(rc, -ENOLINK, "show after unload: %d %s", rc, err);
	cr_assert(strstr(err, "not loaded"), "%s", err);
	{
		struct eg_subject who = {.pid = cl.pid, .pidfd = -1};
		struct eg_admit_args a = {.token_text = tok};
		struct eg_verdict_result r;

		rc = eg_worker_admit(w, &who, &a, &r, err, sizeof(err));
		cr_assert_eq(rc, -ENOLINK, "admit after unload: %d %s", rc, err);
	}
	/* The bridge: the open stream's lease fails, the change is logged. */
	wait_eof(fd, 2000);
	close(fd);
	cr_assert(wait_log("refusing every client until then", 2000, log, sizeof(log)), "%s", log);
	/* Nothing enforces now, so the kernel lets the client connect; the
	 * bridge refuses it itself, with the reason. */
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "connect with nothing loaded: %s", strerror(-fd));
	wait_eof(fd, 2000);
	close(fd);
	cr_assert(wait_log("connection 2: refused: pin dir ", 2000, log, sizeof(log)), "%s", log);

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "execgate load: %s", out);
	/* The harness's own fds (kh_events, kh_teardown) follow too. */
	eg_maps_close(&kh.maps);
	cr_assert_eq(eg_maps_open(&kh.maps, kh.pin_dir, err, sizeof(err)), 0, "%s", err);
	cr_assert(wait_log("pins replaced (execgate load): reopened", 2000, log, sizeof(log)), "%s",
		  log);
	/* New maps, no records: the old grant is gone in the kernel too. */
	rc = eg_worker_show(w, sb, &info, err, sizeof(err));
	cr_assert_eq(rc, -ENOENT, "show after load: %d %s", rc, err);
	cr_assert_eq(eg_worker_refresh(w, &gen1, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(gen1, gen0, "the handle did not count the reload");
	/* The bridge socket is no endpoint of the new maps, so the kernel lets
	 * the client through; the bridge refuses it from the new maps. */
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "connect to an unregistered path: %s", strerror(-fd));
	wait_eof(fd, 2000);
	close(fd);
	cr_assert(wait_log("connection 3: refused: client: sandbox " SANDBOX ": no runtime record",
			   2000, log, sizeof(log)),
		  "%s", log);
	/* Installed and admitted again through the same handle: the kernel
	 * lets the client in and the bridge verifies it against the new maps. */
	install(w, bridge, fc.pid, bsock, vsock, 8);
	cr_assert_eq(admit(w, cl.pid, tok).d.verdict, EG_ALLOW);
	client_start(&stranger);
	cr_assert_eq(client_connect(&stranger, bsock), -EPERM, "the kernel: new maps enforce");
	snprintf(out, sizeof(out), "%s/links/lsm_unix_stream_connect", kh.pin_dir);
	if (access(out, F_OK) == 0) {
		/* The LSM tier's listener check: the bridge's listening socket
		 * predates the new tier and has no owner tag in its maps, so
		 * the kernel refuses even the admitted client (fail closed;
		 * docs/operators.md, "Limits of the LSM tier": restart the
		 * bridge and the VMM after a new load). */
		cr_assert_eq(client_connect(&cl, bsock), -EPERM,
			     "a listener older than the LSM tier must fail closed");
		cr_assert_gt(kh_events(cl.pid, EG_K_DENY_LISTENER), 0, "no deny-listener event");
		bridge_stop(bridge, bsock);
		eg_worker_close(w);
		return;
	}
	fd = client_connect(&cl, bsock);
	cr_assert_geq(fd, 0, "admitted client after the load: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert(wait_log("connection 4: verified: client pid", 2000, log, sizeof(log)), "%s",
		  log);
	close(fd);
	bridge_stop(bridge, bsock);
	eg_worker_close(w);
}

/* In audit the kernel lets a client without a grant reach the bridge
 * socket; the bridge, deciding as in enforce, forwards it and reports what
 * it would have refused and why, by the mode the hooks read: the global
 * mode, then the sandbox's own over it. In enforce the kernel refuses that
 * client, and the bridge refuses one the kernel does not check (this
 * process, outside the scratch cgroup). */
/* guarantees: none */
Test(bridge, audit_mode_forwards_what_the_kernel_let_through_and_reports_it)
{
	PATHS;
	struct listener fc = listener_start(vsock, FIRECRACKER, NULL, 0);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct eg_worker *w;
	struct client stranger;
	char log[16384], err[EG_ERR_MAX], want[256];
	__u8 sb[EG_ID_BYTES];
	pid_t bridge;
	int fd, own;

	kh_keys();
	w = open_worker();
	bridge = bridge_start(bsock, vsock);
	cr_assert(wait_log("listening on", 5000, log, sizeof(log)), "bridge log: %s", log);
	install(w, bridge, fc.pid, bsock, vsock, 8);
	cr_assert_eq(eg_uuid_from_text(SANDBOX, sb), 0);
	client_start(&stranger);

	/* The global mode audit: forwarded, both ways, and reported once. */
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, NULL, "audit", "test_bridge", NULL, err,
				 sizeof(err)),
		     0, "%s", err);
	fd = client_connect(&stranger, bsock);
	cr_assert_geq(fd, 0, "audit: the kernel lets the client through: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert_eq(send(fd, "ping\n", 5, MSG_NOSIGNAL), 5);
	fd_recv_exact(fd, "ping\n");
	snprintf(want, sizeof(want),
		 "connection 1: would refuse (audit, not enforced): client pid %d ",
		 (int)stranger.pid);
	cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
	cr_assert(strstr(log, ": no grant for sandbox " SANDBOX), "the reason: %s", log);
	cr_assert(strstr(log, "connection 1: verified: client not verified (audit), VMM pid"), "%s",
		  log);
	cr_assert_null(strstr(log, "connection 1: refused"), "%s", log);
	close(fd);

	/* The global mode enforce, the sandbox's own audit: the same. */
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, NULL, "enforce", "test_bridge", NULL,
				 err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, sb, "audit", "test_bridge", NULL, err,
				 sizeof(err)),
		     0, "%s", err);
	fd = client_connect(&stranger, bsock);
	cr_assert_geq(fd, 0, "sandbox audit: %s", strerror(-fd));
	fd_recv_exact(fd, GREETING);
	cr_assert(wait_log("connection 2: would refuse (audit, not enforced): client pid", 2000,
			   log, sizeof(log)),
		  "%s", log);
	close(fd);

	/* Enforce: the kernel refuses the stranger; the bridge refuses this
	 * process, which the cgroup tier does not check, and says so. */
	cr_assert_eq(eg_mode_set(kh.pin_dir, kh.state_dir, sb, "enforce", "test_bridge", NULL, err,
				 sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(client_connect(&stranger, bsock), -EPERM);
	cr_assert_lt(strlen(bsock), sizeof(sun.sun_path));
	memcpy(sun.sun_path, bsock, strlen(bsock));
	own = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(own, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		wait_eof(own, 2000);
		snprintf(want, sizeof(want), "connection 3: refused: client pid %d ",
			 (int)getpid());
		cr_assert(wait_log(want, 2000, log, sizeof(log)), "%s", log);
		cr_assert_null(strstr(log, "connection 3: would refuse"), "%s", log);
	} else {
		/* the LSM tier checks machine-wide: the kernel refused it */
		cr_assert_eq(errno, EPERM, "%s", strerror(errno));
	}
	close(own);
	bridge_stop(bridge, bsock);
	listener_kill(&fc);
	eg_worker_close(w);
}
