/* SPDX-License-Identifier: Apache-2.0 */
/* The BPF LSM tier (eg_tier_lsm, in the eg_tiers[] table of tier.c): its
 * programs and their link pins, for status, tests and the benchmark. */
#ifndef EXECGATE_LOADER_LSM_TIER_H
#define EXECGATE_LOADER_LSM_TIER_H

#include <stdbool.h>
#include "loader/tiers/tier.h"

enum eg_lsm_prog {
	EG_LSM_PROG_LISTEN,	 /* lsm/socket_listen: listener owner tags */
	EG_LSM_PROG_CONNECT,	 /* lsm/socket_connect: AF_VSOCK (+ AF_UNIX on 6.1) */
	EG_LSM_PROG_UNIX_STREAM, /* lsm/unix_stream_connect: inode endpoints, listener */
	EG_LSM_PROG_SENDMSG,	 /* lsm/socket_sendmsg: stream lease */
	EG_LSM_PROG_RECVMSG,	 /* lsm/socket_recvmsg: stream lease */
	EG_LSM_PROG_SOCK_GRAFT,	 /* lsm/sock_graft: lease on the accepted VSOCK end */
	EG_LSM_PROG__COUNT,
};

extern const struct eg_tier_ops eg_tier_lsm;

/* "lsm_socket_connect", ...: the pin name under <pin-dir>/links. */
const char *eg_lsm_link_pin_name(enum eg_lsm_prog prog);

/* true when the kernel lacks connect_unix, so lsm/socket_connect must check
 * Unix path endpoints too (decided at load). */
bool eg_lsm_unix_connect_needed(const struct eg_tier_ctx *ctx);

#endif
