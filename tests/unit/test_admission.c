/* SPDX-License-Identifier: Apache-2.0 */
/* Admission without a cache: key rotation at run time. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/admission.h"
#include "helpers.h"

Test(admission, removed_key_denies_and_rotation_works)
{
	struct test_key old, fresh;
	struct eg_keyset ks;
	struct eg_admission a = {.keys = &ks};
	struct eg_capability c1, c2, out;
	struct eg_record rec;
	struct eg_request req = {0};
	uint8_t t1[EG_CAP_LEN], t2[EG_CAP_LEN];
	struct eg_decision d;

	test_key(&old, 7);
	test_key(&fresh, 8);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, old.pk, NULL), EG_KEY_OK);
	test_cap(&c1, &old);
	test_sign(&c1, &old, t1);
	c2 = c1;
	test_sign(&c2, &fresh, t2);
	test_record_for(&c1, &rec);

	cr_assert_eq(eg_admit(&a, t1, EG_CAP_LEN, &rec, T0, &req, &out).verdict, EG_ALLOW);
	cr_assert_arr_eq(out.key_id, old.kid, EG_KEY_ID_LEN);
	cr_assert_eq(eg_admit(&a, t2, EG_CAP_LEN, &rec, T0, &req, NULL).reason,
		     EG_REASON_UNKNOWN_KEY);
	/* Overlap: both keys during the rotation. */
	cr_assert_eq(eg_keyset_add(&ks, fresh.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_admit(&a, t1, EG_CAP_LEN, &rec, T0, &req, NULL).verdict, EG_ALLOW);
	cr_assert_eq(eg_admit(&a, t2, EG_CAP_LEN, &rec, T0, &req, NULL).verdict, EG_ALLOW);
	/* The old key is removed: its tokens die at once, not at expiry. */
	cr_assert_eq(eg_keyset_remove(&ks, old.kid), EG_KEY_OK);
	d = eg_admit(&a, t1, EG_CAP_LEN, &rec, T0, &req, &out);
	cr_assert_eq(d.verdict, EG_DENY);
	cr_assert_eq(d.reason, EG_REASON_UNKNOWN_KEY);
	/* The decoded (unauthenticated) token is still handed back. */
	cr_assert_arr_eq(out.key_id, old.kid, EG_KEY_ID_LEN);
	cr_assert_eq(eg_admit(&a, t2, EG_CAP_LEN, &rec, T0, &req, NULL).verdict, EG_ALLOW);
}

Test(admission, malformed_zeroes_capability)
{
	struct test_key k;
	struct eg_keyset ks;
	struct eg_admission a = {.keys = &ks};
	struct eg_capability out;
	uint8_t junk[EG_CAP_LEN];
	struct eg_decision d;

	test_key(&k, 1);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, k.pk, NULL), EG_KEY_OK);
	memset(junk, 0xff, sizeof(junk));
	memset(&out, 0x5a, sizeof(out));
	d = eg_admit(&a, junk, sizeof(junk), NULL, T0, NULL, &out);
	cr_assert_eq(d.verdict, EG_DENY);
	cr_assert_eq(d.reason, EG_REASON_MALFORMED);
	cr_assert_eq(d.decode_err, EG_DECODE_BAD_VERSION);
	cr_assert_eq(sodium_is_zero((const unsigned char *)&out, sizeof(out)), 1);
	/* Zero length, NULL capability out. */
	d = eg_admit(&a, junk, 0, NULL, T0, NULL, NULL);
	cr_assert_eq(d.decode_err, EG_DECODE_TRUNCATED);
}
