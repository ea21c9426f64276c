// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "loader/tier_link.h"

int eg_link_info(int link_fd, struct bpf_link_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(link_fd, info, &len) ? -errno : 0;
}

int eg_prog_info(int prog_fd, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(prog_fd, info, &len) ? -errno : 0;
}

int eg_prog_info_by_id(__u32 prog_id, struct bpf_prog_info *info)
{
	int fd, rc;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	rc = eg_prog_info(fd, info);
	close(fd);
	return rc;
}

void eg_prog_status_from_link(struct eg_prog_status *p, const struct bpf_link_info *info)
{
	struct bpf_prog_info pinfo;

	p->link_id = info->id;
	p->prog_id = info->prog_id;
	if (eg_prog_info_by_id(info->prog_id, &pinfo))
		return;
	snprintf(p->name, sizeof(p->name), "%s", pinfo.name);
	p->run_cnt = pinfo.run_cnt;
	p->run_time_ns = pinfo.run_time_ns;
}
