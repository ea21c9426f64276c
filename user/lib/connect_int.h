/* SPDX-License-Identifier: Apache-2.0 */
/* Inside verified connections (include/execgate/connect.h): what the
 * connect*.c files share, never installed. */
#ifndef EXECGATE_LIB_CONNECT_INT_H
#define EXECGATE_LIB_CONNECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include "execgate/connect.h"
#include "lib/worker.h"

/* A target's role is compared with the endpoints' roles in the maps. */
_Static_assert((int)EG_CONNECT_BRIDGE == (int)EG_ROLE_BRIDGE &&
		   (int)EG_CONNECT_VMM == (int)EG_ROLE_VMM,
	       "connect roles are endpoint roles");

struct eg_conn {
	int fd;
	int peer_pidfd;			  /* the verified listener (Unix); -1 for AF_VSOCK */
	bool dropped;			  /* the peer closed or reset: every later call fails */
	char name[EG_UNIX_PATH_MAX + 16]; /* "connect <path>" / "connect vsock C:P" */
	struct eg_conn_info info;
};

/* The sandbox's record, which must be active. 0, -ENOENT (no record),
 * -ESTALE (retired); err starts with what. */
int eg_cn_record(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES], const char *what,
		 struct eg_exec_record *rec, char *err, size_t err_size);
/* The same, for a caller that already holds eg_wk_maps_enter. */
int eg_cn_record_locked(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES], const char *what,
			struct eg_exec_record *rec, char *err, size_t err_size);

/* The process at the other end of a connected Unix socket, as a pidfd
 * (SO_PEERPIDFD, else SO_PEERCRED + pidfd_open) and its identity read
 * through it. 0 with *pidfd owned by the caller, or -errno with err. */
int eg_cn_peer(int fd, const char *what, int *pidfd, struct eg_proc_id *id, bool *via_peerpidfd,
	       char *err, size_t err_size);
/* The same, SO_PEERCRED + pidfd_open only: the path of kernels before 6.5,
 * callable on newer ones so that tests reach it. */
int eg_cn_peer_cred(int fd, const char *what, int *pidfd, struct eg_proc_id *id, char *err,
		    size_t err_size);

/* 0 while the process behind pidfd lives, -ESRCH after it exited. */
int eg_cn_pidfd_alive(int pidfd);

/* A new handle around fd (taken over); NULL on ENOMEM (fd closed). */
struct eg_conn *eg_cn_new(int fd, int peer_pidfd, const char *name);

#endif
