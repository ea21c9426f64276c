/* SPDX-License-Identifier: Apache-2.0 */
/* A real etcd cluster for tests: 1 to 5 members of /usr/bin/etcd (or
 * $EXECGATE_ETCD_BIN) on free 127.0.0.1 ports, data and logs in a fresh
 * temporary directory. Every cluster started is torn down (members killed,
 * directory removed) by eg_test_etcd_stop() and, should a test end without
 * it, at exit; each member also dies with the process that started it
 * (PR_SET_PDEATHSIG). Loopback only. */
#ifndef EXECGATE_TESTS_FLEET_ETCD_ENV_H
#define EXECGATE_TESTS_FLEET_ETCD_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define EG_TEST_ETCD_MAX 5

struct eg_test_etcd_member {
	char name[16];
	unsigned short client_port, peer_port;
	char client_url[64]; /* http://127.0.0.1:PORT */
	pid_t pid;	     /* 0 while killed */
};

struct eg_test_etcd {
	size_t n;
	struct eg_test_etcd_member m[EG_TEST_ETCD_MAX];
	char dir[256];
	char endpoints[EG_TEST_ETCD_MAX * 64]; /* every client URL, comma-separated */
};

/* Starts n members and waits until the cluster serves a put (15 s at most).
 * 0, or -1 with the reason on stderr (and the members' log tails). */
int eg_test_etcd_start(size_t n_members, struct eg_test_etcd *env);
void eg_test_etcd_stop(struct eg_test_etcd *env);
/* SIGKILL member i and reap it. */
int eg_test_etcd_kill_member(struct eg_test_etcd *env, size_t i);
/* Start member i again on its ports and data, wait until it answers. */
int eg_test_etcd_restart_member(struct eg_test_etcd *env, size_t i);
/* Index of the current leader among the live members, -1 if none is known
 * (asks each live member's /v3/maintenance/status). */
int eg_test_etcd_leader(struct eg_test_etcd *env);

#endif
