/* SPDX-License-Identifier: Apache-2.0 */
/* Signed verdicts: encode, sign, strict decode, verify. The decoder checks
 * framing, then every field, before the signature, and names the first
 * problem; a verdict that fails any check is worth nothing to a route
 * cache, so there is no lenient path. */
#include <string.h>
#include "core/wire.h"
#include "core/keyset.h"
#include "core/signed_verdict.h"
#include "execgate/verdict.h"

enum {
	OFF_VERSION = 0,
	OFF_VERDICT = 1,
	OFF_REASON = 2,
	OFF_FLAGS = 3,
	OFF_KEY_ID = 4,
	OFF_TOKEN_ID = 12,
	OFF_SANDBOX = 28,
	OFF_WORKER = 44,
	OFF_GENERATION = 60,
	OFF_ACTIVATION = 68,
	OFF_ISSUED_AT = 72,
	OFF_RESERVED = 80,
	OFF_SIGNATURE = EG_SV_BODY_LEN,
};
_Static_assert(OFF_RESERVED + 4 == EG_SV_BODY_LEN, "body layout");
_Static_assert(EG_SV_LEN == 148, "signed verdict length");

#define CONTEXT_LEN sizeof(EG_SV_SIGN_CONTEXT) /* with its NUL, as for capabilities */

static const char *const names[EG_SV__COUNT] = {
    [EG_SV_OK] = "ok",
    [EG_SV_BAD_TEXT] = "bad-text",
    [EG_SV_BAD_LENGTH] = "bad-length",
    [EG_SV_BAD_VERSION] = "bad-version",
    [EG_SV_BAD_VERDICT] = "bad-verdict",
    [EG_SV_BAD_REASON] = "bad-reason",
    [EG_SV_BAD_FLAGS] = "bad-flags",
    [EG_SV_BAD_RECORD] = "bad-record",
    [EG_SV_BAD_RESERVED] = "bad-reserved",
    [EG_SV_ZERO_ID] = "zero-id",
    [EG_SV_WRONG_KEY] = "wrong-key",
    [EG_SV_BAD_SIGNATURE] = "bad-signature",
};

const char *eg_sv_err_name(enum eg_sv_err err)
{
	return (unsigned)err < EG_SV__COUNT ? names[err] : "unknown";
}

/* The v1 body but its flags byte (has_record) and the reserved bytes. */
#define SV_FIELD(kind, off, member) EG_WIRE_##kind(off, struct eg_signed_verdict, member)
static const struct eg_wire_field sv_fields[] = {
    SV_FIELD(UINT, OFF_VERSION, version),	SV_FIELD(UINT, OFF_VERDICT, verdict),
    SV_FIELD(UINT, OFF_REASON, reason),		SV_FIELD(BYTES, OFF_KEY_ID, node_key_id),
    SV_FIELD(BYTES, OFF_TOKEN_ID, token_id),	SV_FIELD(BYTES, OFF_SANDBOX, sandbox),
    SV_FIELD(BYTES, OFF_WORKER, worker),	SV_FIELD(UINT, OFF_GENERATION, generation),
    SV_FIELD(UINT, OFF_ACTIVATION, activation), SV_FIELD(UINT, OFF_ISSUED_AT, issued_at),
};
#define SV_NFIELDS (sizeof(sv_fields) / sizeof(sv_fields[0]))

static void encode_body(const struct eg_signed_verdict *v, uint8_t *b)
{
	memset(b, 0, EG_SV_BODY_LEN);
	eg_wire_encode(sv_fields, SV_NFIELDS, v, b);
	b[OFF_FLAGS] = v->has_record ? EG_SV_FLAG_RECORD : 0;
}

static void signed_message(const uint8_t *body, uint8_t msg[CONTEXT_LEN + EG_SV_BODY_LEN])
{
	memcpy(msg, EG_SV_SIGN_CONTEXT, CONTEXT_LEN);
	memcpy(msg + CONTEXT_LEN, body, EG_SV_BODY_LEN);
}

void eg_sv_sign(const struct eg_signed_verdict *v, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
		uint8_t out[EG_SV_LEN])
{
	uint8_t msg[CONTEXT_LEN + EG_SV_BODY_LEN];

	encode_body(v, out);
	signed_message(out, msg);
	crypto_sign_detached(out + OFF_SIGNATURE, NULL, msg, sizeof(msg), sk);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

enum eg_sv_err eg_sv_decode(const uint8_t *b, size_t len, struct eg_signed_verdict *out)
{
	struct eg_signed_verdict v;

	if (len != EG_SV_LEN)
		return EG_SV_BAD_LENGTH;
	if (b[OFF_VERSION] != EG_SV_VERSION)
		return EG_SV_BAD_VERSION;
	if (b[OFF_VERDICT] != EG_REFRESH_ROUTE && b[OFF_VERDICT] != EG_DENY)
		return EG_SV_BAD_VERDICT;
	if (b[OFF_REASON] == EG_REASON_OK || b[OFF_REASON] >= EG_REASON__COUNT ||
	    eg_reason_verdict((enum eg_reason)b[OFF_REASON]) != b[OFF_VERDICT])
		return EG_SV_BAD_REASON;
	if (b[OFF_FLAGS] & ~EG_SV_FLAG_RECORD)
		return EG_SV_BAD_FLAGS;
	memset(&v, 0, sizeof(v));
	eg_wire_decode(sv_fields, SV_NFIELDS, b, &v);
	v.has_record = b[OFF_FLAGS] & EG_SV_FLAG_RECORD;
	if ((!v.has_record && (v.generation || v.activation)) || v.generation > EG_GENERATION_MAX)
		return EG_SV_BAD_RECORD;
	if (!all_zero(b + OFF_RESERVED, 4))
		return EG_SV_BAD_RESERVED;
	if (all_zero(v.token_id, EG_ID_BYTES) || all_zero(v.sandbox, EG_ID_BYTES) ||
	    all_zero(v.worker, EG_ID_BYTES))
		return EG_SV_ZERO_ID;
	*out = v;
	return EG_SV_OK;
}

enum eg_sv_err eg_sv_verify(const uint8_t *buf, size_t len,
			    const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			    struct eg_signed_verdict *out)
{
	uint8_t msg[CONTEXT_LEN + EG_SV_BODY_LEN], kid[EG_KEY_ID_LEN];
	struct eg_signed_verdict v;
	enum eg_sv_err err;

	err = eg_sv_decode(buf, len, &v);
	if (err != EG_SV_OK)
		return err;
	eg_key_id(pk, kid);
	if (memcmp(kid, v.node_key_id, EG_KEY_ID_LEN))
		return EG_SV_WRONG_KEY;
	signed_message(buf, msg);
	if (crypto_sign_verify_detached(buf + OFF_SIGNATURE, msg, sizeof(msg), pk) != 0)
		return EG_SV_BAD_SIGNATURE;
	*out = v;
	return EG_SV_OK;
}

enum eg_sv_err eg_sv_verify_text(const char *text, size_t len,
				 const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
				 struct eg_signed_verdict *out)
{
	uint8_t buf[EG_SIGNED_VERDICT_TEXT_MAX];
	size_t n;

	/* The capability's base64url reader: same alphabet, same strictness;
	 * a longer text decodes to more bytes and fails the length check. */
	if (eg_cap_text_to_bin(text, len, buf, sizeof(buf), &n) != EG_DECODE_OK)
		return EG_SV_BAD_TEXT;
	return eg_sv_verify(buf, n, pk, out);
}

size_t eg_sv_to_text(const uint8_t raw[EG_SV_LEN], char out[EG_SIGNED_VERDICT_TEXT_MAX])
{
	_Static_assert(
	    sodium_base64_ENCODED_LEN(EG_SV_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING) <=
		EG_SIGNED_VERDICT_TEXT_MAX,
	    "EG_SIGNED_VERDICT_TEXT_MAX too small");
	return eg_b64url_encode(raw, EG_SV_LEN, out, EG_SIGNED_VERDICT_TEXT_MAX);
}
