// SPDX-License-Identifier: GPL-2.0-only
/* An empty connect_unix program. The loader attaches it to a scratch cgroup
 * to probe for BPF_CGROUP_UNIX_CONNECT (kernel 6.7+), and the benchmark
 * measures it beside the real one: it is the floor of what any program on
 * this hook costs, bpf_stats' own timing included. No maps, so probing
 * creates no pins. Typed by whoever loads it, as cgroup_connect_unix.bpf.c
 * says. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("cgroup/connect_unix")
int eg_connect_unix_empty(struct bpf_sock_addr *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
