// SPDX-License-Identifier: Apache-2.0
/* Probe every tier, then load (or adopt) the offered ones: what
 * `execgate load` and execgated's start-up both do. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "loader/tiers/cgroup.h"
#include "loader/tiers/clock.h"
#include "loader/log.h"
#include "loader/maps/pins.h"
#include "loader/process/task_start.h"
#include "loader/revokers/revoke.h"
#include "loader/tiers/tier.h"

static bool required(const char *require, const struct eg_tier_ops *t)
{
	return require && (!strcmp(require, "full") || !strcmp(require, t->name));
}

int eg_tiers_load(const struct eg_tier_ctx *ctx, const char *require, char *err, size_t err_size)
{
	static struct eg_probe_record probed;
	bool any = false;
	int rc;

	if (require && strcmp(require, "full") && !eg_tier_find(require)) {
		snprintf(err, err_size, "--require %s: unknown tier (cgroup, lsm, tcp, full)",
			 require);
		return -EINVAL;
	}
	if (ctx->inet_tags &&
	    (ctx->inet_tags < EG_INET_TAGS_MIN || ctx->inet_tags > EG_INET_TAGS_MAX)) {
		snprintf(err, err_size, "inet tags %u: not between %u and %u", ctx->inet_tags,
			 EG_INET_TAGS_MIN, EG_INET_TAGS_MAX);
		return -EINVAL;
	}
	/* A pin dir off bpffs is a usage error, said before any probe. */
	rc = eg_pins_check(ctx->pin_dir, err, err_size);
	if (rc)
		return rc;
	/* A cgroup that is not there is the operator's typo, not a kernel
	 * without the tier: the cgroup probe would fail on it and the load
	 * would say "not offered". */
	if (ctx->cgroup_path) {
		rc = eg_cgroup_open(ctx->cgroup_path, err, err_size);
		if (rc < 0)
			return rc;
		close(rc);
	}
	/* Probe everything before touching anything: --require fails with
	 * nothing loaded. */
	eg_tiers_probe(ctx, &probed);
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_ops *t = eg_tiers[i];

		if (!probed.offered[i] && required(require, t)) {
			snprintf(err, err_size,
				 "--require %s: tier %s is not offered by this kernel: %s", require,
				 t->name, probed.why_not[i]);
			return -EOPNOTSUPP;
		}
		any |= probed.offered[i];
	}
	if (!any) {
		snprintf(err, err_size, "no enforcement tier is offered by this kernel");
		return -EOPNOTSUPP;
	}
	rc = eg_pins_prepare(ctx->pin_dir, err, err_size);
	if (rc)
		return rc;
	for (size_t i = 0; i < eg_tier_count; i++) {
		if (!probed.offered[i])
			continue;
		rc = eg_tiers[i]->load(ctx, err, err_size);
		if (rc)
			return rc;
	}
	/* Best effort: where it fails, the first cut loads it (or uses procfs). */
	eg_revoke_unix_prepare(ctx->pin_dir);
	/* Best effort too: where it fails, grants expire by CLOCK_BOOTTIME
	 * read in the hook, as exactly, ~35 ns dearer (loader/tiers/clock.h). */
	{
		char why[2 * EG_PIN_PATH_MAX];

		if (eg_clock_keep(ctx->pin_dir, why, sizeof(why)))
			eg_log(EG_LOG_WARN, "%s", why);
	}
	/* Best effort: where it fails, each install and admit loads its own
	 * task iterator (loader/process/task_start.h). */
	{
		char why[2 * EG_PIN_PATH_MAX];

		/* -EOPNOTSUPP: no iterator here at all, which status reports. */
		rc = eg_task_start_keep(ctx->pin_dir, why, sizeof(why));
		if (rc && rc != -EOPNOTSUPP)
			eg_log(EG_LOG_WARN, "%s", why);
		rc = 0;
	}
	/* Written last, so status never reads offered tiers that a failed
	 * load did not reach; a stale record from an earlier load of this
	 * boot still describes the same kernel. */
	if (ctx->state_dir) {
		char why[512];

		rc = eg_probe_record_write(ctx->state_dir, &probed, why, sizeof(why));
		if (rc)
			snprintf(err, err_size,
				 "tiers loaded and enforcing, but the probe record for status was "
				 "not kept: %s",
				 why);
	}
	return rc;
}

int eg_tiers_unload(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	char one[512];
	int rc, first = 0;

	/* Every tier, even after a failure: what can go, goes. */
	for (size_t i = 0; i < eg_tier_count; i++) {
		rc = eg_tiers[i]->unload(ctx, one, sizeof(one));
		if (rc && !first) {
			first = rc;
			snprintf(err, err_size, "%s", one);
		}
	}
	if (first)
		return first;
	rc = eg_pins_remove_maps(ctx->pin_dir);
	if (rc == -ENOTEMPTY)
		snprintf(err, err_size,
			 "pin dir %s: not empty after unload (foreign pins left in place)",
			 ctx->pin_dir);
	else if (rc)
		snprintf(err, err_size, "pin dir %s: %s", ctx->pin_dir, strerror(-rc));
	return rc;
}
