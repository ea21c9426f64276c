/* SPDX-License-Identifier: Apache-2.0 */
/* Whether the cgroup programs are attached at the cgroup v2 root. A cgroup
 * sock_addr program runs for sockets *created* in the attached cgroup (or
 * below it): a socket made outside, then used by a process that joined the
 * cgroup or received the fd, is not checked (docs/operators.md §8). So
 * anything but the root leaves a way around, and status says so. */
#ifndef EXECGATE_LOADER_ATTACH_ROOT_H
#define EXECGATE_LOADER_ATTACH_ROOT_H

#include <stddef.h>
#include <linux/types.h>
#include "execgate/admin.h" /* EG_WARN_CGROUP_NOT_ROOT */
#include "loader/tiers/tier.h"

enum eg_attach_point {
	EG_ATTACH_NONE = 0, /* no cgroup program attached: nothing to judge */
	EG_ATTACH_ROOT,	    /* every cgroup program at the root */
	EG_ATTACH_NOT_ROOT, /* at least one below it */
};

struct eg_attach_check {
	enum eg_attach_point point;
	/* EG_ATTACH_NOT_ROOT: the first program below the root (copies: the
	 * check outlives the tier statuses it was made from). */
	char hook[64];
	char cgroup[EG_PIN_PATH_MAX];
	char root[EG_PIN_PATH_MAX]; /* the cgroup v2 mount point, for messages */
};

/* The warning code in status (JSON "warnings"[].code). */

/* The cgroup id (kernfs node id, the directory's inode) of the root of a
 * cgroup v2 hierarchy: the first node kernfs allocates, 1 on 64-bit
 * kernels. A constant rather than the inode of the mount point we see:
 * inside a cgroup namespace (execgated in a pod, attached through the
 * host's /sys/fs/cgroup mounted elsewhere) our own mount shows the
 * namespace's cgroup, not the root (tests/kernel/test_attach_root.c checks
 * the two agree where no namespace is in the way). */
#define EG_CGROUP_ROOT_ID 1ULL

/* Pure: judges the programs of st[0..n) (those with a cgroup target) against
 * root_id, the cgroup id of the cgroup v2 root. */
void eg_attach_point_decide(const struct eg_tier_status *st, size_t n, __u64 root_id,
			    struct eg_attach_check *out);

/* The same against EG_CGROUP_ROOT_ID, with out->root the cgroup v2 mount
 * point for messages. */
void eg_attach_point_check(const struct eg_tier_status *st, size_t n, struct eg_attach_check *out);

#endif
