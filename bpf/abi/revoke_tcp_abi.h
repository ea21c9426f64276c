/* SPDX-License-Identifier: Apache-2.0 */
/* What the iter/tcp revokers write per stale socket, read by
 * user/loader/revokers/revoke_tcp.c. Not a pinned map: internal to the loader. */
#ifndef EXECGATE_REVOKE_TCP_ABI_H
#define EXECGATE_REVOKE_TCP_ABI_H

#include "abi/abi.h"

/* eg_tcp_cut.flags and eg_tcp_stale.flags: the socket's sandbox decides in
 * audit (its record's own mode, else the global one): the socket is stale
 * but left running, reported only (docs/design.md §19). */
#define EG_TCP_STALE_AUDIT 1

/* bpf/iter_tcp_revoke.bpf.c: one socket it destroyed (rc 0) or could not,
 * or (flags EG_TCP_STALE_AUDIT, rc 0) left running. */
struct eg_tcp_cut {
	__s32 rc; /* bpf_sock_destroy's return */
	__u16 port;
	__u8 flags;
	__u8 pad;
	__u8 sandbox[EG_ID_BYTES]; /* the socket's tag's */
};
EG_STATIC_ASSERT(sizeof(struct eg_tcp_cut) == 8 + EG_ID_BYTES, "eg_tcp_cut size");

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
	__u8 flags;    /* EG_TCP_STALE_AUDIT: not to destroy, to report */
	__u8 pad[6];
	__u8 sandbox[EG_ID_BYTES]; /* the socket's tag's */
};
EG_STATIC_ASSERT(sizeof(struct eg_tcp_stale) == 56 + EG_ID_BYTES, "eg_tcp_stale size");

#endif
