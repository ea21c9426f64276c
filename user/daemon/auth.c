// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "daemon/auth.h"
#include "kcompat.h"

#define MAX_GROUPS 256

static bool in_groups(gid_t want, gid_t primary, const gid_t *groups, size_t n)
{
	if (primary == want)
		return true;
	for (size_t i = 0; i < n; i++)
		if (groups[i] == want)
			return true;
	return false;
}

int egd_peer_read(int fd, const struct egd_config *cfg, struct egd_peer *out)
{
	gid_t groups[MAX_GROUPS];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	size_t ngroups = 0;
	int pidfd = -1;

	memset(out, 0, sizeof(*out));
	out->pidfd = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred))
		return -errno ? -errno : -EINVAL;
	out->uid = cred.uid;
	out->gid = cred.gid;
	out->pid = cred.pid;

	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0) {
		out->pidfd = pidfd;
		out->pidfd_from_socket = true;
	} else if (cred.pid > 0) {
		/* Older kernel: a pidfd now, confirmed by the handle later. */
		out->pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
	}

	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
		ngroups = len / sizeof(gid_t);
	/* ERANGE (more than MAX_GROUPS groups): only the primary gid counts,
	 * which can only ever deny more, never grant more. */

	if (cred.uid == 0 ||
	    (cfg->admin_group.set && in_groups(cfg->admin_group.gid, cred.gid, groups, ngroups)))
		out->role = EGD_ROLE_ADMIN;
	else if (cfg->admit_group.set && in_groups(cfg->admit_group.gid, cred.gid, groups, ngroups))
		out->role = EGD_ROLE_ADMIT;
	else
		out->role = EGD_ROLE_NONE;
	return 0;
}

void egd_peer_release(struct egd_peer *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

const char *egd_role_name(enum egd_role r)
{
	switch (r) {
	case EGD_ROLE_ADMIN:
		return "admin";
	case EGD_ROLE_ADMIT:
		return "admit";
	case EGD_ROLE_NONE:
		break;
	}
	return "none";
}
