/* SPDX-License-Identifier: Apache-2.0 */
/* Allow / RefreshRoute / Deny: docs/design.md §5, one reason per verdict. */
#ifndef EXECGATE_CORE_COMPARATOR_H
#define EXECGATE_CORE_COMPARATOR_H

#include <stdint.h>
#include "core/capability.h"
#include "core/record.h"
#include "execgate/verdict.h"

enum eg_verdict eg_reason_verdict(enum eg_reason r);

/* Time and access checks, then the identity comparison. The signature is
 * the caller's job (see admission.h). rec == NULL: no record here. */
struct eg_decision eg_compare(const struct eg_capability *cap, const struct eg_record *rec,
			      uint64_t now, const struct eg_request *req);

/* Clock edges, inclusive: valid iff not_before - SKEW <= now <= expiry + SKEW. */
enum eg_reason eg_check_time(const struct eg_capability *cap, uint64_t now);

#endif
