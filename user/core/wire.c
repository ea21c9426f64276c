/* SPDX-License-Identifier: Apache-2.0 */
/* The table-driven codec of the fixed-layout wire bodies. Integers go
 * through a uint64_t: loaded from the struct at their own width, then
 * written big-endian byte by byte (and back). */
#include <string.h>
#include "core/wire.h"

static uint64_t load(const uint8_t *m, size_t len)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (len) {
	case 1:
		memcpy(&u8, m, 1);
		return u8;
	case 2:
		memcpy(&u16, m, 2);
		return u16;
	case 4:
		memcpy(&u32, m, 4);
		return u32;
	default:
		memcpy(&u64, m, 8);
		return u64;
	}
}

static void store(uint8_t *m, size_t len, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	if (len == 1)
		memcpy(m, &u8, 1);
	else if (len == 2)
		memcpy(m, &u16, 2);
	else if (len == 4)
		memcpy(m, &u32, 4);
	else
		memcpy(m, &v, 8);
}

void eg_wire_encode(const struct eg_wire_field *f, size_t n, const void *s, uint8_t *body)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *m = (const uint8_t *)s + f[i].mem;
		uint8_t *w = body + f[i].off;
		uint64_t v;

		if (f[i].bytes) {
			memcpy(w, m, f[i].len);
			continue;
		}
		v = load(m, f[i].len);
		for (size_t b = 0; b < f[i].len; b++)
			w[b] = (uint8_t)(v >> (8 * (f[i].len - 1 - b)));
	}
}

void eg_wire_decode(const struct eg_wire_field *f, size_t n, const uint8_t *body, void *s)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *m = (uint8_t *)s + f[i].mem;
		const uint8_t *w = body + f[i].off;
		uint64_t v = 0;

		if (f[i].bytes) {
			memcpy(m, w, f[i].len);
			continue;
		}
		for (size_t b = 0; b < f[i].len; b++)
			v = (v << 8) | w[b];
		store(m, f[i].len, v);
	}
}
