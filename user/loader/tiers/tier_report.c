// SPDX-License-Identifier: Apache-2.0
/* What `execgate status` (and the tail of `load` and `probe`) reports:
 * tiers, programs, guarantees, counters and map fill, collected from pins
 * and maps only; what the kernel offers comes from the probe record it is
 * given. Collection only: the library writes it as text or JSON
 * (user/lib/report.c), so the loader never depends on the library. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "kcompat.h"
#include "loader/tiers/attach_root.h"
#include "loader/tiers/cgroup.h"
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
#include "loader/maps/pins.h"
#include "loader/revokers/serving.h"
#include "loader/tiers/tier_report.h"

/* Debian's bpftool 7.1 and libbpf 1.1 predate BPF_CGROUP_UNIX_CONNECT and
 * print it as a bare number, so name it here. */
const char *eg_attach_type_name(__u32 t)
{
	const char *n;

	if (t == EG_BPF_CGROUP_UNIX_CONNECT)
		return EG_BPF_CGROUP_UNIX_CONNECT_NAME;
	n = libbpf_bpf_attach_type_str((enum bpf_attach_type)t);
	return n ? n : "unknown";
}

const char *eg_attach_warning(const struct eg_attach_check *a, char *buf, size_t size)
{
	if (a->point != EG_ATTACH_NOT_ROOT)
		return NULL;
	snprintf(buf, size,
		 "%s is attached at cgroup %s, not at the cgroup root %s: a socket "
		 "created outside that cgroup is not checked, even when a process in it "
		 "uses the socket (attach at the root in production: load --cgroup %s)",
		 a->hook, a->cgroup, a->root, a->root);
	return EG_WARN_CGROUP_NOT_ROOT;
}

static void note_unread(struct eg_tier_report *rp, const char *what, int err)
{
	if (err && rp->n_unread < EG_REPORT_MAX_UNREAD)
		rp->unread[rp->n_unread++] = (struct eg_report_unread){.what = what, .err = err};
}

int eg_tier_report_collect(const char *pin_dir, const struct eg_probe_record *probed, bool full,
			   struct eg_tier_report *rp)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir, .probed = probed};
	struct eg_maps maps;
	char err[512];
	int rc;

	memset(rp, 0, sizeof(*rp));
	rp->loaded = eg_pins_loaded(pin_dir);
	for (size_t i = 0; i < eg_tier_count && i < EG_TIER_MAX; i++) {
		rc = eg_tiers[i]->status(&ctx, &rp->st[i]);
		if (rc)
			return rc;
		eg_tiers[i]->guarantees(&rp->st[i], rp->g, &rp->ng, EG_TIER_MAX_GUARANTEES);
	}
	/* What the kernel offers, narrowed to what the serving process may do. */
	eg_serving_apply(probed, rp->st, rp->g, rp->ng);
	eg_attach_point_check(rp->st, eg_tier_count, &rp->attach);
	eg_cgroup_roots(&rp->roots);
	if (!rp->loaded)
		return 0;
	rc = eg_maps_open(&maps, pin_dir, err, sizeof(err));
	if (rc) {
		note_unread(rp, "maps (the pins)", rc);
		return 0;
	}
	/* The modes are in every report: a guarantee under audit is not held
	 * (docs/design.md, "Modes"). */
	rc = eg_mode_census_read(&maps, &rp->modes);
	rp->have_modes = !rc;
	note_unread(rp, "modes (eg_mode, eg_records)", rc);
	eg_clock_state_read(&maps, pin_dir, &rp->clock);
	rp->have_clock = rp->clock.read;
	if (full) {
		rc = eg_counters_read(&maps, rp->counters);
		rp->have_counters = !rc;
		note_unread(rp, "counters (eg_counters)", rc);
		rc = eg_would_deny_read(&maps, rp->would_deny);
		rp->have_would_deny = !rc;
		note_unread(rp, "would-deny counts (eg_would_deny)", rc);
		rp->have_fill = true;
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (m != EG_MAP_EVENTS && m != EG_MAP_SK_TAGS &&
			    m != EG_MAP_LISTENER_TAGS && m != EG_MAP_COUNTERS &&
			    m != EG_MAP_PATH_HINT && m != EG_MAP_MODE && m != EG_MAP_WOULD_DENY &&
			    m != EG_MAP_CLOCK && m != EG_MAP_ADMIT_GEN)
				note_unread(rp, eg_map_names[m],
					    eg_map_fill(maps.fd[m], &rp->fill[m], &rp->cap[m]));
	}
	eg_maps_close(&maps);
	return 0;
}
