/* SPDX-License-Identifier: Apache-2.0 */
/* Signed verdicts: round trip, every decode rejection by name, and that no
 * single bit flip, truncation or extension of a signed verdict verifies. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/be.h"
#include "core/signed_verdict.h"
#include "helpers.h"

static const uint8_t TOKEN[EG_ID_BYTES] = {0x70, 0x6b, 1, 2,  3,  4,  5,  6,
					   7,	 8,    9, 10, 11, 12, 13, 14};

static void template(struct eg_signed_verdict *v, const struct test_key *k)
{
	memset(v, 0, sizeof(*v));
	v->version = EG_SV_VERSION;
	v->verdict = EG_REFRESH_ROUTE;
	v->reason = EG_REASON_GENERATION_MISMATCH;
	v->has_record = true;
	memcpy(v->node_key_id, k->kid, EG_KEY_ID_LEN);
	memcpy(v->token_id, TOKEN, EG_ID_BYTES);
	memcpy(v->sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(v->worker, WORKER_A, EG_ID_BYTES);
	v->generation = 7;
	v->activation = 1;
	v->issued_at = T0;
}

Test(signed_verdict, round_trip_text_and_binary)
{
	struct eg_signed_verdict v, got;
	struct test_key k;
	uint8_t raw[EG_SV_LEN];
	char text[EG_SIGNED_VERDICT_TEXT_MAX];

	test_key(&k, 9);
	template(&v, &k);
	eg_sv_sign(&v, k.sk, raw);
	cr_assert_eq(eg_sv_verify(raw, sizeof(raw), k.pk, &got), EG_SV_OK);
	cr_assert_eq(memcmp(&got, &v, sizeof(v)), 0);
	cr_assert_eq(eg_sv_to_text(raw, text), strlen(text));
	cr_assert_eq(strlen(text), 198, "148 bytes in unpadded base64url");
	memset(&got, 0, sizeof(got));
	cr_assert_eq(eg_sv_verify_text(text, strlen(text), k.pk, &got), EG_SV_OK);
	cr_assert_eq(got.generation, 7);
	cr_assert_eq(got.reason, EG_REASON_GENERATION_MISMATCH);
}

Test(signed_verdict, another_nodes_key_is_wrong_key_and_a_forged_one_bad_signature)
{
	struct eg_signed_verdict v, got;
	struct test_key k, other;
	uint8_t raw[EG_SV_LEN];

	test_key(&k, 9);
	test_key(&other, 10);
	template(&v, &k);
	eg_sv_sign(&v, k.sk, raw);
	cr_assert_eq(eg_sv_verify(raw, sizeof(raw), other.pk, &got), EG_SV_WRONG_KEY);
	/* A forger who copies the key id but signs with his own key. */
	eg_sv_sign(&v, other.sk, raw);
	cr_assert_eq(eg_sv_verify(raw, sizeof(raw), k.pk, &got), EG_SV_BAD_SIGNATURE);
}

Test(signed_verdict, every_field_rule_has_its_own_reason)
{
	struct eg_signed_verdict v, got;
	struct test_key k;
	uint8_t raw[EG_SV_LEN], b[EG_SV_LEN];

	test_key(&k, 9);
	template(&v, &k);
	eg_sv_sign(&v, k.sk, raw);
#define MUT(off, val, want)                                                                        \
	do {                                                                                       \
		memcpy(b, raw, sizeof(b));                                                         \
		b[off] = (val);                                                                    \
		cr_assert_eq(eg_sv_decode(b, sizeof(b), &got), want, "byte %d = %d", off, val);    \
	} while (0)
	MUT(0, 2, EG_SV_BAD_VERSION);
	MUT(1, EG_ALLOW, EG_SV_BAD_VERDICT);
	MUT(1, 3, EG_SV_BAD_VERDICT);
	MUT(2, EG_REASON_OK, EG_SV_BAD_REASON);
	MUT(2, EG_REASON__COUNT, EG_SV_BAD_REASON);
	MUT(2, EG_REASON_BAD_SIGNATURE, EG_SV_BAD_REASON); /* a deny reason on refresh-route */
	MUT(3, 0x02, EG_SV_BAD_FLAGS);
	MUT(3, 0x00, EG_SV_BAD_RECORD);	 /* no record, but generation 7 */
	MUT(60, 0x01, EG_SV_BAD_RECORD); /* generation above EG_GENERATION_MAX */
	MUT(61, 0x20, EG_SV_BAD_RECORD); /* 2^53 + 7 */
	MUT(61, 0x1f, EG_SV_OK);	 /* 0x1f000000000007: below 2^53 */
	MUT(80, 1, EG_SV_BAD_RESERVED);
	MUT(83, 0x80, EG_SV_BAD_RESERVED);
#undef MUT
	memcpy(b, raw, sizeof(b));
	memset(b + 12, 0, EG_ID_BYTES);
	cr_assert_eq(eg_sv_decode(b, sizeof(b), &got), EG_SV_ZERO_ID, "zero token id");
	cr_assert_eq(eg_sv_decode(raw, sizeof(raw) - 1, &got), EG_SV_BAD_LENGTH);
	cr_assert_str_eq(eg_sv_err_name(EG_SV_BAD_SIGNATURE), "bad-signature");
	cr_assert_str_eq(eg_sv_err_name(EG_SV__COUNT), "unknown");
}

Test(signed_verdict, no_bit_flip_truncation_or_extension_verifies)
{
	struct eg_signed_verdict v, got;
	struct test_key k;
	uint8_t raw[EG_SV_LEN], b[EG_SV_LEN + 1];

	test_key(&k, 9);
	template(&v, &k);
	v.verdict = EG_DENY;
	v.reason = EG_REASON_SANDBOX_MISMATCH;
	eg_sv_sign(&v, k.sk, raw);
	cr_assert_eq(eg_sv_verify(raw, sizeof(raw), k.pk, &got), EG_SV_OK);
	for (size_t i = 0; i < EG_SV_LEN * 8; i++) {
		memcpy(b, raw, EG_SV_LEN);
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
		cr_assert_neq(eg_sv_verify(b, EG_SV_LEN, k.pk, &got), EG_SV_OK, "bit %zu", i);
	}
	for (size_t n = 0; n < EG_SV_LEN; n++)
		cr_assert_eq(eg_sv_verify(raw, n, k.pk, &got), EG_SV_BAD_LENGTH, "length %zu", n);
	memcpy(b, raw, EG_SV_LEN);
	b[EG_SV_LEN] = 0;
	cr_assert_eq(eg_sv_verify(b, EG_SV_LEN + 1, k.pk, &got), EG_SV_BAD_LENGTH, "trailing");
	cr_assert_eq(eg_sv_verify_text("AAAA*", 5, k.pk, &got), EG_SV_BAD_TEXT);
}
