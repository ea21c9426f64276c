/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the soak (tests/soak/) and the fleet soak (tests/soak-fleet/). */
#ifndef EXECGATE_TESTS_SOAK_COMMON_H
#define EXECGATE_TESTS_SOAK_COMMON_H

#include <stdint.h>

uint64_t soak_now_ns(void); /* CLOCK_MONOTONIC */
/* Uniform in [0, n) (libsodium's generator: sodium_init first). */
uint64_t soak_rand(uint64_t n);

#endif
