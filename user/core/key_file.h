/* SPDX-License-Identifier: Apache-2.0 */
/* Typed key files. One line of text:
 *
 *     execgate-<algorithm>-<kind>-v<version> <lowercase hex key>\n
 *
 * e.g. "execgate-ed25519-public-v1 <64 hex>" and "execgate-ed25519-secret-v1
 * <64 hex seed>". The type says what the bytes are, so a public key and a
 * secret are told apart by content, not by file mode or name: a reader that
 * wants a public key refuses a secret one without decoding it. Exactly one
 * space, one optional trailing LF, nothing else (no CR, no second line).
 * The old untyped form (bare hex) is refused: in it a seed and a public key
 * look the same. The codec is pure; eg_key_file_read/load are its only I/O. */
#ifndef EXECGATE_CORE_KEY_FILE_H
#define EXECGATE_CORE_KEY_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/keyset.h"

enum eg_key_alg {
	EG_KEY_ALG_ED25519 = 1,
};

enum eg_key_kind {
	EG_KEY_KIND_PUBLIC = 1,
	EG_KEY_KIND_SECRET, /* for Ed25519: the 32-byte seed */
};

#define EG_KEY_TYPE_ED25519_PUBLIC "execgate-ed25519-public-v1"
#define EG_KEY_TYPE_ED25519_SECRET "execgate-ed25519-secret-v1"

/* The longest key a type holds, in bytes. */
#define EG_KEY_FILE_MAX_KEY 32
/* Longer than any valid file: a reader takes at most this many bytes and
 * the decoder refuses what it sees, so an oversized file is never valid. */
#define EG_KEY_FILE_MAX 128
/* Room for an encoded line: type, space, hex, LF, NUL. */
#define EG_KEY_FILE_LINE_MAX (48 + 1 + 2 * EG_KEY_FILE_MAX_KEY + 2)

/* The type name for (alg, kind), or NULL. */
const char *eg_key_type_name(enum eg_key_alg alg, enum eg_key_kind kind);

/* Decodes text[len], the whole contents of a key file, which must be of
 * type (alg, kind) holding out_len bytes. Checks in this order, so the
 * error names the first real cause: empty; a known type of another kind
 * (EG_KEY_FILE_SECRET / EG_KEY_FILE_PUBLIC, before anything else, so a
 * secret is named as one even when the rest is malformed); CR; data after
 * the first LF; untyped bare hex; unknown type; the key's hex. out is
 * written only on EG_KEY_OK. */
enum eg_key_err eg_key_file_decode(const char *text, size_t len, enum eg_key_alg alg,
				   enum eg_key_kind kind, uint8_t *out, size_t out_len);

/* Writes "<type> <hex>\n" and a NUL into out. Returns the length without
 * the NUL, or -EINVAL (unknown type, key_len not the type's) / -ENOSPC. */
int eg_key_file_encode(enum eg_key_alg alg, enum eg_key_kind kind, const uint8_t *key,
		       size_t key_len, char *out, size_t size);

/* Reads at most size bytes of path (a regular file; opened O_NONBLOCK so a
 * FIFO cannot hang the reader) into buf. mode_out, when not NULL, gets the
 * file's mode. EG_KEY_OK, EG_KEY_FILE_MISSING, _UNREADABLE or
 * _NOT_REGULAR. The caller wipes buf. */
enum eg_key_err eg_key_file_read(const char *path, char *buf, size_t size, size_t *len,
				 mode_t *mode_out);

/* eg_key_file_read + eg_key_file_decode, with the read buffer wiped. */
enum eg_key_err eg_key_file_load(const char *path, enum eg_key_alg alg, enum eg_key_kind kind,
				 uint8_t *out, size_t out_len, mode_t *mode_out);

#endif
