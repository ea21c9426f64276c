/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness over the selection v1 and key set v1 decoders
 * (core/selection.h, core/keyset_doc.h). Besides "no crash, no sanitizer
 * report", for every input:
 *   - decoding is canonical: bytes accepted by a decoder re-encode to
 *     exactly themselves (the signature aside, which is copied);
 *   - an accepted key set has 1..64 keys, ascending, each key id its key's;
 *   - nothing verifies under the fixed key unless it was signed with it
 *     (the harness never signs, so nothing verifies);
 *   - the text readers accept only what re-encodes to the same text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"
#include "fuzz.h"

static uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];

int LLVMFuzzerInitialize(int *argc, char **argv[])
{
	uint8_t seed[crypto_sign_SEEDBYTES];

	fuzz_init(argc, argv);
	memset(seed, 0x41, sizeof(seed));
	crypto_sign_seed_keypair(pk, sk, seed);
	return 0;
}

static void selection(const uint8_t *data, size_t size)
{
	struct eg_selection s;
	uint8_t body[EG_SEL_MAX_BODY_LEN];

	if (eg_sel_decode(data, size, &s) == EG_SEL_OK) {
		size_t n;

		CHECK(size == eg_sel_len(s.version));
		n = eg_sel_encode_body(&s, body);
		CHECK(n + crypto_sign_BYTES == size);
		CHECK(memcmp(body, data, n) == 0);
	}
	CHECK(eg_sel_verify(data, size, pk, &s) != EG_SEL_OK);
}

static void keyset(const uint8_t *data, size_t size)
{
	static struct eg_keyset_doc d, again;
	static uint8_t out[EG_KSD_MAX_LEN];
	size_t len;

	if (eg_ksd_decode(data, size, &d) == EG_KSD_OK) {
		CHECK(size ==
		      (d.version == EG_KSD_VERSION2 ? EG_KSD_V2_LEN(d.n) : EG_KSD_LEN(d.n)));
		CHECK(d.n >= 1 && d.n <= EG_KEYSET_MAX);
		for (size_t i = 0; i < d.n; i++) {
			uint8_t kid[EG_KEY_ID_LEN];

			eg_key_id(d.keys[i].pk, kid);
			CHECK(memcmp(kid, d.keys[i].kid, EG_KEY_ID_LEN) == 0);
			CHECK(i == 0 ||
			      memcmp(d.keys[i - 1].kid, d.keys[i].kid, EG_KEY_ID_LEN) < 0);
		}
		/* Re-signed, the body is byte for byte the input's. */
		CHECK(eg_ksd_sign(&d, sk, out, &len) == EG_KSD_OK);
		CHECK(len == size);
		CHECK(memcmp(out, data, size - crypto_sign_BYTES) == 0);
		CHECK(eg_ksd_decode(out, len, &again) == EG_KSD_OK);
	}
	CHECK(eg_ksd_verify(data, size, pk, &d) != EG_KSD_OK);
}

static void text(const uint8_t *data, size_t size)
{
	static uint8_t raw[EG_KSD_MAX_LEN];
	static char back[EG_KSD_TEXT_MAX];
	uint8_t sraw[EG_SEL_MAX_LEN];
	size_t slen;
	char sback[EG_SEL_TEXT_MAX];
	size_t n;

	if (eg_sel_text_to_bin((const char *)data, size, sraw, &slen) == EG_SEL_OK) {
		CHECK(eg_sel_to_text(sraw, slen, sback) == size);
		CHECK(memcmp(sback, data, size) == 0);
	}
	if (eg_ksd_text_to_bin((const char *)data, size, raw, &n) == EG_KSD_OK && n > 0) {
		CHECK(eg_ksd_to_text(raw, n, back) == size);
		CHECK(memcmp(back, data, size) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	selection(data, size);
	keyset(data, size);
	text(data, size);
	return 0;
}
