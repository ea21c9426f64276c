/* SPDX-License-Identifier: Apache-2.0 */
/* Admission: the order is decode, key, signature, compare. A cache hit
 * stands in for the first three only; time and identity are judged anew on
 * every call because the record and the clock move under a cached token. */
#include <string.h>
#include <sodium.h>
#include "core/admission.h"

static struct eg_decision deny(enum eg_reason reason, enum eg_decode_err derr)
{
	struct eg_decision d = {.verdict = EG_DENY, .reason = reason, .decode_err = derr};

	return d;
}

struct eg_decision eg_authenticate(struct eg_admission *a, const uint8_t *raw, size_t len,
				   uint64_t now, struct eg_capability *cap, bool *cache_hit)
{
	uint8_t msg[EG_CAP_SIGNED_LEN];
	struct eg_decision ok = {.verdict = EG_ALLOW, .reason = EG_REASON_OK};
	const struct eg_key *key;
	enum eg_decode_err derr;
	bool hit = false;

	*cache_hit = false;
	if (len == EG_CAP_LEN && a->cache) {
		if (a->cache_lock)
			pthread_mutex_lock(a->cache_lock);
		hit = eg_token_cache_get(a->cache, raw, a->keys->generation, now, cap);
		if (a->cache_lock)
			pthread_mutex_unlock(a->cache_lock);
		if (hit) {
			*cache_hit = true;
			return ok;
		}
	}
	derr = eg_cap_decode(raw, len, cap);
	if (derr != EG_DECODE_OK)
		return deny(EG_REASON_MALFORMED, derr);
	key = eg_keyset_find(a->keys, cap->key_id);
	if (!key)
		return deny(EG_REASON_UNKNOWN_KEY, EG_DECODE_OK);
	/* The decoder accepted raw, so raw is the canonical body: sign-checking
	 * the bytes as received is the same as re-encoding them. */
	eg_cap_signed_message(raw, msg);
	if (crypto_sign_verify_detached(raw + EG_OFF_SIGNATURE, msg, sizeof(msg), key->pk) != 0)
		return deny(EG_REASON_BAD_SIGNATURE, EG_DECODE_OK);
	return ok;
}

struct eg_decision eg_admit(struct eg_admission *a, const uint8_t *raw, size_t len,
			    const struct eg_record *rec, uint64_t now, const struct eg_request *req,
			    struct eg_capability *cap)
{
	struct eg_capability local;
	struct eg_decision d;
	bool hit;

	if (!cap)
		cap = &local;
	d = eg_authenticate(a, raw, len, now, cap, &hit);
	if (d.reason != EG_REASON_OK)
		return d;
	d = eg_compare(cap, rec, now, req);
	if (d.verdict == EG_ALLOW && !hit && a->cache) {
		if (a->cache_lock)
			pthread_mutex_lock(a->cache_lock);
		eg_token_cache_put(a->cache, raw, cap, a->keys->generation);
		if (a->cache_lock)
			pthread_mutex_unlock(a->cache_lock);
	}
	return d;
}

void eg_admission_result_cap(struct eg_verdict_result *res, const struct eg_capability *cap)
{
	res->decoded = true;
	memcpy(res->cap_sandbox, cap->id.sandbox, EG_ID_BYTES);
	memcpy(res->cap_token_id, cap->token_id, EG_ID_BYTES);
	memcpy(res->cap_worker, cap->id.worker, EG_ID_BYTES);
	res->cap_generation = cap->id.generation;
	res->cap_activation = cap->id.activation;
	res->cap_scope = cap->scope;
	res->cap_expiry = cap->expiry;
}
