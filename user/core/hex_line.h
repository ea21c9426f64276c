/* SPDX-License-Identifier: Apache-2.0 */
/* Key and seed files: exactly 2*len hex digits and an optional newline,
 * nothing else. */
#ifndef EXECGATE_CORE_HEX_LINE_H
#define EXECGATE_CORE_HEX_LINE_H

#include <stddef.h>
#include <stdint.h>

#define EG_HEX_LINE_MAX_BYTES 64

/* Reads fd to its end (or one byte past the longest valid content) into
 * out[len], len <= EG_HEX_LINE_MAX_BYTES. 0; -errno of read; -EINVAL when
 * the content is not one line of 2*len hex digits. Wipes its buffer: the
 * content may be a secret. */
int eg_hex_line_read(int fd, uint8_t *out, size_t len);

#endif
