/* SPDX-License-Identifier: Apache-2.0 */
/* What the serving process itself may do. A revocation runs in the process
 * that installs or retires (execgated, or the execgate CLI), under that
 * process's namespaces, address families, capabilities and seccomp filter
 * (a systemd unit's RestrictNamespaces, RestrictAddressFamilies,
 * CapabilityBoundingSet). A kernel that offers a tier is not enough: a
 * step the process is refused leaves stale streams running. So each step a
 * revoker takes is tried once where it serves (execgated at start-up and on
 * SIGHUP, `execgate load`), kept in the probe record (tier.h), and status
 * says NOT HELD, with the step and the reason, for every guarantee that
 * needs a refused step. */
#ifndef EXECGATE_LOADER_SERVING_H
#define EXECGATE_LOADER_SERVING_H

#include <stddef.h>
#include "execgate/admin.h"
#include "loader/tiers/tier.h"

enum eg_serving_step {
	EG_STEP_SETNS_NET = 0,	 /* setns(CLONE_NEWNET): TCP cuts in a gateway's namespace */
	EG_STEP_SOCK_DIAG = 1,	 /* socket(AF_NETLINK, NETLINK_SOCK_DIAG): SOCK_DESTROY cuts */
	EG_STEP_PIDFD_GETFD = 2, /* pidfd_getfd + CAP_SYS_PTRACE: Unix cuts */
	EG_STEP__COUNT,
};

/* "setns-net", "sock-diag", "pidfd-getfd": the words of the probe record. */
extern const char *const eg_serving_step_names[EG_STEP__COUNT];

/* Tries every step in the calling process and fills r's serving part;
 * who names the process ("execgated pid 123"). Changes nothing. */
void eg_serving_probe(struct eg_probe_record *r, const char *who);

/* eg_serving_reprobe: execgate/admin.h. */

/* Turns every held guarantee that needs a refused step into NOT HELD, the
 * step and its reason in the guarantee's reason. st: the tiers' status. */
void eg_serving_apply(const struct eg_probe_record *r, const struct eg_tier_status *st,
		      struct eg_guarantee *g, size_t ng);

#endif
