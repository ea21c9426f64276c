// SPDX-License-Identifier: Apache-2.0
/* The Unix revoker where the iterator is refused (loader/revokers/revoke_unix.h):
 * every socket fd under /proc/PID/fd is duplicated (pidfd_getfd) and its
 * tag looked up by fd (bpf_map_lookup_elem on eg_sk_tags); a stale one not
 * shut down yet is shut down. Slower than the iterator, but exact: the
 * duplicate itself is what is checked and cut. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include "loader/revokers/revoke_unix.h"

/* Shut down both ways already (an earlier cut, or the peer closed): the
 * stream is stopped; cutting it again would count it twice. */
static bool stopped(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

static int ino_cmp(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return (x > y) - (x < y);
}

/* Remembers a socket inode cut (one socket, several holders): 1 if new,
 * 0 if already there, -ENOMEM. The set is a tsearch tree of inodes. */
static int cut_once(void **cut, ino_t ino)
{
	ino_t *k = malloc(sizeof(*k)), **at;

	if (!k)
		return -ENOMEM;
	*k = ino;
	at = tsearch(k, cut, ino_cmp);
	if (!at || *at != k)
		free(k);
	return !at ? -ENOMEM : *at == k;
}

/* The inode of the other end of the Unix socket ino (sock_diag
 * UNIX_DIAG_PEER, looked up in the calling thread's network namespace), or
 * 0 when it has none or the lookup fails. */
static ino_t peer_ino(ino_t ino)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} m = {.nh = {.nlmsg_len = sizeof(m),
		      .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		      .nlmsg_flags = NLM_F_REQUEST},
	       .req = {.sdiag_family = AF_UNIX,
		       .udiag_states = ~0u,
		       .udiag_ino = (__u32)ino,
		       .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = {~0u, ~0u}}};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	char buf[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	ino_t peer = 0;
	ssize_t len;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return 0;
	if (sendto(fd, &m, sizeof(m), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0 ||
	    (len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) <= 0) {
		close(fd);
		return 0;
	}
	close(fd);
	if (!NLMSG_OK(nh, (size_t)len) || nh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	{
		struct unix_diag_msg *d = NLMSG_DATA(nh);
		struct rtattr *a = (struct rtattr *)(d + 1);
		int alen = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*d)));

		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(__u32))
				peer = *(__u32 *)RTA_DATA(a);
	}
	return peer;
}

/* Audit: counts the stream of the stale socket ino once, whichever of its
 * ends (both are tagged on the LSM tier) is met first: the peer is added
 * to the set as if it had been counted. */
static void count_stream(void **seen, ino_t ino, struct eg_revoke_count *out)
{
	ino_t peer = peer_ino(ino);

	if (peer && cut_once(seen, peer) == 0)
		return; /* the other end was counted */
	out->would_cut++;
}

static void scan_process(pid_t pid, int tags_fd, const struct eg_revoke_target *t, void **cut,
			 struct eg_revoke_count *out)
{
	char path[64], link[64];
	struct dirent *de;
	int pfd;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d) {
		/* Gone is not a failure; no access is: its sockets were not
		 * looked at (an upper bound, as below). */
		if (errno == EACCES || errno == EPERM)
			out->unreachable++;
		return;
	}
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (pfd >= 0 && (de = readdir(d))) {
		struct eg_sk_tag tag;
		struct stat st;
		ssize_t len;
		int fd, dup;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (len < 8 || memcmp(link, "socket:[", 8))
			continue;
		fd = atoi(de->d_name);
		dup = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
		if (dup < 0) {
			if (errno != ESRCH && errno != EBADF)
				out->unreachable++; /* not known to be tagged: an upper bound */
			continue;
		}
		if (!bpf_map_lookup_elem(tags_fd, &dup, &tag) && eg_unix_stale(t, &tag) &&
		    !stopped(dup) && !fstat(dup, &st) && cut_once(cut, st.st_ino) == 1) {
			/* Audit: one per stream, as the iterator counts. */
			if (t->audit)
				count_stream(cut, st.st_ino, out);
			else if (!shutdown(dup, SHUT_RDWR) || errno == ENOTCONN)
				out->cut++;
			else
				out->unreachable++;
		}
		close(dup);
	}
	if (pfd >= 0)
		close(pfd);
	closedir(d);
}

int eg_unix_revoke_procfs(const struct eg_revoke_target *t, int tags_fd,
			  struct eg_revoke_count *out, char *err, size_t err_size)
{
	void *cut = NULL;
	struct dirent *de;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc) {
		snprintf(err, err_size, "/proc: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(proc)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			scan_process((pid_t)atoi(de->d_name), tags_fd, t, &cut, out);
	closedir(proc);
	tdestroy(cut, free);
	return 0;
}
