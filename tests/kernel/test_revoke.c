// SPDX-License-Identifier: Apache-2.0
/* Unix stream revocation on the cgroup tier (user/loader/revokers/revoke_unix.c):
 * when install moves the epoch, or retire runs, every stream admitted at an
 * older epoch is shut down, and both ends see it on their next call (EOF on
 * receive, EPIPE on send; where the LSM tier is loaded as well, its lease
 * may answer a receive with EPIPE first). An activation change keeps them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/maps/pins.h"
#include "loader/revokers/revoke.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a7"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define MAX_FDS	 16
#define PRESSED	 12 /* streams cut with fewer free fds than that */
#define MAX_FILL 256

TestSuite(revoke, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 60);

/* The bridge: a child in the scratch cgroup that connects n streams to the
 * VMM socket and holds them; commands over a socketpair. */
struct holder {
	pid_t pid;
	int ctl;
};

/* A cut stream's receive: EOF, or EPIPE where the LSM tier is loaded too
 * (its stream lease refuses I/O on a stale tag before the socket is read). */
static bool received_cut(ssize_t r, int err)
{
	return r == 0 || (r < 0 && err == EPIPE);
}

static void holder_main(int ctl, const char *path)
{
	int fds[MAX_FDS], n = 0;
	char cmd;

	signal(SIGPIPE, SIG_IGN);
	while (read(ctl, &cmd, 1) == 1) {
		int reply = 0;

		if (cmd == 'c' && n < MAX_FDS) { /* connect one */
			struct sockaddr_un a = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);

			snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
			reply = connect(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
			if (!reply)
				fds[n++] = fd;
			else
				close(fd);
		} else if (cmd == 'w') { /* streams that still carry a byte out */
			for (int i = 0; i < n; i++)
				reply += send(fds[i], "x", 1, MSG_NOSIGNAL) == 1;
		} else if (cmd == 'e') { /* streams cut: EOF in, EPIPE out */
			for (int i = 0; i < n; i++) {
				char b[64];
				int recv_errno;
				ssize_t r, s;

				do /* bytes the peer sent before the cut */
					r = recv(fds[i], b, sizeof(b), MSG_DONTWAIT);
				while (r > 0);
				recv_errno = r < 0 ? errno : 0;
				s = send(fds[i], "x", 1, MSG_NOSIGNAL);
				reply += received_cut(r, recv_errno) && s < 0 && errno == EPIPE;
			}
		} else if (cmd == 'f') { /* fork a second holder of every fd */
			pid_t holder = getpid(), p = fork();

			if (p == 0) {
				/* Not the test's child: the teardown cannot kill it
				 * (harness.c, still_our_child), so it goes with the
				 * holder, which the teardown does kill. */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != holder)
					_exit(0);
				pause();
				_exit(0);
			}
			reply = p;
		}
		if (write(ctl, &reply, sizeof(reply)) != sizeof(reply))
			break;
	}
	_exit(0);
}

static void holder_start(struct holder *h, const char *path)
{
	char procs[600], pid[16];
	int sv[2];
	FILE *f;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	h->pid = fork();
	cr_assert(h->pid >= 0);
	if (h->pid == 0) {
		close(sv[0]);
		holder_main(sv[1], path);
	}
	close(sv[1]);
	h->ctl = sv[0];
	kh_track(h->pid);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
	snprintf(pid, sizeof(pid), "%d", (int)h->pid);
	f = fopen(procs, "w");
	cr_assert(f, "open %s", procs);
	cr_assert(fputs(pid, f) >= 0 && fclose(f) == 0, "join cgroup");
}

static int holder_cmd(struct holder *h, char cmd)
{
	int reply;

	cr_assert_eq(write(h->ctl, &cmd, 1), 1);
	cr_assert_eq(read(h->ctl, &reply, sizeof(reply)), (ssize_t)sizeof(reply));
	return reply;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 64), 0);
	return fd;
}

/* The accepted end: EOF in and EPIPE out once cut, data both ways before. */
static bool accepted_cut(int fd)
{
	int recv_errno;
	char b[8];
	ssize_t r, s;

	do
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	while (r > 0); /* bytes the holder sent before the cut */
	recv_errno = r < 0 ? errno : 0;
	s = send(fd, "y", 1, MSG_NOSIGNAL);
	return received_cut(r, recv_errno) && s < 0 && errno == EPIPE;
}

static bool accepted_alive(int fd)
{
	return send(fd, "y", 1, MSG_NOSIGNAL) == 1;
}

/* install via the CLI with --json; returns the "streams" member's unix_cut
 * (-1 when absent) and checks unix_unreachable is 0. */
static int install_json(unsigned gen, unsigned act, pid_t bridge, const char *vmm_sock, char *out,
			size_t size)
{
	char g[16], a[16], b[16], v[16];
	const char *p;
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	rc = kh_cli(out, size, "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", g, "--activation", a, "--bridge-pid", b, "--vmm-pid", v,
		    "--vmm-socket", vmm_sock, "--json", NULL);
	cr_assert_eq(rc, 0, "install gen %u act %u: exit %d: %s", gen, act, rc, out);
	p = strstr(out, "\"unix_unreachable\":");
	cr_assert(p && atoi(p + 19) == 0, "no unreachable streams: %s", out);
	p = strstr(out, "\"unix_cut\":");
	return p ? atoi(p + 11) : -1;
}

static void connect_streams(struct holder *h, int lfd, int n, int *acc)
{
	for (int i = 0; i < n; i++) {
		cr_assert_eq(holder_cmd(h, 'c'), 0, "bridge connect %d", i);
		acc[i] = accept(lfd, NULL, NULL);
		cr_assert(acc[i] >= 0, "accept");
	}
}

/* guarantees: unix-stream-revocation */
Test(revoke, new_generation_cuts_both_ends_and_retire_cuts_the_rest)
{
	const char *vmm = kh_path("vmm.sock");
	int lfd = listen_on(vmm), acc[4], fresh;
	struct holder h;
	char out[4096];

	signal(SIGPIPE, SIG_IGN);
	holder_start(&h, vmm);
	cr_assert_eq(install_json(7, 1, h.pid, vmm, out, sizeof(out)), 0, "%s", out);
	connect_streams(&h, lfd, 3, acc);
	cr_assert_eq(holder_cmd(&h, 'w'), 3, "streams carry data at epoch 1");
	for (int i = 0; i < 3; i++)
		cr_assert(accepted_alive(acc[i]));

	/* Execution 8 replaces 7: install returns after the cut. */
	cr_assert_eq(install_json(8, 1, h.pid, vmm, out, sizeof(out)), 3, "3 cut: %s", out);
	cr_assert(strstr(out, "\"unix_method\":\""), "method named: %s", out);
	cr_assert_eq(holder_cmd(&h, 'e'), 3, "connecting ends: EOF and EPIPE");
	for (int i = 0; i < 3; i++)
		cr_assert(accepted_cut(acc[i]), "accepted end %d: EOF and EPIPE", i);

	/* A stream of the new epoch is not touched by that cut, and retire
	 * cuts it (the text form says so too). */
	cr_assert_eq(holder_cmd(&h, 'c'), 0, "connect at epoch 2");
	fresh = accept(lfd, NULL, NULL);
	cr_assert(accepted_alive(fresh));
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL), 0, "%s", out);
	cr_assert(strstr(out, "streams: 1 cut, 0 unreachable"), "retire: %s", out);
	cr_assert(accepted_cut(fresh), "epoch-2 stream cut by retire");
	cr_assert_eq(holder_cmd(&h, 'e'), 4, "every connecting end cut");
	close(fresh);
	for (int i = 0; i < 3; i++)
		close(acc[i]);
	close(lfd);
}

/* guarantees: unix-stream-revocation */
Test(revoke, activation_change_keeps_established_streams)
{
	const char *vmm = kh_path("vmm.sock");
	int lfd = listen_on(vmm), acc[2];
	struct holder h;
	char out[4096];

	signal(SIGPIPE, SIG_IGN);
	holder_start(&h, vmm);
	install_json(7, 1, h.pid, vmm, out, sizeof(out));
	connect_streams(&h, lfd, 2, acc);
	/* Same generation, attempt 2: the epoch stays, nothing is cut. */
	cr_assert_eq(install_json(7, 2, h.pid, vmm, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"unix_method\":null"), "no cut ran: %s", out);
	cr_assert_eq(holder_cmd(&h, 'w'), 2, "connecting ends still send");
	for (int i = 0; i < 2; i++)
		cr_assert(accepted_alive(acc[i]), "accepted end %d still sends", i);
	close(acc[0]);
	close(acc[1]);
	close(lfd);
}

/* Both ways of finding the holders, in process: the iterator where the
 * kernel loads it, and the procfs walk it falls back to. A socket held by
 * two processes (fork) is one stream, cut once; a current-epoch tag is
 * never cut. */
/* n streams admitted at epoch 1 (execution 7), and the runtime open for
 * calling the revoker in this process. */
static void streams_in_process(const char *vmm, int lfd, int n, int *acc, struct holder *h,
			       struct eg_runtime *rt, __u8 *sb)
{
	char out[4096], err[512];

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	holder_start(h, vmm);
	install_json(7, 1, h->pid, vmm, out, sizeof(out));
	connect_streams(h, lfd, n, acc);
	cr_assert_eq(eg_runtime_open(rt, kh.pin_dir, kh.state_dir, true, err, sizeof(err)), 0, "%s",
		     err);
}

static void cut_in_process(bool procfs)
{
	const char *vmm = kh_path("vmm.sock");
	struct eg_revoke_report rep;
	int lfd = listen_on(vmm), acc[2];
	struct eg_runtime rt;
	__u8 sb[EG_ID_BYTES];
	struct holder h;

	streams_in_process(vmm, lfd, 2, acc, &h, &rt, sb);
	kh_track(holder_cmd(&h, 'f'));
	eg_revoke_unix_force_procfs(procfs);

	cr_assert_eq(eg_revoke_stale(&rt, sb, 1, false, &rep), 0, "%s", rep.err);
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].cut, 0, "epoch 1 is current: nothing stale");
	cr_assert_eq(holder_cmd(&h, 'w'), 2);

	cr_assert_eq(eg_revoke_stale(&rt, sb, 2, false, &rep), 0, "%s", rep.err);
	cr_assert_str_eq(rep.kind[EG_REVOKE_UNIX].method, procfs ? "procfs" : "iter/task_file");
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].cut, 2, "two streams, four holders' fds");
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].unreachable, 0);
	cr_assert_eq(holder_cmd(&h, 'e'), 2);
	for (int i = 0; i < 2; i++)
		cr_assert(accepted_cut(acc[i]));
	eg_revoke_unix_force_procfs(false);
	eg_runtime_close(&rt);
	close(acc[0]);
	close(acc[1]);
	close(lfd);
}

/* guarantees: unix-stream-revocation */
Test(revoke, iterator_finds_every_holder)
{
	cut_in_process(false);
}

/* guarantees: unix-stream-revocation */
Test(revoke, procfs_fallback_finds_every_holder)
{
	cut_in_process(true);
}

/* The loader takes a duplicate of each stale stream's fd before cutting it;
 * with fewer free fds than streams it cuts what it holds and takes the rest
 * in later rounds: every stream cut, none reported unreachable. */
/* guarantees: unix-stream-revocation */
Test(revoke, iterator_cuts_every_stream_when_short_of_fds)
{
	const char *vmm = kh_path("vmm.sock");
	int lfd = listen_on(vmm), acc[PRESSED], probe[PRESSED], nfree = 0, top = 0;
	int fill[MAX_FILL], nfill = 0;
	struct eg_revoke_report rep;
	struct rlimit old, low;
	struct eg_runtime rt;
	__u8 sb[EG_ID_BYTES];
	struct holder h;

	streams_in_process(vmm, lfd, PRESSED, acc, &h, &rt, sb);
	/* Nothing stale at epoch 1; loads the iterator while fds are plenty. */
	cr_assert_eq(eg_revoke_stale(&rt, sb, 1, false, &rep), 0, "%s", rep.err);
	cr_assert_str_eq(rep.kind[EG_REVOKE_UNIX].method, "iter/task_file");

	/* Holes below the highest open fd filled, five fds free above it. */
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			top = fd;
	for (int fd; nfill < MAX_FILL && (fd = dup(0)) >= 0;) {
		if (fd > top) {
			close(fd);
			break;
		}
		fill[nfill++] = fd;
	}
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)top + 1 + 5;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfree < PRESSED && (probe[nfree] = dup(0)) >= 0)
		nfree++;
	for (int i = 0; i < nfree; i++)
		close(probe[i]);
	cr_assert_eq(nfree, 5, "the limit bites: %d fds free for %d streams", nfree, PRESSED);

	cr_assert_eq(eg_revoke_stale(&rt, sb, 2, false, &rep), 0, "%s", rep.err);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	for (int i = 0; i < nfill; i++)
		close(fill[i]);
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].cut, PRESSED, "cut %u of %d",
		     rep.kind[EG_REVOKE_UNIX].cut, PRESSED);
	cr_assert_eq(rep.kind[EG_REVOKE_UNIX].unreachable, 0);
	cr_assert_eq(holder_cmd(&h, 'e'), PRESSED, "every connecting end: EOF and EPIPE");
	for (int i = 0; i < PRESSED; i++) {
		cr_assert(accepted_cut(acc[i]), "accepted end %d", i);
		close(acc[i]);
	}
	eg_runtime_close(&rt);
	close(lfd);
}

static struct bpf_link_info link_at(const char *pin)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(pin);

	cr_assert(fd >= 0, "%s: %s", pin, strerror(errno));
	memset(&info, 0, sizeof(info));
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	return info;
}

/* The iterator is loaded once per pin dir: load pins its link
 * (links/revoke_unix_iter), installs (each its own process) adopt it, a pin
 * that is not this build's iterator is replaced by the next cut, and unload
 * removes it with the rest. */
/* guarantees: unix-stream-revocation */
Test(revoke, iterator_pinned_adopted_replaced_and_unloaded)
{
	const char *vmm = kh_path("vmm.sock");
	int lfd = listen_on(vmm), acc[2], fd;
	char pin[EG_PIN_PATH_MAX], other[EG_PIN_PATH_MAX], out[4096];
	struct bpf_link_info at_load;
	struct holder h;

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(eg_link_pin_path(pin, sizeof(pin), kh.pin_dir, EG_PIN_REVOKE_UNIX_ITER), 0);
	cr_assert_eq(eg_link_pin_path(other, sizeof(other), kh.pin_dir, "cgroup_connect_unix"), 0);
	holder_start(&h, vmm);
	install_json(7, 1, h.pid, vmm, out, sizeof(out));
	at_load = link_at(pin);
	cr_assert_eq(at_load.type, BPF_LINK_TYPE_ITER, "pinned by load");
	connect_streams(&h, lfd, 1, acc);
	cr_assert_eq(install_json(8, 1, h.pid, vmm, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "\"unix_method\":\"iter/task_file\""), "%s", out);
	cr_assert_eq(link_at(pin).id, at_load.id, "the install adopted it, no reload");

	/* Another program's link in its place: replaced, and the cut holds. */
	cr_assert_eq(unlink(pin), 0);
	fd = bpf_obj_get(other);
	cr_assert(fd >= 0);
	cr_assert_eq(bpf_obj_pin(fd, pin), 0);
	close(fd);
	connect_streams(&h, lfd, 1, acc + 1);
	cr_assert_eq(install_json(9, 1, h.pid, vmm, out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "\"unix_method\":\"iter/task_file\""), "%s", out);
	cr_assert_eq(link_at(pin).type, BPF_LINK_TYPE_ITER, "the foreign pin replaced");
	cr_assert(accepted_cut(acc[1]));

	cr_assert_eq(kh_cli(out, sizeof(out), "unload", NULL), 0, "%s", out);
	cr_assert_eq(access(pin, F_OK), -1, "unload removes the iterator's pin");
	cr_assert_eq(access(kh.pin_dir, F_OK), -1, "and the pin dir: %s", kh.pin_dir);
	close(acc[0]);
	close(acc[1]);
	close(lfd);
}
