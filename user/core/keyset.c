/* SPDX-License-Identifier: Apache-2.0 */
/* Key validity rules and the in-memory key set. */
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include "core/keyset.h"

static const char *const key_err_names[] = {
    [EG_KEY_OK] = "ok",
    [EG_KEY_ZERO] = "all-zero-key",
    [EG_KEY_SMALL_ORDER] = "small-order-key",
    [EG_KEY_INVALID] = "invalid-key",
    [EG_KEY_DUPLICATE] = "duplicate-key",
    [EG_KEY_FULL] = "key-set-full",
    [EG_KEY_NOT_FOUND] = "key-not-found",
    [EG_KEY_FILE_MISSING] = "key-file-missing",
    [EG_KEY_FILE_UNREADABLE] = "key-file-unreadable",
    [EG_KEY_FILE_NOT_REGULAR] = "key-file-not-regular",
    [EG_KEY_FILE_EMPTY] = "key-file-empty",
    [EG_KEY_FILE_CRLF] = "key-file-crlf",
    [EG_KEY_FILE_TRAILING] = "key-file-trailing-data",
    [EG_KEY_FILE_UNTYPED] = "key-file-untyped",
    [EG_KEY_FILE_UNKNOWN_TYPE] = "key-file-unknown-type",
    [EG_KEY_FILE_WRONG_LENGTH] = "key-wrong-length",
    [EG_KEY_FILE_NOT_HEX] = "key-not-hex",
    [EG_KEY_FILE_SECRET] = "key-file-holds-secret",
    [EG_KEY_FILE_PUBLIC] = "key-file-holds-public",
    [EG_KEY_NO_MEMORY] = "out-of-memory",
};

static const char *const key_err_details[] = {
    [EG_KEY_OK] = "ok",
    [EG_KEY_ZERO] = "the key is all zero",
    [EG_KEY_SMALL_ORDER] = "the key is a small-order point or has a small-order component",
    [EG_KEY_INVALID] = "the key is not a valid Ed25519 point (off the curve or non-canonical)",
    [EG_KEY_DUPLICATE] = "the same key id is already in the set",
    [EG_KEY_FULL] = "the key set is full",
    [EG_KEY_NOT_FOUND] = "no such key in the set",
    [EG_KEY_FILE_MISSING] = "no such file",
    [EG_KEY_FILE_UNREADABLE] = "cannot be opened or read",
    [EG_KEY_FILE_NOT_REGULAR] = "not a regular file",
    [EG_KEY_FILE_EMPTY] = "the file is empty",
    [EG_KEY_FILE_CRLF] = "the file has a CR (CRLF line ending?): key files end their line "
			 "with LF only",
    [EG_KEY_FILE_TRAILING] = "data after the key: a key file is one line with one optional LF",
    [EG_KEY_FILE_UNTYPED] =
	"untyped bare hex (the old form, in which a public key and a seed "
	"look the same): re-create a .pub with `execgate-issue pubkey --seed "
	"KID.seed`; type an old seed with `sed -i '1s/^/execgate-ed25519-secret-v1 /' "
	"KID.seed`",
    [EG_KEY_FILE_UNKNOWN_TYPE] = "does not start with a known key type "
				 "(execgate-ed25519-public-v1 or execgate-ed25519-secret-v1)",
    [EG_KEY_FILE_WRONG_LENGTH] = "the key has the wrong number of hex digits (Ed25519: 64)",
    [EG_KEY_FILE_NOT_HEX] = "the key has a byte that is not a lowercase hex digit",
    [EG_KEY_FILE_SECRET] = "holds a secret key: refusing it; give the .pub file",
    [EG_KEY_FILE_PUBLIC] = "holds a public key, not a secret seed; give the .seed file",
    [EG_KEY_NO_MEMORY] = "out of memory",
};

_Static_assert(sizeof(key_err_names) == sizeof(key_err_details), "one detail per name");

const char *eg_key_err_name(enum eg_key_err err)
{
	if ((unsigned)err >= sizeof(key_err_names) / sizeof(key_err_names[0]))
		return "unknown";
	return key_err_names[err];
}

const char *eg_key_err_detail(enum eg_key_err err)
{
	if ((unsigned)err >= sizeof(key_err_details) / sizeof(key_err_details[0]))
		return "unknown key error";
	return key_err_details[err];
}

void eg_key_id(const uint8_t pk[crypto_sign_PUBLICKEYBYTES], uint8_t kid[EG_KEY_ID_LEN])
{
	uint8_t h[crypto_generichash_BYTES]; /* 32: BLAKE2b-256 */

	_Static_assert(crypto_generichash_BYTES == 32, "BLAKE2b-256");
	crypto_generichash(h, sizeof(h), pk, crypto_sign_PUBLICKEYBYTES, NULL, 0);
	memcpy(kid, h, EG_KEY_ID_LEN);
}

/* The encodings of the eight points of order dividing 8, in canonical form
 * and as y + p where that still fits (the sign bit is compared separately:
 * it is masked off below). Same list as libsodium's ge25519_has_small_order,
 * which is not exported. */
static const uint8_t small_order[][32] = {
    /* 0 (order 4) */
    {0},
    /* 1 (order 1) */
    {0x01},
    /* order 8 */
    {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4,
     0x89, 0xf2, 0xef, 0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6,
     0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
    /* order 8 */
    {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
     0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
     0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
    /* p - 1 (order 2) */
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    /* p (= 0, order 4), non-canonical */
    {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    /* p + 1 (= 1, order 1), non-canonical */
    {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
};

static bool is_small_order_encoding(const uint8_t pk[32])
{
	for (size_t i = 0; i < sizeof(small_order) / sizeof(small_order[0]); i++) {
		if (memcmp(pk, small_order[i], 31) == 0 && (pk[31] & 0x7f) == small_order[i][31])
			return true;
	}
	return false;
}

/* y < p, the sign bit aside: p = 2^255 - 19. */
static bool is_canonical_y(const uint8_t pk[32])
{
	if ((pk[31] & 0x7f) != 0x7f)
		return true;
	for (int i = 30; i > 0; i--)
		if (pk[i] != 0xff)
			return true;
	return pk[0] < 0xed;
}

enum eg_key_err eg_key_check(const uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
	uint8_t sum[crypto_core_ed25519_BYTES];

	if (sodium_is_zero(pk, crypto_sign_PUBLICKEYBYTES))
		return EG_KEY_ZERO;
	if (is_small_order_encoding(pk))
		return EG_KEY_SMALL_ORDER;
	/* Canonical, on the curve, not of small order, and in the prime-order
	 * subgroup. libsodium 1.0.18's verify checks only the first three, so
	 * a key P + T (T of small order) verifies signatures that hold for P
	 * only up to the torsion: such keys must never enter a key set. */
	if (crypto_core_ed25519_is_valid_point(pk))
		return EG_KEY_OK;
	/* Only for the error name: crypto_core_ed25519_add decodes any point on
	 * the curve, so a canonical point it accepts that failed the check above
	 * lies outside the prime-order subgroup, i.e. has a small-order part. */
	if (is_canonical_y(pk) && crypto_core_ed25519_add(sum, pk, pk) == 0)
		return EG_KEY_SMALL_ORDER;
	return EG_KEY_INVALID;
}

void eg_keyset_init(struct eg_keyset *ks)
{
	memset(ks, 0, sizeof(*ks));
}

static ssize_t keyset_index(const struct eg_keyset *ks, const uint8_t kid[EG_KEY_ID_LEN])
{
	for (size_t i = 0; i < ks->n; i++)
		if (memcmp(ks->keys[i].kid, kid, EG_KEY_ID_LEN) == 0)
			return (ssize_t)i;
	return -1;
}

enum eg_key_err eg_keyset_add(struct eg_keyset *ks, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			      uint8_t kid_out[EG_KEY_ID_LEN])
{
	uint8_t kid[EG_KEY_ID_LEN];
	enum eg_key_err err;

	err = eg_key_check(pk);
	if (err != EG_KEY_OK)
		return err;
	eg_key_id(pk, kid);
	if (kid_out)
		memcpy(kid_out, kid, EG_KEY_ID_LEN);
	if (keyset_index(ks, kid) >= 0)
		return EG_KEY_DUPLICATE;
	if (ks->n >= EG_KEYSET_MAX)
		return EG_KEY_FULL;
	memcpy(ks->keys[ks->n].kid, kid, EG_KEY_ID_LEN);
	memcpy(ks->keys[ks->n].pk, pk, crypto_sign_PUBLICKEYBYTES);
	ks->n++;
	ks->generation++;
	return EG_KEY_OK;
}

enum eg_key_err eg_keyset_remove(struct eg_keyset *ks, const uint8_t kid[EG_KEY_ID_LEN])
{
	ssize_t i = keyset_index(ks, kid);

	if (i < 0)
		return EG_KEY_NOT_FOUND;
	ks->keys[i] = ks->keys[ks->n - 1];
	memset(&ks->keys[ks->n - 1], 0, sizeof(ks->keys[0]));
	ks->n--;
	ks->generation++;
	return EG_KEY_OK;
}

const struct eg_key *eg_keyset_find(const struct eg_keyset *ks, const uint8_t kid[EG_KEY_ID_LEN])
{
	ssize_t i = keyset_index(ks, kid);

	return i < 0 ? NULL : &ks->keys[i];
}

bool eg_keyset_same_keys(const struct eg_keyset *a, const struct eg_keyset *b)
{
	if (a->n != b->n)
		return false;
	/* no key twice in a set (EG_KEY_DUPLICATE): equal counts and each of
	 * a's in b is the same set, in any order */
	for (size_t i = 0; i < a->n; i++) {
		const struct eg_key *k = eg_keyset_find(b, a->keys[i].kid);

		if (!k || sodium_memcmp(k->pk, a->keys[i].pk, sizeof(k->pk)))
			return false;
	}
	return true;
}
