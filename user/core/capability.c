/* SPDX-License-Identifier: Apache-2.0 */
/* Capability v1 codec: canonical encoding and the strict decoder.
 * docs/capability.md is the specification; keep the two in step. */
#include <string.h>
#include <sodium.h>
#include "core/be.h"
#include "core/capability.h"
#include "core/ids.h"
#include "core/wire.h"
#include "execgate/verdict.h"

_Static_assert(EG_CAP_SIGN_CONTEXT_LEN == 23, "context includes its NUL");
_Static_assert(EG_CAP_SIGNED_LEN == 143, "signed message length");
_Static_assert(EG_CAP_LEN == 184, "token length");
_Static_assert(EG_OFF_EXPIRY + 8 == EG_CAP_BODY_LEN, "body layout");

static const char *const decode_err_names[EG_DECODE__COUNT] = {
    [EG_DECODE_OK] = "ok",
    [EG_DECODE_BAD_TEXT] = "bad-text",
    [EG_DECODE_TRUNCATED] = "truncated",
    [EG_DECODE_TRAILING] = "trailing-bytes",
    [EG_DECODE_BAD_VERSION] = "bad-version",
    [EG_DECODE_RESERVED_BITS] = "reserved-bits",
    [EG_DECODE_BAD_SUBSTRATE] = "bad-substrate",
    [EG_DECODE_BAD_SCOPE] = "bad-scope",
    [EG_DECODE_BAD_PORT] = "bad-port",
    [EG_DECODE_BAD_VALIDITY] = "bad-validity",
    [EG_DECODE_TTL_TOO_LONG] = "ttl-too-long",
    [EG_DECODE_ZERO_ID] = "zero-id",
    [EG_DECODE_BAD_GENERATION] = "bad-generation",
};

const char *eg_decode_err_name(enum eg_decode_err err)
{
	if ((unsigned)err >= EG_DECODE__COUNT)
		return "unknown";
	return decode_err_names[err];
}

/* The v1 body, field by field (docs/capability.md); the reserved bytes
 * are no field: zero on encode, checked by validate on decode. */
#define CAP_FIELD(kind, off, member) EG_WIRE_##kind(off, struct eg_capability, member)
static const struct eg_wire_field cap_fields[] = {
    CAP_FIELD(UINT, EG_OFF_VERSION, version),
    CAP_FIELD(UINT, EG_OFF_SUBSTRATE, id.substrate),
    CAP_FIELD(UINT, EG_OFF_PROTO, proto),
    CAP_FIELD(UINT, EG_OFF_PORT, port),
    CAP_FIELD(BYTES, EG_OFF_KEY_ID, key_id),
    CAP_FIELD(BYTES, EG_OFF_TOKEN_ID, token_id),
    CAP_FIELD(BYTES, EG_OFF_SANDBOX, id.sandbox),
    CAP_FIELD(BYTES, EG_OFF_WORKER, id.worker),
    CAP_FIELD(BYTES, EG_OFF_POD_UID, id.pod_uid),
    CAP_FIELD(UINT, EG_OFF_GENERATION, id.generation),
    CAP_FIELD(UINT, EG_OFF_ACTIVATION, id.activation),
    CAP_FIELD(UINT, EG_OFF_SCOPE, scope),
    CAP_FIELD(UINT, EG_OFF_ISSUED_AT, issued_at),
    CAP_FIELD(UINT, EG_OFF_NOT_BEFORE, not_before),
    CAP_FIELD(UINT, EG_OFF_EXPIRY, expiry),
};
#define CAP_NFIELDS (sizeof(cap_fields) / sizeof(cap_fields[0]))

void eg_cap_encode_body(const struct eg_capability *cap, uint8_t body[EG_CAP_BODY_LEN])
{
	memset(body, 0, EG_CAP_BODY_LEN);
	eg_wire_encode(cap_fields, CAP_NFIELDS, cap, body);
}

void eg_cap_signed_message(const uint8_t body[EG_CAP_BODY_LEN], uint8_t msg[EG_CAP_SIGNED_LEN])
{
	memcpy(msg, EG_CAP_SIGN_CONTEXT, EG_CAP_SIGN_CONTEXT_LEN);
	memcpy(msg + EG_CAP_SIGN_CONTEXT_LEN, body, EG_CAP_BODY_LEN);
}

void eg_cap_encode(const struct eg_capability *cap, uint8_t out[EG_CAP_LEN])
{
	eg_cap_encode_body(cap, out);
	memcpy(out + EG_OFF_SIGNATURE, cap->signature, EG_CAP_SIG_LEN);
}

/* The checks run in a fixed order so that one input always yields the same
 * reason: framing, version, reserved, enums, then cross-field rules. */
static enum eg_decode_err validate(const uint8_t *buf, const struct eg_capability *c)
{
	if (c->version != EG_CAP_VERSION)
		return EG_DECODE_BAD_VERSION;
	if (buf[EG_OFF_RESERVED0] != 0 || eg_get_be16(buf + EG_OFF_RESERVED1) != 0)
		return EG_DECODE_RESERVED_BITS;
	if (c->id.substrate != EG_SUBSTRATE_FC_K8S && c->id.substrate != EG_SUBSTRATE_FC_HOST)
		return EG_DECODE_BAD_SUBSTRATE;
	if (c->scope == 0 || (c->scope & ~EG_SCOPE_ALL) != 0)
		return EG_DECODE_BAD_SCOPE;
	if (c->proto != EG_PROTO_NONE && c->proto != EG_PROTO_TCP && c->proto != EG_PROTO_UDP)
		return EG_DECODE_BAD_PORT;
	if ((c->port == 0) != (c->proto == EG_PROTO_NONE))
		return EG_DECODE_BAD_PORT;
	if ((c->port != 0) != ((c->scope & EG_SCOPE_SERVICEPORT) != 0))
		return EG_DECODE_BAD_PORT;
	if (!(c->issued_at <= c->not_before && c->not_before < c->expiry))
		return EG_DECODE_BAD_VALIDITY;
	if (c->expiry - c->issued_at > EG_CAP_MAX_TTL)
		return EG_DECODE_TTL_TOO_LONG;
	if (eg_id_is_zero(c->id.sandbox) || eg_id_is_zero(c->id.worker) ||
	    eg_id_is_zero(c->token_id))
		return EG_DECODE_ZERO_ID;
	if (c->id.generation > EG_GENERATION_MAX)
		return EG_DECODE_BAD_GENERATION;
	return EG_DECODE_OK;
}

enum eg_decode_err eg_cap_decode(const uint8_t *buf, size_t len, struct eg_capability *out)
{
	struct eg_capability c;
	enum eg_decode_err err;

	memset(out, 0, sizeof(*out));
	if (len < EG_CAP_LEN)
		return EG_DECODE_TRUNCATED;
	if (len > EG_CAP_LEN)
		return EG_DECODE_TRAILING;

	memset(&c, 0, sizeof(c));
	eg_wire_decode(cap_fields, CAP_NFIELDS, buf, &c);
	memcpy(c.signature, buf + EG_OFF_SIGNATURE, EG_CAP_SIG_LEN);

	err = validate(buf, &c);
	if (err == EG_DECODE_OK)
		*out = c;
	return err;
}

static bool is_b64url_char(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_';
}

enum eg_decode_err eg_cap_text_to_bin(const char *text, size_t len, uint8_t *buf, size_t size,
				      size_t *bin_len)
{
	size_t want;

	*bin_len = 0;
	/* Unpadded base64 never leaves a single character in the last group. */
	if (len % 4 == 1)
		return EG_DECODE_BAD_TEXT;
	for (size_t i = 0; i < len; i++)
		if (!is_b64url_char((unsigned char)text[i]))
			return EG_DECODE_BAD_TEXT;
	want = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);
	if (want > size)
		return EG_DECODE_TRAILING;

	/* ignore == NULL and b64_end == NULL: every character must be consumed;
	 * libsodium also refuses non-zero bits left over in the last group, so
	 * a byte string has exactly one text form. */
	if (sodium_base642bin(buf, size, text, len, NULL, bin_len, NULL,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
		*bin_len = 0;
		return EG_DECODE_BAD_TEXT;
	}
	return EG_DECODE_OK;
}

enum eg_decode_err eg_cap_decode_text(const char *text, size_t len, struct eg_capability *out,
				      uint8_t raw[EG_CAP_LEN])
{
	uint8_t buf[EG_CAP_LEN + 1];
	size_t bin_len;
	enum eg_decode_err err;

	memset(out, 0, sizeof(*out));
	if (raw)
		memset(raw, 0, EG_CAP_LEN);
	err = eg_cap_text_to_bin(text, len, buf, sizeof(buf), &bin_len);
	if (err != EG_DECODE_OK)
		return err;
	err = eg_cap_decode(buf, bin_len, out);
	if (err == EG_DECODE_OK && raw)
		memcpy(raw, buf, EG_CAP_LEN);
	return err;
}

size_t eg_b64url_encode(const uint8_t *raw, size_t len, char *out, size_t size)
{
	sodium_bin2base64(out, size, raw, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return strlen(out);
}

size_t eg_cap_to_text(const uint8_t raw[EG_CAP_LEN], char out[EG_CAP_TEXT_MAX])
{
	_Static_assert(sodium_base64_ENCODED_LEN(
			   EG_CAP_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING) <= EG_CAP_TEXT_MAX,
		       "EG_CAP_TEXT_MAX too small");
	return eg_b64url_encode(raw, EG_CAP_LEN, out, EG_CAP_TEXT_MAX);
}

const char *eg_decode_err_text(int decode_err)
{
	return eg_decode_err_name((enum eg_decode_err)decode_err);
}
