/* SPDX-License-Identifier: Apache-2.0 */
/* Selections v1 and v2: encode, sign, strict decode, verify. docs/fleet.md is the
 * specification; keep the two in step. The decoder checks framing, then
 * every field in a fixed order, then the signature, and names the first
 * problem, so one input always yields one reason. */
#include <string.h>
#include "core/be.h"
#include "core/ids.h"
#include "core/selection.h"
#include "execgate/verdict.h"

enum {
	OFF_VERSION = 0,
	OFF_SUBSTRATE = 1,
	OFF_RESERVED = 2,
	OFF_ACTIVATION = 4,
	OFF_KEY_ID = 8,
	OFF_SANDBOX = 16,
	OFF_WORKER = 32,
	OFF_POD_UID = 48,
	OFF_GENERATION = 64,
	OFF_ISSUED_AT = 72,
	OFF_AUDIENCE = 80, /* v2 */
};
_Static_assert(OFF_ISSUED_AT + 8 == EG_SEL_BODY_LEN, "body layout");
_Static_assert(OFF_AUDIENCE + EG_ID_BYTES == EG_SEL_V2_BODY_LEN, "v2 body layout");
_Static_assert(EG_SEL_LEN == 144, "selection v1 length");
_Static_assert(EG_SEL_V2_LEN == 160, "selection v2 length");

#define CONTEXT_LEN sizeof(EG_SEL_SIGN_CONTEXT) /* with its NUL, as for capabilities */
_Static_assert(CONTEXT_LEN == 22, "context includes its NUL");
_Static_assert(sizeof(EG_SEL_V2_SIGN_CONTEXT) == CONTEXT_LEN, "both contexts are 22 bytes");

static const char *const names[EG_SEL__COUNT] = {
    [EG_SEL_OK] = "ok",
    [EG_SEL_BAD_TEXT] = "bad-text",
    [EG_SEL_TRUNCATED] = "truncated",
    [EG_SEL_TRAILING] = "trailing-bytes",
    [EG_SEL_BAD_VERSION] = "bad-version",
    [EG_SEL_RESERVED_BITS] = "reserved-bits",
    [EG_SEL_BAD_SUBSTRATE] = "bad-substrate",
    [EG_SEL_ZERO_ID] = "zero-id",
    [EG_SEL_BAD_GENERATION] = "bad-generation",
    [EG_SEL_UNKNOWN_KEY] = "unknown-key",
    [EG_SEL_WRONG_KEY] = "wrong-key",
    [EG_SEL_BAD_SIGNATURE] = "bad-signature",
};

const char *eg_sel_err_name(enum eg_sel_err err)
{
	return (unsigned)err < EG_SEL__COUNT ? names[err] : "unknown";
}

size_t eg_sel_len(uint8_t version)
{
	return version == EG_SEL_VERSION    ? EG_SEL_LEN
	       : version == EG_SEL_VERSION2 ? EG_SEL_V2_LEN
					    : 0;
}

size_t eg_sel_encode_body(const struct eg_selection *s, uint8_t *b)
{
	size_t body = s->version == EG_SEL_VERSION2 ? EG_SEL_V2_BODY_LEN : EG_SEL_BODY_LEN;

	memset(b, 0, body);
	b[OFF_VERSION] = s->version;
	b[OFF_SUBSTRATE] = s->id.substrate;
	eg_put_be32(b + OFF_ACTIVATION, s->id.activation);
	memcpy(b + OFF_KEY_ID, s->key_id, EG_KEY_ID_LEN);
	memcpy(b + OFF_SANDBOX, s->id.sandbox, EG_ID_BYTES);
	memcpy(b + OFF_WORKER, s->id.worker, EG_ID_BYTES);
	memcpy(b + OFF_POD_UID, s->id.pod_uid, EG_ID_BYTES);
	eg_put_be64(b + OFF_GENERATION, s->id.generation);
	eg_put_be64(b + OFF_ISSUED_AT, s->issued_at);
	if (s->version == EG_SEL_VERSION2)
		memcpy(b + OFF_AUDIENCE, s->audience, EG_ID_BYTES);
	return body;
}

/* context || body, by the version byte of body; returns its length. */
static size_t signed_message(const uint8_t *body, size_t body_len,
			     uint8_t msg[CONTEXT_LEN + EG_SEL_MAX_BODY_LEN])
{
	memcpy(msg,
	       body[OFF_VERSION] == EG_SEL_VERSION2 ? EG_SEL_V2_SIGN_CONTEXT : EG_SEL_SIGN_CONTEXT,
	       CONTEXT_LEN);
	memcpy(msg + CONTEXT_LEN, body, body_len);
	return CONTEXT_LEN + body_len;
}

size_t eg_sel_sign(const struct eg_selection *s, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
		   uint8_t *out)
{
	uint8_t msg[CONTEXT_LEN + EG_SEL_MAX_BODY_LEN];
	size_t body = eg_sel_encode_body(s, out);

	crypto_sign_detached(out + body, NULL, msg, signed_message(out, body, msg), sk);
	return body + crypto_sign_BYTES;
}

enum eg_sel_err eg_sel_decode(const uint8_t *b, size_t len, struct eg_selection *out)
{
	struct eg_selection s;

	size_t want;

	/* Framing first: no version is shorter than v1, and the version byte
	 * says the exact length. */
	if (len < EG_SEL_LEN)
		return EG_SEL_TRUNCATED;
	want = eg_sel_len(b[OFF_VERSION]);
	if (!want)
		return len > EG_SEL_MAX_LEN ? EG_SEL_TRAILING : EG_SEL_BAD_VERSION;
	if (len < want)
		return EG_SEL_TRUNCATED;
	if (len > want)
		return EG_SEL_TRAILING;
	if (b[OFF_RESERVED] != 0 || b[OFF_RESERVED + 1] != 0)
		return EG_SEL_RESERVED_BITS;
	if (b[OFF_SUBSTRATE] != EG_SUBSTRATE_FC_K8S && b[OFF_SUBSTRATE] != EG_SUBSTRATE_FC_HOST)
		return EG_SEL_BAD_SUBSTRATE;
	memset(&s, 0, sizeof(s));
	s.version = b[OFF_VERSION];
	s.id.substrate = b[OFF_SUBSTRATE];
	s.id.activation = eg_get_be32(b + OFF_ACTIVATION);
	memcpy(s.key_id, b + OFF_KEY_ID, EG_KEY_ID_LEN);
	memcpy(s.id.sandbox, b + OFF_SANDBOX, EG_ID_BYTES);
	memcpy(s.id.worker, b + OFF_WORKER, EG_ID_BYTES);
	memcpy(s.id.pod_uid, b + OFF_POD_UID, EG_ID_BYTES);
	s.id.generation = eg_get_be64(b + OFF_GENERATION);
	s.issued_at = eg_get_be64(b + OFF_ISSUED_AT);
	if (s.version == EG_SEL_VERSION2)
		memcpy(s.audience, b + OFF_AUDIENCE, EG_ID_BYTES);
	if (eg_id_is_zero(s.id.sandbox) || eg_id_is_zero(s.id.worker) ||
	    (s.version == EG_SEL_VERSION2 && eg_id_is_zero(s.audience)))
		return EG_SEL_ZERO_ID;
	if (s.id.generation > EG_GENERATION_MAX)
		return EG_SEL_BAD_GENERATION;
	*out = s;
	return EG_SEL_OK;
}

enum eg_sel_err eg_sel_verify(const uint8_t *buf, size_t len,
			      const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			      struct eg_selection *out)
{
	uint8_t msg[CONTEXT_LEN + EG_SEL_MAX_BODY_LEN], kid[EG_KEY_ID_LEN];
	struct eg_selection s;
	enum eg_sel_err err;
	size_t body;

	err = eg_sel_decode(buf, len, &s);
	if (err != EG_SEL_OK)
		return err;
	eg_key_id(pk, kid);
	if (memcmp(kid, s.key_id, EG_KEY_ID_LEN))
		return EG_SEL_WRONG_KEY;
	body = len - crypto_sign_BYTES;
	if (crypto_sign_verify_detached(buf + body, msg, signed_message(buf, body, msg), pk) != 0)
		return EG_SEL_BAD_SIGNATURE;
	*out = s;
	return EG_SEL_OK;
}

enum eg_sel_err eg_sel_verify_keyset(const uint8_t *buf, size_t len, const struct eg_keyset *ks,
				     struct eg_selection *out)
{
	const struct eg_key *k;
	struct eg_selection s;
	enum eg_sel_err err;

	err = eg_sel_decode(buf, len, &s);
	if (err != EG_SEL_OK)
		return err;
	k = eg_keyset_find(ks, s.key_id);
	if (!k)
		return EG_SEL_UNKNOWN_KEY;
	return eg_sel_verify(buf, len, k->pk, out);
}

enum eg_sel_err eg_sel_text_to_bin(const char *text, size_t len, uint8_t *raw, size_t *raw_len)
{
	uint8_t buf[EG_SEL_MAX_LEN + 1];
	size_t n;

	*raw_len = 0;
	switch (eg_cap_text_to_bin(text, len, buf, sizeof(buf), &n)) {
	case EG_DECODE_OK:
		break;
	case EG_DECODE_TRAILING:
		return EG_SEL_TRAILING;
	default:
		return EG_SEL_BAD_TEXT;
	}
	if (n < EG_SEL_LEN)
		return EG_SEL_TRUNCATED;
	if (n > EG_SEL_MAX_LEN)
		return EG_SEL_TRAILING;
	memcpy(raw, buf, n);
	*raw_len = n;
	return EG_SEL_OK;
}

size_t eg_sel_to_text(const uint8_t *raw, size_t len, char out[EG_SEL_TEXT_MAX])
{
	_Static_assert(
	    sodium_base64_ENCODED_LEN(EG_SEL_MAX_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING) <=
		EG_SEL_TEXT_MAX,
	    "EG_SEL_TEXT_MAX too small");
	if (len > EG_SEL_MAX_LEN) {
		out[0] = '\0';
		return 0;
	}
	sodium_bin2base64(out, EG_SEL_TEXT_MAX, raw, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return strlen(out);
}
