/* SPDX-License-Identifier: Apache-2.0 */
/* Selection v1 codec: layout, every decoder reason, truncation, trailing
 * bytes, bit flips, wrong key and wrong context, the text form. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>
#include "core/be.h"
#include "core/capability.h"
#include "core/keyset.h"
#include "core/selection.h"
#include "core/signed_verdict.h"
#include "execgate/verdict.h"
#include "helpers.h"

static struct test_key key, other;
static struct eg_selection sel;
static uint8_t raw[EG_SEL_LEN];

static void template(struct eg_selection *s, const struct test_key *k)
{
	memset(s, 0, sizeof(*s));
	s->version = EG_SEL_VERSION;
	s->id.substrate = EG_SUBSTRATE_FC_HOST;
	s->id.activation = 1;
	memcpy(s->key_id, k->kid, EG_KEY_ID_LEN);
	memcpy(s->id.sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(s->id.worker, WORKER_A, EG_ID_BYTES);
	s->id.generation = 7;
	s->issued_at = T0;
}

static void setup(void)
{
	test_key(&key, 1);
	test_key(&other, 2);
	template(&sel, &key);
	eg_sel_sign(&sel, key.sk, raw);
}

TestSuite(selection, .init = setup);

/* Offsets spelled as numbers, not the enum, so a drift in either shows. */
Test(selection, layout_matches_the_spec)
{
	uint8_t b[EG_SEL_LEN], msg[22 + 80];

	sel.id.substrate = EG_SUBSTRATE_FC_K8S;
	sel.id.activation = 0x0a0b0c0d;
	memcpy(sel.id.pod_uid, POD_P, EG_ID_BYTES);
	sel.id.generation = 0x0001020304050607ull;
	sel.issued_at = 0x1112131415161718ull;
	eg_sel_sign(&sel, key.sk, b);

	cr_assert_eq(EG_SEL_LEN, 144);
	cr_assert_eq(b[0], 1);
	cr_assert_eq(b[1], 1);
	cr_assert_eq(b[2], 0);
	cr_assert_eq(b[3], 0);
	cr_assert_eq(b[4], 0x0a);
	cr_assert_eq(b[7], 0x0d);
	cr_assert_arr_eq(b + 8, key.kid, 8);
	cr_assert_arr_eq(b + 16, SANDBOX_S, 16);
	cr_assert_arr_eq(b + 32, WORKER_A, 16);
	cr_assert_arr_eq(b + 48, POD_P, 16);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(b[64 + i], i);
		cr_assert_eq(b[72 + i], 0x11 + i);
	}
	/* The signature covers "execgate selection v1\0" || bytes 0..80. */
	memcpy(msg, "execgate selection v1", 22);
	memcpy(msg + 22, b, 80);
	cr_assert_eq(crypto_sign_verify_detached(b + 80, msg, sizeof(msg), key.pk), 0);
}

Test(selection, round_trip)
{
	struct eg_selection out;
	struct eg_keyset ks;

	cr_assert_eq(eg_sel_decode(raw, sizeof(raw), &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &sel, sizeof(out)), 0);
	memset(&out, 0, sizeof(out));
	cr_assert_eq(eg_sel_verify(raw, sizeof(raw), key.pk, &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &sel, sizeof(out)), 0);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, other.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	memset(&out, 0, sizeof(out));
	cr_assert_eq(eg_sel_verify_keyset(raw, sizeof(raw), &ks, &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &sel, sizeof(out)), 0);
}

Test(selection, field_extremes_round_trip)
{
	struct eg_selection out;
	uint8_t b[EG_SEL_LEN];

	sel.id.generation = EG_GENERATION_MAX;
	sel.id.activation = UINT32_MAX;
	sel.issued_at = UINT64_MAX;
	eg_sel_sign(&sel, key.sk, b);
	cr_assert_eq(eg_sel_verify(b, sizeof(b), key.pk, &out), EG_SEL_OK);
	cr_assert_eq(out.id.generation, EG_GENERATION_MAX);
	cr_assert_eq(out.id.activation, UINT32_MAX);
	sel.id.generation = 0;
	sel.id.activation = 0;
	eg_sel_sign(&sel, key.sk, b);
	cr_assert_eq(eg_sel_verify(b, sizeof(b), key.pk, &out), EG_SEL_OK);
}

/* Each field out of range, re-signed so that only the field is wrong. */
static enum eg_sel_err resigned(void (*edit)(uint8_t *b))
{
	uint8_t b[EG_SEL_LEN], msg[sizeof(EG_SEL_SIGN_CONTEXT) + EG_SEL_BODY_LEN];
	struct eg_selection out;
	enum eg_sel_err err;

	memcpy(b, raw, sizeof(b));
	edit(b);
	memcpy(msg, EG_SEL_SIGN_CONTEXT, sizeof(EG_SEL_SIGN_CONTEXT));
	memcpy(msg + sizeof(EG_SEL_SIGN_CONTEXT), b, EG_SEL_BODY_LEN);
	crypto_sign_detached(b + EG_SEL_BODY_LEN, NULL, msg, sizeof(msg), key.sk);
	memset(&out, 0x5a, sizeof(out));
	err = eg_sel_verify(b, sizeof(b), key.pk, &out);
	if (err != EG_SEL_OK) {
		struct eg_selection untouched;

		memset(&untouched, 0x5a, sizeof(untouched));
		cr_assert_eq(memcmp(&out, &untouched, sizeof(out)), 0, "out written on error");
	}
	return err;
}

static void version2(uint8_t *b)
{
	b[0] = 2;
}
static void version3(uint8_t *b)
{
	b[0] = 3;
}
static void version0(uint8_t *b)
{
	b[0] = 0;
}
static void reserved2(uint8_t *b)
{
	b[2] = 0x80;
}
static void reserved3(uint8_t *b)
{
	b[3] = 1;
}
static void substrate0(uint8_t *b)
{
	b[1] = 0;
}
static void substrate3(uint8_t *b)
{
	b[1] = 3;
}
static void zero_sandbox(uint8_t *b)
{
	memset(b + 16, 0, 16);
}
static void zero_worker(uint8_t *b)
{
	memset(b + 32, 0, 16);
}
static void generation_over(uint8_t *b)
{
	eg_put_be64(b + 64, EG_GENERATION_MAX + 1);
}
static void generation_max(uint8_t *b)
{
	eg_put_be64(b + 64, EG_GENERATION_MAX);
}

Test(selection, every_decoder_reason)
{
	/* a v2 is 160 bytes: 144 with version 2 is a truncated v2 */
	cr_assert_eq(resigned(version2), EG_SEL_TRUNCATED);
	cr_assert_eq(resigned(version3), EG_SEL_BAD_VERSION);
	cr_assert_eq(resigned(version0), EG_SEL_BAD_VERSION);
	cr_assert_eq(resigned(reserved2), EG_SEL_RESERVED_BITS);
	cr_assert_eq(resigned(reserved3), EG_SEL_RESERVED_BITS);
	cr_assert_eq(resigned(substrate0), EG_SEL_BAD_SUBSTRATE);
	cr_assert_eq(resigned(substrate3), EG_SEL_BAD_SUBSTRATE);
	cr_assert_eq(resigned(zero_sandbox), EG_SEL_ZERO_ID);
	cr_assert_eq(resigned(zero_worker), EG_SEL_ZERO_ID);
	cr_assert_eq(resigned(generation_over), EG_SEL_BAD_GENERATION);
	cr_assert_eq(resigned(generation_max), EG_SEL_OK);
}

Test(selection, every_truncation_is_refused)
{
	struct eg_selection out;

	for (size_t len = 0; len < EG_SEL_LEN; len++) {
		cr_assert_eq(eg_sel_decode(raw, len, &out), EG_SEL_TRUNCATED, "len %zu", len);
		cr_assert_eq(eg_sel_verify(raw, len, key.pk, &out), EG_SEL_TRUNCATED);
	}
}

Test(selection, trailing_bytes_are_refused)
{
	uint8_t b[EG_SEL_LEN + 16];
	struct eg_selection out;

	memcpy(b, raw, EG_SEL_LEN);
	memset(b + EG_SEL_LEN, 0, 16);
	for (size_t extra = 1; extra <= 16; extra++)
		cr_assert_eq(eg_sel_verify(b, EG_SEL_LEN + extra, key.pk, &out), EG_SEL_TRAILING);
}

Test(selection, every_single_bit_flip_is_refused)
{
	struct eg_selection out;
	int reasons[EG_SEL__COUNT] = {0};

	for (size_t bit = 0; bit < EG_SEL_LEN * 8; bit++) {
		uint8_t b[EG_SEL_LEN];
		enum eg_sel_err err;

		memcpy(b, raw, sizeof(b));
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		err = eg_sel_verify(b, sizeof(b), key.pk, &out);
		cr_assert_neq(err, EG_SEL_OK, "bit %zu flipped verified", bit);
		reasons[err]++;
	}
	/* The key id bits are caught before the signature. */
	cr_assert_eq(reasons[EG_SEL_WRONG_KEY], 64);
	cr_assert_gt(reasons[EG_SEL_BAD_SIGNATURE], 0);
}

Test(selection, wrong_key_is_refused)
{
	struct eg_selection out;
	struct eg_keyset ks;

	cr_assert_eq(eg_sel_verify(raw, sizeof(raw), other.pk, &out), EG_SEL_WRONG_KEY);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_sel_verify_keyset(raw, sizeof(raw), &ks, &out), EG_SEL_UNKNOWN_KEY);
	cr_assert_eq(eg_keyset_add(&ks, other.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_sel_verify_keyset(raw, sizeof(raw), &ks, &out), EG_SEL_UNKNOWN_KEY);

	/* Another key's signature under this key's id. */
	{
		uint8_t b[EG_SEL_LEN];

		eg_sel_sign(&sel, other.sk, b);
		cr_assert_eq(eg_sel_verify(b, sizeof(b), key.pk, &out), EG_SEL_BAD_SIGNATURE);
	}
}

/* The same body signed under any other context (or none) is refused: a
 * signature made for another document cannot be replayed as a selection. */
Test(selection, other_contexts_are_refused)
{
	static const char *const contexts[] = {
	    EG_CAP_SIGN_CONTEXT,     EG_SV_SIGN_CONTEXT,       "execgate key set v1",
	    "execgate selection v2", "execgate selection v1x", "",
	};
	struct eg_selection out;

	for (size_t i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
		uint8_t b[EG_SEL_LEN], msg[64 + EG_SEL_BODY_LEN];
		size_t clen = strlen(contexts[i]) + 1;

		memcpy(b, raw, sizeof(b));
		memcpy(msg, contexts[i], clen);
		memcpy(msg + clen, b, EG_SEL_BODY_LEN);
		crypto_sign_detached(b + EG_SEL_BODY_LEN, NULL, msg, clen + EG_SEL_BODY_LEN,
				     key.sk);
		cr_assert_eq(eg_sel_verify(b, sizeof(b), key.pk, &out), EG_SEL_BAD_SIGNATURE,
			     "context '%s'", contexts[i]);
	}
	/* Without the NUL: "execgate selection v1" || body. */
	{
		uint8_t b[EG_SEL_LEN], msg[21 + EG_SEL_BODY_LEN];

		memcpy(b, raw, sizeof(b));
		memcpy(msg, "execgate selection v1", 21);
		memcpy(msg + 21, b, EG_SEL_BODY_LEN);
		crypto_sign_detached(b + EG_SEL_BODY_LEN, NULL, msg, sizeof(msg), key.sk);
		cr_assert_eq(eg_sel_verify(b, sizeof(b), key.pk, &out), EG_SEL_BAD_SIGNATURE);
	}
}

Test(selection, text_round_trip)
{
	char text[EG_SEL_TEXT_MAX];
	uint8_t back[EG_SEL_MAX_LEN];
	size_t n = eg_sel_to_text(raw, EG_SEL_LEN, text), back_len;

	cr_assert_eq(n, 192);
	cr_assert_eq(eg_sel_text_to_bin(text, n, back, &back_len), EG_SEL_OK);
	cr_assert_eq(back_len, EG_SEL_LEN);
	cr_assert_arr_eq(back, raw, EG_SEL_LEN);
}

Test(selection, text_form_is_strict)
{
	char text[EG_SEL_TEXT_MAX + 8], bad[EG_SEL_TEXT_MAX + 8];
	uint8_t back[EG_SEL_MAX_LEN];
	size_t n = eg_sel_to_text(raw, EG_SEL_LEN, text), bl;
	struct eg_selection out;

	for (size_t len = 0; len < n; len++)
		cr_assert_neq(eg_sel_text_to_bin(text, len, back, &bl), EG_SEL_OK, "len %zu", len);
	strcpy(bad, text);
	strcat(bad, "AAAA");
	/* 147 bytes: framing passes (a v2 is 160), the decoder refuses */
	cr_assert_eq(eg_sel_text_to_bin(bad, n + 4, back, &bl), EG_SEL_OK);
	cr_assert_eq(bl, EG_SEL_LEN + 3);
	cr_assert_eq(eg_sel_decode(back, bl, &out), EG_SEL_TRAILING);
	memset(bad, 'A', 220);
	bad[220] = '\0';
	cr_assert_eq(eg_sel_text_to_bin(bad, 220, back, &bl), EG_SEL_TRAILING, "165 bytes");
	strcpy(bad, text);
	strcat(bad, "==");
	cr_assert_eq(eg_sel_text_to_bin(bad, n + 2, back, &bl), EG_SEL_BAD_TEXT);
	strcpy(bad, text);
	bad[10] = '+';
	cr_assert_eq(eg_sel_text_to_bin(bad, n, back, &bl), EG_SEL_BAD_TEXT);
	strcpy(bad, text);
	bad[n] = '\n';
	cr_assert_eq(eg_sel_text_to_bin(bad, n + 1, back, &bl), EG_SEL_BAD_TEXT);
}

Test(selection, a_capability_is_not_a_selection)
{
	struct test_key k;
	struct eg_capability cap;
	uint8_t craw[EG_CAP_LEN];
	struct eg_selection out;

	test_key(&k, 1);
	test_cap(&cap, &k);
	test_sign(&cap, &k, craw);
	cr_assert_eq(eg_sel_verify(craw, sizeof(craw), k.pk, &out), EG_SEL_TRAILING);
	cr_assert_eq(eg_sel_verify(craw, EG_SEL_LEN, k.pk, &out) == EG_SEL_OK, 0);
}

Test(selection, reason_names_are_kebab_case_and_distinct)
{
	for (int i = 0; i < EG_SEL__COUNT; i++) {
		const char *n = eg_sel_err_name(i);

		cr_assert_neq(strcmp(n, "unknown"), 0, "selection err %d unnamed", i);
		for (const char *p = n; *p; p++)
			cr_assert(islower((unsigned char)*p) || *p == '-', "%s", n);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(n, eg_sel_err_name(j));
	}
	cr_assert_str_eq(eg_sel_err_name(EG_SEL__COUNT), "unknown");
}

/* Selection v2: the v1 body, then the audience at 80, signed under its own
 * context; offsets spelled as numbers. */
Test(selection, v2_layout_matches_the_spec)
{
	uint8_t b[EG_SEL_MAX_LEN], msg[22 + 96];
	struct eg_selection out;
	size_t len;

	sel.version = EG_SEL_VERSION2;
	memcpy(sel.audience, WORKER_B, EG_ID_BYTES);
	len = eg_sel_sign(&sel, key.sk, b);
	cr_assert_eq(len, 160);
	cr_assert_eq(EG_SEL_V2_LEN, 160);
	cr_assert_eq(b[0], 2);
	cr_assert_arr_eq(b + 16, SANDBOX_S, 16);
	cr_assert_arr_eq(b + 32, WORKER_A, 16);
	cr_assert_arr_eq(b + 80, WORKER_B, 16);
	memcpy(msg, "execgate selection v2", 22);
	memcpy(msg + 22, b, 96);
	cr_assert_eq(crypto_sign_verify_detached(b + 96, msg, sizeof(msg), key.pk), 0);
	cr_assert_eq(eg_sel_verify(b, len, key.pk, &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &sel, sizeof(out)), 0);
	/* the v1 context over the v2 body does not verify */
	memcpy(msg, "execgate selection v1", 22);
	cr_assert_neq(crypto_sign_verify_detached(b + 96, msg, sizeof(msg), key.pk), 0);
}

Test(selection, v2_strictness)
{
	uint8_t b[EG_SEL_MAX_LEN + 1], msg[22 + 96];
	struct eg_selection out;
	size_t len;

	sel.version = EG_SEL_VERSION2;
	memcpy(sel.audience, WORKER_A, EG_ID_BYTES);
	len = eg_sel_sign(&sel, key.sk, b);
	for (size_t l = 0; l < len; l++)
		cr_assert_eq(eg_sel_decode(b, l, &out), EG_SEL_TRUNCATED, "len %zu", l);
	cr_assert_eq(eg_sel_decode(b, len + 1, &out), EG_SEL_TRAILING);
	/* an audience is never all-zero */
	memset(b + 80, 0, 16);
	memcpy(msg, "execgate selection v2", 22);
	memcpy(msg + 22, b, 96);
	crypto_sign_detached(b + 96, NULL, msg, sizeof(msg), key.sk);
	cr_assert_eq(eg_sel_decode(b, len, &out), EG_SEL_ZERO_ID);
	/* every bit of a v2 is covered by its signature */
	len = eg_sel_sign(&sel, key.sk, b);
	for (size_t i = 0; i < len * 8; i++) {
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
		cr_assert_neq(eg_sel_verify(b, len, key.pk, &out), EG_SEL_OK, "bit %zu", i);
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
}

Test(selection, v2_text_round_trip)
{
	char text[EG_SEL_TEXT_MAX];
	uint8_t b[EG_SEL_MAX_LEN], back[EG_SEL_MAX_LEN];
	size_t len, n, bl;

	sel.version = EG_SEL_VERSION2;
	memcpy(sel.audience, WORKER_A, EG_ID_BYTES);
	len = eg_sel_sign(&sel, key.sk, b);
	n = eg_sel_to_text(b, len, text);
	cr_assert_eq(n, 214);
	cr_assert_eq(eg_sel_text_to_bin(text, n, back, &bl), EG_SEL_OK);
	cr_assert_eq(bl, 160);
	cr_assert_arr_eq(back, b, 160);
}
