// SPDX-License-Identifier: Apache-2.0
/* What both soaks use (tests/soak/, tests/soak-fleet/): the clock their
 * logs are kept in and their random choices. */
#include <time.h>
#include <sodium.h>
#include "soak/common.h"

uint64_t soak_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t soak_rand(uint64_t n)
{
	uint64_t v;

	randombytes_buf(&v, sizeof(v));
	return n ? v % n : 0;
}
