/* SPDX-License-Identifier: Apache-2.0 */
/* libexecgate: verified connections (docs/design.md §9, docs/connect.md). A sandbox manager
 * connecting to a bridge socket, and a bridge connecting to a VMM socket,
 * first check that the process listening behind the socket is the one the
 * installed runtime record names, and only then send anything.
 *
 *  - The listener is read with SO_PEERPIDFD (Linux 6.5+) or, where the
 *    kernel lacks it, SO_PEERCRED and pidfd_open(); it is identified as
 *    (tgid, start time, executable dev+inode) through the pidfd, compared
 *    with the record's bridge (role EG_CONNECT_BRIDGE) or VMM (EG_CONNECT_VMM),
 *    and the pidfd is checked again after the record was re-read.
 *  - Firecracker hybrid VSOCK: after the checks, `CONNECT <port>\n` is
 *    written and exactly `OK <n>\n` is accepted; n is the host-side port
 *    Firecracker assigned (info.assigned_port), not the port asked for.
 *  - AF_VSOCK: the (CID, port) must be a VSOCK endpoint of the sandbox.
 *  - No transparent reconnect: a dropped connection is an error returned to
 *    the caller, and stays one; a new connection is a new eg_connect_* call
 *    and passes every check again.
 *
 * docs/connect.md is the manual. Every call returns 0 (or a byte count) or
 * a negative errno and writes a one-line message naming the endpoint, the
 * expected identity and the one found into err (may be NULL). A handle
 * (struct eg_conn) is used by one thread at a time; the worker handle it
 * was made with may be shared (execgate.h). */
#ifndef EXECGATE_CONNECT_H
#define EXECGATE_CONNECT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <execgate/execgate.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EG_CONNECT_DEFAULT_TIMEOUT_MS 5000

/* Whose listener a target expects: the record's bridge, or its VMM. */
enum eg_connect_role {
	EG_CONNECT_BRIDGE = 1,
	EG_CONNECT_VMM = 2,
};

struct eg_conn;

struct eg_connect_target {
	uint8_t sandbox[EG_ID_BYTES];
	uint32_t role;	     /* enum eg_connect_role: whose listener is expected */
	const char *path;    /* absolute Unix socket path, as installed */
	bool hybrid_vsock;   /* Firecracker: CONNECT <vsock_port> after the checks */
	uint32_t vsock_port; /* the guest port asked for */
	int timeout_ms;	     /* connect and handshake; 0: EG_CONNECT_DEFAULT_TIMEOUT_MS */
};

struct eg_conn_info {
	struct eg_runtime_record record; /* as verified; record.epoch is the lease */
	struct eg_process peer;		 /* the listener found (Unix) */
	bool via_peerpidfd;		 /* SO_PEERPIDFD; false: SO_PEERCRED + pidfd_open */
	uint32_t assigned_port;		 /* hybrid VSOCK: n of "OK <n>" */
	uint32_t cid, port;		 /* AF_VSOCK */
};

/* Connects to t->path and verifies the listener. 0 with *out set, or:
 * -ENOENT no record (or no VMM in it); -ESTALE the record is retired or its
 * epoch moved while connecting; -EPERM refused: the path is not a t->role
 * endpoint of the sandbox, or the listener is another process than the
 * record's (err names both); -EPROTO the hybrid VSOCK reply was not
 * "OK <n>\n" (err shows it, escaped); -ETIMEDOUT; another -errno from
 * socket/connect (err names it). Nothing is written to the socket before
 * every check passed; on error the socket is closed. */
int eg_connect_unix(struct eg_worker *w, const struct eg_connect_target *t, struct eg_conn **out,
		    char *err, size_t err_size);

/* Connects to AF_VSOCK cid:port, which must be a VSOCK endpoint of the
 * sandbox's active record. -EINVAL for CIDs that are never a guest (0, 2
 * the host, VMADDR_CID_ANY), -EPERM for an address that is not the
 * sandbox's (no socket is made for either), else as eg_connect_unix. */
int eg_connect_vsock(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], uint32_t cid,
		     uint32_t port, int timeout_ms, struct eg_conn **out, char *err,
		     size_t err_size);

/* The connected socket, owned by the handle (blocking; never replaced). */
int eg_conn_fd(const struct eg_conn *c);
const struct eg_conn_info *eg_conn_info(const struct eg_conn *c);
/* "connect /run/sbx/v.sock" or "connect vsock 3:52": for messages. */
const char *eg_conn_name(const struct eg_conn *c);

/* send/recv on the socket. A peer that closed or reset the connection is
 * -ECONNRESET (recv: end of stream; send: EPIPE/ECONNRESET), and from then
 * on every call on this handle is -ENOTCONN: nothing reconnects. */
ssize_t eg_conn_send(struct eg_conn *c, const void *buf, size_t len, char *err, size_t err_size);
ssize_t eg_conn_recv(struct eg_conn *c, void *buf, size_t len, char *err, size_t err_size);

/* Is the lease still held: the record is active at the epoch the
 * connection was verified at, and (Unix) the verified listener is alive.
 * 0, -ESTALE (epoch moved or retired: err says which), -ENOENT (record
 * gone), -ESRCH (the listener exited). */
int eg_conn_lease_check(struct eg_worker *w, const struct eg_conn *c, char *err, size_t err_size);

void eg_conn_close(struct eg_conn *c);

/* For a bridge's accepted client socket: the client (read with
 * SO_PEERPIDFD / SO_PEERCRED) holds a live grant for the sandbox (epoch is
 * the record's, not expired), the check the kernel makes on the cgroup and
 * LSM tiers, repeated in userspace for clients outside their reach. 0 with
 * *client set (may be NULL), -EPERM (err names the client), -ENOENT no
 * record, -ESTALE retired. */
int eg_connect_check_client(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], int client_fd,
			    struct eg_process *client, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
