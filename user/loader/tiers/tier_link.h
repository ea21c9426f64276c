/* SPDX-License-Identifier: Apache-2.0 */
/* What the tiers share about their pinned links: reading a link's info, a
 * program's info, and a link's program into struct eg_prog_status; adopting
 * a pinned cgroup link at load. */
#ifndef EXECGATE_LOADER_TIER_LINK_H
#define EXECGATE_LOADER_TIER_LINK_H

#include <bpf/bpf.h>
#include "loader/maps/pins.h"
#include "loader/tiers/tier.h"

/* 0, or -errno of bpf_obj_get_info_by_fd. */
int eg_link_info(int link_fd, struct bpf_link_info *info);
int eg_prog_info(int prog_fd, struct bpf_prog_info *info);
/* -errno when the program is gone or unreadable. */
int eg_prog_info_by_id(__u32 prog_id, struct bpf_prog_info *info);

/* Sets p's link and program ids from info, and its name and bpf_stats from
 * the program when it can be read (left empty otherwise). hook, target and
 * attach_type are the tier's. */
void eg_prog_status_from_link(struct eg_prog_status *p, const struct bpf_link_info *info);
/* The cgroup part of a cgroup link's row: attach_type, target_id, and
 * target, the cgroup's path ("?" when unknown, "(cgroup removed)"). */
void eg_prog_status_cgroup(struct eg_prog_status *p, const struct bpf_link_info *info);

/* The link pinned at <pin_dir>/links/<name> (pin gets that path): 1 and
 * info when it is there, 0 when there is none, or a negative errno. */
int eg_link_pin_info(const char *pin_dir, const char *name, char pin[EG_PIN_PATH_MAX],
		     struct bpf_link_info *info);

/* At load, the cgroup link pinned at pin (a hook's of type, named what in
 * messages): 1 adopted (prog_fd swapped in on the live link, so there is no
 * instant without a program), 0 no usable pin (none, or its cgroup was
 * removed and the pin with it: attach afresh), or a negative errno with
 * err (another link type, or attached to another cgroup: -EBUSY). */
int eg_cgroup_link_adopt(const char *pin, int prog_fd, enum bpf_attach_type type, const char *what,
			 __u64 want_cgid, char *err, size_t err_size);

#endif
