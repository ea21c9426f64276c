/* SPDX-License-Identifier: Apache-2.0 */
/* Route cache: a set-associative table of EG_ROUTE_WAYS slots per bucket
 * (buckets grouped into mutex stripes), repaired only by verdicts that pass
 * every check and the replay set (replay_set.c). See route_cache.h for the
 * rules. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/set_assoc.h"
#include "core/keyset.h"
#include "core/signed_verdict.h"
#include "client/replay_set.h"
#include "client/route_cache.h"

#define EG_ROUTE_WAYS	     4
#define EG_ROUTE_MAX	     (1u << 20)
#define EG_ROUTE_STRIPES_MAX 64

_Static_assert(EG_ROUTE_VERDICT_MAX_AGE + 2 * EG_CLOCK_SKEW + 1 <= EG_REPLAY_SLOTS,
	       "a live second must never share a replay slot with another live second");

struct route_slot {
	bool used;
	uint64_t seq; /* insertion order, to break eviction ties */
	struct eg_route_entry e;
};

struct eg_route_cache {
	uint8_t key[crypto_shorthash_KEYBYTES];
	size_t mask; /* nbuckets - 1 */
	size_t nstripes;
	struct route_slot *slots; /* nbuckets * EG_ROUTE_WAYS */
	pthread_mutex_t *stripes;
	_Atomic uint64_t version; /* last version handed out */
	_Atomic uint64_t seq;
	_Atomic size_t count;

	struct eg_replay_set *replay;
};

static const char *const outcome_names[EG_ROUTE__COUNT] = {
    [EG_ROUTE_REPAIRED] = "repaired",
    [EG_ROUTE_LOST_RACE] = "lost-race",
    [EG_ROUTE_NO_ENTRY] = "no-entry",
    [EG_ROUTE_EXPIRED] = "expired",
    [EG_ROUTE_IGNORED_UNSIGNED] = "ignored-unsigned",
    [EG_ROUTE_IGNORED_MALFORMED] = "ignored-malformed",
    [EG_ROUTE_IGNORED_UNKNOWN_NODE] = "ignored-unknown-node",
    [EG_ROUTE_IGNORED_BAD_SIGNATURE] = "ignored-bad-signature",
    [EG_ROUTE_IGNORED_NOT_REFRESH] = "ignored-not-refresh",
    [EG_ROUTE_IGNORED_MISMATCH] = "ignored-mismatch",
    [EG_ROUTE_IGNORED_STALE] = "ignored-stale",
    [EG_ROUTE_IGNORED_REPLAYED] = "ignored-replayed",
    [EG_ROUTE_IGNORED_REPLAY_FULL] = "ignored-replay-full",
    [EG_ROUTE_IGNORED_BAD_FRESH] = "ignored-bad-fresh",
};

const char *eg_route_outcome_name(enum eg_route_outcome o)
{
	return (unsigned)o < EG_ROUTE__COUNT ? outcome_names[o] : "unknown";
}

int eg_route_node_key_init(struct eg_node_key *k, const uint8_t worker[EG_ID_BYTES],
			   const uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
	if (sodium_is_zero(worker, EG_ID_BYTES) || eg_key_check(pk) != EG_KEY_OK)
		return -EINVAL;
	memcpy(k->worker, worker, EG_ID_BYTES);
	memcpy(k->pk, pk, sizeof(k->pk));
	eg_key_id(pk, k->kid);
	return 0;
}

int eg_route_node_key_read(struct eg_node_key *k, const uint8_t worker[EG_ID_BYTES],
			   const char *pub_path)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];

	if (eg_pubkey_read(pub_path, pk) != EG_KEY_OK)
		return -EINVAL;
	return eg_route_node_key_init(k, worker, pk);
}

int eg_route_attempt_token(struct eg_route_attempt *a, const char *token_text, size_t len)
{
	struct eg_capability cap;

	if (eg_cap_decode_text(token_text, len, &cap, NULL) != EG_DECODE_OK)
		return -EINVAL;
	memcpy(a->token_id, cap.token_id, EG_ID_BYTES);
	return 0;
}

struct eg_route_cache *eg_route_cache_new(size_t capacity, size_t per_second)
{
	struct eg_route_cache *c;
	size_t cap, nbuckets;

	if (capacity > EG_ROUTE_MAX || per_second < 1 || per_second > EG_REPLAY_PER_SEC_MAX)
		return NULL;
	cap = eg_set_assoc_capacity(capacity, EG_ROUTE_WAYS);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	nbuckets = cap / EG_ROUTE_WAYS;
	c->mask = nbuckets - 1;
	c->nstripes = nbuckets < EG_ROUTE_STRIPES_MAX ? nbuckets : EG_ROUTE_STRIPES_MAX;
	c->slots = calloc(cap, sizeof(*c->slots));
	c->stripes = calloc(c->nstripes, sizeof(*c->stripes));
	c->replay = eg_replay_set_new(per_second);
	if (!c->slots || !c->stripes || !c->replay)
		goto fail;
	for (size_t i = 0; i < c->nstripes; i++)
		pthread_mutex_init(&c->stripes[i], NULL);
	crypto_shorthash_keygen(c->key);
	return c;
fail:
	free(c->slots);
	free(c->stripes);
	eg_replay_set_free(c->replay);
	free(c);
	return NULL;
}

void eg_route_cache_free(struct eg_route_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nstripes; i++)
		pthread_mutex_destroy(&c->stripes[i]);
	free(c->slots);
	free(c->stripes);
	eg_replay_set_free(c->replay);
	free(c);
}

/* The bucket of a sandbox, and the stripe lock that guards it. */
static size_t bucket_of(const struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES])
{
	return eg_set_assoc_bucket(c->key, sandbox, EG_ID_BYTES, c->mask);
}

static pthread_mutex_t *stripe_of(struct eg_route_cache *c, size_t bucket)
{
	return &c->stripes[bucket % c->nstripes];
}

static struct route_slot *find(struct eg_route_cache *c, size_t bucket,
			       const uint8_t sandbox[EG_ID_BYTES])
{
	struct route_slot *b = &c->slots[bucket * EG_ROUTE_WAYS];

	for (int i = 0; i < EG_ROUTE_WAYS; i++)
		if (b[i].used && memcmp(b[i].e.sandbox, sandbox, EG_ID_BYTES) == 0)
			return &b[i];
	return NULL;
}

/* A slot as the eviction order sees it (core/set_assoc.h): an entry whose
 * authentication expired is dead. */
static struct eg_way way_of(const struct route_slot *s, uint64_t now)
{
	struct eg_way w = {.state = EG_WAY_FREE};

	if (s->used) {
		w.state = now >= s->e.expiry ? EG_WAY_DEAD : EG_WAY_LIVE;
		w.expiry = s->e.expiry;
		w.seq = s->seq;
	}
	return w;
}

static bool route_eq(const struct eg_route *a, const struct eg_route *b)
{
	return memcmp(a->worker, b->worker, EG_ID_BYTES) == 0 &&
	       memcmp(a->pod_uid, b->pod_uid, EG_ID_BYTES) == 0 && a->substrate == b->substrate &&
	       a->generation == b->generation && a->activation == b->activation;
}

static uint64_t next_version(struct eg_route_cache *c)
{
	return atomic_fetch_add(&c->version, 1) + 1;
}

int eg_route_cache_put(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES],
		       const struct eg_route *route, uint64_t expiry, uint64_t now,
		       struct eg_route_entry *out)
{
	size_t bucket;
	pthread_mutex_t *lock;
	struct route_slot *s, *b;

	if (sodium_is_zero(sandbox, EG_ID_BYTES) || sodium_is_zero(route->worker, EG_ID_BYTES) ||
	    expiry <= now)
		return -EINVAL;
	bucket = bucket_of(c, sandbox);
	lock = stripe_of(c, bucket);
	pthread_mutex_lock(lock);
	s = find(c, bucket, sandbox);
	if (s) {
		if (!route_eq(&s->e.route, route)) {
			s->e.route = *route;
			s->e.version = next_version(c);
		}
		s->e.expiry = expiry;
	} else {
		struct eg_way ways[EG_ROUTE_WAYS];

		b = &c->slots[bucket * EG_ROUTE_WAYS];
		for (int i = 0; i < EG_ROUTE_WAYS; i++)
			ways[i] = way_of(&b[i], now);
		s = &b[eg_way_victim(ways, EG_ROUTE_WAYS)];
		if (!s->used)
			atomic_fetch_add(&c->count, 1);
		s->used = true;
		memcpy(s->e.sandbox, sandbox, EG_ID_BYTES);
		s->e.route = *route;
		s->e.version = next_version(c);
		s->e.expiry = expiry;
	}
	s->seq = atomic_fetch_add(&c->seq, 1) + 1;
	if (out)
		*out = s->e;
	pthread_mutex_unlock(lock);
	return 0;
}

int eg_route_cache_lookup(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES],
			  uint64_t now, struct eg_route_entry *out)
{
	size_t bucket = bucket_of(c, sandbox);
	pthread_mutex_t *lock = stripe_of(c, bucket);
	struct route_slot *s;
	int err = 0;

	pthread_mutex_lock(lock);
	s = find(c, bucket, sandbox);
	if (!s)
		err = -ENOENT;
	else if (now >= s->e.expiry)
		err = -EKEYEXPIRED;
	else
		*out = s->e;
	pthread_mutex_unlock(lock);
	return err;
}

int eg_route_cache_forget(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES])
{
	size_t bucket = bucket_of(c, sandbox);
	pthread_mutex_t *lock = stripe_of(c, bucket);
	struct route_slot *s;

	pthread_mutex_lock(lock);
	s = find(c, bucket, sandbox);
	if (s) {
		memset(s, 0, sizeof(*s));
		atomic_fetch_sub(&c->count, 1);
	}
	pthread_mutex_unlock(lock);
	return s ? 0 : -ENOENT;
}

size_t eg_route_cache_size(struct eg_route_cache *c)
{
	return atomic_load(&c->count);
}

size_t eg_route_cache_capacity(const struct eg_route_cache *c)
{
	return (c->mask + 1) * EG_ROUTE_WAYS;
}

/* The replay set's answer as an outcome (REPAIRED meaning "new, now
 * remembered"). */
static enum eg_route_outcome replay_check_and_add(struct eg_route_cache *c, const uint8_t *body,
						  uint64_t issued_at)
{
	static const enum eg_route_outcome outcome[] = {
	    [EG_REPLAY_NEW] = EG_ROUTE_REPAIRED,
	    [EG_REPLAY_STALE] = EG_ROUTE_IGNORED_STALE,
	    [EG_REPLAY_SEEN] = EG_ROUTE_IGNORED_REPLAYED,
	    [EG_REPLAY_FULL] = EG_ROUTE_IGNORED_REPLAY_FULL,
	};

	return outcome[eg_replay_set_add(c->replay, body, EG_SV_BODY_LEN, issued_at)];
}

static const struct eg_node_key *node_key_find(const struct eg_node_keys *nk,
					       const uint8_t kid[EG_KEY_ID_LEN],
					       const uint8_t worker[EG_ID_BYTES])
{
	for (size_t i = 0; nk && i < nk->n; i++)
		if (memcmp(nk->keys[i].kid, kid, EG_KEY_ID_LEN) == 0 &&
		    memcmp(nk->keys[i].worker, worker, EG_ID_BYTES) == 0)
			return &nk->keys[i];
	return NULL;
}

/* Lexicographic (generation, activation): both only grow per sandbox. */
static bool route_older(const struct eg_route *a, const struct eg_route *b)
{
	if (a->generation != b->generation)
		return a->generation < b->generation;
	return a->activation < b->activation;
}

/* Every check on the verdict itself, outside any lock. */
static enum eg_route_outcome check_verdict(struct eg_route_cache *c, const uint8_t *raw, size_t len,
					   const struct eg_node_keys *node_keys,
					   const struct eg_route_attempt *rj,
					   const struct eg_route *fresh, uint64_t now)
{
	const struct eg_route_entry *e = &rj->entry;
	const struct eg_node_key *k;
	struct eg_signed_verdict v;

	if (!raw || len == 0)
		return EG_ROUTE_IGNORED_UNSIGNED;
	if (eg_sv_decode(raw, len, &v) != EG_SV_OK)
		return EG_ROUTE_IGNORED_MALFORMED;
	k = node_key_find(node_keys, v.node_key_id, v.worker);
	if (!k)
		return EG_ROUTE_IGNORED_UNKNOWN_NODE;
	if (eg_sv_verify(raw, len, k->pk, &v) != EG_SV_OK)
		return EG_ROUTE_IGNORED_BAD_SIGNATURE;
	if (v.verdict != EG_REFRESH_ROUTE)
		return EG_ROUTE_IGNORED_NOT_REFRESH;
	if (memcmp(v.sandbox, e->sandbox, EG_ID_BYTES) ||
	    memcmp(v.token_id, rj->token_id, EG_ID_BYTES) ||
	    memcmp(v.worker, e->route.worker, EG_ID_BYTES))
		return EG_ROUTE_IGNORED_MISMATCH;
	/* The first test bounds issued_at by now, so the second cannot wrap. */
	if (v.issued_at > now + EG_CLOCK_SKEW ||
	    v.issued_at + EG_ROUTE_VERDICT_MAX_AGE + EG_CLOCK_SKEW < now)
		return EG_ROUTE_IGNORED_STALE;
	if (sodium_is_zero(fresh->worker, EG_ID_BYTES) || route_older(fresh, &e->route))
		return EG_ROUTE_IGNORED_BAD_FRESH;
	return replay_check_and_add(c, raw, v.issued_at);
}

/* The compare-and-swap after o's checks, and the entry left behind. */
static enum eg_route_outcome swap(struct eg_route_cache *c, enum eg_route_outcome o,
				  const struct eg_route_entry *rj, const struct eg_route *fresh,
				  uint64_t now, struct eg_route_entry *current)
{
	size_t bucket = bucket_of(c, rj->sandbox);
	pthread_mutex_t *lock = stripe_of(c, bucket);
	struct route_slot *s;

	pthread_mutex_lock(lock);
	s = find(c, bucket, rj->sandbox);
	if (o != EG_ROUTE_REPAIRED)
		goto out;
	/* Versions are never reused, so "same version" means "still the
	 * entry the operation was refused on"; the route compare is a second
	 * guard. An expired entry is not repaired: the caller authenticates
	 * again anyway. */
	if (!s)
		o = EG_ROUTE_NO_ENTRY;
	else if (now >= s->e.expiry)
		o = EG_ROUTE_EXPIRED;
	else if (s->e.version != rj->version || !route_eq(&s->e.route, &rj->route))
		o = EG_ROUTE_LOST_RACE;
	else {
		/* Route repair, not re-authentication: the expiry stays. */
		s->e.route = *fresh;
		s->e.version = next_version(c);
		s->seq = atomic_fetch_add(&c->seq, 1) + 1;
	}
out:
	if (current) {
		if (s && now < s->e.expiry)
			*current = s->e;
		else
			memset(current, 0, sizeof(*current));
	}
	pthread_mutex_unlock(lock);
	return o;
}

enum eg_route_outcome eg_route_cache_on_refresh(struct eg_route_cache *c, const uint8_t *verdict,
						size_t len, const struct eg_node_keys *node_keys,
						const struct eg_route_attempt *rejected,
						const struct eg_route *fresh, uint64_t now,
						struct eg_route_entry *current)
{
	enum eg_route_outcome o;

	o = check_verdict(c, verdict, len, node_keys, rejected, fresh, now);
	return swap(c, o, &rejected->entry, fresh, now, current);
}

enum eg_route_outcome eg_route_cache_on_refresh_text(struct eg_route_cache *c, const char *text,
						     size_t len,
						     const struct eg_node_keys *node_keys,
						     const struct eg_route_attempt *rejected,
						     const struct eg_route *fresh, uint64_t now,
						     struct eg_route_entry *current)
{
	uint8_t buf[EG_SIGNED_VERDICT_TEXT_MAX];
	size_t n;

	if (!text || len == 0)
		return eg_route_cache_on_refresh(c, NULL, 0, node_keys, rejected, fresh, now,
						 current);
	/* The capability's base64url reader: same alphabet, same strictness. */
	if (eg_cap_text_to_bin(text, len, buf, sizeof(buf), &n) != EG_DECODE_OK)
		return swap(c, EG_ROUTE_IGNORED_MALFORMED, &rejected->entry, fresh, now, current);
	return eg_route_cache_on_refresh(c, buf, n, node_keys, rejected, fresh, now, current);
}
