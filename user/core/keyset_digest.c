// SPDX-License-Identifier: Apache-2.0
/* eg_keyset_digest: the key set as text an operator can reproduce from
 * `execgate keys list`, hashed. Sorting by key id makes the digest a
 * function of the keys alone, whatever order a load or an add left. */
#include <string.h>
#include <sodium.h>
#include "core/keyset_digest.h"

void eg_keyset_digest(const struct eg_keyset *ks, uint8_t out[EG_KEYSET_DIGEST_LEN])
{
	crypto_generichash_state st;
	const struct eg_key *order[EG_KEYSET_MAX];
	size_t n = ks->n < EG_KEYSET_MAX ? ks->n : EG_KEYSET_MAX;
	/* "KID PK\n": 16 + 1 + 64 + 1, and sodium_bin2hex's NUL */
	char line[2 * EG_KEY_ID_LEN + 1 + 2 * crypto_sign_PUBLICKEYBYTES + 2];

	/* An insertion sort of at most 64 pointers: no allocation. */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		while (j > 0 && memcmp(order[j - 1]->kid, ks->keys[i].kid, EG_KEY_ID_LEN) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = &ks->keys[i];
	}
	crypto_generichash_init(&st, NULL, 0, EG_KEYSET_DIGEST_LEN);
	for (size_t i = 0; i < n; i++) {
		sodium_bin2hex(line, sizeof(line), order[i]->kid, EG_KEY_ID_LEN);
		line[2 * EG_KEY_ID_LEN] = ' ';
		sodium_bin2hex(line + 2 * EG_KEY_ID_LEN + 1, sizeof(line) - 2 * EG_KEY_ID_LEN - 1,
			       order[i]->pk, crypto_sign_PUBLICKEYBYTES);
		line[sizeof(line) - 2] = '\n';
		crypto_generichash_update(&st, (const unsigned char *)line, sizeof(line) - 1);
	}
	crypto_generichash_final(&st, out, EG_KEYSET_DIGEST_LEN);
}

void eg_keyset_digest_hex(const struct eg_keyset *ks, char out[EG_KEYSET_DIGEST_HEX])
{
	uint8_t d[EG_KEYSET_DIGEST_LEN];

	eg_keyset_digest(ks, d);
	sodium_bin2hex(out, EG_KEYSET_DIGEST_HEX, d, sizeof(d));
}
