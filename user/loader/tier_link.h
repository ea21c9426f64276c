/* SPDX-License-Identifier: Apache-2.0 */
/* What the tiers share about their pinned links: reading a link's info, a
 * program's info, and a link's program into struct eg_prog_status. */
#ifndef EXECGATE_LOADER_TIER_LINK_H
#define EXECGATE_LOADER_TIER_LINK_H

#include <bpf/bpf.h>
#include "loader/tier.h"

/* 0, or -errno of bpf_obj_get_info_by_fd. */
int eg_link_info(int link_fd, struct bpf_link_info *info);
int eg_prog_info(int prog_fd, struct bpf_prog_info *info);
/* -errno when the program is gone or unreadable. */
int eg_prog_info_by_id(__u32 prog_id, struct bpf_prog_info *info);

/* Sets p's link and program ids from info, and its name and bpf_stats from
 * the program when it can be read (left empty otherwise). hook, target and
 * attach_type are the tier's. */
void eg_prog_status_from_link(struct eg_prog_status *p, const struct bpf_link_info *info);

#endif
