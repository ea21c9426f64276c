/* SPDX-License-Identifier: Apache-2.0 */
/* Verified-token cache: a set-associative table of EG_CACHE_WAYS slots per
 * bucket. The bucket comes from SipHash-2-4 (crypto_shorthash) under a key
 * drawn at creation, so a peer cannot aim tokens at one bucket to evict
 * others; a hit compares the whole 184 bytes, so nothing can alias. Not
 * thread-safe: one cache per thread, or a lock around it. */
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/set_assoc.h"
#include "core/token_cache.h"

#define EG_CACHE_WAYS 4
#define EG_CACHE_MAX  (1u << 22)

struct slot {
	bool used;
	uint64_t keyset_gen;
	uint64_t seq; /* insertion order, to break eviction ties */
	uint8_t raw[EG_CAP_LEN];
	struct eg_capability cap;
};

struct eg_token_cache {
	uint8_t key[crypto_shorthash_KEYBYTES];
	size_t mask; /* nbuckets - 1 */
	size_t count;
	uint64_t seq;
	struct slot *slots; /* nbuckets * EG_CACHE_WAYS */
};

struct eg_token_cache *eg_token_cache_new(size_t capacity)
{
	struct eg_token_cache *c;
	size_t cap;

	if (capacity > EG_CACHE_MAX)
		return NULL;
	cap = eg_set_assoc_capacity(capacity, EG_CACHE_WAYS);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = calloc(cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->mask = cap / EG_CACHE_WAYS - 1;
	crypto_shorthash_keygen(c->key);
	return c;
}

void eg_token_cache_free(struct eg_token_cache *c)
{
	if (!c)
		return;
	/* Entries are bearer tokens: do not leave them in freed memory. */
	sodium_memzero(c->slots, (c->mask + 1) * EG_CACHE_WAYS * sizeof(*c->slots));
	sodium_memzero(c->key, sizeof(c->key));
	free(c->slots);
	free(c);
}

static struct slot *bucket(const struct eg_token_cache *c, const uint8_t raw[EG_CAP_LEN])
{
	return &c->slots[eg_set_assoc_bucket(c->key, raw, EG_CAP_LEN, c->mask) * EG_CACHE_WAYS];
}

static bool dead(const struct slot *s, uint64_t keyset_gen, uint64_t now)
{
	return s->keyset_gen != keyset_gen ||
	       (now > s->cap.expiry && now - s->cap.expiry > EG_CLOCK_SKEW);
}

static void drop(struct eg_token_cache *c, struct slot *s)
{
	sodium_memzero(s, sizeof(*s));
	c->count--;
}

bool eg_token_cache_get(struct eg_token_cache *c, const uint8_t raw[EG_CAP_LEN],
			uint64_t keyset_gen, uint64_t now, struct eg_capability *out)
{
	struct slot *b = bucket(c, raw);

	for (int i = 0; i < EG_CACHE_WAYS; i++) {
		struct slot *s = &b[i];

		if (!s->used)
			continue;
		if (dead(s, keyset_gen, now)) {
			drop(c, s);
			continue;
		}
		/* Constant time: the peer must learn nothing about the other
		 * tokens in the bucket from how long a miss takes. */
		if (sodium_memcmp(s->raw, raw, EG_CAP_LEN) == 0) {
			*out = s->cap;
			return true;
		}
	}
	return false;
}

/* A slot as the eviction order sees it (core/set_assoc.h): an entry verified
 * under another key set is dead anyway. */
static struct eg_way way_of(const struct slot *s, uint64_t keyset_gen)
{
	struct eg_way w = {.state = EG_WAY_FREE};

	if (s->used) {
		w.state = s->keyset_gen != keyset_gen ? EG_WAY_DEAD : EG_WAY_LIVE;
		w.expiry = s->cap.expiry;
		w.seq = s->seq;
	}
	return w;
}

void eg_token_cache_put(struct eg_token_cache *c, const uint8_t raw[EG_CAP_LEN],
			const struct eg_capability *cap, uint64_t keyset_gen)
{
	struct slot *b = bucket(c, raw), *victim = NULL;

	for (int i = 0; i < EG_CACHE_WAYS && !victim; i++)
		if (b[i].used && sodium_memcmp(b[i].raw, raw, EG_CAP_LEN) == 0)
			victim = &b[i];
	if (!victim) {
		struct eg_way ways[EG_CACHE_WAYS];

		for (int i = 0; i < EG_CACHE_WAYS; i++)
			ways[i] = way_of(&b[i], keyset_gen);
		victim = &b[eg_way_victim(ways, EG_CACHE_WAYS)];
	}
	if (!victim->used)
		c->count++;
	victim->used = true;
	victim->keyset_gen = keyset_gen;
	victim->seq = ++c->seq;
	memcpy(victim->raw, raw, EG_CAP_LEN);
	victim->cap = *cap;
}

void eg_token_cache_flush(struct eg_token_cache *c)
{
	sodium_memzero(c->slots, (c->mask + 1) * EG_CACHE_WAYS * sizeof(*c->slots));
	c->count = 0;
}

size_t eg_token_cache_size(const struct eg_token_cache *c)
{
	return c->count;
}

size_t eg_token_cache_capacity(const struct eg_token_cache *c)
{
	return (c->mask + 1) * EG_CACHE_WAYS;
}
