/* SPDX-License-Identifier: Apache-2.0 */
/* Selections v1 and v2: the control plane's signed decision for one
 * sandbox, the execution identity a worker must run (or, for any other
 * worker, must retire). Pure code, no I/O.
 *
 * Wire format (docs/fleet.md, "Selection v1", "Selection v2"): a fixed
 * string, big-endian, canonical, strictly decoded like a capability:
 *
 *   off len field
 *     0   1 version            1 or 2
 *     1   1 substrate          1 firecracker-k8s, 2 firecracker-host
 *     2   2 reserved           zero
 *     4   4 activation         attempt of the generation, 0..2^32-1
 *     8   8 key id             BLAKE2b-256(control-plane public key)[0..8]
 *    16  16 sandbox            UUID, non-zero
 *    32  16 worker             UUID, non-zero
 *    48  16 pod UID            UUID, all-zero outside Kubernetes
 *    64   8 generation         0..2^53-1
 *    72   8 issued at          unix seconds
 *   v1: 80  64 Ed25519 signature over "execgate selection v1\0" || bytes 0..80
 *   v2: 80  16 audience        UUID, non-zero: the worker whose etcd prefix
 *                              this copy is addressed to
 *       96  64 Ed25519 signature over "execgate selection v2\0" || bytes 0..96
 */
#ifndef EXECGATE_CORE_SELECTION_H
#define EXECGATE_CORE_SELECTION_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/capability.h"
#include "core/keyset.h"

#define EG_SEL_VERSION	    1 /* v1: no audience */
#define EG_SEL_VERSION2	    2 /* v2: an audience */
#define EG_SEL_BODY_LEN	    80
#define EG_SEL_LEN	    (EG_SEL_BODY_LEN + crypto_sign_BYTES) /* v1: 144 */
#define EG_SEL_V2_BODY_LEN  96
#define EG_SEL_V2_LEN	    (EG_SEL_V2_BODY_LEN + crypto_sign_BYTES) /* v2: 160 */
#define EG_SEL_MAX_BODY_LEN EG_SEL_V2_BODY_LEN
#define EG_SEL_MAX_LEN	    EG_SEL_V2_LEN
#define EG_SEL_TEXT_MAX	    256 /* base64url, unpadded, + NUL */
/* Their own contexts: a selection's signature can never pass for a
 * capability's, a key set's or a signed verdict's, nor a v1 for a v2. */
#define EG_SEL_SIGN_CONTEXT    "execgate selection v1"
#define EG_SEL_V2_SIGN_CONTEXT "execgate selection v2"

struct eg_selection {
	uint8_t version;
	uint8_t key_id[EG_KEY_ID_LEN];
	struct eg_identity id; /* the execution it selects */
	uint64_t issued_at;
	uint8_t audience[EG_ID_BYTES]; /* v2; all-zero in a v1 */
};

/* Stable: the names (eg_sel_err_name) appear in CLI output and logs. */
enum eg_sel_err {
	EG_SEL_OK = 0,
	EG_SEL_BAD_TEXT,       /* not unpadded base64url */
	EG_SEL_TRUNCATED,      /* fewer bytes than the version's length */
	EG_SEL_TRAILING,       /* more bytes than the version's length */
	EG_SEL_BAD_VERSION,    /* version byte is not 1 or 2 */
	EG_SEL_RESERVED_BITS,  /* the reserved bytes are not zero */
	EG_SEL_BAD_SUBSTRATE,  /* substrate not in enum eg_substrate */
	EG_SEL_ZERO_ID,	       /* all-zero sandbox, worker or (v2) audience */
	EG_SEL_BAD_GENERATION, /* generation above EG_GENERATION_MAX */
	EG_SEL_UNKNOWN_KEY,    /* key id not in the trusted set */
	EG_SEL_WRONG_KEY,      /* key id is not the given public key's */
	EG_SEL_BAD_SIGNATURE,  /* signature does not verify */
	EG_SEL__COUNT,
};

const char *eg_sel_err_name(enum eg_sel_err err);

/* The length of a selection of version v (0 for an unknown one). */
size_t eg_sel_len(uint8_t version);
/* Canonical body of s by s->version (EG_SEL_BODY_LEN or
 * EG_SEL_V2_BODY_LEN bytes into body, which holds EG_SEL_MAX_BODY_LEN);
 * returns its length. */
size_t eg_sel_encode_body(const struct eg_selection *s, uint8_t *body);
/* Encodes s (by s->version) and signs it with sk (libsodium's 64-byte
 * form) into out (EG_SEL_MAX_LEN bytes); s->key_id must already be the key
 * id of sk's public half. Returns the length written. */
size_t eg_sel_sign(const struct eg_selection *s, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
		   uint8_t *out);
/* Strict decode of exactly len bytes, without the signature check. out is
 * written only on EG_SEL_OK. Never reads past buf[len-1]. Framing: below
 * EG_SEL_LEN bytes is EG_SEL_TRUNCATED whatever the version; then the
 * version byte, then the version's exact length. */
enum eg_sel_err eg_sel_decode(const uint8_t *buf, size_t len, struct eg_selection *out);
/* Decode, then verify against one public key: its key id must be the
 * selection's. out is written only on EG_SEL_OK. */
enum eg_sel_err eg_sel_verify(const uint8_t *buf, size_t len,
			      const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			      struct eg_selection *out);
/* Decode, then verify against the key of ks that the selection names. */
enum eg_sel_err eg_sel_verify_keyset(const uint8_t *buf, size_t len, const struct eg_keyset *ks,
				     struct eg_selection *out);
/* Text form -> bytes (the capability's strict base64url reader) into raw
 * (EG_SEL_MAX_LEN bytes), *raw_len the length; a text of fewer than
 * EG_SEL_LEN or more than EG_SEL_MAX_LEN bytes is EG_SEL_TRUNCATED or
 * EG_SEL_TRAILING (the exact length is eg_sel_decode's to check). */
enum eg_sel_err eg_sel_text_to_bin(const char *text, size_t len, uint8_t *raw, size_t *raw_len);
/* Text form of len raw bytes (at most EG_SEL_MAX_LEN); returns the length
 * written (without NUL). */
size_t eg_sel_to_text(const uint8_t *raw, size_t len, char out[EG_SEL_TEXT_MAX]);

#endif
