/* SPDX-License-Identifier: Apache-2.0 */
/* The socket tag maps (eg_sk_tags, eg_inet_tags, eg_listener_tags: every
 * pinned BPF_MAP_TYPE_SK_STORAGE map of an object), created outside the
 * loader's memory cgroup.
 *
 * A socket's storage is allocated by BPF inside the connect of whatever
 * process is admitted, and the kernel charges it to the memory cgroup the
 * map was created in. Created by the loader as before, that is the loader's
 * memory cgroup: a per-connect accounting step (about a third of creating a
 * tag, docs/operators.md §9), and the loader's memory limit became a limit
 * on every admitted socket of the host, a full cgroup turning into
 * deny-no-tag for all of them. Created from the root of the memory
 * hierarchy, tags are charged to no memory cgroup; each socket's storage is
 * still bounded by net.core.optmem_max, which the kernel charges it against. */
#ifndef EXECGATE_LOADER_TAG_MAPS_H
#define EXECGATE_LOADER_TAG_MAPS_H

struct bpf_object;

/* For an opened, not yet loaded obj with pin_root_path pin_dir: a child
 * process joins the root memory cgroup and creates and pins those of obj's
 * socket-storage maps that are not pinned yet; obj's own load then reuses
 * the pins. Returns 1 when it created maps there, 0 when there was nothing
 * to create (all pinned, or no memory controller), or a negative errno when
 * the child could not (no permission to join the root cgroup, as in a
 * container): the load then creates them itself, charged to the loader's
 * memory cgroup as before, and nothing is lost. */
int eg_tag_maps_create_unaccounted(struct bpf_object *obj);

#endif
