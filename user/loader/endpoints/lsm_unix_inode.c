// SPDX-License-Identifier: Apache-2.0
/* The inode key of a bound Unix socket exactly as the LSM tier reads it in
 * unix_stream_connect: unix_sk(listener)->path.dentry's inode number and its
 * superblock's s_dev. stat() is not enough: on overlayfs (containers, and
 * /tmp in virtme-ng guests) stat reports the upper layer's st_dev while the
 * socket's dentry belongs to the overlay superblock. sock_diag's
 * UNIX_DIAG_VFS reports exactly the kernel's pair, so we ask it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include "loader/endpoints/lsm_unix_inode.h"
#include "loader/process/proc_id.h"

#define TCP_LISTEN 10

struct diag_match {
	__u32 ino;
	const char *path;
	unsigned n; /* sockets listening on an inode numbered ino */
	bool named; /* one of them is bound to exactly path */
	__u32 dev, dev_named;
};

static void scan_reply(struct nlmsghdr *h, struct diag_match *m)
{
	struct unix_diag_msg *msg = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg));
	struct unix_diag_vfs *vfs = NULL;
	const char *name = NULL;
	size_t name_len = 0;

	if (len < 0)
		return;
	for (struct rtattr *a = (struct rtattr *)(msg + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == UNIX_DIAG_VFS && RTA_PAYLOAD(a) >= (int)sizeof(*vfs))
			vfs = RTA_DATA(a);
		else if (a->rta_type == UNIX_DIAG_NAME) {
			name = RTA_DATA(a);
			name_len = RTA_PAYLOAD(a);
		}
	}
	if (!vfs || vfs->udiag_vfs_ino != m->ino)
		return;
	m->n++;
	m->dev = vfs->udiag_vfs_dev;
	if (name && name_len == strlen(m->path) && !memcmp(name, m->path, name_len)) {
		m->named = true;
		m->dev_named = vfs->udiag_vfs_dev;
	}
}

static int diag_listeners(struct diag_match *m)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req = {
	    .h = {.nlmsg_len = sizeof(req),
		  .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		  .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	    .r = {.sdiag_family = AF_UNIX,
		  .udiag_states = 1 << TCP_LISTEN,
		  .udiag_show = UDIAG_SHOW_VFS | UDIAG_SHOW_NAME},
	};
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	char buf[32768] __attribute__((aligned(8)));
	int fd, rc = 0;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		rc = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			rc = -errno;
			goto out;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				rc = e->error ? e->error : -EIO;
				goto out;
			}
			scan_reply(h, m);
		}
	}
out:
	close(fd);
	return rc;
}

/* The same walk as RESOLVE_NO_SYMLINKS, one component at a time: each
 * opened O_PATH|O_NOFOLLOW relative to its parent's fd, so a link met
 * anywhere opens as the link itself and is refused (-ELOOP). path must be
 * absolute. */
static int path_open_nofollow(const char *path)
{
	char comp[PATH_MAX];
	const char *p = path;
	int dir, rc;

	if (path[0] != '/')
		return -EINVAL;
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (;;) {
		struct stat st;
		size_t n;
		int fd;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			return dir; /* the path named a directory */
		if (n >= sizeof(comp)) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		fd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			goto fail;
		}
		close(dir);
		dir = fd;
		if (fstat(fd, &st)) {
			rc = -errno;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			rc = -ELOOP;
			goto fail;
		}
		while (*p == '/')
			p++;
		if (!*p)
			return fd;
		if (!S_ISDIR(st.st_mode)) {
			rc = -ENOTDIR;
			goto fail;
		}
	}
fail:
	close(dir);
	return rc;
}

int eg_unix_path_open(const char *path)
{
	/* No link anywhere in the walk, the last component included: a
	 * symlink (or a directory replaced by one) in a directory the
	 * sandbox's jail can write would otherwise name another sandbox's
	 * socket. O_PATH opens a socket without connecting to it. */
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	/* systemd's RestrictSUIDSGID= (and other seccomp filters that cannot
	 * read open_how) make openat2 fail with ENOSYS, as does a kernel
	 * before 5.6: walk the path by hand instead. */
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return path_open_nofollow(path);
	return fd < 0 ? -errno : (int)fd;
}

int eg_unix_bound_inode(const char *path, struct eg_inode_key *key, int *fd_out)
{
	struct diag_match m = {.path = path};
	struct stat st;
	int fd, rc;

	*fd_out = -1;
	fd = eg_unix_path_open(path);
	if (fd < 0)
		return fd;
	/* The key is the inode behind fd, not whatever the name points at a
	 * moment later; the caller holds fd until the entry is written, so
	 * the inode (and its number) cannot be freed and reused meanwhile. */
	if (fstat(fd, &st)) {
		rc = -errno;
		goto fail;
	}
	if (!S_ISSOCK(st.st_mode)) {
		rc = -ENOTSOCK;
		goto fail;
	}
	*fd_out = fd;
	memset(key, 0, sizeof(*key));
	key->ino = st.st_ino;
	key->dev = eg_kernel_dev(st.st_dev);
	/* sock_diag reports 32-bit inode numbers; past that, stat is all. */
	if (st.st_ino > 0xffffffffULL)
		return 0;
	m.ino = (__u32)st.st_ino;
	rc = diag_listeners(&m);
	if (rc)
		return -ENODATA; /* no listener (yet), or no unix_diag */
	if (m.named)
		key->dev = m.dev_named;
	else if (m.n == 1)
		key->dev = m.dev;
	else if (m.n == 0)
		return -ENODATA;
	/* else several sockets share the number on other filesystems and none
	 * is bound by this exact name: keep stat's device. */
	return 0;
fail:
	close(fd);
	return rc;
}
