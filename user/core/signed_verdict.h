/* SPDX-License-Identifier: Apache-2.0 */
/* Worker-signed verdicts (docs/design.md §5: only an authenticated refresh signal
 * may trigger route reconciliation). A worker signs its refresh-route and
 * deny verdicts with its own node key, so a front end can tell a real
 * "this worker runs another execution" from a forged or replayed one.
 *
 * Wire format v1 (docs/capability.md, "Signed verdicts"): a fixed 148-byte
 * string, big-endian, canonical, strictly decoded like a capability:
 *
 *   off len field
 *     0   1 version            1
 *     1   1 verdict            1 refresh-route, 2 deny (allow is never signed)
 *     2   1 reason             enum eg_reason, consistent with the verdict
 *     3   1 flags              bit 0: the worker has a record; others zero
 *     4   8 node key id        BLAKE2b-256(node public key)[0..8]
 *    12  16 token id           of the capability judged
 *    28  16 sandbox            the capability's sandbox
 *    44  16 worker id          the signing worker's configured id
 *    60   8 generation         installed here (0 without a record)
 *    68   4 activation         installed here (0 without a record)
 *    72   8 issued at          unix seconds, the worker's clock
 *    80   4 reserved           zero
 *    84  64 Ed25519 signature  over "execgate signed verdict v1\0" || bytes 0..84
 */
#ifndef EXECGATE_CORE_SIGNED_VERDICT_H
#define EXECGATE_CORE_SIGNED_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/capability.h"
#include "core/comparator.h"
#include "execgate/sizes.h" /* EG_SIGNED_VERDICT_TEXT_MAX: the text form */

#define EG_SV_VERSION	   1
#define EG_SV_BODY_LEN	   84
#define EG_SV_LEN	   (EG_SV_BODY_LEN + crypto_sign_BYTES)
#define EG_SV_FLAG_RECORD  0x01u
#define EG_SV_SIGN_CONTEXT "execgate signed verdict v1"

struct eg_signed_verdict {
	uint8_t version;
	uint8_t verdict; /* enum eg_verdict: EG_REFRESH_ROUTE or EG_DENY */
	uint8_t reason;	 /* enum eg_reason */
	bool has_record;
	uint8_t node_key_id[EG_KEY_ID_LEN];
	uint8_t token_id[EG_ID_BYTES];
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint64_t generation;
	uint32_t activation;
	uint64_t issued_at;
};

enum eg_sv_err {
	EG_SV_OK = 0,
	EG_SV_BAD_TEXT,	     /* not base64url */
	EG_SV_BAD_LENGTH,    /* not exactly EG_SV_LEN bytes (truncated, trailing bytes) */
	EG_SV_BAD_VERSION,   /* version byte is not EG_SV_VERSION */
	EG_SV_BAD_VERDICT,   /* allow, or not a verdict */
	EG_SV_BAD_REASON,    /* unknown, or not the verdict's reason */
	EG_SV_BAD_FLAGS,     /* reserved flag bits set */
	EG_SV_BAD_RECORD,    /* no record, yet a generation or activation; or a generation
			      * above EG_GENERATION_MAX */
	EG_SV_BAD_RESERVED,  /* reserved bytes not zero */
	EG_SV_ZERO_ID,	     /* zero token id, sandbox or worker */
	EG_SV_WRONG_KEY,     /* signed under another node key id */
	EG_SV_BAD_SIGNATURE, /* signature does not verify */
	EG_SV__COUNT,
};

const char *eg_sv_err_name(enum eg_sv_err err);

/* Encodes and signs with the node's secret key (64-byte libsodium form). */
void eg_sv_sign(const struct eg_signed_verdict *v, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
		uint8_t out[EG_SV_LEN]);
/* Strict decode, without the signature check. */
enum eg_sv_err eg_sv_decode(const uint8_t *buf, size_t len, struct eg_signed_verdict *out);
/* Decode and verify against the node public key; out is written only on
 * EG_SV_OK. */
enum eg_sv_err eg_sv_verify(const uint8_t *buf, size_t len,
			    const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			    struct eg_signed_verdict *out);
/* The same from base64url text. */
enum eg_sv_err eg_sv_verify_text(const char *text, size_t len,
				 const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
				 struct eg_signed_verdict *out);
size_t eg_sv_to_text(const uint8_t raw[EG_SV_LEN], char out[EG_SIGNED_VERDICT_TEXT_MAX]);

#endif
