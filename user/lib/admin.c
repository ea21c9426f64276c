// SPDX-License-Identifier: Apache-2.0
/* execgate/admin.h: load, unload, probe and status over the loader's
 * tiers (loader/tiers/tier.h), which stay internal. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <execgate/admin.h>
#include <execgate/execgate.h>
#include "loader/tiers/attach_root.h"
#include "loader/process/proc_id.h"
#include "loader/revokers/serving.h"
#include "lib/report.h"
#include "loader/tiers/tier.h"

_Static_assert(EG_ATTACH_PATH_MAX == EG_PIN_PATH_MAX, "eg_attach_info paths");
_Static_assert((int)EG_ATTACHED_NONE == (int)EG_ATTACH_NONE &&
		   (int)EG_ATTACHED_ROOT == (int)EG_ATTACH_ROOT &&
		   (int)EG_ATTACHED_BELOW_ROOT == (int)EG_ATTACH_NOT_ROOT,
	       "eg_attach_where");

int eg_namespaces_check(char *err, size_t err_size)
{
	return eg_proc_check_namespaces(err, err_size);
}

int eg_load_sized(const char *pin_dir, const char *state_dir, const char *cgroup,
		  const char *require, unsigned inet_tags, char *err, size_t err_size)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir,
				  .cgroup_path = cgroup,
				  .state_dir = state_dir,
				  .inet_tags = inet_tags};

	return eg_tiers_load(&ctx, require, err, err_size);
}

int eg_load(const char *pin_dir, const char *state_dir, const char *cgroup, const char *require,
	    char *err, size_t err_size)
{
	return eg_load_sized(pin_dir, state_dir, cgroup, require, 0, err, err_size);
}

int eg_unload(const char *pin_dir, char *err, size_t err_size)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};

	return eg_tiers_unload(&ctx, err, err_size);
}

/* The report over what load recorded: full adds counters and map fill
 * (status); attach (may be NULL) gets the attach point. */
static int report(const char *pin_dir, const char *state_dir, FILE *out, bool json, bool full,
		  struct eg_attach_info *attach)
{
	struct eg_probe_record *probed = malloc(sizeof(*probed));
	struct eg_attach_check a = {.point = EG_ATTACH_NONE};
	int rc;

	if (attach)
		memset(attach, 0, sizeof(*attach));
	if (!probed)
		return -ENOMEM;
	eg_probe_record_read(state_dir, probed);
	/* status (full) shows the state dir's key set; load's tail does not */
	rc = eg_report_write_keys(out, pin_dir, full ? state_dir : NULL, probed, json, full,
				  attach ? &a : NULL);
	free(probed);
	if (attach) {
		attach->where = (enum eg_attach_where)a.point;
		memcpy(attach->hook, a.hook, sizeof(attach->hook));
		memcpy(attach->cgroup, a.cgroup, sizeof(attach->cgroup));
		memcpy(attach->root, a.root, sizeof(attach->root));
	}
	return rc;
}

int eg_load_report(const char *pin_dir, const char *state_dir, FILE *out, bool json)
{
	return report(pin_dir, state_dir, out, json, false, NULL);
}

int eg_status_write_attach(const char *pin_dir, const char *state_dir, FILE *out, bool json,
			   struct eg_attach_info *attach)
{
	return report(pin_dir, state_dir, out, json, true, attach);
}

void eg_attach_read(const char *pin_dir, const char *state_dir, struct eg_attach_info *attach)
{
	report(pin_dir, state_dir, NULL, false, false, attach);
}

int eg_probe_write(const char *pin_dir, FILE *out, bool json)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir};
	struct eg_probe_record *probed = malloc(sizeof(*probed));
	int rc;

	if (!probed)
		return -ENOMEM;
	eg_tiers_probe(&ctx, probed);
	rc = eg_report_write(out, pin_dir, probed, json, false, NULL);
	free(probed);
	return rc;
}

void eg_serving_refusals(const char *state_dir,
			 void (*fn)(const char *step, const char *why, void *ctx), void *ctx)
{
	struct eg_probe_record *r = malloc(sizeof(*r));

	if (!r)
		return;
	eg_probe_record_read(state_dir, r);
	if (r->present && r->serving_probed)
		for (int i = 0; i < EG_STEP__COUNT; i++)
			if (!r->step_ok[i])
				fn(eg_serving_step_names[i], r->step_why[i], ctx);
	free(r);
}
