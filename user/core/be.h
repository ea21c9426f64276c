/* SPDX-License-Identifier: Apache-2.0 */
/* Big-endian loads and stores for the wire format. Byte by byte, so no
 * alignment or host byte order assumption can creep in. */
#ifndef EXECGATE_CORE_BE_H
#define EXECGATE_CORE_BE_H

#include <stdint.h>

static inline void eg_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void eg_put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline void eg_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint16_t eg_get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t eg_get_be32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline uint64_t eg_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

#endif
