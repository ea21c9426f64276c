/* SPDX-License-Identifier: Apache-2.0 */
/* The replay set: a ring of one-second slots of verdict-body hashes. See
 * replay_set.h for the rules. */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include "client/replay_set.h"

#define REPLAY_HASH_LEN 16

struct replay_slot {
	uint64_t second; /* the issued_at this slot holds; 0: empty */
	uint32_t n;
	uint8_t *hashes; /* per_second * REPLAY_HASH_LEN */
};

struct eg_replay_set {
	pthread_mutex_t lock;
	size_t per_second;
	struct replay_slot slots[EG_REPLAY_SLOTS];
	uint8_t *store;
};

struct eg_replay_set *eg_replay_set_new(size_t per_second)
{
	struct eg_replay_set *s;

	if (per_second < 1 || per_second > EG_REPLAY_PER_SEC_MAX)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->store = calloc(EG_REPLAY_SLOTS * per_second, REPLAY_HASH_LEN);
	if (!s->store) {
		free(s);
		return NULL;
	}
	s->per_second = per_second;
	pthread_mutex_init(&s->lock, NULL);
	for (size_t i = 0; i < EG_REPLAY_SLOTS; i++)
		s->slots[i].hashes = s->store + i * per_second * REPLAY_HASH_LEN;
	return s;
}

void eg_replay_set_free(struct eg_replay_set *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->store);
	free(s);
}

enum eg_replay_result eg_replay_set_add(struct eg_replay_set *s, const uint8_t *body, size_t len,
					uint64_t issued_at)
{
	uint8_t h[REPLAY_HASH_LEN];
	struct replay_slot *slot = &s->slots[issued_at % EG_REPLAY_SLOTS];
	enum eg_replay_result r = EG_REPLAY_NEW;

	crypto_generichash(h, sizeof(h), body, len, NULL, 0);
	pthread_mutex_lock(&s->lock);
	if (slot->second > issued_at) {
		/* A later second holds the slot: a caller's clock went back by
		 * more than the window. What this second held is forgotten, so
		 * the verdict cannot be proven new. */
		r = EG_REPLAY_STALE;
		goto out;
	}
	if (slot->second < issued_at) {
		/* The slot's second is at least a ring older: out of the window. */
		slot->second = issued_at;
		slot->n = 0;
	}
	for (uint32_t i = 0; i < slot->n; i++)
		if (memcmp(slot->hashes + (size_t)i * REPLAY_HASH_LEN, h, REPLAY_HASH_LEN) == 0) {
			r = EG_REPLAY_SEEN;
			goto out;
		}
	if (slot->n == s->per_second) {
		r = EG_REPLAY_FULL;
		goto out;
	}
	memcpy(slot->hashes + (size_t)slot->n * REPLAY_HASH_LEN, h, REPLAY_HASH_LEN);
	slot->n++;
out:
	pthread_mutex_unlock(&s->lock);
	return r;
}
