// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>
#include <string.h>
#include "loader/tier.h"

/* Order matters only for output. See tier.h for how to add a tier. */
const struct eg_tier_ops *const eg_tiers[] = {
    &eg_tier_cgroup,
    &eg_tier_lsm,
};
const size_t eg_tier_count = sizeof(eg_tiers) / sizeof(eg_tiers[0]);

const struct eg_tier_ops *eg_tier_find(const char *name)
{
	for (size_t i = 0; i < eg_tier_count; i++)
		if (!strcmp(eg_tiers[i]->name, name))
			return eg_tiers[i];
	return NULL;
}

void eg_guarantee_add(struct eg_guarantee *out, size_t *n, size_t max, const char *name,
		      const char *summary, bool held, const char *reason)
{
	if (*n >= max)
		return;
	out[*n].name = name;
	out[*n].summary = summary;
	out[*n].held = held;
	snprintf(out[*n].reason, sizeof(out[*n].reason), "%s", reason);
	(*n)++;
}
