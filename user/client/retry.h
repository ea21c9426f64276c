/* SPDX-License-Identifier: Apache-2.0 */
/* The retry policy of a front end after a refusal: what an operation may do
 * next, given what the route cache made of the refusal (client/route_cache.h).
 *
 * Replay rules, per operation type. A signed refresh-route verdict is issued
 * at admission, before a byte of the operation reaches the execution, so
 * every outcome that passed the verdict checks (REPAIRED, LOST_RACE,
 * NO_ENTRY, EXPIRED) proves the operation was refused unexecuted: any
 * operation may be retried, under a new attempt (new capability for the new
 * route). An IGNORED outcome proves nothing: an operation that must run at
 * most once gives the refusal to its caller; an idempotent one may retry
 * only on an entry someone else repaired meanwhile (entry_changed: current
 * has a version other than the rejected one), never because of the ignored
 * verdict. A deny never retries. At most EG_ROUTE_MAX_RETRIES retries. */
#ifndef EXECGATE_CLIENT_RETRY_H
#define EXECGATE_CLIENT_RETRY_H

#include <stdbool.h>
#include "client/route_cache.h"

#define EG_ROUTE_MAX_RETRIES 3 /* retries per operation after a refusal */

enum eg_op_kind {
	EG_OP_IDEMPOTENT = 0, /* reads, stat, list: running twice is harmless */
	EG_OP_AT_MOST_ONCE,   /* writes, exec, stream opens */
};

enum eg_retry_action {
	EG_RETRY_FAIL = 0, /* give the refusal to the caller */
	EG_RETRY_CURRENT,  /* retry on the entry on_refresh returned in current */
	EG_RETRY_REAUTH,   /* authenticate again (put), then retry */
};

enum eg_retry_action eg_route_retry_action(enum eg_op_kind kind, enum eg_route_outcome outcome,
					   unsigned retries_done, bool entry_changed);
const char *eg_retry_action_name(enum eg_retry_action a); /* "fail", "retry-current", "reauth" */

#endif
