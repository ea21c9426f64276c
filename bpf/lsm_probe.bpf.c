// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/* The BPF LSM probe: a program that does nothing, loaded and attached for an
 * instant by user/loader/tiers/lsm_probe.c. `bpf` in /sys/kernel/security/lsm is
 * not enough: some kernels (this project's 6.18 CI host) list it and still
 * refuse every lsm/ program with EPERM. Only a real load + attach says yes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* socket_listen: rare, cheap, and the hook the tier depends on anyway.
 * Returning ret keeps any earlier LSM's verdict. */
SEC("lsm/socket_listen")
int BPF_PROG(eg_lsm_probe, struct socket *sock, int backlog, int ret)
{
	return ret;
}
