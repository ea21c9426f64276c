// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "loader/tier.h"

/* Order matters only for output. See tier.h for how to add a tier. */
const struct eg_tier_ops *const eg_tiers[] = {
    &eg_tier_cgroup,
    &eg_tier_lsm,
    &eg_tier_tcp,
};
const size_t eg_tier_count = sizeof(eg_tiers) / sizeof(eg_tiers[0]);

const struct eg_tier_ops *eg_tier_find(const char *name)
{
	for (size_t i = 0; i < eg_tier_count; i++)
		if (!strcmp(eg_tiers[i]->name, name))
			return eg_tiers[i];
	return NULL;
}

size_t eg_tier_index(const struct eg_tier_ops *t)
{
	size_t i = 0;

	while (i < eg_tier_count && eg_tiers[i] != t)
		i++;
	return i;
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

void eg_tier_not_held_reason(const struct eg_tier_status *st, char *out, size_t size)
{
	if (!st->offered)
		snprintf(out, size, "%s", st->why_not);
	else
		snprintf(out, size, "%s", st->detail[0] ? st->detail : "not loaded");
}

void eg_tier_load_error(char *err, size_t err_size, const char *tier, const char *pin_dir, int rc)
{
	snprintf(err, err_size, "%s tier: loading the BPF object (pinned maps in %s): %s%s", tier,
		 pin_dir, strerror(-rc),
		 rc == -EINVAL ? " (incompatible pins from another build? execgate unload)" : "");
}
