// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>
#include "loader/tiers/attach_root.h"
#include "loader/tiers/cgroup.h"

void eg_attach_point_decide(const struct eg_tier_status *st, size_t n, __u64 root_id,
			    struct eg_attach_check *out)
{
	out->point = EG_ATTACH_NONE;
	out->hook[0] = '\0';
	out->cgroup[0] = '\0';
	for (size_t i = 0; i < n; i++)
		for (size_t p = 0; p < st[i].nprogs; p++) {
			const struct eg_prog_status *ps = &st[i].progs[p];

			/* Global hooks (LSM) have no target. */
			if (!ps->target_id)
				continue;
			if (ps->target_id == root_id) {
				if (out->point == EG_ATTACH_NONE)
					out->point = EG_ATTACH_ROOT;
				continue;
			}
			if (out->point != EG_ATTACH_NOT_ROOT) {
				out->point = EG_ATTACH_NOT_ROOT;
				snprintf(out->hook, sizeof(out->hook), "%s", ps->hook);
				snprintf(out->cgroup, sizeof(out->cgroup), "%s", ps->target);
			}
		}
}

void eg_attach_point_check(const struct eg_tier_status *st, size_t n, struct eg_attach_check *out)
{
	eg_attach_point_decide(st, n, EG_CGROUP_ROOT_ID, out);
	if (eg_cgroup2_root(out->root, sizeof(out->root)))
		snprintf(out->root, sizeof(out->root), "(no cgroup v2 mount)");
}
