// SPDX-License-Identifier: Apache-2.0
/* The fleet's retry back-off (fleet/backoff.h): doubling to a ceiling, and
 * the jitter that spreads a thousand workers' reconnects. */
#include <stdbool.h>
#include <criterion/criterion.h>
#include "fleet/backoff.h"

Test(backoff, doubles_up_to_the_ceiling)
{
	unsigned b = 100, seen[8], n = 0;

	for (int i = 0; i < 8; i++) {
		seen[n++] = b;
		b = eg_backoff_next(b, 5000);
	}
	cr_assert_eq(seen[0], 100);
	cr_assert_eq(seen[1], 200);
	cr_assert_eq(seen[5], 3200);
	cr_assert_eq(seen[6], 5000);
	cr_assert_eq(seen[7], 5000);
	cr_assert_eq(eg_backoff_next(4000000000u, 5000), 5000, "no overflow past the ceiling");
}

Test(backoff, jitter_stays_between_half_and_all)
{
	const uint32_t draws[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};

	for (unsigned ms = 0; ms <= 5000; ms += 7)
		for (size_t i = 0; i < sizeof(draws) / sizeof(draws[0]); i++) {
			unsigned w = eg_backoff_jittered(ms, draws[i]);

			cr_assert(w >= ms / 2 && w <= ms, "ms %u draw %u: %u", ms, draws[i], w);
		}
	cr_assert_eq(eg_backoff_jittered(1000, 0), 500);
	cr_assert_eq(eg_backoff_jittered(1000, 0xffffffffu), 1000);
}

/* A thousand workers that lost the leader together, each with its own
 * draw: their first retries spread over the whole window, not one instant. */
Test(backoff, a_thousand_workers_spread_over_the_window)
{
	unsigned buckets[10] = {0};
	uint32_t x = 2463534242u;

	for (int i = 0; i < 1000; i++) {
		unsigned w;

		x ^= x << 13; /* xorshift32: a fixed, even spread of draws */
		x ^= x >> 17;
		x ^= x << 5;
		w = eg_backoff_jittered(1000, x);
		buckets[(w - 500) * 10 / 501]++;
	}
	/* each tenth of [500, 1000] ms holds some, none more than a fifth */
	for (int i = 0; i < 10; i++)
		cr_assert(buckets[i] >= 50 && buckets[i] <= 200, "bucket %d: %u", i, buckets[i]);
}
