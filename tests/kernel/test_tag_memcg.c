// SPDX-License-Identifier: Apache-2.0
/* Where the socket tags' memory is charged (user/loader/tag_maps.h): not
 * to the memory cgroup `execgate load` ran in. The loader runs in a scratch
 * memory cgroup M; then a bridge outside M makes admitted connects and keeps
 * the sockets, each with its eg_sk_tags entry; M's usage must not grow with
 * them. Built the old way (the maps created by the load itself) each tag is
 * charged to M: several hundred bytes a socket, so the 3 000 sockets here
 * would add about 1 MiB against the 512 KiB allowed. The second test makes
 * the root memory cgroup unreachable for the loader and checks the
 * fallback: load works, the tags exist, and M pays for them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/cgroup.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c9"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"
#define SOCKETS 3000
#define ALLOWED (512 * 1024)

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

/* The bridge: joins the enforced cgroup, then on 'g' connects SOCKETS times
 * to path, keeps every socket, and reports how many were admitted. */
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
		struct rlimit rl;
		int ok = 0;
		char c;

		close(sv[0]);
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		join(kh.cgroup);
		if (read(sv[1], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < SOCKETS; i++) {
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);

			if (fd >= 0 && !connect(fd, (struct sockaddr *)&sun, sizeof(sun)))
				ok++;
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

/* In a mount namespace of this test process's own (private, so nothing
 * reaches the host), covers <root>/cgroup.procs with a read-only file: the
 * loader's child cannot join the root then, as in a container without write
 * access to it. Returns the covered path, for uncover(). */
static void cover_root_procs(const char *root, char *procs, size_t size)
{
	char ro[64];
	int fd;

	snprintf(procs, size, "%s/cgroup.procs", root);
	snprintf(ro, sizeof(ro), "/tmp/egk-memcg-ro-%d", (int)getpid());
	fd = open(ro, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	cr_assert_geq(fd, 0, "%s: %s", ro, strerror(errno));
	close(fd);
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare(CLONE_NEWNS): %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "private /: %s",
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

	cr_assert_lt(grew, ALLOWED,
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

	cr_assert_gt(grew, ALLOWED,
		     "memory cgroup %s of the loader grew by only %lld bytes with %d tagged "
		     "sockets: the fallback did not charge the tags to it",
		     memcg, grew, SOCKETS);
}
