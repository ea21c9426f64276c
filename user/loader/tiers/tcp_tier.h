/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP / ServicePort tier (tcp_tier.c) and what its revoker
 * (revoke_tcp.c) needs from it. */
#ifndef EXECGATE_LOADER_TCP_TIER_H
#define EXECGATE_LOADER_TCP_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include "loader/tiers/tier.h"
#include "abi/abi.h"

/* <pin-dir>/links/<this>: the pinned iter/tcp revoker programs. The first
 * destroys with bpf_sock_destroy (6.5+); the second finds the stale
 * sockets for sock_diag SOCK_DESTROY (revoke_tcp_diag.c). Each is pinned
 * at load only where its probe passed: the pins are the cached answer. */
#define EG_TCP_ITER_PIN	     "tcp_iter_revoke"
#define EG_TCP_ITER_FIND_PIN "tcp_iter_find"

/* Revocation methods, as eg_revoke_count.method names them. */
#define EG_TCP_METHOD_KFUNC "iter/tcp"		 /* iterator + bpf_sock_destroy */
#define EG_TCP_METHOD_DIAG  "iter/tcp+sock_diag" /* iterator finds, SOCK_DESTROY cuts */

/* 0 when iter/tcp with bpf_sock_destroy loads here (cached), else
 * -EOPNOTSUPP with why. */
int eg_tcp_iter_probe(char *why, size_t why_size);

/* 0 when sock_diag SOCK_DESTROY destroys a TCP socket here (probed once on
 * a listener in a private network namespace, cached), else -EOPNOTSUPP
 * with why. */
int eg_tcp_diag_probe(char *why, size_t why_size);

/* What one pass of a TCP revoker did in one namespace. sandbox: the
 * revocation's target; a stale socket of it that its mode (audit) left
 * running counts in would_cut, another sandbox's in nothing. */
struct eg_tcp_counts {
	__u8 sandbox[EG_ID_BYTES];
	unsigned cut, failed, would_cut;
};

/* In the calling thread's network namespace: runs the finder iterator
 * (a link of the EG_TCP_ITER_FIND_PIN program) and destroys every socket
 * it yields through sock_diag, except those flagged audit (counted, left).
 * Counts cut and refused; returns 0 or the first -errno (counts may then
 * be short). */
int eg_tcp_diag_cut(int find_link_fd, struct eg_tcp_counts *c);

/* Tests: revoke through sock_diag even where bpf_sock_destroy is pinned. */
void eg_revoke_tcp_force_diag(bool on);

/* Whether a status of the tcp tier found a revoker program pinned. */
bool eg_tcp_revoker_pinned(const struct eg_tier_status *st);
/* Whether it found the bpf_sock_destroy revoker (no sock_diag needed). */
bool eg_tcp_revoker_kfunc_pinned(const struct eg_tier_status *st);

#endif
