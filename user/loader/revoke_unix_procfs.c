// SPDX-License-Identifier: Apache-2.0
/* The Unix revoker where the iterator is refused (loader/revoke_unix.h):
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
#include "loader/revoke_unix.h"

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
			/* Audit counts sockets here: a stream whose two
			 * ends are tagged (the LSM tier) counts twice,
			 * where the iterator counts it once. */
			if (t->audit)
				out->would_cut++;
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
