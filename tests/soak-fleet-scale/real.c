// SPDX-License-Identifier: Apache-2.0
/* Real execgated instances of the fleet at scale (real.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <curl/curl.h>
#include <jansson.h>
#include "execgate/admin.h"
#include "loader/tiers/cgroup.h"
#include "soak-fleet-scale/real.h"

struct sc_real {
	pid_t pid;
	char dir[300], socket[340], config[340], log[340], state[340], pin[128], cgroup[300];
};

static struct sc_real reals[SC_REAL_MAX];
static int n_real;

struct body {
	char *buf;
	size_t len, size;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t k = sz * n, room = b->size - 1 - b->len;

	memcpy(b->buf + b->len, p, k < room ? k : room);
	b->len += k < room ? k : room;
	b->buf[b->len] = '\0';
	return k; /* a longer answer is cut, not failed: the callers read its head */
}

/* One request on the daemon's socket (libcurl, CURLOPT_UNIX_SOCKET_PATH):
 * the HTTP status, or -EIO with out naming curl's error. */
static int request(int r, const char *method, const char *path, const char *json, char *out,
		   size_t size)
{
	struct body b = {out, 0, size};
	struct curl_slist *h = NULL;
	char url[300];
	long status = 0;
	CURL *c = curl_easy_init();
	CURLcode rc;

	out[0] = '\0';
	if (!c) {
		snprintf(out, size, "curl_easy_init failed");
		return -ENOMEM;
	}
	snprintf(url, sizeof(url), "http://execgated%s", path);
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, reals[r].socket);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (json) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(out, size, "%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc == CURLE_OK ? (int)status : -EIO;
}

static int write_config(const struct sc_real *x, const struct sc_real_etcd *e,
			const char *worker_id)
{
	FILE *f = fopen(x->config, "w");

	if (!f)
		return -errno;
	/* etcd_reconcile_interval as the hollow workers' (main.c) */
	fprintf(f,
		"# written by tests/soak-fleet-scale\n"
		"pin_dir = %s\nstate_dir = %s\ncgroup = %s\nrequire = cgroup\nsocket = %s\n"
		"worker_id = %s\nthreads = 4\nconnection_timeout = 10\n"
		"etcd_endpoints = %s\netcd_prefix = %s\nroot_keys = %s\n"
		"etcd_reconcile_interval = 60\netcd_cacert = %s\netcd_cert = %s\netcd_key = %s\n"
		"etcd_user = %s\netcd_password_file = %s\n",
		x->pin, x->state, x->cgroup, x->socket, worker_id, e->endpoints, e->prefix,
		e->root_keys, e->cacert, e->cert, e->key, e->user, e->password_file);
	return fclose(f) ? -errno : 0;
}

static pid_t spawn(const char *bin, const char *config, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		/* the soak's main thread forks: the daemon ends with the soak */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execl(bin, "execgated", "--config", config, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int sc_real_start(const char *bin_dir, const char *dir, const struct sc_real_etcd *etcd,
		  const char *worker_id, char *err, size_t size)
{
	struct sc_real *x;
	char cgroot[256], bin[600], out[4096];
	int r, rc;

	if (n_real == SC_REAL_MAX) {
		snprintf(err, size, "at most %d real workers", SC_REAL_MAX);
		return -1;
	}
	if (!n_real && curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, size, "curl_global_init failed");
		return -1;
	}
	if (eg_cgroup2_root(cgroot, sizeof(cgroot))) {
		snprintf(err, size, "no cgroup v2 mount");
		return -1;
	}
	r = n_real;
	x = &reals[r];
	memset(x, 0, sizeof(*x));
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	snprintf(x->socket, sizeof(x->socket), "%s/api.sock", dir);
	snprintf(x->config, sizeof(x->config), "%s/execgated.conf", dir);
	snprintf(x->log, sizeof(x->log), "%s/execgated.log", dir);
	snprintf(x->state, sizeof(x->state), "%s/state", dir);
	snprintf(x->pin, sizeof(x->pin), "/sys/fs/bpf/egscale-%d-%d", (int)getpid(), r);
	if (mkdir(dir, 0700)) {
		snprintf(err, size, "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(x->cgroup, sizeof(x->cgroup), "%s/egscale-%d-%d", cgroot, (int)getpid(), r);
	if (mkdir(x->cgroup, 0755)) {
		snprintf(err, size, "%s: %s", x->cgroup, strerror(errno));
		x->cgroup[0] = '\0'; /* not ours: never removed */
		return -1;
	}
	n_real++; /* from here on sc_real_stop_all() takes it down */
	rc = write_config(x, etcd, worker_id);
	if (rc) {
		snprintf(err, size, "%s: %s", x->config, strerror(-rc));
		return -1;
	}
	snprintf(bin, sizeof(bin), "%s/execgated", bin_dir);
	x->pid = spawn(bin, x->config, x->log);
	if (x->pid < 0) {
		snprintf(err, size, "fork: %s", strerror(errno));
		return -1;
	}
	/* a load under TCG would be slower; on a host it takes a second or two */
	for (int i = 0; i < 600; i++) {
		int st;

		if (waitpid(x->pid, &st, WNOHANG) == x->pid) {
			snprintf(err, size,
				 "execgated of %s exited at start-up (status 0x%x); see %s",
				 worker_id, st, x->log);
			x->pid = 0;
			return -1;
		}
		if (request(r, "GET", "/v1/status", NULL, out, sizeof(out)) == 200)
			return r;
		usleep(50000);
	}
	snprintf(err, size, "execgated of %s: %s never answered 200 in 30 s; see %s", worker_id,
		 x->socket, x->log);
	return -1;
}

static bool reaped(pid_t pid, int tenths)
{
	for (int i = 0; i < tenths; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		usleep(100000);
	}
	return false;
}

void sc_real_stop_all(void)
{
	static int done;
	char err[256];
	int rc;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;
	for (int r = 0; r < n_real; r++) {
		struct sc_real *x = &reals[r];

		if (x->pid > 0) {
			kill(x->pid, SIGTERM);
			if (!reaped(x->pid, 50)) {
				kill(x->pid, SIGKILL);
				waitpid(x->pid, NULL, 0);
			}
		}
		/* the daemon leaves its pins (a restart must not open a gap) */
		rc = x->pin[0] ? eg_unload(x->pin, err, sizeof(err)) : 0;
		if (rc && rc != -ENOENT)
			fprintf(stderr, "soak-fleet-scale: unload %s: %s\n", x->pin, err);
		if (x->cgroup[0] && rmdir(x->cgroup) && errno != ENOENT)
			fprintf(stderr, "soak-fleet-scale: rmdir %s: %s\n", x->cgroup,
				strerror(errno));
	}
}

int sc_real_install(int r, const char *sandbox, const char *worker, uint64_t gen, char *out,
		    size_t size)
{
	char path[128], body[400];

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sandbox);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%llu,\"activation\":1,\"bridge_pid\":%d,"
		 "\"substrate\":\"firecracker-host\"}",
		 worker, (unsigned long long)gen, (int)getpid());
	return request(r, "PUT", path, body, out, size);
}

int sc_real_check(int r, const char *token, char *reason, size_t size)
{
	char body[1200], out[16384];
	json_t *o;
	const char *v, *why;
	int st, res;

	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"scope\":\"exec\"}", token);
	st = request(r, "POST", "/v1/check", body, out, sizeof(out));
	if (st != 200) {
		snprintf(reason, size, "POST /v1/check: %d %.200s", st, out);
		return -1;
	}
	o = json_loads(out, 0, NULL);
	v = json_string_value(json_object_get(o, "verdict"));
	why = json_string_value(json_object_get(o, "reason"));
	if (!v) {
		snprintf(reason, size, "POST /v1/check: no verdict in %.200s", out);
		res = -1;
	} else {
		snprintf(reason, size, "%s %s", v, why ? why : "-");
		res = !strcmp(v, "allow");
	}
	json_decref(o);
	return res;
}

int sc_real_connected(int r, char *endpoint, size_t size)
{
	char out[65536];
	json_t *o, *fleet;
	int res = -1;

	endpoint[0] = '\0';
	if (request(r, "GET", "/v1/status", NULL, out, sizeof(out)) != 200)
		return -1;
	o = json_loads(out, 0, NULL);
	fleet = json_object_get(o, "fleet");
	if (json_is_boolean(json_object_get(fleet, "connected"))) {
		res = json_is_true(json_object_get(fleet, "connected"));
		snprintf(endpoint, size, "%s",
			 json_string_value(json_object_get(fleet, "endpoint")) ?: "");
	}
	json_decref(o);
	return res;
}

pid_t sc_real_pid(int r)
{
	return reals[r].pid;
}

double sc_real_rss_mib(int r)
{
	char path[64];
	long pages = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)reals[r].pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%*d %ld", &pages) != 1)
		pages = 0;
	fclose(f);
	return (double)pages * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}
