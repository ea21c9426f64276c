/* SPDX-License-Identifier: Apache-2.0 */
/* The full receiver check: decode, verify (or cache hit), compare. */
#ifndef EXECGATE_CORE_ADMISSION_H
#define EXECGATE_CORE_ADMISSION_H

#include <stddef.h>
#include <stdint.h>
#include "core/capability.h"
#include "core/comparator.h"
#include "core/keyset.h"
#include "core/record.h"
#include "core/token_cache.h"
#include "execgate/execgate.h"

#include <pthread.h>
#include <stdbool.h>

struct eg_admission {
	const struct eg_keyset *keys;
	struct eg_token_cache *cache; /* may be NULL: always verify */
	/* Held around every cache access when the cache is shared between
	 * threads (the worker handle); NULL for a single-threaded caller. */
	pthread_mutex_t *cache_lock;
};

/* Decode and authenticate: a cache hit, or key lookup + Ed25519 verify.
 * Returns EG_REASON_OK with *cap decoded and authenticated (and *cache_hit
 * telling which path), or a Deny decision (malformed, unknown-key,
 * bad-signature). Never compares identities and never inserts into the
 * cache: only the caller knows whether the comparison allowed. */
struct eg_decision eg_authenticate(struct eg_admission *a, const uint8_t *raw, size_t len,
				   uint64_t now, struct eg_capability *cap, bool *cache_hit);

/* raw/len is the binary token. On return *cap (may be NULL) holds the
 * decoded token when decoding succeeded (zeroed otherwise); with reason
 * unknown-key or bad-signature it is NOT authenticated. Only Allow results
 * are cached; a hit still re-checks time and redoes the whole comparison.
 * a->keys->generation is what ties cache entries to the key set. */
struct eg_decision eg_admit(struct eg_admission *a, const uint8_t *raw, size_t len,
			    const struct eg_record *rec, uint64_t now, const struct eg_request *req,
			    struct eg_capability *cap);

/* The token's contents in a public verdict result (the cap_* members, and
 * decoded set): what the worker's admit and the offline check report. */
void eg_admission_result_cap(struct eg_verdict_result *res, const struct eg_capability *cap);

#endif
