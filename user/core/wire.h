/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed-layout wire bodies (capability v1, core/capability.c; signed
 * verdict v1, core/signed_verdict.c): each format is one table of fields,
 * read by one encoder and one decoder, so a byte layout is written once.
 * Integers are big-endian; byte strings are copied as they are. */
#ifndef EXECGATE_CORE_WIRE_H
#define EXECGATE_CORE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eg_wire_field {
	uint16_t off; /* in the body */
	uint16_t mem; /* offsetof in the struct */
	uint16_t len; /* bytes: 1, 2, 4 or 8 for an unsigned integer */
	bool bytes;   /* a byte string, not an integer */
};

#define EG_WIRE_UINT(off, type, member)                                                            \
	{                                                                                          \
		(off), offsetof(type, member), sizeof(((type *)0)->member), false                  \
	}
#define EG_WIRE_BYTES(off, type, member)                                                           \
	{                                                                                          \
		(off), offsetof(type, member), sizeof(((type *)0)->member), true                   \
	}

/* Writes each field of s into body; leaves the bytes no field names. */
void eg_wire_encode(const struct eg_wire_field *f, size_t n, const void *s, uint8_t *body);
/* Reads each field of body into s; leaves the members no field names. */
void eg_wire_decode(const struct eg_wire_field *f, size_t n, const uint8_t *body, void *s);

#endif
