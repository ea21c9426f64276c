/* SPDX-License-Identifier: Apache-2.0 */
/* Daemon-test environment, on top of the kernel tests' harness
 * (tests/kernel/harness.h: scratch dirs, cgroup, issuer keys, tokens,
 * children in the cgroup, teardown on failure).
 *
 * dd_setup() makes the scratch world with /sys/fs/bpf/egd-<pid>-<n>-<6
 * random> and /tmp/ of the same name, writes a config and starts a real execgated, which
 * loads the programs itself; dd_teardown() stops it, then kh_teardown()
 * unloads and removes everything. Requests go over the daemon's socket as
 * raw HTTP/1.1 bytes, so the tests see exactly what a client sees. */
#ifndef EXECGATE_TEST_DAEMON_DD_H
#define EXECGATE_TEST_DAEMON_DD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include "harness.h"

#define DD_SANDBOX   "5f0c2c1e-7a4b-4c1d-9e3f-000000000007"
#define DD_SANDBOX2  "5f0c2c1e-7a4b-4c1d-9e3f-000000000008"
#define DD_WORKER    "a0000000-0000-4000-8000-00000000000a"
#define DD_WORKER_B  "b0000000-0000-4000-8000-00000000000b"
#define DD_ADMIT_GID 4242 /* admit_group of the test config */
#define DD_ADMIN_GID 4243 /* admin_group of the test config */

struct dd_env {
	char config[200];
	char socket[200];
	char log[200];
	pid_t pid;	       /* the running daemon, 0 when none */
	char extra[2048];      /* more config lines for the next start */
	const char *worker;    /* worker_id of the next start; NULL: DD_WORKER */
	unsigned restrictions; /* tests/kernel/restrict.h: what the daemon runs under */
	bool verbose;	       /* the next start runs with --verbose */
};
extern struct dd_env dd;
/* The restrictions the next dd_setup's daemon runs under (then reset). */
extern unsigned dd_next_restrict;

void dd_setup(void);
void dd_teardown(void);
/* Writes the config (plus dd.extra) and starts the daemon; waits until its
 * socket answers. */
void dd_start(void);
/* The config dd_start would write, written; and the daemon's binary: for a
 * start the test expects to fail. */
void dd_write_config(void);
const char *dd_bin(void);
/* SIGTERM (or SIGKILL) and reap; returns the exit status (128+sig when
 * killed). */
int dd_stop(int sig);
/* keygen, PUT /v1/keys/<kid>: kh.kid and the issuer seed are set. */
void dd_keys(void);

struct dd_resp {
	int status; /* HTTP status, or -errno when no response came */
	char head[2048];
	char *body; /* NUL-terminated */
	size_t body_len;
	json_t *json; /* parsed body when it is JSON, else NULL */
};
void dd_resp_free(struct dd_resp *r);

/* One request on a fresh connection ("Connection: close"). body may be
 * NULL. */
struct dd_resp dd_req(const char *method, const char *path, const char *body);
/* Reads one answer from fd until EOF or timeout_ms; req (the request sent)
 * classifies the answer in the schema log. */
struct dd_resp dd_read_resp(int fd, int timeout_ms, const char *req, size_t req_len);
/* Raw bytes on a fresh connection; reads until EOF or timeout_ms. */
struct dd_resp dd_raw(const void *bytes, size_t len, int timeout_ms);
/* dd_req in a child that runs as uid/gid (and no supplementary groups):
 * returns the HTTP status, and the verdict's "reason" or "error" text in
 * what (may be NULL). */
int dd_req_as(uid_t uid, gid_t gid, const char *method, const char *path, const char *body,
	      char *what, size_t what_size);

/* The same as uid with primary group nobody and supp as its one
 * supplementary group (SO_PEERGROUPS). */
int dd_req_as_member(uid_t uid, gid_t supp, const char *method, const char *path, const char *body,
		     char *what, size_t what_size);

/* Connects to the daemon socket; returns the fd. */
int dd_connect(void);
/* Open fds of the daemon. */
int dd_fd_count(void);
/* Waits (up to ms) for the daemon's fd count to drop to at most want;
 * returns the last count. */
int dd_fd_settle(int want, int ms);

/* A JSON string field of r->json, or "" when absent. */
const char *dd_str(const struct dd_resp *r, const char *field);
long long dd_int(const struct dd_resp *r, const char *field);

/* Body of an admit/check request for token (and scope). */
char *dd_admit_body(const char *token, const char *scope, int pid);
/* PUT /v1/sandboxes/<sandbox> with generation/activation, bridge_pid and
 * one bridge socket; returns the response. */
struct dd_resp dd_install(const char *sandbox, unsigned gen, unsigned act, pid_t bridge,
			  const char *bridge_sock);

double dd_now_ms(void);
/* The value on the /metrics line that starts with line_prefix (the name,
 * labels and the space), -1 when there is none. */
long long dd_metric(const char *line_prefix);
/* Whether the daemon's log (its first MiB) holds needle. */
bool dd_log_has(const char *needle);
/* The last max bytes of the daemon's log (at most 8 KiB), for a failure
 * message; a static buffer. */
const char *dd_log_tail(size_t max);
/* The daemon's key reload count once no reload has come for 300 ms: a key
 * file the daemon just wrote itself is reloaded through inotify after a
 * settle delay, and a test that then changes the directory behind its back
 * must not race that reload. */
long long dd_settled_key_reloads(void);

/* Whether the answer of GET /v1/keys in r lists key id kid. */
bool dd_key_listed(struct dd_resp *r, const char *kid);
/* The reason POST /v1/check gives a fresh token signed by the test key
 * (kh_keys' issuer), for DD_SANDBOX on DD_WORKER, generation 8. */
void dd_fresh_check(char *reason, size_t size);

#endif
