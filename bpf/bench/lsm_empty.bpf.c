// SPDX-License-Identifier: GPL-2.0-only
/* Empty programs on the LSM tier's hooks: the floor of what any BPF LSM
 * program costs there (trampoline and bpf_stats' own timing included). The
 * benchmark (tests/bench/bench_lsm.c) attaches them beside bpf/lsm.bpf.c and
 * reports both from the same run. No maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/socket_connect")
int BPF_PROG(eg_empty_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	return ret;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(eg_empty_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	return ret;
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(eg_empty_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	return ret;
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(eg_empty_socket_recvmsg, struct socket *sock, struct msghdr *msg, int size, int flags,
	     int ret)
{
	return ret;
}
