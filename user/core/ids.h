/* SPDX-License-Identifier: Apache-2.0 */
/* Text forms of the identifiers: UUIDs, key ids, scope lists, substrates. */
#ifndef EXECGATE_CORE_IDS_H
#define EXECGATE_CORE_IDS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/capability.h"

#define EG_KEY_ID_TEXT_LEN (2 * EG_KEY_ID_LEN + 1)

/* Canonical 8-4-4-4-12 hex, either case. 0 or -EINVAL. */
int eg_uuid_parse(const char *text, uint8_t out[EG_ID_BYTES]);
void eg_uuid_format(const uint8_t id[EG_ID_BYTES], char out[EG_UUID_TEXT_LEN]);
bool eg_id_is_zero(const uint8_t id[EG_ID_BYTES]);

void eg_key_id_format(const uint8_t kid[EG_KEY_ID_LEN], char out[EG_KEY_ID_TEXT_LEN]);
int eg_key_id_parse(const char *text, uint8_t out[EG_KEY_ID_LEN]);

/* "file.read,exec" <-> bits. Parse: 0 or -EINVAL (unknown name, empty item). */
int eg_scope_parse(const char *list, uint32_t *out);
/* Writes a comma-separated list; returns the length. */
int eg_scope_format(uint32_t scope, char *out, size_t size);

/* "firecracker-k8s" | "firecracker-host". */
int eg_substrate_parse(const char *name, uint8_t *out);
const char *eg_substrate_name(uint8_t substrate);

/* "8080/tcp" | "53/udp"; port 1..65535. */
int eg_port_parse(const char *text, uint16_t *port, uint8_t *proto);
/* "none" | "tcp" | "udp". */
const char *eg_proto_name(uint8_t proto);

/* Strict unsigned decimal: no sign, no spaces, no trailing text, <= max.
 * 0, -EINVAL (not a number) or -ERANGE (above max). */
int eg_parse_u64(const char *text, uint64_t max, uint64_t *out);

#endif
