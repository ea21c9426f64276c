/* SPDX-License-Identifier: Apache-2.0 */
/* What the set-associative caches share (core/token_cache.c,
 * client/route_cache.c): the size, the bucket of a key, and the eviction
 * order. Buckets come from SipHash-2-4 (crypto_shorthash) under a key the
 * cache draws at creation, so a peer cannot aim entries at one bucket to
 * evict others. Within a bucket the victim is a free way first, then a dead
 * one, then the live one that dies first (it has the least use left, and
 * the rule needs no per-hit bookkeeping), then the oldest. Each cache says
 * what "dead" means for its entries. */
#ifndef EXECGATE_CORE_SET_ASSOC_H
#define EXECGATE_CORE_SET_ASSOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sodium.h>

/* Entries for a wanted capacity: a power of two, at least ways (itself a
 * power of two). */
static inline size_t eg_set_assoc_capacity(size_t capacity, size_t ways)
{
	size_t cap = ways;

	while (cap < capacity)
		cap <<= 1;
	return cap;
}

/* The bucket of in[0..len) among mask + 1 (a power of two). */
static inline size_t eg_set_assoc_bucket(const uint8_t key[crypto_shorthash_KEYBYTES],
					 const uint8_t *in, size_t len, size_t mask)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v;

	crypto_shorthash(h, in, len, key);
	memcpy(&v, h, sizeof(v));
	return v & mask;
}

enum eg_way_state {
	EG_WAY_FREE = 0,
	EG_WAY_DEAD,
	EG_WAY_LIVE,
};

struct eg_way {
	enum eg_way_state state;
	uint64_t expiry; /* when the entry dies (unix seconds) */
	uint64_t seq;	 /* insertion order, to break ties */
};

/* Whether a is a better way to overwrite than b. */
static inline bool eg_way_better_victim(const struct eg_way *a, const struct eg_way *b)
{
	if (a->state != b->state)
		return a->state < b->state;
	if (a->state == EG_WAY_FREE)
		return false;
	if (a->expiry != b->expiry)
		return a->expiry < b->expiry;
	return a->seq < b->seq;
}

/* The index of the way to overwrite among ways[0..n), n >= 1: the first of
 * the best. */
static inline unsigned eg_way_victim(const struct eg_way *ways, unsigned n)
{
	unsigned v = 0;

	for (unsigned i = 1; i < n; i++)
		if (eg_way_better_victim(&ways[i], &ways[v]))
			v = i;
	return v;
}

#endif
