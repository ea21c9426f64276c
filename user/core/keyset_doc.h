/* SPDX-License-Identifier: Apache-2.0 */
/* Key sets v1 and v2: the control plane's public keys as one versioned document,
 * signed by a root key that each worker pins locally. Codec, verification
 * and the pure apply rule; nothing here touches a worker's live key set
 * (core/keyset.h). Pure code, no I/O.
 *
 * Wire format v1 (docs/fleet.md, "Key set v1"), big-endian, canonical,
 * strictly decoded; its length follows from its key count n:
 *
 *   off     len  field
 *     0       1  version            1
 *     1       1  reserved           zero
 *     2       2  count n            1..EG_KEYSET_MAX (64)
 *     4       8  root key id        BLAKE2b-256(root public key)[0..8]
 *    12       8  key-set version    1..2^53-1
 *    20       8  issued at          unix seconds
 *    28   40 n   n entries          key id (8) || Ed25519 public key (32),
 *                                   key ids strictly ascending
 *    28+40n  64  Ed25519 signature  over "execgate key set v1\0" || the
 *                                   bytes before it
 *
 * v2 (version byte 2) adds a signed expiry after issued_at, and is signed
 * under "execgate key set v2\0":
 *
 *    28       8  expires at         unix seconds, above issued at
 *    36   40 n   n entries
 *    36+40n  64  Ed25519 signature
 */
#ifndef EXECGATE_CORE_KEYSET_DOC_H
#define EXECGATE_CORE_KEYSET_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/keyset.h"

#define EG_KSD_VERSION	   1
#define EG_KSD_VERSION2	   2
#define EG_KSD_HEAD_LEN	   28
#define EG_KSD_V2_HEAD_LEN 36
#define EG_KSD_ENTRY_LEN   (EG_KEY_ID_LEN + crypto_sign_PUBLICKEYBYTES)
#define EG_KSD_LEN(n)	   (EG_KSD_HEAD_LEN + EG_KSD_ENTRY_LEN * (size_t)(n) + crypto_sign_BYTES)
#define EG_KSD_V2_LEN(n)   (EG_KSD_V2_HEAD_LEN + EG_KSD_ENTRY_LEN * (size_t)(n) + crypto_sign_BYTES)
#define EG_KSD_V1_MAX_LEN  EG_KSD_LEN(EG_KEYSET_MAX)
#define EG_KSD_MAX_LEN	   EG_KSD_V2_LEN(EG_KEYSET_MAX)
#define EG_KSD_TEXT_MAX	   3548 /* base64url, unpadded, of EG_KSD_MAX_LEN bytes + NUL */
#define EG_KSD_VERSION_MAX ((1ULL << 53) - 1) /* exact in a JSON number */
/* Its own context: a root signature over a key set can never pass for a
 * selection's, a capability's or a signed verdict's, nor the reverse. */
#define EG_KSD_SIGN_CONTEXT    "execgate key set v1"
#define EG_KSD_V2_SIGN_CONTEXT "execgate key set v2"

struct eg_keyset_doc {
	uint8_t version;
	uint8_t root_key_id[EG_KEY_ID_LEN];
	uint64_t keyset_version;
	uint64_t issued_at;
	uint64_t expires_at; /* v2; 0 in a v1, which never expires */
	size_t n;
	struct eg_key keys[EG_KEYSET_MAX]; /* sorted by kid once decoded */
};

/* Stable: the names (eg_ksd_err_name) appear in CLI output and logs. */
enum eg_ksd_err {
	EG_KSD_OK = 0,
	EG_KSD_BAD_TEXT,	/* not unpadded base64url */
	EG_KSD_TRUNCATED,	/* fewer bytes than the count says */
	EG_KSD_TRAILING,	/* more bytes than the count says */
	EG_KSD_BAD_VERSION,	/* version byte is not 1 or 2 */
	EG_KSD_RESERVED_BITS,	/* the reserved byte is not zero */
	EG_KSD_BAD_COUNT,	/* no key, or more than EG_KEYSET_MAX */
	EG_KSD_BAD_SET_VERSION, /* key-set version 0 or above EG_KSD_VERSION_MAX */
	EG_KSD_BAD_KEY,		/* a public key fails eg_key_check */
	EG_KSD_KEY_ID_MISMATCH, /* an entry's key id is not its key's */
	EG_KSD_NOT_SORTED,	/* key ids not strictly ascending (or a duplicate) */
	EG_KSD_UNKNOWN_KEY,	/* root key id not among the pinned roots */
	EG_KSD_WRONG_KEY,	/* root key id is not the given root's */
	EG_KSD_BAD_SIGNATURE,	/* signature does not verify */
	EG_KSD_BAD_EXPIRY,	/* v2: expires_at not above issued_at */
	EG_KSD__COUNT,
};

const char *eg_ksd_err_name(enum eg_ksd_err err);

/* Sorts a copy of d's keys, encodes it (d->root_key_id must be the key id
 * of sk's public half) and signs it with the root secret key sk. The
 * result is checked with eg_ksd_decode: anything but EG_KSD_OK (no key,
 * too many, a duplicate, a bad key) and nothing is written to out but
 * zeros. *len gets the length (EG_KSD_LEN(d->n)). */
enum eg_ksd_err eg_ksd_sign(const struct eg_keyset_doc *d,
			    const uint8_t sk[crypto_sign_SECRETKEYBYTES],
			    uint8_t out[EG_KSD_MAX_LEN], size_t *len);
/* Strict decode of exactly len bytes, without the signature check. out is
 * written only on EG_KSD_OK. Never reads past buf[len-1]. */
enum eg_ksd_err eg_ksd_decode(const uint8_t *buf, size_t len, struct eg_keyset_doc *out);
/* Decode, then verify against one root public key. */
enum eg_ksd_err eg_ksd_verify(const uint8_t *buf, size_t len,
			      const uint8_t root_pk[crypto_sign_PUBLICKEYBYTES],
			      struct eg_keyset_doc *out);
/* Decode, then verify against the pinned root of roots the document names. */
enum eg_ksd_err eg_ksd_verify_roots(const uint8_t *buf, size_t len, const struct eg_keyset *roots,
				    struct eg_keyset_doc *out);
/* Text form -> bytes (the capability's strict base64url reader). Framing
 * only: the length is checked by eg_ksd_decode. */
enum eg_ksd_err eg_ksd_text_to_bin(const char *text, size_t len, uint8_t raw[EG_KSD_MAX_LEN],
				   size_t *raw_len);
/* Text form of raw bytes; returns the length written (without NUL). */
size_t eg_ksd_to_text(const uint8_t *raw, size_t len, char out[EG_KSD_TEXT_MAX]);

/* The apply rule for a verified document, given the version applied now
 * (0: none yet) and the keys in force. Only a higher version is applied;
 * an equal one is a replay and an older one a rollback, both refused. */
enum eg_ksd_decision {
	EG_KSD_APPLY = 0,
	EG_KSD_REFUSE_EQUAL,
	EG_KSD_REFUSE_OLDER,
	EG_KSD_REFUSE_EXPIRED, /* eg_ksd_decide_at: its signed expiry has passed */
	EG_KSD_REFUSE_FLOOR,   /* eg_ksd_decide_at: below the version floor */
};
const char *eg_ksd_decision_name(enum eg_ksd_decision d);
/* On EG_KSD_APPLY, withdrawn gets the key ids of current that doc does not
 * hold (same key id and same public key), in current's order: each is
 * withdrawn at once. On a refusal *n_withdrawn is 0. */
enum eg_ksd_decision eg_ksd_decide(uint64_t applied_version, const struct eg_keyset *current,
				   const struct eg_keyset_doc *doc,
				   uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN],
				   size_t *n_withdrawn);
/* The worker's whole rule: first freshness (a v2 whose expires_at is at or
 * below now: refuse-expired), then the floor (a version below floor, the
 * highest version the worker ever applied or was given, and not below the
 * applied one, which is refuse-older: refuse-floor; a
 * re-created state dir keeps no applied version, the operator's
 * keyset_min_version gives it), then eg_ksd_decide. */
enum eg_ksd_decision eg_ksd_decide_at(uint64_t applied_version, uint64_t floor, uint64_t now,
				      const struct eg_keyset *current,
				      const struct eg_keyset_doc *doc,
				      uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN],
				      size_t *n_withdrawn);

#endif
