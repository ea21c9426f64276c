/* SPDX-License-Identifier: Apache-2.0 */
/* The retry policy after a refusal. See retry.h for the rules. */
#include "client/retry.h"

static const char *const retry_names[] = {
    [EG_RETRY_FAIL] = "fail",
    [EG_RETRY_CURRENT] = "retry-current",
    [EG_RETRY_REAUTH] = "reauth",
};

const char *eg_retry_action_name(enum eg_retry_action a)
{
	return (unsigned)a <= EG_RETRY_REAUTH ? retry_names[a] : "unknown";
}

enum eg_retry_action eg_route_retry_action(enum eg_op_kind kind, enum eg_route_outcome outcome,
					   unsigned retries_done, bool entry_changed)
{
	if (retries_done >= EG_ROUTE_MAX_RETRIES)
		return EG_RETRY_FAIL;
	switch (outcome) {
	case EG_ROUTE_REPAIRED:
	case EG_ROUTE_LOST_RACE:
		/* Proven refused before forwarding: safe for every kind. */
		return EG_RETRY_CURRENT;
	case EG_ROUTE_NO_ENTRY:
	case EG_ROUTE_EXPIRED:
		return EG_RETRY_REAUTH;
	case EG_ROUTE_IGNORED_NOT_REFRESH:
		return EG_RETRY_FAIL;
	default:
		/* Ignored: nothing proven about this operation. Only an
		 * idempotent one may go on, and only on an entry that a
		 * valid refresh of someone else installed. */
		return kind == EG_OP_IDEMPOTENT && entry_changed ? EG_RETRY_CURRENT : EG_RETRY_FAIL;
	}
}
