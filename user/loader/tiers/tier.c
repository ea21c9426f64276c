// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/maps/tag_maps.h"
#include "loader/tiers/tier.h"

/* Order matters only for output. See tier.h for how to add a tier. */
const struct eg_tier_ops *const eg_tiers[] = {
    &eg_tier_cgroup,
    &eg_tier_lsm,
    &eg_tier_tcp,
};
const size_t eg_tier_count = sizeof(eg_tiers) / sizeof(eg_tiers[0]);

const struct eg_tier_ops *eg_tier_find(const char *name)
{
	for (size_t i = 0; i < eg_tier_count; i++)
		if (!strcmp(eg_tiers[i]->name, name))
			return eg_tiers[i];
	return NULL;
}

size_t eg_tier_index(const struct eg_tier_ops *t)
{
	size_t i = 0;

	while (i < eg_tier_count && eg_tiers[i] != t)
		i++;
	return i;
}

void eg_guarantee_add(struct eg_guarantee *out, size_t *n, size_t max, const char *name,
		      const char *summary, bool held, const char *reason)
{
	if (*n >= max)
		return;
	out[*n].name = name;
	out[*n].summary = summary;
	out[*n].held = held;
	snprintf(out[*n].reason, sizeof(out[*n].reason), "%s", reason);
	(*n)++;
}

void eg_guarantee_add_rows(struct eg_guarantee *out, size_t *n, size_t max,
			   const struct eg_guarantee_row *rows, size_t count, bool held,
			   const char *reason)
{
	for (size_t i = 0; i < count; i++)
		eg_guarantee_add(out, n, max, rows[i].name, rows[i].summary, held, reason);
}

void eg_tier_not_held_reason(const struct eg_tier_status *st, char *out, size_t size)
{
	if (!st->offered)
		snprintf(out, size, "%s", st->why_not);
	else
		snprintf(out, size, "%s", st->detail[0] ? st->detail : "not loaded");
}

void eg_tier_load_error(char *err, size_t err_size, const char *tier, const char *pin_dir, int rc)
{
	snprintf(err, err_size, "%s tier: loading the BPF object (pinned maps in %s): %s%s", tier,
		 pin_dir, strerror(-rc),
		 rc == -EINVAL ? " (incompatible pins from another build? execgate unload)" : "");
}

/* The capacity of obj's eg_inet_tags (abi.h): what ctx asks for, else the
 * pinned map's, else the object's own (EG_MAX_INET_TAGS). Every object
 * declares the map (execgate_maps.bpf.h), so every one is sized alike. */
static int size_inet_tags(struct bpf_object *obj, const char *tier, const struct eg_tier_ctx *ctx,
			  char *err, size_t err_size)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "eg_inet_tags");
	unsigned want = ctx->inet_tags, pinned = 0;
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	const char *pin;
	int fd, rc;

	if (!map)
		return 0;
	pin = bpf_map__pin_path(map);
	fd = pin ? bpf_obj_get(pin) : -1;
	if (fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == (__u32)bpf_map__type(map))
			pinned = info.max_entries;
		close(fd);
	}
	if (want && pinned && want != pinned) {
		snprintf(err, err_size,
			 "%s tier: inet tags %u: %s holds %u; the capacity changes only with "
			 "`execgate unload` first (every tag goes with the map)",
			 tier, want, pin, pinned);
		return -EEXIST;
	}
	rc = bpf_map__set_max_entries(map, want	    ? want
					   : pinned ? pinned
						    : bpf_map__max_entries(map));
	if (rc)
		snprintf(err, err_size, "%s tier: sizing eg_inet_tags: %s", tier, strerror(-rc));
	return rc;
}

int eg_tier_prepare_pins(struct bpf_object *obj, const char *tier, const struct eg_tier_ctx *ctx,
			 char *err, size_t err_size)
{
	const char *pin_dir = ctx->pin_dir;
	struct bpf_map *map;
	int rc;

	rc = size_inet_tags(obj, tier, ctx, err, err_size);
	if (rc)
		return rc;

	bpf_object__for_each_map(map, obj)
	{
		const char *pin = bpf_map__pin_path(map);
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		int fd, same;

		if (!pin)
			continue;
		fd = bpf_obj_get(pin);
		if (fd < 0)
			continue; /* not pinned yet: the load creates it */
		memset(&info, 0, sizeof(info));
		same = bpf_obj_get_info_by_fd(fd, &info, &len) ||
		       (info.type == (__u32)bpf_map__type(map) &&
			info.key_size == bpf_map__key_size(map) &&
			info.value_size == bpf_map__value_size(map) &&
			info.max_entries == bpf_map__max_entries(map) &&
			info.map_flags == bpf_map__map_flags(map));
		close(fd);
		if (same)
			continue;
		snprintf(
		    err, err_size,
		    "%s tier: pin dir %s: %s has the layout of another execgate build (map "
		    "type %u, key %u, value %u bytes, %u entries; this build: type %d, key %u, "
		    "value %u, %u entries); run `execgate unload` first",
		    tier, pin_dir, bpf_map__name(map), info.type, info.key_size, info.value_size,
		    info.max_entries, (int)bpf_map__type(map), bpf_map__key_size(map),
		    bpf_map__value_size(map), bpf_map__max_entries(map));
		return -EEXIST;
	}
	/* Best effort: where the child cannot join the root memory cgroup,
	 * the load creates the tag maps itself, charged as before. */
	(void)eg_tag_maps_create_unaccounted(obj);
	return 0;
}
