// SPDX-License-Identifier: GPL-2.0-only
/* An empty connect4 program: bench-tcp attaches it beside the TCP tier's
 * eg_connect4, so both run on the very same connects and the floor of any
 * program on this hook (bpf_stats' own timing included) is measured in the
 * same run. No maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("cgroup/connect4")
int eg_connect4_empty(struct bpf_sock_addr *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
