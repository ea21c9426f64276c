// SPDX-License-Identifier: Apache-2.0
/* Probe every tier, then load (or adopt) the offered ones: what
 * `execgate load` and execgated's start-up both do. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "loader/pins.h"
#include "loader/tier.h"

static bool required(const char *require, const struct eg_tier_ops *t)
{
	return require && (!strcmp(require, "full") || !strcmp(require, t->name));
}

int eg_tiers_load(const struct eg_tier_ctx *ctx, const char *require, char *err, size_t err_size)
{
	bool offered[16] = {0}, any = false;
	char why[512];
	int rc;

	if (require && strcmp(require, "full") && !eg_tier_find(require)) {
		snprintf(err, err_size, "--require %s: unknown tier (cgroup, lsm, full)", require);
		return -EINVAL;
	}
	/* Probe everything before touching anything: --require fails with
	 * nothing loaded. */
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_ops *t = eg_tiers[i];

		offered[i] = t->probe(ctx, why, sizeof(why)) == 0;
		if (!offered[i] && required(require, t)) {
			snprintf(err, err_size,
				 "--require %s: tier %s is not offered by this kernel: %s", require,
				 t->name, why);
			return -EOPNOTSUPP;
		}
		any |= offered[i];
	}
	if (!any) {
		snprintf(err, err_size, "load: no enforcement tier is offered by this kernel");
		return -EOPNOTSUPP;
	}
	rc = eg_pins_prepare(ctx->pin_dir, err, err_size);
	if (rc)
		return rc;
	for (size_t i = 0; i < eg_tier_count; i++) {
		if (!offered[i])
			continue;
		rc = eg_tiers[i]->load(ctx, err, err_size);
		if (rc)
			return rc;
	}
	return 0;
}
