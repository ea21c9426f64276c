/* SPDX-License-Identifier: Apache-2.0 */
/* tests/vectors/fleet_v1.json: the fixed selection and key set, rebuilt
 * byte for byte from their fields and seeds, so that any change to either
 * encoding (or to the contexts) fails here. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>
#include "core/ids.h"
#include "core/keyset_doc.h"
#include "core/selection.h"
#include "helpers.h"

static json_t *vectors;

static void load(void)
{
	char path[4096];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/fleet_v1.json", test_vectors_dir());
	vectors = json_load_file(path, 0, &err);
	cr_assert_not_null(vectors, "%s: %s", path, err.text);
}

static void unload(void)
{
	json_decref(vectors);
}

TestSuite(fleet_vectors, .init = load, .fini = unload);

static const char *str(json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));

	cr_assert_not_null(s, "member %s", name);
	return s;
}

static uint64_t num(json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);

	cr_assert(json_is_integer(v), "member %s", name);
	return (uint64_t)json_integer_value(v);
}

static void keypair(const char *seed_name, uint8_t pk[32], uint8_t sk[64])
{
	size_t len;
	uint8_t *seed = test_unhex(str(json_object_get(vectors, "seeds"), seed_name), &len);

	cr_assert_eq(len, crypto_sign_SEEDBYTES);
	crypto_sign_seed_keypair(pk, sk, seed);
	free(seed);
}

static void uuid(json_t *o, const char *name, uint8_t out[EG_ID_BYTES])
{
	cr_assert_eq(eg_uuid_parse(str(o, name), out), 0, "member %s", name);
}

Test(fleet_vectors, selection_is_rebuilt_byte_for_byte)
{
	json_t *v = json_object_get(vectors, "selection");
	uint8_t pk[32], sk[64], b[EG_SEL_LEN], *want;
	char text[EG_SEL_TEXT_MAX], kid[EG_KID_TEXT_LEN];
	struct eg_selection s, out;
	size_t len;

	keypair(str(v, "signer_seed"), pk, sk);
	memset(&s, 0, sizeof(s));
	s.version = 1;
	cr_assert_eq(eg_substrate_parse(str(v, "substrate"), &s.id.substrate), 0);
	s.id.activation = (uint32_t)num(v, "activation");
	eg_key_id(pk, s.key_id);
	eg_key_id_format(s.key_id, kid);
	cr_assert_str_eq(kid, str(v, "key_id"));
	uuid(v, "sandbox", s.id.sandbox);
	uuid(v, "worker", s.id.worker);
	uuid(v, "pod_uid", s.id.pod_uid);
	s.id.generation = num(v, "generation");
	s.issued_at = num(v, "issued_at");
	eg_sel_sign(&s, sk, b);

	want = test_unhex(str(v, "hex"), &len);
	cr_assert_eq(len, EG_SEL_LEN);
	cr_assert_arr_eq(b, want, EG_SEL_LEN);
	free(want);
	eg_sel_to_text(b, EG_SEL_LEN, text);
	cr_assert_str_eq(text, str(v, "text"));
	cr_assert_eq(eg_sel_verify(b, sizeof(b), pk, &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &s, sizeof(s)), 0);
}

Test(fleet_vectors, key_set_is_rebuilt_byte_for_byte)
{
	json_t *v = json_object_get(vectors, "keyset"), *seeds = json_object_get(v, "key_seeds");
	json_t *kids = json_object_get(v, "key_ids");
	uint8_t root_pk[32], root_sk[64], b[EG_KSD_MAX_LEN], *want;
	char text[EG_KSD_TEXT_MAX], kid[EG_KID_TEXT_LEN];
	static struct eg_keyset_doc d, out;
	size_t len, want_len;

	keypair(str(v, "root_seed"), root_pk, root_sk);
	memset(&d, 0, sizeof(d));
	d.version = 1;
	eg_key_id(root_pk, d.root_key_id);
	eg_key_id_format(d.root_key_id, kid);
	cr_assert_str_eq(kid, str(v, "root_key_id"));
	d.keyset_version = num(v, "version");
	d.issued_at = num(v, "issued_at");
	for (size_t i = 0; i < json_array_size(seeds); i++) {
		uint8_t sk[64];

		keypair(json_string_value(json_array_get(seeds, i)), d.keys[i].pk, sk);
		eg_key_id(d.keys[i].pk, d.keys[i].kid);
		d.n++;
	}
	cr_assert_eq(eg_ksd_sign(&d, root_sk, b, &len), EG_KSD_OK);

	want = test_unhex(str(v, "hex"), &want_len);
	cr_assert_eq(len, want_len);
	cr_assert_arr_eq(b, want, len);
	free(want);
	eg_ksd_to_text(b, len, text);
	cr_assert_str_eq(text, str(v, "text"));
	cr_assert_eq(eg_ksd_verify(b, len, root_pk, &out), EG_KSD_OK);
	cr_assert_eq(out.n, json_array_size(kids));
	for (size_t i = 0; i < out.n; i++) {
		eg_key_id_format(out.keys[i].kid, kid);
		cr_assert_str_eq(kid, json_string_value(json_array_get(kids, i)));
	}
}

/* tests/vectors/fleet_v2.json: selection v2 (an audience) and key set v2
 * (an expiry), rebuilt from their fields the same way. */
static json_t *vectors2;

static void load2(void)
{
	char path[4096];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/fleet_v2.json", test_vectors_dir());
	vectors2 = json_load_file(path, 0, &err);
	cr_assert_not_null(vectors2, "%s: %s", path, err.text);
	vectors = vectors2; /* keypair() reads the seeds from it */
}

static void unload2(void)
{
	json_decref(vectors2);
}

TestSuite(fleet_vectors_v2, .init = load2, .fini = unload2);

Test(fleet_vectors_v2, selection_is_rebuilt_byte_for_byte)
{
	json_t *v = json_object_get(vectors2, "selection");
	uint8_t pk[32], sk[64], b[EG_SEL_MAX_LEN], *want;
	char text[EG_SEL_TEXT_MAX];
	struct eg_selection s, out;
	size_t len, n;

	keypair(str(v, "signer_seed"), pk, sk);
	memset(&s, 0, sizeof(s));
	s.version = 2;
	cr_assert_eq(eg_substrate_parse(str(v, "substrate"), &s.id.substrate), 0);
	s.id.activation = (uint32_t)num(v, "activation");
	eg_key_id(pk, s.key_id);
	uuid(v, "sandbox", s.id.sandbox);
	uuid(v, "worker", s.id.worker);
	uuid(v, "pod_uid", s.id.pod_uid);
	uuid(v, "audience", s.audience);
	s.id.generation = num(v, "generation");
	s.issued_at = num(v, "issued_at");
	n = eg_sel_sign(&s, sk, b);
	cr_assert_eq(n, 160);
	want = test_unhex(str(v, "hex"), &len);
	cr_assert_eq(len, 160);
	cr_assert_arr_eq(b, want, 160);
	free(want);
	eg_sel_to_text(b, n, text);
	cr_assert_str_eq(text, str(v, "text"));
	cr_assert_eq(eg_sel_verify(b, n, pk, &out), EG_SEL_OK);
	cr_assert_eq(memcmp(&out, &s, sizeof(s)), 0);
}

Test(fleet_vectors_v2, key_set_is_rebuilt_byte_for_byte)
{
	json_t *v = json_object_get(vectors2, "keyset"), *seeds = json_object_get(v, "key_seeds");
	uint8_t root_pk[32], root_sk[64], b[EG_KSD_MAX_LEN], *want;
	char text[EG_KSD_TEXT_MAX];
	static struct eg_keyset_doc d, out;
	size_t len, want_len;

	keypair(str(v, "root_seed"), root_pk, root_sk);
	memset(&d, 0, sizeof(d));
	d.version = 2;
	eg_key_id(root_pk, d.root_key_id);
	d.keyset_version = num(v, "version");
	d.issued_at = num(v, "issued_at");
	d.expires_at = num(v, "expires_at");
	for (size_t i = 0; i < json_array_size(seeds); i++) {
		uint8_t sk[64];

		keypair(json_string_value(json_array_get(seeds, i)), d.keys[i].pk, sk);
		eg_key_id(d.keys[i].pk, d.keys[i].kid);
		d.n++;
	}
	cr_assert_eq(eg_ksd_sign(&d, root_sk, b, &len), EG_KSD_OK);
	want = test_unhex(str(v, "hex"), &want_len);
	cr_assert_eq(len, want_len);
	cr_assert_arr_eq(b, want, len);
	free(want);
	eg_ksd_to_text(b, len, text);
	cr_assert_str_eq(text, str(v, "text"));
	cr_assert_eq(eg_ksd_verify(b, len, root_pk, &out), EG_KSD_OK);
	cr_assert_eq(out.expires_at, d.expires_at);
}
