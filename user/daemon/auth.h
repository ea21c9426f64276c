/* SPDX-License-Identifier: Apache-2.0 */
/* Who is on the other end of a client connection, and what it may do.
 *
 * The kernel's answer, never the client's: SO_PEERCRED (uid, gid, pid at
 * connect time), SO_PEERGROUPS (its supplementary groups) and SO_PEERPIDFD
 * (a pidfd for the connecting process itself, so a reused pid cannot stand
 * in for it). Kernels without SO_PEERPIDFD: pidfd_open(pid) right after
 * accept, and the worker handle then confirms the identity it reads
 * through that pidfd. Read once per connection. */
#ifndef EXECGATE_DAEMON_AUTH_H
#define EXECGATE_DAEMON_AUTH_H

#include <stdbool.h>
#include <sys/types.h>
#include <execgate/types.h>
#include "daemon/config.h"

enum egd_role {
	EGD_ROLE_NONE = 0,  /* everyone else: 403 on every endpoint */
	EGD_ROLE_ADMIT = 1, /* admit_group: admit (for itself), check, reads */
	EGD_ROLE_ADMIN = 2, /* root or admin_group: everything */
};

struct egd_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int pidfd;		/* -1 when the process was already gone */
	bool pidfd_from_socket; /* SO_PEERPIDFD, else pidfd_open */
	enum egd_role role;
	/* The peer's identity, read at its first admit on this connection
	 * and reused while the pidfd lives (eg_subject.known): a keep-alive
	 * client pays the /proc reads once. A peer that exec()s gets grants
	 * for the binary it left, which the kernel refuses: it reconnects. */
	bool id_known;
	struct eg_process id;
};

/* 0, or -errno when the socket has no peer credentials. */
int egd_peer_read(int fd, const struct egd_config *cfg, struct egd_peer *out);
void egd_peer_release(struct egd_peer *p);
const char *egd_role_name(enum egd_role r);

#endif
