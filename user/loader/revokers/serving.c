// SPDX-License-Identifier: Apache-2.0
/* The serving process's own steps (loader/revokers/serving.h): each tried for real,
 * in this process, with nothing left behind. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "loader/revokers/serving.h"
#include "loader/tiers/tcp_tier.h"

const char *const eg_serving_step_names[EG_STEP__COUNT] = {
    [EG_STEP_SETNS_NET] = "setns-net",
    [EG_STEP_SOCK_DIAG] = "sock-diag",
    [EG_STEP_PIDFD_GETFD] = "pidfd-getfd",
};

/* Joining the network namespace the thread is already in is a no-op that
 * goes through every check a join of a gateway's does: a seccomp filter on
 * setns, and CAP_SYS_ADMIN. */
static int try_setns(char *why, size_t size)
{
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0) {
		rc = -errno;
		snprintf(why, size, "/proc/thread-self/ns/net: %s", strerror(errno));
		return rc;
	}
	if (setns(fd, CLONE_NEWNET)) {
		rc = -errno;
		snprintf(why, size,
			 "setns refused: %s (RestrictNamespaces? CAP_SYS_ADMIN?): TCP streams in "
			 "a gateway's network namespace cannot be cut",
			 strerror(errno));
	}
	close(fd);
	return rc;
}

static int try_sock_diag(char *why, size_t size)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (fd < 0) {
		int rc = -errno;

		snprintf(
		    why, size,
		    "socket(AF_NETLINK, NETLINK_SOCK_DIAG) refused: %s "
		    "(RestrictAddressFamilies?): sock_diag SOCK_DESTROY cannot cut TCP streams",
		    strerror(errno));
		return rc;
	}
	close(fd);
	return 0;
}

/* pidfd_getfd of one of our own fds passes every check but a seccomp
 * filter; reaching another process's fds needs CAP_SYS_PTRACE on top
 * (ptrace_may_access: a bridge with more capabilities than us, Yama). */
static int try_pidfd_getfd(char *why, size_t size)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	int pfd, dup, rc = 0;

	pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pfd < 0) {
		rc = -errno;
		snprintf(why, size, "pidfd_open refused: %s (SystemCallFilter?)", strerror(errno));
		return rc;
	}
	dup = (int)syscall(SYS_pidfd_getfd, pfd, pfd, 0);
	if (dup < 0) {
		rc = -errno;
		snprintf(why, size,
			 "pidfd_getfd refused: %s (SystemCallFilter?): Unix streams cannot be cut",
			 strerror(errno));
	} else {
		close(dup);
	}
	close(pfd);
	if (rc)
		return rc;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d)) {
		rc = -errno;
		snprintf(why, size, "capget: %s", strerror(errno));
		return rc;
	}
	if (!(d[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32)))) {
		snprintf(why, size,
			 "no CAP_SYS_PTRACE (CapabilityBoundingSet?): pidfd_getfd of another "
			 "process's socket is refused, Unix streams cannot be cut");
		return -EPERM;
	}
	return 0;
}

void eg_serving_probe(struct eg_probe_record *r, const char *who)
{
	int (*const step[EG_STEP__COUNT])(char *, size_t) = {
	    [EG_STEP_SETNS_NET] = try_setns,
	    [EG_STEP_SOCK_DIAG] = try_sock_diag,
	    [EG_STEP_PIDFD_GETFD] = try_pidfd_getfd,
	};

	r->serving_probed = true;
	snprintf(r->serving_by, sizeof(r->serving_by), "%s", who);
	for (int i = 0; i < EG_STEP__COUNT; i++) {
		r->step_why[i][0] = '\0';
		r->step_ok[i] = step[i](r->step_why[i], sizeof(r->step_why[i])) == 0;
	}
}

int eg_serving_reprobe(const char *state_dir, const char *who, char *err, size_t err_size)
{
	static struct eg_probe_record r; /* ~2.5 KiB; one caller, the signal loop */

	eg_probe_record_read(state_dir, &r);
	if (!r.present) {
		snprintf(err, err_size, "%s/probe: %s", state_dir, r.missing);
		return -ENOENT;
	}
	eg_serving_probe(&r, who);
	return eg_probe_record_write(state_dir, &r, err, err_size);
}

static struct eg_guarantee *find(struct eg_guarantee *g, size_t ng, const char *name)
{
	for (size_t i = 0; i < ng; i++)
		if (!strcmp(g[i].name, name))
			return &g[i];
	return NULL;
}

/* Not held any more: why, and who could not. */
static void refuse(struct eg_guarantee *g, const struct eg_probe_record *r, int step)
{
	if (!g || !g->held)
		return;
	g->held = false;
	if (!r->serving_probed)
		snprintf(g->reason, sizeof(g->reason),
			 "the serving process was not probed (the probe record predates it): "
			 "restart execgated or run execgate load");
	else
		snprintf(g->reason, sizeof(g->reason), "%s: %s (probed in %s)",
			 eg_serving_step_names[step], r->step_why[step], r->serving_by);
}

void eg_serving_apply(const struct eg_probe_record *r, const struct eg_tier_status *st,
		      struct eg_guarantee *g, size_t ng)
{
	const struct eg_tier_status *tcp = &st[eg_tier_index(&eg_tier_tcp)];
	struct eg_guarantee *t = find(g, ng, "tcp-stream-revocation"),
			    *u = find(g, ng, "unix-stream-revocation");

	if (!r->present)
		return; /* every tier already says "not probed" */
	if (!r->serving_probed || !r->step_ok[EG_STEP_SETNS_NET])
		refuse(t, r, EG_STEP_SETNS_NET);
	else if (!eg_tcp_revoker_kfunc_pinned(tcp) && !r->step_ok[EG_STEP_SOCK_DIAG])
		refuse(t, r, EG_STEP_SOCK_DIAG);
	if (!r->serving_probed || !r->step_ok[EG_STEP_PIDFD_GETFD])
		refuse(u, r, EG_STEP_PIDFD_GETFD);
}
