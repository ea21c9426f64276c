/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v2, found where it is mounted (the hybrid layout of some hosts puts
 * it at /sys/fs/cgroup/unified), never at a hard-coded path. */
#ifndef EXECGATE_LOADER_CGROUP_H
#define EXECGATE_LOADER_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Mount point of cgroup2 from /proc/self/mountinfo. -ENOENT if none. */
int eg_cgroup2_root(char *out, size_t size);

/* The cgroup directory whose cgroup.procs moves a process to the root of
 * the memory controller's hierarchy: the cgroup v1 "memory" mount where the
 * controller lives there (hybrid layout), else the cgroup v2 mount when it
 * has the controller. -ENOENT when no hierarchy has it (nothing is charged
 * to a memory cgroup then). */
int eg_memcg_root(char *out, size_t size);

/* Moves the calling process into the cgroup directory dir (v1 or v2).
 * Returns 0 or a negative errno. */
int eg_cgroup_join(const char *dir);

/* Opens a cgroup v2 directory (O_RDONLY | O_DIRECTORY) and checks that it
 * is on cgroup2. Returns the fd or a negative errno; err names the path. */
int eg_cgroup_open(const char *path, char *err, size_t err_size);

/* The cgroup id the kernel reports in link info (the kernfs inode). */
int eg_cgroup_id(int cgroup_fd, uint64_t *id);

/* The path of cgroup id under the cgroup v2 root (walks the tree).
 * -ENOENT when no such cgroup is visible. */
int eg_cgroup_path_by_id(uint64_t id, char *out, size_t size);

#endif
