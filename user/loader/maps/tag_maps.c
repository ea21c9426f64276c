// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/tiers/cgroup.h"
#include "loader/maps/tag_maps.h"

static bool is_unpinned_tag_map(const struct bpf_map *map)
{
	const char *pin = bpf_map__pin_path(map);

	return bpf_map__type(map) == BPF_MAP_TYPE_SK_STORAGE && pin && access(pin, F_OK) != 0;
}

/* In the child: obj is the parent's opened object, copied by fork. Only the
 * unpinned tag maps are created (libbpf pins them by name); no program is
 * loaded. Exit status: 0 done, 2 could not join the root cgroup, 3 the
 * load failed. */
static void __attribute__((noreturn)) child_create(struct bpf_object *obj, const char *memcg_root)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	if (eg_cgroup_join(memcg_root))
		_exit(2);
	bpf_object__for_each_map(map, obj) bpf_map__set_autocreate(map, is_unpinned_tag_map(map));
	bpf_object__for_each_program(prog, obj) bpf_program__set_autoload(prog, false);
	_exit(bpf_object__load(obj) ? 3 : 0);
}

int eg_tag_maps_create_unaccounted(struct bpf_object *obj)
{
	struct bpf_map *map;
	char root[4096];
	bool needed = false;
	int status;
	pid_t pid;

	bpf_object__for_each_map(map, obj) needed |= is_unpinned_tag_map(map);
	if (!needed || eg_memcg_root(root, sizeof(root)))
		return 0;
	/* A child, not this process: moving the loader (execgated, under
	 * systemd) out of its own cgroup is not ours to do. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_create(obj, root);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	switch (WEXITSTATUS(status)) {
	case 0:
		return 1;
	case 2:
		return -EPERM;
	default:
		return -EIO;
	}
}
