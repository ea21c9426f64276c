/* SPDX-License-Identifier: Apache-2.0 */
/* Verified-token cache: bounded, exact, keyed, never holds failures, and
 * every hit is judged again against time, key set and record. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/admission.h"
#include "core/token_cache.h"
#include "helpers.h"

static struct test_key key;
static struct eg_keyset ks;
static struct eg_token_cache *cache;
static struct eg_admission adm;
static struct eg_capability cap;
static struct eg_record rec;
static struct eg_request req;
static uint8_t raw[EG_CAP_LEN];

static void setup(void)
{
	test_key(&key, 5);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	cache = eg_token_cache_new(64);
	cr_assert_not_null(cache);
	adm.keys = &ks;
	adm.cache = cache;
	test_cap(&cap, &key);
	test_sign(&cap, &key, raw);
	test_record_for(&cap, &rec);
	memset(&req, 0, sizeof(req));
}

static void teardown(void)
{
	eg_token_cache_free(cache);
}

TestSuite(cache, .init = setup, .fini = teardown);

static struct eg_decision admit(const uint8_t *b, uint64_t now)
{
	return eg_admit(&adm, b, EG_CAP_LEN, &rec, now, &req, NULL);
}

/* Token number i: same template, its own token id. */
static void nth_token(uint32_t i, uint8_t out[EG_CAP_LEN])
{
	struct eg_capability c;

	test_cap(&c, &key);
	memcpy(c.token_id + 12, &i, sizeof(i));
	c.token_id[0] = 0x99;
	test_sign(&c, &key, out);
}

Test(cache, capacity_rounds_to_power_of_two)
{
	struct eg_token_cache *c;

	cr_assert_eq(eg_token_cache_capacity(cache), 64);
	c = eg_token_cache_new(0);
	cr_assert_eq(eg_token_cache_capacity(c), 4);
	eg_token_cache_free(c);
	c = eg_token_cache_new(100);
	cr_assert_eq(eg_token_cache_capacity(c), 128);
	eg_token_cache_free(c);
	cr_assert_null(eg_token_cache_new((size_t)1 << 30));
}

Test(cache, stays_bounded)
{
	uint8_t b[EG_CAP_LEN];

	for (uint32_t i = 0; i < 1000; i++) {
		nth_token(i, b);
		cr_assert_eq(admit(b, T0).verdict, EG_ALLOW);
		cr_assert_leq(eg_token_cache_size(cache), 64);
	}
	/* With 16 buckets of 4, 1000 keyed-hash placements fill every slot. */
	cr_assert_eq(eg_token_cache_size(cache), 64);
	/* The most recent token is there. */
	struct eg_capability out;

	cr_assert(eg_token_cache_get(cache, b, ks.generation, T0, &out));
}

Test(cache, holds_allow_only)
{
	uint8_t b[EG_CAP_LEN];
	struct eg_record other = rec;

	memcpy(b, raw, sizeof(b));
	b[EG_OFF_SIGNATURE] ^= 1;
	cr_assert_eq(admit(b, T0).reason, EG_REASON_BAD_SIGNATURE);
	cr_assert_eq(admit(raw, T0 + 200).reason, EG_REASON_EXPIRED);
	req.scope = EG_SCOPE_CONTROL;
	cr_assert_eq(admit(raw, T0).reason, EG_REASON_SCOPE_NOT_ALLOWED);
	req.scope = 0;
	other.id.generation = 8;
	cr_assert_eq(eg_admit(&adm, raw, EG_CAP_LEN, &other, T0, &req, NULL).reason,
		     EG_REASON_GENERATION_MISMATCH);
	cr_assert_eq(eg_admit(&adm, raw, EG_CAP_LEN, NULL, T0, &req, NULL).reason,
		     EG_REASON_NO_RECORD);
	cr_assert_eq(eg_admit(&adm, raw, 100, &rec, T0, &req, NULL).reason, EG_REASON_MALFORMED);
	cr_assert_eq(eg_token_cache_size(cache), 0);

	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	cr_assert_eq(eg_token_cache_size(cache), 1);
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	cr_assert_eq(eg_token_cache_size(cache), 1);
}

/* Entries are the whole token: one byte of difference is another entry,
 * and a near-miss never returns the neighbour's capability. */
Test(cache, exact_bytes_distinct_entries)
{
	struct eg_capability a, b, out;
	uint8_t ra[EG_CAP_LEN], rb[EG_CAP_LEN];

	test_cap(&a, &key);
	b = a;
	b.id.generation = 8;
	test_sign(&a, &key, ra);
	test_sign(&b, &key, rb);
	eg_token_cache_put(cache, ra, &a, ks.generation);
	cr_assert_not(eg_token_cache_get(cache, rb, ks.generation, T0, &out));
	/* Same body, one signature byte different: still a miss. */
	memcpy(rb, ra, EG_CAP_LEN);
	rb[EG_CAP_LEN - 1] ^= 0x01;
	cr_assert_not(eg_token_cache_get(cache, rb, ks.generation, T0, &out));
	test_sign(&b, &key, rb);
	eg_token_cache_put(cache, rb, &b, ks.generation);
	cr_assert_eq(eg_token_cache_size(cache), 2);
	cr_assert(eg_token_cache_get(cache, ra, ks.generation, T0, &out));
	cr_assert_eq(out.id.generation, 7);
	cr_assert(eg_token_cache_get(cache, rb, ks.generation, T0, &out));
	cr_assert_eq(out.id.generation, 8);
	/* Putting the same bytes again replaces, it does not duplicate. */
	eg_token_cache_put(cache, ra, &a, ks.generation);
	cr_assert_eq(eg_token_cache_size(cache), 2);
}

/* Two caches draw their own SipHash keys: the same tokens land in different
 * buckets, so which tokens evict each other is not predictable from outside. */
Test(cache, bucket_placement_is_keyed)
{
	struct eg_token_cache *c1 = eg_token_cache_new(4096), *c2 = eg_token_cache_new(4096);
	struct eg_capability out;
	uint8_t b[EG_CAP_LEN];
	size_t in1 = 0, in2 = 0, both = 0;

	/* Fill both with the same 8192 tokens; the survivors differ. */
	for (uint32_t i = 0; i < 8192; i++) {
		nth_token(i, b);
		eg_token_cache_put(c1, b, &cap, ks.generation);
		eg_token_cache_put(c2, b, &cap, ks.generation);
	}
	for (uint32_t i = 0; i < 8192; i++) {
		bool h1, h2;

		nth_token(i, b);
		h1 = eg_token_cache_get(c1, b, ks.generation, T0, &out);
		h2 = eg_token_cache_get(c2, b, ks.generation, T0, &out);
		in1 += h1;
		in2 += h2;
		both += h1 && h2;
	}
	/* Nearly full (a bucket may draw fewer than 4 of the 8192); with one
	 * and the same hash key, the survivors would be the same set. */
	cr_assert_leq(in1, 4096);
	cr_assert_gt(in1, 3800);
	cr_assert_gt(in2, 3800);
	cr_assert_lt(both, in1);
	cr_assert_lt(both, in2);
	eg_token_cache_free(c1);
	eg_token_cache_free(c2);
}

Test(cache, entries_die_at_expiry_plus_skew)
{
	struct eg_capability out;

	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	cr_assert(eg_token_cache_get(cache, raw, ks.generation, T0 + 120 + 15, &out));
	cr_assert_not(eg_token_cache_get(cache, raw, ks.generation, T0 + 120 + 16, &out));
	cr_assert_eq(eg_token_cache_size(cache), 0);
}

Test(cache, cached_token_after_expiry_is_denied)
{
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	cr_assert_eq(admit(raw, T0 + 135).verdict, EG_ALLOW);
	struct eg_decision d = admit(raw, T0 + 136);

	cr_assert_eq(d.verdict, EG_DENY);
	cr_assert_eq(d.reason, EG_REASON_EXPIRED);
	cr_assert_eq(eg_token_cache_size(cache), 0);
}

Test(cache, cached_token_after_its_key_is_removed_is_denied)
{
	struct eg_decision d;
	struct test_key other;

	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	cr_assert_eq(eg_token_cache_size(cache), 1);
	cr_assert_eq(eg_keyset_remove(&ks, key.kid), EG_KEY_OK);
	d = admit(raw, T0);
	cr_assert_eq(d.verdict, EG_DENY);
	cr_assert_eq(d.reason, EG_REASON_UNKNOWN_KEY);
	cr_assert_eq(eg_token_cache_size(cache), 0);

	/* Adding an unrelated key also invalidates what was verified. */
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	test_key(&other, 6);
	cr_assert_eq(eg_keyset_add(&ks, other.pk, NULL), EG_KEY_OK);
	struct eg_capability out;

	cr_assert_not(eg_token_cache_get(cache, raw, ks.generation, T0, &out));
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW); /* verified again */
}

Test(cache, hit_redoes_the_identity_comparison)
{
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	/* The receiver installs execution 8 and retires 7. */
	rec.id.generation = 8;
	rec.retired_below = 8;
	struct eg_decision d = admit(raw, T0 + 1);

	cr_assert_eq(d.verdict, EG_REFRESH_ROUTE);
	cr_assert_eq(d.reason, EG_REASON_GENERATION_RETIRED);
	/* Scope and open kind are judged per call, too. */
	test_record_for(&cap, &rec);
	req.scope = EG_SCOPE_TERMINAL;
	cr_assert_eq(admit(raw, T0).reason, EG_REASON_SCOPE_NOT_ALLOWED);
	req.scope = 0;
	rec.id.activation = 2;
	cr_assert_eq(admit(raw, T0).reason, EG_REASON_ACTIVATION_MISMATCH);
	req.open_kind = EG_OPEN_ESTABLISHED;
	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	/* A hit before not-before - skew is still refused. */
	rec.id.activation = 1;
	cr_assert_eq(admit(raw, T0 - 16).reason, EG_REASON_NOT_YET_VALID);
	cr_assert_eq(eg_token_cache_size(cache), 1);
}

Test(cache, flush_empties)
{
	struct eg_capability out;

	cr_assert_eq(admit(raw, T0).verdict, EG_ALLOW);
	eg_token_cache_flush(cache);
	cr_assert_eq(eg_token_cache_size(cache), 0);
	cr_assert_not(eg_token_cache_get(cache, raw, ks.generation, T0, &out));
}

/* The decoded capability of a hit is what the verified token says. */
Test(cache, hit_returns_the_capability)
{
	struct eg_capability c1, c2;

	cr_assert_eq(eg_admit(&adm, raw, EG_CAP_LEN, &rec, T0, &req, &c1).verdict, EG_ALLOW);
	cr_assert_eq(eg_admit(&adm, raw, EG_CAP_LEN, &rec, T0, &req, &c2).verdict, EG_ALLOW);
	cr_assert_arr_eq(c1.token_id, c2.token_id, EG_ID_BYTES);
	cr_assert_arr_eq(c1.signature, c2.signature, EG_CAP_SIG_LEN);
	cr_assert_eq(c1.expiry, c2.expiry);
}
