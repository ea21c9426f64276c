/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness over the typed key-file decoder (core/key_file.h).
 * Besides "no crash, no sanitizer report", for every input:
 *   - decoding is canonical: an accepted text is exactly the encoding of
 *     the decoded key, with or without its one LF;
 *   - a text accepted as a public key never names a secret type, and one
 *     accepted as a secret never names a public type;
 *   - nothing is accepted as both;
 *   - eg_pubkey_parse accepts only what the decoder accepts and the key
 *     rules pass, and writes pk only then. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/key_file.h"
#include "core/keyset.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init(argc, argv);
	return 0;
}

static void check_canonical(const char *text, size_t len, enum eg_key_kind kind,
			    const uint8_t key[32])
{
	char again[EG_KEY_FILE_LINE_MAX];
	int n = eg_key_file_encode(EG_KEY_ALG_ED25519, kind, key, 32, again, sizeof(again));

	CHECK(n == 92);
	CHECK(len == 92 || len == 91);
	CHECK(!memcmp(again, text, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	uint8_t pub[32], sec[32], pk[32];
	enum eg_key_err ep, es, eparse;

	ep = eg_key_file_decode(text, size, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pub, 32);
	es = eg_key_file_decode(text, size, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, sec, 32);
	CHECK(!(ep == EG_KEY_OK && es == EG_KEY_OK));
	if (ep == EG_KEY_OK) {
		check_canonical(text, size, EG_KEY_KIND_PUBLIC, pub);
		CHECK(es == EG_KEY_FILE_PUBLIC);
	}
	if (es == EG_KEY_OK) {
		check_canonical(text, size, EG_KEY_KIND_SECRET, sec);
		CHECK(ep == EG_KEY_FILE_SECRET);
	}
	memset(pk, 0xa5, sizeof(pk));
	eparse = eg_pubkey_parse(text, size, pk);
	if (ep != EG_KEY_OK) {
		CHECK(eparse == ep);
	} else {
		CHECK(eparse == eg_key_check(pub));
	}
	if (eparse == EG_KEY_OK) {
		CHECK(!memcmp(pk, pub, 32));
	} else {
		for (size_t i = 0; i < sizeof(pk); i++)
			CHECK(pk[i] == 0xa5);
	}
	return 0;
}
