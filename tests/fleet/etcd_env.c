/* SPDX-License-Identifier: Apache-2.0 */
/* A real etcd cluster for tests (tests/fleet/etcd_env.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
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
#include <sys/wait.h>
#include <curl/curl.h>
#include <jansson.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"

#define MAX_LIVE 8

static struct eg_test_etcd *live[MAX_LIVE];
static bool atexit_done;

static void stop_all(void)
{
	size_t i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i])
			eg_test_etcd_stop(live[i]);
}

static const char *etcd_bin(void)
{
	const char *b = getenv("EXECGATE_ETCD_BIN");

	return b && *b ? b : "/usr/bin/etcd";
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Distinct free loopback ports: all bound at once, then released. */
static int free_ports(unsigned short *ports, size_t n)
{
	int fds[2 * EG_TEST_ETCD_MAX];
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET};
		socklen_t len = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(fds[i], (struct sockaddr *)&a, &len)) {
			rc = -1;
			n = i + (fds[i] >= 0);
			break;
		}
		ports[i] = ntohs(a.sin_port);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return rc;
}

static pid_t spawn(struct eg_test_etcd *env, size_t i, bool fresh)
{
	struct eg_test_etcd_member *m = &env->m[i];
	char cluster[EG_TEST_ETCD_MAX * 64] = "", data[320], logf[320], peer[64], lp[64];
	char srv_cert[320], srv_key[320], ttl[16];
	const char *argv[64];
	size_t k, a = 0;
	pid_t pid;

	for (k = 0; k < env->n; k++) {
		size_t l = strlen(cluster);

		snprintf(cluster + l, sizeof(cluster) - l, "%s%s=http://127.0.0.1:%u", k ? "," : "",
			 env->m[k].name, env->m[k].peer_port);
	}
	snprintf(data, sizeof(data), "%s/%s.data", env->dir, m->name);
	snprintf(logf, sizeof(logf), "%s/%s.log", env->dir, m->name);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%u", m->peer_port);
	snprintf(lp, sizeof(lp), "%s", peer);
	snprintf(srv_cert, sizeof(srv_cert), "%s/server.pem", env->dir);
	snprintf(srv_key, sizeof(srv_key), "%s/server.key", env->dir);
	snprintf(ttl, sizeof(ttl), "%u", env->token_ttl);
	argv[a++] = etcd_bin();
	argv[a++] = "--name";
	argv[a++] = m->name;
	argv[a++] = "--data-dir";
	argv[a++] = data;
	argv[a++] = "--listen-client-urls";
	argv[a++] = m->client_url;
	argv[a++] = "--advertise-client-urls";
	argv[a++] = m->client_url;
	argv[a++] = "--listen-peer-urls";
	argv[a++] = lp;
	argv[a++] = "--initial-advertise-peer-urls";
	argv[a++] = peer;
	argv[a++] = "--initial-cluster";
	argv[a++] = cluster;
	argv[a++] = "--initial-cluster-state";
	argv[a++] = fresh ? "new" : "existing";
	argv[a++] = "--initial-cluster-token";
	argv[a++] = env->dir;
	argv[a++] = "--heartbeat-interval";
	argv[a++] = "50";
	argv[a++] = "--election-timeout";
	argv[a++] = "500";
	argv[a++] = "--experimental-watch-progress-notify-interval";
	argv[a++] = "1s";
	argv[a++] = "--log-level";
	argv[a++] = "warn";
	/* Debian 12's etcd 3.4.23 logs with capnslog unless told, and a
	 * member under load then panics on a nil logger where it warns of a
	 * slow ReadIndex (fixed upstream in 3.4.30): two of three members
	 * died so in soak-fleet-scale at 1 003 workers (docs/fleet.md, "The
	 * etcd members") */
	argv[a++] = "--logger";
	argv[a++] = "zap";
	if (env->tls) {
		argv[a++] = "--cert-file";
		argv[a++] = srv_cert;
		argv[a++] = "--key-file";
		argv[a++] = srv_key;
		argv[a++] = "--trusted-ca-file";
		argv[a++] = env->ca;
		argv[a++] = "--client-cert-auth";
		argv[a++] = "--auth-token";
		argv[a++] = "simple";
	}
	if (env->token_ttl) {
		argv[a++] = "--auth-token-ttl";
		argv[a++] = ttl;
	}
	argv[a] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(logf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		/* a member never outlives the test that started it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(etcd_bin(), (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void log_tails(struct eg_test_etcd *env)
{
	size_t i;

	for (i = 0; i < env->n; i++) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "tail -n 5 '%s/%s.log' >&2", env->dir, env->m[i].name);
		fprintf(stderr, "etcd_env: %s log tail:\n", env->m[i].name);
		if (system(cmd) < 0)
			break;
	}
}

/* One member answers a read (serializable reads still need it up). */
static bool member_answers(struct eg_test_etcd *env, struct eg_test_etcd_member *m, bool write)
{
	struct eg_etcd *e;
	struct eg_etcd_range r;
	char err[256];
	bool ok;

	if (eg_etcd_open_auth(m->client_url, 500, env->tls ? &env->admin : NULL, &e, err,
			      sizeof(err)))
		return false;
	if (write)
		ok = !eg_etcd_put(e, "/eg-test-ready", "1", 1, NULL, err, sizeof(err));
	else
		ok = !eg_etcd_get(e, "/eg-test-ready", false, &r, err, sizeof(err));
	if (ok && !write)
		eg_etcd_range_free(&r);
	eg_etcd_close(e);
	return ok;
}

static bool alive(pid_t pid)
{
	int st;

	return pid > 0 && waitpid(pid, &st, WNOHANG) == 0;
}

static int wait_member(struct eg_test_etcd *env, size_t i, bool write, double limit)
{
	double t0 = now_s();

	while (now_s() - t0 < limit) {
		if (!alive(env->m[i].pid)) {
			fprintf(stderr, "etcd_env: member %s exited\n", env->m[i].name);
			env->m[i].pid = 0;
			return -1;
		}
		if (member_answers(env, &env->m[i], write))
			return 0;
		usleep(50 * 1000);
	}
	fprintf(stderr, "etcd_env: member %s did not answer within %.0f s\n", env->m[i].name,
		limit);
	return -1;
}

/* The cluster's certificates, by openssl in env->dir. */
static int make_certs(struct eg_test_etcd *env)
{
	char cmd[4096];
	const char *d = env->dir;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; umask 077; "
		 "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
		 "-out $1.key 2>/dev/null; }; "
		 "ca() { key $1; openssl req -x509 -new -key $1.key -out $1.pem -days 2 "
		 "-subj /O=$1 2>/dev/null; }; "
		 "sign() { key $1; openssl req -new -key $1.key -out $1.csr -subj \"$2\" "
		 "2>/dev/null; printf '%%s\n' \"$3\" >$1.ext; "
		 "openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-out $1.pem -days 2 -extfile $1.ext 2>/dev/null; }; "
		 "ca ca; ca other-ca; "
		 "sign server /O=eg-test-etcd 'subjectAltName=IP:127.0.0.1'; "
		 "sign client /O=eg-test-client 'extendedKeyUsage=clientAuth'; "
		 "sign root /CN=root 'extendedKeyUsage=clientAuth'",
		 d);
	st = system(cmd);
	if (st != 0) {
		fprintf(stderr, "etcd_env: openssl could not make the certificates (status %d)\n",
			st);
		return -1;
	}
	snprintf(env->ca, sizeof(env->ca), "%s/ca.pem", d);
	snprintf(env->other_ca, sizeof(env->other_ca), "%s/other-ca.pem", d);
	snprintf(env->client_cert, sizeof(env->client_cert), "%s/client.pem", d);
	snprintf(env->client_key, sizeof(env->client_key), "%s/client.key", d);
	snprintf(env->root_cert, sizeof(env->root_cert), "%s/root.pem", d);
	snprintf(env->root_key, sizeof(env->root_key), "%s/root.key", d);
	eg_test_etcd_auth(env, NULL, NULL, &env->admin);
	return 0;
}

static int start(size_t n, bool tls, bool auth, unsigned ttl, struct eg_test_etcd *env);
static int enable_auth(struct eg_test_etcd *env);

int eg_test_etcd_start(size_t n, struct eg_test_etcd *env)
{
	return start(n, false, false, 0, env);
}

int eg_test_etcd_start_tls(size_t n, bool auth, unsigned ttl, struct eg_test_etcd *env)
{
	return start(n, true, auth, ttl, env);
}

static int start(size_t n, bool tls, bool auth, unsigned ttl, struct eg_test_etcd *env)
{
	unsigned short ports[2 * EG_TEST_ETCD_MAX];
	const char *tmp = getenv("EXECGATE_ETCD_TMPDIR");
	char tmpl[200];
	size_t i, slot;

	memset(env, 0, sizeof(*env));
	if (!n || n > EG_TEST_ETCD_MAX) {
		fprintf(stderr, "etcd_env: 1 to %d members\n", EG_TEST_ETCD_MAX);
		return -1;
	}
	if (access(etcd_bin(), X_OK)) {
		fprintf(stderr, "etcd_env: %s: %s (install etcd-server)\n", etcd_bin(),
			strerror(errno));
		return -1;
	}
	for (slot = 0; slot < MAX_LIVE && live[slot]; slot++)
		;
	if (slot == MAX_LIVE) {
		fprintf(stderr, "etcd_env: more than %d clusters at once\n", MAX_LIVE);
		return -1;
	}
	/* EXECGATE_ETCD_TMPDIR: the members' data elsewhere than /tmp (a
	 * tmpfs, for a soak on a machine whose disk other work saturates) */
	snprintf(tmpl, sizeof(tmpl), "%s/execgate-etcd.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "etcd_env: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(env->dir, sizeof(env->dir), "%s", tmpl);
	env->n = n;
	env->tls = tls;
	env->token_ttl = ttl;
	live[slot] = env;
	if (!atexit_done) {
		atexit(stop_all);
		atexit_done = true;
	}
	if (tls && make_certs(env))
		goto fail;
	if (free_ports(ports, 2 * n)) {
		fprintf(stderr, "etcd_env: no free loopback port\n");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		struct eg_test_etcd_member *m = &env->m[i];
		size_t l = strlen(env->endpoints);

		snprintf(m->name, sizeof(m->name), "m%zu", i);
		m->client_port = ports[2 * i];
		m->peer_port = ports[2 * i + 1];
		snprintf(m->client_url, sizeof(m->client_url), "%s://127.0.0.1:%u",
			 tls ? "https" : "http", m->client_port);
		snprintf(env->endpoints + l, sizeof(env->endpoints) - l, "%s%s", i ? "," : "",
			 m->client_url);
	}
	for (i = 0; i < n; i++) {
		env->m[i].pid = spawn(env, i, true);
		if (env->m[i].pid < 0) {
			env->m[i].pid = 0;
			fprintf(stderr, "etcd_env: fork: %s\n", strerror(errno));
			goto fail;
		}
	}
	for (i = 0; i < n; i++)
		if (wait_member(env, i, true, 15))
			goto fail;
	if (auth && enable_auth(env))
		goto fail;
	return 0;
fail:
	log_tails(env);
	eg_test_etcd_stop(env);
	return -1;
}

int eg_test_etcdctl(struct eg_test_etcd *env, const char *args)
{
	return eg_test_etcdctl_on(env, env->endpoints, 5, args);
}

int eg_test_etcdctl_on(struct eg_test_etcd *env, const char *endpoints, unsigned timeout_s,
		       const char *args)
{
	const char *bin = getenv("EXECGATE_ETCDCTL_BIN");
	char cmd[2048], auth[1100] = "";
	int st;

	if (env->tls)
		snprintf(auth, sizeof(auth), "--cacert '%s' --cert '%s' --key '%s' ", env->ca,
			 env->root_cert, env->root_key);
	snprintf(cmd, sizeof(cmd),
		 "ETCDCTL_API=3 %s --endpoints '%s' %s--dial-timeout 3s --command-timeout %us %s "
		 ">'%s/etcdctl.out' 2>&1 || { cat '%s/etcdctl.out' >&2; exit 1; }",
		 bin && *bin ? bin : "/usr/bin/etcdctl", endpoints, auth, timeout_s, args, env->dir,
		 env->dir);
	st = system(cmd);
	if (st != 0) {
		fprintf(stderr, "etcd_env: etcdctl %s: status %d\n", args, st);
		return -1;
	}
	return 0;
}

int eg_test_etcd_user(struct eg_test_etcd *env, const char *name, const char *role,
		      char *password_file)
{
	unsigned char rnd[12];
	char pw[32], args[256];
	FILE *f;
	int fd, rc;

	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(pw + 2 * i, 3, "%02x", rnd[i]);
	snprintf(password_file, 320, "%s/%s.password", env->dir, name);
	fd = open(password_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fprintf(f, "%s\n", pw) < 0 || fclose(f)) {
		fprintf(stderr, "etcd_env: %s: cannot write\n", password_file);
		return -1;
	}
	snprintf(args, sizeof(args), "user add %s --new-user-password=%s", name, pw);
	rc = eg_test_etcdctl(env, args);
	if (!rc && role) {
		snprintf(args, sizeof(args), "user grant-role %s %s", name, role);
		rc = eg_test_etcdctl(env, args);
	}
	return rc;
}

void eg_test_etcd_auth(const struct eg_test_etcd *env, const char *user, const char *password_file,
		       struct eg_etcd_auth *auth)
{
	memset(auth, 0, sizeof(*auth));
	auth->cacert = env->ca;
	auth->cert = env->client_cert;
	auth->key = env->client_key;
	auth->user = user;
	auth->password_file = password_file;
}

/* root (role root) with a password, then auth on; the env's own client
 * logs in as root from then on. */
static int enable_auth(struct eg_test_etcd *env)
{
	if (eg_test_etcd_user(env, "root", "root", env->root_password_file) ||
	    eg_test_etcdctl(env, "auth enable"))
		return -1;
	env->auth = true;
	eg_test_etcd_auth(env, "root", env->root_password_file, &env->admin);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void eg_test_etcd_stop(struct eg_test_etcd *env)
{
	size_t i;

	for (i = 0; i < env->n; i++)
		eg_test_etcd_kill_member(env, i);
	if (env->dir[0])
		nftw(env->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	env->dir[0] = '\0';
	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == env)
			live[i] = NULL;
}

int eg_test_etcd_kill_member(struct eg_test_etcd *env, size_t i)
{
	pid_t pid;

	if (i >= env->n)
		return -1;
	pid = env->m[i].pid;
	if (pid <= 0)
		return 0;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	env->m[i].pid = 0;
	return 0;
}

int eg_test_etcd_restart_member(struct eg_test_etcd *env, size_t i)
{
	if (i >= env->n || env->m[i].pid > 0)
		return -1;
	env->m[i].pid = spawn(env, i, false);
	if (env->m[i].pid < 0) {
		env->m[i].pid = 0;
		return -1;
	}
	/* a restarted member of a cluster with quorum serves a write */
	return wait_member(env, i, true, 15);
}

struct body {
	char *p;
	size_t n;
};

static size_t sink(char *d, size_t s, size_t n, void *ud)
{
	struct body *b = ud;
	size_t add = s * n;
	char *p;

	if (b->n + add > (64u << 20))
		return 0;
	p = realloc(b->p, b->n + add + 1);
	if (!p)
		return 0;
	memcpy(p + b->n, d, add);
	b->p = p;
	b->n += add;
	b->p[b->n] = '\0';
	return add;
}

char *eg_test_etcd_http(const struct eg_test_etcd *env, size_t i, const char *path,
			const char *post, long timeout_ms)
{
	struct body b = {NULL, 0};
	char url[160];
	CURLcode cc;
	CURL *h;

	if (i >= env->n || env->m[i].pid <= 0)
		return NULL;
	h = curl_easy_init();
	if (!h)
		return NULL;
	snprintf(url, sizeof(url), "%s%s", env->m[i].client_url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (post)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if (env->tls) {
		curl_easy_setopt(h, CURLOPT_CAINFO, env->ca);
		curl_easy_setopt(h, CURLOPT_SSLCERT, env->client_cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, env->client_key);
	}
	cc = curl_easy_perform(h);
	curl_easy_cleanup(h);
	if (cc != CURLE_OK || !b.p) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

int eg_test_etcd_leader(struct eg_test_etcd *env)
{
	const char *leader = NULL;
	char ids[EG_TEST_ETCD_MAX][32] = {{0}};
	char lead[32] = "";
	size_t i;

	for (i = 0; i < env->n; i++) {
		char *buf;
		json_t *j;

		buf = eg_test_etcd_http(env, i, "/v3/maintenance/status", "{}", 1000L);
		if (!buf)
			continue;
		j = json_loads(buf, 0, NULL);
		free(buf);
		leader = json_string_value(json_object_get(j, "leader"));
		snprintf(
		    ids[i], sizeof(ids[i]), "%s",
		    json_string_value(json_object_get(json_object_get(j, "header"), "member_id"))
			?: "");
		if (leader && strcmp(leader, "0"))
			snprintf(lead, sizeof(lead), "%s", leader);
		json_decref(j);
	}
	if (!lead[0])
		return -1;
	for (i = 0; i < env->n; i++)
		if (env->m[i].pid > 0 && !strcmp(ids[i], lead))
			return (int)i;
	return -1;
}
