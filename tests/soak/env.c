// SPDX-License-Identifier: Apache-2.0
/* The soak's scratch world: cgroup, pins, directory, children, the CLI and
 * the in-process issuer. Cleanup runs at exit and on SIGINT/SIGTERM, so a
 * failed or interrupted soak leaves nothing attached or pinned. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
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
#include <sodium.h>
#include "core/keyset.h"
#include "loader/tiers/cgroup.h"
#include "loader/maps/kreason.h"
#include "soak.h"

#define MAX_CHILDREN 64

struct soak_env se;
static pid_t children[MAX_CHILDREN];
static pid_t owner; /* only the soak itself cleans up, never a child */

void soak_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "soak: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1); /* atexit runs soak_cleanup */
}

/* A soak that cannot run fails, unless EXECGATE_ALLOW_SKIP=1 says a loud
 * skip is fine (as the kernel suite's not_offered.h). */
static void soak_not_offered(const char *why)
{
	const char *allow = getenv("EXECGATE_ALLOW_SKIP");

	if (allow && !strcmp(allow, "1")) {
		printf("SKIPPED: soak: %s (EXECGATE_ALLOW_SKIP=1)\n", why);
		exit(0);
	}
	soak_fail("cannot run: %s", why);
}

void soak_track(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (!children[i]) {
			children[i] = pid;
			return;
		}
	kill(pid, SIGKILL);
	soak_fail("more than %d children", MAX_CHILDREN);
}

void soak_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
}

pid_t soak_fork(void)
{
	pid_t pid = fork();

	if (pid < 0)
		soak_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != owner)
			_exit(99); /* the soak died before we got here */
		return 0;
	}
	soak_track(pid);
	return pid;
}

pid_t soak_dummy(void)
{
	pid_t pid = soak_fork();

	if (pid == 0)
		for (;;)
			pause();
	return pid;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 4096))
		return -1;
	return fd;
}

pid_t soak_listener(const char *a, const char *b)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC))
		soak_fail("pipe: %s", strerror(errno));
	pid = soak_fork();
	if (pid == 0) {
		struct pollfd p[2] = {{.fd = listen_on(a), .events = POLLIN},
				      {.fd = listen_on(b), .events = POLLIN}};

		if (p[0].fd < 0 || p[1].fd < 0)
			_exit(92);
		c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(93);
		for (;;) {
			if (poll(p, 2, -1) < 0)
				continue;
			for (int i = 0; i < 2; i++) {
				int fd;

				while ((fd = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
					close(fd);
			}
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c != 1)
		soak_fail("listener on %s, %s did not start", a, b);
	close(ready[0]);
	return pid;
}

void soak_enter(int cpu)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", se.cgroup);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		_exit(90);
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set); /* best effort */
	}
}

struct eg_proc_id soak_identify(pid_t pid)
{
	struct eg_subject s = {.pid = pid, .pidfd = -1};
	struct eg_process p;
	struct eg_proc_id id;
	char err[EG_ERR_MAX];

	if (eg_worker_identify(&s, &p, err, sizeof(err)))
		soak_fail("identify %d: %s", (int)pid, err);
	eg_proc_id_of(&p, &id);
	return id;
}

int soak_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd, rc = 0;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)))
		rc = -errno;
	close(fd);
	return rc;
}

/* --- the CLI ------------------------------------------------------------------- */

pid_t soak_cli_spawn(int out_fd, const char *const *args)
{
	const char *argv[48];
	int n = 0;
	pid_t pid;

	argv[n++] = se.bin;
	while (*args && n < 43)
		argv[n++] = *args++;
	argv[n++] = "--pin-dir";
	argv[n++] = se.pin_dir;
	argv[n++] = "--state-dir";
	argv[n++] = se.state_dir;
	argv[n] = NULL;
	pid = soak_fork();
	if (pid == 0) {
		int fd = out_fd >= 0 ? out_fd : open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int soak_cli(char *out, size_t size, const char *const *args)
{
	int p[2], status;
	size_t used = 0;
	ssize_t n;
	char sink[256];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		soak_fail("pipe: %s", strerror(errno));
	pid = soak_cli_spawn(p[1], args);
	close(p[1]);
	while ((n = read(p[0], used + 1 < size ? out + used : sink,
			 used + 1 < size ? size - 1 - used : sizeof(sink))) > 0)
		if (used + 1 < size)
			used += (size_t)n;
	close(p[0]);
	out[used] = '\0';
	waitpid(pid, &status, 0);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* --- the issuer ------------------------------------------------------------------ */

void soak_token(char out[EG_CAP_TEXT_MAX], const __u8 sandbox[EG_ID_BYTES], uint64_t generation,
		uint32_t activation, uint64_t ttl)
{
	struct eg_identity id;

	memset(&id, 0, sizeof(id));
	id.substrate = EG_SUBSTRATE_FC_HOST;
	memcpy(id.sandbox, sandbox, EG_ID_BYTES);
	memcpy(id.worker, se.worker, EG_ID_BYTES);
	id.generation = generation;
	id.activation = activation;
	soak_cap_text(out, se.sk, se.kid, &id, EG_SCOPE_FILE_READ | EG_SCOPE_EXEC, ttl);
}

void soak_sandbox(__u8 out[EG_ID_BYTES], unsigned scenario, unsigned n)
{
	char text[EG_UUID_TEXT_LEN];

	snprintf(text, sizeof(text), "5f0c2c1e-7a4b-4c1d-9e3f-%04x%08x", scenario & 0xffff, n);
	if (eg_uuid_from_text(text, out))
		soak_fail("bad sandbox id %s", text);
}

int soak_map(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", se.pin_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		soak_fail("pinned map %s: %s", path, strerror(errno));
	return fd;
}

/* --- kernel counters ----------------------------------------------------------- */

void soak_counters(uint64_t out[EG_K_REASON_COUNT])
{
	if (eg_worker_counters(se.w, out, EG_K_REASON_COUNT) != EG_K_REASON_COUNT)
		soak_fail("reading eg_counters");
}

void soak_counters_note(char *note, size_t size, const uint64_t before[EG_K_REASON_COUNT])
{
	uint64_t now[EG_K_REASON_COUNT];
	size_t len = strlen(note);
	bool first = true;

	soak_counters(now);
	for (int i = 0; i < EG_K_REASON_COUNT && len + 1 < size; i++) {
		if (now[i] == before[i])
			continue;
		snprintf(note + len, size - len, "%s%s %llu", first ? "; kernel: " : ", ",
			 eg_kreason_name((__u32)i), (unsigned long long)(now[i] - before[i]));
		len = strlen(note);
		first = false;
	}
}

/* --- setup / cleanup -------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

void soak_cleanup(void)
{
	char out[1024];
	static const char *const unload[] = {"unload", NULL};

	if (getpid() != owner)
		return;
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			waitpid(children[i], NULL, 0);
	memset(children, 0, sizeof(children));
	if (se.w)
		eg_worker_close(se.w);
	se.w = NULL;
	if (se.loaded && access(se.pin_dir, F_OK) == 0)
		soak_cli(out, sizeof(out), unload);
	se.loaded = false;
	/* Whatever unload left (it removes its own pins): never leave a
	 * pinned link attached. */
	if (se.pin_dir[0] && access(se.pin_dir, F_OK) == 0)
		nftw(se.pin_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (se.cgroup_made) {
		for (int i = 0; i < 200 && rmdir(se.cgroup) && errno == EBUSY; i++)
			usleep(10000);
		se.cgroup_made = false;
	}
	if (se.dir[0])
		nftw(se.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	se.dir[0] = '\0';
}

/* A soak that was SIGKILLed could not clean up; the next one removes what
 * it left: only egsoak-<pid> names whose pid no longer runs. */
static bool stale(const char *name)
{
	int pid, n = 0;

	if (sscanf(name, "egsoak-%d%n", &pid, &n) != 1 || name[n] || pid <= 0)
		return false;
	return kill(pid, 0) && errno == ESRCH;
}

static void sweep_stale(const char *cg_root)
{
	const char *roots[] = {"/sys/fs/bpf", cg_root, "/tmp"};
	char path[600], state[300];
	struct dirent *e;
	DIR *d;

	for (int i = 0; i < 3; i++) {
		d = opendir(roots[i]);
		while (d && (e = readdir(d))) {
			if (!stale(e->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", roots[i], e->d_name);
			if (i == 0) {
				pid_t pid = fork();

				snprintf(state, sizeof(state), "/tmp/%s/state", e->d_name);
				if (pid == 0) {
					int fd = open("/dev/null", O_WRONLY);

					dup2(fd, 1);
					dup2(fd, 2);
					execl(se.bin, se.bin, "unload", "--pin-dir", path,
					      "--state-dir", state, (char *)NULL);
					_exit(127);
				}
				if (pid > 0)
					waitpid(pid, NULL, 0);
			}
			if (i == 1)
				rmdir(path);
			else
				nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
			fprintf(stderr, "soak: removed %s, left by a soak that died\n", path);
		}
		if (d)
			closedir(d);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	/* a second signal must not cut the clean-up short */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	exit(130); /* atexit: soak_cleanup */
}

int soak_setup(const char *bin_dir)
{
	struct eg_worker_config cfg = {0};
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	char root[400], out[4096], err[EG_ERR_MAX], text[128], kid[EG_KID_TEXT_LEN];
	const char *load[] = {"load", "--cgroup", se.cgroup, "--require", "cgroup", NULL};
	int rc;

	owner = getpid();
	atexit(soak_cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (sodium_init() < 0)
		soak_fail("sodium_init failed");
	if (geteuid() != 0)
		soak_not_offered("needs root (BPF programs on a scratch cgroup)");
	snprintf(se.bin, sizeof(se.bin), "%s/execgate", bin_dir);
	if (access(se.bin, X_OK))
		soak_fail("%s: %s", se.bin, strerror(errno));
	snprintf(se.dir, sizeof(se.dir), "/tmp/egsoak-%d", (int)getpid());
	snprintf(se.state_dir, sizeof(se.state_dir), "%s/state", se.dir);
	snprintf(se.pin_dir, sizeof(se.pin_dir), "/sys/fs/bpf/egsoak-%d", (int)getpid());
	if (mkdir(se.dir, 0700))
		soak_fail("mkdir %s: %s", se.dir, strerror(errno));
	rc = eg_cgroup2_root(root, sizeof(root));
	if (rc)
		soak_fail("no cgroup v2 mount in /proc/self/mountinfo: %s", strerror(-rc));
	sweep_stale(root);
	snprintf(se.cgroup, sizeof(se.cgroup), "%s/egsoak-%d", root, (int)getpid());
	if (mkdir(se.cgroup, 0755))
		soak_fail("mkdir %s: %s", se.cgroup, strerror(errno));
	se.cgroup_made = true;

	se.loaded = true; /* from here on, cleanup unloads whatever got pinned */
	rc = soak_cli(out, sizeof(out), load);
	if (rc == 5) /* the documented "required tier not available" */
		soak_not_offered(out);
	if (rc)
		soak_fail("execgate load --cgroup %s: exit %d: %s", se.cgroup, rc, out);

	cfg.pin_dir = se.pin_dir;
	cfg.state_dir = se.state_dir;
	cfg.worker_id = SOAK_WORKER;
	rc = eg_worker_open(&cfg, &se.w, err, sizeof(err));
	if (rc)
		soak_fail("eg_worker_open: %s", err);
	if (eg_uuid_from_text(SOAK_WORKER, se.worker))
		soak_fail("bad worker id");

	/* The control plane's key: only its public half goes to the worker. */
	crypto_sign_keypair(pk, se.sk);
	eg_key_id(pk, se.kid);
	rc = snprintf(text, sizeof(text), "execgate-ed25519-public-v1 ");
	for (int i = 0; i < 32; i++)
		rc += snprintf(text + rc, sizeof(text) - (size_t)rc, "%02x", pk[i]);
	snprintf(text + rc, sizeof(text) - (size_t)rc, "\n");
	rc = eg_worker_keys_add_text(se.w, text, strlen(text), NULL, kid, err, sizeof(err));
	if (rc < 0)
		soak_fail("eg_worker_keys_add_text: %s", err);
	return 0;
}
