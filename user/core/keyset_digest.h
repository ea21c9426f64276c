/* SPDX-License-Identifier: Apache-2.0 */
/* The key set's digest: one value that says whether two key sets (the
 * daemon's memory, its directory, another worker's) hold the same keys.
 * docs/api.md, "Key-set digest", defines it for operators. */
#ifndef EXECGATE_CORE_KEYSET_DIGEST_H
#define EXECGATE_CORE_KEYSET_DIGEST_H

#include <stdint.h>
#include "core/keyset.h"

#define EG_KEYSET_DIGEST_LEN 32
#define EG_KEYSET_DIGEST_HEX (2 * EG_KEYSET_DIGEST_LEN + 1)

/* BLAKE2b-256 (unkeyed) of the lines "KID PK\n", KID the key id's 16 and
 * PK the public key's 64 lowercase hex digits, sorted by key id: exactly
 * `execgate keys list | sort | b2sum -l 256`. The set's order and
 * generation do not matter; the empty set digests the empty string.
 * Pure: no I/O, no allocation. */
void eg_keyset_digest(const struct eg_keyset *ks, uint8_t out[EG_KEYSET_DIGEST_LEN]);
/* The same in lowercase hex (64 digits and the NUL). */
void eg_keyset_digest_hex(const struct eg_keyset *ks, char out[EG_KEYSET_DIGEST_HEX]);

#endif
