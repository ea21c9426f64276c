/* SPDX-License-Identifier: Apache-2.0 */
/* The status report's contents, collected by the loader from pins and maps
 * (tier_report.c); the library writes them as text or JSON
 * (user/lib/report.c). */
#ifndef EXECGATE_LOADER_TIER_REPORT_H
#define EXECGATE_LOADER_TIER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "abi/abi.h"
#include "loader/tiers/attach_root.h"
#include "loader/tiers/cgroup.h"
#include "loader/tiers/clock.h"
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
#include "loader/tiers/tier.h"

/* A part of the state the report could not read: it shows nothing for it
 * and says why, never a 0 in its place. */
struct eg_report_unread {
	const char *what; /* a static name: a pin or a map */
	int err;	  /* negative errno */
};
#define EG_REPORT_MAX_UNREAD (EG_MAP__COUNT + 4)

/* What the status report says (user/lib/report.c writes it): tiers,
 * programs, guarantees, where the cgroup programs are attached, the cgroup
 * roots, the modes, and with full the counters, would-deny counts and map
 * fill. */
struct eg_tier_report {
	struct eg_tier_status st[EG_TIER_MAX];
	struct eg_guarantee g[EG_TIER_MAX_GUARANTEES];
	size_t ng;
	bool loaded;
	__u64 counters[EG_K_REASON_COUNT];
	bool have_counters;
	unsigned fill[EG_MAP__COUNT], cap[EG_MAP__COUNT];
	bool have_fill; /* the maps were opened: fill and cap hold what was read */
	struct eg_attach_check attach;
	struct eg_cgroup_roots roots;
	struct eg_mode_census modes; /* read whenever loaded */
	bool have_modes;
	__u64 would_deny[EG_HOOK_SLOTS][EG_COUNTER_SLOTS]; /* with full */
	bool have_would_deny;
	struct eg_clock_state clock; /* read whenever loaded */
	bool have_clock;
	struct eg_report_unread unread[EG_REPORT_MAX_UNREAD];
	size_t n_unread;
};
/* Fills *rp for pin_dir, offered tiers from probed. Reads pins and maps
 * only. 0, or a tier's negative errno. */
int eg_tier_report_collect(const char *pin_dir, const struct eg_probe_record *probed, bool full,
			   struct eg_tier_report *rp);
/* An attach type's name, also the ones Debian's libbpf 1.1 does not know. */
const char *eg_attach_type_name(__u32 t);
/* The warning status gives about the attach point: its code (NULL when
 * there is none), and its message in buf. */
const char *eg_attach_warning(const struct eg_attach_check *a, char *buf, size_t size);

#endif
