// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "json_log.h"
#include "loader/tiers/cgroup.h"
#include "not_offered.h"
#include "restrict.h"

struct dd_env dd;
unsigned dd_next_restrict;
static unsigned dd_seq;

double dd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *daemon_bin(void)
{
	const char *b = getenv("EXECGATED_BIN");

	return b && *b ? b : "build/execgated";
}

void dd_setup(void)
{
	unsigned n = dd_seq++;
	struct rlimit rl;

	memset(&kh, 0, sizeof(kh));
	memset(&dd, 0, sizeof(dd));
	dd.restrictions = dd_next_restrict;
	dd_next_restrict = 0;
	kh_child_restrict = 0;
	if (geteuid() != 0)
		kh_not_offered(KH_NEED_ROOT, "not running as root");
	kh_on_skip(dd_teardown);
	kh_json_log_open();
	/* The 1000-connection test needs more than the usual 1024 fds. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	kh_scratch_make("egd", n);
	/* mkdtemp made it 0700: the daemon's clients include dropped users */
	cr_assert_eq(chmod(kh.dir, 0755), 0, "chmod %s: %s", kh.dir, strerror(errno));
	snprintf(dd.config, sizeof(dd.config), "%s/execgated.conf", kh.dir);
	snprintf(dd.socket, sizeof(dd.socket), "%s/api.sock", kh.dir);
	snprintf(dd.log, sizeof(dd.log), "%s/execgated.log", kh.dir);
	dd_start();
	kh.loaded = true;
}

static void show_log(void)
{
	char buf[4096];
	FILE *f = fopen(dd.log, "r");
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	cr_log_error("execgated log:\n%s", buf);
}

int dd_connect(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.107s", dd.socket);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

const char *dd_bin(void)
{
	return daemon_bin();
}

void dd_write_config(void)
{
	FILE *f = fopen(dd.config, "w");

	cr_assert_not_null(f, "config %s", dd.config);
	fprintf(f,
		"# written by tests/daemon\n"
		"pin_dir = %s\nstate_dir = %s\ncgroup = %s\nrequire = cgroup\nsocket = %s\n"
		"worker_id = %s\nadmit_group = %d\nadmin_group = %d\nthreads = 2\n"
		"connection_timeout = 3\n%s",
		kh.pin_dir, kh.state_dir, kh.cgroup, dd.socket, dd.worker ? dd.worker : DD_WORKER,
		DD_ADMIT_GID, DD_ADMIN_GID, dd.extra);
	fclose(f);
}

void dd_start(void)
{
	int status, fd;
	pid_t pid;

	dd_write_config();
	pid = fork();
	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		int lfd = open(dd.log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(lfd, 1);
		dup2(lfd, 2);
		if (dd.restrictions && kr_apply(dd.restrictions)) {
			dprintf(2, "dd_start: kr_apply: %s\n", strerror(errno));
			_exit(126);
		}
		if (dd.verbose)
			execl(daemon_bin(), "execgated", "--config", dd.config, "--verbose",
			      (char *)NULL);
		else
			execl(daemon_bin(), "execgated", "--config", dd.config, (char *)NULL);
		_exit(127);
	}
	dd.pid = pid;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			dd.pid = 0;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 5)
				kh_not_offered(KH_NEED_CGROUP,
					       "execgated: exit 5 (tier not offered)");
			show_log();
			cr_assert_fail("execgated exited at start-up: status 0x%x", status);
		}
		fd = dd_connect();
		if (fd >= 0) {
			close(fd);
			return;
		}
		usleep(10000);
	}
	show_log();
	cr_assert_fail("execgated: socket %s never answered", dd.socket);
}

int dd_stop(int sig)
{
	int status = 0;

	if (!dd.pid)
		return -1;
	kill(dd.pid, sig);
	for (int i = 0; i < 500; i++) {
		if (waitpid(dd.pid, &status, WNOHANG) == dd.pid) {
			dd.pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		usleep(10000);
	}
	kill(dd.pid, SIGKILL);
	waitpid(dd.pid, &status, 0);
	dd.pid = 0;
	return 128 + SIGKILL;
}

void dd_teardown(void)
{
	if (dd.pid)
		dd_stop(SIGTERM);
	kh_teardown();
}

/* --- HTTP ----------------------------------------------------------------------- */

void dd_resp_free(struct dd_resp *r)
{
	free(r->body);
	json_decref(r->json);
	r->body = NULL;
	r->json = NULL;
}

static struct dd_resp read_resp(int fd, int timeout_ms, const char *req, size_t req_len)
{
	struct dd_resp r = {.status = -ETIMEDOUT};
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap), *sep;
	double end = dd_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left = (int)(end - dd_now_ms());
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		if (len + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r.status = len ? 0 : -ECONNRESET;
			break;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (len >= 12 && !strncmp(buf, "HTTP/1.", 7))
		r.status = atoi(buf + 9);
	sep = strstr(buf, "\r\n\r\n");
	if (sep) {
		size_t hl = (size_t)(sep - buf);

		snprintf(r.head, sizeof(r.head), "%.*s", (int)hl, buf);
		r.body_len = len - hl - 4;
		r.body = malloc(r.body_len + 1);
		memcpy(r.body, sep + 4, r.body_len + 1);
		r.json = json_loadb(r.body, r.body_len, 0, NULL);
		/* Every JSON answer goes to the schema log (json_log.h); an
		 * answer that claims JSON but does not parse is logged too,
		 * and fails the check. */
		if (strcasestr(r.head, "\r\nContent-Type: application/json"))
			kh_json_log_api(req, req_len, r.status, r.body, r.body_len);
	} else {
		r.body = strdup("");
	}
	free(buf);
	return r;
}

struct dd_resp dd_read_resp(int fd, int timeout_ms, const char *req, size_t req_len)
{
	return read_resp(fd, timeout_ms, req, req_len);
}

struct dd_resp dd_raw(const void *bytes, size_t len, int timeout_ms)
{
	struct dd_resp r = {0};
	int fd = dd_connect();

	if (fd < 0) {
		r.status = fd;
		r.body = strdup("");
		return r;
	}
	if (len && write(fd, bytes, len) != (ssize_t)len) {
		r.status = -errno;
		r.body = strdup("");
		close(fd);
		return r;
	}
	r = read_resp(fd, timeout_ms, bytes, len);
	close(fd);
	return r;
}

struct dd_resp dd_req(const char *method, const char *path, const char *body)
{
	size_t blen = body ? strlen(body) : 0, hlen;
	char head[512], *msg;
	struct dd_resp r;

	hlen = (size_t)snprintf(head, sizeof(head),
				"%s %s HTTP/1.1\r\nHost: execgated\r\nConnection: close\r\n"
				"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
				method, path, blen);
	msg = malloc(hlen + blen);
	memcpy(msg, head, hlen);
	if (blen)
		memcpy(msg + hlen, body, blen);
	r = dd_raw(msg, hlen + blen, 10000);
	free(msg);
	return r;
}

static int req_as(uid_t uid, gid_t gid, const gid_t *supp, size_t nsupp, const char *method,
		  const char *path, const char *body, char *what, size_t what_size)
{
	int pfd[2], status = -1;
	char buf[300] = "";
	pid_t pid;
	ssize_t n;

	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct dd_resp r;
		const char *w;

		close(pfd[0]);
		if (setgroups(nsupp, supp) || setgid(gid) || setuid(uid))
			_exit(99);
		r = dd_req(method, path, body);
		w = dd_str(&r, "reason");
		if (!*w)
			w = dd_str(&r, "error");
		n = snprintf(buf, sizeof(buf), "%d %s", r.status, w);
		if (write(pfd[1], buf, (size_t)n) < 0)
			_exit(98);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	if (n > 0) {
		char *sp;

		buf[n] = '\0';
		status = atoi(buf);
		sp = strchr(buf, ' ');
		if (what)
			snprintf(what, what_size, "%s", sp ? sp + 1 : "");
	}
	return status;
}

int dd_req_as(uid_t uid, gid_t gid, const char *method, const char *path, const char *body,
	      char *what, size_t what_size)
{
	return req_as(uid, gid, NULL, 0, method, path, body, what, what_size);
}

int dd_req_as_member(uid_t uid, gid_t supp, const char *method, const char *path, const char *body,
		     char *what, size_t what_size)
{
	return req_as(uid, 65534, &supp, 1, method, path, body, what, what_size);
}

const char *dd_str(const struct dd_resp *r, const char *field)
{
	const char *s = json_string_value(json_object_get(r->json, field));

	return s ? s : "";
}

long long dd_int(const struct dd_resp *r, const char *field)
{
	return json_integer_value(json_object_get(r->json, field));
}

char *dd_admit_body(const char *token, const char *scope, int pid)
{
	json_t *o = json_pack("{s:s}", "token", token);
	char *s;

	if (scope)
		json_object_set_new(o, "scope", json_string(scope));
	if (pid)
		json_object_set_new(o, "pid", json_integer(pid));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

struct dd_resp dd_install(const char *sandbox, unsigned gen, unsigned act, pid_t bridge,
			  const char *bridge_sock)
{
	char path[128], body[1024];

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sandbox);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%u,\"activation\":%u,\"bridge_pid\":%d,"
		 "\"substrate\":\"firecracker-host\",\"bridge_sockets\":[\"%s\"]}",
		 DD_WORKER, gen, act, (int)bridge, bridge_sock);
	return dd_req("PUT", path, body);
}

void dd_keys(void)
{
	char out[512], pub[256], path[128];
	struct dd_resp r;
	FILE *f;
	size_t n;
	int rc;

	rc = kh_issue(out, sizeof(out), "keygen", "--out", kh.keys_dir, NULL);
	cr_assert_eq(rc, 0, "execgate-issue keygen: %s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kh.kid, sizeof(kh.kid), "%.31s", out);
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	f = fopen(pub, "r");
	cr_assert_not_null(f, "%s", pub);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	snprintf(path, sizeof(path), "/v1/keys/%s", kh.kid);
	r = dd_req("PUT", path, out);
	cr_assert_eq(r.status, 201, "PUT %s: %d %s", path, r.status, r.body);
	dd_resp_free(&r);
}

/* --- fds ------------------------------------------------------------------------- */

int dd_fd_count(void)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)dd.pid);
	d = opendir(path);
	cr_assert_not_null(d, "%s", path);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int dd_fd_settle(int want, int ms)
{
	double end = dd_now_ms() + ms;
	int n;

	while ((n = dd_fd_count()) > want && dd_now_ms() < end)
		usleep(20000);
	return n;
}

/* --- metrics --------------------------------------------------------------------- */

long long dd_metric(const char *line_prefix)
{
	struct dd_resp r = dd_req("GET", "/metrics", NULL);
	size_t len = strlen(line_prefix);
	const char *p = r.body;
	long long v = -1;

	/* at the start of a line only: a name is never taken for the tail
	 * of a longer one */
	while (p && (p = strstr(p, line_prefix)) != NULL) {
		if (p == r.body || p[-1] == '\n') {
			v = atoll(p + len);
			break;
		}
		p += len;
	}

	dd_resp_free(&r);
	return v;
}

long long dd_settled_key_reloads(void)
{
	long long n = dd_metric("execgate_key_reloads_total{result=\"ok\"} "), m;
	double end = dd_now_ms() + 3000;

	for (;;) {
		usleep(300000);
		m = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
		if (m == n || dd_now_ms() > end)
			return m;
		n = m;
	}
}

/* --- the daemon's log ------------------------------------------------------------ */

bool dd_log_has(const char *needle)
{
	static char buf[1 << 20];
	FILE *f = fopen(dd.log, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

const char *dd_log_tail(size_t max)
{
	static char buf[8192];
	FILE *f = fopen(dd.log, "r");
	size_t n = 0;
	long at;

	if (max >= sizeof(buf))
		max = sizeof(buf) - 1;
	if (f) {
		fseek(f, 0, SEEK_END);
		at = ftell(f);
		fseek(f, at > (long)max ? at - (long)max : 0, SEEK_SET);
		n = fread(buf, 1, max, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

bool dd_key_listed(struct dd_resp *r, const char *kid)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(r->json, "keys"), i, k)
	{
		if (!strcmp(json_string_value(json_object_get(k, "kid")), kid))
			return true;
	}
	return false;
}

void dd_fresh_check(char *reason, size_t size)
{
	char tok[1024], *body;
	struct dd_resp r;

	kh_cap(tok, sizeof(tok), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	body = dd_admit_body(tok, "file.read", 0);
	r = dd_req("POST", "/v1/check", body);
	free(body);
	cr_assert_eq(r.status, 200, "check: %d %s", r.status, r.body);
	snprintf(reason, size, "%s", dd_str(&r, "reason"));
	dd_resp_free(&r);
}
