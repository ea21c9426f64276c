/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the soak (tests/soak/), the fleet soak (tests/soak-fleet/) and
 * the fleet at scale (tests/soak-fleet-scale/). */
#ifndef EXECGATE_TESTS_SOAK_COMMON_H
#define EXECGATE_TESTS_SOAK_COMMON_H

#include <stdint.h>
#include "core/capability.h"

uint64_t soak_now_ns(void); /* CLOCK_MONOTONIC */
/* Uniform in [0, n) (libsodium's generator: sodium_init first). */
uint64_t soak_rand(uint64_t n);
/* A capability for execution id with scope bits, signed by the control
 * plane's key (sk, kid), valid from now for ttl seconds, in its text form
 * (what `execgate-issue cap` prints). A random token id. */
void soak_cap_text(char out[EG_CAP_TEXT_MAX], const uint8_t sk[64],
		   const uint8_t kid[EG_KEY_ID_LEN], const struct eg_identity *id, uint32_t scope,
		   uint64_t ttl);

#endif
