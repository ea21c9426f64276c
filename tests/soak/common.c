// SPDX-License-Identifier: Apache-2.0
/* What the soaks share (tests/soak/, tests/soak-fleet/,
 * tests/soak-fleet-scale/): the clock their logs are kept in, their random
 * choices and the control plane's capabilities. */
#include <string.h>
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

void soak_cap_text(char out[EG_CAP_TEXT_MAX], const uint8_t sk[64],
		   const uint8_t kid[EG_KEY_ID_LEN], const struct eg_identity *id, uint32_t scope,
		   uint64_t ttl)
{
	struct eg_capability cap;
	uint8_t body[EG_CAP_BODY_LEN], msg[EG_CAP_SIGNED_LEN], raw[EG_CAP_LEN];
	uint64_t now = (uint64_t)time(NULL);

	memset(&cap, 0, sizeof(cap));
	cap.version = EG_CAP_VERSION;
	memcpy(cap.key_id, kid, sizeof(cap.key_id));
	randombytes_buf(cap.token_id, sizeof(cap.token_id));
	cap.token_id[0] |= 1; /* never all-zero */
	cap.id = *id;
	cap.scope = scope;
	cap.issued_at = cap.not_before = now;
	cap.expiry = now + ttl;
	eg_cap_encode_body(&cap, body);
	eg_cap_signed_message(body, msg);
	crypto_sign_detached(cap.signature, NULL, msg, sizeof(msg), sk);
	eg_cap_encode(&cap, raw);
	eg_cap_to_text(raw, out);
}
