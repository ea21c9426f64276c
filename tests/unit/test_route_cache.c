/* SPDX-License-Identifier: Apache-2.0 */
/* Route cache: entries and their expiry, every way a verdict is ignored
 * (forged, unsigned, garbage, replayed, stale, a deny, about another
 * attempt), the compare-and-swap, the replay ring's edges, eviction, the
 * per-operation replay rules, and threads racing refreshes. The exhaustive
 * interleavings are in test_route_model.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "client/retry.h"
#include "client/route_cache.h"
#include "core/key_file.h"
#include "core/signed_verdict.h"
#include "helpers.h"

#define NOW    (T0 + 1)
#define EXPIRY (T0 + 600)

static struct test_key key_a, key_b, forger;
static struct eg_node_key nk[2];
static const struct eg_node_keys NODE_KEYS = {nk, 2};
static struct eg_route_cache *cache;
static struct eg_route x7, x8, x9;
static const uint8_t TOKEN[EG_ID_BYTES] = {0x70, 0x6b, 0x11, 1, 2,  3,	4,  5,
					   6,	 7,    8,    9, 10, 11, 12, 13};

static struct eg_route route(const uint8_t worker[EG_ID_BYTES], uint64_t gen, uint32_t act)
{
	struct eg_route r;

	memset(&r, 0, sizeof(r));
	memcpy(r.worker, worker, EG_ID_BYTES);
	r.substrate = EG_SUBSTRATE_FC_HOST;
	r.generation = gen;
	r.activation = act;
	return r;
}

static void setup(void)
{
	test_key(&key_a, 20);
	test_key(&key_b, 21);
	test_key(&forger, 22);
	cr_assert_eq(eg_route_node_key_init(&nk[0], WORKER_A, key_a.pk), 0);
	cr_assert_eq(eg_route_node_key_init(&nk[1], WORKER_B, key_b.pk), 0);
	cache = eg_route_cache_new(64, 16);
	cr_assert_not_null(cache);
	x7 = route(WORKER_A, 7, 1);
	x8 = route(WORKER_B, 8, 1);
	x9 = route(WORKER_B, 8, 2);
}

static void teardown(void)
{
	eg_route_cache_free(cache);
}

TestSuite(route_cache, .init = setup, .fini = teardown);

/* Worker A's refusal of TOKEN on sandbox S: A runs nothing for S. */
static void refusal(struct eg_signed_verdict *v, const uint8_t kid[EG_KEY_ID_LEN],
		    uint64_t issued_at)
{
	memset(v, 0, sizeof(*v));
	v->version = EG_SV_VERSION;
	v->verdict = EG_REFRESH_ROUTE;
	v->reason = EG_REASON_NO_RECORD;
	memcpy(v->node_key_id, kid, EG_KEY_ID_LEN);
	memcpy(v->token_id, TOKEN, EG_ID_BYTES);
	memcpy(v->sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(v->worker, WORKER_A, EG_ID_BYTES);
	v->issued_at = issued_at;
}

static void signed_refusal(uint8_t raw[EG_SV_LEN], uint64_t issued_at)
{
	struct eg_signed_verdict v;

	refusal(&v, key_a.kid, issued_at);
	eg_sv_sign(&v, key_a.sk, raw);
}

/* S cached on X7, and the attempt the operation made on it. */
static void cached_x7(struct eg_route_attempt *at)
{
	memset(at, 0, sizeof(*at));
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, EXPIRY, NOW, &at->entry), 0);
	memcpy(at->token_id, TOKEN, EG_ID_BYTES);
}

static void assert_cached(const struct eg_route_entry *want)
{
	struct eg_route_entry e;

	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, NOW, &e), 0);
	cr_assert_eq(memcmp(&e, want, sizeof(e)), 0, "the entry is not the one expected");
}

static enum eg_route_outcome refresh(const uint8_t *raw, size_t len,
				     const struct eg_route_attempt *at,
				     const struct eg_route *fresh, uint64_t now)
{
	struct eg_route_entry cur;

	return eg_route_cache_on_refresh(cache, raw, len, &NODE_KEYS, at, fresh, now, &cur);
}

#define assert_outcome(got, want)                                                                  \
	cr_assert_eq((got), (want), "%s, expected %s", eg_route_outcome_name(got),                 \
		     eg_route_outcome_name(want))

Test(route_cache, put_lookup_forget_and_the_authentication_expiry)
{
	struct eg_route_entry e, again;
	struct eg_route zero = {0};

	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, NOW, &e), -ENOENT);
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &zero, EXPIRY, NOW, &e), -EINVAL);
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, NOW, NOW, &e), -EINVAL);
	cr_assert_eq(eg_route_cache_put(cache, (uint8_t[EG_ID_BYTES]){0}, &x7, EXPIRY, NOW, &e),
		     -EINVAL);
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, EXPIRY, NOW, &e), 0);
	cr_assert_geq(e.version, 1);
	cr_assert_eq(e.expiry, EXPIRY);
	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, EXPIRY - 1, &again), 0);
	cr_assert_eq(memcmp(&e, &again, sizeof(e)), 0);
	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, EXPIRY, &again), -EKEYEXPIRED);
	/* Re-authentication on the same route moves the expiry, not the
	 * version; another route is a new version. */
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, EXPIRY + 60, NOW, &again), 0);
	cr_assert_eq(again.version, e.version);
	cr_assert_eq(again.expiry, EXPIRY + 60);
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x8, EXPIRY, NOW, &again), 0);
	cr_assert_gt(again.version, e.version);
	cr_assert_eq(eg_route_cache_size(cache), 1);
	cr_assert_eq(eg_route_cache_forget(cache, SANDBOX_S), 0);
	cr_assert_eq(eg_route_cache_forget(cache, SANDBOX_S), -ENOENT);
	cr_assert_eq(eg_route_cache_size(cache), 0);
}

Test(route_cache, signed_refresh_repairs_by_cas_and_keeps_the_expiry)
{
	struct eg_route_attempt at;
	struct eg_route_entry cur;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	signed_refusal(raw, NOW);
	assert_outcome(
	    eg_route_cache_on_refresh(cache, raw, sizeof(raw), &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_REPAIRED);
	cr_assert_eq(memcmp(&cur.route, &x8, sizeof(x8)), 0);
	cr_assert_gt(cur.version, at.entry.version);
	cr_assert_eq(cur.expiry, EXPIRY, "route repair is not re-authentication");
	assert_cached(&cur);
	/* Still dies when the authentication does. */
	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, EXPIRY, &cur), -EKEYEXPIRED);
}

Test(route_cache, the_text_form_is_accepted_and_bad_text_is_malformed)
{
	struct eg_route_attempt at;
	struct eg_route_entry cur;
	uint8_t raw[EG_SV_LEN];
	char text[EG_SIGNED_VERDICT_TEXT_MAX];
	size_t n;

	cached_x7(&at);
	signed_refusal(raw, NOW);
	n = eg_sv_to_text(raw, text);
	assert_outcome(
	    eg_route_cache_on_refresh_text(cache, "AAAA*", 5, &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_IGNORED_MALFORMED);
	cr_assert_eq(cur.version, at.entry.version, "current is reported on every outcome");
	assert_outcome(
	    eg_route_cache_on_refresh_text(cache, text, n - 1, &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_IGNORED_MALFORMED);
	assert_outcome(
	    eg_route_cache_on_refresh_text(cache, NULL, 0, &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_IGNORED_UNSIGNED);
	assert_outcome(
	    eg_route_cache_on_refresh_text(cache, text, n, &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_REPAIRED);
	cr_assert_eq(memcmp(&cur.route, &x8, sizeof(x8)), 0);
}

Test(route_cache, forged_unsigned_garbage_and_unknown_nodes_change_nothing)
{
	struct eg_signed_verdict v;
	struct eg_route_attempt at;
	uint8_t raw[EG_SV_LEN], garbage[EG_SV_LEN];
	struct eg_node_keys only_b = {&nk[1], 1};
	struct eg_route_entry cur;

	cached_x7(&at);
	/* A forger who copies A's key id but signs with his own key. */
	refusal(&v, key_a.kid, NOW);
	eg_sv_sign(&v, forger.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_BAD_SIGNATURE);
	/* The forger under his own key id: not a node key we hold. */
	refusal(&v, forger.kid, NOW);
	eg_sv_sign(&v, forger.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_UNKNOWN_NODE);
	/* Worker B's real key vouching for worker A. */
	refusal(&v, key_b.kid, NOW);
	eg_sv_sign(&v, key_b.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_UNKNOWN_NODE);
	/* A's genuine verdict, but the caller does not hold A's key. */
	signed_refusal(raw, NOW);
	assert_outcome(
	    eg_route_cache_on_refresh(cache, raw, sizeof(raw), &only_b, &at, &x8, NOW, &cur),
	    EG_ROUTE_IGNORED_UNKNOWN_NODE);
	assert_outcome(refresh(NULL, 0, &at, &x8, NOW), EG_ROUTE_IGNORED_UNSIGNED);
	memset(garbage, 0xa5, sizeof(garbage));
	assert_outcome(refresh(garbage, sizeof(garbage), &at, &x8, NOW),
		       EG_ROUTE_IGNORED_MALFORMED);
	assert_outcome(refresh(raw, sizeof(raw) - 1, &at, &x8, NOW), EG_ROUTE_IGNORED_MALFORMED);
	raw[100] ^= 1; /* in the signature */
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_BAD_SIGNATURE);
	assert_cached(&at.entry); /* no ignored verdict touched it */
	/* And the genuine one still works: nothing above consumed it. */
	raw[100] ^= 1;
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_REPAIRED);
}

Test(route_cache, a_verdict_counts_once)
{
	struct eg_route_attempt at;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	signed_refusal(raw, NOW);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_REPAIRED);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_REPLAYED);
	/* Replayed later against an entry put back on X7 (a new version, so
	 * the compare-and-swap alone would let it through): still replayed. */
	cached_x7(&at);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x9, NOW + 10), EG_ROUTE_IGNORED_REPLAYED);
	assert_cached(&at.entry);
}

Test(route_cache, freshness_window_edges)
{
	struct eg_route_attempt at;
	uint8_t raw[EG_SV_LEN];
	const uint64_t now = NOW + 100;
	const uint64_t oldest = now - EG_ROUTE_VERDICT_MAX_AGE - EG_CLOCK_SKEW;

	cached_x7(&at);
	signed_refusal(raw, oldest - 1);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, now), EG_ROUTE_IGNORED_STALE);
	signed_refusal(raw, now + EG_CLOCK_SKEW + 1);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, now), EG_ROUTE_IGNORED_STALE);
	signed_refusal(raw, UINT64_MAX);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, now), EG_ROUTE_IGNORED_STALE);
	signed_refusal(raw, now + EG_CLOCK_SKEW);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, now), EG_ROUTE_REPAIRED);
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, EXPIRY, now, &at.entry), 0);
	signed_refusal(raw, oldest);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, now), EG_ROUTE_REPAIRED);
}

Test(route_cache, a_deny_never_refreshes)
{
	struct eg_signed_verdict v;
	struct eg_route_attempt at;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	refusal(&v, key_a.kid, NOW);
	v.verdict = EG_DENY;
	v.reason = EG_REASON_SANDBOX_MISMATCH;
	eg_sv_sign(&v, key_a.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_NOT_REFRESH);
	v.reason = EG_REASON_EXPIRED;
	eg_sv_sign(&v, key_a.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_NOT_REFRESH);
	assert_cached(&at.entry);
}

Test(route_cache, a_verdict_about_another_attempt_is_a_mismatch)
{
	struct eg_signed_verdict v;
	struct eg_route_attempt at, other;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	signed_refusal(raw, NOW);
	other = at;
	other.token_id[15] ^= 1;
	assert_outcome(refresh(raw, sizeof(raw), &other, &x8, NOW), EG_ROUTE_IGNORED_MISMATCH);
	other = at;
	memcpy(other.entry.sandbox, SANDBOX_T, EG_ID_BYTES);
	assert_outcome(refresh(raw, sizeof(raw), &other, &x8, NOW), EG_ROUTE_IGNORED_MISMATCH);
	/* B refused something, but the attempt was sent to A. */
	refusal(&v, key_b.kid, NOW);
	memcpy(v.worker, WORKER_B, EG_ID_BYTES);
	eg_sv_sign(&v, key_b.sk, raw);
	assert_outcome(refresh(raw, sizeof(raw), &at, &x8, NOW), EG_ROUTE_IGNORED_MISMATCH);
	assert_cached(&at.entry);
}

Test(route_cache, a_fresh_route_older_than_the_rejected_one_is_refused)
{
	struct eg_route_attempt at;
	struct eg_route old = route(WORKER_B, 6, 9), zero = x8;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	signed_refusal(raw, NOW);
	assert_outcome(refresh(raw, sizeof(raw), &at, &old, NOW), EG_ROUTE_IGNORED_BAD_FRESH);
	memset(zero.worker, 0, EG_ID_BYTES);
	assert_outcome(refresh(raw, sizeof(raw), &at, &zero, NOW), EG_ROUTE_IGNORED_BAD_FRESH);
	old = route(WORKER_A, 7, 0);
	assert_outcome(refresh(raw, sizeof(raw), &at, &old, NOW), EG_ROUTE_IGNORED_BAD_FRESH);
	/* Same generation and activation elsewhere (a pod moved) is fine. */
	old = route(WORKER_B, 7, 1);
	assert_outcome(refresh(raw, sizeof(raw), &at, &old, NOW), EG_ROUTE_REPAIRED);
}

Test(route_cache, the_second_of_two_refreshes_from_one_entry_loses_the_race)
{
	struct eg_route_attempt at, at2;
	struct eg_route_entry cur, first;
	uint8_t raw[EG_SV_LEN], raw2[EG_SV_LEN];
	struct eg_signed_verdict v;

	cached_x7(&at);
	at2 = at;
	at2.token_id[0] = 0x71;
	signed_refusal(raw, NOW);
	refusal(&v, key_a.kid, NOW);
	memcpy(v.token_id, at2.token_id, EG_ID_BYTES);
	eg_sv_sign(&v, key_a.sk, raw2);
	assert_outcome(eg_route_cache_on_refresh(cache, raw2, sizeof(raw2), &NODE_KEYS, &at2, &x9,
						 NOW, &first),
		       EG_ROUTE_REPAIRED);
	/* The late one carries an older fresh route: it must not win. */
	assert_outcome(
	    eg_route_cache_on_refresh(cache, raw, sizeof(raw), &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_LOST_RACE);
	cr_assert_eq(memcmp(&cur, &first, sizeof(cur)), 0, "the newer entry stays");
	cr_assert_eq(eg_route_retry_action(EG_OP_AT_MOST_ONCE, EG_ROUTE_LOST_RACE, 0, true),
		     EG_RETRY_CURRENT);
}

Test(route_cache, no_entry_and_expired_entries_are_not_repaired)
{
	struct eg_route_attempt at;
	struct eg_route_entry cur;
	uint8_t raw[EG_SV_LEN];

	cached_x7(&at);
	cr_assert_eq(eg_route_cache_forget(cache, SANDBOX_S), 0);
	signed_refusal(raw, NOW);
	assert_outcome(
	    eg_route_cache_on_refresh(cache, raw, sizeof(raw), &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_NO_ENTRY);
	cr_assert_eq(cur.version, 0);
	cr_assert_eq(eg_route_cache_lookup(cache, SANDBOX_S, NOW, &cur), -ENOENT);
	/* Re-inserted: a new version, so the old attempt can never match it. */
	cr_assert_eq(eg_route_cache_put(cache, SANDBOX_S, &x7, NOW + 5, NOW, &cur), 0);
	cr_assert_gt(cur.version, at.entry.version);
	at.entry = cur;
	signed_refusal(raw, NOW + 5);
	assert_outcome(
	    eg_route_cache_on_refresh(cache, raw, sizeof(raw), &NODE_KEYS, &at, &x8, NOW + 5, &cur),
	    EG_ROUTE_EXPIRED);
	cr_assert_eq(cur.version, 0);
}

Test(route_cache, replay_ring_fails_closed_and_forgets_only_dead_seconds)
{
	struct eg_route_cache *small = eg_route_cache_new(16, 2);
	struct eg_signed_verdict v;
	struct eg_route_attempt at;
	struct eg_route_entry cur;
	uint8_t raw[EG_SV_LEN];

	cr_assert_not_null(small);
	cr_assert_null(eg_route_cache_new(16, 0));
	cr_assert_null(eg_route_cache_new(16, 4097));
	cr_assert_null(eg_route_cache_new((1u << 20) + 1, 1));
	memset(&at, 0, sizeof(at));
	memcpy(at.token_id, TOKEN, EG_ID_BYTES);
	/* Three refusals of three tokens in one second: the third does not
	 * fit and is refused rather than unrecorded. */
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(eg_route_cache_put(small, SANDBOX_S, &x7, EXPIRY, NOW, &at.entry), 0);
		at.token_id[0] = (uint8_t)i;
		refusal(&v, key_a.kid, NOW);
		memcpy(v.token_id, at.token_id, EG_ID_BYTES);
		eg_sv_sign(&v, key_a.sk, raw);
		assert_outcome(eg_route_cache_on_refresh(small, raw, sizeof(raw), &NODE_KEYS, &at,
							 &x8, NOW, &cur),
			       i < 2 ? EG_ROUTE_REPAIRED : EG_ROUTE_IGNORED_REPLAY_FULL);
	}
	/* 64 s later the slot is another second's: reset, and accepted. */
	at.entry = cur;
	cr_assert_eq(eg_route_cache_put(small, SANDBOX_S, &x7, EXPIRY, NOW + 64, &at.entry), 0);
	v.issued_at = NOW + 64;
	eg_sv_sign(&v, key_a.sk, raw);
	assert_outcome(eg_route_cache_on_refresh(small, raw, sizeof(raw), &NODE_KEYS, &at, &x8,
						 NOW + 64, &cur),
		       EG_ROUTE_REPAIRED);
	/* A caller whose clock went back 64 s: that slot's second is gone,
	 * so nothing issued then can be proven new. */
	cr_assert_eq(eg_route_cache_put(small, SANDBOX_S, &x7, EXPIRY, NOW, &at.entry), 0);
	at.token_id[0] = 9;
	refusal(&v, key_a.kid, NOW);
	memcpy(v.token_id, at.token_id, EG_ID_BYTES);
	eg_sv_sign(&v, key_a.sk, raw);
	assert_outcome(
	    eg_route_cache_on_refresh(small, raw, sizeof(raw), &NODE_KEYS, &at, &x8, NOW, &cur),
	    EG_ROUTE_IGNORED_STALE);
	eg_route_cache_free(small);
}

Test(route_cache, bounded_and_evicts_expired_then_earliest_expiry)
{
	struct eg_route_cache *one = eg_route_cache_new(1, 1); /* one bucket of 4 */
	uint8_t sb[6][EG_ID_BYTES];
	struct eg_route_entry e;

	cr_assert_not_null(one);
	cr_assert_eq(eg_route_cache_capacity(one), 4);
	cr_assert_eq(eg_route_cache_capacity(cache), 64);
	for (int i = 0; i < 6; i++) {
		memcpy(sb[i], SANDBOX_S, EG_ID_BYTES);
		sb[i][15] = (uint8_t)i;
	}
	cr_assert_eq(eg_route_cache_put(one, sb[0], &x7, NOW + 10, NOW, NULL), 0);
	cr_assert_eq(eg_route_cache_put(one, sb[1], &x7, NOW + 500, NOW, NULL), 0);
	cr_assert_eq(eg_route_cache_put(one, sb[2], &x7, NOW + 200, NOW, NULL), 0);
	cr_assert_eq(eg_route_cache_put(one, sb[3], &x7, NOW + 300, NOW, NULL), 0);
	/* At NOW + 20, sb[0] is expired: it goes first. */
	cr_assert_eq(eg_route_cache_put(one, sb[4], &x7, NOW + 400, NOW + 20, NULL), 0);
	cr_assert_eq(eg_route_cache_lookup(one, sb[0], NOW, &e), -ENOENT);
	/* All live: the one expiring first (sb[2]) goes. */
	cr_assert_eq(eg_route_cache_put(one, sb[5], &x7, NOW + 400, NOW + 20, NULL), 0);
	cr_assert_eq(eg_route_cache_lookup(one, sb[2], NOW + 20, &e), -ENOENT);
	cr_assert_eq(eg_route_cache_lookup(one, sb[1], NOW + 20, &e), 0);
	cr_assert_eq(eg_route_cache_lookup(one, sb[3], NOW + 20, &e), 0);
	cr_assert_eq(eg_route_cache_size(one), 4);
	eg_route_cache_free(one);
}

Test(route_cache, node_keys_are_checked_when_made)
{
	struct eg_node_key k;
	uint8_t zero_pk[crypto_sign_PUBLICKEYBYTES] = {0};

	cr_assert_eq(eg_route_node_key_init(&k, (uint8_t[EG_ID_BYTES]){0}, key_a.pk), -EINVAL);
	cr_assert_eq(eg_route_node_key_init(&k, WORKER_A, zero_pk), -EINVAL);
	cr_assert_eq(eg_route_node_key_init(&k, WORKER_A, key_a.pk), 0);
	cr_assert_eq(memcmp(k.kid, key_a.kid, EG_KEY_ID_LEN), 0);
}

/* A front end's two calls around the cache: a worker's node.pub, and the
 * token id of the capability an operation carries. */
Test(route_cache, node_key_files_and_token_ids_for_a_front_end)
{
	char path[] = "/tmp/execgate-node-pub-XXXXXX", line[EG_KEY_FILE_LINE_MAX];
	char text[EG_CAP_TEXT_MAX];
	struct eg_route_attempt a = {0};
	struct eg_capability cap;
	uint8_t raw[EG_CAP_LEN];
	struct eg_node_key k;
	int fd, n;

	n = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, key_a.pk, sizeof(key_a.pk),
			       line, sizeof(line));
	cr_assert_gt(n, 0);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, line, (size_t)n), n);
	close(fd);
	cr_assert_eq(eg_route_node_key_read(&k, WORKER_A, path), 0);
	cr_assert_eq(memcmp(k.kid, key_a.kid, EG_KEY_ID_LEN), 0);
	cr_assert_eq(memcmp(k.worker, WORKER_A, EG_ID_BYTES), 0);
	cr_assert_eq(eg_route_node_key_read(&k, (uint8_t[EG_ID_BYTES]){0}, path), -EINVAL);
	unlink(path);
	cr_assert_eq(eg_route_node_key_read(&k, WORKER_A, path), -EINVAL, "a missing file");

	test_cap(&cap, &key_a);
	test_sign(&cap, &key_a, raw);
	eg_cap_to_text(raw, text);
	cr_assert_eq(eg_route_attempt_token(&a, text, strlen(text)), 0);
	cr_assert_eq(memcmp(a.token_id, cap.token_id, EG_ID_BYTES), 0);
	memset(&a, 0, sizeof(a));
	cr_assert_eq(eg_route_attempt_token(&a, text, strlen(text) - 1), -EINVAL);
	cr_assert_eq(eg_route_attempt_token(&a, "not a token", 11), -EINVAL);
	cr_assert(sodium_is_zero(a.token_id, EG_ID_BYTES), "a refused token sets nothing");
}

Test(route_cache, replay_rules_per_operation)
{
	const enum eg_op_kind I = EG_OP_IDEMPOTENT, W = EG_OP_AT_MOST_ONCE;

	for (int o = 0; o < EG_ROUTE__COUNT; o++) {
		enum eg_route_outcome out = (enum eg_route_outcome)o;
		bool proven = out == EG_ROUTE_REPAIRED || out == EG_ROUTE_LOST_RACE;
		bool reauth = out == EG_ROUTE_NO_ENTRY || out == EG_ROUTE_EXPIRED;

		for (int changed = 0; changed < 2; changed++) {
			enum eg_retry_action want_w = proven   ? EG_RETRY_CURRENT
						      : reauth ? EG_RETRY_REAUTH
							       : EG_RETRY_FAIL;
			enum eg_retry_action want_i = want_w;

			if (!proven && !reauth && out != EG_ROUTE_IGNORED_NOT_REFRESH && changed)
				want_i = EG_RETRY_CURRENT;
			cr_assert_eq(eg_route_retry_action(W, out, 0, changed), want_w, "%s %d",
				     eg_route_outcome_name(out), changed);
			cr_assert_eq(eg_route_retry_action(I, out, 0, changed), want_i, "%s %d",
				     eg_route_outcome_name(out), changed);
			cr_assert_eq(eg_route_retry_action(I, out, EG_ROUTE_MAX_RETRIES, changed),
				     EG_RETRY_FAIL);
		}
	}
	cr_assert_eq(eg_route_retry_action(W, EG_ROUTE_IGNORED_REPLAYED, 0, true), EG_RETRY_FAIL,
		     "a replayed verdict proves nothing about this write");
	cr_assert_str_eq(eg_retry_action_name(EG_RETRY_CURRENT), "retry-current");
	cr_assert_str_eq(eg_retry_action_name(99), "unknown");
}

Test(route_cache, every_outcome_has_its_own_name)
{
	for (int i = 0; i < EG_ROUTE__COUNT; i++) {
		cr_assert_not_null(eg_route_outcome_name(i));
		cr_assert_str_neq(eg_route_outcome_name(i), "unknown");
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(eg_route_outcome_name(i), eg_route_outcome_name(j));
	}
	cr_assert_str_eq(eg_route_outcome_name(EG_ROUTE_LOST_RACE), "lost-race");
	cr_assert_str_eq(eg_route_outcome_name(EG_ROUTE__COUNT), "unknown");
}

/* --- threads racing refreshes --------------------------------------------
 * NSB sandboxes whose execution a mover thread keeps replacing (generation
 * or activation up, alternating workers). Operation threads look up, send
 * to the worker named (which judges against the current execution and signs
 * a refusal otherwise), refresh, and retry as the replay rules say; every
 * other operation dawdles between refusal and refresh, so late rejections
 * are common. Checked: lookups of one thread never see a version or route
 * go back, the expiry never moves, a repair installs exactly its fresh
 * route, a lost race returns a newer entry, and at the end each entry is
 * the newest route ever installed for it. */
#define NSB	 8
#define NTHREADS 6
#define NOPS	 1500
#define NMOVES	 600

struct truth {
	pthread_mutex_t lock;
	struct eg_route now;
	uint8_t sandbox[EG_ID_BYTES];
	uint64_t expiry;
	_Atomic uint64_t max_installed; /* highest version a repair or put returned */
};

static struct truth truths[NSB];
static _Atomic uint64_t ticks;
static _Atomic bool moving;
static _Atomic unsigned long n_ok, n_repaired, n_lost, n_gave_up, n_bad;

static uint64_t clock_now(void)
{
	return T0 + atomic_load(&ticks) / 128;
}

static void note_installed(struct truth *t, uint64_t v)
{
	uint64_t cur = atomic_load(&t->max_installed);

	while (cur < v && !atomic_compare_exchange_weak(&t->max_installed, &cur, v))
		;
}

static bool older(const struct eg_route *a, const struct eg_route *b)
{
	return a->generation < b->generation ||
	       (a->generation == b->generation && a->activation < b->activation);
}

/* NMOVES moves at least, then on until the operators have both lost a
 * race and repaired a route (what the test asserts happened), or 60 s:
 * a fixed count left no lost race on a host whose cores ran TCG guests,
 * where the operators barely ran while the moves went by. */
static void *mover(void *arg)
{
	struct timespec t0, now;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0;; i++) {
		struct truth *t = &truths[i % NSB];

		if (i >= NMOVES) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((atomic_load(&n_lost) && atomic_load(&n_repaired)) ||
			    now.tv_sec - t0.tv_sec >= 60)
				break;
		}

		pthread_mutex_lock(&t->lock);
		if (i % 3 == 0) {
			t->now.generation++;
			t->now.activation = 1;
			memcpy(t->now.worker, t->now.generation % 2 ? WORKER_A : WORKER_B,
			       EG_ID_BYTES);
		} else {
			t->now.activation++;
		}
		pthread_mutex_unlock(&t->lock);
		for (int y = 0; y < 20; y++)
			sched_yield();
	}
	atomic_store(&moving, false);
	return NULL;
}

#define STRESS_CHECK(cond)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			atomic_fetch_add(&n_bad, 1);                                               \
			fprintf(stderr, "route stress: %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

static void *operator(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg, seq = 0;
	uint64_t seen_version[NSB] = {0};
	struct eg_route seen_route[NSB];

	memset(seen_route, 0, sizeof(seen_route));
	for (int i = 0; i < NOPS || atomic_load(&moving); i++) {
		struct truth *t = &truths[(id * 7 + (unsigned)i) % NSB];
		unsigned s = (unsigned)(t - truths);
		struct eg_route_attempt at;
		struct eg_route_entry cur;
		struct eg_route fresh;
		enum eg_route_outcome out;
		enum eg_retry_action act;
		bool allowed = false;

		if (eg_route_cache_lookup(cache, t->sandbox, clock_now(), &at.entry) != 0) {
			STRESS_CHECK(!"lookup missed");
			continue;
		}
		for (unsigned retries = 0;; retries++) {
			struct eg_signed_verdict v;
			uint8_t raw[EG_SV_LEN];
			bool on_a;

			STRESS_CHECK(at.entry.expiry == t->expiry);
			STRESS_CHECK(at.entry.version >= seen_version[s]);
			STRESS_CHECK(!older(&at.entry.route, &seen_route[s]));
			seen_version[s] = at.entry.version;
			seen_route[s] = at.entry.route;
			memset(at.token_id, 0, EG_ID_BYTES);
			at.token_id[0] = 0xee;
			at.token_id[1] = (uint8_t)id;
			memcpy(at.token_id + 2, &seq, sizeof(seq));
			seq++;
			/* The worker named judges the attempt against what runs. */
			pthread_mutex_lock(&t->lock);
			allowed = memcmp(&at.entry.route, &t->now, sizeof(t->now)) == 0;
			fresh = t->now;
			pthread_mutex_unlock(&t->lock);
			if (allowed)
				break;
			on_a = memcmp(at.entry.route.worker, WORKER_A, EG_ID_BYTES) == 0;
			memset(&v, 0, sizeof(v));
			v.version = EG_SV_VERSION;
			v.verdict = EG_REFRESH_ROUTE;
			v.reason = EG_REASON_GENERATION_MISMATCH;
			v.has_record = true;
			v.generation = fresh.generation;
			v.activation = fresh.activation;
			memcpy(v.node_key_id, on_a ? key_a.kid : key_b.kid, EG_KEY_ID_LEN);
			memcpy(v.token_id, at.token_id, EG_ID_BYTES);
			memcpy(v.sandbox, t->sandbox, EG_ID_BYTES);
			memcpy(v.worker, at.entry.route.worker, EG_ID_BYTES);
			/* The logical clock moves with the refusals, 128 a second. */
			atomic_fetch_add(&ticks, 1);
			v.issued_at = clock_now();
			eg_sv_sign(&v, on_a ? key_a.sk : key_b.sk, raw);
			if (i % 2)
				for (int y = 0; y < 5; y++)
					sched_yield(); /* a late rejection */
			out = eg_route_cache_on_refresh(cache, raw, sizeof(raw), &NODE_KEYS, &at,
							&fresh, clock_now(), &cur);
			if (out == EG_ROUTE_REPAIRED) {
				atomic_fetch_add(&n_repaired, 1);
				STRESS_CHECK(memcmp(&cur.route, &fresh, sizeof(fresh)) == 0);
				STRESS_CHECK(cur.version > at.entry.version);
				note_installed(t, cur.version);
			} else if (out == EG_ROUTE_LOST_RACE) {
				atomic_fetch_add(&n_lost, 1);
				STRESS_CHECK(cur.version > at.entry.version);
			} else {
				STRESS_CHECK(!"unexpected outcome");
				fprintf(stderr, "route stress: %s\n", eg_route_outcome_name(out));
			}
			STRESS_CHECK(cur.expiry == t->expiry);
			act = eg_route_retry_action(i % 3 ? EG_OP_AT_MOST_ONCE : EG_OP_IDEMPOTENT,
						    out, retries, cur.version != at.entry.version);
			if (act != EG_RETRY_CURRENT) {
				/* Only the retry bound stops a valid refresh. */
				STRESS_CHECK(retries >= EG_ROUTE_MAX_RETRIES);
				atomic_fetch_add(&n_gave_up, 1);
				break;
			}
			at.entry = cur;
		}
		if (allowed) {
			atomic_fetch_add(&n_ok, 1);
			sched_yield();
		}
	}
	return NULL;
}

Test(route_cache, threads_racing_refreshes_keep_the_invariants, .timeout = 120)
{
	pthread_t mv, th[NTHREADS];
	struct eg_route_entry e;

	/* Room for every refusal of a logical second (128 attempts), and
	 * buckets enough that NSB sandboxes never evict each other. */
	eg_route_cache_free(cache);
	cache = eg_route_cache_new(1024, 256);
	cr_assert_not_null(cache);

	for (int s = 0; s < NSB; s++) {
		struct truth *t = &truths[s];

		pthread_mutex_init(&t->lock, NULL);
		memcpy(t->sandbox, SANDBOX_S, EG_ID_BYTES);
		t->sandbox[15] = (uint8_t)(0x40 + s);
		t->now = route(WORKER_A, 7, 1);
		t->expiry = T0 + 1000000 + (uint64_t)s;
		cr_assert_eq(eg_route_cache_put(cache, t->sandbox, &t->now, t->expiry, T0, &e), 0);
		atomic_store(&t->max_installed, e.version);
	}
	atomic_store(&moving, true);
	cr_assert_eq(pthread_create(&mv, NULL, mover, NULL), 0);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, operator,(void *) i), 0);
	pthread_join(mv, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	printf("route stress: %d threads, %lu allowed, %lu repaired, %lu lost races, %lu gave up "
	       "after %d retries, %lu invariant failures\n",
	       NTHREADS, atomic_load(&n_ok), atomic_load(&n_repaired), atomic_load(&n_lost),
	       atomic_load(&n_gave_up), EG_ROUTE_MAX_RETRIES, atomic_load(&n_bad));
	fflush(stdout);
	cr_assert_eq(atomic_load(&n_bad), 0);
	cr_assert_gt(atomic_load(&n_repaired), 0);
	cr_assert_gt(atomic_load(&n_lost), 0, "the race must have happened");
	for (int s = 0; s < NSB; s++) {
		struct truth *t = &truths[s];

		cr_assert_eq(eg_route_cache_lookup(cache, t->sandbox, clock_now(), &e), 0);
		cr_assert_eq(e.version, atomic_load(&t->max_installed),
			     "sandbox %d: the entry is the newest installed", s);
		cr_assert_eq(e.expiry, t->expiry);
		pthread_mutex_destroy(&t->lock);
	}
}
