// SPDX-License-Identifier: Apache-2.0
/* The retry back-off with jitter (fleet/backoff.h). */
#include "fleet/backoff.h"

unsigned eg_backoff_next(unsigned cur_ms, unsigned max_ms)
{
	return cur_ms > max_ms / 2 ? max_ms : cur_ms * 2;
}

unsigned eg_backoff_jittered(unsigned ms, uint32_t rnd)
{
	unsigned half = ms / 2;

	/* rnd scaled onto 0 .. ms - half, both ends included */
	return half + (unsigned)(((uint64_t)rnd * (uint64_t)(ms - half + 1)) >> 32);
}
