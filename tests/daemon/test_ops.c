// SPDX-License-Identifier: Apache-2.0
/* Operating execgated: the config's one-line errors and exit 2, --help,
 * --version, the documented example config, the systemd unit
 * (systemd-analyze verify), key reload on SIGHUP and on a change in the
 * key directory (each flushing the verified-token cache), and sd_notify
 * READY=1 / STOPPING=1. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <execgate/execgate.h>
#include "dd.h"

static const char *bin(void)
{
	const char *b = getenv("EXECGATED_BIN");

	return b && *b ? b : "build/execgated";
}

/* Runs execgated --config on text; returns the exit code, output in out. */
static int with_config(const char *text, char *out, size_t size)
{
	char path[] = "/tmp/egd-config-XXXXXX";
	int fd = mkstemp(path), rc;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = kh_run(out, size, bin(), "--check-config", "--config", path, NULL);
	/* The message names the file: make it stable for the asserts. */
	{
		char *p = strstr(out, path);

		if (p) {
			memmove(p + 4, p + strlen(path), strlen(p + strlen(path)) + 1);
			memcpy(p, "FILE", 4);
		}
	}
	unlink(path);
	return rc;
}

#define WID "worker_id = a0000000-0000-4000-8000-00000000000a\n"

Test(daemon_config, one_line_errors_exit_2)
{
	char out[1024];

	cr_expect_eq(with_config(WID "bogus = 1\n", out, sizeof(out)), 2, "%s", out);
	cr_expect_str_eq(out, "execgated: config FILE:2: bogus: unknown key\n");
	cr_expect_eq(with_config(WID "# c\n\npin_dir = relative\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out,
			 "execgated: config FILE:4: pin_dir = relative: not an absolute path\n");
	cr_expect_eq(with_config(WID "require = most\n", out, sizeof(out)), 2);
	cr_expect_str_eq(
	    out, "execgated: config FILE:2: require = most: not one of cgroup, lsm, tcp, full\n");
	cr_expect_eq(with_config(WID "threads = 0\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:2: threads = 0: not a number in 1..64\n");
	cr_expect_eq(with_config(WID WID, out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:2: worker_id: given twice\n");
	cr_expect_eq(with_config("worker_id = nope\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:1: worker_id = nope: not a UUID\n");
	cr_expect_eq(with_config("socket = /run/x.sock\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out,
			 "execgated: config FILE: worker_id: not set: add \"worker_id = UUID\" to "
			 "it, this worker's id from the control plane or a new one (uuidgen, "
			 "or cat /proc/sys/kernel/random/uuid)\n");
	cr_expect_eq(
	    with_config("worker_id = 00000000-0000-0000-0000-000000000000\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out,
			 "execgated: config FILE:1: worker_id = "
			 "00000000-0000-0000-0000-000000000000: the nil UUID names no worker\n");
	cr_expect_eq(with_config(WID "admit_group = no-such-group-egd\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:2: admit_group = no-such-group-egd: no "
			      "such group\n");
	cr_expect_eq(with_config(WID "socket\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:2: expected key = value\n");
	cr_expect_eq(with_config(WID
				 "socket = /run/"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\n",
				 out, sizeof(out)),
		     2, "a socket path longer than sun_path: %s", out);

	cr_expect_eq(kh_run(out, sizeof(out), bin(), "--config", "/nonexistent/egd.conf", NULL), 2);
	cr_expect_str_eq(out,
			 "execgated: config /nonexistent/egd.conf: No such file or directory\n");
	/* The environment names the file when --config does not. */
	setenv("EXECGATE_CONFIG", "/nonexistent/env.conf", 1);
	cr_expect_eq(kh_run(out, sizeof(out), bin(), NULL), 2);
	cr_expect_str_eq(out,
			 "execgated: config /nonexistent/env.conf: No such file or directory\n");
	unsetenv("EXECGATE_CONFIG");
}

/* The fleet's etcd TLS and auth keys go together (docs/api.md,
 * "Configuration"; docs/fleet.md, "etcd roles"). */
Test(daemon_config, etcd_tls_and_auth_keys)
{
#define EP "etcd_endpoints = https://10.0.0.1:2379\nroot_keys = /etc/execgate/root\n"
	char out[4096];

	cr_expect_eq(with_config(WID "etcd_endpoints = http://10.0.0.1:2379\n", out, sizeof(out)),
		     2);
	cr_expect_str_eq(out, "execgated: config FILE:2: etcd_endpoints = http://10.0.0.1:2379: "
			      "endpoint 1: plain http:// to a host that is not loopback "
			      "(127.0.0.0/8, [::1], localhost): use https://\n");
	cr_expect_eq(with_config(WID "etcd_cacert = /ca.pem\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out,
			 "execgated: config FILE: etcd_cacert is set but etcd_endpoints is not\n");
	cr_expect_eq(with_config(WID EP "etcd_cert = /c.pem\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE: etcd_cert is set but etcd_key is not\n");
	cr_expect_eq(with_config(WID EP "etcd_key = /c.key\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE: etcd_key is set but etcd_cert is not\n");
	cr_expect_eq(with_config(WID EP "etcd_user = w\n", out, sizeof(out)), 2);
	cr_expect_str_eq(
	    out, "execgated: config FILE: etcd_user is set but etcd_password_file is not\n");
	cr_expect_eq(with_config(WID EP "etcd_password_file = /pw\n", out, sizeof(out)), 2);
	cr_expect_str_eq(
	    out, "execgated: config FILE: etcd_password_file is set but etcd_user is not\n");
	cr_expect_eq(with_config(WID "etcd_endpoints = http://127.0.0.1:2379\nroot_keys = /r\n"
				     "etcd_cacert = /ca.pem\n",
				 out, sizeof(out)),
		     2);
	cr_expect_str_eq(out, "execgated: config FILE: etcd_cacert or etcd_cert is set but no "
			      "etcd endpoint is https://\n");
	cr_expect_eq(with_config(WID EP "etcd_user = a b\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:4: etcd_user = a b: a blank, or longer than "
			      "255 bytes\n");
	cr_expect_eq(with_config(WID EP "etcd_cacert = ca.pem\n", out, sizeof(out)), 2);
	cr_expect_str_eq(out, "execgated: config FILE:4: etcd_cacert = ca.pem: not an absolute "
			      "path\n");
	cr_expect_eq(with_config(WID EP "etcd_cacert = /ca.pem\netcd_cert = /c.pem\n"
					"etcd_key = /c.key\netcd_user = worker-1\n"
					"etcd_password_file = /pw\n",
				 out, sizeof(out)),
		     0, "%s", out);
	cr_expect(strstr(out, "etcd_cacert = /ca.pem\netcd_cert = /c.pem\netcd_key = /c.key\n"
			      "etcd_user = worker-1\netcd_password_file = /pw\n"),
		  "%s", out);
	/* loopback stays plain HTTP, as the tests and the demo run it */
	cr_expect_eq(with_config(WID "etcd_endpoints = http://127.0.0.1:2379,http://[::1]:2379\n"
				     "root_keys = /r\n",
				 out, sizeof(out)),
		     0, "%s", out);
#undef EP
}

Test(daemon_config, defaults_help_version)
{
	char out[4096], want[64];

	cr_expect_eq(with_config(WID, out, sizeof(out)), 0, "%s", out);
	cr_expect(strstr(out, "socket = /run/execgate/api.sock\n"), "%s", out);
	cr_expect(strstr(out, "pin_dir = /sys/fs/bpf/execgate\n"), "%s", out);
	cr_expect(strstr(out, "state_dir = /var/lib/execgate\n"), "%s", out);
	cr_expect_eq(kh_run(out, sizeof(out), bin(), "--version", NULL), 0);
	snprintf(want, sizeof(want), "execgated %s\n", EXECGATE_VERSION);
	cr_expect_str_eq(out, want);
	cr_expect_eq(kh_run(out, sizeof(out), bin(), "--help", NULL), 0);
	cr_expect(strstr(out, "--config FILE"), "%s", out);
	cr_expect(strstr(out, "--check-config"), "%s", out);
	cr_expect_eq(kh_run(out, sizeof(out), bin(), "--bogus", NULL), 2);
}

/* The shipped config names no worker: as installed (make install, the
 * .deb) the daemon refuses to start, with exit 2 and a message that names
 * the file and says how to set the id. (The group the .deb creates stands
 * in as a numeric gid; the worker_id lines are untouched.) */
Test(daemon_config, shipped_config_needs_a_worker_id)
{
	char out[4096], cmd[1024], want[512], conf[64];
	int rc;

	snprintf(conf, sizeof(conf), "/tmp/egd-shipped-%d.conf", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "sed -e 's/^admit_group = .*/admit_group = 4242/' deploy/execgated.conf > %s && "
		 "%s --check-config --config %s; rc=$?; rm -f %s; exit $rc",
		 conf, bin(), conf, conf);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_expect_eq(rc, 2, "%s", out);
	snprintf(want, sizeof(want),
		 "execgated: config %s: worker_id: not set: add \"worker_id = UUID\" to it, "
		 "this worker's id from the control plane or a new one (uuidgen, or cat "
		 "/proc/sys/kernel/random/uuid)\n",
		 conf);
	cr_expect_str_eq(out, want);
}

/* The shipped example parses once a worker id is set (its group names are
 * site-specific: numeric gids stand in). */
Test(daemon_config, example_config_parses)
{
	char out[4096], cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "sed -e 's/^#worker_id =.*/worker_id = a0000000-0000-4000-8000-00000000000a/' "
		 "-e 's/^admit_group = .*/admit_group = 4242/' "
		 "-e 's/^#admin_group = .*/admin_group = 4243/' deploy/execgated.conf > "
		 "/tmp/egd-example-%d.conf && %s --check-config --config /tmp/egd-example-%d.conf; "
		 "rc=$?; rm -f /tmp/egd-example-%d.conf; exit $rc",
		 (int)getpid(), bin(), (int)getpid(), (int)getpid());
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_expect_eq(rc, 0, "deploy/execgated.conf: %s", out);
	cr_expect(strstr(out, "admin_group = 4243"), "%s", out);
}

Test(daemon_config, systemd_unit_verifies)
{
	char out[4096], cmd[1024];
	const char *unit = getenv("EXECGATE_UNIT");
	int rc;

	if (!unit || !*unit)
		unit = "deploy/systemd/execgated.service";
	/* verify wants ExecStart to exist: point it at the built binary. The
	 * man page comes with `make install`, so --man=no. */
	snprintf(
	    cmd, sizeof(cmd),
	    "d=$(mktemp -d) && sed 's|/usr/local/bin/execgated|%s|' %s > $d/execgated.service "
	    "&& systemd-analyze verify --man=no $d/execgated.service; rc=$?; rm -rf $d; exit $rc",
	    bin(), unit);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_expect_eq(rc, 0, "systemd-analyze verify: %s", out);
	cr_expect_str_eq(out, "", "systemd-analyze verify has remarks: %s", out);
	rc = kh_run(out, sizeof(out), "grep", "-c",
		    "^CapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_ADMIN "
		    "CAP_SYS_PTRACE CAP_DAC_OVERRIDE$",
		    unit, NULL);
	cr_expect_eq(rc, 0, "capabilities: %s", out);
	rc = kh_run(out, sizeof(out), "grep", "-c", "^Type=notify$", unit, NULL);
	cr_expect_eq(rc, 0, "Type=notify: %s", out);
	/* execgated's exit 2 (usage, config, a worker_id the node key is not
	 * bound to) and 5 (tier not offered) are not retried: a restart
	 * cannot fix them, and Restart=on-failure would loop. */
	rc = kh_run(out, sizeof(out), "grep", "-c", "^RestartPreventExitStatus=2 5$", unit, NULL);
	cr_expect_eq(rc, 0, "RestartPreventExitStatus=2 5: %s", out);
}

TestSuite(daemon_keys, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

static size_t keys_held(void)
{
	struct dd_resp r = dd_req("GET", "/v1/keys", NULL);
	size_t n = json_array_size(json_object_get(r.json, "keys"));

	dd_resp_free(&r);
	return n;
}

Test(daemon_keys, reload_on_directory_change_and_sighup)
{
	char out[1024], pub[256], kid2[32];
	double end;
	long long before;
	int rc;

	dd_keys();
	cr_assert_eq(keys_held(), 1);
	/* Another writer (the CLI) adds a key: inotify reloads. */
	rc = kh_issue(out, sizeof(out), "keygen", "--out", kh.keys_dir, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	out[strcspn(out, "\n")] = '\0';
	snprintf(kid2, sizeof(kid2), "%.31s", out);
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kid2);
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, NULL);
	cr_assert_eq(rc, 0, "execgate keys add: %s", out);
	end = dd_now_ms() + 3000;
	while (keys_held() != 2 && dd_now_ms() < end)
		usleep(20000);
	cr_expect_eq(keys_held(), 2, "the key directory change was not picked up");

	/* the add may raise more than one inotify event, each a reload:
	 * wait until none has come for 300 ms, so that the count below is
	 * the signal's alone (a fresh root once counted one more) */
	before = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
	end = dd_now_ms() + 3000;
	for (double quiet = dd_now_ms() + 300; dd_now_ms() < quiet && dd_now_ms() < end;) {
		long long now = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");

		if (now != before) {
			before = now;
			quiet = dd_now_ms() + 300;
		}
		usleep(20000);
	}
	cr_assert_geq(before, 1);
	cr_assert_eq(kill(dd.pid, SIGHUP), 0);
	end = dd_now_ms() + 3000;
	while (dd_metric("execgate_key_reloads_total{result=\"ok\"} ") == before &&
	       dd_now_ms() < end)
		usleep(20000);
	cr_expect_eq(dd_metric("execgate_key_reloads_total{result=\"ok\"} "), before + 1,
		     "SIGHUP did not reload");
	cr_expect_eq(keys_held(), 2);
	cr_expect_eq(kill(dd.pid, 0), 0, "SIGHUP killed the daemon");
}

static struct kh_child bridge;

/* A record for DD_SANDBOX at generation 8, and a check of t8 that says
 * whether the verified-token cache served it. */
static void sandbox_world(void)
{
	struct dd_resp r;

	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, kh_path("bridge.sock")), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, kh_path("bridge.sock"));
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	dd_resp_free(&r);
}

static void check_is(const char *token, const char *verdict, const char *reason, int cache_hit)
{
	char *body = dd_admit_body(token, "file.read", 0);
	struct dd_resp r = dd_req("POST", "/v1/check", body);

	free(body);
	cr_assert_eq(r.status, 200, "check: %d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "verdict"), verdict, "%s", r.body);
	cr_expect_str_eq(dd_str(&r, "reason"), reason, "%s", r.body);
	if (cache_hit >= 0)
		cr_expect_eq(json_is_true(json_object_get(r.json, "cache_hit")), cache_hit,
			     "cache_hit: %s", r.body);
	dd_resp_free(&r);
}

static void wait_reloads(long long want)
{
	double end = dd_now_ms() + 3000;

	while (dd_metric("execgate_key_reloads_total{result=\"ok\"} ") < want && dd_now_ms() < end)
		usleep(20000);
	cr_assert_geq(dd_metric("execgate_key_reloads_total{result=\"ok\"} "), want,
		      "no key reload");
}

/* A token the cache holds must not outlive its key, whichever way the key
 * set changes: a file removed behind the daemon's back (inotify), a key
 * put back over the API, a SIGHUP. */
Test(daemon_keys, every_reload_flushes_the_token_cache)
{
	char t8[1024], pub[300], text[512], path[128];
	long long reloads;
	struct dd_resp r;
	double end;
	FILE *f;
	size_t n;

	dd_keys();
	sandbox_world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	check_is(t8, "allow", "ok", 0);
	check_is(t8, "allow", "ok", 1);

	/* inotify: the key file goes, the cached verdict goes with it */
	snprintf(pub, sizeof(pub), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	f = fopen(pub, "r");
	cr_assert_not_null(f, "%s", pub);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	cr_assert_eq(unlink(pub), 0, "%s", pub);
	end = dd_now_ms() + 3000;
	while (keys_held() != 0 && dd_now_ms() < end)
		usleep(20000);
	cr_assert_eq(keys_held(), 0, "the removed key file was not picked up");
	check_is(t8, "deny", "unknown-key", 0);

	/* back over the API: verified afresh, then cached again */
	snprintf(path, sizeof(path), "/v1/keys/%s", kh.kid);
	r = dd_req("PUT", path, text);
	cr_assert_eq(r.status, 201, "%d %s", r.status, r.body);
	dd_resp_free(&r);
	/* The PUT wrote into the watched directory: let that reload land. */
	reloads = dd_settled_key_reloads();
	check_is(t8, "allow", "ok", 0);
	check_is(t8, "allow", "ok", 1);

	/* SIGHUP: same keys, cache flushed all the same. */
	cr_assert_eq(kill(dd.pid, SIGHUP), 0);
	wait_reloads(reloads + 1);
	check_is(t8, "allow", "ok", 0);
}

/* A key the API wrote is in memory when the PUT answers; the directory
 * watcher then sees the same write, re-reads the directory, finds the same
 * keys and keeps the cache. It used to flush it once more, ~50 ms after the
 * PUT, and a token cached in between lost its entry (a test that admitted
 * twice right after adding its key saw the second admit miss the cache).
 * A key that does change behind the daemon still flushes it: above. */
Test(daemon_keys, the_watcher_keeps_the_cache_for_the_daemons_own_key_write)
{
	char t8[1024];
	long long before;

	before = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
	dd_keys();
	sandbox_world();
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	check_is(t8, "allow", "ok", 0);
	check_is(t8, "allow", "ok", 1);
	wait_reloads(before + 1); /* the watcher's re-read of the PUT's file */
	dd_settled_key_reloads();
	check_is(t8, "allow", "ok", 1);
	cr_expect(dd_log_has("keys: reloaded (key directory changed), the same keys, token cache "
			     "kept"),
		  "no log line for the watcher's re-read");
}

TestSuite(daemon_notify, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* The next datagram on fd, or "" after ms. */
static void notify_next(int fd, char *out, size_t size, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	out[0] = '\0';
	if (poll(&p, 1, ms) != 1)
		return;
	n = recv(fd, out, size - 1, 0);
	out[n > 0 ? n : 0] = '\0';
}

/* Type=notify: READY=1 once the socket answers, STOPPING=1 on SIGTERM. */
Test(daemon_notify, ready_and_stopping)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char msg[256];
	int fd, st;

	cr_assert_eq(dd_stop(SIGTERM), 0);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.90s/notify.sock", kh.dir);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0, "bind %s", sun.sun_path);
	setenv("NOTIFY_SOCKET", sun.sun_path, 1);
	dd_start();
	unsetenv("NOTIFY_SOCKET");
	notify_next(fd, msg, sizeof(msg), 3000);
	cr_expect_str_eq(msg, "READY=1");
	{
		struct dd_resp r = dd_req("GET", "/v1/keys", NULL);

		cr_expect_eq(r.status, 200, "READY=1 before the API answers: %d", r.status);
		dd_resp_free(&r);
	}
	st = dd_stop(SIGTERM);
	cr_expect_eq(st, 0, "SIGTERM exit %d", st);
	notify_next(fd, msg, sizeof(msg), 3000);
	cr_expect_str_eq(msg, "STOPPING=1");
	notify_next(fd, msg, sizeof(msg), 200);
	cr_expect_str_eq(msg, "", "more notifications: %s", msg);
	close(fd);
}

TestSuite(daemon_worker_id, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* The node key is bound to the worker id of the first start. A start with a
 * corrected worker_id is refused, and the message names the way out;
 * after `execgate node-key reset --worker-id NEW` the daemon starts under
 * the new id, with a new node key. */
Test(daemon_worker_id, corrected_worker_id_needs_node_key_reset)
{
	char out[4096], cfg[256], cmd[1024], pub_a[256] = "", pub_b[256] = "", path[256];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/node.pub", kh.state_dir);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: the first start made a node key", path);
	cr_assert_not_null(fgets(pub_a, sizeof(pub_a), f));
	fclose(f);
	cr_assert_eq(dd_stop(SIGTERM), 0);

	snprintf(cfg, sizeof(cfg), "%s.b", dd.config);
	snprintf(cmd, sizeof(cmd), "sed 's/^worker_id = .*/worker_id = %s/' %s > %s", DD_WORKER_B,
		 dd.config, cfg);
	cr_assert_eq(system(cmd), 0);
	rc = kh_run(out, sizeof(out), bin(), "--config", cfg, NULL);
	/* A configuration error: 2, which the unit does not restart
	 * (RestartPreventExitStatus=, daemon_config.systemd_unit_verifies). */
	cr_expect_eq(rc, 2, "a start with another worker id: %s", out);
	cr_expect(strstr(out, "node key belongs to worker " DD_WORKER ", not " DD_WORKER_B), "%s",
		  out);
	snprintf(cmd, sizeof(cmd), "execgate node-key reset --state-dir %s --worker-id %s",
		 kh.state_dir, DD_WORKER_B);
	cr_expect(strstr(out, cmd), "the message names the way out (%s): %s", cmd, out);

	rc = kh_cli(out, sizeof(out), "node-key", "reset", NULL);
	cr_expect_eq(rc, 2, "reset without --worker-id: %s", out);
	rc = kh_cli(out, sizeof(out), "node-key", "reset", "--worker-id", DD_WORKER_B, NULL);
	cr_assert_eq(rc, 0, "node-key reset: %s", out);
	cr_expect(strstr(out, "replaced"), "%s", out);
	rc = kh_cli(out, sizeof(out), "node-key", "init", "--worker-id", DD_WORKER, NULL);
	cr_expect_eq(rc, 6, "the key now belongs to the new id: %s", out);

	dd.worker = DD_WORKER_B;
	dd_start();
	{
		struct dd_resp r = dd_req("GET", "/v1/keys", NULL);

		cr_expect_eq(r.status, 200, "the daemon serves under the new id: %d", r.status);
		dd_resp_free(&r);
	}
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(pub_b, sizeof(pub_b), f));
	fclose(f);
	cr_expect_str_neq(pub_a, pub_b, "the reset made a new node key");
}

TestSuite(daemon_state_dir, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* The state dir and its keys/ as the unit makes them (StateDirectoryMode=
 * 0755): a hand-run daemon, started here, creates them the same, whatever
 * umask it was started under. */
Test(daemon_state_dir, made_0755_as_the_unit_makes_it)
{
	char keys[300], cmd[600], out[4096];
	struct stat st;
	int rc;

	snprintf(keys, sizeof(keys), "%s/keys", kh.state_dir);
	cr_assert_eq(stat(kh.state_dir, &st), 0, "%s: %s", kh.state_dir, strerror(errno));
	cr_expect_eq(st.st_mode & 07777, 0755, "%s: mode %o", kh.state_dir, st.st_mode & 07777);
	cr_assert_eq(stat(keys, &st), 0, "%s: %s", keys, strerror(errno));
	cr_expect_eq(st.st_mode & 07777, 0755, "%s: mode %o", keys, st.st_mode & 07777);

	/* Again from nothing, started under a umask that would make 0700. */
	cr_assert_eq(dd_stop(SIGTERM), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", kh.state_dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "umask 077 && exec timeout 8 %s --config %s", bin(), dd.config);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	/* timeout's 124: it served until killed */
	cr_expect_eq(rc, 124, "%s", out);
	cr_assert_eq(stat(kh.state_dir, &st), 0, "%s: %s", kh.state_dir, strerror(errno));
	cr_expect_eq(st.st_mode & 07777, 0755, "under umask 077: %s: mode %o", kh.state_dir,
		     st.st_mode & 07777);
	dd_start();
}

TestSuite(daemon_docs, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* A file of the repository, read whole (the tests run from its top). */
static char *repo_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s: run from the repository's top directory", path);
	cr_assert_eq(getdelim(&buf, &len, '\0', f) > 0, true, "%s: empty", path);
	fclose(f);
	return buf;
}

/* What the docs show an operator matches what the daemon and the CLI use:
 * the node key file's typed line in GET /v1/node-key's example, and the
 * key directory of the README's offline check (the default state dir's). */
Test(daemon_docs, node_key_example_and_key_dir_are_the_real_ones)
{
	struct dd_resp r = dd_req("GET", "/v1/node-key", NULL);
	char want[128], *api = repo_file("docs/api.md"), *readme = repo_file("README.md");
	const char *pub;
	size_t n;

	cr_assert_eq(r.status, 200, "%s", r.body);
	pub = dd_str(&r, "public_key_file");
	n = strcspn(pub, " ");
	cr_assert(n > 0 && pub[n] == ' ', "not a typed key line: %s", pub);
	snprintf(want, sizeof(want), "\"public_key_file\":\"%.*s ", (int)n, pub);
	cr_expect(strstr(api, want), "docs/api.md's node-key example does not start %s", want);
	dd_resp_free(&r);
	snprintf(want, sizeof(want), "execgate check --keys %s/keys ", EG_WORKER_DEFAULT_STATE_DIR);
	cr_expect(strstr(readme, want), "README.md's offline check does not use %s", want);
	free(api);
	free(readme);
}
