/* SPDX-License-Identifier: Apache-2.0 */
/* Verified-token cache: skips the Ed25519 verify for a token seen before.
 * Keyed by a keyed hash of the whole token (hash flooding resistance), holds
 * the full token bytes so a hit is exact, bounded, and never holds failures. */
#ifndef EXECGATE_CORE_TOKEN_CACHE_H
#define EXECGATE_CORE_TOKEN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/capability.h"

struct eg_token_cache;

/* capacity is rounded up to a power of two (at least 4, the ways per
 * bucket). NULL on allocation failure or capacity above 2^22. Creates its
 * own SipHash key: libsodium must be initialised (sodium_init). */
struct eg_token_cache *eg_token_cache_new(size_t capacity);
void eg_token_cache_free(struct eg_token_cache *c);

/* A hit returns the decoded capability verified under keyset generation
 * keyset_gen; entries of another generation or past expiry + skew are
 * dropped on the way. */
bool eg_token_cache_get(struct eg_token_cache *c, const uint8_t raw[EG_CAP_LEN],
			uint64_t keyset_gen, uint64_t now, struct eg_capability *out);
void eg_token_cache_put(struct eg_token_cache *c, const uint8_t raw[EG_CAP_LEN],
			const struct eg_capability *cap, uint64_t keyset_gen);
void eg_token_cache_flush(struct eg_token_cache *c);
/* Entries held (dead ones count until a lookup or an insert meets them). */
size_t eg_token_cache_size(const struct eg_token_cache *c);
/* The rounded capacity: the most entries the cache ever holds. */
size_t eg_token_cache_capacity(const struct eg_token_cache *c);

#endif
