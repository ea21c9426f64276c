/* SPDX-License-Identifier: Apache-2.0 */
/* Is BPF LSM usable on the running kernel? Two checks, both needed: `bpf` in
 * the active LSM list, and a trivial lsm/ program that really loads and
 * attaches (the list alone lies on kernels that refuse lsm/ loads). The
 * answer is probed once per process and cached. */
#ifndef EXECGATE_LOADER_LSM_PROBE_H
#define EXECGATE_LOADER_LSM_PROBE_H

#include <stdbool.h>

#define EG_LSM_LIST_PATH "/sys/kernel/security/lsm"

struct eg_lsm_probe {
	bool active;	    /* BPF LSM programs load and attach here */
	int err;	    /* 0, or the negative errno of the failing step */
	char reason[240];   /* why not, one line; empty when active */
	char lsm_list[256]; /* the active LSM list as read, may be empty */
};

/* Fills *out and returns 0 when BPF LSM is active, -EOPNOTSUPP (reason in
 * out->reason) when it is not. Never fails otherwise. */
int eg_lsm_probe(struct eg_lsm_probe *out);

/* The same, probing again instead of using the cached answer. */
int eg_lsm_probe_fresh(struct eg_lsm_probe *out);

#endif
