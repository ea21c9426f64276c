// SPDX-License-Identifier: Apache-2.0
/* The epoch rule (core/epoch_rule.h, its table). */
#include <stddef.h>
#include "core/epoch_rule.h"

enum eg_epoch_outcome eg_epoch_rule(const struct eg_epoch_installed *installed,
				    const struct eg_epoch_asked *asked, uint64_t *epoch)
{
	const struct eg_epoch_installed *old = installed;

	if (!old) {
		*epoch = 1;
		return EG_EPOCH_NEW;
	}
	if (asked->generation < old->generation)
		return EG_EPOCH_STALE_GENERATION;
	if (asked->generation > old->generation) {
		*epoch = old->epoch + 1;
		return EG_EPOCH_REPLACED;
	}
	if (asked->activation < old->activation)
		return EG_EPOCH_STALE_ACTIVATION;
	if (old->retired) {
		if (asked->activation == old->activation)
			return EG_EPOCH_STALE_RETIRED;
		*epoch = old->epoch + 1;
		return EG_EPOCH_REACTIVATED;
	}
	*epoch = old->epoch;
	if (asked->activation > old->activation)
		return EG_EPOCH_ACTIVATION;
	return asked->same_execution ? EG_EPOCH_UNCHANGED : EG_EPOCH_CHANGED_EXECUTION;
}

bool eg_epoch_refused(enum eg_epoch_outcome o)
{
	return o == EG_EPOCH_STALE_GENERATION || o == EG_EPOCH_STALE_ACTIVATION ||
	       o == EG_EPOCH_STALE_RETIRED || o == EG_EPOCH_CHANGED_EXECUTION;
}

bool eg_epoch_moves(enum eg_epoch_outcome o)
{
	return o == EG_EPOCH_REPLACED || o == EG_EPOCH_REACTIVATED;
}
