/* SPDX-License-Identifier: Apache-2.0 */
/* Selection v1: the control plane's signed decision for one sandbox, the
 * execution identity a worker must run (or, for any other worker, must
 * retire). Pure code, no I/O.
 *
 * Wire format v1 (docs/fleet.md, "Selection v1"): a fixed 144-byte
 * string, big-endian, canonical, strictly decoded like a capability:
 *
 *   off len field
 *     0   1 version            1
 *     1   1 substrate          1 firecracker-k8s, 2 firecracker-host
 *     2   2 reserved           zero
 *     4   4 activation         attempt of the generation, 0..2^32-1
 *     8   8 key id             BLAKE2b-256(control-plane public key)[0..8]
 *    16  16 sandbox            UUID, non-zero
 *    32  16 worker             UUID, non-zero
 *    48  16 pod UID            UUID, all-zero outside Kubernetes
 *    64   8 generation         0..2^53-1
 *    72   8 issued at          unix seconds
 *    80  64 Ed25519 signature  over "execgate selection v1\0" || bytes 0..80
 */
#ifndef EXECGATE_CORE_SELECTION_H
#define EXECGATE_CORE_SELECTION_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/capability.h"
#include "core/keyset.h"

#define EG_SEL_VERSION	1
#define EG_SEL_BODY_LEN 80
#define EG_SEL_LEN	(EG_SEL_BODY_LEN + crypto_sign_BYTES)
#define EG_SEL_TEXT_MAX 256 /* base64url, unpadded, + NUL */
/* Its own context: a selection's signature can never pass for a
 * capability's, a key set's or a signed verdict's, nor the reverse. */
#define EG_SEL_SIGN_CONTEXT "execgate selection v1"

struct eg_selection {
	uint8_t version;
	uint8_t substrate; /* enum eg_substrate */
	uint32_t activation;
	uint8_t key_id[EG_KEY_ID_LEN];
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES];
	uint64_t generation;
	uint64_t issued_at;
};

/* Stable: the names (eg_sel_err_name) appear in CLI output and logs. */
enum eg_sel_err {
	EG_SEL_OK = 0,
	EG_SEL_BAD_TEXT,       /* not unpadded base64url */
	EG_SEL_TRUNCATED,      /* fewer than EG_SEL_LEN bytes */
	EG_SEL_TRAILING,       /* more than EG_SEL_LEN bytes */
	EG_SEL_BAD_VERSION,    /* version byte is not EG_SEL_VERSION */
	EG_SEL_RESERVED_BITS,  /* the reserved bytes are not zero */
	EG_SEL_BAD_SUBSTRATE,  /* substrate not in enum eg_substrate */
	EG_SEL_ZERO_ID,	       /* all-zero sandbox or worker */
	EG_SEL_BAD_GENERATION, /* generation above EG_GENERATION_MAX */
	EG_SEL_UNKNOWN_KEY,    /* key id not in the trusted set */
	EG_SEL_WRONG_KEY,      /* key id is not the given public key's */
	EG_SEL_BAD_SIGNATURE,  /* signature does not verify */
	EG_SEL__COUNT,
};

const char *eg_sel_err_name(enum eg_sel_err err);

/* Canonical body (bytes 0..EG_SEL_BODY_LEN) of s. */
void eg_sel_encode_body(const struct eg_selection *s, uint8_t body[EG_SEL_BODY_LEN]);
/* Encodes s and signs it with sk (libsodium's 64-byte form); s->key_id
 * must already be the key id of sk's public half. */
void eg_sel_sign(const struct eg_selection *s, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
		 uint8_t out[EG_SEL_LEN]);
/* Strict decode of exactly len bytes, without the signature check. out is
 * written only on EG_SEL_OK. Never reads past buf[len-1]. */
enum eg_sel_err eg_sel_decode(const uint8_t *buf, size_t len, struct eg_selection *out);
/* Decode, then verify against one public key: its key id must be the
 * selection's. out is written only on EG_SEL_OK. */
enum eg_sel_err eg_sel_verify(const uint8_t *buf, size_t len,
			      const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			      struct eg_selection *out);
/* Decode, then verify against the key of ks that the selection names. */
enum eg_sel_err eg_sel_verify_keyset(const uint8_t *buf, size_t len, const struct eg_keyset *ks,
				     struct eg_selection *out);
/* Text form -> bytes (the capability's strict base64url reader); a text
 * of any length other than EG_SEL_LEN bytes is EG_SEL_TRUNCATED or
 * EG_SEL_TRAILING. raw gets the bytes on EG_SEL_OK; out may then be
 * decoded or verified from raw. */
enum eg_sel_err eg_sel_text_to_bin(const char *text, size_t len, uint8_t raw[EG_SEL_LEN]);
/* Text form of raw bytes; returns the length written (without NUL). */
size_t eg_sel_to_text(const uint8_t raw[EG_SEL_LEN], char out[EG_SEL_TEXT_MAX]);

#endif
