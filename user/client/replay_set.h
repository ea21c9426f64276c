/* SPDX-License-Identifier: Apache-2.0 */
/* The replay set of the route cache: which signed verdicts were already
 * used. A ring of EG_REPLAY_SLOTS one-second slots indexed by issued_at,
 * each holding up to per_second BLAKE2b-128 hashes of verdict bodies (the
 * signed bytes, so another signature over the same body is the same
 * verdict). The accepted issued_at span (client/route_cache.h) is shorter
 * than the ring, so a slot holding another second is dead and is reset;
 * nothing outlives the window. A second with more than per_second verdicts
 * refuses the rest: fail closed, never forget a live verdict. The caller
 * adds a verdict only after every other check passed, so forgeries cannot
 * fill it. Known limit: Ed25519 is deterministic, so two operations
 * carrying one capability and refused by one worker in the same second get
 * the same verdict; the second is a replay (fail closed: client/retry.h).
 *
 * Threads: one mutex; every call may come from any thread. Memory: all of
 * it is allocated by eg_replay_set_new. */
#ifndef EXECGATE_CLIENT_REPLAY_SET_H
#define EXECGATE_CLIENT_REPLAY_SET_H

#include <stddef.h>
#include <stdint.h>

#define EG_REPLAY_SLOTS	      64 /* seconds of issued_at the ring tells apart */
#define EG_REPLAY_PER_SEC_MAX 4096

enum eg_replay_result {
	EG_REPLAY_NEW = 0, /* not seen before; now remembered */
	EG_REPLAY_STALE,   /* the slot holds a later second: a caller's clock went back */
	EG_REPLAY_SEEN,	   /* the same body was added before */
	EG_REPLAY_FULL,	   /* per_second bodies of that second already */
};

struct eg_replay_set;

/* per_second: 1..EG_REPLAY_PER_SEC_MAX. NULL on a bad size or no memory. */
struct eg_replay_set *eg_replay_set_new(size_t per_second);
void eg_replay_set_free(struct eg_replay_set *s);

/* Remembers the hash of body (len bytes) under issued_at, unless it is
 * there already or cannot be proven new. */
enum eg_replay_result eg_replay_set_add(struct eg_replay_set *s, const uint8_t *body, size_t len,
					uint64_t issued_at);

#endif
