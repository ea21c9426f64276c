// SPDX-License-Identifier: Apache-2.0
/* The TCP tier through execgated's API, and the daemon under each
 * restriction its systemd unit sets.
 *
 * daemon_tcp: PUT /v1/sandboxes/{uuid} with service_addrs and ports is
 * enforced on a real TCP connect from a gateway in a network namespace of
 * the test's own (tests/kernel/tcp_env.h, loopback only), GET shows the
 * addresses, the denial event names the destination, and install answers
 * warn about endpoints no loaded tier enforces.
 *
 * daemon_restrict: the real daemon runs under a seccomp filter and a
 * capability bounding set (tests/kernel/restrict.h) emulating
 * RestrictNamespaces=, RestrictAddressFamilies= and CapabilityBoundingSet=.
 * GET /v1/status must say NOT HELD, with the reason, for every guarantee
 * the restriction takes away, and an install whose revocation needs the
 * refused step must answer an error (500), never 200 with nothing cut. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "not_offered.h"
#include "restrict.h"
#include "tcp_env.h"

#define SB_PATH "/v1/sandboxes/" DD_SANDBOX

static void tcp_setup(void)
{
	dd_setup();
}

TestSuite(daemon_tcp, .init = tcp_setup, .fini = dd_teardown, .timeout = 120);
TestSuite(daemon_restrict, .fini = dd_teardown, .timeout = 180);

/* The status object's guarantee named name. */
static json_t *guarantee(const struct dd_resp *r, const char *name)
{
	json_t *g = json_object_get(r->json, "guarantees"), *v;
	size_t i;

	json_array_foreach(
	    g, i, v) if (!strcmp(json_string_value(json_object_get(v, "name")), name)) return v;
	cr_assert_fail("status has no guarantee %s: %s", name, r->body);
	return NULL;
}

static bool tier_loaded(const struct dd_resp *r, const char *name)
{
	json_t *t = json_object_get(r->json, "tiers"), *v;
	size_t i;

	json_array_foreach(t, i,
			   v) if (!strcmp(json_string_value(json_object_get(v, "name")),
					  name)) return json_is_true(json_object_get(v, "loaded"));
	return false;
}

/* The serving step named name: allowed, and why not. */
static bool step_allowed(const struct dd_resp *r, const char *name, const char **why)
{
	json_t *s = json_object_get(json_object_get(r->json, "serving"), "steps"), *v;
	size_t i;

	json_array_foreach(s, i,
			   v) if (!strcmp(json_string_value(json_object_get(v, "name")), name))
	{
		*why = json_string_value(json_object_get(v, "why_not"));
		return json_is_true(json_object_get(v, "allowed"));
	}
	cr_assert_fail("status has no serving step %s: %s", name, r->body);
	return false;
}

static struct dd_resp status(void)
{
	struct dd_resp r = dd_req("GET", "/v1/status", NULL);

	cr_assert_eq(r.status, 200, "status: %d %s", r.status, r.body);
	return r;
}

static void tcp_tier_or_skip(void)
{
	struct dd_resp r = status();
	bool loaded = tier_loaded(&r, "tcp");

	dd_resp_free(&r);
	if (!loaded)
		kh_not_offered(KH_NEED_ANY, "tcp tier not loaded (GET /v1/status)");
}

/* PUT generation gen: the guest at TE_GUEST_ADDR and ::1, TCP 7000 and
 * UDP 7001. */
static struct dd_resp install(unsigned gen)
{
	char body[1024];

	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%u,\"activation\":1,\"bridge_pid\":%d,"
		 "\"service_addrs\":[\"%s\",\"::1\"],\"ports\":[\"7000/tcp\",\"7001/udp\"]}",
		 DD_WORKER, gen, (int)getpid(), TE_GUEST_ADDR);
	return dd_req("PUT", SB_PATH, body);
}

static long long tcp_cut(const struct dd_resp *r)
{
	return json_integer_value(json_object_get(json_object_get(r->json, "streams"), "tcp_cut"));
}

/* A ServicePort grant for the gateway for generation gen, TCP 7000, over
 * POST /v1/admit. */
static void admit_gateway(struct te_env *e, unsigned gen)
{
	char tok[1024], seed[256], g[16], *body;
	struct dd_resp r;
	int rc;

	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	snprintf(g, sizeof(g), "%u", gen);
	rc = kh_issue(tok, sizeof(tok), "cap", "--key", seed, "--sandbox", DD_SANDBOX, "--worker",
		      DD_WORKER, "--generation", g, "--activation", "1", "--scope", "serviceport",
		      "--port", "7000/tcp", "--ttl", "120", NULL);
	cr_assert_eq(rc, 0, "execgate-issue cap: %s", tok);
	tok[strcspn(tok, "\n")] = '\0';
	body = dd_admit_body(tok, NULL, e->gateway);
	r = dd_req("POST", "/v1/admit", body);
	free(body);
	cr_assert_eq(r.status, 200, "admit: %d %s", r.status, r.body);
	cr_assert_str_eq(dd_str(&r, "verdict"), "allow", "admit: %s", r.body);
	dd_resp_free(&r);
}

/* Keys, the gateway and guest, generation 7 installed, the gateway
 * granted, and one admitted stream in slot 0 that echoes. */
static void granted_stream(struct te_env *e)
{
	struct dd_resp r;

	dd_keys();
	te_start(e);
	r = install(7);
	cr_assert_eq(r.status, 200, "install 7: %d %s", r.status, r.body);
	dd_resp_free(&r);
	admit_gateway(e, 7);
	cr_assert_eq(te_connect(e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(e, 0), 0);
	cr_assert_eq(te_recv(e, 0), 1, "the admitted stream echoes");
}

/* Reads the event stream on fd until a line holding needle arrives (or ms
 * pass); the line, parsed. */
static json_t *event_line(int fd, const char *needle, int ms)
{
	static char buf[65536];
	double end = dd_now_ms() + ms;
	size_t keep = 0;

	while (dd_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char *hit, *nl, *start;
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + keep, sizeof(buf) - 1 - keep);
		if (n <= 0)
			return NULL;
		keep += (size_t)n;
		buf[keep] = '\0';
		hit = strstr(buf, needle);
		if (!hit || !(nl = strchr(hit, '\n'))) {
			continue;
		}
		*nl = '\0';
		start = hit;
		while (start > buf && start[-1] != '\n')
			start--;
		return json_loads(start, 0, NULL);
	}
	return NULL;
}

/* Opens GET /v1/events and reads its header, byte by byte (nothing of the
 * stream after it): from then on the daemon counts this reader. */
static int events_open(void)
{
	const char *req = "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n";
	char head[4096];
	size_t n = 0;
	int fd = dd_connect();

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (n + 1 < sizeof(head)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		cr_assert_gt(poll(&p, 1, 5000), 0, "GET /v1/events: no header");
		cr_assert_eq(read(fd, head + n, 1), 1, "GET /v1/events: closed");
		head[++n] = '\0';
		if (n >= 4 && !memcmp(head + n - 4, "\r\n\r\n", 4))
			break;
	}
	cr_assert(strstr(head, " 200 "), "GET /v1/events: %s", head);
	return fd;
}

/* --- daemon_tcp ---------------------------------------------------------------- */

/* service_addrs + ports over the API: enforced on a real connect, shown by
 * GET, the denial event carries the destination, and a new generation
 * cuts the admitted stream. */
/* guarantees: tcp-serviceport-profile tcp-stream-revocation */
Test(daemon_tcp, service_addrs_are_enforced_shown_and_named_in_events)
{
	json_t *ev, *inet, *addrs;
	struct dd_resp r;
	struct te_env e;
	int fd;

	tcp_tier_or_skip();
	dd_keys();
	te_start(&e);
	r = install(7);
	cr_assert_eq(r.status, 200, "install 7: %d %s", r.status, r.body);
	cr_assert(json_is_array(json_object_get(r.json, "warnings")), "%s", r.body);
	cr_expect_eq(json_array_size(json_object_get(r.json, "warnings")), 0,
		     "nothing unenforced: %s", r.body);
	dd_resp_free(&r);

	fd = events_open();
	/* Registered, no grant: EPERM, and an event naming the destination. */
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM);
	ev = event_line(fd, "\"hook\":\"connect4\"", 5000);
	cr_assert_not_null(ev, "no connect4 denial event");
	inet = json_object_get(ev, "inet");
	cr_assert(json_is_object(inet), "event without inet");
	cr_expect_str_eq(json_string_value(json_object_get(inet, "addr")), TE_GUEST_ADDR);
	cr_expect_eq(json_integer_value(json_object_get(inet, "port")), TE_TCP_PORT);
	cr_expect_str_eq(json_string_value(json_object_get(inet, "proto")), "tcp");
	cr_expect_str_eq(json_string_value(json_object_get(ev, "sandbox")), DD_SANDBOX);
	json_decref(ev);
	cr_assert_eq(te_connect(&e, 1, "::1", TE_TCP_PORT, false), -EPERM, "v6 address too");
	ev = event_line(fd, "\"hook\":\"connect6\"", 5000);
	cr_assert_not_null(ev, "no connect6 denial event");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(ev, "inet"), "addr")),
			 "::1");
	json_decref(ev);
	close(fd);
	/* An address not registered passes. */
	cr_assert_eq(te_connect(&e, 2, TE_OTHER_ADDR, TE_TCP_PORT, false), 0);

	/* Granted: the connect passes and the stream echoes. */
	admit_gateway(&e, 7);
	cr_assert_eq(te_connect(&e, 3, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(&e, 3), 0);
	cr_assert_eq(te_recv(&e, 3), 1);

	r = dd_req("GET", SB_PATH, NULL);
	cr_assert_eq(r.status, 200, "GET: %d %s", r.status, r.body);
	addrs = json_object_get(json_object_get(r.json, "record"), "service_addrs");
	cr_assert(json_is_array(addrs), "no service_addrs: %s", r.body);
	cr_expect_eq(json_array_size(addrs), 2, "%s", r.body);
	cr_expect(strstr(r.body, "\"" TE_GUEST_ADDR "\"") && strstr(r.body, "\"::1\""), "%s",
		  r.body);
	dd_resp_free(&r);

	/* Generation 8: the stream of 7 is cut. */
	r = install(8);
	cr_assert_eq(r.status, 200, "install 8: %d %s", r.status, r.body);
	cr_expect_eq(tcp_cut(&r), 1, "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(te_peer_state(&e, 3, TE_CUT_WAIT_MS), -ECONNRESET,
		     "guest end of the cut stream");
	cr_expect_eq(te_send(&e, 3), -ECONNABORTED, "gateway end of the cut stream");
	cr_expect_eq(te_send(&e, 2), 0, "the stream to an unregistered address stays");
}

Test(daemon_tcp, bad_service_addrs_are_refused_and_nothing_is_written)
{
	static const char *const bad[] = {"[\"not-an-ip\"]", "[\"0.0.0.0\"]",
					  "[\"224.0.0.1\"]", "[7]",
					  "\"127.0.0.2\"",   "[\"::\"]"};
	char body[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dd_resp r;

		snprintf(body, sizeof(body),
			 "{\"worker\":\"%s\",\"generation\":1,\"activation\":1,\"bridge_pid\":%d,"
			 "\"service_addrs\":%s}",
			 DD_WORKER, (int)getpid(), bad[i]);
		r = dd_req("PUT", SB_PATH, body);
		cr_expect_eq(r.status, 400, "%s: %d %s", bad[i], r.status, r.body);
		cr_expect(strstr(dd_str(&r, "reason"), "service_addrs"), "%s: %s", bad[i], r.body);
		dd_resp_free(&r);
	}
	{
		struct dd_resp r = dd_req("GET", SB_PATH, NULL);

		cr_expect_eq(r.status, 404, "nothing installed: %d %s", r.status, r.body);
		dd_resp_free(&r);
	}
}

/* The host has no BPF LSM: a vsock endpoint installs, and the answer says
 * nothing checks it. Ports without an address warn too. */
Test(daemon_tcp, install_warns_about_endpoints_no_tier_enforces)
{
	struct dd_resp r = status();
	bool lsm = tier_loaded(&r, "lsm");
	char body[512];
	json_t *w;

	dd_resp_free(&r);
	if (lsm)
		kh_not_offered(KH_NEED_NO_LSM, "the lsm tier is loaded: vsock is enforced here");
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":1,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vsock\":[{\"cid\":3,\"port\":5000}],\"ports\":[\"8080/tcp\"]}",
		 DD_WORKER, (int)getpid());
	r = dd_req("PUT", SB_PATH, body);
	cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
	w = json_object_get(r.json, "warnings");
	cr_assert(json_is_array(w), "%s", r.body);
	cr_expect(strstr(r.body, "\"code\":\"vsock-not-enforced\""), "%s", r.body);
	cr_expect(strstr(r.body, "\"code\":\"ports-without-service-addrs\""), "%s", r.body);
	dd_resp_free(&r);
	cr_expect(dd_log_has("vsock-not-enforced"), "the warning is logged");

	/* CID 2 is the host: refused, as the CLI refuses it. */
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":2,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vsock\":[{\"cid\":2,\"port\":5000}]}",
		 DD_WORKER, (int)getpid());
	r = dd_req("PUT", SB_PATH, body);
	cr_expect_eq(r.status, 400, "CID 2: %d %s", r.status, r.body);
	dd_resp_free(&r);
}

/* --- daemon_restrict ------------------------------------------------------------ */

static void setup_no_namespaces(void)
{
	dd_next_restrict = KR_NO_NAMESPACES;
	dd_setup();
}

static void setup_no_inet(void)
{
	dd_next_restrict = KR_DENY_AF_INET | KR_DENY_AF_INET6 | KR_DENY_AF_NETLINK;
	dd_setup();
}

static void setup_no_ptrace(void)
{
	dd_next_restrict = KR_DROP_SYS_PTRACE;
	dd_setup();
}

/* RestrictNamespaces=yes: setns into the gateway's namespace is refused.
 * status says NOT HELD with the reason; the install of a new generation,
 * which must cut a stream there, answers 500 and counts the failure, and
 * so does the CLI under the same filter (exit 8). An unrestricted retire
 * then cuts the stream: it was alive all along. */
/* guarantees: tcp-stream-revocation */
Test(daemon_restrict, setns_refused_is_not_held_and_install_fails, .init = setup_no_namespaces)
{
	char out[8192], me[16];
	const char *why;
	struct dd_resp r;
	struct te_env e;
	json_t *g;
	int rc;

	tcp_tier_or_skip();
	r = status();
	g = guarantee(&r, "tcp-stream-revocation");
	cr_expect(json_is_false(json_object_get(g, "held")), "held under setns refused: %s",
		  r.body);
	cr_expect(strstr(json_string_value(json_object_get(g, "reason")), "setns refused") &&
		      strstr(json_string_value(json_object_get(g, "reason")), "RestrictNamespaces"),
		  "reason: %s", json_string_value(json_object_get(g, "reason")));
	cr_expect(!step_allowed(&r, "setns-net", &why), "setns-net allowed: %s", r.body);
	cr_expect(strstr(why, "Operation not permitted"), "%s", why);
	dd_resp_free(&r);
	rc = kh_cli(out, sizeof(out), "status", NULL);
	cr_expect(strstr(out, "NOT HELD tcp-stream-revocation"), "CLI status: %s", out);
	cr_expect(dd_log_has("serving process: setns-net refused"), "start-up logs the refusal");

	granted_stream(&e);
	r = install(8);
	cr_assert_eq(r.status, 500, "install 8 with the stream left: %d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "stream revocation failed", "%s", r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "setns"), "%s", r.body);
	cr_expect(json_is_string(json_object_get(json_object_get(r.json, "streams"), "error")),
		  "%s", r.body);
	cr_expect_eq(
	    json_integer_value(json_object_get(json_object_get(r.json, "record"), "generation")), 8,
	    "the record change stands: %s", r.body);
	dd_resp_free(&r);
	cr_assert_eq(te_send(&e, 0), 0, "the stale stream is still up");
	cr_assert_eq(te_recv(&e, 0), 1, "the stale stream is still up");
	cr_expect_eq(dd_metric("execgate_stream_revocation_errors_total{kind=\"tcp\"}"
			       " "),
		     1);
	cr_expect(dd_log_has("install: sandbox " DD_SANDBOX ": stream revocation failed"),
		  "the failure is logged");

	/* The CLI under the same filter: exit 8, the reason on stderr. */
	kh_child_restrict = KR_NO_NAMESPACES;
	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", DD_SANDBOX, "--worker", DD_WORKER,
		    "--generation", "9", "--activation", "1", "--bridge-pid", me, "--service-addr",
		    TE_GUEST_ADDR, "--service-port", "7000/tcp", "--json", NULL);
	kh_child_restrict = 0;
	cr_expect_eq(rc, 8, "CLI install under RestrictNamespaces: exit %d: %s", rc, out);
	cr_expect(strstr(out, "stream revocation failed") && strstr(out, "setns"), "%s", out);
	cr_assert_eq(te_send(&e, 0), 0, "still up after the CLI's attempt");
	cr_assert_eq(te_recv(&e, 0), 1);

	/* Unrestricted, the same stream is cut. */
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", DD_SANDBOX, "--json", NULL);
	cr_expect_eq(rc, 0, "unrestricted retire: exit %d: %s", rc, out);
	cr_expect(strstr(out, "\"tcp_cut\":1"), "%s", out);
	cr_expect_eq(te_peer_state(&e, 0, TE_CUT_WAIT_MS), -ECONNRESET,
		     "guest end of the cut stream");
}

/* RestrictAddressFamilies without AF_INET, AF_INET6 and AF_NETLINK: what
 * status says about TCP revocation must be what an install does. Where
 * bpf_sock_destroy cuts (6.5+), no socket of those families is needed:
 * held, and the stream is cut. Where only sock_diag could, the daemon's
 * probe cannot open its listener: not held, and the install fails. */
/* guarantees: tcp-stream-revocation */
Test(daemon_restrict, address_families_refused_status_matches_what_install_does,
     .init = setup_no_inet)
{
	const char *why;
	struct dd_resp r;
	struct te_env e;
	bool held;

	tcp_tier_or_skip();
	r = status();
	held = json_is_true(json_object_get(guarantee(&r, "tcp-stream-revocation"), "held"));
	cr_expect(!step_allowed(&r, "sock-diag", &why), "sock-diag allowed: %s", r.body);
	cr_expect(strstr(why, "RestrictAddressFamilies"), "%s", why);
	dd_resp_free(&r);

	granted_stream(&e);
	r = install(8);
	if (held) {
		cr_assert_eq(r.status, 200, "held, but install 8: %d %s", r.status, r.body);
		cr_expect_eq(tcp_cut(&r), 1, "%s", r.body);
		cr_expect_eq(te_peer_state(&e, 0, TE_CUT_WAIT_MS), -ECONNRESET, "guest end");
	} else {
		cr_assert_eq(r.status, 500, "not held, install 8: %d %s", r.status, r.body);
		cr_assert_eq(te_send(&e, 0), 0, "not cut");
	}
	dd_resp_free(&r);
}

/* A child in the cgroup with every capability (as the test) that, once
 * told on go, connects to the Unix socket at path, reports the errno on
 * res, and holds its end until killed. */
static pid_t holding_bridge(const char *path, int go, int res)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		char procs[600], c;
		int fd, err = 0;
		FILE *f;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
		f = fopen(procs, "w");
		if (!f || fputs("0", f) < 0 || fclose(f))
			_exit(3);
		if (read(go, &c, 1) != 1)
			_exit(4);
		/* made in the cgroup: a socket's checks follow where it was
		 * made */
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
			err = errno;
		if (write(res, &err, sizeof(err)) != sizeof(err))
			_exit(5);
		pause();
		_exit(0);
	}
	kh_track(pid);
	return pid;
}

static struct dd_resp install_vmm(unsigned gen, pid_t bridge, const char *vmm)
{
	char body[1024];

	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%u,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vmm_pid\":%d,\"vmm_sockets\":[\"%s\"]}",
		 DD_WORKER, gen, (int)bridge, (int)getpid(), vmm);
	return dd_req("PUT", SB_PATH, body);
}

/* CapabilityBoundingSet without CAP_SYS_PTRACE: pidfd_getfd of a process
 * with more capabilities than the daemon is refused, so
 * unix-stream-revocation is not held, and the install of a new generation
 * that must cut such a process's stream answers 500 with the stream left
 * alive, counted and logged. */
/* guarantees: unix-stream-revocation */
Test(daemon_restrict, no_sys_ptrace_is_not_held_and_install_fails, .init = setup_no_ptrace)
{
	const char *vmm = kh_path("vmm.sock"), *why;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct dd_resp r = status();
	json_t *g = guarantee(&r, "unix-stream-revocation");
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), acc, go[2], res[2], err = -1;
	pid_t bridge;
	char b;

	cr_expect(json_is_false(json_object_get(g, "held")), "held without CAP_SYS_PTRACE: %s",
		  r.body);
	cr_expect(strstr(json_string_value(json_object_get(g, "reason")), "CAP_SYS_PTRACE"),
		  "reason: %s", json_string_value(json_object_get(g, "reason")));
	cr_expect(!step_allowed(&r, "pidfd-getfd", &why), "pidfd-getfd allowed: %s", r.body);
	dd_resp_free(&r);

	signal(SIGPIPE, SIG_IGN);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s: %m", vmm);
	cr_assert_eq(listen(lfd, 8), 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(res), 0);
	bridge = holding_bridge(vmm, go[0], res[1]);
	r = install_vmm(1, bridge, vmm);
	cr_assert_eq(r.status, 200, "install 1: %d %s", r.status, r.body);
	dd_resp_free(&r);
	cr_assert_eq(write(go[1], "c", 1), 1);
	cr_assert_eq(read(res[0], &err, sizeof(err)), (ssize_t)sizeof(err), "bridge died");
	cr_assert_eq(err, 0, "bridge connect: %s", strerror(err));
	acc = accept(lfd, NULL, NULL);
	cr_assert_geq(acc, 0, "accept: %s", strerror(errno));
	cr_assert_eq(send(acc, "a", 1, MSG_NOSIGNAL), 1, "the stream is up");

	r = install_vmm(2, bridge, vmm);
	cr_assert_eq(r.status, 500, "install 2 with the stream left: %d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "stream revocation failed", "%s", r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "could not be cut"), "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(recv(acc, &b, 1, MSG_DONTWAIT), -1, "nothing to read, no EOF: not cut");
	cr_expect_eq(send(acc, "b", 1, MSG_NOSIGNAL), 1, "the stale stream is still up");
	cr_expect_eq(dd_metric("execgate_stream_revocation_errors_total{kind=\"unix\"}"
			       " "),
		     1);
	close(acc);
	close(lfd);
}

static const char *unit_path(void)
{
	const char *u = getenv("EXECGATE_UNIT");

	return u && *u ? u : "deploy/systemd/execgated.service";
}

static unsigned shipped;

static void setup_shipped_unit(void)
{
	int rc = kr_of_unit(unit_path(), &shipped);

	cr_assert_eq(rc, 0, "%s: %s", unit_path(), strerror(-rc));
	dd_next_restrict = shipped;
	dd_setup();
}

/* The restrictions the shipped unit sets (read from the file, so a change
 * of the unit is tested as it ships): every serving step is allowed, both
 * revocation guarantees hold, and an install cuts a stale TCP stream in a
 * gateway's namespace and a stale Unix stream of a process with every
 * capability. */
/* guarantees: tcp-stream-revocation unix-stream-revocation */
Test(daemon_restrict, shipped_unit_keeps_every_revocation_guarantee, .init = setup_shipped_unit)
{
	const char *vmm = kh_path("vmm.sock"), *why;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), acc, go[2], res[2], err = -1;
	static const char *const steps[] = {"setns-net", "sock-diag", "pidfd-getfd"};
	struct dd_resp r;
	struct te_env e;
	pid_t bridge;

	cr_log_info("%s: restrictions 0x%x", unit_path(), shipped);
	tcp_tier_or_skip();
	r = status();
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		cr_expect(step_allowed(&r, steps[i], &why), "%s refused under %s: %s", steps[i],
			  unit_path(), why);
	cr_expect(json_is_true(json_object_get(guarantee(&r, "tcp-stream-revocation"), "held")),
		  "%s", r.body);
	cr_expect(json_is_true(json_object_get(guarantee(&r, "unix-stream-revocation"), "held")),
		  "%s", r.body);
	dd_resp_free(&r);

	granted_stream(&e);
	r = install(8);
	cr_expect_eq(r.status, 200, "install 8: %d %s", r.status, r.body);
	cr_expect_eq(tcp_cut(&r), 1, "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(te_peer_state(&e, 0, TE_CUT_WAIT_MS), -ECONNRESET,
		     "guest end of the cut stream");

	/* A Unix stream of another sandbox, held by a process with every
	 * capability. */
	signal(SIGPIPE, SIG_IGN);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", vmm);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s: %m", vmm);
	cr_assert_eq(listen(lfd, 8), 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(res), 0);
	bridge = holding_bridge(vmm, go[0], res[1]);
	{
		char body[1024];

		snprintf(body, sizeof(body),
			 "{\"worker\":\"%s\",\"generation\":1,\"activation\":1,\"bridge_pid\":%d,"
			 "\"vmm_pid\":%d,\"vmm_sockets\":[\"%s\"]}",
			 DD_WORKER, (int)bridge, (int)getpid(), vmm);
		r = dd_req("PUT", "/v1/sandboxes/" DD_SANDBOX2, body);
		cr_assert_eq(r.status, 200, "install: %d %s", r.status, r.body);
		dd_resp_free(&r);
	}
	cr_assert_eq(write(go[1], "c", 1), 1);
	cr_assert_eq(read(res[0], &err, sizeof(err)), (ssize_t)sizeof(err), "bridge died");
	cr_assert_eq(err, 0, "bridge connect: %s", strerror(err));
	acc = accept(lfd, NULL, NULL);
	cr_assert_geq(acc, 0, "accept: %s", strerror(errno));
	r = dd_req("POST", "/v1/sandboxes/" DD_SANDBOX2 "/retire", NULL);
	cr_expect_eq(r.status, 200, "retire: %d %s", r.status, r.body);
	cr_expect_eq(
	    json_integer_value(json_object_get(json_object_get(r.json, "streams"), "unix_cut")), 1,
	    "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(send(acc, "x", 1, MSG_NOSIGNAL), -1, "the cut stream still sends");
	close(acc);
	close(lfd);
}

/* What the CLI's revoke and node-key do, over the API: a ServicePort
 * grant revoked by POST /v1/sandboxes/{uuid}/revoke stops the next
 * connect; the node key's public file as the state dir holds it. */
Test(daemon_tcp, revoke_and_node_key_as_the_cli_has_them)
{
	char body[128], path[256], file[4096];
	struct dd_resp r;
	struct te_env e;
	size_t n;
	FILE *f;

	tcp_tier_or_skip();
	dd_keys();
	te_start(&e);
	r = install(7);
	cr_assert_eq(r.status, 200, "install 7: %d %s", r.status, r.body);
	dd_resp_free(&r);
	admit_gateway(&e, 7);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), 0, "granted");

	snprintf(body, sizeof(body), "{\"pid\":%d}", (int)e.gateway);
	r = dd_req("POST", SB_PATH "/revoke", body);
	cr_assert_eq(r.status, 200, "revoke: %d %s", r.status, r.body);
	cr_expect_geq(dd_int(&r, "grants_removed"), 1, "%s", r.body);
	cr_expect_eq(dd_int(&r, "pid"), e.gateway, "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(te_connect(&e, 1, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM, "revoked");
	r = dd_req("POST", SB_PATH "/revoke", body);
	cr_expect_eq(r.status, 404, "nothing left to revoke: %d %s", r.status, r.body);
	dd_resp_free(&r);
	r = dd_req("POST", SB_PATH "/revoke", "{\"pid\":0}");
	cr_expect_eq(r.status, 400, "pid 0: %d %s", r.status, r.body);
	dd_resp_free(&r);
	r = dd_req("POST", SB_PATH "/revoke", "{\"pid\":1,\"all\":true}");
	cr_expect_eq(r.status, 400, "unknown field: %d %s", r.status, r.body);
	dd_resp_free(&r);

	snprintf(path, sizeof(path), "%s/node.pub", kh.state_dir);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(file, 1, sizeof(file) - 1, f);
	file[n] = '\0';
	fclose(f);
	r = dd_req("GET", "/v1/node-key", NULL);
	cr_assert_eq(r.status, 200, "node-key: %d %s", r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "public_key_file"), file);
	cr_expect_str_eq(dd_str(&r, "worker_id"), DD_WORKER);
	dd_resp_free(&r);
}
