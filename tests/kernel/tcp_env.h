/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP tier's test world, on top of harness.h: a gateway process in a
 * network namespace of its own (created by the test, loopback up) and in
 * the scratch cgroup, and a guest process in the same namespace, outside
 * the cgroup, listening on every address of that loopback. The only
 * addresses used are 127.0.0.0/8 and ::1 inside that namespace; the
 * namespace dies with the two processes (kh_teardown kills them).
 *
 * The loader (the test process) stays in the host namespace, so every
 * revocation has to reach into the gateway's. */
#ifndef EXECGATE_TEST_KERNEL_TCP_ENV_H
#define EXECGATE_TEST_KERNEL_TCP_ENV_H

#include <stdbool.h>
#include <sys/types.h>

#define TE_TCP_PORT   7000 /* the guest listens here (TCP), and on 7002, 7003 */
#define TE_UDP_PORT   7001 /* and receives datagrams here (UDP) */
#define TE_MAX_SLOTS  16384
#define TE_GUEST_ADDR "127.0.0.2" /* registered by the tests */
#define TE_OTHER_ADDR "127.0.0.3" /* never registered */

struct te_env {
	pid_t gateway, guest;
	int gw_ctl, guest_ctl;
};

/* Forks the guest and the gateway (kh_track'ed). */
void te_start(struct te_env *e);

/* Gateway side. slot: an index the gateway keeps the socket under. All
 * return 0 or -errno as the gateway saw it. */
int te_connect(struct te_env *e, int slot, const char *addr, int port, bool udp);
/* n TCP connects to addr:port into slots [first, first + n); returns the
 * number that succeeded, or -errno of the first failure. */
int te_connect_many(struct te_env *e, int first, int n, const char *addr, int port);
int te_send(struct te_env *e, int slot); /* one byte, MSG_NOSIGNAL */
int te_recv(struct te_env *e, int slot); /* >0 bytes, 0 EOF, -errno; 2 s timeout */
int te_sendto(struct te_env *e, const char *addr, int port); /* unconnected UDP */
/* Sends one byte on each of [first, first + n); returns how many failed. */
int te_send_many(struct te_env *e, int first, int n);
/* Gateway's TCP socket in slot: has it an eg_inet_tags entry (looked up by
 * the socket's cookie), and its epoch. */
int te_tag(struct te_env *e, int slot, int map_fd, unsigned long long *epoch, int *state);
/* The SO_COOKIE of the gateway's socket in slot (eg_inet_tags' key). */
int te_cookie(struct te_env *e, int slot, unsigned long long *cookie);
/* Closes the gateway's socket in slot. */
int te_close(struct te_env *e, int slot);

/* How long a test waits for the guest's end of a cut stream to see the
 * cut: the wait ends at the first change, so a long bound costs nothing
 * when the cut comes; 2 s was too short once in a guest whose host ran
 * every lane of make check beside it. */
#define TE_CUT_WAIT_MS 10000

/* Guest side: the state of its end of the gateway's stream in slot, found
 * by the stream's addresses and ports: 1 open, 0 EOF, -errno when its last
 * read failed, -ENOENT not accepted (yet) or no stream in slot. Waits up to
 * wait_ms for it to be accepted and stop being open. */
int te_peer_state(struct te_env *e, int slot, int wait_ms);
/* Datagrams the guest received on TE_UDP_PORT. */
int te_udp_count(struct te_env *e);

/* The gateway's identity as "PID" text. */
const char *te_gateway_pid(struct te_env *e);

#endif
