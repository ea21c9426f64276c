/* SPDX-License-Identifier: Apache-2.0 */
/* Ed25519 conformance: RFC 8032 §7.1, Wycheproof, CCTV. The JSON files are
 * public data copied into tests/vectors/ (or $EXECGATE_VECTORS_DIR); a missing
 * file fails the test, it is never skipped. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include "core/keyset.h"
#include "helpers.h"

static json_t *load_json(const char *name)
{
	char path[4096];
	json_error_t err;
	json_t *root;

	snprintf(path, sizeof(path), "%s/%s", test_vectors_dir(), name);
	root = json_load_file(path, 0, &err);
	cr_assert_not_null(root, "%s: %s (line %d); set EXECGATE_VECTORS_DIR", path, err.text,
			   err.line);
	return root;
}

static const char *str_field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	cr_assert(json_is_string(v), "field %s is not a string", key);
	return json_string_value(v);
}

/* RFC 8032 §7.1, TEST 1-3: secret key (the seed), public key, message,
 * signature. */
static const struct {
	const char *seed, *pk, *msg, *sig;
} rfc8032[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
     "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
};

Test(vectors, rfc8032_section_7_1)
{
	for (size_t i = 0; i < sizeof(rfc8032) / sizeof(rfc8032[0]); i++) {
		size_t seed_len, pk_len, msg_len, sig_len;
		uint8_t *seed = test_unhex(rfc8032[i].seed, &seed_len);
		uint8_t *pk = test_unhex(rfc8032[i].pk, &pk_len);
		uint8_t *msg = test_unhex(rfc8032[i].msg, &msg_len);
		uint8_t *sig = test_unhex(rfc8032[i].sig, &sig_len);
		uint8_t dpk[32], sk[64], dsig[64];

		cr_assert_eq(seed_len, 32);
		cr_assert_eq(sig_len, 64);
		cr_assert_eq(crypto_sign_seed_keypair(dpk, sk, seed), 0);
		cr_assert_arr_eq(dpk, pk, 32, "TEST %zu: public key", i + 1);
		crypto_sign_detached(dsig, NULL, msg, msg_len, sk);
		cr_assert_arr_eq(dsig, sig, 64, "TEST %zu: signature", i + 1);
		cr_assert_eq(crypto_sign_verify_detached(sig, msg, msg_len, pk), 0);
		cr_assert_eq(eg_key_check(pk), EG_KEY_OK, "TEST %zu: key refused", i + 1);
		sig[0] ^= 1;
		cr_assert_neq(crypto_sign_verify_detached(sig, msg, msg_len, pk), 0);
		free(seed);
		free(pk);
		free(msg);
		free(sig);
	}
}

/* 151 cases, each as Wycheproof expects; and no key behind a valid case is
 * refused by the key-set rules. */
Test(vectors, wycheproof_ed25519)
{
	json_t *root = load_json("wycheproof_ed25519_test.json");
	json_t *groups = json_object_get(root, "testGroups"), *g;
	size_t gi, total = 0, as_expected = 0, valid = 0;

	cr_assert(json_is_array(groups));
	json_array_foreach(groups, gi, g)
	{
		size_t pk_len, ti;
		uint8_t *pk = test_unhex(str_field(json_object_get(g, "publicKey"), "pk"), &pk_len);
		json_t *t;

		cr_assert_eq(pk_len, 32);
		json_array_foreach(json_object_get(g, "tests"), ti, t)
		{
			size_t msg_len, sig_len;
			uint8_t *msg = test_unhex(str_field(t, "msg"), &msg_len);
			uint8_t *sig = test_unhex(str_field(t, "sig"), &sig_len);
			const char *result = str_field(t, "result");
			bool want = !strcmp(result, "valid");
			bool got = sig_len == 64 &&
				   crypto_sign_verify_detached(sig, msg, msg_len, pk) == 0;

			cr_assert(want || !strcmp(result, "invalid"), "result %s", result);
			total++;
			valid += want;
			as_expected += got == want;
			cr_expect_eq(got, want, "tcId %lld: got %d, want %s",
				     (long long)json_integer_value(json_object_get(t, "tcId")), got,
				     result);
			if (want)
				cr_assert_eq(eg_key_check(pk), EG_KEY_OK);
			free(msg);
			free(sig);
		}
		free(pk);
	}
	cr_assert_eq(total, (size_t)json_integer_value(json_object_get(root, "numberOfTests")));
	cr_assert_eq(total, 151);
	cr_assert_eq(valid, 88);
	cr_assert_eq(as_expected, 151);
	json_decref(root);
}

static bool has_flag(json_t *flags, const char *name)
{
	size_t i;
	json_t *f;

	json_array_foreach(flags, i, f) if (json_is_string(f) &&
					    !strcmp(json_string_value(f), name)) return true;
	return false;
}

/* CCTV: libsodium 1.0.18 accepts signatures under keys with a small-order
 * component. Flags used: low_order_A (A itself of small order) and
 * low_order_component_A (A = P + T, T of small order) must be refused when
 * the key is loaded; so must non_canonical_A. With the key rules in front,
 * no accepted vector is left with any of those flags. */
Test(vectors, cctv_small_order_keys_refused_at_load)
{
	json_t *root = load_json("cctv_ed25519vectors.json"), *v;
	size_t i, total = 0, flagged = 0, raw_accepted = 0, raw_bad_key = 0, accepted = 0;

	cr_assert(json_is_array(root));
	json_array_foreach(root, i, v)
	{
		json_t *flags = json_object_get(v, "flags");
		size_t pk_len, sig_len;
		uint8_t *pk = test_unhex(str_field(v, "key"), &pk_len);
		uint8_t *sig = test_unhex(str_field(v, "sig"), &sig_len);
		const char *msg = str_field(v, "msg");
		bool bad_key = has_flag(flags, "low_order_A") ||
			       has_flag(flags, "low_order_component_A") ||
			       has_flag(flags, "non_canonical_A");
		enum eg_key_err kerr;
		bool verifies;

		cr_assert_eq(pk_len, 32);
		total++;
		kerr = eg_key_check(pk);
		verifies = sig_len == 64 && crypto_sign_verify_detached(sig, (const uint8_t *)msg,
									strlen(msg), pk) == 0;
		raw_accepted += verifies;
		raw_bad_key += verifies && bad_key;
		if (bad_key) {
			flagged++;
			cr_expect_neq(kerr, EG_KEY_OK, "vector %zu: key %s loaded", i,
				      str_field(v, "key"));
		}
		if (kerr == EG_KEY_OK && verifies) {
			accepted++;
			cr_expect(!bad_key, "vector %zu accepted with a bad key", i);
		}
		free(pk);
		free(sig);
	}
	cr_assert_eq(total, 914);
	cr_assert_gt(flagged, 0);
	/* vectors/README.md: the bare library accepts 43, 42 of them under a
	 * key with a small-order component; the key rules leave the one that is
	 * fine. */
	cr_assert_eq(raw_accepted, 43);
	cr_assert_eq(raw_bad_key, 42);
	cr_assert_eq(accepted, 1);
	cr_log_info(
	    "cctv: %zu vectors, %zu with a bad-key flag, verify alone accepts %zu, with the "
	    "key rules %zu",
	    total, flagged, raw_accepted, accepted);
	json_decref(root);
}
