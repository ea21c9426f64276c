/* SPDX-License-Identifier: Apache-2.0 */
/* Capability v1: the binary, canonical token the control plane signs.
 * Byte layout and rules: docs/capability.md. Pure code, no I/O. */
#ifndef EXECGATE_CORE_CAPABILITY_H
#define EXECGATE_CORE_CAPABILITY_H

#include <stddef.h>
#include <stdint.h>
#include "core/identity.h"
#include "execgate/text.h" /* enum eg_proto */
#include "execgate/sizes.h"

#define EG_CAP_VERSION	1
#define EG_CAP_BODY_LEN 120 /* everything before the signature */
#define EG_CAP_SIG_LEN	64
#define EG_CAP_LEN	(EG_CAP_BODY_LEN + EG_CAP_SIG_LEN)
#define EG_CAP_TEXT_MAX 256 /* base64url, unpadded, of EG_CAP_LEN bytes + NUL */
#define EG_CAP_MAX_TTL	120 /* seconds, expiry - issued_at */
#define EG_CLOCK_SKEW	15  /* seconds, applied to expiry and not-before */
#define EG_KEY_ID_LEN	8

/* Domain separation: what is signed is this context (with its NUL) followed
 * by the EG_CAP_BODY_LEN body bytes. */
#define EG_CAP_SIGN_CONTEXT	"execgate capability v1"
#define EG_CAP_SIGN_CONTEXT_LEN (sizeof(EG_CAP_SIGN_CONTEXT))
#define EG_CAP_SIGNED_LEN	(EG_CAP_SIGN_CONTEXT_LEN + EG_CAP_BODY_LEN)

/* Byte offsets of the v1 body fields; integers are big-endian. */
enum eg_cap_offset {
	EG_OFF_VERSION = 0,
	EG_OFF_SUBSTRATE = 1,
	EG_OFF_PROTO = 2,
	EG_OFF_RESERVED0 = 3, /* u8, zero */
	EG_OFF_PORT = 4,
	EG_OFF_RESERVED1 = 6, /* u16, zero */
	EG_OFF_KEY_ID = 8,
	EG_OFF_TOKEN_ID = 16,
	EG_OFF_SANDBOX = 32,
	EG_OFF_WORKER = 48,
	EG_OFF_POD_UID = 64,
	EG_OFF_GENERATION = 80,
	EG_OFF_ACTIVATION = 88,
	EG_OFF_SCOPE = 92,
	EG_OFF_ISSUED_AT = 96,
	EG_OFF_NOT_BEFORE = 104,
	EG_OFF_EXPIRY = 112,
	EG_OFF_SIGNATURE = EG_CAP_BODY_LEN,
};

enum eg_substrate {
	EG_SUBSTRATE_FC_K8S = 1,  /* "firecracker-k8s" */
	EG_SUBSTRATE_FC_HOST = 2, /* "firecracker-host" (default) */
};

/* Access scope bits. Unknown bits are reserved and rejected. */
enum eg_scope {
	EG_SCOPE_FILE_READ = 1u << 0,
	EG_SCOPE_FILE_WRITE = 1u << 1,
	EG_SCOPE_EXEC = 1u << 2,
	EG_SCOPE_TERMINAL = 1u << 3,
	EG_SCOPE_WATCH = 1u << 4,
	EG_SCOPE_CONTROL = 1u << 5,
	EG_SCOPE_SERVICEPORT = 1u << 6,
};
#define EG_SCOPE_ALL 0x7fu

struct eg_capability {
	uint8_t version;
	uint8_t proto; /* enum eg_proto; NONE iff port == 0 */
	uint16_t port;
	uint8_t key_id[EG_KEY_ID_LEN];
	uint8_t token_id[EG_ID_BYTES];
	struct eg_identity id; /* the execution it is bound to */
	uint32_t scope;	       /* enum eg_scope bits */
	uint64_t issued_at;    /* unix seconds */
	uint64_t not_before;
	uint64_t expiry;
	uint8_t signature[EG_CAP_SIG_LEN];
};

enum eg_decode_err {
	EG_DECODE_OK = 0,
	EG_DECODE_BAD_TEXT,	  /* not unpadded base64url */
	EG_DECODE_TRUNCATED,	  /* fewer than EG_CAP_LEN bytes */
	EG_DECODE_TRAILING,	  /* more than EG_CAP_LEN bytes */
	EG_DECODE_BAD_VERSION,	  /* version byte is not EG_CAP_VERSION */
	EG_DECODE_RESERVED_BITS,  /* a reserved byte or bit is non-zero */
	EG_DECODE_BAD_SUBSTRATE,  /* substrate not in enum eg_substrate */
	EG_DECODE_BAD_SCOPE,	  /* zero scope or unknown scope bits */
	EG_DECODE_BAD_PORT,	  /* port/protocol/serviceport-scope inconsistent */
	EG_DECODE_BAD_VALIDITY,	  /* issued_at <= not_before < expiry violated */
	EG_DECODE_TTL_TOO_LONG,	  /* expiry - issued_at > EG_CAP_MAX_TTL */
	EG_DECODE_ZERO_ID,	  /* all-zero sandbox, worker or token id */
	EG_DECODE_BAD_GENERATION, /* generation above EG_GENERATION_MAX */
	EG_DECODE__COUNT,
};

const char *eg_decode_err_name(enum eg_decode_err err);

/* Strict decode of exactly len bytes. Never reads past buf[len-1]. */
enum eg_decode_err eg_cap_decode(const uint8_t *buf, size_t len, struct eg_capability *out);
/* Text form -> bytes, without interpreting them: EG_DECODE_OK,
 * EG_DECODE_BAD_TEXT (not exactly unpadded base64url: other characters,
 * '=', whitespace, non-zero trailing bits) or EG_DECODE_TRAILING (would not
 * fit in size bytes). */
enum eg_decode_err eg_cap_text_to_bin(const char *text, size_t len, uint8_t *buf, size_t size,
				      size_t *bin_len);
/* The text form of any byte string: unpadded base64url, NUL-terminated in
 * out (size at least libsodium's sodium_base64_ENCODED_LEN(len,
 * sodium_base64_VARIANT_URLSAFE_NO_PADDING)); returns the length without
 * the NUL. eg_cap_text_to_bin reads it back. */
size_t eg_b64url_encode(const uint8_t *raw, size_t len, char *out, size_t size);
/* Decodes the text form (base64url, unpadded, optional trailing '\n' stripped
 * by the caller) into raw bytes, then eg_cap_decode. raw may be NULL. */
enum eg_decode_err eg_cap_decode_text(const char *text, size_t len, struct eg_capability *out,
				      uint8_t raw[EG_CAP_LEN]);

/* Canonical encoding of every field but the signature into body. */
void eg_cap_encode_body(const struct eg_capability *cap, uint8_t body[EG_CAP_BODY_LEN]);
/* The exact message the signature covers: context || body. */
void eg_cap_signed_message(const uint8_t body[EG_CAP_BODY_LEN], uint8_t msg[EG_CAP_SIGNED_LEN]);
/* body || signature. */
void eg_cap_encode(const struct eg_capability *cap, uint8_t out[EG_CAP_LEN]);
/* Text form of raw token bytes; returns the length written (without NUL). */
size_t eg_cap_to_text(const uint8_t raw[EG_CAP_LEN], char out[EG_CAP_TEXT_MAX]);

#endif
