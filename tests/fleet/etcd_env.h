/* SPDX-License-Identifier: Apache-2.0 */
/* A real etcd cluster for tests: 1 to 5 members of /usr/bin/etcd (or
 * $EXECGATE_ETCD_BIN) on free 127.0.0.1 ports, data and logs in a fresh
 * temporary directory (under $EXECGATE_ETCD_TMPDIR, else /tmp). Every
 * cluster started is torn down (members killed, directory removed) by
 * eg_test_etcd_stop() and, should a test end without it, at exit; each
 * member also dies with the process that started it (PR_SET_PDEATHSIG).
 * Loopback only. */
#ifndef EXECGATE_TESTS_FLEET_ETCD_ENV_H
#define EXECGATE_TESTS_FLEET_ETCD_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "fleet/etcd.h"

#define EG_TEST_ETCD_MAX 5
/* The timeout of a test's own etcd client (its control plane, or the
 * client a refusal test reads a fake server with), not the daemon's: in a
 * loaded make check a first put over TLS and auth to a cluster that had
 * just answered took over 2 s, and under the sanitizers curl's resolver
 * thread took 1.4 s for the address 127.0.0.1. What a test asserts of a
 * timeout keeps its own limits. */
#define EG_TEST_ETCD_CALL_MS 10000

struct eg_test_etcd_member {
	char name[16];
	unsigned short client_port, peer_port;
	char client_url[64]; /* http://127.0.0.1:PORT, https:// with TLS */
	pid_t pid;	     /* 0 while killed */
};

struct eg_test_etcd {
	size_t n;
	struct eg_test_etcd_member m[EG_TEST_ETCD_MAX];
	char dir[256];
	char endpoints[EG_TEST_ETCD_MAX * 64]; /* every client URL, comma-separated */
	/* With eg_test_etcd_start_tls(): the files openssl made in dir (a
	 * P-256 CA, the members' certificate for IP:127.0.0.1, a client
	 * certificate without a CN (the JSON gateway's rule), one with
	 * CN=root (etcdctl's gRPC login as root), and a second CA that
	 * signed nothing of this cluster's); and whether auth is on. */
	bool tls, auth;
	unsigned token_ttl;
	char ca[320], client_cert[320], client_key[320];
	char root_cert[320], root_key[320], other_ca[320];
	/* what the env's own client uses: the CA and client certificate,
	 * and once auth is on, root with its password file */
	char root_password_file[320];
	struct eg_etcd_auth admin;
};

/* Starts n members and waits until the cluster serves a put (15 s at most).
 * 0, or -1 with the reason on stderr (and the members' log tails). */
int eg_test_etcd_start(size_t n_members, struct eg_test_etcd *env);
void eg_test_etcd_stop(struct eg_test_etcd *env);
/* The same with client TLS (https client URLs, --client-cert-auth,
 * --trusted-ca-file), certificates made by openssl in env->dir; with auth,
 * a user root (role root, a random password in root_password_file) and
 * etcd's auth enabled; token_ttl (seconds, 0: etcd's 300) is the simple
 * tokens' --auth-token-ttl. Peers talk plain HTTP on loopback. */
int eg_test_etcd_start_tls(size_t n_members, bool auth, unsigned token_ttl,
			   struct eg_test_etcd *env);
/* etcdctl (ETCDCTL_API=3, $EXECGATE_ETCDCTL_BIN or /usr/bin/etcdctl) on
 * every member, as root by its CN=root certificate when TLS is on: the
 * arguments, one string split at blanks. Its output goes to stderr when it
 * fails. 0, or -1 with etcdctl's exit status said on stderr. */
int eg_test_etcdctl(struct eg_test_etcd *env, const char *args);
/* The same on the members named by endpoints (client URLs, comma-separated)
 * with a command timeout of timeout_s seconds (etcdctl's own is 5). */
int eg_test_etcdctl_on(struct eg_test_etcd *env, const char *endpoints, unsigned timeout_s,
		       const char *args);
/* A user with a random password in a file (mode 0600) of env->dir, path
 * into password_file (320 bytes), granted role when role is not NULL. */
int eg_test_etcd_user(struct eg_test_etcd *env, const char *name, const char *role,
		      char *password_file);
/* auth for a client of this cluster: the CA, the client certificate
 * without a CN, and user with password_file (both may be NULL). */
void eg_test_etcd_auth(const struct eg_test_etcd *env, const char *user, const char *password_file,
		       struct eg_etcd_auth *auth);
/* SIGKILL member i and reap it. */
int eg_test_etcd_kill_member(struct eg_test_etcd *env, size_t i);
/* Start member i again on its ports and data, wait until it answers. */
int eg_test_etcd_restart_member(struct eg_test_etcd *env, size_t i);
/* Index of the current leader among the live members, -1 if none is known
 * (asks each live member's /v3/maintenance/status). */
int eg_test_etcd_leader(struct eg_test_etcd *env);
/* An HTTP request to live member i's client URL followed by path (a POST
 * of post when not NULL), with the env's CA and client certificate under
 * TLS: the body (malloc'd, NUL-terminated), NULL on any failure. */
char *eg_test_etcd_http(const struct eg_test_etcd *env, size_t i, const char *path,
			const char *post, long timeout_ms);

#endif
