// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "loader/cgroup.h"

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

/* The mount point of the first mount in /proc/self/mountinfo that match()
 * accepts by its file system type and super options. -ENOENT if none. */
static int mount_point(bool (*match)(const char *fstype, char *superopts), char *out, size_t size)
{
	char line[4096], mnt[4096];
	int rc = -ENOENT;
	FILE *f;

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
	return mount_point(is_cgroup2, out, size);
}

int eg_memcg_root(char *out, size_t size)
{
	char ctrl[512] = "", path[4200], *save = NULL;
	FILE *f;
	int rc;

	rc = mount_point(is_v1_memory, out, size);
	if (rc != -ENOENT)
		return rc;
	rc = eg_cgroup2_root(out, size);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", out);
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
		snprintf(err, err_size, "cgroup %s: not a cgroup v2 directory", path);
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

int eg_cgroup_path_by_id(uint64_t id, char *out, size_t size)
{
	char root[4096];
	int rc;

	rc = eg_cgroup2_root(root, sizeof(root));
	if (rc)
		return rc;
	pthread_mutex_lock(&walk_lock);
	want_id = id;
	found_path = out;
	found_size = size;
	found = 0;
	nftw(root, match_id, 16, FTW_PHYS | FTW_MOUNT);
	rc = found ? 0 : -ENOENT;
	pthread_mutex_unlock(&walk_lock);
	return rc;
}
