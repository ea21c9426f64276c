// SPDX-License-Identifier: Apache-2.0
/* The fleet soak's world: etcd, keys, the workers (daemon, cgroup, pins,
 * state, one TCP proxy per etcd member), children, and the cleanup that
 * removes all of it at exit, after a failure or on SIGINT/SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sodium.h>
#include "execgate/execgate.h"
#include "loader/tiers/cgroup.h"
#include "fleet.h"

#define MAX_CHILDREN 512

struct fs fs;
static pid_t children[MAX_CHILDREN];
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t owner;

void fs_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "soak-fleet: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1); /* atexit runs fs_cleanup */
}

void fs_track(pid_t pid)
{
	pthread_mutex_lock(&child_lock);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (!children[i]) {
			children[i] = pid;
			break;
		}
	pthread_mutex_unlock(&child_lock);
}

void fs_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pthread_mutex_lock(&child_lock);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
	pthread_mutex_unlock(&child_lock);
}

/* Forks a child that joins cgroup (when given), sends its output to log
 * (or /dev/null) and execs argv. */
pid_t fs_spawn_in(const char *cgroup, const char *const *argv, const char *log)
{
	pid_t pid = fork();

	if (pid < 0)
		fs_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cgroup) {
			char path[600], p[24];
			int c;

			snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
			snprintf(p, sizeof(p), "%d", (int)getpid());
			c = open(path, O_WRONLY);
			if (c < 0 || write(c, p, strlen(p)) < 0)
				_exit(126);
			close(c);
		}
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	fs_track(pid);
	return pid;
}

int fs_run(char *out, size_t size, const char *const *argv)
{
	int p[2], status;
	size_t n = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		fs_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fs_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], out + n, size - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (n + 1 >= size)
			break;
	}
	out[n] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* --- HTTP on a daemon's socket ------------------------------------------------- */

int fs_http(struct fs_worker *w, const char *method, const char *path, const char *body, char *out,
	    size_t size)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char req[4096];
	size_t n = 0, blen = body ? strlen(body) : 0;
	int fd, len, status = -1;
	char *b;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s", w->socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int e = errno;

		close(fd);
		return -e;
	}
	len = snprintf(req, sizeof(req),
		       "%s %s HTTP/1.1\r\nHost: execgated\r\nConnection: close\r\n"
		       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		       method, path, blen, body ? body : "");
	if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
		close(fd);
		return -EPIPE;
	}
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 5000) != 1) {
			close(fd);
			return -ETIMEDOUT;
		}
		r = recv(fd, out + n, size - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n + 1 >= size)
			break;
	}
	close(fd);
	out[n] = '\0';
	if (sscanf(out, "HTTP/1.1 %d", &status) != 1)
		return -EPROTO;
	b = strstr(out, "\r\n\r\n");
	if (b)
		memmove(out, b + 4, strlen(b + 4) + 1);
	return status;
}

/* --- the per-member TCP proxies of a worker ---------------------------------- */

struct pipe_ctx {
	struct fs_worker *w;
	int a, b;
};

static int listen_on(unsigned short port, unsigned short *bound)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 64)) {
		close(fd);
		return -1;
	}
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	if (bound)
		*bound = ntohs(sin.sin_port);
	return fd;
}

/* Copies both ways until either end closes or the worker is cut. */
static void *pipe_thread(void *arg)
{
	struct pipe_ctx *c = arg;
	char buf[16384];

	for (;;) {
		struct pollfd p[2] = {{.fd = c->a, .events = POLLIN},
				      {.fd = c->b, .events = POLLIN}};
		int r = poll(p, 2, 100);

		if (c->w->cut || fs.stop)
			break;
		if (r <= 0)
			continue;
		for (int i = 0; i < 2; i++)
			if (p[i].revents) {
				ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);

				if (n <= 0 ||
				    send(i ? c->a : c->b, buf, (size_t)n, MSG_NOSIGNAL) != n)
					goto out;
			}
	}
out:
	close(c->a);
	close(c->b);
	free(c);
	return NULL;
}

struct accept_ctx {
	struct fs_worker *w;
	int m;
};

static void *accept_thread(void *arg)
{
	struct accept_ctx *ac = arg;
	struct fs_proxy *px = &ac->w->px[ac->m];

	while (!fs.stop) {
		struct pollfd p;
		int fd, up;
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(px->upstream)};
		struct pipe_ctx *c;
		pthread_t t;

		if (ac->w->cut || px->lfd < 0) {
			usleep(50000);
			continue;
		}
		p = (struct pollfd){.fd = px->lfd, .events = POLLIN};
		if (poll(&p, 1, 100) != 1)
			continue;
		fd = accept4(px->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (up < 0 || connect(up, (struct sockaddr *)&sin, sizeof(sin))) {
			/* the member is down: refuse as it would */
			close(fd);
			if (up >= 0)
				close(up);
			continue;
		}
		c = malloc(sizeof(*c));
		*c = (struct pipe_ctx){ac->w, fd, up};
		if (pthread_create(&t, NULL, pipe_thread, c)) {
			close(fd);
			close(up);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

static void proxies_start(struct fs_worker *w)
{
	for (int m = 0; m < 3; m++) {
		struct accept_ctx *ac = malloc(sizeof(*ac));

		w->px[m].upstream = fs.etcd.m[m].client_port;
		w->px[m].lfd = listen_on(0, &w->px[m].port);
		if (w->px[m].lfd < 0)
			fs_fail("proxy for worker %d: %s", w->idx, strerror(errno));
		*ac = (struct accept_ctx){w, m};
		if (pthread_create(&w->px[m].thr, NULL, accept_thread, ac))
			fs_fail("proxy thread");
		pthread_detach(w->px[m].thr);
	}
}

/* Cut: the listeners close (connects are refused) and every proxied
 * connection is closed within 100 ms. Uncut: listen again on the same
 * ports. */
void fs_cut(struct fs_worker *w, bool cut)
{
	for (int m = 0; m < 3; m++) {
		if (cut && w->px[m].lfd >= 0) {
			int fd = w->px[m].lfd;

			w->px[m].lfd = -1;
			w->cut = true;
			usleep(150000); /* the accept thread stops polling it */
			close(fd);
		} else if (!cut && w->px[m].lfd < 0) {
			for (int i = 0; i < 50 && w->px[m].lfd < 0; i++) {
				w->px[m].lfd = listen_on(w->px[m].port, NULL);
				if (w->px[m].lfd < 0)
					usleep(100000);
			}
			if (w->px[m].lfd < 0)
				fs_fail("proxy port %u: cannot listen again", w->px[m].port);
		}
	}
	if (!cut)
		w->cut = false;
}

/* --- daemons ------------------------------------------------------------------ */

void fs_daemon_start(struct fs_worker *w)
{
	const char *argv[] = {NULL, "--config", w->config, NULL};
	char bin[600], out[8192];
	FILE *f = fopen(w->config, "w");

	if (!f)
		fs_fail("%s: %s", w->config, strerror(errno));
	/* etcd_reconcile_interval 600: no periodic full read during the
	 * quick run, so that the worker cut off etcd resumes its watch from
	 * a revision compacted meanwhile (the -ECANCELED path) rather than
	 * by a full read */
	fprintf(f,
		"# written by tests/soak-fleet\n"
		"pin_dir = %s\nstate_dir = %s\ncgroup = %s\nrequire = cgroup\nsocket = %s\n"
		"worker_id = %s\nthreads = 2\nconnection_timeout = 3\n"
		"etcd_endpoints = https://127.0.0.1:%u,https://127.0.0.1:%u,https://127.0.0.1:%u\n"
		"etcd_prefix = %s\nroot_keys = %s\netcd_reconcile_interval = 600\n"
		"etcd_cacert = %s\netcd_cert = %s\netcd_key = %s\netcd_user = worker-%d\n"
		"etcd_password_file = %s\n",
		w->pin, w->state, w->cgroup, w->socket, w->id, w->px[0].port, w->px[1].port,
		w->px[2].port, fs.prefix, fs.root_dir, fs.etcd.ca, fs.etcd.client_cert,
		fs.etcd.client_key, w->idx, w->etcd_pw);
	fclose(f);
	snprintf(bin, sizeof(bin), "%s/execgated", fs.bin);
	argv[0] = bin;
	w->daemon = fs_spawn_in(NULL, argv, w->log);
	for (int i = 0; i < 3000; i++) {
		int st;

		if (waitpid(w->daemon, &st, WNOHANG) == w->daemon)
			fs_fail("execgated of worker %d exited at start-up (status 0x%x); see %s",
				w->idx, st, w->log);
		if (fs_http(w, "GET", "/v1/status", NULL, out, sizeof(out)) == 200) {
			w->loaded = true;
			return;
		}
		usleep(10000);
	}
	fs_fail("execgated of worker %d: socket %s never answered", w->idx, w->socket);
}

/* The worker's etcd user and role (docs/fleet.md, "etcd roles"): read its
 * selections and the key set, write its acks. */
static void worker_role(struct fs_worker *w)
{
	char args[512], name[32];

	snprintf(name, sizeof(name), "worker-%d", w->idx);
	snprintf(args, sizeof(args), "role add %s", name);
	if (eg_test_etcdctl(&fs.etcd, args))
		fs_fail("etcd role %s", name);
	snprintf(args, sizeof(args),
		 "role grant-permission %s --prefix=true read %s/workers/%s/selections/", name,
		 fs.prefix, w->id);
	if (eg_test_etcdctl(&fs.etcd, args))
		fs_fail("etcd role %s: selections", name);
	snprintf(args, sizeof(args), "role grant-permission %s read %s/keyset", name, fs.prefix);
	if (eg_test_etcdctl(&fs.etcd, args))
		fs_fail("etcd role %s: keyset", name);
	snprintf(args, sizeof(args), "role grant-permission %s --prefix=true readwrite %s/acks/%s/",
		 name, fs.prefix, w->id);
	if (eg_test_etcdctl(&fs.etcd, args))
		fs_fail("etcd role %s: acks", name);
	if (eg_test_etcd_user(&fs.etcd, name, name, w->etcd_pw))
		fs_fail("etcd user %s", name);
}

void fs_daemon_kill(struct fs_worker *w)
{
	fs_reap(w->daemon);
	w->daemon = 0;
}

static void keygen(const char *dir, char *seed, size_t size)
{
	char bin[600], out[512];
	const char *argv[] = {bin, "keygen", "--out", dir, NULL};

	snprintf(bin, sizeof(bin), "%s/execgate-issue", fs.bin);
	if (fs_run(out, sizeof(out), argv))
		fs_fail("execgate-issue keygen: %s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(seed, size, "%s/%.64s.seed", dir, out);
}

static void put(const char *key, const char *value)
{
	char err[256];

	if (eg_etcd_put(fs.cli, key, value, strlen(value), NULL, err, sizeof(err)))
		fs_fail("etcd put %s: %s", key, err);
}

static void world_keys(void)
{
	char rootsec[200], cpdir[200], bin[600], out[4096], pub[320], dst[320], key[128];
	/* version 2, so that the forged-docs phase can replay an older one */
	const char *ks[] = {bin, "keyset", "--root-key", fs.root_seed, "--version", "2", pub, NULL};
	const char *cp[] = {"/bin/cp", NULL, NULL, NULL};

	snprintf(rootsec, sizeof(rootsec), "%s/rootsec", fs.dir);
	snprintf(cpdir, sizeof(cpdir), "%s/cp", fs.dir);
	snprintf(fs.root_dir, sizeof(fs.root_dir), "%s/root", fs.dir);
	mkdir(rootsec, 0700);
	mkdir(cpdir, 0700);
	mkdir(fs.root_dir, 0700);
	keygen(rootsec, fs.root_seed, sizeof(fs.root_seed));
	keygen(cpdir, fs.cp_seed, sizeof(fs.cp_seed));
	snprintf(pub, sizeof(pub), "%.*s.pub", (int)(strlen(fs.root_seed) - 5), fs.root_seed);
	snprintf(dst, sizeof(dst), "%s/%s", fs.root_dir, strrchr(pub, '/') + 1);
	cp[1] = pub;
	cp[2] = dst;
	if (fs_run(out, sizeof(out), cp))
		fs_fail("cp %s: %s", pub, out);
	snprintf(pub, sizeof(pub), "%.*s.pub", (int)(strlen(fs.cp_seed) - 5), fs.cp_seed);
	snprintf(bin, sizeof(bin), "%s/execgate-issue", fs.bin);
	if (fs_run(out, sizeof(out), ks))
		fs_fail("execgate-issue keyset: %s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(key, sizeof(key), "%s/keyset", fs.prefix);
	put(key, out);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static bool cleaned;

void fs_cleanup(void)
{
	char bin[600], out[2048];

	if (cleaned || getpid() != owner)
		return;
	cleaned = true;
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	fs.stop = 1;
	usleep(300000); /* threads see stop (they poll it every 200 ms at most) */
	for (int i = 0; i < FS_WORKERS; i++)
		if (fs.w[i].daemon) {
			kill(fs.w[i].daemon, SIGTERM);
			for (int k = 0; k < 50; k++) {
				if (waitpid(fs.w[i].daemon, NULL, WNOHANG) == fs.w[i].daemon)
					break;
				usleep(20000);
			}
			fs_reap(fs.w[i].daemon);
		}
	pthread_mutex_lock(&child_lock);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
			children[i] = 0;
		}
	pthread_mutex_unlock(&child_lock);
	snprintf(bin, sizeof(bin), "%s/execgate", fs.bin);
	for (int i = 0; i < FS_WORKERS; i++) {
		struct fs_worker *w = &fs.w[i];
		char procs[600];
		FILE *f;

		if (!w->cgroup[0])
			continue;
		/* whatever still runs in our scratch cgroup (per-connection
		 * children of the stand-ins, streams) is ours */
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", w->cgroup);
		for (int k = 0; k < 3 && (f = fopen(procs, "r")); k++) {
			int pid;

			while (fscanf(f, "%d", &pid) == 1)
				kill(pid, SIGKILL);
			fclose(f);
			usleep(50000);
		}
		/* also a daemon that pinned but had not answered yet (a
		 * signal during set-up): its pin dir exists */
		if (w->loaded || (w->pin[0] && !access(w->pin, F_OK))) {
			const char *argv[] = {bin,	     "unload", "--pin-dir", w->pin,
					      "--state-dir", w->state, NULL};

			if (fs_run(out, sizeof(out), argv))
				fprintf(stderr, "soak-fleet: unload %s: %s\n", w->pin, out);
		}
		for (int k = 0; k < 50 && rmdir(w->cgroup) && errno == EBUSY; k++)
			usleep(100000);
		rmdir(w->pin);
	}
	if (fs.dir[0] && !getenv("EXECGATE_SOAK_KEEP"))
		nftw(fs.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	/* the control plane's etcd handle is left to exit: a thread that
	 * failed may still hold it */
	eg_test_etcd_stop(&fs.etcd);
}

static void on_signal(int sig)
{
	(void)sig;
	/* a second signal (timeout(1) forwards the one it got) must not cut
	 * the clean-up short: it would leave pins and cgroups behind */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	exit(1);
}

void fs_setup(const char *bin, bool quick)
{
	char cgroot[400], err[256];

	owner = getpid();
	fs.quick = quick;
	snprintf(fs.bin, sizeof(fs.bin), "%s", bin);
	if (geteuid())
		fs_fail("needs root (BPF programs, cgroups)");
	if (sodium_init() < 0)
		fs_fail("sodium_init");
	atexit(fs_cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	snprintf(fs.dir, sizeof(fs.dir), "/tmp/egfleet-%d", (int)getpid());
	if (mkdir(fs.dir, 0700))
		fs_fail("mkdir %s: %s", fs.dir, strerror(errno));
	snprintf(fs.prefix, sizeof(fs.prefix), "/egsoak/%d", (int)getpid());
	if (eg_cgroup2_root(cgroot, sizeof(cgroot)))
		fs_fail("no cgroup v2 mount");
	/* etcd as production runs it: client TLS, auth on */
	if (eg_test_etcd_start_tls(3, true, 0, &fs.etcd))
		fs_fail("etcd with TLS and auth did not start");
	eg_test_etcd_auth(&fs.etcd, "root", fs.etcd.root_password_file, &fs.cp_auth);
	if (eg_etcd_open_auth(fs.etcd.endpoints, 2000, &fs.cp_auth, &fs.cli, err, sizeof(err)))
		fs_fail("etcd: %s", err);
	world_keys();
	for (int i = 0; i < FS_WORKERS; i++) {
		struct fs_worker *w = &fs.w[i];

		w->idx = i;
		pthread_mutex_init(&w->agent_lock, NULL);
		snprintf(w->id, sizeof(w->id), "c0000000-0000-4000-8000-0000000000%02x", i + 1);
		if (eg_uuid_from_text(w->id, w->id_bin))
			fs_fail("bad worker id %s", w->id);
		snprintf(w->dir, sizeof(w->dir), "%s/w%d", fs.dir, i);
		snprintf(w->state, sizeof(w->state), "%s/state", w->dir);
		snprintf(w->socket, sizeof(w->socket), "%s/api.sock", w->dir);
		snprintf(w->config, sizeof(w->config), "%s/execgated.conf", w->dir);
		snprintf(w->log, sizeof(w->log), "%s/execgated.log", w->dir);
		snprintf(w->pin, sizeof(w->pin), "/sys/fs/bpf/egfleet-%d-%d", (int)getpid(), i);
		snprintf(w->cgroup, sizeof(w->cgroup), "%s/egfleet-%d-%d", cgroot, (int)getpid(),
			 i);
		if (mkdir(w->dir, 0700))
			fs_fail("mkdir %s: %s", w->dir, strerror(errno));
		if (mkdir(w->cgroup, 0755)) {
			int e = errno;

			w->cgroup[0] = '\0'; /* not ours: never removed */
			fs_fail("mkdir cgroup: %s", strerror(e));
		}
		proxies_start(w);
		worker_role(w);
		fs_daemon_start(w);
		fs_agent_start(w);
	}
}
