// SPDX-License-Identifier: Apache-2.0
/* The warnings of an install (execgate.h, eg_install_report.warnings):
 * endpoints it registered that no tier loaded here enforces. A vsock
 * address is seen only by the BPF LSM tier, a Unix path by the cgroup or
 * the LSM tier, a guest address by the TCP tier; the kernel and the pins
 * decide which of them run. Read from the pins and the probe record, as
 * status reads them: no program is loaded. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/worker.h"
#include "loader/tiers/tier.h"

static void warn(struct eg_install_report *rep, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(struct eg_install_report *rep, const char *code, const char *fmt, ...)
{
	struct eg_install_warning *w;
	va_list ap;

	if (rep->n_warnings >= sizeof(rep->warnings) / sizeof(rep->warnings[0]))
		return;
	w = &rep->warnings[rep->n_warnings++];
	w->code = code;
	va_start(ap, fmt);
	vsnprintf(w->message, sizeof(w->message), fmt, ap);
	va_end(ap);
}

/* Whether tier name is loaded at w's pin dir. */
static bool tier_loaded(struct eg_worker *w, const struct eg_probe_record *probed,
			struct eg_tier_status *st, const char *name)
{
	struct eg_tier_ctx ctx = {.pin_dir = w->pin_dir, .probed = probed};
	const struct eg_tier_ops *t = eg_tier_find(name);

	return t && !t->status(&ctx, st) && st->loaded;
}

void eg_wk_install_warnings(struct eg_worker *w, const struct eg_install_spec *spec,
			    struct eg_install_report *rep)
{
	struct eg_probe_record *probed = malloc(sizeof(*probed));
	struct eg_tier_status *st = malloc(sizeof(*st));
	bool lsm, cgroup, tcp;

	rep->n_warnings = 0;
	if (!probed || !st)
		goto out;
	eg_probe_record_read(w->state_dir, probed);
	lsm = tier_loaded(w, probed, st, "lsm");
	cgroup = tier_loaded(w, probed, st, "cgroup");
	tcp = tier_loaded(w, probed, st, "tcp");
	if (spec->n_vsock && !lsm)
		warn(rep, "vsock-not-enforced",
		     "%zu vsock endpoint(s) registered, but the lsm tier is not loaded here: "
		     "connects to them are not checked (only the BPF LSM sees AF_VSOCK)",
		     spec->n_vsock);
	if (spec->n_bridge_sockets + spec->n_vmm_sockets && !lsm && !cgroup)
		warn(rep, "unix-not-enforced",
		     "%zu Unix socket endpoint(s) registered, but neither the cgroup nor the lsm "
		     "tier is loaded here: connects to them are not checked",
		     spec->n_bridge_sockets + spec->n_vmm_sockets);
	if (spec->n_service_addrs && !tcp)
		warn(rep, "tcp-not-enforced",
		     "%zu service address(es) registered, but the tcp tier is not loaded here: "
		     "TCP/UDP to them is not checked",
		     spec->n_service_addrs);
	if (spec->n_ports && !spec->n_service_addrs)
		warn(rep, "ports-without-service-addrs",
		     "%zu service port(s) without a service address: the kernel checks no "
		     "connect for them (capabilities are still checked against them)",
		     spec->n_ports);
out:
	free(st);
	free(probed);
}
