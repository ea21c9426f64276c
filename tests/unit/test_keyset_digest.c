/* SPDX-License-Identifier: Apache-2.0 */
/* The key-set digest (core/keyset_digest.h): what docs/api.md defines,
 * checked against b2sum's answer for the same lines, and a function of the
 * keys alone. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/keyset_digest.h"
#include "helpers.h"

/* `printf '' | b2sum -l 256` */
#define EMPTY "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"
/* test keys 1 and 2 as `execgate keys list` prints them, `| sort | b2sum
 * -l 256`:
 *   5dcea44112e50476 11c18e8d87a9431f0090aae25de312bf55affc453170530ea435d547a0e8594e
 *   8183c569f32c24d4 2b603a9c795c66a32c3e63845be2faa69f32292e37cd99e4e6247d2c1a526f2c */
#define BOTH "9feb36805d17322dbb1e2728722b37c066992d57138d3b61650b7258130f053c"
/* key 1's line alone */
#define ONE "92699443f5af18daed8ae5ac13e0aaee8210cea720171fab0becc29f082953c3"

static void set_of(struct eg_keyset *ks, const int *which, size_t n)
{
	struct test_key k;

	eg_keyset_init(ks);
	for (size_t i = 0; i < n; i++) {
		test_key(&k, (uint8_t)which[i]);
		cr_assert_eq(eg_keyset_add(ks, k.pk, NULL), EG_KEY_OK);
	}
}

Test(keyset_digest, is_b2sum_of_the_sorted_list)
{
	struct eg_keyset ks;
	char hex[EG_KEYSET_DIGEST_HEX];
	int one[] = {1}, both[] = {1, 2};

	set_of(&ks, NULL, 0);
	eg_keyset_digest_hex(&ks, hex);
	cr_assert_str_eq(hex, EMPTY, "the empty set");
	set_of(&ks, one, 1);
	eg_keyset_digest_hex(&ks, hex);
	cr_assert_str_eq(hex, ONE, "key 1");
	set_of(&ks, both, 2);
	eg_keyset_digest_hex(&ks, hex);
	cr_assert_str_eq(hex, BOTH, "keys 1 and 2");
}

/* Added in the reverse order, with another generation: the same digest. */
Test(keyset_digest, order_and_generation_do_not_matter)
{
	struct eg_keyset a, b;
	uint8_t da[EG_KEYSET_DIGEST_LEN], db[EG_KEYSET_DIGEST_LEN];
	int fwd[] = {1, 2, 3, 4, 5}, rev[] = {5, 4, 3, 2, 1};

	set_of(&a, fwd, 5);
	set_of(&b, rev, 5);
	b.generation = a.generation + 41;
	eg_keyset_digest(&a, da);
	eg_keyset_digest(&b, db);
	cr_assert_arr_eq(da, db, sizeof(da));
}

Test(keyset_digest, any_key_more_or_less_changes_it)
{
	struct eg_keyset a, b;
	struct test_key k;
	char ha[EG_KEYSET_DIGEST_HEX], hb[EG_KEYSET_DIGEST_HEX];
	int three[] = {1, 2, 3};

	set_of(&a, three, 3);
	eg_keyset_digest_hex(&a, ha);
	for (int drop = 1; drop <= 3; drop++) {
		set_of(&b, three, 3);
		test_key(&k, (uint8_t)drop);
		cr_assert_eq(eg_keyset_remove(&b, k.kid), EG_KEY_OK);
		eg_keyset_digest_hex(&b, hb);
		cr_assert_str_neq(ha, hb, "without key %d", drop);
	}
	set_of(&b, three, 3);
	test_key(&k, 4);
	cr_assert_eq(eg_keyset_add(&b, k.pk, NULL), EG_KEY_OK);
	eg_keyset_digest_hex(&b, hb);
	cr_assert_str_neq(ha, hb, "with key 4");
}
