/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v2, found where it is mounted (the hybrid layout of some hosts puts
 * it at /sys/fs/cgroup/unified), never at a hard-coded path. */
#ifndef EXECGATE_LOADER_CGROUP_H
#define EXECGATE_LOADER_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Which mount is the host's. Only a mount whose directory is its
 * hierarchy's root counts: in a pod, /sys/fs/cgroup is the pod's cgroup
 * namespace (or a bind mount of the pod's own cgroup), and a tag map made
 * from there would be charged to the pod's memory limit. With the
 * environment variable EXECGATE_HOST_CGROUP set (the DaemonSet sets
 * /host/sys/fs/cgroup, where it mounts the host's tree), only mounts at or
 * below that directory are looked at. */
#define EG_HOST_CGROUP_ENV "EXECGATE_HOST_CGROUP"
/* kernfs numbers a hierarchy's root node first (the same constant as
 * attach_root.h's EG_CGROUP_ROOT_ID, as an inode). */
#define EG_CGROUP_ROOT_INO 1

/* Mount point of the cgroup2 hierarchy's root from /proc/self/mountinfo.
 * -ENOENT if none. */
int eg_cgroup2_root(char *out, size_t size);

/* The cgroup directory whose cgroup.procs moves a process to the root of
 * the memory controller's hierarchy: the cgroup v1 "memory" mount where the
 * controller lives there (hybrid layout), else the cgroup v2 mount when it
 * has the controller. -ENOENT when no hierarchy has it (nothing is charged
 * to a memory cgroup then). */
int eg_memcg_root(char *out, size_t size);

/* What eg_cgroup2_root and eg_memcg_root choose, for status. */
struct eg_cgroup_roots {
	char source[4200];  /* "mountinfo" or "EXECGATE_HOST_CGROUP=DIR" */
	char cgroup2[4096]; /* "" when cgroup2_rc */
	char memcg[4096];   /* "" when memcg_rc */
	int cgroup2_rc, memcg_rc;
	char skipped[4096]; /* the first cgroup mount passed over: not a root */
};
void eg_cgroup_roots(struct eg_cgroup_roots *r);

/* Moves the calling process into the cgroup directory dir (v1 or v2).
 * Returns 0 or a negative errno. */
int eg_cgroup_join(const char *dir);

/* Opens a cgroup v2 directory (O_RDONLY | O_DIRECTORY) and checks that it
 * is on cgroup2. Returns the fd or a negative errno; err names the path. */
int eg_cgroup_open(const char *path, char *err, size_t err_size);

/* The cgroup id the kernel reports in link info (the kernfs inode). */
int eg_cgroup_id(int cgroup_fd, uint64_t *id);

/* The cgroup a tier attaches to: path, or the cgroup v2 root when path is
 * NULL (written to root, root_size bytes). *used names the one opened, *id
 * is its id. Returns its fd, or a negative errno (err says why when the
 * cgroup is not there). */
int eg_cgroup_open_target(const char *path, char *root, size_t root_size, const char **used,
			  uint64_t *id, char *err, size_t err_size);

/* The path of cgroup id under the cgroup v2 root (walks the tree).
 * -ENOENT when no such cgroup is visible. */
int eg_cgroup_path_by_id(uint64_t id, char *out, size_t size);

#endif
