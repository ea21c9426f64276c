/* SPDX-License-Identifier: Apache-2.0 */
/* Key set v1 codec and apply rule: layout, every decoder reason,
 * truncation, trailing bytes, bit flips, wrong root and wrong context,
 * the text form, and which versions apply and which keys are withdrawn. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>
#include "core/be.h"
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"
#include "helpers.h"

static struct test_key root, k2, k3, k4;
static struct eg_keyset_doc doc;
static uint8_t raw[EG_KSD_MAX_LEN];
static size_t raw_len;

static void add(struct eg_keyset_doc *d, const struct test_key *k)
{
	memcpy(d->keys[d->n].kid, k->kid, EG_KEY_ID_LEN);
	memcpy(d->keys[d->n].pk, k->pk, crypto_sign_PUBLICKEYBYTES);
	d->n++;
}

static void setup(void)
{
	test_key(&root, 1);
	test_key(&k2, 2);
	test_key(&k3, 3);
	test_key(&k4, 4);
	memset(&doc, 0, sizeof(doc));
	doc.version = EG_KSD_VERSION;
	memcpy(doc.root_key_id, root.kid, EG_KEY_ID_LEN);
	doc.keyset_version = 5;
	doc.issued_at = T0;
	/* Given out of order: the encoder sorts. */
	add(&doc, &k4);
	add(&doc, &k2);
	add(&doc, &k3);
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, raw, &raw_len), EG_KSD_OK);
}

TestSuite(keyset_doc, .init = setup);

static int kid_cmp(const struct test_key *a, const struct test_key *b)
{
	return memcmp(a->kid, b->kid, EG_KEY_ID_LEN);
}

Test(keyset_doc, layout_matches_the_spec)
{
	const struct test_key *sorted[3] = {&k2, &k3, &k4};
	uint8_t msg[20 + 28 + 3 * 40];

	/* Sort the three by key id, independently of the encoder. */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (kid_cmp(sorted[j], sorted[i]) < 0) {
				const struct test_key *t = sorted[i];

				sorted[i] = sorted[j];
				sorted[j] = t;
			}
	cr_assert_eq(raw_len, 28 + 3 * 40 + 64);
	cr_assert_eq(raw[0], 1);
	cr_assert_eq(raw[1], 0);
	cr_assert_eq(raw[2], 0);
	cr_assert_eq(raw[3], 3);
	cr_assert_arr_eq(raw + 4, root.kid, 8);
	cr_assert_eq(eg_get_be64(raw + 12), 5);
	cr_assert_eq(eg_get_be64(raw + 20), T0);
	for (int i = 0; i < 3; i++) {
		cr_assert_arr_eq(raw + 28 + 40 * i, sorted[i]->kid, 8);
		cr_assert_arr_eq(raw + 36 + 40 * i, sorted[i]->pk, 32);
	}
	memcpy(msg, "execgate key set v1", 20);
	memcpy(msg + 20, raw, 28 + 3 * 40);
	cr_assert_eq(crypto_sign_verify_detached(raw + 148, msg, sizeof(msg), root.pk), 0);
}

Test(keyset_doc, round_trip)
{
	struct eg_keyset_doc out;
	struct eg_keyset roots;

	cr_assert_eq(eg_ksd_verify(raw, raw_len, root.pk, &out), EG_KSD_OK);
	cr_assert_eq(out.n, 3);
	cr_assert_eq(out.keyset_version, 5);
	cr_assert_eq(out.issued_at, T0);
	cr_assert_arr_eq(out.root_key_id, root.kid, EG_KEY_ID_LEN);
	for (size_t i = 1; i < out.n; i++)
		cr_assert_lt(memcmp(out.keys[i - 1].kid, out.keys[i].kid, EG_KEY_ID_LEN), 0);
	eg_keyset_init(&roots);
	cr_assert_eq(eg_keyset_add(&roots, k4.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_ksd_verify_roots(raw, raw_len, &roots, &out), EG_KSD_UNKNOWN_KEY);
	cr_assert_eq(eg_keyset_add(&roots, root.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_ksd_verify_roots(raw, raw_len, &roots, &out), EG_KSD_OK);
}

Test(keyset_doc, the_largest_set_round_trips)
{
	static struct eg_keyset_doc big, out;
	static uint8_t b[EG_KSD_MAX_LEN];
	char text[EG_KSD_TEXT_MAX];
	size_t len, n;

	big = doc;
	big.n = 0;
	for (int i = 0; i < EG_KEYSET_MAX; i++) {
		struct test_key k;

		test_key(&k, (uint8_t)(10 + i));
		add(&big, &k);
	}
	cr_assert_eq(eg_ksd_sign(&big, root.sk, b, &len), EG_KSD_OK);
	cr_assert_eq(len, EG_KSD_V1_MAX_LEN);
	cr_assert_eq(eg_ksd_verify(b, len, root.pk, &out), EG_KSD_OK);
	cr_assert_eq(out.n, EG_KEYSET_MAX);
	n = eg_ksd_to_text(b, len, text);
	cr_assert_lt(n, EG_KSD_TEXT_MAX);
	memset(b, 0, sizeof(b));
	cr_assert_eq(eg_ksd_text_to_bin(text, n, b, &len), EG_KSD_OK);
	cr_assert_eq(eg_ksd_verify(b, len, root.pk, &out), EG_KSD_OK);

	/* One more than the maximum is not signed. */
	eg_put_be16(b + 2, EG_KEYSET_MAX + 1);
	cr_assert_eq(eg_ksd_decode(b, len, &out), EG_KSD_BAD_COUNT);
}

Test(keyset_doc, signing_refuses_a_bad_set)
{
	struct eg_keyset_doc d = doc;
	uint8_t b[EG_KSD_MAX_LEN];
	size_t len = 99;

	d.n = 0;
	cr_assert_eq(eg_ksd_sign(&d, root.sk, b, &len), EG_KSD_BAD_COUNT);
	cr_assert_eq(len, 0);
	d = doc;
	add(&d, &k2); /* a duplicate */
	cr_assert_eq(eg_ksd_sign(&d, root.sk, b, &len), EG_KSD_NOT_SORTED);
	cr_assert_eq(len, 0);
	for (size_t i = 0; i < sizeof(b); i++)
		cr_assert_eq(b[i], 0, "byte %zu written", i);
	d = doc;
	d.keyset_version = 0;
	cr_assert_eq(eg_ksd_sign(&d, root.sk, b, &len), EG_KSD_BAD_SET_VERSION);
	d = doc;
	memset(d.keys[0].pk, 0, 32);
	cr_assert_eq(eg_ksd_sign(&d, root.sk, b, &len), EG_KSD_BAD_KEY);
}

/* Edit the bytes, re-sign with the root, verify. */
static enum eg_ksd_err resigned(void (*edit)(uint8_t *b, size_t *len))
{
	uint8_t b[EG_KSD_MAX_LEN + 64], msg[32 + EG_KSD_MAX_LEN + 64];
	struct eg_keyset_doc out, untouched;
	enum eg_ksd_err err;
	size_t len = raw_len;

	memcpy(b, raw, raw_len);
	edit(b, &len);
	if (len >= crypto_sign_BYTES) {
		memcpy(msg, EG_KSD_SIGN_CONTEXT, sizeof(EG_KSD_SIGN_CONTEXT));
		memcpy(msg + sizeof(EG_KSD_SIGN_CONTEXT), b, len - crypto_sign_BYTES);
		crypto_sign_detached(b + len - crypto_sign_BYTES, NULL, msg,
				     sizeof(EG_KSD_SIGN_CONTEXT) + len - crypto_sign_BYTES,
				     root.sk);
	}
	memset(&out, 0x5a, sizeof(out));
	memset(&untouched, 0x5a, sizeof(untouched));
	err = eg_ksd_verify(b, len, root.pk, &out);
	if (err != EG_KSD_OK)
		cr_assert_eq(memcmp(&out, &untouched, sizeof(out)), 0, "out written on error");
	return err;
}

static void version2(uint8_t *b, size_t *len)
{
	(void)len, b[0] = 2;
}
static void version3(uint8_t *b, size_t *len)
{
	(void)len, b[0] = 3;
}
static void reserved(uint8_t *b, size_t *len)
{
	(void)len, b[1] = 0x01;
}
static void count0(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be16(b + 2, 0);
}
static void count65(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be16(b + 2, 65);
}
static void count2(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be16(b + 2, 2);
}
static void count4(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be16(b + 2, 4);
}
static void set_version0(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be64(b + 12, 0);
}
static void set_version_over(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be64(b + 12, EG_KSD_VERSION_MAX + 1);
}
static void set_version_max(uint8_t *b, size_t *len)
{
	(void)len, eg_put_be64(b + 12, EG_KSD_VERSION_MAX);
}
static void zero_key(uint8_t *b, size_t *len)
{
	(void)len, memset(b + 36, 0, 32);
}
static void kid_flip(uint8_t *b, size_t *len)
{
	(void)len, b[28] ^= 1;
}
static void swap_entries(uint8_t *b, size_t *len)
{
	uint8_t t[40];

	(void)len;
	memcpy(t, b + 28, 40);
	memcpy(b + 28, b + 68, 40);
	memcpy(b + 68, t, 40);
}
static void dup_entry(uint8_t *b, size_t *len)
{
	(void)len, memcpy(b + 68, b + 28, 40);
}
/* A key that is on the curve but of small order: (0, 1), the identity. */
static void small_order_key(uint8_t *b, size_t *len)
{
	uint8_t pk[32] = {1};

	(void)len;
	memcpy(b + 36, pk, 32);
	eg_key_id(pk, b + 28);
}

Test(keyset_doc, every_decoder_reason)
{
	/* a v2 head is 8 bytes longer: a v1 body under version 2 is short */
	cr_assert_eq(resigned(version2), EG_KSD_TRUNCATED);
	cr_assert_eq(resigned(version3), EG_KSD_BAD_VERSION);
	cr_assert_eq(resigned(reserved), EG_KSD_RESERVED_BITS);
	cr_assert_eq(resigned(count0), EG_KSD_BAD_COUNT);
	cr_assert_eq(resigned(count65), EG_KSD_BAD_COUNT);
	cr_assert_eq(resigned(count2), EG_KSD_TRAILING);
	cr_assert_eq(resigned(count4), EG_KSD_TRUNCATED);
	cr_assert_eq(resigned(set_version0), EG_KSD_BAD_SET_VERSION);
	cr_assert_eq(resigned(set_version_over), EG_KSD_BAD_SET_VERSION);
	cr_assert_eq(resigned(set_version_max), EG_KSD_OK);
	cr_assert_eq(resigned(zero_key), EG_KSD_BAD_KEY);
	cr_assert_eq(resigned(small_order_key), EG_KSD_BAD_KEY);
	cr_assert_eq(resigned(kid_flip), EG_KSD_KEY_ID_MISMATCH);
	cr_assert_eq(resigned(swap_entries), EG_KSD_NOT_SORTED);
	cr_assert_eq(resigned(dup_entry), EG_KSD_NOT_SORTED);
}

Test(keyset_doc, every_truncation_is_refused)
{
	struct eg_keyset_doc out;

	for (size_t len = 0; len < raw_len; len++)
		cr_assert_eq(eg_ksd_verify(raw, len, root.pk, &out), EG_KSD_TRUNCATED, "len %zu",
			     len);
}

Test(keyset_doc, trailing_bytes_are_refused)
{
	uint8_t b[EG_KSD_MAX_LEN];
	struct eg_keyset_doc out;

	memcpy(b, raw, raw_len);
	memset(b + raw_len, 0, sizeof(b) - raw_len);
	for (size_t len = raw_len + 1; len <= sizeof(b); len++)
		cr_assert_eq(eg_ksd_verify(b, len, root.pk, &out), EG_KSD_TRAILING, "len %zu", len);
}

Test(keyset_doc, every_single_bit_flip_is_refused)
{
	struct eg_keyset_doc out;
	int reasons[EG_KSD__COUNT] = {0};

	for (size_t bit = 0; bit < raw_len * 8; bit++) {
		uint8_t b[EG_KSD_MAX_LEN];
		enum eg_ksd_err err;

		memcpy(b, raw, raw_len);
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		err = eg_ksd_verify(b, raw_len, root.pk, &out);
		cr_assert_neq(err, EG_KSD_OK, "bit %zu flipped verified", bit);
		reasons[err]++;
	}
	cr_assert_eq(reasons[EG_KSD_WRONG_KEY], 64);
	cr_assert_gt(reasons[EG_KSD_BAD_SIGNATURE], 0);
	cr_assert_gt(reasons[EG_KSD_KEY_ID_MISMATCH], 0);
}

Test(keyset_doc, wrong_root_is_refused)
{
	struct eg_keyset_doc out, d = doc;
	uint8_t b[EG_KSD_MAX_LEN];
	size_t len;

	cr_assert_eq(eg_ksd_verify(raw, raw_len, k2.pk, &out), EG_KSD_WRONG_KEY);
	/* Signed by k2 under the root's key id. */
	cr_assert_eq(eg_ksd_sign(&d, k2.sk, b, &len), EG_KSD_OK);
	cr_assert_eq(eg_ksd_verify(b, len, root.pk, &out), EG_KSD_BAD_SIGNATURE);
}

Test(keyset_doc, other_contexts_are_refused)
{
	static const char *const contexts[] = {
	    EG_SEL_SIGN_CONTEXT,    EG_CAP_SIGN_CONTEXT,  "execgate key set v2",
	    "execgate key set v1 ", "execgate keyset v1", "",
	};
	struct eg_keyset_doc out;
	size_t body = raw_len - crypto_sign_BYTES;

	for (size_t i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
		uint8_t b[EG_KSD_MAX_LEN], msg[64 + EG_KSD_MAX_LEN];
		size_t clen = strlen(contexts[i]) + 1;

		memcpy(b, raw, raw_len);
		memcpy(msg, contexts[i], clen);
		memcpy(msg + clen, b, body);
		crypto_sign_detached(b + body, NULL, msg, clen + body, root.sk);
		cr_assert_eq(eg_ksd_verify(b, raw_len, root.pk, &out), EG_KSD_BAD_SIGNATURE,
			     "context '%s'", contexts[i]);
	}
}

Test(keyset_doc, a_selection_is_not_a_key_set)
{
	struct eg_selection s;
	uint8_t b[EG_SEL_LEN];
	struct eg_keyset_doc out;

	memset(&s, 0, sizeof(s));
	s.version = 1;
	s.id.substrate = EG_SUBSTRATE_FC_HOST;
	memcpy(s.key_id, root.kid, EG_KEY_ID_LEN);
	memcpy(s.id.sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(s.id.worker, WORKER_A, EG_ID_BYTES);
	eg_sel_sign(&s, root.sk, b);
	cr_assert_neq(eg_ksd_verify(b, sizeof(b), root.pk, &out), EG_KSD_OK);
}

Test(keyset_doc, text_round_trip_and_strictness)
{
	char text[EG_KSD_TEXT_MAX + 8];
	uint8_t b[EG_KSD_MAX_LEN];
	struct eg_keyset_doc out;
	size_t n = eg_ksd_to_text(raw, raw_len, text), len;

	cr_assert_eq(eg_ksd_text_to_bin(text, n, b, &len), EG_KSD_OK);
	cr_assert_eq(len, raw_len);
	cr_assert_arr_eq(b, raw, raw_len);
	for (size_t l = 0; l < n; l++) {
		enum eg_ksd_err err = eg_ksd_text_to_bin(text, l, b, &len);

		if (err == EG_KSD_OK)
			err = eg_ksd_verify(b, len, root.pk, &out);
		cr_assert_neq(err, EG_KSD_OK, "text cut to %zu verified", l);
	}
	text[n] = '=';
	cr_assert_eq(eg_ksd_text_to_bin(text, n + 1, b, &len), EG_KSD_BAD_TEXT);
	text[n] = '\0';
	text[3] = '/';
	cr_assert_eq(eg_ksd_text_to_bin(text, n, b, &len), EG_KSD_BAD_TEXT);
}

Test(keyset_doc, only_a_higher_version_applies)
{
	uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN];
	struct eg_keyset current;
	struct eg_keyset_doc d;
	size_t n = 99;

	cr_assert_eq(eg_ksd_verify(raw, raw_len, root.pk, &d), EG_KSD_OK);
	eg_keyset_init(&current);
	cr_assert_eq(eg_ksd_decide(0, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	cr_assert_eq(n, 0);
	cr_assert_eq(eg_ksd_decide(4, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	n = 99;
	cr_assert_eq(eg_ksd_decide(5, &current, &d, withdrawn, &n), EG_KSD_REFUSE_EQUAL);
	cr_assert_eq(n, 0);
	n = 99;
	cr_assert_eq(eg_ksd_decide(6, &current, &d, withdrawn, &n), EG_KSD_REFUSE_OLDER);
	cr_assert_eq(n, 0);
	cr_assert_eq(eg_ksd_decide(EG_KSD_VERSION_MAX, &current, &d, withdrawn, &n),
		     EG_KSD_REFUSE_OLDER);
	cr_assert_str_eq(eg_ksd_decision_name(EG_KSD_APPLY), "apply");
	cr_assert_str_eq(eg_ksd_decision_name(EG_KSD_REFUSE_EQUAL), "refuse-equal");
	cr_assert_str_eq(eg_ksd_decision_name(EG_KSD_REFUSE_OLDER), "refuse-older");
}

Test(keyset_doc, missing_keys_are_withdrawn)
{
	uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN];
	struct test_key k5, k6;
	struct eg_keyset current;
	struct eg_keyset_doc d;
	size_t n;

	test_key(&k5, 5);
	test_key(&k6, 6);
	cr_assert_eq(eg_ksd_verify(raw, raw_len, root.pk, &d), EG_KSD_OK);
	/* In force: k5, k2, k6, k3. The document holds k2, k3, k4. */
	eg_keyset_init(&current);
	cr_assert_eq(eg_keyset_add(&current, k5.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&current, k2.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&current, k6.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&current, k3.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_ksd_decide(1, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	cr_assert_eq(n, 2);
	cr_assert_arr_eq(withdrawn[0], k5.kid, EG_KEY_ID_LEN);
	cr_assert_arr_eq(withdrawn[1], k6.kid, EG_KEY_ID_LEN);

	/* Every key in force is in the document: nothing withdrawn. */
	eg_keyset_init(&current);
	cr_assert_eq(eg_keyset_add(&current, k4.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_ksd_decide(1, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	cr_assert_eq(n, 0);

	/* The same key id with another public key is not the same key. */
	memset(d.keys[0].pk, 0, 32);
	d.keys[0].pk[0] = 1;
	eg_keyset_init(&current);
	cr_assert_eq(eg_keyset_add(&current, k2.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&current, k3.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_keyset_add(&current, k4.pk, NULL), EG_KEY_OK);
	cr_assert_eq(eg_ksd_decide(1, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	cr_assert_eq(n, 1);
}

Test(keyset_doc, reason_names_are_kebab_case_and_distinct)
{
	for (int i = 0; i < EG_KSD__COUNT; i++) {
		const char *n = eg_ksd_err_name(i);

		cr_assert_neq(strcmp(n, "unknown"), 0, "key set err %d unnamed", i);
		for (const char *p = n; *p; p++)
			cr_assert(islower((unsigned char)*p) || *p == '-', "%s", n);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(n, eg_ksd_err_name(j));
	}
	cr_assert_str_eq(eg_ksd_err_name(EG_KSD__COUNT), "unknown");
}

/* Key set v2: the v1 head, expires_at at 28, entries from 36, signed
 * under its own context; offsets spelled as numbers. */
Test(keyset_doc, v2_layout_matches_the_spec)
{
	static uint8_t b[EG_KSD_MAX_LEN];
	uint8_t msg[20 + 36 + 3 * 40];
	struct eg_keyset_doc out;
	size_t len;

	doc.version = EG_KSD_VERSION2;
	doc.expires_at = T0 + 3600;
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, b, &len), EG_KSD_OK);
	cr_assert_eq(len, 36 + 3 * 40 + 64);
	cr_assert_eq(b[0], 2);
	cr_assert_eq(b[3], 3);
	cr_assert_eq(eg_get_be64(b + 12), 5);
	cr_assert_eq(eg_get_be64(b + 20), T0);
	cr_assert_eq(eg_get_be64(b + 28), T0 + 3600);
	cr_assert_arr_eq(b + 36, raw + 28, 3 * 40); /* the same sorted entries */
	memcpy(msg, "execgate key set v2", 20);
	memcpy(msg + 20, b, 36 + 3 * 40);
	cr_assert_eq(crypto_sign_verify_detached(b + 156, msg, sizeof(msg), root.pk), 0);
	cr_assert_eq(eg_ksd_verify(b, len, root.pk, &out), EG_KSD_OK);
	cr_assert_eq(out.version, 2);
	cr_assert_eq(out.expires_at, T0 + 3600);
	/* the v1 context over the v2 bytes does not verify */
	memcpy(msg, "execgate key set v1", 20);
	cr_assert_neq(crypto_sign_verify_detached(b + 156, msg, sizeof(msg), root.pk), 0);
	for (size_t l = 0; l < len; l++)
		cr_assert_neq(eg_ksd_decode(b, l, &out), EG_KSD_OK, "len %zu", l);
	/* the largest v2 */
	cr_assert_eq(EG_KSD_MAX_LEN, 36 + 64 * 40 + 64);
}

Test(keyset_doc, v2_expiry_must_follow_issue)
{
	static uint8_t b[EG_KSD_MAX_LEN];
	struct eg_keyset_doc out;
	size_t len;

	doc.version = EG_KSD_VERSION2;
	doc.expires_at = T0;
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, b, &len), EG_KSD_BAD_EXPIRY);
	doc.expires_at = T0 + 1;
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, b, &len), EG_KSD_OK);
	cr_assert_eq(eg_ksd_decode(b, len, &out), EG_KSD_OK);
	cr_assert_str_eq(eg_ksd_err_name(EG_KSD_BAD_EXPIRY), "bad-expiry");
}

/* Freshness before anything else, then the floor, then the version. */
Test(keyset_doc, decide_at_refuses_expired_and_below_the_floor)
{
	uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN];
	struct eg_keyset current;
	struct eg_keyset_doc d;
	size_t n;

	eg_keyset_init(&current);
	doc.version = EG_KSD_VERSION2;
	doc.expires_at = T0 + 100;
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, raw, &raw_len), EG_KSD_OK);
	cr_assert_eq(eg_ksd_decode(raw, raw_len, &d), EG_KSD_OK);
	cr_assert_eq(eg_ksd_decide_at(0, 0, T0 + 99, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	cr_assert_eq(eg_ksd_decide_at(0, 0, T0 + 100, &current, &d, withdrawn, &n),
		     EG_KSD_REFUSE_EXPIRED);
	cr_assert_eq(eg_ksd_decide_at(9, 0, T0 + 100, &current, &d, withdrawn, &n),
		     EG_KSD_REFUSE_EXPIRED);
	/* a fresh worker (applied 0) given floor 6: version 5 never applies */
	cr_assert_eq(eg_ksd_decide_at(0, 6, T0, &current, &d, withdrawn, &n), EG_KSD_REFUSE_FLOOR);
	cr_assert_eq(eg_ksd_decide_at(0, 5, T0, &current, &d, withdrawn, &n), EG_KSD_APPLY);
	/* below what was applied stays refuse-older */
	cr_assert_eq(eg_ksd_decide_at(6, 7, T0, &current, &d, withdrawn, &n), EG_KSD_REFUSE_OLDER);
	cr_assert_str_eq(eg_ksd_decision_name(EG_KSD_REFUSE_EXPIRED), "refuse-expired");
	cr_assert_str_eq(eg_ksd_decision_name(EG_KSD_REFUSE_FLOOR), "refuse-floor");
	/* a v1 never expires */
	doc.version = EG_KSD_VERSION;
	cr_assert_eq(eg_ksd_sign(&doc, root.sk, raw, &raw_len), EG_KSD_OK);
	cr_assert_eq(eg_ksd_decode(raw, raw_len, &d), EG_KSD_OK);
	cr_assert_eq(eg_ksd_decide_at(0, 0, UINT64_MAX, &current, &d, withdrawn, &n), EG_KSD_APPLY);
}
