/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP / ServicePort tier (tcp_tier.c) and what its revoker
 * (revoke_tcp.c) needs from it. */
#ifndef EXECGATE_LOADER_TCP_TIER_H
#define EXECGATE_LOADER_TCP_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include "loader/tier.h"

/* <pin-dir>/links/<this>: the pinned iter/tcp revoker program. */
#define EG_TCP_ITER_PIN "tcp_iter_revoke"

/* 0 when iter/tcp with bpf_sock_destroy loads here (cached), else
 * -EOPNOTSUPP with why. */
int eg_tcp_iter_probe(char *why, size_t why_size);

/* Whether a status of the tcp tier found the revoker program pinned. */
bool eg_tcp_revoker_pinned(const struct eg_tier_status *st);

#endif
