/* SPDX-License-Identifier: Apache-2.0 */
/* Capability v1 codec: layout, every decoder reason, truncation, bit flips,
 * the text form. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>
#include "core/admission.h"
#include "core/be.h"
#include "core/capability.h"
#include "core/ids.h"
#include "execgate/verdict.h"
#include "helpers.h"

static struct test_key key;
static struct eg_capability cap;
static uint8_t raw[EG_CAP_LEN];

static void setup(void)
{
	test_key(&key, 1);
	test_cap(&cap, &key);
	test_sign(&cap, &key, raw);
}

TestSuite(capability, .init = setup);

/* Offsets spelled as numbers, not the enum, so a drift in either shows. */
Test(capability, layout_matches_the_spec)
{
	uint8_t b[EG_CAP_LEN];
	uint8_t msg[EG_CAP_SIGNED_LEN];

	cap.id.substrate = EG_SUBSTRATE_FC_K8S;
	cap.proto = EG_PROTO_TCP;
	cap.port = 8080;
	cap.scope = EG_SCOPE_SERVICEPORT | EG_SCOPE_FILE_READ;
	memcpy(cap.id.pod_uid, POD_P, EG_ID_BYTES);
	cap.id.generation = 0x0102030405060708ull;
	cap.id.activation = 0x0a0b0c0d;
	cap.issued_at = 0x1112131415161718ull;
	cap.not_before = 0x2122232425262728ull;
	cap.expiry = 0x3132333435363738ull;
	memset(cap.signature, 0xee, EG_CAP_SIG_LEN);
	eg_cap_encode(&cap, b);

	cr_assert_eq(b[0], 1);
	cr_assert_eq(b[1], 1);
	cr_assert_eq(b[2], 6);
	cr_assert_eq(b[3], 0);
	cr_assert_eq(b[4], 0x1f);
	cr_assert_eq(b[5], 0x90);
	cr_assert_eq(b[6], 0);
	cr_assert_eq(b[7], 0);
	cr_assert_arr_eq(b + 8, key.kid, 8);
	cr_assert_arr_eq(b + 16, cap.token_id, 16);
	cr_assert_arr_eq(b + 32, SANDBOX_S, 16);
	cr_assert_arr_eq(b + 48, WORKER_A, 16);
	cr_assert_arr_eq(b + 64, POD_P, 16);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(b[80 + i], i + 1);
		cr_assert_eq(b[96 + i], 0x11 + i);
		cr_assert_eq(b[104 + i], 0x21 + i);
		cr_assert_eq(b[112 + i], 0x31 + i);
	}
	cr_assert_eq(b[88], 0x0a);
	cr_assert_eq(b[91], 0x0d);
	cr_assert_eq(b[92], 0);
	cr_assert_eq(b[95], 0x41);
	for (int i = 120; i < 184; i++)
		cr_assert_eq(b[i], 0xee);

	eg_cap_signed_message(b, msg);
	cr_assert_eq(sizeof(msg), 143);
	cr_assert_arr_eq(msg, "execgate capability v1\0", 23);
	cr_assert_arr_eq(msg + 23, b, 120);
}

Test(capability, round_trip)
{
	struct eg_capability out;
	uint8_t again[EG_CAP_LEN];

	cr_assert_eq(eg_cap_decode(raw, sizeof(raw), &out), EG_DECODE_OK);
	eg_cap_encode(&out, again);
	cr_assert_arr_eq(again, raw, EG_CAP_LEN);
	cr_assert_eq(out.id.generation, 7);
	cr_assert_eq(out.expiry, T0 + 120);
	cr_assert_arr_eq(out.id.sandbox, SANDBOX_S, EG_ID_BYTES);
}

/* Re-encode a mutated template and decode it. */
static enum eg_decode_err decode_mutated(void (*mutate)(uint8_t *b))
{
	struct eg_capability out;
	uint8_t b[EG_CAP_LEN];

	memcpy(b, raw, sizeof(b));
	mutate(b);
	return eg_cap_decode(b, sizeof(b), &out);
}

#define MUTATION(name, body)                                                                       \
	static void name(uint8_t *b)                                                               \
	{                                                                                          \
		body;                                                                              \
	}

MUTATION(version_0, b[0] = 0)
MUTATION(version_2, b[0] = 2)
MUTATION(reserved_3, b[3] = 0x80)
MUTATION(reserved_6, b[6] = 1)
MUTATION(reserved_7, b[7] = 0x40)
MUTATION(substrate_0, b[1] = 0)
MUTATION(substrate_3, b[1] = 3)
MUTATION(scope_0, memset(b + 92, 0, 4))
MUTATION(scope_bit7, b[95] |= 0x80)
MUTATION(scope_bit31, b[92] |= 0x80)
MUTATION(proto_without_port, b[2] = 6)
MUTATION(port_without_proto, b[5] = 80)
MUTATION(proto_unknown, (b[2] = 5, b[5] = 80, b[95] |= 0x40))
MUTATION(port_without_scope, (b[2] = 6, b[5] = 80))
MUTATION(scope_without_port, b[95] |= 0x40)
MUTATION(issued_after_not_before, b[103] += 1)
MUTATION(not_before_eq_expiry, memcpy(b + 104, b + 112, 8))
MUTATION(expiry_before_not_before, eg_put_be64(b + 112, T0 - 1))
MUTATION(ttl_121, b[119] += 1)
MUTATION(zero_sandbox, memset(b + 32, 0, 16))
MUTATION(zero_worker, memset(b + 48, 0, 16))
MUTATION(zero_token, memset(b + 16, 0, 16))
MUTATION(zero_pod, memset(b + 64, 0, 16))
MUTATION(ttl_1, memcpy(b + 112, b + 96, 8); b[119] += 1)
MUTATION(generation_max, eg_put_be64(b + 80, EG_GENERATION_MAX))
MUTATION(generation_above_max, eg_put_be64(b + 80, EG_GENERATION_MAX + 1))
MUTATION(generation_all_ones, memset(b + 80, 0xff, 8))

Test(capability, every_decoder_reason)
{
	cr_assert_eq(decode_mutated(version_0), EG_DECODE_BAD_VERSION);
	cr_assert_eq(decode_mutated(version_2), EG_DECODE_BAD_VERSION);
	cr_assert_eq(decode_mutated(reserved_3), EG_DECODE_RESERVED_BITS);
	cr_assert_eq(decode_mutated(reserved_6), EG_DECODE_RESERVED_BITS);
	cr_assert_eq(decode_mutated(reserved_7), EG_DECODE_RESERVED_BITS);
	cr_assert_eq(decode_mutated(substrate_0), EG_DECODE_BAD_SUBSTRATE);
	cr_assert_eq(decode_mutated(substrate_3), EG_DECODE_BAD_SUBSTRATE);
	cr_assert_eq(decode_mutated(scope_0), EG_DECODE_BAD_SCOPE);
	cr_assert_eq(decode_mutated(scope_bit7), EG_DECODE_BAD_SCOPE);
	cr_assert_eq(decode_mutated(scope_bit31), EG_DECODE_BAD_SCOPE);
	cr_assert_eq(decode_mutated(proto_without_port), EG_DECODE_BAD_PORT);
	cr_assert_eq(decode_mutated(port_without_proto), EG_DECODE_BAD_PORT);
	cr_assert_eq(decode_mutated(proto_unknown), EG_DECODE_BAD_PORT);
	cr_assert_eq(decode_mutated(port_without_scope), EG_DECODE_BAD_PORT);
	cr_assert_eq(decode_mutated(scope_without_port), EG_DECODE_BAD_PORT);
	cr_assert_eq(decode_mutated(issued_after_not_before), EG_DECODE_BAD_VALIDITY);
	cr_assert_eq(decode_mutated(not_before_eq_expiry), EG_DECODE_BAD_VALIDITY);
	cr_assert_eq(decode_mutated(expiry_before_not_before), EG_DECODE_BAD_VALIDITY);
	cr_assert_eq(decode_mutated(ttl_121), EG_DECODE_TTL_TOO_LONG);
	cr_assert_eq(decode_mutated(zero_sandbox), EG_DECODE_ZERO_ID);
	cr_assert_eq(decode_mutated(zero_worker), EG_DECODE_ZERO_ID);
	cr_assert_eq(decode_mutated(zero_token), EG_DECODE_ZERO_ID);
	/* Outside Kubernetes the pod UID is all-zero; a 1 s token is fine. */
	cr_assert_eq(decode_mutated(zero_pod), EG_DECODE_OK);
	cr_assert_eq(decode_mutated(ttl_1), EG_DECODE_OK);
	/* A generation above 2^53 - 1 could never be replaced by a newer one. */
	cr_assert_eq(decode_mutated(generation_above_max), EG_DECODE_BAD_GENERATION);
	cr_assert_eq(decode_mutated(generation_all_ones), EG_DECODE_BAD_GENERATION);
	cr_assert_eq(decode_mutated(generation_max), EG_DECODE_OK);
	cr_assert_str_eq(eg_decode_err_name(EG_DECODE_BAD_GENERATION), "bad-generation");
}

Test(capability, ttl_limit_is_120_inclusive)
{
	struct eg_capability out;
	uint8_t b[EG_CAP_LEN];

	cap.not_before = T0 + 119;
	cap.expiry = T0 + 120;
	test_sign(&cap, &key, b);
	cr_assert_eq(eg_cap_decode(b, sizeof(b), &out), EG_DECODE_OK);
	cap.expiry = T0 + 121;
	test_sign(&cap, &key, b);
	cr_assert_eq(eg_cap_decode(b, sizeof(b), &out), EG_DECODE_TTL_TOO_LONG);
	/* Near the top of the range nothing wraps. */
	cap.issued_at = UINT64_MAX - 120;
	cap.not_before = UINT64_MAX - 1;
	cap.expiry = UINT64_MAX;
	test_sign(&cap, &key, b);
	cr_assert_eq(eg_cap_decode(b, sizeof(b), &out), EG_DECODE_OK);
	cap.issued_at = 0;
	cap.not_before = 0;
	test_sign(&cap, &key, b);
	cr_assert_eq(eg_cap_decode(b, sizeof(b), &out), EG_DECODE_TTL_TOO_LONG);
}

Test(capability, failed_decode_zeroes_output)
{
	struct eg_capability out;

	memset(&out, 0xa5, sizeof(out));
	cr_assert_eq(decode_mutated(version_2), EG_DECODE_BAD_VERSION);
	cr_assert_eq(eg_cap_decode(raw, 10, &out), EG_DECODE_TRUNCATED);
	cr_assert_eq(sodium_is_zero((const unsigned char *)&out, sizeof(out)), 1);
}

Test(capability, every_truncation_length_is_denied)
{
	struct eg_keyset ks;
	struct eg_admission a = {.keys = &ks};
	struct eg_capability out;
	struct eg_record rec;
	struct eg_request req = {0};

	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	test_record_for(&cap, &rec);
	for (size_t len = 0; len < EG_CAP_LEN; len++) {
		/* A heap copy of exactly len bytes: ASan catches any over-read. */
		uint8_t *b = malloc(len ? len : 1);
		struct eg_decision d;

		memcpy(b, raw, len);
		cr_assert_eq(eg_cap_decode(b, len, &out), EG_DECODE_TRUNCATED, "len %zu", len);
		d = eg_admit(&a, b, len, &rec, T0, &req, &out);
		cr_assert_eq(d.verdict, EG_DENY, "len %zu", len);
		cr_assert_eq(d.reason, EG_REASON_MALFORMED, "len %zu", len);
		cr_assert_eq(d.decode_err, EG_DECODE_TRUNCATED, "len %zu", len);
		free(b);
	}
	cr_assert_eq(eg_admit(&a, raw, EG_CAP_LEN, &rec, T0, &req, &out).verdict, EG_ALLOW);
}

Test(capability, trailing_bytes_are_denied)
{
	struct eg_keyset ks;
	struct eg_admission a = {.keys = &ks};
	struct eg_record rec;
	struct eg_request req = {0};
	uint8_t b[EG_CAP_LEN + 64];

	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	test_record_for(&cap, &rec);
	memcpy(b, raw, EG_CAP_LEN);
	memset(b + EG_CAP_LEN, 0, 64);
	for (size_t extra = 1; extra <= 64; extra++) {
		struct eg_decision d = eg_admit(&a, b, EG_CAP_LEN + extra, &rec, T0, &req, NULL);

		cr_assert_eq(d.verdict, EG_DENY);
		cr_assert_eq(d.reason, EG_REASON_MALFORMED);
		cr_assert_eq(d.decode_err, EG_DECODE_TRAILING, "extra %zu", extra);
	}
}

/* What a flipped bit must produce, by the field it lands in. */
static void expect_flip(size_t bit, struct eg_decision d, const uint8_t *b)
{
	size_t byte = bit / 8;
	struct eg_capability out;
	enum eg_decode_err derr = eg_cap_decode(b, EG_CAP_LEN, &out);

	cr_assert_eq(d.verdict, EG_DENY, "bit %zu", bit);
	if (derr != EG_DECODE_OK) {
		cr_assert_eq(d.reason, EG_REASON_MALFORMED, "bit %zu", bit);
		cr_assert_eq(d.decode_err, derr, "bit %zu", bit);
	} else if (byte >= 8 && byte < 16) {
		cr_assert_eq(d.reason, EG_REASON_UNKNOWN_KEY, "bit %zu", bit);
	} else {
		cr_assert_eq(d.reason, EG_REASON_BAD_SIGNATURE, "bit %zu", bit);
	}
	/* Fields with no validity rule of their own can only fail the
	 * signature (or, for the key id, the lookup). */
	if (byte == 0)
		cr_assert_eq(d.decode_err, EG_DECODE_BAD_VERSION, "bit %zu", bit);
	/* The generation's top 11 bits (byte 80, the high 3 of byte 81) have
	 * one: at most EG_GENERATION_MAX (2^53 - 1). */
	bool generation_ceiling = byte == 80 || (byte == 81 && bit % 8 >= 5);

	if (generation_ceiling)
		cr_assert_eq(d.decode_err, EG_DECODE_BAD_GENERATION, "bit %zu", bit);
	else if ((byte >= 16 && byte < 32) || (byte >= 32 && byte < 92) || byte >= 120)
		cr_assert_eq(d.reason, EG_REASON_BAD_SIGNATURE, "bit %zu", bit);
}

Test(capability, every_single_bit_flip_is_denied)
{
	struct eg_keyset ks;
	struct eg_token_cache *cache = eg_token_cache_new(64);
	struct eg_admission a = {.keys = &ks, .cache = cache};
	struct eg_record rec;
	struct eg_request req = {0};
	size_t malformed = 0;

	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	test_record_for(&cap, &rec);
	/* The original is cached, so each flip also proves a near-miss of a
	 * cached token is verified, not served. */
	cr_assert_eq(eg_admit(&a, raw, EG_CAP_LEN, &rec, T0, &req, NULL).verdict, EG_ALLOW);
	cr_assert_eq(eg_token_cache_size(cache), 1);
	for (size_t bit = 0; bit < EG_CAP_LEN * 8; bit++) {
		uint8_t b[EG_CAP_LEN];
		struct eg_decision d;

		memcpy(b, raw, sizeof(b));
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		d = eg_admit(&a, b, sizeof(b), &rec, T0, &req, NULL);
		expect_flip(bit, d, b);
		malformed += d.reason == EG_REASON_MALFORMED;
	}
	cr_assert_gt(malformed, 0);
	cr_assert_eq(eg_token_cache_size(cache), 1);
	eg_token_cache_free(cache);
}

Test(capability, reason_names_are_kebab_case_and_distinct)
{
	for (int i = 0; i < EG_DECODE__COUNT; i++) {
		const char *n = eg_decode_err_name(i);

		cr_assert_neq(strcmp(n, "unknown"), 0, "decode err %d unnamed", i);
		for (const char *p = n; *p; p++)
			cr_assert(islower((unsigned char)*p) || *p == '-', "%s", n);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(n, eg_decode_err_name(j));
	}
	cr_assert_str_eq(eg_decode_err_name(EG_DECODE_TRAILING), "trailing-bytes");
	cr_assert_str_eq(eg_decode_err_name(EG_DECODE__COUNT), "unknown");
}

Test(capability, text_round_trip)
{
	char text[EG_CAP_TEXT_MAX];
	struct eg_capability out;
	uint8_t back[EG_CAP_LEN];
	size_t n = eg_cap_to_text(raw, text);

	cr_assert_eq(n, 246);
	cr_assert_eq(
	    strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), n);
	cr_assert_eq(eg_cap_decode_text(text, n, &out, back), EG_DECODE_OK);
	cr_assert_arr_eq(back, raw, EG_CAP_LEN);
}

static enum eg_decode_err text_with(const char *prefix_change, const char *suffix)
{
	char text[EG_CAP_TEXT_MAX + 64];
	struct eg_capability out;
	size_t n = eg_cap_to_text(raw, text);

	if (prefix_change)
		memcpy(text, prefix_change, strlen(prefix_change));
	strcat(text, suffix);
	(void)n;
	return eg_cap_decode_text(text, strlen(text), &out, NULL);
}

Test(capability, text_form_is_strict)
{
	cr_assert_eq(text_with(NULL, ""), EG_DECODE_OK);
	cr_assert_eq(text_with(NULL, "=="), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with(NULL, "\n"), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with(NULL, " "), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with(" ", ""), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with("+", ""), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with("/", ""), EG_DECODE_BAD_TEXT);
	cr_assert_eq(text_with(NULL, "A"), EG_DECODE_TRAILING);	   /* 185 bytes */
	cr_assert_eq(text_with(NULL, "AAAA"), EG_DECODE_TRAILING); /* 186 bytes */
	cr_assert_eq(text_with(NULL, "AAA"), EG_DECODE_BAD_TEXT);  /* 249 % 4 == 1 */

	struct eg_capability out;
	char text[EG_CAP_TEXT_MAX];
	size_t n = eg_cap_to_text(raw, text);

	cr_assert_eq(eg_cap_decode_text(text, n - 2, &out, NULL), EG_DECODE_TRUNCATED);
	cr_assert_eq(eg_cap_decode_text(text, n - 1, &out, NULL), EG_DECODE_BAD_TEXT);
	cr_assert_eq(eg_cap_decode_text("", 0, &out, NULL), EG_DECODE_TRUNCATED);
	text[100] = '\0';
	cr_assert_eq(eg_cap_decode_text(text, n, &out, NULL), EG_DECODE_BAD_TEXT);

	/* Far longer than any token: refused without decoding it. */
	char *big = malloc(100000);

	memset(big, 'A', 100000);
	cr_assert_eq(eg_cap_decode_text(big, 100000, &out, NULL), EG_DECODE_TRAILING);
	free(big);
}

/* 184 bytes end in a 2-character group that carries 8 bits in 12: the 4
 * left over must be zero, so of the 64 possible last characters exactly 4
 * decode, and only one of them to these bytes. */
Test(capability, text_has_exactly_one_spelling)
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	char text[EG_CAP_TEXT_MAX];
	size_t n = eg_cap_to_text(raw, text);
	int decoded = 0, same = 0;

	for (int i = 0; i < 64; i++) {
		uint8_t back[EG_CAP_LEN + 1];
		size_t bin_len;

		text[n - 1] = alphabet[i];
		if (eg_cap_text_to_bin(text, n, back, sizeof(back), &bin_len) != EG_DECODE_OK)
			continue;
		decoded++;
		cr_assert_eq(bin_len, EG_CAP_LEN);
		same += memcmp(back, raw, EG_CAP_LEN) == 0;
		cr_assert_eq(i % 16, 0, "'%c' has trailing bits set", alphabet[i]);
	}
	cr_assert_eq(decoded, 4);
	cr_assert_eq(same, 1);
}
