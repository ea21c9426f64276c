/* SPDX-License-Identifier: Apache-2.0 */
/* Text forms of the identifiers: UUIDs, key ids, scope lists, substrates. */
#ifndef EXECGATE_CORE_IDS_H
#define EXECGATE_CORE_IDS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/capability.h"
#include "execgate/sizes.h"
#include "execgate/text.h"

_Static_assert(EG_KID_TEXT_LEN == 2 * EG_KEY_ID_LEN + 1, "a key id's text: two hex digits a byte");

/* Canonical 8-4-4-4-12 hex, either case. 0 or -EINVAL. */
int eg_uuid_parse(const char *text, uint8_t out[EG_ID_BYTES]);
void eg_uuid_format(const uint8_t id[EG_ID_BYTES], char out[EG_UUID_TEXT_LEN]);
bool eg_id_is_zero(const uint8_t id[EG_ID_BYTES]);

void eg_key_id_format(const uint8_t kid[EG_KEY_ID_LEN], char out[EG_KID_TEXT_LEN]);
int eg_key_id_parse(const char *text, uint8_t out[EG_KEY_ID_LEN]);

/* Scopes, substrates, ports, protocols and decimal numbers: execgate/text.h. */

#endif
