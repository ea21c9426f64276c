// SPDX-License-Identifier: GPL-2.0-only
/* The TCP tier's socket tag alone, on connect4 (bench-tcp's floor row;
 * built by scripts/make/speed.mk, never loaded by the loader): what
 * eg_connect4 pays for the tag of an admitted connect whatever its checks
 * cost. As bpf/cgroup_inet.bpf.c tags: the socket's cookie, then one
 * BPF_NOEXIST insert of a struct eg_inet_tag into a preallocated hash of
 * eg_inet_tags' default capacity. bench-tcp runs it alone in a cgroup of
 * its own, on fewer connects than the map holds, so every insert is a new
 * key and none fails for room (probe_tag_full counts any that did). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_INET_TAGS);
	__type(key, __u64);
	__type(value, struct eg_inet_tag);
} probe_inet_tags SEC(".maps");

__u64 probe_tag_full;

SEC("cgroup/connect4")
int eg_connect4_tag_probe(struct bpf_sock_addr *ctx)
{
	struct eg_inet_tag tag = {.epoch = 1, .generation = 1, .port = 1, .proto = 6};
	__u64 cookie = bpf_get_socket_cookie(ctx);

	if (bpf_map_update_elem(&probe_inet_tags, &cookie, &tag, BPF_NOEXIST))
		__sync_fetch_and_add(&probe_tag_full, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
