// SPDX-License-Identifier: Apache-2.0
/* Where the socket tags' memory is charged (user/loader/maps/tag_maps.h): not
 * to the memory cgroup `execgate load` ran in. The loader runs in a scratch
 * memory cgroup M; then a bridge outside M makes admitted connects and keeps
 * the sockets, each with its eg_sk_tags entry; M's usage must not grow with
 * them. Built the old way (the maps created by the load itself) each tag is
 * charged to M: 350-600 bytes a socket (6.18 host, 6.12 VM), so the 12 000
 * sockets here add 4-7 MiB. The second test makes the root memory cgroup
 * unreachable for the loader and checks the fallback: load works, the tags
 * exist, and M pays for them.
 *
 * The usage counter moves in pages charged ahead: each CPU keeps a stock of
 * up to 64 pages (256 KiB) precharged to a memcg. Nothing charges M while
 * the bridge connects, unless the tags do, so "not charged" stays exact
 * (a stock drained meanwhile only lowers M); charged tags first use up the
 * stock M kept on each CPU the loader charged from, so growth can fall
 * short of the tags by 256 KiB per such CPU. Hence the bounds: under 1 MiB
 * for "not charged", over 2 MiB for "charged", where 4+ MiB is expected. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/tiers/cgroup.h"

#define SANDBOX	    "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c9"
#define WORKER	    "a0000000-0000-4000-8000-00000000000a"
#define SOCKETS	    12000
#define NOT_CHARGED (1024 * 1024)
#define CHARGED	    (2 * 1024 * 1024)
/* The kernel's SCM_MAX_FD: descriptors one SCM_RIGHTS message may carry. */
#define PARK_BATCH 253

static char memcg[4200], home[4200];

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	cr_assert_eq(n, (ssize_t)strlen(text), "writing '%s' to %s: %s", text, path,
		     strerror(errno));
	close(fd);
}

static void join(const char *cg)
{
	int rc = eg_cgroup_join(cg);

	cr_assert_eq(rc, 0, "joining %s: %s", cg, strerror(-rc));
}

/* This process's memory cgroup, as a directory under root. */
static void own_memcg(const char *root, bool v1, char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	bool found = false;

	cr_assert_not_null(f, "/proc/self/cgroup");
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *path = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (!path)
			continue;
		*ctrl = 0; /* line: the hierarchy id, ctrl + 1: its controllers */
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		if (v1 ? strstr(ctrl + 1, "memory") != NULL : !strcmp(line, "0")) {
			snprintf(out, size, "%s%s", root, path);
			found = true;
		}
	}
	fclose(f);
	cr_assert(found, "no memory cgroup in /proc/self/cgroup");
}

static long long usage(bool v1)
{
	char path[4300];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", memcg,
		 v1 ? "memory.usage_in_bytes" : "memory.current");
	f = fopen(path, "re");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fscanf(f, "%lld", &v), 1, "%s", path);
	fclose(f);
	return v;
}

/* Sends fds[0..n) in flight on park and closes them here: a socket in a
 * queued SCM_RIGHTS message lives on (tag included) without a descriptor,
 * so the bridge holds SOCKETS sockets under any RLIMIT_NOFILE (a CI
 * runner's may be 1 024, and root here lacks CAP_SYS_RESOURCE to raise
 * it). Root's CAP_SYS_ADMIN lifts the in-flight limit. */
static int park_fds(int park, int *fds, int n)
{
	char byte = 0, buf[CMSG_SPACE(sizeof(int) * PARK_BATCH)] = {0};
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int rc;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	rc = sendmsg(park, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return rc;
}

/* The bridge: joins the enforced cgroup, then on 'g' connects SOCKETS times
 * to path, keeps every socket (parked in flight), and reports how many were
 * admitted, or -errno when parking failed. */
static pid_t bridge_start(const char *path, int *ctl)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int sv[2];
	pid_t pid;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		int park[2], fds[PARK_BATCH], n = 0, ok = 0;
		char c;

		close(sv[0]);
		/* Stream, not datagram: no max_dgram_qlen on the queued batches. */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, park))
			_exit(1);
		join(kh.cgroup);
		if (read(sv[1], &c, 1) != 1)
			_exit(1);
		for (int i = 0; ok >= 0 && i < SOCKETS; i++) {
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (fd < 0)
				continue;
			if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
				close(fd);
				continue;
			}
			ok++;
			fds[n++] = fd;
			if (n == PARK_BATCH) {
				int rc = park_fds(park[0], fds, n);

				ok = rc < 0 ? rc : ok;
				n = 0;
			}
		}
		if (n) {
			int rc = park_fds(park[0], fds, n);

			ok = rc < 0 ? rc : ok;
		}
		if (write(sv[1], &ok, sizeof(ok)) != sizeof(ok))
			_exit(1);
		pause();
		_exit(0);
	}
	close(sv[1]);
	kh_track(pid);
	*ctl = sv[0];
	return pid;
}

static void memcg_fini(void)
{
	kh_teardown();
	if (home[0])
		join(home);
	if (memcg[0])
		rmdir(memcg);
}

/* The mount point that holds path: the longest mount point in this
 * process's mountinfo that is path or a directory above it. */
static void mount_point_of(const char *path, char *out, size_t size)
{
	char line[8192], mp[4096];
	size_t best = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	cr_assert_not_null(f, "/proc/self/mountinfo: %s", strerror(errno));
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		/* ID PARENT MAJ:MIN ROOT MOUNT_POINT ...; no mount point here
		 * has a space (it would be written \040). */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		n = strlen(mp);
		if (n >= best && !strncmp(path, mp, n) &&
		    (path[n] == '/' || path[n] == '\0' || (n == 1 && mp[0] == '/'))) {
			best = n;
			snprintf(out, size, "%s", mp);
		}
	}
	fclose(f);
	cr_assert_neq(out[0], '\0', "no mount holds %s", path);
}

/* In a mount namespace of this test process's own, covers
 * <root>/cgroup.procs with a read-only file: the loader's child cannot join
 * the root then, as in a container without write access to it. Only the
 * mount that holds the file is made private (so the bind mount never
 * propagates to the host): "/" need not be a mount point, as in a chroot.
 * Returns the covered path, for uncover(). */
static void cover_root_procs(const char *root, char *procs, size_t size)
{
	char ro[64], mp[4096];
	int fd;

	snprintf(procs, size, "%s/cgroup.procs", root);
	snprintf(ro, sizeof(ro), "/tmp/egk-memcg-ro-%d", (int)getpid());
	fd = open(ro, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	cr_assert_geq(fd, 0, "%s: %s", ro, strerror(errno));
	close(fd);
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare(CLONE_NEWNS): %s", strerror(errno));
	mount_point_of(procs, mp, sizeof(mp));
	cr_assert_eq(mount(NULL, mp, NULL, MS_REC | MS_PRIVATE, NULL), 0, "private %s: %s", mp,
		     strerror(errno));
	cr_assert_eq(mount(ro, procs, NULL, MS_BIND, NULL), 0, "bind over %s: %s", procs,
		     strerror(errno));
	cr_assert_eq(mount(NULL, procs, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL), 0,
		     "read-only %s: %s", procs, strerror(errno));
	unlink(ro); /* the mount keeps it */
}

/* `execgate load` (with kh_setup) run inside a scratch memory cgroup M,
 * then SOCKETS admitted connects from a bridge outside M that keeps its
 * sockets, each with its eg_sk_tags entry. Returns how much M grew with
 * them. block_root: the loader's child cannot join the root memory cgroup
 * while load runs (cover_root_procs). */
static long long loader_memcg_growth(bool block_root)
{
	char root[4096], procs[4200], pid_text[16], out[2048];
	const char *vmm;
	struct statfs st;
	long long before, after;
	int ctl, ok = 0, rc;
	__u64 allowed0;
	bool v1;
	pid_t bridge;

	rc = eg_memcg_root(root, sizeof(root));
	cr_assert_eq(rc, 0, "no memory cgroup hierarchy: %s", strerror(-rc));
	cr_assert_eq(statfs(root, &st), 0, "%s", root);
	v1 = st.f_type != CGROUP2_SUPER_MAGIC;
	own_memcg(root, v1, home, sizeof(home));
	if (!v1) {
		char ctl_path[4200];

		/* The root may delegate the controller already: then a no-op. */
		snprintf(ctl_path, sizeof(ctl_path), "%s/cgroup.subtree_control", root);
		write_file(ctl_path, "+memory");
	}
	snprintf(memcg, sizeof(memcg), "%s/egk-memcg-%d", root, (int)getpid());
	cr_assert_eq(mkdir(memcg, 0755), 0, "mkdir %s: %s", memcg, strerror(errno));

	/* execgate load, as our child, in M; then back where we were, so that
	 * nothing of ours is charged to M from here on. */
	join(memcg);
	if (block_root)
		cover_root_procs(root, procs, sizeof(procs));
	kh_setup();
	if (block_root)
		cr_assert_eq(umount2(procs, MNT_DETACH), 0, "umount %s: %s", procs,
			     strerror(errno));
	join(home);
	vmm = kh_path("vmm.sock"); /* kh.dir exists from kh_setup() on */

	kh_listener_start(vmm);
	bridge = bridge_start(vmm, &ctl);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)bridge);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
		    "--generation", "1", "--activation", "1", "--bridge-pid", pid_text,
		    "--vmm-socket", vmm, NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);

	allowed0 = kh_counter(EG_K_ALLOW_BRIDGE);
	before = usage(v1);
	cr_assert_eq(write(ctl, "g", 1), 1);
	cr_assert_eq(read(ctl, &ok, sizeof(ok)), (ssize_t)sizeof(ok), "bridge report");
	after = usage(v1);
	close(ctl);

	cr_assert_geq(ok, 0, "the bridge could not keep its sockets in flight: sendmsg: %s",
		      strerror(-ok));
	cr_assert_eq(ok, SOCKETS, "admitted %d of %d connects", ok, SOCKETS);
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE) - allowed0, SOCKETS,
		     "every connect admitted (and so tagged) by the kernel");
	cr_log_info("memory cgroup %s grew by %lld bytes with %d tagged sockets (%lld to %lld)",
		    memcg, after - before, SOCKETS, before, after);
	return after - before;
}

/* guarantees: none */
Test(tag_memcg, admitted_sockets_are_not_charged_to_the_loaders_memory_cgroup, .fini = memcg_fini,
     .timeout = 60)
{
	long long grew = loader_memcg_growth(false);

	cr_assert_lt(grew, NOT_CHARGED,
		     "memory cgroup %s of the loader grew by %lld bytes with %d tagged sockets: "
		     "the tags are charged to it",
		     memcg, grew, SOCKETS);
}

/* The fallback operators.md §2 describes: where the root memory cgroup
 * cannot be joined, load still succeeds and every admitted socket is still
 * tagged; the tags are then charged to the loader's memory cgroup, as
 * before tag_maps.c. */
/* guarantees: none */
Test(tag_memcg, without_the_root_memory_cgroup_load_falls_back_to_charged_tags, .fini = memcg_fini,
     .timeout = 60)
{
	long long grew = loader_memcg_growth(true);

	cr_assert_gt(grew, CHARGED,
		     "memory cgroup %s of the loader grew by only %lld bytes with %d tagged "
		     "sockets: the fallback did not charge the tags to it",
		     memcg, grew, SOCKETS);
}
