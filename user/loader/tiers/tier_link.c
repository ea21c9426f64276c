// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "loader/tiers/cgroup.h"
#include "loader/tiers/tier_link.h"

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

void eg_prog_status_cgroup(struct eg_prog_status *p, const struct bpf_link_info *info)
{
	p->attach_type = info->cgroup.attach_type;
	p->target_id = info->cgroup.cgroup_id;
	if (!p->target_id || eg_cgroup_path_by_id(p->target_id, p->target, sizeof(p->target)))
		snprintf(p->target, sizeof(p->target), p->target_id ? "?" : "(cgroup removed)");
}

int eg_link_pin_info(const char *pin_dir, const char *name, char pin[EG_PIN_PATH_MAX],
		     struct bpf_link_info *info)
{
	int lfd, rc;

	rc = eg_link_pin_path(pin, EG_PIN_PATH_MAX, pin_dir, name);
	if (rc)
		return rc;
	lfd = bpf_obj_get(pin);
	if (lfd < 0)
		return 0;
	rc = eg_link_info(lfd, info);
	close(lfd);
	return rc ? rc : 1;
}

int eg_cgroup_link_adopt(const char *pin, int prog_fd, enum bpf_attach_type type, const char *what,
			 __u64 want_cgid, char *err, size_t err_size)
{
	struct bpf_link_info info;
	int fd, rc;

	fd = bpf_obj_get(pin);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(err, err_size, "link %s: %s", pin, strerror(-rc));
		return rc;
	}
	rc = eg_link_info(fd, &info);
	if (rc) {
		snprintf(err, err_size, "link %s: %s", pin, strerror(-rc));
		goto out;
	}
	if (info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.attach_type != type) {
		snprintf(err, err_size, "link %s: not a %s cgroup link", pin, what);
		rc = -EINVAL;
		goto out;
	}
	if (info.cgroup.cgroup_id == 0) {
		unlink(pin); /* its cgroup is gone: it enforces nothing */
		rc = 0;
		goto out;
	}
	if (info.cgroup.cgroup_id != want_cgid) {
		snprintf(err, err_size,
			 "link %s: attached to another cgroup (id %llu); run execgate unload first",
			 pin, (unsigned long long)info.cgroup.cgroup_id);
		rc = -EBUSY;
		goto out;
	}
	if (bpf_link_update(fd, prog_fd, NULL)) {
		rc = -errno;
		snprintf(err, err_size, "link %s: replacing the program: %s", pin, strerror(-rc));
		goto out;
	}
	rc = 1;
out:
	close(fd);
	return rc;
}
