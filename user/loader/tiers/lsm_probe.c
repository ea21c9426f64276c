// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <bpf/libbpf.h>
#include "loader/log.h"
#include "loader/tiers/lsm_probe.h"
#include "lsm_probe.skel.h"

/* true if `bpf` is one of the comma-separated names in list. */
static bool list_has_bpf(const char *list)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",\n");

		if (n == 3 && !strncmp(p, "bpf", 3))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

static int read_lsm_list(char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(EG_LSM_LIST_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* securityfs not mounted (a minimal init, a microVM host): mount
		 * it where systemd would, then look again. */
		if (mount("securityfs", "/sys/kernel/security", "securityfs",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) &&
		    errno != EBUSY)
			return -ENOENT;
		fd = open(EG_LSM_LIST_PATH, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return err;
}

int eg_lsm_probe_fresh(struct eg_lsm_probe *out)
{
	struct lsm_probe *skel = NULL;
	struct bpf_link *link;
	int err;

	memset(out, 0, sizeof(*out));
	err = read_lsm_list(out->lsm_list, sizeof(out->lsm_list));
	if (err) {
		snprintf(out->reason, sizeof(out->reason), "cannot read %s (securityfs): %s",
			 EG_LSM_LIST_PATH, strerror(-err));
		goto fail;
	}
	out->lsm_list[strcspn(out->lsm_list, "\n")] = '\0';
	if (!list_has_bpf(out->lsm_list)) {
		err = -ENOENT;
		snprintf(out->reason, sizeof(out->reason),
			 "bpf is not in the active LSM list (%.160s); boot with lsm=...,bpf",
			 out->lsm_list);
		goto fail;
	}

	/* A refused load is the expected answer on some kernels, not an error
	 * worth libbpf's verifier dump. */
	eg_log_libbpf_quiet(true);
	skel = lsm_probe__open_and_load();
	if (!skel) {
		err = -errno;
		eg_log_libbpf_quiet(false);
		snprintf(out->reason, sizeof(out->reason),
			 "kernel refuses lsm/ programs at load: %s", strerror(-err));
		goto fail;
	}
	link = bpf_program__attach_lsm(skel->progs.eg_lsm_probe);
	eg_log_libbpf_quiet(false);
	if (!link) {
		err = -errno;
		snprintf(out->reason, sizeof(out->reason),
			 "kernel refuses to attach lsm/ programs: %s", strerror(-err));
		goto fail;
	}
	bpf_link__destroy(link);
	lsm_probe__destroy(skel);
	out->active = true;
	return 0;

fail:
	lsm_probe__destroy(skel);
	out->err = err ? err : -EOPNOTSUPP;
	return -EOPNOTSUPP;
}

int eg_lsm_probe(struct eg_lsm_probe *out)
{
	static struct eg_lsm_probe cached;
	static bool probed;

	if (!probed) {
		eg_lsm_probe_fresh(&cached);
		probed = true;
	}
	*out = cached;
	return cached.active ? 0 : -EOPNOTSUPP;
}
