// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "loader/tiers/cgroup.h"

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC SUPEROPTS".
 * Mount points escape space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* EXECGATE_HOST_CGROUP, when set: only mounts at or below it count. */
static const char *host_cgroup(void)
{
	const char *h = getenv(EG_HOST_CGROUP_ENV);

	return h && *h ? h : NULL;
}

static bool at_or_below(const char *mnt, const char *base)
{
	size_t n = strlen(base);

	while (n > 1 && base[n - 1] == '/')
		n--;
	return !strncmp(mnt, base, n) && (mnt[n] == '\0' || mnt[n] == '/');
}

/* The root of a cgroup hierarchy is the first node kernfs allocates (inode
 * EG_CGROUP_ROOT_INO). A cgroup namespace's own mount (a pod's
 * /sys/fs/cgroup) and a bind mount of a subtree show a cgroup below it. */
static bool is_hierarchy_root(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == EG_CGROUP_ROOT_INO;
}

/* The mount point of the first mount in /proc/self/mountinfo that match()
 * accepts by its file system type and super options and whose directory is
 * its hierarchy's root (under EXECGATE_HOST_CGROUP when set). The first
 * matching mount that is not a root goes to skipped. -ENOENT if none. */
static int mount_point(bool (*match)(const char *fstype, char *superopts), char *out, size_t size,
		       char *skipped, size_t skipped_size)
{
	char line[4096], mnt[4096];
	const char *base = host_cgroup();
	int rc = -ENOENT;
	FILE *f;

	if (skipped_size)
		skipped[0] = '\0';
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char fstype[64], src[256], opts[1024] = "";

		if (!sep || sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) < 1 ||
		    !match(fstype, opts))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape_octal(mnt);
		if (base && !at_or_below(mnt, base))
			continue;
		if (!is_hierarchy_root(mnt)) {
			if (skipped_size && !skipped[0])
				snprintf(skipped, skipped_size, "%s", mnt);
			continue;
		}
		rc = (size_t)snprintf(out, size, "%s", mnt) < size ? 0 : -ENAMETOOLONG;
		break;
	}
	fclose(f);
	return rc;
}

static bool is_cgroup2(const char *fstype, char *superopts)
{
	(void)superopts;
	return !strcmp(fstype, "cgroup2");
}

/* A cgroup v1 hierarchy with the memory controller (hybrid layout). */
static bool is_v1_memory(const char *fstype, char *superopts)
{
	char *save = NULL;

	if (strcmp(fstype, "cgroup"))
		return false;
	for (char *o = strtok_r(superopts, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (!strcmp(o, "memory"))
			return true;
	return false;
}

int eg_cgroup2_root(char *out, size_t size)
{
	return mount_point(is_cgroup2, out, size, NULL, 0);
}

/* The cgroup2 root, if it has the memory controller. */
static int memcg_v2(const char *root)
{
	char ctrl[512] = "", path[4200], *save = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	if (!fgets(ctrl, sizeof(ctrl), f))
		ctrl[0] = 0;
	fclose(f);
	for (char *c = strtok_r(ctrl, " \n", &save); c; c = strtok_r(NULL, " \n", &save))
		if (!strcmp(c, "memory"))
			return 0;
	return -ENOENT;
}

int eg_memcg_root(char *out, size_t size)
{
	int rc;

	rc = mount_point(is_v1_memory, out, size, NULL, 0);
	if (rc != -ENOENT)
		return rc;
	rc = eg_cgroup2_root(out, size);
	return rc ? rc : memcg_v2(out);
}

void eg_cgroup_roots(struct eg_cgroup_roots *r)
{
	char skipped_v1[sizeof(r->skipped)];

	memset(r, 0, sizeof(*r));
	if (host_cgroup())
		snprintf(r->source, sizeof(r->source), EG_HOST_CGROUP_ENV "=%s", host_cgroup());
	else
		snprintf(r->source, sizeof(r->source), "mountinfo");
	r->cgroup2_rc =
	    mount_point(is_cgroup2, r->cgroup2, sizeof(r->cgroup2), r->skipped, sizeof(r->skipped));
	r->memcg_rc =
	    mount_point(is_v1_memory, r->memcg, sizeof(r->memcg), skipped_v1, sizeof(skipped_v1));
	if (r->memcg_rc == -ENOENT) {
		r->memcg_rc = r->cgroup2_rc;
		if (!r->memcg_rc) {
			snprintf(r->memcg, sizeof(r->memcg), "%s", r->cgroup2);
			r->memcg_rc = memcg_v2(r->memcg);
		}
	}
	if (!r->skipped[0] && skipped_v1[0])
		snprintf(r->skipped, sizeof(r->skipped), "%s", skipped_v1);
	if (r->cgroup2_rc)
		r->cgroup2[0] = '\0';
	if (r->memcg_rc)
		r->memcg[0] = '\0';
}

int eg_cgroup_join(const char *dir)
{
	char procs[4200];
	int fd, rc = 0;

	if ((size_t)snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir) >= sizeof(procs))
		return -ENAMETOOLONG;
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "0": the writer itself, whatever its pid (namespace) */
	if (write(fd, "0", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

int eg_cgroup_open(const char *path, char *err, size_t err_size)
{
	struct statfs st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "cgroup %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstatfs(fd, &st) || st.f_type != CGROUP2_SUPER_MAGIC) {
		char root[PATH_MAX];

		/* On a hybrid host /sys/fs/cgroup is a tmpfs where mkdir makes a
		 * plain directory: say where the cgroup v2 tree really is. */
		if (eg_cgroup2_root(root, sizeof(root)))
			snprintf(err, err_size,
				 "cgroup %s: not a cgroup v2 directory (no cgroup v2 is mounted)",
				 path);
		else
			snprintf(
			    err, err_size,
			    "cgroup %s: not a cgroup v2 directory (cgroup v2 is mounted at %s)",
			    path, root);
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

int eg_cgroup_id(int cgroup_fd, uint64_t *id)
{
	struct stat st;

	if (fstat(cgroup_fd, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

int eg_cgroup_open_target(const char *path, char *root, size_t root_size, const char **used,
			  uint64_t *id, char *err, size_t err_size)
{
	int fd, rc;

	if (!path) {
		rc = eg_cgroup2_root(root, root_size);
		if (rc) {
			snprintf(err, err_size, "cgroup v2: not mounted");
			return rc;
		}
		path = root;
	}
	*used = path;
	fd = eg_cgroup_open(path, err, err_size);
	if (fd < 0)
		return fd;
	rc = eg_cgroup_id(fd, id);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* nftw's callback takes no context: the walk's state is static, and the lock
 * keeps concurrent callers (execgated's status handlers) apart. */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t want_id;
static char *found_path;
static size_t found_size;
static int found;

static int match_id(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D || st->st_ino != want_id)
		return 0;
	snprintf(found_path, found_size, "%s", path);
	found = 1;
	return 1; /* stop the walk */
}

/* The last answer, checked before it is reused: every link of a load
 * targets the same cgroup, and a status or an install's warnings asked
 * for it once a link, each time walking the whole hierarchy (on a node
 * with thousands of pod cgroups, thousands of stats a link). */
static uint64_t last_id;
static char last_path[4096];

int eg_cgroup_path_by_id(uint64_t id, char *out, size_t size)
{
	char root[4096];
	struct stat st;
	int rc;

	rc = eg_cgroup2_root(root, sizeof(root));
	if (rc)
		return rc;
	pthread_mutex_lock(&walk_lock);
	/* Still that cgroup: a directory under the root with that id (a
	 * cgroup's id is its inode number on cgroup2, never reused while it
	 * exists). */
	if (last_id && last_id == id && !strncmp(last_path, root, strlen(root)) &&
	    !stat(last_path, &st) && S_ISDIR(st.st_mode) && st.st_ino == id) {
		snprintf(out, size, "%s", last_path);
		pthread_mutex_unlock(&walk_lock);
		return 0;
	}
	want_id = id;
	found_path = out;
	found_size = size;
	found = 0;
	nftw(root, match_id, 16, FTW_PHYS | FTW_MOUNT);
	rc = found ? 0 : -ENOENT;
	if (found && strlen(out) < sizeof(last_path)) {
		last_id = id;
		snprintf(last_path, sizeof(last_path), "%s", out);
	}
	pthread_mutex_unlock(&walk_lock);
	return rc;
}
