/* SPDX-License-Identifier: Apache-2.0 */
/* Admission cost as a ratio to the operation it wraps: one run, three
 * measurements interleaved round by round (so that frequency scaling, noisy
 * neighbours and cache state hit all three alike):
 *   raw     crypto_sign_verify_detached over a 143-byte message (the size of
 *           what a capability signs);
 *   fresh   eg_admit of a token the cache does not hold: decode, key lookup,
 *           verify, compare, cache insert;
 *   cached  eg_admit of a token the cache holds: keyed hash, exact compare,
 *           time and identity re-check.
 * Targets (printed, not asserted): fresh <= 1.05x raw, cached <= 0.02x raw.
 * BENCH_ROUNDS overrides the number of rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include "core/admission.h"

#define NTOKENS	     512
#define CACHED_BATCH 16 /* cached calls per sample: one is near the timer's resolution */
#define WARMUP	     200

struct series {
	double *ns;
	size_t n;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double percentile(struct series *s, double p)
{
	size_t i = (size_t)(p * (double)(s->n - 1));

	return s->ns[i];
}

static double mean(const struct series *s)
{
	double sum = 0;

	for (size_t i = 0; i < s->n; i++)
		sum += s->ns[i];
	return sum / (double)s->n;
}

static void fail(const char *what)
{
	fprintf(stderr, "bench-admission: %s\n", what);
	exit(1);
}

int main(void)
{
	static uint8_t tokens[NTOKENS][EG_CAP_LEN], msgs[NTOKENS][EG_CAP_SIGNED_LEN];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	const char *env = getenv("BENCH_ROUNDS");
	size_t rounds = env ? strtoul(env, NULL, 10) : 20000;
	struct series raw = {0}, fresh = {0}, cached = {0};
	struct eg_capability cap;
	struct eg_record rec;
	struct eg_request req = {.scope = EG_SCOPE_FILE_READ};
	struct eg_keyset ks;
	struct eg_token_cache *cache;
	struct eg_admission adm = {0};
	const uint64_t t0 = 1767225600;
	volatile int sink = 0;
	/* 0 raw, 1 fresh, 2 cached */
	static const int orders[3][3] = {{0, 1, 2}, {1, 0, 2}, {1, 2, 0}};

	if (sodium_init() < 0)
		fail("libsodium: initialisation failed");
	if (rounds < 10)
		rounds = 10;
	crypto_sign_keypair(pk, sk);
	eg_keyset_init(&ks);
	if (eg_keyset_add(&ks, pk, NULL) != EG_KEY_OK)
		fail("key refused");
	cache = eg_token_cache_new(4096);
	if (!cache)
		fail("cache: out of memory");
	adm.keys = &ks;
	adm.cache = cache;

	/* NTOKENS valid tokens for one record, differing in their token id. */
	memset(&cap, 0, sizeof(cap));
	cap.version = EG_CAP_VERSION;
	cap.id.substrate = EG_SUBSTRATE_FC_HOST;
	randombytes_buf(cap.id.sandbox, EG_ID_BYTES);
	randombytes_buf(cap.id.worker, EG_ID_BYTES);
	cap.id.generation = 7;
	cap.id.activation = 1;
	cap.scope = EG_SCOPE_FILE_READ | EG_SCOPE_EXEC;
	cap.issued_at = cap.not_before = t0;
	cap.expiry = t0 + EG_CAP_MAX_TTL;
	eg_key_id(pk, cap.key_id);
	for (size_t i = 0; i < NTOKENS; i++) {
		randombytes_buf(cap.token_id, EG_ID_BYTES);
		eg_cap_encode_body(&cap, tokens[i]);
		eg_cap_signed_message(tokens[i], msgs[i]);
		crypto_sign_detached(cap.signature, NULL, msgs[i], EG_CAP_SIGNED_LEN, sk);
		eg_cap_encode(&cap, tokens[i]);
	}
	memset(&rec, 0, sizeof(rec));
	rec.id = cap.id;

	raw.ns = calloc(rounds, sizeof(double));
	fresh.ns = calloc(rounds, sizeof(double));
	cached.ns = calloc(rounds, sizeof(double));
	if (!raw.ns || !fresh.ns || !cached.ns)
		fail("out of memory");

	for (size_t r = 0; r < rounds + WARMUP; r++) {
		size_t i = r % NTOKENS;
		bool keep = r >= WARMUP;

		/* The fresh token must miss: empty the cache outside the timed
		 * part. The cached sample hits what fresh just inserted, so
		 * fresh precedes cached; raw takes each position in turn. */
		eg_token_cache_flush(cache);
		for (int k = 0; k < 3; k++) {
			int slot = orders[r % 3][k];
			double a, b;

			if (slot == 0) {
				a = now_ns();
				sink += crypto_sign_verify_detached(tokens[i] + EG_OFF_SIGNATURE,
								    msgs[i], EG_CAP_SIGNED_LEN, pk);
				b = now_ns();
				if (keep)
					raw.ns[raw.n++] = b - a;
			} else if (slot == 1) {
				struct eg_decision d;

				a = now_ns();
				d = eg_admit(&adm, tokens[i], EG_CAP_LEN, &rec, t0, &req, NULL);
				b = now_ns();
				if (d.verdict != EG_ALLOW || eg_token_cache_size(cache) != 1)
					fail("fresh admission did not allow");
				if (keep)
					fresh.ns[fresh.n++] = b - a;
			} else {
				int allowed = 0;

				a = now_ns();
				for (int j = 0; j < CACHED_BATCH; j++)
					allowed += eg_admit(&adm, tokens[i], EG_CAP_LEN, &rec, t0,
							    &req, NULL)
						       .verdict == EG_ALLOW;
				b = now_ns();
				if (allowed != CACHED_BATCH)
					fail("cached admission did not allow");
				if (keep)
					cached.ns[cached.n++] = (b - a) / CACHED_BATCH;
			}
		}
	}
	if (sink != 0)
		fail("raw verify failed");

	qsort(raw.ns, raw.n, sizeof(double), cmp_double);
	qsort(fresh.ns, fresh.n, sizeof(double), cmp_double);
	qsort(cached.ns, cached.n, sizeof(double), cmp_double);

	double raw_med = percentile(&raw, 0.5), raw_mean = mean(&raw);

	printf("bench-admission: %zu interleaved rounds, %d tokens, libsodium %s\n", rounds,
	       NTOKENS, sodium_version_string());
	printf("%-8s %12s %12s %12s %12s %10s %10s\n", "", "median ns", "mean ns", "p10 ns",
	       "p90 ns", "x raw med", "x raw mean");
	struct {
		const char *name;
		struct series *s;
	} rows[] = {{"raw", &raw}, {"fresh", &fresh}, {"cached", &cached}};
	for (size_t k = 0; k < 3; k++) {
		struct series *s = rows[k].s;

		printf("%-8s %12.0f %12.0f %12.0f %12.0f %10.4f %10.4f\n", rows[k].name,
		       percentile(s, 0.5), mean(s), percentile(s, 0.1), percentile(s, 0.9),
		       percentile(s, 0.5) / raw_med, mean(s) / raw_mean);
	}
	printf("fresh/raw  = %.4f (median)  target <= 1.05\n", percentile(&fresh, 0.5) / raw_med);
	printf("cached/raw = %.4f (median)  target <= 0.02\n", percentile(&cached, 0.5) / raw_med);

	eg_token_cache_free(cache);
	free(raw.ns);
	free(fresh.ns);
	free(cached.ns);
	sodium_memzero(sk, sizeof(sk));
	return 0;
}
