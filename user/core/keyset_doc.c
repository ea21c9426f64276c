/* SPDX-License-Identifier: Apache-2.0 */
/* Key sets v1 and v2: encode, sign, strict decode, verify, and the apply rule.
 * docs/fleet.md is the specification; keep the two in step. */
#include <stdlib.h>
#include <string.h>
#include "core/be.h"
#include "core/capability.h"
#include "core/keyset_doc.h"

enum {
	OFF_VERSION = 0,
	OFF_RESERVED = 1,
	OFF_COUNT = 2,
	OFF_ROOT_KEY_ID = 4,
	OFF_SET_VERSION = 12,
	OFF_ISSUED_AT = 20,
	OFF_EXPIRES_AT = 28, /* v2 */
};
_Static_assert(OFF_ISSUED_AT + 8 == EG_KSD_HEAD_LEN, "head layout");
_Static_assert(OFF_EXPIRES_AT + 8 == EG_KSD_V2_HEAD_LEN, "v2 head layout");
_Static_assert(EG_KSD_ENTRY_LEN == 40, "entry length");
_Static_assert(EG_KSD_V1_MAX_LEN == 2652, "largest key set v1");
_Static_assert(EG_KSD_MAX_LEN == 2660, "largest key set v2");

#define CONTEXT_LEN sizeof(EG_KSD_SIGN_CONTEXT) /* with its NUL, as for capabilities */
_Static_assert(CONTEXT_LEN == 20, "context includes its NUL");
_Static_assert(sizeof(EG_KSD_V2_SIGN_CONTEXT) == CONTEXT_LEN, "both contexts are 20 bytes");

static size_t head_len(uint8_t version)
{
	return version == EG_KSD_VERSION2 ? EG_KSD_V2_HEAD_LEN : EG_KSD_HEAD_LEN;
}

static size_t doc_len(uint8_t version, size_t n)
{
	return head_len(version) + EG_KSD_ENTRY_LEN * n + crypto_sign_BYTES;
}

static const char *const names[EG_KSD__COUNT] = {
    [EG_KSD_OK] = "ok",
    [EG_KSD_BAD_TEXT] = "bad-text",
    [EG_KSD_TRUNCATED] = "truncated",
    [EG_KSD_TRAILING] = "trailing-bytes",
    [EG_KSD_BAD_VERSION] = "bad-version",
    [EG_KSD_RESERVED_BITS] = "reserved-bits",
    [EG_KSD_BAD_COUNT] = "bad-count",
    [EG_KSD_BAD_SET_VERSION] = "bad-keyset-version",
    [EG_KSD_BAD_KEY] = "bad-key",
    [EG_KSD_KEY_ID_MISMATCH] = "key-id-mismatch",
    [EG_KSD_NOT_SORTED] = "not-sorted",
    [EG_KSD_UNKNOWN_KEY] = "unknown-key",
    [EG_KSD_WRONG_KEY] = "wrong-key",
    [EG_KSD_BAD_SIGNATURE] = "bad-signature",
    [EG_KSD_BAD_EXPIRY] = "bad-expiry",
};

const char *eg_ksd_err_name(enum eg_ksd_err err)
{
	return (unsigned)err < EG_KSD__COUNT ? names[err] : "unknown";
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(((const struct eg_key *)a)->kid, ((const struct eg_key *)b)->kid,
		      EG_KEY_ID_LEN);
}

/* The signed message: context || the len - 64 bytes before the signature.
 * msg holds CONTEXT_LEN + EG_KSD_MAX_LEN bytes. */
static size_t signed_message(const uint8_t *buf, size_t body_len, uint8_t *msg)
{
	memcpy(msg,
	       buf[OFF_VERSION] == EG_KSD_VERSION2 ? EG_KSD_V2_SIGN_CONTEXT : EG_KSD_SIGN_CONTEXT,
	       CONTEXT_LEN);
	memcpy(msg + CONTEXT_LEN, buf, body_len);
	return CONTEXT_LEN + body_len;
}

enum eg_ksd_err eg_ksd_sign(const struct eg_keyset_doc *d,
			    const uint8_t sk[crypto_sign_SECRETKEYBYTES],
			    uint8_t out[EG_KSD_MAX_LEN], size_t *len)
{
	uint8_t msg[CONTEXT_LEN + EG_KSD_MAX_LEN];
	struct eg_key keys[EG_KEYSET_MAX];
	struct eg_keyset_doc check;
	enum eg_ksd_err err;
	size_t body_len, entries = head_len(d->version);

	*len = 0;
	memset(out, 0, EG_KSD_MAX_LEN);
	if (d->n == 0 || d->n > EG_KEYSET_MAX)
		return EG_KSD_BAD_COUNT;
	memcpy(keys, d->keys, d->n * sizeof(keys[0]));
	qsort(keys, d->n, sizeof(keys[0]), cmp_key);

	out[OFF_VERSION] = d->version;
	eg_put_be16(out + OFF_COUNT, (uint16_t)d->n);
	memcpy(out + OFF_ROOT_KEY_ID, d->root_key_id, EG_KEY_ID_LEN);
	eg_put_be64(out + OFF_SET_VERSION, d->keyset_version);
	eg_put_be64(out + OFF_ISSUED_AT, d->issued_at);
	if (d->version == EG_KSD_VERSION2)
		eg_put_be64(out + OFF_EXPIRES_AT, d->expires_at);
	for (size_t i = 0; i < d->n; i++) {
		uint8_t *e = out + entries + i * EG_KSD_ENTRY_LEN;

		memcpy(e, keys[i].kid, EG_KEY_ID_LEN);
		memcpy(e + EG_KEY_ID_LEN, keys[i].pk, crypto_sign_PUBLICKEYBYTES);
	}
	body_len = doc_len(d->version, d->n) - crypto_sign_BYTES;
	crypto_sign_detached(out + body_len, NULL, msg, signed_message(out, body_len, msg), sk);
	err = eg_ksd_decode(out, doc_len(d->version, d->n), &check);
	if (err != EG_KSD_OK) {
		memset(out, 0, EG_KSD_MAX_LEN);
		return err;
	}
	*len = doc_len(d->version, d->n);
	return EG_KSD_OK;
}

enum eg_ksd_err eg_ksd_decode(const uint8_t *b, size_t len, struct eg_keyset_doc *out)
{
	struct eg_keyset_doc d;
	size_t n, entries;

	/* Framing first: the version and the count say how long the document
	 * is. */
	if (len < OFF_COUNT + 2)
		return EG_KSD_TRUNCATED;
	if (b[OFF_VERSION] != EG_KSD_VERSION && b[OFF_VERSION] != EG_KSD_VERSION2)
		return EG_KSD_BAD_VERSION;
	if (b[OFF_RESERVED] != 0)
		return EG_KSD_RESERVED_BITS;
	n = eg_get_be16(b + OFF_COUNT);
	if (n == 0 || n > EG_KEYSET_MAX)
		return EG_KSD_BAD_COUNT;
	if (len < doc_len(b[OFF_VERSION], n))
		return EG_KSD_TRUNCATED;
	if (len > doc_len(b[OFF_VERSION], n))
		return EG_KSD_TRAILING;
	entries = head_len(b[OFF_VERSION]);

	memset(&d, 0, sizeof(d));
	d.version = b[OFF_VERSION];
	d.n = n;
	memcpy(d.root_key_id, b + OFF_ROOT_KEY_ID, EG_KEY_ID_LEN);
	d.keyset_version = eg_get_be64(b + OFF_SET_VERSION);
	d.issued_at = eg_get_be64(b + OFF_ISSUED_AT);
	if (d.version == EG_KSD_VERSION2)
		d.expires_at = eg_get_be64(b + OFF_EXPIRES_AT);
	if (d.keyset_version == 0 || d.keyset_version > EG_KSD_VERSION_MAX)
		return EG_KSD_BAD_SET_VERSION;
	if (d.version == EG_KSD_VERSION2 && d.expires_at <= d.issued_at)
		return EG_KSD_BAD_EXPIRY;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = b + entries + i * EG_KSD_ENTRY_LEN;
		struct eg_key *k = &d.keys[i];
		uint8_t kid[EG_KEY_ID_LEN];

		memcpy(k->kid, e, EG_KEY_ID_LEN);
		memcpy(k->pk, e + EG_KEY_ID_LEN, crypto_sign_PUBLICKEYBYTES);
		if (eg_key_check(k->pk) != EG_KEY_OK)
			return EG_KSD_BAD_KEY;
		eg_key_id(k->pk, kid);
		if (memcmp(kid, k->kid, EG_KEY_ID_LEN))
			return EG_KSD_KEY_ID_MISMATCH;
		if (i > 0 && memcmp(d.keys[i - 1].kid, k->kid, EG_KEY_ID_LEN) >= 0)
			return EG_KSD_NOT_SORTED;
	}
	*out = d;
	return EG_KSD_OK;
}

enum eg_ksd_err eg_ksd_verify(const uint8_t *buf, size_t len,
			      const uint8_t root_pk[crypto_sign_PUBLICKEYBYTES],
			      struct eg_keyset_doc *out)
{
	uint8_t msg[CONTEXT_LEN + EG_KSD_MAX_LEN];
	struct eg_keyset_doc d;
	uint8_t kid[EG_KEY_ID_LEN];
	enum eg_ksd_err err;
	size_t body_len;

	err = eg_ksd_decode(buf, len, &d);
	if (err != EG_KSD_OK)
		return err;
	eg_key_id(root_pk, kid);
	if (memcmp(kid, d.root_key_id, EG_KEY_ID_LEN))
		return EG_KSD_WRONG_KEY;
	body_len = len - crypto_sign_BYTES;
	if (crypto_sign_verify_detached(buf + body_len, msg, signed_message(buf, body_len, msg),
					root_pk) != 0)
		return EG_KSD_BAD_SIGNATURE;
	*out = d;
	return EG_KSD_OK;
}

enum eg_ksd_err eg_ksd_verify_roots(const uint8_t *buf, size_t len, const struct eg_keyset *roots,
				    struct eg_keyset_doc *out)
{
	const struct eg_key *root;
	struct eg_keyset_doc d;
	enum eg_ksd_err err;

	/* Framing and fields first, so that a malformed document is named as
	 * such whatever root it claims. */
	err = eg_ksd_decode(buf, len, &d);
	if (err != EG_KSD_OK)
		return err;
	root = eg_keyset_find(roots, d.root_key_id);
	if (!root)
		return EG_KSD_UNKNOWN_KEY;
	return eg_ksd_verify(buf, len, root->pk, out);
}

enum eg_ksd_err eg_ksd_text_to_bin(const char *text, size_t len, uint8_t raw[EG_KSD_MAX_LEN],
				   size_t *raw_len)
{
	switch (eg_cap_text_to_bin(text, len, raw, EG_KSD_MAX_LEN, raw_len)) {
	case EG_DECODE_OK:
		return EG_KSD_OK;
	case EG_DECODE_TRAILING:
		return EG_KSD_TRAILING;
	default:
		return EG_KSD_BAD_TEXT;
	}
}

size_t eg_ksd_to_text(const uint8_t *raw, size_t len, char out[EG_KSD_TEXT_MAX])
{
	_Static_assert(
	    sodium_base64_ENCODED_LEN(EG_KSD_MAX_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING) <=
		EG_KSD_TEXT_MAX,
	    "EG_KSD_TEXT_MAX too small");
	if (len > EG_KSD_MAX_LEN) {
		out[0] = '\0';
		return 0;
	}
	sodium_bin2base64(out, EG_KSD_TEXT_MAX, raw, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return strlen(out);
}

const char *eg_ksd_decision_name(enum eg_ksd_decision d)
{
	switch (d) {
	case EG_KSD_APPLY:
		return "apply";
	case EG_KSD_REFUSE_EQUAL:
		return "refuse-equal";
	case EG_KSD_REFUSE_OLDER:
		return "refuse-older";
	case EG_KSD_REFUSE_EXPIRED:
		return "refuse-expired";
	case EG_KSD_REFUSE_FLOOR:
		return "refuse-floor";
	}
	return "unknown";
}

static bool doc_holds(const struct eg_keyset_doc *doc, const struct eg_key *k)
{
	for (size_t i = 0; i < doc->n; i++)
		if (!memcmp(doc->keys[i].kid, k->kid, EG_KEY_ID_LEN) &&
		    !memcmp(doc->keys[i].pk, k->pk, crypto_sign_PUBLICKEYBYTES))
			return true;
	return false;
}

enum eg_ksd_decision eg_ksd_decide(uint64_t applied_version, const struct eg_keyset *current,
				   const struct eg_keyset_doc *doc,
				   uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN],
				   size_t *n_withdrawn)
{
	*n_withdrawn = 0;
	if (doc->keyset_version < applied_version)
		return EG_KSD_REFUSE_OLDER;
	if (doc->keyset_version == applied_version)
		return EG_KSD_REFUSE_EQUAL;
	for (size_t i = 0; i < current->n && i < EG_KEYSET_MAX; i++)
		if (!doc_holds(doc, &current->keys[i]))
			memcpy(withdrawn[(*n_withdrawn)++], current->keys[i].kid, EG_KEY_ID_LEN);
	return EG_KSD_APPLY;
}

enum eg_ksd_decision eg_ksd_decide_at(uint64_t applied_version, uint64_t floor, uint64_t now,
				      const struct eg_keyset *current,
				      const struct eg_keyset_doc *doc,
				      uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN],
				      size_t *n_withdrawn)
{
	*n_withdrawn = 0;
	if (doc->version == EG_KSD_VERSION2 && doc->expires_at <= now)
		return EG_KSD_REFUSE_EXPIRED;
	/* below what was applied is a rollback as before; between it and
	 * the floor, a rollback only the floor sees */
	if (doc->keyset_version < floor && doc->keyset_version >= applied_version)
		return EG_KSD_REFUSE_FLOOR;
	return eg_ksd_decide(applied_version, current, doc, withdrawn, n_withdrawn);
}
