/* SPDX-License-Identifier: Apache-2.0 */
/* What the iter/tcp revokers write per stale socket, read by
 * user/loader/revoke_tcp.c. Not a pinned map: internal to the loader. */
#ifndef EXECGATE_REVOKE_TCP_ABI_H
#define EXECGATE_REVOKE_TCP_ABI_H

#include "execgate/abi.h"

/* bpf/iter_tcp_revoke.bpf.c: one socket it destroyed (rc 0) or could not. */
struct eg_tcp_cut {
	__s32 rc; /* bpf_sock_destroy's return */
	__u32 port;
};

/* bpf/iter_tcp_find.bpf.c: one stale socket, as sock_diag names it
 * (struct inet_diag_sockid), for a SOCK_DESTROY request. */
struct eg_tcp_stale {
	__u8 src[16];  /* local address (IPv4: first 4 bytes), network order */
	__u8 dst[16];  /* remote address */
	__u64 cookie;  /* the socket's cookie: the request names this socket only */
	__u32 ifindex; /* sk_bound_dev_if */
	__u16 sport;   /* local port, network order */
	__u16 dport;   /* remote port, network order */
	__u8 family;   /* AF_INET, AF_INET6 */
	__u8 pad[7];
};
EG_STATIC_ASSERT(sizeof(struct eg_tcp_stale) == 56, "eg_tcp_stale size");

#endif
