/* SPDX-License-Identifier: Apache-2.0 */
/* Allow / RefreshRoute / Deny and their reasons (docs/design.md §5): the verdict
 * vocabulary shared by the library's callers, the core comparator, the CLI
 * and the daemon. The numbers are stable: logs and dashboards key on them. */
#ifndef EXECGATE_VERDICT_H
#define EXECGATE_VERDICT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum eg_verdict {
	EG_ALLOW = 0,
	EG_REFRESH_ROUTE = 1,
	EG_DENY = 2,
};

enum eg_reason {
	EG_REASON_OK = 0,
	/* Deny, permanent. */
	EG_REASON_MALFORMED,
	EG_REASON_UNKNOWN_KEY,
	EG_REASON_BAD_SIGNATURE,
	EG_REASON_SCOPE_NOT_ALLOWED,
	EG_REASON_PORT_NOT_ALLOWED,
	/* Deny, re-authenticate. */
	EG_REASON_EXPIRED,
	EG_REASON_NOT_YET_VALID,
	/* Deny, identity. */
	EG_REASON_SANDBOX_MISMATCH,
	/* RefreshRoute. */
	EG_REASON_NO_RECORD,
	EG_REASON_WORKER_MISMATCH,
	EG_REASON_SUBSTRATE_MISMATCH,
	EG_REASON_POD_UID_MISMATCH,
	EG_REASON_GENERATION_MISMATCH,
	EG_REASON_GENERATION_RETIRED,
	EG_REASON_ACTIVATION_MISMATCH,
	EG_REASON__COUNT,
};

/* The largest execution generation anything accepts: a capability (decode
 * reason "bad-generation"), an install, a CLI or API argument. A sandbox
 * installed at the largest value a field can hold could never be replaced
 * by a newer generation; 2^53 - 1 is also the largest integer a JSON
 * number carries exactly (RFC 8259, section 6), so every generation
 * round-trips through the API. */
#define EG_GENERATION_MAX ((1ULL << 53) - 1)

enum eg_open_kind {
	EG_OPEN_NEW = 0,
	EG_OPEN_ESTABLISHED = 1,
};

/* What the caller wants to do with the capability. scope == 0 asks for no
 * particular access; port == 0 is not ServicePort traffic. */
struct eg_request {
	uint32_t scope;
	uint16_t port;
	uint8_t proto;
	enum eg_open_kind open_kind;
};

struct eg_decision {
	enum eg_verdict verdict;
	enum eg_reason reason;
	unsigned decode_err; /* enum eg_decode_err, set when reason == EG_REASON_MALFORMED */
};

const char *eg_verdict_name(enum eg_verdict v); /* "allow" "refresh-route" "deny" */
const char *eg_reason_name(enum eg_reason r);	/* "sandbox-mismatch", ... */
/* "bad-length", ...: the decoder's reason for a malformed token. */
const char *eg_decode_err_text(int decode_err);

#ifdef __cplusplus
}
#endif

#endif
