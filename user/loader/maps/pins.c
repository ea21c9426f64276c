// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include "loader/maps/maps.h"
#include "loader/maps/pins.h"

int eg_pin_path(char *out, size_t size, const char *pin_dir, const char *name)
{
	int n = snprintf(out, size, "%s/%s", pin_dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int eg_link_pin_path(char *out, size_t size, const char *pin_dir, const char *name)
{
	int n = snprintf(out, size, "%s/links/%s", pin_dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

/* The nearest existing ancestor of path (path itself if it exists). */
static void existing_ancestor(const char *path, char *out, size_t size)
{
	struct stat st;
	char *slash;

	snprintf(out, size, "%s", path);
	while (stat(out, &st) != 0) {
		slash = strrchr(out, '/');
		if (!slash || slash == out) {
			snprintf(out, size, "/");
			return;
		}
		*slash = '\0';
	}
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[EG_PIN_PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Only the standard mount point is mounted on demand: mounting bpffs over
 * an arbitrary directory would hide what is there. */
static bool mountable(const char *pin_dir, const char *anc)
{
	return !strncmp(pin_dir, EG_BPFFS_MOUNT "/", strlen(EG_BPFFS_MOUNT) + 1) &&
	       !strcmp(anc, EG_BPFFS_MOUNT);
}

int eg_pins_check(const char *pin_dir, char *err, size_t err_size)
{
	char anc[EG_PIN_PATH_MAX];

	if (pin_dir[0] != '/') {
		snprintf(err, err_size, "pin dir %s: must be an absolute path", pin_dir);
		return -EINVAL;
	}
	existing_ancestor(pin_dir, anc, sizeof(anc));
	if (!is_bpffs(anc) && !mountable(pin_dir, anc)) {
		snprintf(err, err_size,
			 "pin dir %s: %s is not on bpffs (pick a directory under " EG_BPFFS_MOUNT
			 ", or mount bpffs first)",
			 pin_dir, anc);
		return -EINVAL;
	}
	return 0;
}

int eg_pins_prepare(const char *pin_dir, char *err, size_t err_size)
{
	int ncpu = libbpf_num_possible_cpus();
	char anc[EG_PIN_PATH_MAX], links[EG_PIN_PATH_MAX];
	int rc;

	rc = eg_pins_check(pin_dir, err, err_size);
	if (rc)
		return rc;
	if (ncpu <= 0 || ncpu > EG_COUNTER_CPUS) {
		snprintf(err, err_size,
			 "this host has %d possible CPUs; eg_counters has slots for %d", ncpu,
			 EG_COUNTER_CPUS);
		return -E2BIG;
	}
	existing_ancestor(pin_dir, anc, sizeof(anc));
	if (!is_bpffs(anc)) {
		if (mount("bpf", EG_BPFFS_MOUNT, "bpf", 0, "mode=0700")) {
			rc = -errno;
			snprintf(err, err_size, "pin dir %s: mounting bpffs on %s: %s", pin_dir,
				 EG_BPFFS_MOUNT, strerror(errno));
			return rc;
		}
	}
	rc = eg_link_pin_path(links, sizeof(links), pin_dir, "");
	if (!rc)
		rc = mkdir_p(links, 0700);
	if (rc) {
		snprintf(err, err_size, "pin dir %s: %s", pin_dir, strerror(-rc));
		return rc;
	}
	if (!is_bpffs(pin_dir)) {
		/* a mount below the ancestor, or a race with one */
		snprintf(err, err_size, "pin dir %s: not on bpffs", pin_dir);
		return -EINVAL;
	}
	return 0;
}

bool eg_pins_loaded(const char *pin_dir)
{
	char path[EG_PIN_PATH_MAX];

	if (eg_pin_path(path, sizeof(path), pin_dir, eg_map_names[EG_MAP_RECORDS]))
		return false;
	return is_bpffs(pin_dir) && access(path, F_OK) == 0;
}

int eg_pins_remove_maps(const char *pin_dir)
{
	char path[EG_PIN_PATH_MAX];
	int rc = 0;

	for (int i = 0; i < EG_MAP__COUNT; i++) {
		if (eg_pin_path(path, sizeof(path), pin_dir, eg_map_names[i]))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT)
			rc = -errno;
	}
	if (!eg_link_pin_path(path, sizeof(path), pin_dir, EG_PIN_REVOKE_UNIX_ITER) &&
	    unlink(path) && errno != ENOENT)
		rc = -errno;
	if (!eg_link_pin_path(path, sizeof(path), pin_dir, EG_PIN_CLOCK_RESUME) && unlink(path) &&
	    errno != ENOENT)
		rc = -errno;
	if (!eg_link_pin_path(path, sizeof(path), pin_dir, EG_PIN_TASK_START) && unlink(path) &&
	    errno != ENOENT)
		rc = -errno;
	if (!eg_link_pin_path(path, sizeof(path), pin_dir, ""))
		rmdir(path);
	if (rmdir(pin_dir) && errno != ENOENT && !rc)
		rc = -errno;
	return rc;
}
